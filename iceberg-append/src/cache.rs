//! A cache of parsed metadata files and manifest lists, by location.
//!
//! Both are immutable once written (a commit only ever writes new files), so a cached copy
//! can never be stale, whichever process committed since: a catalog still asks its pointer
//! for the current location on every load, and only the parsing of a file it has seen before
//! is skipped. This is what keeps a commit's cost from growing with the table's history when
//! one process commits many times (Java's table operations skip re-reading an unchanged
//! location the same way).
//!
//! Only a catalog that reuses paths (the object-store catalog's `v<N>.metadata.json`, written
//! again after a drop and a create) needs more: it loads through
//! [`MetadataCache::load_table_identified`], keyed by the object's identity, never by the
//! path alone.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use iceberg_io::{FileIo, ObjectIdentity};
use iceberg_spec::TableMetadata;

use crate::error::Result;
use crate::manifest_list::ManifestList;
use crate::table::Table;

/// Entries of each kind kept, most recently used first.
const DEFAULT_CAPACITY: usize = 16;

/// A small most-recently-used list: a handful of tables is the working set of a writer.
#[derive(Debug)]
struct Recent<V> {
    items: VecDeque<(String, Arc<V>)>,
    capacity: usize,
}

impl<V> Recent<V> {
    fn new(capacity: usize) -> Self {
        Self {
            items: VecDeque::new(),
            capacity,
        }
    }

    fn get(&mut self, key: &str) -> Option<Arc<V>> {
        let i = self.items.iter().position(|(k, _)| k == key)?;
        let item = self.items.remove(i)?;
        let value = item.1.clone();
        self.items.push_front(item);
        Some(value)
    }

    fn insert(&mut self, key: String, value: Arc<V>) {
        if let Some(i) = self.items.iter().position(|(k, _)| *k == key) {
            self.items.remove(i);
        }
        self.items.push_front((key, value));
        self.items.truncate(self.capacity);
    }
}

/// Parsed metadata files and manifest lists by location, shared by the commits of one process.
#[derive(Debug)]
pub struct MetadataCache {
    metadata: Mutex<Recent<TableMetadata>>,
    manifest_lists: Mutex<Recent<ManifestList>>,
}

impl Default for MetadataCache {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

/// The cache key of an object at a reusable location: the path and the object's identity.
fn identified_key(location: &str, identity: &ObjectIdentity) -> String {
    format!("{location}\u{0}{}", identity.as_str())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data is a cache: a panic elsewhere cannot leave it inconsistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MetadataCache {
    /// A cache keeping up to `capacity` metadata files and as many manifest lists.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            metadata: Mutex::new(Recent::new(capacity.max(1))),
            manifest_lists: Mutex::new(Recent::new(capacity.max(1))),
        }
    }

    /// The table whose current metadata file is `location`, parsed once.
    ///
    /// # Errors
    /// When the file cannot be read or is not valid table metadata.
    pub async fn load_table(&self, io: &FileIo, location: &str) -> Result<Table> {
        self.load_keyed(io, location, location.to_string()).await
    }

    /// As [`MetadataCache::load_table`] for a location that may be reused (the object-store
    /// catalog's `v<N>.metadata.json` after a drop and a new create): cached under the
    /// object's identity, so a new object at the same path is read afresh.
    ///
    /// # Errors
    /// As [`MetadataCache::load_table`].
    pub async fn load_table_identified(
        &self,
        io: &FileIo,
        location: &str,
        identity: &ObjectIdentity,
    ) -> Result<Table> {
        self.load_keyed(io, location, identified_key(location, identity))
            .await
    }

    /// The table at `location`, parsed once under `key`.
    async fn load_keyed(&self, io: &FileIo, location: &str, key: String) -> Result<Table> {
        if let Some(meta) = lock(&self.metadata).get(&key) {
            return Ok(Table {
                metadata_location: Some(location.to_string()),
                metadata: TableMetadata::clone(&meta),
            });
        }
        let table = Table::load(io, location).await?;
        lock(&self.metadata).insert(key, Arc::new(table.metadata.clone()));
        Ok(table)
    }

    /// Remembers the metadata just written at a reusable `location` as the object `identity`.
    pub fn insert_metadata_identified(
        &self,
        location: &str,
        identity: &ObjectIdentity,
        metadata: TableMetadata,
    ) {
        lock(&self.metadata).insert(identified_key(location, identity), Arc::new(metadata));
    }

    /// Remembers the metadata just written at `location`.
    pub fn insert_metadata(&self, location: &str, metadata: TableMetadata) {
        lock(&self.metadata).insert(location.to_string(), Arc::new(metadata));
    }

    /// The manifest list at `path`, decoded once.
    ///
    /// # Errors
    /// When the file cannot be read or decoded.
    pub async fn manifest_list(&self, io: &FileIo, path: &str) -> Result<Arc<ManifestList>> {
        if let Some(list) = lock(&self.manifest_lists).get(path) {
            return Ok(list);
        }
        let bytes = io.read(path).await?;
        let list = Arc::new(ManifestList::decode(path, bytes)?);
        lock(&self.manifest_lists).insert(path.to_string(), list.clone());
        Ok(list)
    }

    /// Remembers the manifest list just written at `path`.
    pub fn insert_manifest_list(&self, path: &str, list: Arc<ManifestList>) {
        lock(&self.manifest_lists).insert(path.to_string(), list);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keeps_the_most_recently_used() {
        let mut r = Recent::new(2);
        r.insert("a".into(), Arc::new(1));
        r.insert("b".into(), Arc::new(2));
        assert_eq!(r.get("a").as_deref(), Some(&1));
        r.insert("c".into(), Arc::new(3));
        assert!(r.get("b").is_none(), "least recently used is evicted");
        assert_eq!(r.get("a").as_deref(), Some(&1));
        assert_eq!(r.get("c").as_deref(), Some(&3));
        r.insert("c".into(), Arc::new(4));
        assert_eq!(r.get("c").as_deref(), Some(&4));
        assert_eq!(r.items.len(), 2);
    }

    #[tokio::test]
    async fn a_cached_manifest_list_is_not_read_again() {
        let io = FileIo::memory();
        let cache = MetadataCache::default();
        let empty = Arc::new(ManifestList::from_rows(Vec::new()));
        cache.insert_manifest_list("memory://t/l.avro", empty);
        // The file does not exist: only the cache can answer.
        assert!(
            cache
                .manifest_list(&io, "memory://t/l.avro")
                .await
                .unwrap()
                .rows()
                .is_empty()
        );
        assert!(cache.manifest_list(&io, "memory://t/m.avro").await.is_err());
    }
}
