//! [`DeleteOrphanFiles`]: files under a table's location that nothing of the table refers to
//! (Java's `DeleteOrphanFiles`), such as what a failed write, a crashed committer or an
//! interrupted expiry left behind.
//!
//! Referenced are: the current metadata file and those in its log, the Hadoop layout's
//! `metadata/version-hint.text`, statistics files, and every manifest list, manifest, data
//! file and delete file the table's snapshots reach. Everything else listed under the
//! location is an orphan once it is older than the cut-off (3 days by default), so that files
//! of writes still in flight (data files not yet committed, a metadata file being swapped in)
//! are never taken. A Hadoop checksum file (`.name.crc`, written by Java on local disk) goes
//! with the file it belongs to. Paths compare in one canonical form (`s3a://` is `s3://`, `file:/p` is
//! `file:///p`; `iceberg_io::canonical_location`), so files other engines recorded under
//! another spelling are not mistaken for orphans. Files of another table nested in the folder
//! (a subfolder whose `metadata/` holds its own `*.metadata.json`) are never orphans of this
//! one, nor are hidden paths as Java skips them (a folder or file name below the location
//! starting with `_` or `.`: `_delta_log/`, `_SUCCESS`, checksum files; a partition folder of
//! a field so named is not hidden). A listed file whose key the table refers to under another
//! scheme or bucket makes the search fail (Java's default `PrefixMismatchMode.ERROR`), and a
//! table with `gc.enabled=false` is refused.

use std::collections::{BTreeMap, BTreeSet};

use iceberg_io::{FileIo, ObjectInfo, canonical_location};
use iceberg_spec::{Snapshot, TableMetadata};

use super::reach::{live_files, manifests_of};
use super::refuse_without_gc;
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, Result};
use crate::table::{Table, metadata_dir};

/// Default age below which a file is never an orphan (Java's default: 3 days).
pub const DEFAULT_ORPHAN_AGE_MS: i64 = 3 * 24 * 60 * 60 * 1000;

/// The Hadoop layout's pointer file, in the metadata folder.
const VERSION_HINT: &str = "version-hint.text";

/// A search for orphan files (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct DeleteOrphanFiles {
    older_than_ms: Option<i64>,
    location: Option<String>,
}

/// What [`DeleteOrphanFiles`] found (and deleted).
#[derive(Debug)]
pub struct OrphanReport {
    /// The orphans, by path as listed.
    pub orphans: Vec<ObjectInfo>,
    /// Objects listed under the location.
    pub listed: usize,
    /// Files the table refers to.
    pub referenced: usize,
    /// Unreferenced objects left alone because they are newer than the cut-off.
    pub too_new: usize,
    /// Objects left alone because they lie in another table's folder nested under the
    /// location (a folder holding `metadata/*.metadata.json` of its own).
    pub other_tables: usize,
    /// Objects left alone because a folder or file name under the location starts with `_`
    /// or `.` (Java's hidden paths: `_delta_log/`, `_SUCCESS`, `.crc` files), partition
    /// folders of fields so named excepted.
    pub hidden: usize,
    /// True when the orphans were deleted.
    pub deleted: bool,
    /// Why deleting them failed (some may remain).
    pub delete_error: Option<Error>,
}

impl DeleteOrphanFiles {
    /// A search under the table's location, sparing files younger than 3 days.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes as orphans only files last written before `timestamp_ms` (ms since the epoch).
    pub fn older_than_ms(mut self, timestamp_ms: i64) -> Self {
        self.older_than_ms = Some(timestamp_ms);
        self
    }

    /// Searches under `location` instead of the table's location.
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// The orphans of `table` at `now_ms`; nothing is deleted.
    ///
    /// # Errors
    /// Listing fails, or a manifest list or manifest of the table cannot be read (then no
    /// file can be called an orphan).
    pub async fn find(&self, io: &FileIo, table: &Table, now_ms: i64) -> Result<OrphanReport> {
        let meta = &table.metadata;
        refuse_without_gc(meta, "removing orphan files")?;
        if table.metadata_location.is_none() {
            // Its current metadata file would look like an orphan (a REST server may leave
            // `metadata-location` out).
            return Err(Error::NotSupportedForTable {
                table: meta.location.clone(),
                operation: "removing orphan files".into(),
                reason: "the catalog did not say where the table's current metadata file is".into(),
            });
        }
        let cut_off = self
            .older_than_ms
            .unwrap_or_else(|| now_ms.saturating_sub(DEFAULT_ORPHAN_AGE_MS));
        let referenced = referenced(io, table).await?;
        let prefix = self.location.as_deref().unwrap_or(&meta.location);
        let listed = io.list_objects(prefix).await?;
        let paths = listed
            .iter()
            .map(|o| canonical_location(&o.path))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let nested = nested_tables(&paths, &canonical_location(&meta.location)?);
        let root = canonical_location(prefix)?;
        let hidden = HiddenPaths::of(meta);
        let by_key: BTreeMap<&str, &str> =
            referenced.iter().map(|r| (key_of(r), r.as_str())).collect();
        let mut conflicts = Vec::new();
        let mut report = OrphanReport {
            orphans: Vec::new(),
            listed: listed.len(),
            referenced: referenced.len(),
            too_new: 0,
            other_tables: 0,
            hidden: 0,
            deleted: false,
            delete_error: None,
        };
        for (object, path) in listed.into_iter().zip(paths) {
            if is_referenced(&referenced, &path) {
                continue;
            }
            if hidden.hides(&root, &path) {
                report.hidden += 1;
                continue;
            }
            if nested.iter().any(|root| path.starts_with(root.as_str())) {
                report.other_tables += 1;
                continue;
            }
            if let Some(known) = by_key.get(key_of(&path)) {
                conflicts.push(format!("{} (the table refers to {known})", object.path));
                continue;
            }
            if object.last_modified_ms >= cut_off {
                report.too_new += 1;
            } else {
                report.orphans.push(object);
            }
        }
        if let Some(first) = conflicts.first() {
            // Java's default (`PrefixMismatchMode.ERROR`): a file whose path the table
            // refers to under another scheme or bucket may be that very file, seen through
            // another name; deleting it could break the table.
            return Err(Error::NotSupportedForTable {
                table: meta.location.clone(),
                operation: "removing orphan files".into(),
                reason: format!(
                    "{} listed files have the path of a referenced file under another scheme \
                     or bucket, so none can be called an orphan; first: {first}",
                    conflicts.len()
                ),
            });
        }
        Ok(report)
    }

    /// [`Self::find`], then deletes the orphans (batched per store).
    ///
    /// # Errors
    /// As [`Self::find`]; a failed deletion is in [`OrphanReport::delete_error`].
    pub async fn delete(&self, io: &FileIo, table: &Table, now_ms: i64) -> Result<OrphanReport> {
        let report = self.find(io, table, now_ms).await?;
        Ok(delete_orphans(io, report).await)
    }

    /// [`Self::delete`] for table `ident` of `catalog`, loaded again after the search: a
    /// file a commit came to refer to while the folder was listed (files added in place, as
    /// `add-files` does) is left alone. Only the short time between that load and the
    /// deletes stays open, where [`Self::delete`] leaves the whole search open.
    ///
    /// # Errors
    /// As [`Self::find`], or loading the table.
    pub async fn delete_from(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        now_ms: i64,
    ) -> Result<OrphanReport> {
        let table = catalog.load_table(ident).await?;
        let io = catalog.table_io(&table);
        let mut report = self.find(&io, &table, now_ms).await?;
        let now = catalog.load_table(ident).await?;
        if now.metadata_location != table.metadata_location {
            let referenced = referenced(&io, &now).await?;
            report.orphans.retain(|o| {
                canonical_location(&o.path).is_ok_and(|p| !is_referenced(&referenced, &p))
            });
            report.referenced = referenced.len();
        }
        Ok(delete_orphans(&io, report).await)
    }
}

/// Whether `path` (canonical) is one of the `referenced` files, or the Hadoop checksum file
/// of one.
fn is_referenced(referenced: &BTreeSet<String>, path: &str) -> bool {
    referenced.contains(path) || checksum_of(path).is_some_and(|f| referenced.contains(&f))
}

/// Deletes the orphans `report` found, saying in it how that went.
async fn delete_orphans(io: &FileIo, mut report: OrphanReport) -> OrphanReport {
    // A local orphan's Hadoop checksum file (hidden, so never listed as an orphan) goes too.
    let paths = report
        .orphans
        .iter()
        .flat_map(|o| [Some(o.path.clone()), checksum_file(&o.path)])
        .flatten()
        .collect();
    report.delete_error = io.delete_many(paths).await.err().map(Error::from);
    report.deleted = report.delete_error.is_none();
    report
}

/// The folders (each ending in `/`) of other tables among the listed `paths` (canonical): a
/// folder whose `metadata/` holds a `*.metadata.json` (or `.gz`) and is not the table's own
/// at `location`. A catalog may nest a table in another's folder (a namespace's `location`,
/// the object-store catalog's `db.t.x` in `db/t/x`); their files are never this table's
/// orphans.
fn nested_tables(paths: &[String], location: &str) -> BTreeSet<String> {
    let own = location.trim_end_matches('/');
    let mut roots = BTreeSet::new();
    for path in paths {
        let Some((dir, name)) = path.rsplit_once('/') else {
            continue;
        };
        if !(name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz")) {
            continue;
        }
        if let Some(root) = dir.strip_suffix("/metadata")
            && root.trim_end_matches('/') != own
        {
            roots.insert(format!("{}/", root.trim_end_matches('/')));
        }
    }
    roots
}

/// Java's hidden paths under a listed location (`FileSystemWalker` with its
/// `PartitionAwareHiddenPathFilter`): a name starting with `_` or `.` hides what lies under
/// it, unless it is a partition folder (`<field>=...`) of a field whose name starts so.
struct HiddenPaths {
    partition_prefixes: Vec<String>,
}

impl HiddenPaths {
    fn of(meta: &TableMetadata) -> Self {
        let partition_prefixes = meta
            .partition_specs
            .iter()
            .flat_map(|s| s.fields())
            .filter(|f| f.name.starts_with(['_', '.']))
            .map(|f| format!("{}=", f.name))
            .collect();
        Self { partition_prefixes }
    }

    /// Whether `path` (canonical) is hidden below `root` (canonical).
    fn hides(&self, root: &str, path: &str) -> bool {
        let Some(below) = path.strip_prefix(root.trim_end_matches('/')) else {
            return false;
        };
        below.split('/').any(|name| {
            name.starts_with(['_', '.'])
                && !self.partition_prefixes.iter().any(|p| name.starts_with(p))
        })
    }
}

/// The key of a canonical location (what follows `scheme://bucket/`), by which Java matches
/// listed files to referenced ones before it compares schemes and buckets.
fn key_of(canonical: &str) -> &str {
    let rest = canonical.split_once("://").map_or(canonical, |(_, r)| r);
    rest.split_once('/').map_or("", |(_, key)| key)
}

/// The file a Hadoop checksum file (`dir/.name.crc`, which Java's local file system writes
/// beside every file, and which it lists, reads and deletes with it) belongs to.
pub(crate) fn checksum_of(path: &str) -> Option<String> {
    let (dir, file) = path.rsplit_once('/')?;
    let name = file.strip_prefix('.')?.strip_suffix(".crc")?;
    (!name.is_empty()).then(|| format!("{dir}/{name}"))
}

/// The Hadoop checksum file of a local file `path` (see [`checksum_of`]); none elsewhere.
pub(crate) fn checksum_file(path: &str) -> Option<String> {
    if iceberg_io::StoreFamily::of_location(path).ok()? != iceberg_io::StoreFamily::File {
        return None;
    }
    let (dir, file) = path.rsplit_once('/')?;
    Some(format!("{dir}/.{file}.crc"))
}

/// Every file `table` refers to, in canonical form.
async fn referenced(io: &FileIo, table: &Table) -> Result<BTreeSet<String>> {
    let meta: &TableMetadata = &table.metadata;
    let mut paths: Vec<String> = table.metadata_location.iter().cloned().collect();
    paths.extend(meta.metadata_log.iter().map(|e| e.metadata_file.clone()));
    paths.push(format!("{}/{VERSION_HINT}", metadata_dir(meta)));
    paths.push(format!("{}/metadata/{VERSION_HINT}", meta.location));
    paths.extend(meta.statistics.iter().map(|s| s.statistics_path.clone()));
    paths.extend(
        meta.partition_statistics
            .iter()
            .map(|s| s.statistics_path.clone()),
    );
    let snapshots: Vec<&Snapshot> = meta.snapshots.iter().map(|s| s.snapshot()).collect();
    let reach = manifests_of(io, &snapshots).await?;
    paths.extend(live_files(io, reach.manifests.keys()).await?.into_keys());
    paths.extend(reach.lists);
    paths.extend(reach.manifests.into_keys());
    paths
        .iter()
        .map(|p| canonical_location(p).map_err(Error::from))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hadoop_checksum_files_go_with_their_file() {
        assert_eq!(
            checksum_of("file:///w/t/metadata/.v3.metadata.json.crc").as_deref(),
            Some("file:///w/t/metadata/v3.metadata.json")
        );
        assert_eq!(checksum_of("file:///w/t/data/x.crc"), None);
        assert_eq!(checksum_of("file:///w/t/data/..crc"), None);
        assert_eq!(
            checksum_file("file:/w/t/data/a.parquet").as_deref(),
            Some("file:/w/t/data/.a.parquet.crc")
        );
        assert_eq!(checksum_file("s3://b/t/data/a.parquet"), None);
        let c = checksum_file("/w/t/m/x.avro").unwrap();
        assert_eq!(checksum_of(&c).as_deref(), Some("/w/t/m/x.avro"));
    }
}
