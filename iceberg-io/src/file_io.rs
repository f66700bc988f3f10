//! [`FileIo`]: read, write, list and delete objects named by full URIs.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions};

use crate::config::{FileIoConfig, WriteConfig};
use crate::error::{Error, Result};
use crate::location::{self, Location, StoreKey};
use crate::store;
use crate::writer::FileWriter;

/// What tells one object written at a path from another written there later (the store's
/// entity tag and version): a path can be reused after a delete, an identity cannot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectIdentity(String);

impl ObjectIdentity {
    /// From a store's entity tag and version (`None` when it gives neither).
    fn of(e_tag: Option<String>, version: Option<String>) -> Option<Self> {
        match (e_tag, version) {
            (None, None) => None,
            (e_tag, version) => Some(Self(format!(
                "{}/{}",
                e_tag.unwrap_or_default(),
                version.unwrap_or_default()
            ))),
        }
    }

    /// From the metadata a HEAD returns: the entity tag and version, else (a store that gives
    /// neither) the modification time and size.
    fn of_meta(meta: object_store::ObjectMeta) -> Self {
        let fallback = || format!("{}:{}", meta.last_modified.to_rfc3339(), meta.size);
        Self::of(meta.e_tag.clone(), meta.version.clone()).unwrap_or_else(|| Self(fallback()))
    }

    /// The identity as text (opaque: only equality means anything).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Paths of one `delete_many` call that live in one store.
type StoreGroup = (Location, Arc<dyn ObjectStore>, Vec<ObjectPath>);

/// File IO over object stores, routing every path to a store by its scheme and bucket.
///
/// Cloning is cheap and clones share the store cache: stores are created lazily, one per
/// scheme family and bucket (`s3://` and `s3a://` share one), configured from the
/// properties given at construction.
#[derive(Clone, Debug)]
pub struct FileIo {
    inner: Arc<Inner>,
    write: WriteConfig,
}

struct Inner {
    config: FileIoConfig,
    stores: Mutex<HashMap<StoreKey, Arc<dyn ObjectStore>>>,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Inner")
            .field("config", &self.config)
            .field("stores", &stores.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl FileIo {
    fn new(config: FileIoConfig) -> Self {
        let write = config.write;
        Self {
            inner: Arc::new(Inner {
                config,
                stores: Mutex::new(HashMap::new()),
            }),
            write,
        }
    }

    /// IO for the table at `location`, configured by Iceberg property names.
    ///
    /// The store for `location` is built at once, so configuration errors surface here.
    ///
    /// # Errors
    /// [`Error::InvalidProperty`], [`Error::InvalidLocation`], [`Error::UnsupportedScheme`],
    /// or [`Error::Store`] if the store rejects the configuration.
    pub fn from_location(location: &str, properties: &HashMap<String, String>) -> Result<FileIo> {
        Self::from_config(location, FileIoConfig::from_properties(properties)?)
    }

    /// IO for the table at `location`, from an already-parsed configuration.
    ///
    /// # Errors
    /// As [`FileIo::from_location`], minus property parsing.
    pub fn from_config(location: &str, config: FileIoConfig) -> Result<FileIo> {
        let io = Self::new(config);
        io.resolve(location)?;
        Ok(io)
    }

    /// IO for tables wherever they are, configured by Iceberg property names; each store is
    /// built when a path first reaches it (a REST catalog's tables may live in any bucket).
    ///
    /// # Errors
    /// [`Error::InvalidProperty`] for a value that cannot be parsed.
    pub fn from_properties(properties: &HashMap<String, String>) -> Result<FileIo> {
        Ok(Self::new(FileIoConfig::from_properties(properties)?))
    }

    /// In-memory IO (each FileIo::memory() is its own fresh store; clones share it).
    ///
    /// Serves `memory://bucket/key` paths, one fresh store per bucket; other schemes route
    /// as usual.
    pub fn memory() -> FileIo {
        Self::new(FileIoConfig::default())
    }

    /// IO whose paths under `scheme_and_bucket_url` (e.g. `s3://bucket`, `memory://t`,
    /// `file:///`) are served by `store`; other paths route as usual, with default settings.
    ///
    /// A URL without `scheme://` means local disk.
    pub fn with_store(scheme_and_bucket_url: &str, store: Arc<dyn ObjectStore>) -> FileIo {
        let io = Self::new(FileIoConfig::default());
        io.register_store(scheme_and_bucket_url, store);
        io
    }

    /// Serves paths under `scheme_and_bucket_url` with `store`, for this IO and its clones.
    pub fn register_store(&self, scheme_and_bucket_url: &str, store: Arc<dyn ObjectStore>) {
        let key = location::store_key_of(scheme_and_bucket_url);
        self.lock_stores().insert(key, store);
    }

    /// A clone sharing this IO's stores but writing with `write` (part size, parallelism).
    pub fn with_write_config(&self, write: WriteConfig) -> FileIo {
        Self {
            inner: Arc::clone(&self.inner),
            write,
        }
    }

    /// The parsed configuration.
    pub fn config(&self) -> &FileIoConfig {
        &self.inner.config
    }

    /// The write settings used by [`FileIo::writer`].
    pub fn write_config(&self) -> WriteConfig {
        self.write
    }

    /// Reads the whole object at `path`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if absent; other store errors as [`Error::Store`].
    pub async fn read(&self, path: &str) -> Result<Bytes> {
        let (loc, store) = self.resolve(path)?;
        let result = store
            .get(&loc.key)
            .await
            .map_err(|e| Error::from_store(path, e))?;
        result.bytes().await.map_err(|e| Error::from_store(path, e))
    }

    /// Reads bytes `range` of the object at `path`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if absent; a range past the end is an [`Error::Store`].
    pub async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        let (loc, store) = self.resolve(path)?;
        store
            .get_range(&loc.key, range)
            .await
            .map_err(|e| Error::from_store(path, e))
    }

    /// The size in bytes of the object at `path`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if absent.
    pub async fn len(&self, path: &str) -> Result<u64> {
        let (loc, store) = self.resolve(path)?;
        let meta = store
            .head(&loc.key)
            .await
            .map_err(|e| Error::from_store(path, e))?;
        Ok(meta.size)
    }

    /// Whether an object exists at `path`.
    ///
    /// # Errors
    /// Store errors other than "not found".
    pub async fn exists(&self, path: &str) -> Result<bool> {
        let (loc, store) = self.resolve(path)?;
        match store.head(&loc.key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(Error::from_store(path, e)),
        }
    }

    /// Writes `data` to `path` atomically, replacing any existing object.
    ///
    /// # Errors
    /// Store errors as [`Error::Store`].
    pub async fn put(&self, path: &str, data: Bytes) -> Result<()> {
        self.put_with_mode(path, data, PutMode::Overwrite).await
    }

    /// Atomic create: Err(Error::AlreadyExists{path}) if the object exists.
    ///
    /// Of several concurrent calls for one path exactly one succeeds.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] if an object is already there.
    pub async fn put_if_absent(&self, path: &str, data: Bytes) -> Result<()> {
        self.put_with_mode(path, data, PutMode::Create).await
    }

    /// As [`FileIo::put_if_absent`], returning the new object's [`ObjectIdentity`] when the
    /// store gives one.
    ///
    /// # Errors
    /// As [`FileIo::put_if_absent`].
    pub async fn put_if_absent_identified(
        &self,
        path: &str,
        data: Bytes,
    ) -> Result<Option<ObjectIdentity>> {
        let (loc, store) = self.resolve(path)?;
        let put = store
            .put_opts(&loc.key, data.into(), PutOptions::from(PutMode::Create))
            .await
            .map_err(|e| Error::from_store(path, e))?;
        Ok(ObjectIdentity::of(put.e_tag, put.version))
    }

    /// The object store that serves `path` (created on first use), for callers that wrap or
    /// use it directly.
    ///
    /// # Errors
    /// When `path` names no store this IO can build.
    pub fn object_store(&self, path: &str) -> Result<Arc<dyn ObjectStore>> {
        Ok(self.resolve(path)?.1)
    }

    /// The [`ObjectIdentity`] of the object at `path` (one HEAD request): `Ok(None)` when
    /// there is no object.
    ///
    /// # Errors
    /// Store errors other than "not found".
    pub async fn identity(&self, path: &str) -> Result<Option<ObjectIdentity>> {
        let (loc, store) = self.resolve(path)?;
        match store.head(&loc.key).await {
            Ok(meta) => Ok(Some(ObjectIdentity::of_meta(meta))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(Error::from_store(path, e)),
        }
    }

    async fn put_with_mode(&self, path: &str, data: Bytes, mode: PutMode) -> Result<()> {
        let (loc, store) = self.resolve(path)?;
        store
            .put_opts(&loc.key, data.into(), PutOptions::from(mode))
            .await
            .map_err(|e| Error::from_store(path, e))?;
        Ok(())
    }

    /// Streaming writer (multipart upload, buffered like object_store's `BufWriter`).
    ///
    /// Nothing is visible at `path` until [`FileWriter::close`] succeeds; see [`FileWriter`].
    ///
    /// # Errors
    /// [`Error::InvalidLocation`] or [`Error::UnsupportedScheme`].
    pub async fn writer(&self, path: &str) -> Result<FileWriter> {
        let (loc, store) = self.resolve(path)?;
        Ok(FileWriter::new(path.to_owned(), loc.key, store, self.write))
    }

    /// Deletes the object at `path`; deleting a missing object is Ok.
    ///
    /// # Errors
    /// Store errors other than "not found".
    pub async fn delete(&self, path: &str) -> Result<()> {
        let (loc, store) = self.resolve(path)?;
        match store.delete(&loc.key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(Error::from_store(path, e)),
        }
    }

    /// Deletes every object in `paths` (batched per store where the store supports it).
    ///
    /// Missing objects are skipped. All paths are parsed first, so a malformed one fails
    /// the call before anything is deleted; then every path is attempted.
    ///
    /// # Errors
    /// [`Error::InvalidLocation`] / [`Error::UnsupportedScheme`] for a bad path; otherwise
    /// the first store error, as [`Error::Store`] with the store's root as its path (the
    /// source names the key).
    pub async fn delete_many(&self, paths: Vec<String>) -> Result<()> {
        let mut groups: HashMap<StoreKey, StoreGroup> = HashMap::new();
        for path in &paths {
            let (loc, store) = self.resolve(path)?;
            let group = groups
                .entry(loc.store.clone())
                .or_insert_with(|| (loc.clone(), store, Vec::new()));
            group.2.push(loc.key);
        }
        let mut first_error = None;
        for (loc, store, keys) in groups.into_values() {
            let input = futures::stream::iter(keys.into_iter().map(Ok)).boxed();
            let mut results = store.delete_stream(input);
            while let Some(result) = results.next().await {
                match result {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => {
                        if first_error.is_none() {
                            first_error = Some(Error::from_store(&loc.root, e));
                        }
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Lists every object under the directory `prefix`, recursively, as full paths in the
    /// same URI form as `prefix`, sorted.
    ///
    /// `prefix` matches whole path segments: `s3://b/dir` lists `s3://b/dir/x` but not
    /// `s3://b/dir2/x`. A missing directory lists as empty.
    ///
    /// # Errors
    /// Store errors as [`Error::Store`].
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self
            .list_objects(prefix)
            .await?
            .into_iter()
            .map(|o| o.path)
            .collect())
    }

    /// As [`FileIo::list`], with each object's size and last-modified time.
    ///
    /// # Errors
    /// Store errors as [`Error::Store`].
    pub async fn list_objects(&self, prefix: &str) -> Result<Vec<ObjectInfo>> {
        let (loc, store) = self.resolve(prefix)?;
        let key = (!loc.key.is_root()).then_some(&loc.key);
        let listed: Result<Vec<ObjectInfo>, object_store::Error> = store
            .list(key)
            .map_ok(|meta| ObjectInfo {
                path: loc.render(&meta.location),
                size: meta.size,
                last_modified_ms: meta.last_modified.timestamp_millis(),
            })
            .try_collect()
            .await;
        let mut objects = match listed {
            Ok(objects) => objects,
            Err(object_store::Error::NotFound { .. }) => Vec::new(),
            Err(e) => return Err(Error::from_store(prefix, e)),
        };
        objects.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        Ok(objects)
    }

    /// The immediate children of the directory `prefix`: its sub-directories (keys with
    /// more segments below them) and its objects, as full paths without a trailing `/`,
    /// each sorted. A missing directory lists as empty.
    ///
    /// # Errors
    /// Store errors as [`Error::Store`].
    pub async fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let (loc, store) = self.resolve(prefix)?;
        let key = (!loc.key.is_root()).then_some(&loc.key);
        let listed = match store.list_with_delimiter(key).await {
            Ok(listed) => listed,
            Err(object_store::Error::NotFound { .. }) => return Ok(DirListing::default()),
            Err(e) => return Err(Error::from_store(prefix, e)),
        };
        let mut dirs: Vec<String> = listed
            .common_prefixes
            .iter()
            .map(|p| loc.render(p))
            .collect();
        let mut files: Vec<String> = listed
            .objects
            .iter()
            .map(|m| loc.render(&m.location))
            .collect();
        dirs.sort_unstable();
        files.sort_unstable();
        Ok(DirListing { dirs, files })
    }

    /// The parsed location and the (possibly new) store serving `path`.
    fn resolve(&self, path: &str) -> Result<(Location, Arc<dyn ObjectStore>)> {
        let loc = Location::parse(path)?;
        let mut stores = self.lock_stores();
        if let Some(store) = stores.get(&loc.store) {
            return Ok((loc, Arc::clone(store)));
        }
        let store = store::build(path, &loc, &self.inner.config)?;
        stores.insert(loc.store.clone(), Arc::clone(&store));
        Ok((loc, store))
    }

    fn lock_stores(&self) -> std::sync::MutexGuard<'_, HashMap<StoreKey, Arc<dyn ObjectStore>>> {
        // The map is always left consistent, so a poisoned lock is still usable.
        self.inner
            .stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// An object [`FileIo::list_objects`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Its full path, in the listed prefix's form.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written, ms since the epoch.
    pub last_modified_ms: i64,
}

/// What [`FileIo::list_dir`] found in one directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Sub-directories, as full paths.
    pub dirs: Vec<String>,
    /// Objects directly in the directory, as full paths.
    pub files: Vec<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn memory_ios_are_independent_and_clones_share() {
        let a = FileIo::memory();
        let b = FileIo::memory();
        a.put("memory://t/k", Bytes::from_static(b"x"))
            .await
            .unwrap();
        assert!(a.clone().exists("memory://t/k").await.unwrap());
        assert!(!b.exists("memory://t/k").await.unwrap());
        // Another bucket is another store.
        assert!(!a.exists("memory://u/k").await.unwrap());
    }

    #[tokio::test]
    async fn unknown_and_disabled_schemes_are_typed_errors() {
        let io = FileIo::memory();
        let err = io.read("hdfs://nn/x").await.unwrap_err();
        assert!(matches!(err, Error::UnsupportedScheme { ref scheme, .. } if scheme == "hdfs"));
        let err = io.read("not a uri").await.unwrap_err();
        assert!(matches!(err, Error::InvalidLocation { .. }));
        #[cfg(not(feature = "s3"))]
        {
            let err = FileIo::from_location("s3://b/t", &HashMap::new()).unwrap_err();
            assert!(matches!(err, Error::UnsupportedScheme { .. }), "{err}");
        }
    }

    #[tokio::test]
    async fn from_location_rejects_bad_properties() {
        let props = HashMap::from([(
            crate::config::S3_PATH_STYLE_ACCESS.to_owned(),
            "maybe".to_owned(),
        )]);
        let err = FileIo::from_location("memory://t/", &props).unwrap_err();
        assert!(
            matches!(err, Error::InvalidProperty { ref key, .. } if key == "s3.path-style-access")
        );
    }

    #[tokio::test]
    async fn injected_store_serves_its_url_only() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let io = FileIo::with_store("custom://bkt", Arc::clone(&store));
        io.put("custom://bkt/a/b", Bytes::from_static(b"hi"))
            .await
            .unwrap();
        let got = store
            .get(&ObjectPath::from("a/b"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(got.as_ref(), b"hi");
        assert_eq!(
            io.list("custom://bkt/a").await.unwrap(),
            vec!["custom://bkt/a/b"]
        );
        assert!(io.read("custom://other/a/b").await.is_err());
    }
}
