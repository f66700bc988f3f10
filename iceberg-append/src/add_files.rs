//! Existing Parquet files registered in a table without rewriting them (PyIceberg's
//! `Table.add_files`, Spark's `add_files` procedure): each file's footer becomes a data file
//! record (`iceberg_write::import`), and all of them land in one append.
//!
//! Nothing is copied, moved or deleted, ever, on success or failure: the files belong to
//! whoever wrote them until the commit lands, and to the table after. Before anything is
//! committed every file is read and checked (Parquet, columns and types, required columns,
//! partition), and refused if it is named twice or already live in the current snapshot.
//! Files without field ids are read by name, so the commit also sets the table's
//! `schema.name-mapping.default` when it has none (as PyIceberg does).

use std::collections::HashSet;

use futures::{StreamExt, TryStreamExt};
use iceberg_io::FileIo;
use iceberg_spec::name_mapping::{DEFAULT_NAME_MAPPING, NameMapping};
use iceberg_spec::properties::TableProperties;
use iceberg_spec::{DataFile, ManifestStatus, TableMetadata};
use iceberg_write::import::{ImportTarget, ImportedFile, PartitionSource, data_file_from_parquet};

use crate::append::read_snapshot_manifests;
use crate::error::{Error, Result};
use crate::handle::TableHandle;
use crate::manifest::read_manifests;
use crate::transaction::TransactionOutcome;

/// How many footers are read at once.
const FOOTER_READS: usize = 16;

/// Where the partition tuples of added files come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddPartition {
    /// From each file's column statistics.
    #[default]
    Infer,
    /// From Hive-style `name=value` folders, checked against the statistics.
    HivePath,
}

/// What [`TableHandle::add_files`] committed.
#[derive(Debug, Clone)]
pub struct AddFilesOutcome {
    /// The commit.
    pub outcome: TransactionOutcome,
    /// The data file records committed, in the order the paths were given.
    pub files: Vec<DataFile>,
    /// True when the commit also set the table's name mapping.
    pub name_mapping_added: bool,
}

/// The live data files of `meta`'s current snapshot (none without one).
///
/// # Errors
/// When a manifest list or manifest cannot be read.
pub async fn live_data_files(io: &FileIo, meta: &TableMetadata) -> Result<Vec<DataFile>> {
    let Some(snap) = meta.current_snapshot() else {
        return Ok(Vec::new());
    };
    let listed = read_snapshot_manifests(io, snap).await?;
    let manifests = read_manifests(io, listed.iter().map(|m| m.manifest_path.as_str())).await?;
    let mut out = Vec::new();
    for decoded in manifests {
        out.extend(
            decoded
                .entries
                .into_iter()
                .filter(|e| e.status != ManifestStatus::Deleted)
                .map(|e| e.data_file),
        );
    }
    Ok(out)
}

/// The import target of `meta`: its current schema, default spec, metrics config and name
/// mapping (made from the schema when the table has none).
///
/// # Errors
/// An invalid write or metrics property, or a name mapping that does not parse.
pub fn import_target(meta: &TableMetadata) -> Result<ImportTarget> {
    let schema = meta.current_schema()?;
    let spec = meta.default_spec()?;
    // Only the metrics modes are read: no Parquet is written, so a codec this library cannot
    // write (another engine's `lzo`) does not stop registering files.
    let props = TableProperties::parse_for_commit(&meta.properties)?;
    let options = iceberg_write::WriteOptions {
        metrics: iceberg_write::MetricsConfig::from_properties(&props.metrics),
        ..iceberg_write::WriteOptions::default()
    };
    let mut target = ImportTarget::new(schema, spec, &options);
    if let Some(json) = meta.properties.get(DEFAULT_NAME_MAPPING) {
        target = target.with_name_mapping(NameMapping::from_json(json)?);
    }
    Ok(target)
}

/// Describes the existing Parquet files at `paths` as data files of the table `meta`,
/// reading their footers a few at a time; `on_file` sees each one in order. Nothing is
/// committed.
///
/// # Errors
/// [`Error::DuplicateFile`] for a path given twice; the first file's error otherwise
/// (missing, not Parquet, a column that does not fit, a partition refused).
pub async fn describe_files(
    io: &FileIo,
    meta: &TableMetadata,
    paths: &[String],
    partition: AddPartition,
    mut on_file: impl FnMut(&ImportedFile),
) -> Result<Vec<ImportedFile>> {
    let mut seen = HashSet::new();
    if let Some(twice) = paths.iter().find(|p| !seen.insert(p.as_str())) {
        return Err(Error::DuplicateFile {
            path: twice.clone(),
            reason: "is given twice".into(),
        });
    }
    let target = import_target(meta)?;
    let source = match partition {
        AddPartition::Infer => PartitionSource::Infer,
        AddPartition::HivePath => PartitionSource::HivePath,
    };
    let (target, source) = (&target, &source);
    futures::stream::iter(paths)
        .map(|path| async move { data_file_from_parquet(io, path, target, source).await })
        .buffered(FOOTER_READS)
        .map_err(Error::from)
        .inspect_ok(|f| on_file(f))
        .try_collect()
        .await
}

impl TableHandle {
    /// Registers the existing Parquet files at `paths` in the table as they are, in one
    /// append (fast or merge as the table's properties say); see the module docs.
    ///
    /// # Errors
    /// As [`describe_files`]; [`Error::DuplicateFile`] for a file already live in the
    /// table; the commit's errors. The files are never deleted.
    pub async fn add_files(
        &self,
        paths: &[String],
        partition: AddPartition,
        on_file: impl FnMut(&ImportedFile),
    ) -> Result<AddFilesOutcome> {
        let meta = self.metadata();
        let imported = describe_files(self.io(), meta, paths, partition, on_file).await?;
        let live: HashSet<String> = live_data_files(self.io(), meta)
            .await?
            .into_iter()
            .map(|f| f.file_path)
            .collect();
        if let Some(f) = imported
            .iter()
            .find(|f| live.contains(&f.data_file.file_path))
        {
            return Err(Error::DuplicateFile {
                path: f.data_file.file_path.clone(),
                reason: "is already a data file of the table".into(),
            });
        }
        let needs_mapping = !meta.properties.contains_key(DEFAULT_NAME_MAPPING)
            && imported.iter().any(|f| !f.uses_field_ids);
        let mut tx = self.new_transaction();
        if needs_mapping {
            let mapping = NameMapping::from_schema(meta.current_schema()?);
            tx = tx.set_properties([(DEFAULT_NAME_MAPPING, mapping.to_json())])?;
        }
        let files: Vec<DataFile> = imported.into_iter().map(|f| f.data_file).collect();
        let outcome = tx.append(files.clone()).commit().await?;
        Ok(AddFilesOutcome {
            outcome,
            files,
            name_mapping_added: needs_mapping,
        })
    }
}
