//! Where a data file goes: Java's `LocationProviders` (Iceberg 1.10).
//!
//! Data lives under the data location: `write.data.path`, else `<table location>/data`
//! (trailing slashes stripped, as Java's `LocationUtil.stripTrailingSlash`).
//!
//! - Default layout: `<data>/<partition path>/<file>`, or `<data>/<file>` when unpartitioned.
//! - Object-storage layout (`write.object-storage.enabled=true`, Java's
//!   `ObjectStoreLocationProvider`): a hash of the file's relative path spreads files over
//!   many key prefixes. The hash is Murmur3 x86-32 (seed 0, Guava's `murmur3_32_fixed`) of
//!   the UTF-8 of `<partition path>/<file>` (just `<file>` when unpartitioned, or when
//!   `write.object-storage.partitioned-paths=false`); its low 20 bits, as a binary string,
//!   make three directories of 4 digits and one of 8: `0101/0110/1001/10110010`.
//!   - partitioned paths on (default): `<data>/<hash>/<partition path>/<file>`;
//!   - partitioned paths off: `<data>/<hash>-<file>` (the last 8 digits join the name);
//!   - a data location outside the table location (not starting with it) adds the table's
//!     context, the last two segments of its location: `<data>/<hash>/<db>/<table>/<...>`,
//!     and then the hash never joins the name.
//!
//! Java's deprecated `write.object-storage.path` and `write.folder-storage.path` are not read
//! (Java 1.10 refuses them and points to `write.data.path`).

use iceberg_spec::transform::murmur3_32;

/// Bits of the hash kept in the path (Java's `HASH_BINARY_STRING_BITS`).
const HASH_BITS: u32 = 20;
/// Binary digits per hash directory (Java's `ENTROPY_DIR_LENGTH`).
const HASH_DIR_DIGITS: usize = 4;
/// Hash directories of [`HASH_DIR_DIGITS`] digits before the rest (Java's `ENTROPY_DIR_DEPTH`).
const HASH_DIR_DEPTH: usize = 3;

/// Object-storage layout settings.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ObjectStorage {
    /// `<db>/<table>` when the data location is outside the table location.
    context: Option<String>,
    /// Keep the partition path after the hash (`write.object-storage.partitioned-paths`).
    partitioned_paths: bool,
}

/// Computes data file locations of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataLocations {
    data_location: String,
    object_storage: Option<ObjectStorage>,
}

impl DataLocations {
    /// Locations for the table at `table_location`, with `write.data.path` if set, in the
    /// object-storage layout when `object_storage` is on.
    pub(crate) fn new(
        table_location: &str,
        data_location: Option<&str>,
        object_storage: bool,
        partitioned_paths: bool,
    ) -> Self {
        let table_location = strip_trailing_slash(table_location);
        let data_location = match data_location {
            Some(d) => strip_trailing_slash(d).to_string(),
            None => format!("{table_location}/data"),
        };
        let object_storage = object_storage.then(|| ObjectStorage {
            context: (!data_location.starts_with(table_location))
                .then(|| path_context(table_location)),
            partitioned_paths,
        });
        Self {
            data_location,
            object_storage,
        }
    }

    /// The location of a file named `file_name` in the partition directory `partition_path`
    /// (empty when the spec is unpartitioned).
    pub(crate) fn data_file(&self, partition_path: &str, file_name: &str) -> String {
        let data = &self.data_location;
        let Some(os) = &self.object_storage else {
            return if partition_path.is_empty() {
                format!("{data}/{file_name}")
            } else {
                format!("{data}/{partition_path}/{file_name}")
            };
        };
        let name = if os.partitioned_paths && !partition_path.is_empty() {
            format!("{partition_path}/{file_name}")
        } else {
            file_name.to_string()
        };
        let hash = object_storage_hash(&name);
        match &os.context {
            Some(context) => format!("{data}/{hash}/{context}/{name}"),
            None if os.partitioned_paths => format!("{data}/{hash}/{name}"),
            None => format!("{data}/{hash}-{name}"),
        }
    }
}

/// The hash directories of `name` in the object-storage layout, e.g. `0101/0110/1001/10110010`
/// for `a`.
pub(crate) fn object_storage_hash(name: &str) -> String {
    // Java forces the top bit before `Integer.toBinaryString` so that no leading zero is
    // lost, then keeps the last 20 digits: that is the low 20 bits, zero-padded.
    let bits = murmur3_32(name.as_bytes()).cast_unsigned() & ((1 << HASH_BITS) - 1);
    let digits = format!("{bits:0width$b}", width = HASH_BITS as usize);
    let mut out = String::with_capacity(digits.len() + HASH_DIR_DEPTH);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && i % HASH_DIR_DIGITS == 0 && i <= HASH_DIR_DEPTH * HASH_DIR_DIGITS {
            out.push('/');
        }
        out.push(c);
    }
    out
}

/// `path` without trailing slashes, keeping the `//` of a bare `scheme://`.
fn strip_trailing_slash(path: &str) -> &str {
    let mut out = path;
    while out.ends_with('/') && !out.ends_with("://") {
        out = &out[..out.len() - 1];
    }
    out
}

/// Java's `pathContext`: `<parent name>/<name>` of the table location as a Hadoop `Path`
/// (the parent's name is empty when the parent is the root, so `s3://b/t` gives `/t`).
fn path_context(table_location: &str) -> String {
    // The path part of the URI: after `scheme://authority`, or all of it without a scheme.
    let path = match table_location.find("://") {
        Some(i) => {
            let rest = &table_location[i + 3..];
            rest.find('/').map_or("", |j| &rest[j..])
        }
        None => table_location,
    };
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [] => String::new(),
        [name] if absolute => format!("/{name}"),
        [name] => format!("./{name}"),
        [.., parent, name] => format!("{parent}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java `TestLocationProvider.testHashInjection` (Iceberg 1.10), also PyIceberg's.
    #[test]
    fn java_hash_vectors() {
        for (name, hash) in [
            ("a", "0101/0110/1001/10110010"),
            ("b", "1110/0111/1110/00000011"),
            ("c", "0010/1101/0110/01011111"),
            ("d", "1001/0001/0100/01110011"),
        ] {
            assert_eq!(object_storage_hash(name), hash, "{name}");
            let l = DataLocations::new("s3://b/db/t", None, true, true);
            assert_eq!(
                l.data_file("", name),
                format!("s3://b/db/t/data/{hash}/{name}")
            );
        }
    }

    /// Java `testExcludePartitionInPath`: partition dropped, the last 8 digits join the name.
    #[test]
    fn partitioned_paths_off() {
        let l = DataLocations::new("table_location", None, true, false);
        assert_eq!(
            l.data_file("data=val", "test.parquet"),
            "table_location/data/0110/1010/0011/11101000-test.parquet"
        );
        // Unpartitioned files are named the same way (PyIceberg and iceberg-go agree).
        assert_eq!(
            l.data_file("", "test.parquet"),
            "table_location/data/0110/1010/0011/11101000-test.parquet"
        );
    }

    /// PyIceberg's `test_object_location_provider_write_data_path` gives the hash of
    /// `file.parquet`; Java also adds the table's context (PyIceberg does not), and for a
    /// table directly under the bucket its parent's name is empty, hence the `//`.
    #[test]
    fn data_path_outside_the_table_location() {
        let l = DataLocations::new(
            "s3://table-location/table",
            Some("s3://table-location/custom/data/path/"),
            true,
            true,
        );
        assert_eq!(
            l.data_file("", "file.parquet"),
            "s3://table-location/custom/data/path/0010/1111/0101/11011101//table/file.parquet"
        );
    }

    #[test]
    fn partition_path_is_hashed_with_the_name() {
        let l = DataLocations::new("s3://b/db/t/", None, true, true);
        let hash = object_storage_hash("d=2017-11-16/f.parquet");
        assert_eq!(
            l.data_file("d=2017-11-16", "f.parquet"),
            format!("s3://b/db/t/data/{hash}/d=2017-11-16/f.parquet")
        );
        assert_ne!(hash, object_storage_hash("f.parquet"));
    }

    #[test]
    fn data_location_outside_the_table_adds_its_context() {
        let l = DataLocations::new(
            "s3://b/warehouse/db/t",
            Some("s3://other/data"),
            true,
            false,
        );
        let hash = object_storage_hash("f.parquet");
        assert_eq!(
            l.data_file("p=1", "f.parquet"),
            format!("s3://other/data/{hash}/db/t/f.parquet")
        );
        assert_eq!(path_context("s3://b/t"), "/t");
        assert_eq!(path_context("/tmp/wh/db/t"), "db/t");
        assert_eq!(path_context("t"), "./t");
    }

    #[test]
    fn default_layout() {
        let l = DataLocations::new("memory://wh/t/", None, false, true);
        assert_eq!(l.data_file("", "f.parquet"), "memory://wh/t/data/f.parquet");
        assert_eq!(
            l.data_file("p=1", "f.parquet"),
            "memory://wh/t/data/p=1/f.parquet"
        );
        let l = DataLocations::new("memory://wh/t", Some("file:///x//"), false, true);
        assert_eq!(l.data_file("", "f.parquet"), "file:///x/f.parquet");
        assert_eq!(strip_trailing_slash("s3://"), "s3://");
    }
}
