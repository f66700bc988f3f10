//! The catalog-less object-store catalog: a table is a location, its pointer is the highest
//! `metadata/v<N>.metadata.json` (Hadoop-table naming, which Java's `HadoopTables` reads),
//! with a `metadata/version-hint.text` naming `N`.
//!
//! A commit creates `v<N+1>.metadata.json` with `put_if_absent`: of concurrent writers on
//! base `v<N>` exactly one succeeds, the others get a conflict and retry. This is safe only
//! on stores that honour conditional create: local disk, S3 with `If-None-Match` (AWS,
//! MinIO, moto), GCS and Azure. [`ObjectStoreCatalog::open`] refuses any other scheme, and
//! any store whose second conditional create of one probe object succeeds (an S3 clone that
//! ignores `If-None-Match`).
//!
//! Old versions may be deleted (`write.metadata.delete-after-commit.enabled`, a drop),
//! oldest first, which frees their names: a commit first checks that its base still exists,
//! and a create that any version exists, so a stale writer gets a conflict rather than a
//! deleted version's name. A drop first claims the next version with a marker
//! ([`DROPPED_MARKER`]), so no writer can commit past it; a writer that still creates a
//! version the drop had just deleted finds its base gone and deletes that version again
//! (see `fate`), so a dropped table is not brought back; a drop that stopped half way (its
//! marker still the top version) is finished by the next drop of the name. A writer whose (old) base is
//! deleted between its check and its create, by commits with
//! `write.metadata.delete-after-commit.enabled`, finds the same after its create: a later
//! version not built on its own, or its own still there while the table went past it; it
//! deletes its version and gets a conflict. What remains is a reader loading in that short
//! moment. Keep `write.metadata.previous-versions-max` above the number of concurrent
//! writers, or use a SQL or REST catalog, where the swap is one atomic compare.
//!
//! Tables map to `<warehouse>/<ns1>/<ns2>/<table>` as in Java's `HadoopCatalog`; namespaces
//! are the folders above them ([`namespaces`]).

pub mod namespaces;

pub use namespaces::NAMESPACE_MARKER;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{
    Catalog, Environment, MetadataCache, SystemEnvironment, Table, TableCreation, TableIdent,
};
use iceberg_io::{FileIo, ObjectIdentity, StoreFamily};
use iceberg_spec::TableMetadata;

use crate::error::{Error, Result};

/// The file naming the current version, as Java's `HadoopTableOperations` writes it.
pub const VERSION_HINT_FILE: &str = "version-hint.text";

/// `v<N>.metadata.json`.
pub fn version_file_name(version: u32) -> String {
    format!("v{version}.metadata.json")
}

/// What a drop writes as the next version to claim it: not table metadata, so no reader takes
/// it for a table.
pub const DROPPED_MARKER: &[u8] = b"{\"dropped\": true}";

/// `v<N>.gz.metadata.json`, the name Java's `HadoopTableOperations` gives a gzip-compressed
/// version (`write.metadata.compression-codec=gzip`).
pub fn gz_version_file_name(version: u32) -> String {
    format!("v{version}.gz.metadata.json")
}

/// The `N` of a `.../v<N>.metadata.json` or `.../v<N>.gz.metadata.json` path.
pub fn parse_version(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let stem = name.strip_prefix('v')?.strip_suffix(".metadata.json")?;
    stem.strip_suffix(".gz").unwrap_or(stem).parse().ok()
}

/// A catalog that needs only an object store (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct ObjectStoreCatalog {
    warehouse: String,
    io: FileIo,
    env: Arc<dyn Environment>,
    cache: Arc<MetadataCache>,
}

impl ObjectStoreCatalog {
    /// Opens a catalog over `warehouse` with the system clock, after checking the store.
    ///
    /// # Errors
    /// [`Error::UnsupportedStore`] for a store without conditional create; [`Error::Io`].
    pub async fn open(io: FileIo, warehouse: &str) -> Result<Self> {
        Self::open_with_env(io, warehouse, Arc::new(SystemEnvironment)).await
    }

    /// As [`ObjectStoreCatalog::open`], with an injected environment.
    ///
    /// # Errors
    /// As [`ObjectStoreCatalog::open`].
    pub async fn open_with_env(
        io: FileIo,
        warehouse: &str,
        env: Arc<dyn Environment>,
    ) -> Result<Self> {
        let warehouse = warehouse.trim_end_matches('/').to_string();
        // The scheme as `FileIo` parses it (one parser: `s3n://`, `gcs://`, `abfs://` and
        // `S3://` mean what they mean to the store).
        let family = StoreFamily::of_location(&warehouse).map_err(|source| Error::Io {
            location: warehouse.clone(),
            source,
        })?;
        if !family.has_conditional_create() {
            return Err(Error::UnsupportedStore {
                location: warehouse,
                reason: "its scheme's stores are not known to honour conditional create \
                         (local disk, memory, S3, GCS and Azure do)"
                    .into(),
            });
        }
        let probe = format!("{warehouse}/.iceberg-catalog-probe-{}", env.new_uuid());
        let io_err = |source| Error::Io {
            location: warehouse.clone(),
            source,
        };
        io.put_if_absent(&probe, Bytes::from_static(b"1"))
            .await
            .map_err(io_err)?;
        let second = io.put_if_absent(&probe, Bytes::from_static(b"2")).await;
        let _ = io.delete(&probe).await;
        match second {
            Err(e) if e.is_already_exists() => Ok(Self {
                warehouse,
                io,
                env,
                cache: Arc::default(),
            }),
            Err(e) => Err(io_err(e)),
            Ok(()) => Err(Error::UnsupportedStore {
                location: warehouse,
                reason: "a second conditional create of one object succeeded".into(),
            }),
        }
    }

    /// `<warehouse>/<ns1>/.../<table>`.
    pub fn table_location(&self, ident: &TableIdent) -> String {
        format!("{}/{}", self.namespace_dir(&ident.namespace), ident.name)
    }

    /// Loads the table at `location`: the version of the hint, or of the highest listed
    /// file, then any later versions a writer created before dying ahead of its hint.
    ///
    /// # Errors
    /// [`iceberg_append::Error::NoSuchTable`] when there is no metadata file.
    pub async fn load_at(&self, location: &str) -> iceberg_append::Result<Table> {
        let dir = format!("{location}/metadata");
        let hinted = match self.io.read(&format!("{dir}/{VERSION_HINT_FILE}")).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).trim().parse::<u32>().ok(),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into()),
        };
        // A hint naming a version that is gone (deleted after commit, or a hint written late
        // by a slow writer) is no evidence of anything: list instead, as Java's
        // `HadoopTableOperations` falls back to listing.
        let not_found = || iceberg_append::Error::NoSuchTable {
            table: location.to_string(),
        };
        let hinted = match hinted {
            Some(v) => self.version_file(&dir, v).await?.map(|file| (v, file)),
            None => None,
        };
        let (mut version, mut file) = match hinted {
            Some(found) => found,
            None => {
                let listed = self
                    .io
                    .list(&dir)
                    .await?
                    .iter()
                    .filter_map(|p| parse_version(p))
                    .max()
                    .ok_or_else(not_found)?;
                let file = self
                    .version_file(&dir, listed)
                    .await?
                    .ok_or_else(not_found)?;
                (listed, file)
            }
        };
        while let Some(next) = self.version_file(&dir, version + 1).await? {
            version += 1;
            file = next;
        }
        // The path is reused after a drop and a create: the cache knows the object by its
        // identity, from the same HEAD that found it.
        let (current, identity) = file;
        match self
            .cache
            .load_table_identified(&self.io, &current, &identity)
            .await
        {
            Err(iceberg_append::Error::Io(e)) if e.is_not_found() => Err(not_found()),
            Err(e @ iceberg_append::Error::Spec(_)) => {
                // A drop in progress claimed this version with its marker.
                match self.io.read(&current).await {
                    Ok(bytes) if bytes.as_ref() == DROPPED_MARKER => Err(not_found()),
                    // Deleted by the drop since.
                    Err(gone) if gone.is_not_found() => Err(not_found()),
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    /// Creates a table at `location` (`creation.location` is ignored) as `v1.metadata.json`;
    /// of concurrent creators exactly one wins.
    ///
    /// # Errors
    /// [`iceberg_append::Error::TableAlreadyExists`] for the losers; invalid definitions.
    pub async fn create_at(
        &self,
        location: &str,
        creation: TableCreation,
    ) -> iceberg_append::Result<Table> {
        let meta = creation.into_metadata(location, self.env.as_ref())?;
        self.create_at_from_metadata(location, meta).await
    }

    /// As [`ObjectStoreCatalog::create_at`], with the table's first metadata given (it may
    /// hold snapshots); its `location` must be `location`.
    ///
    /// # Errors
    /// As [`ObjectStoreCatalog::create_at`], and a metadata file that lives elsewhere.
    pub async fn create_at_from_metadata(
        &self,
        location: &str,
        meta: TableMetadata,
    ) -> iceberg_append::Result<Table> {
        if meta.location.trim_end_matches('/') != location {
            // The Hadoop layout finds a table by its folder: metadata elsewhere is lost.
            return Err(iceberg_append::Error::Catalog {
                table: location.to_string(),
                reason: format!(
                    "the metadata says the table lives at {}, this catalog keeps it at {location}",
                    meta.location
                ),
            });
        }
        let exists = || iceberg_append::Error::TableAlreadyExists {
            table: location.to_string(),
        };
        // v1 may have been deleted (`write.metadata.previous-versions-max`) while the table
        // lives on at v<N>: creating v1 again would replace it. Java refuses too.
        let dir = format!("{location}/metadata");
        if self
            .io
            .list(&dir)
            .await?
            .iter()
            .any(|p| parse_version(p).is_some())
        {
            return Err(exists());
        }
        let path = format!("{dir}/{}", version_file_name(1));
        match self
            .io
            .put_if_absent_identified(&path, Bytes::from(meta.to_json()?))
            .await
        {
            Ok(Some(identity)) => {
                self.cache
                    .insert_metadata_identified(&path, &identity, meta.clone());
            }
            Ok(None) => {}
            Err(e) if e.is_already_exists() => return Err(exists()),
            // The create may have landed on a remote store before the error.
            Err(e) => {
                return Err(iceberg_append::Error::CommitStateUnknown {
                    table: location.to_string(),
                    snapshot_id: meta.current_snapshot_id,
                    reason: format!("creating {path}: {e}"),
                    source: Some(Box::new(e.into())),
                });
            }
        }
        self.write_hint(location, 1).await;
        Ok(Table {
            metadata_location: Some(path),
            metadata: meta,
        })
    }

    /// The metadata file of `version` in `dir`, plain or gzip-compressed, with its identity,
    /// if one exists.
    async fn version_file(
        &self,
        dir: &str,
        version: u32,
    ) -> iceberg_append::Result<Option<(String, ObjectIdentity)>> {
        for name in [version_file_name(version), gz_version_file_name(version)] {
            let path = format!("{dir}/{name}");
            if let Some(identity) = self.io.identity(&path).await? {
                return Ok(Some((path, identity)));
            }
        }
        Ok(None)
    }

    /// What became of `path`, the `v<base+1>` a commit just created, when its base is gone.
    /// A drop deletes versions oldest first, after listing them all, so a writer that
    /// checked its base just before the base was deleted creates its successor after that
    /// was deleted too. Commits with `write.metadata.delete-after-commit.enabled` delete old
    /// versions oldest first as well: a base is deleted after our version landed only once a
    /// `v<base+2>` built on it exists (its metadata log lists ours), and `v<base+2>` only
    /// after ours. So: the base there, or ours gone with a live table above it, is
    /// [`Fate::Landed`]; a later version of this table that is not built on ours, or ours
    /// still there while a live table went past `v<base+2>`, is [`Fate::Stale`] (our version
    /// took a name later commits had freed); anything else (nothing, the drop's marker, a
    /// new table) is [`Fate::Dropped`]. When the store cannot answer, the version stays.
    async fn fate(
        &self,
        location: &str,
        base_location: &str,
        base: u32,
        path: &str,
        new_metadata: &TableMetadata,
    ) -> Fate {
        match self.io.exists(base_location).await {
            Ok(false) => {}
            Ok(true) | Err(_) => return Fate::Landed,
        }
        let next = match self
            .version_file(&format!("{location}/metadata"), base + 2)
            .await
        {
            Ok(Some((next, _))) => next,
            Ok(None) => {
                // Later commits may have deleted it as well (a small
                // `write.metadata.previous-versions-max`): a drop deletes every version and
                // its marker last, so a live table's version above ours means no drop.
                if !self.went_on_past(location, base + 1, new_metadata).await {
                    return Fate::Dropped;
                }
                // Had the table gone on from ours, ours would have been deleted before
                // `v<base+2>` was.
                return match self.io.exists(path).await {
                    Ok(true) => Fate::Stale,
                    Ok(false) | Err(_) => Fate::Landed,
                };
            }
            Err(_) => return Fate::Landed,
        };
        match Table::load(&self.io, &next).await {
            Ok(successor) => {
                // The name is shared with a version a later commit freed, and both clocks
                // may be clamped to the base's: ours also holds our snapshot.
                let built_on_ours = successor.metadata.metadata_log.iter().any(|entry| {
                    entry.metadata_file == path
                        && entry.timestamp_ms == new_metadata.last_updated_ms
                }) && new_metadata
                    .current_snapshot_id
                    .is_none_or(|id| successor.metadata.snapshot_by_id(id).is_some());
                if built_on_ours {
                    Fate::Landed
                } else if successor.metadata.table_uuid == new_metadata.table_uuid {
                    Fate::Stale
                } else {
                    Fate::Dropped
                }
            }
            // Gone since, or the drop's marker (not table metadata).
            Err(iceberg_append::Error::Io(e)) if !e.is_not_found() => Fate::Landed,
            Err(_) => Fate::Dropped,
        }
    }

    /// Whether the table's highest version is above `ours` and is this table's metadata
    /// (not a drop's marker, not a new table's): its history went on past our version. A
    /// store that cannot answer counts as yes, so the version stays.
    async fn went_on_past(&self, location: &str, ours: u32, new_metadata: &TableMetadata) -> bool {
        let Ok(paths) = self.io.list(&format!("{location}/metadata")).await else {
            return true;
        };
        let Some((top, path)) = paths
            .iter()
            .filter_map(|p| parse_version(p).map(|v| (v, p)))
            .max_by_key(|(v, _)| *v)
        else {
            return false;
        };
        top > ours
            && Table::load(&self.io, path)
                .await
                .is_ok_and(|t| t.metadata.table_uuid == new_metadata.table_uuid)
    }

    /// Best effort: readers also probe past the hint.
    async fn write_hint(&self, location: &str, version: u32) {
        let hint = format!("{location}/metadata/{VERSION_HINT_FILE}");
        let _ = self.io.put(&hint, Bytes::from(version.to_string())).await;
    }
}

/// What became of a version a commit created after its base was deleted (see
/// `ObjectStoreCatalog::fate`).
enum Fate {
    /// It is (or was, before later commits deleted it) the table's version.
    Landed,
    /// It took the name of a version later commits had made and deleted: a fork.
    Stale,
    /// It would bring back a dropped table.
    Dropped,
}

/// Refuses names that are not one folder name each (see [`namespaces::check_levels`]).
fn check_ident(ident: &TableIdent) -> iceberg_append::Result<()> {
    let ns = NamespaceIdent::new(ident.namespace.clone()).ok_or_else(|| {
        iceberg_append::Error::Catalog {
            table: ident.to_string(),
            reason: "a table needs a namespace".into(),
        }
    })?;
    namespaces::check_levels(&ns)?;
    if ident.name.contains('/') || ident.name == "." || ident.name == ".." {
        return Err(iceberg_append::Error::Catalog {
            table: ident.to_string(),
            reason: format!("table name `{}` is not a folder name", ident.name),
        });
    }
    Ok(())
}

#[async_trait]
impl Catalog for ObjectStoreCatalog {
    async fn load_table(&self, ident: &TableIdent) -> iceberg_append::Result<Table> {
        check_ident(ident)?;
        self.load_at(&self.table_location(ident))
            .await
            .map_err(|e| match e {
                iceberg_append::Error::NoSuchTable { .. } => iceberg_append::Error::NoSuchTable {
                    table: ident.to_string(),
                },
                other => other,
            })
    }

    async fn create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> iceberg_append::Result<Table> {
        check_ident(ident)?;
        let meta = creation.into_metadata(&self.table_location(ident), self.env.as_ref())?;
        self.create_table_from_metadata(ident, meta).await
    }

    async fn default_table_location(&self, ident: &TableIdent) -> iceberg_append::Result<String> {
        check_ident(ident)?;
        Ok(self.table_location(ident))
    }

    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> iceberg_append::Result<Table> {
        check_ident(ident)?;
        self.create_at_from_metadata(&self.table_location(ident), metadata)
            .await
            .map_err(|e| match e {
                iceberg_append::Error::TableAlreadyExists { .. } => {
                    iceberg_append::Error::TableAlreadyExists {
                        table: ident.to_string(),
                    }
                }
                other => other,
            })
    }

    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        check_ident(ident)?;
        let location = self.table_location(ident);
        let base = parse_version(base_location).ok_or_else(|| iceberg_append::Error::Catalog {
            table: ident.to_string(),
            reason: format!("base {base_location} is not a v<N>.metadata.json file"),
        })?;
        let path = format!("{location}/metadata/{}", version_file_name(base + 1));
        // `put_if_absent` of v<N+1> is a compare-and-swap only while v<N> exists: versions are
        // deleted oldest first (after a commit, and by a drop), so a base that is gone is
        // stale, and its successor's name may be free again. Refuse before creating it.
        // A Java writer names a compressed version differently: its name must be free too.
        // And the base must still be this table's: a drop and a create reuse `v1` onwards, and
        // a writer on the old table's `v<N>` must not commit into the new one (its identity
        // makes the check a cache hit when this process wrote or read it).
        let conflict = || iceberg_append::Error::CommitConflict {
            table: ident.to_string(),
            expected: Some(base_location.to_string()),
            found: None,
        };
        let gz = format!("{location}/metadata/{}", gz_version_file_name(base + 1));
        let Some(identity) = self.io.identity(base_location).await? else {
            return Err(conflict());
        };
        let current = self
            .cache
            .load_table_identified(&self.io, base_location, &identity)
            .await?;
        if current.metadata.table_uuid != new_metadata.table_uuid || self.io.exists(&gz).await? {
            return Err(conflict());
        }
        match self
            .io
            .put_if_absent_identified(&path, Bytes::from(new_metadata.to_json()?))
            .await
        {
            Ok(identity) => {
                match self
                    .fate(&location, base_location, base, &path, new_metadata)
                    .await
                {
                    Fate::Landed => {}
                    Fate::Stale => {
                        // Our version forks a history that went on without it: take it
                        // away again, and let the writer retry on the table as it is.
                        let _ = self.io.delete(&path).await;
                        return Err(conflict());
                    }
                    Fate::Dropped => {
                        // Our version would bring back a dropped table: take it away again.
                        let _ = self.io.delete(&path).await;
                        return Err(iceberg_append::Error::NoSuchTable {
                            table: ident.to_string(),
                        });
                    }
                }
                if let Some(identity) = identity {
                    self.cache
                        .insert_metadata_identified(&path, &identity, new_metadata.clone());
                }
                self.write_hint(&location, base + 1).await;
                Ok(path)
            }
            Err(e) if e.is_already_exists() => Err(iceberg_append::Error::CommitConflict {
                table: ident.to_string(),
                expected: Some(base_location.to_string()),
                found: Some(path),
            }),
            // The create may have landed on a remote store before the error.
            Err(e) => Err(iceberg_append::Error::CommitStateUnknown {
                table: ident.to_string(),
                snapshot_id: new_metadata.current_snapshot_id,
                reason: format!("creating {path}: {e}"),
                source: Some(Box::new(e.into())),
            }),
        }
    }

    fn io(&self) -> &FileIo {
        &self.io
    }

    fn metadata_cache(&self) -> Option<&MetadataCache> {
        Some(&self.cache)
    }

    /// The tables directly in `namespace` (folders holding `metadata/v<N>.metadata.json`).
    async fn list_tables(
        &self,
        namespace: &NamespaceIdent,
    ) -> iceberg_append::Result<Vec<TableIdent>> {
        if !self.namespace_known(namespace).await? {
            return Err(iceberg_append::catalog::no_such_namespace(namespace));
        }
        Ok(self
            .table_names(namespace)
            .await?
            .into_iter()
            .map(|n| TableIdent::new(namespace.clone(), n))
            .collect())
    }

    /// Writes the namespace's marker with `properties`.
    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> iceberg_append::Result<()> {
        self.create_namespace_marker(namespace, properties).await
    }

    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> iceberg_append::Result<Vec<NamespaceIdent>> {
        self.child_namespaces(parent).await
    }

    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> iceberg_append::Result<bool> {
        self.namespace_known(namespace).await
    }

    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> iceberg_append::Result<BTreeMap<String, String>> {
        self.marker_properties(namespace).await
    }

    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> iceberg_append::Result<()> {
        self.update_marker(namespace, removals, updates).await
    }

    /// Deletes the marker of a namespace with no table in it.
    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> iceberg_append::Result<()> {
        self.drop_namespace_marker(namespace).await
    }

    /// Deletes the table's `metadata/` folder (with `purge`, first every file it reaches).
    ///
    /// The drop first claims the next version name with a marker (`put_if_absent`, the same
    /// compare-and-swap a commit makes), so no writer can commit past it: a writer racing the
    /// drop gets a conflict, and then finds no table. Only then is anything deleted.
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> iceberg_append::Result<()> {
        let dir = format!("{}/metadata", self.table_location(ident));
        let table = loop {
            let table = match self.load_table(ident).await {
                Ok(table) => table,
                // A drop that stopped half way (a failed delete, a killed process) left its
                // marker as the top version: finish it, or the name stays taken for good.
                Err(e) if e.is_not_found() && self.marked_dropped(&dir).await => {
                    let last = if purge {
                        self.last_version_left(&dir).await
                    } else {
                        None
                    };
                    self.delete_versions_then_rest(&dir, last.as_ref()).await?;
                    if purge && last.is_none() {
                        return Err(iceberg_append::Error::Catalog {
                            table: ident.to_string(),
                            reason: "the drop was finished, but its data files were not purged: \
                                     no metadata file of the table was left to find them from"
                                .into(),
                        });
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let version = table
                .metadata_location
                .as_deref()
                .and_then(parse_version)
                .unwrap_or_default();
            let marker = format!("{dir}/{}", version_file_name(version + 1));
            match self
                .io
                .put_if_absent(&marker, Bytes::from_static(DROPPED_MARKER))
                .await
            {
                Ok(()) => break table,
                // A writer committed first: drop what it made, too.
                Err(e) if e.is_already_exists() => continue,
                Err(e) => return Err(e.into()),
            }
        };
        self.delete_versions_then_rest(&dir, purge.then_some(&table))
            .await
    }
}

impl ObjectStoreCatalog {
    /// The newest version under `dir` that still loads as table metadata (below a drop's
    /// marker), to purge from.
    async fn last_version_left(&self, dir: &str) -> Option<Table> {
        let mut versions: Vec<(u32, String)> = self
            .io
            .list(dir)
            .await
            .ok()?
            .into_iter()
            .filter_map(|p| parse_version(&p).map(|v| (v, p)))
            .collect();
        versions.sort_by_key(|v| std::cmp::Reverse(v.0));
        for (_, path) in versions {
            if let Ok(table) = Table::load(&self.io, &path).await {
                return Some(table);
            }
        }
        None
    }

    /// Whether the top version under `dir` is a drop's marker.
    async fn marked_dropped(&self, dir: &str) -> bool {
        let Ok(paths) = self.io.list(dir).await else {
            return false;
        };
        let Some(top) = paths.iter().max_by_key(|p| parse_version(p)) else {
            return false;
        };
        parse_version(top).is_some()
            && self
                .io
                .read(top)
                .await
                .is_ok_and(|bytes| bytes.as_ref() == DROPPED_MARKER)
    }

    /// The end of a drop, once its marker is the top version: the version files, oldest
    /// first, one at a time, before anything is purged (a writer whose base is gone then
    /// sees a conflict, see `commit`, instead of creating a version that points at purged
    /// files); then `purge`'s files and the rest of the folder. Files already gone (another
    /// run of the same drop) are skipped.
    async fn delete_versions_then_rest(
        &self,
        dir: &str,
        purge: Option<&Table>,
    ) -> iceberg_append::Result<()> {
        let mut files = self.io.list(dir).await?;
        files.sort_by_key(|p| parse_version(p).map_or(u64::MAX, u64::from));
        let split = files.partition_point(|p| parse_version(p).is_some());
        let rest = files.split_off(split);
        for version in files {
            match self.io.delete(&version).await {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(table) = purge {
            self.purge_table_files(table).await?;
        }
        self.io.delete_many(rest).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod race_tests;
