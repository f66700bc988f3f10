//! Splitting a location URI into the store that holds it and the key inside that store.
//!
//! Accepted forms:
//!
//! | form                                    | store                          |
//! |-----------------------------------------|--------------------------------|
//! | `/abs/path`, `file:///abs/path`, `file:/abs/path` | local disk             |
//! | `memory://bucket/key`                   | in-memory, one per bucket      |
//! | `s3://bucket/key`, `s3a://`, `s3n://`   | S3, one per bucket             |
//! | `gs://bucket/key`                       | Google Cloud Storage           |
//! | `abfss://container@account.dfs.core.windows.net/key`, `az://container/key` | Azure |
//!
//! The part before the key (the *root*) is kept as the caller wrote it, so listing renders
//! paths back in the caller's own form.

use object_store::path::Path as ObjectPath;

use crate::error::{Error, Result};

/// The family of stores a scheme belongs to (`s3` and `s3a` share one): the one parse of a
/// location's scheme, for this crate's stores and for catalogs that need to know the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Local disk.
    File,
    /// In-memory store.
    Memory,
    /// Amazon S3 and compatible stores.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage / ADLS Gen2.
    Azure,
    /// Any other scheme: served only by stores injected with `FileIo::with_store`.
    Other(String),
}

impl Family {
    /// The family of the store holding `location` (parsed as [`crate::FileIo`] parses it).
    ///
    /// # Errors
    /// [`Error::InvalidLocation`] for a location [`crate::FileIo`] would refuse.
    pub fn of_location(location: &str) -> Result<Self> {
        Location::parse(location).map(|l| l.store.family)
    }

    /// Whether stores of this family make `put_if_absent` an atomic create-if-absent (local
    /// disk, memory, S3 with `If-None-Match`, GCS, Azure); a store injected for another
    /// scheme is not known to.
    pub fn has_conditional_create(&self) -> bool {
        !matches!(self, Self::Other(_))
    }

    /// The family of a (lower-cased) scheme.
    fn of(scheme: &str) -> Self {
        match scheme {
            "file" => Self::File,
            "memory" => Self::Memory,
            "s3" | "s3a" | "s3n" => Self::S3,
            "gs" | "gcs" => Self::Gcs,
            "az" | "abfs" | "abfss" | "adl" | "azure" => Self::Azure,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// `location` in one canonical form per object: the scheme of its family (`s3a://b/k` and
/// `s3n://b/k` are `s3://b/k`; `/p`, `file:/p` and `file:///p` are `file:///p`), the bucket
/// and the key, so that paths written by different engines compare equal.
///
/// # Errors
/// [`Error::InvalidLocation`] for a location [`crate::FileIo`] would refuse.
pub fn canonical_location(location: &str) -> Result<String> {
    let l = Location::parse(location)?;
    let scheme = match &l.store.family {
        Family::File => "file",
        Family::Memory => "memory",
        Family::S3 => "s3",
        Family::Gcs => "gs",
        Family::Azure => "abfss",
        Family::Other(s) => s.as_str(),
    };
    Ok(format!("{scheme}://{}/{}", l.store.bucket, l.key))
}

/// Identifies one cached store: a scheme family and a bucket (or container, or authority).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StoreKey {
    /// Which kind of store.
    pub(crate) family: Family,
    /// The bucket; empty for local disk.
    pub(crate) bucket: String,
}

/// A parsed location.
#[derive(Clone, Debug)]
pub(crate) struct Location {
    /// The lower-cased scheme as written (`s3a`, `file`, ...).
    pub(crate) scheme: String,
    /// Which store serves it.
    pub(crate) store: StoreKey,
    /// Everything before the key, as the caller wrote it, ending in `/`.
    pub(crate) root: String,
    /// The key inside the store.
    pub(crate) key: ObjectPath,
}

impl Location {
    /// Parses `location`.
    ///
    /// # Errors
    /// [`Error::InvalidLocation`] if it is neither `scheme://authority/key` nor an absolute
    /// local path, names a remote host for `file://`, misses a bucket, or has an empty, `.`
    /// or `..` path segment.
    pub(crate) fn parse(location: &str) -> Result<Self> {
        let (scheme, bucket, root, key) = split(location)?;
        let family = Family::of(&scheme);
        if family == Family::File && !(bucket.is_empty() || bucket == "localhost") {
            return Err(invalid(
                location,
                "file:// locations must not name a remote host",
            ));
        }
        if bucket.is_empty() && !matches!(family, Family::File | Family::Memory) {
            return Err(invalid(location, "missing bucket after `://`"));
        }
        let key = ObjectPath::parse(key).map_err(|e| invalid(location, &e.to_string()))?;
        if family == Family::File && key.filename().is_some_and(is_staging_name) {
            return Err(invalid(
                location,
                "local file names ending in `#` and digits are reserved for in-progress uploads",
            ));
        }
        let bucket = if family == Family::File {
            String::new()
        } else {
            bucket.to_owned()
        };
        Ok(Self {
            scheme,
            store: StoreKey { family, bucket },
            root,
            key,
        })
    }

    /// Renders a key of the same store in the caller's form (`root` + key).
    pub(crate) fn render(&self, key: &ObjectPath) -> String {
        format!("{}{}", self.root, key)
    }

    /// The URL naming the store (`s3://bucket`), as object_store builders expect it.
    #[cfg(any(feature = "azure", test))]
    pub(crate) fn store_url(&self) -> String {
        format!("{}://{}", self.scheme, self.store.bucket)
    }
}

/// The store key for a `scheme://bucket` URL given to `FileIo::with_store`; never fails.
///
/// Anything without `scheme://` is taken to mean local disk.
pub(crate) fn store_key_of(url: &str) -> StoreKey {
    match split(url) {
        Ok((scheme, bucket, _, _)) => {
            let family = Family::of(&scheme);
            let bucket = if family == Family::File {
                String::new()
            } else {
                bucket.to_owned()
            };
            StoreKey { family, bucket }
        }
        Err(_) => StoreKey {
            family: Family::File,
            bucket: String::new(),
        },
    }
}

/// Splits into (lower-cased scheme, authority, root, key).
fn split(location: &str) -> Result<(String, &str, String, &str)> {
    if let Some(key) = location.strip_prefix('/') {
        return Ok(("file".to_owned(), "", "/".to_owned(), key));
    }
    if let Some((scheme, rest)) = location.split_once("://") {
        if !is_scheme(scheme) {
            return Err(invalid(location, "malformed scheme"));
        }
        let (authority, key, root) = match rest.split_once('/') {
            Some((authority, key)) => {
                let root_len = location.len() - key.len();
                (authority, key, location[..root_len].to_owned())
            }
            None => (rest, "", format!("{location}/")),
        };
        return Ok((scheme.to_ascii_lowercase(), authority, root, key));
    }
    if let Some(key) = strip_prefix_ignore_case(location, "file:/") {
        return Ok(("file".to_owned(), "", location[..6].to_owned(), key));
    }
    Err(invalid(
        location,
        "expected `scheme://bucket/key` or an absolute local path",
    ))
}

/// Whether a local file name looks like object_store's staging files (`name#123`).
fn is_staging_name(name: &str) -> bool {
    name.rsplit_once('#')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `s` is a URI scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

fn invalid(location: &str, reason: &str) -> Error {
    Error::InvalidLocation {
        location: location.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_canonical_form_per_object() {
        for (a, b) in [
            ("s3a://b/wh/t/data/f.parquet", "s3://b/wh/t/data/f.parquet"),
            ("S3N://b/k", "s3://b/k"),
            ("/tmp/wh/f", "file:///tmp/wh/f"),
            ("file:/tmp/wh/f", "file:///tmp/wh/f"),
            ("file://localhost/tmp/wh/f", "file:///tmp/wh/f"),
            ("gcs://g/k", "gs://g/k"),
            ("memory://m/k", "memory://m/k"),
        ] {
            assert_eq!(canonical_location(a).unwrap(), b, "{a}");
            assert_eq!(canonical_location(b).unwrap(), b, "{b}");
        }
        assert_ne!(
            canonical_location("s3://b/k").unwrap(),
            canonical_location("s3://c/k").unwrap()
        );
        assert!(canonical_location("relative/path").is_err());
    }

    fn key(family: Family, bucket: &str) -> StoreKey {
        StoreKey {
            family,
            bucket: bucket.into(),
        }
    }

    #[test]
    fn one_scheme_parser_for_every_crate() {
        for (location, family) in [
            ("S3://b/wh", Family::S3),
            ("s3n://b/wh", Family::S3),
            ("gcs://b/wh", Family::Gcs),
            ("abfs://c@a.dfs.core.windows.net/wh", Family::Azure),
            ("/tmp/wh", Family::File),
            ("hdfs://nn/wh", Family::Other("hdfs".into())),
        ] {
            let found = Family::of_location(location).unwrap();
            assert_eq!(found, family, "{location}");
            assert_eq!(
                found.has_conditional_create(),
                !matches!(family, Family::Other(_)),
                "{location}"
            );
        }
        assert!(Family::of_location("no-scheme").is_err());
    }

    #[test]
    fn parses_every_form_and_renders_back() {
        let cases = [
            (
                "/tmp/t/a.parquet",
                key(Family::File, ""),
                "/",
                "tmp/t/a.parquet",
            ),
            (
                "file:///tmp/t/a",
                key(Family::File, ""),
                "file:///",
                "tmp/t/a",
            ),
            ("file:/tmp/t/a", key(Family::File, ""), "file:/", "tmp/t/a"),
            (
                "file://localhost/tmp/a",
                key(Family::File, ""),
                "file://localhost/",
                "tmp/a",
            ),
            (
                "memory://m/k/v",
                key(Family::Memory, "m"),
                "memory://m/",
                "k/v",
            ),
            (
                "s3://b/k/x=a%2Fb/f",
                key(Family::S3, "b"),
                "s3://b/",
                "k/x=a%2Fb/f",
            ),
            ("s3a://b/k", key(Family::S3, "b"), "s3a://b/", "k"),
            ("gs://b/k", key(Family::Gcs, "b"), "gs://b/", "k"),
            (
                "abfss://c@acct.dfs.core.windows.net/k",
                key(Family::Azure, "c@acct.dfs.core.windows.net"),
                "abfss://c@acct.dfs.core.windows.net/",
                "k",
            ),
            (
                "hdfs://nn:8020/k",
                key(Family::Other("hdfs".into()), "nn:8020"),
                "hdfs://nn:8020/",
                "k",
            ),
        ];
        for (input, store, root, k) in cases {
            let loc = Location::parse(input).unwrap();
            assert_eq!(loc.store, store, "{input}");
            assert_eq!(loc.root, root, "{input}");
            assert_eq!(loc.key.as_ref(), k, "{input}");
            assert_eq!(loc.render(&loc.key), input);
        }
    }

    #[test]
    fn bucket_only_and_trailing_slash_mean_the_bucket_root_or_directory() {
        let loc = Location::parse("s3://b").unwrap();
        assert!(loc.key.is_root());
        assert_eq!(loc.root, "s3://b/");
        let loc = Location::parse("s3://b/dir/").unwrap();
        assert_eq!(loc.key.as_ref(), "dir");
        assert_eq!(loc.store_url(), "s3://b");
    }

    #[test]
    fn rejects_bad_locations_with_a_reason() {
        for bad in [
            "relative/path",
            "s3:///key",
            "file://otherhost/x",
            "/a//b",
            "/a/../b",
            "s3://b/./k",
            "1x://b/k",
            "/tmp/upload#12",
        ] {
            let err = Location::parse(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidLocation { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn store_key_of_is_lenient() {
        assert_eq!(store_key_of("s3a://b"), key(Family::S3, "b"));
        assert_eq!(store_key_of("file:///"), key(Family::File, ""));
        assert_eq!(store_key_of("nonsense"), key(Family::File, ""));
        assert_eq!(store_key_of("memory://x/"), key(Family::Memory, "x"));
    }

    proptest::proptest! {
        /// Rendering a parsed key gives back the caller's string, and on local disk the key
        /// names the literal file (no percent-decoding of `%2F` and friends).
        #[test]
        fn render_inverts_parse_and_local_keys_are_literal(
            root in proptest::sample::select(
                vec!["s3://b/", "s3a://bkt/", "gs://g/", "memory://m/", "file:///", "file:/", "/"],
            ),
            segments in proptest::collection::vec("[a-zA-Z0-9=%#+ ._~-]{1,12}", 0..5),
        ) {
            proptest::prop_assume!(segments.iter().all(|s| s != "." && s != ".."));
            let input = format!("{root}{}", segments.join("/"));
            let staging = segments.last().is_some_and(|s| is_staging_name(s));
            if staging && matches!(root, "file:///" | "file:/" | "/") {
                let err = Location::parse(&input).unwrap_err();
                let is_invalid = matches!(err, Error::InvalidLocation { .. });
                proptest::prop_assert!(is_invalid, "{:?}", err);
                return Ok(());
            }
            let loc = Location::parse(&input).unwrap();
            proptest::prop_assert_eq!(loc.render(&loc.key), input.clone());
            if loc.store.family == Family::File && !loc.key.is_root() {
                let on_disk = object_store::local::LocalFileSystem::new()
                    .path_to_filesystem(&loc.key)
                    .unwrap();
                let expected = format!("/{}", segments.join("/"));
                proptest::prop_assert_eq!(on_disk, std::path::PathBuf::from(expected));
            }
        }
    }
}
