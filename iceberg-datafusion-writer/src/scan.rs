//! A table's scan as DataFusion's own Parquet source: the current snapshot's live data
//! files, minus those whose bounds rule the filters out, read through the table's
//! [`FileIo`] with columns matched by field id ([`crate::field_ids`]).

use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, Result as DfResult};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::object_store::ObjectStoreUrl;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfigBuilder, ParquetFileReaderFactory, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::utils::conjunction;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::read_manifest_list;
use iceberg_io::FileIo;
use iceberg_spec::name_mapping::{DEFAULT_NAME_MAPPING, NameMapping};
use iceberg_spec::{DataFile, ManifestContent, ManifestStatus, TableMetadata};
use iceberg_write::read::FileIoReader;

use crate::error::{Error, Result};
use crate::field_ids::FieldIdAdapterFactory;
use crate::prune;

/// The data files a scan reads, with how many the filters let it skip.
#[derive(Debug, Clone, Default)]
pub struct ScanFiles {
    /// The files to read.
    pub files: Vec<DataFile>,
    /// Live files whose bounds ruled every row out (in the manifests that were read).
    pub skipped: usize,
    /// Manifests whose partition summaries ruled every file out, never read.
    pub skipped_manifests: usize,
}

/// The current snapshot's live data files that `filters` may match: manifests skipped by
/// their partition summaries, then files by their column bounds. The filters name the
/// columns of `columns` (Arrow, with field ids: the provider's schema).
///
/// # Errors
/// A manifest list or manifest that cannot be read; [`Error::DeletesNotSupported`] when the
/// snapshot has live delete files.
pub async fn plan_files(
    io: &FileIo,
    table: &str,
    meta: &TableMetadata,
    columns: &ArrowSchema,
    filters: &[Expr],
) -> Result<ScanFiles> {
    let Some(snapshot) = meta.current_snapshot() else {
        return Ok(ScanFiles::default());
    };
    let schema = meta.current_schema()?;
    let conditions = prune::conditions(filters, columns, schema);
    let manifests = read_manifest_list(io, snapshot.manifest_list.as_deref()).await?;
    let deletes = manifests
        .iter()
        .filter(|m| m.content == ManifestContent::Deletes)
        .filter(|m| {
            // Counts are optional in v1; a manifest that does not say may hold deletes.
            m.added_files_count.unwrap_or(1) + m.existing_files_count.unwrap_or(1) > 0
        })
        .count();
    if deletes > 0 {
        return Err(Error::DeletesNotSupported {
            table: table.to_string(),
            manifests: deletes,
        });
    }
    let mut out = ScanFiles::default();
    for m in manifests {
        if let (Some(spec), Some(summaries)) = (meta.spec_by_id(m.partition_spec_id), &m.partitions)
            && !prune::manifest_may_match(spec, summaries, schema, &conditions)
        {
            out.skipped_manifests += 1;
            continue;
        }
        let bytes = io.read(&m.manifest_path).await?;
        let manifest = decode_manifest(&m.manifest_path, &bytes)?;
        for entry in manifest.entries {
            if entry.status == ManifestStatus::Deleted {
                continue;
            }
            if prune::may_match(&entry.data_file, schema, &conditions) {
                out.files.push(entry.data_file);
            } else {
                out.skipped += 1;
            }
        }
    }
    Ok(out)
}

/// What DataFusion asked a scan for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanRequest<'a> {
    pub(crate) projection: Option<&'a Vec<usize>>,
    pub(crate) filters: &'a [Expr],
    pub(crate) limit: Option<usize>,
}

/// The physical plan that reads `files` as rows of the table's current schema.
pub(crate) fn plan_scan(
    state: &dyn Session,
    io: &FileIo,
    meta: &TableMetadata,
    table_schema: &SchemaRef,
    files: Vec<DataFile>,
    request: ScanRequest<'_>,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let ScanRequest {
        projection,
        filters,
        limit,
    } = request;
    if files.is_empty() {
        let schema = match projection {
            Some(p) => Arc::new(table_schema.project(p)?),
            None => table_schema.clone(),
        };
        return Ok(Arc::new(EmptyExec::new(schema)));
    }
    let mapping = match meta.properties.get(DEFAULT_NAME_MAPPING) {
        Some(json) => Some(NameMapping::from_json(json).map_err(Error::from)?),
        None => None,
    };
    let mut source = ParquetSource::new(table_schema.clone())
        .with_parquet_file_reader_factory(Arc::new(FileIoReaderFactory { io: io.clone() }));
    // The filters also prune row groups and pages inside each file.
    if let Some(predicate) = conjunction(filters.iter().cloned()) {
        let df_schema = DFSchema::try_from(table_schema.as_ref().clone())?;
        let predicate = state.create_physical_expr(predicate, &df_schema)?;
        source = source.with_predicate(predicate);
    }
    // Columns the files lack read as their initial default, else null.
    let adapter = FieldIdAdapterFactory::new(mapping.as_ref())
        .with_defaults_of(meta.current_schema().map_err(Error::from)?)?;
    let groups = file_groups(files, state.config().target_partitions());
    let config =
        FileScanConfigBuilder::new(files_url(state, io, &meta.location)?, Arc::new(source))
            .with_file_groups(groups)
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .with_expr_adapter(Some(Arc::new(adapter)))
            .build();
    Ok(DataSourceExec::from_data_source(config))
}

/// `files` spread over at most `n` groups of about equal bytes (largest first).
fn file_groups(mut files: Vec<DataFile>, n: usize) -> Vec<FileGroup> {
    files.sort_by_key(|f| std::cmp::Reverse(f.file_size_in_bytes));
    let n = n.clamp(1, files.len().max(1));
    let mut groups: Vec<(i64, Vec<PartitionedFile>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for f in files {
        let Some(smallest) = groups.iter_mut().min_by_key(|(bytes, _)| *bytes) else {
            break;
        };
        smallest.0 += f.file_size_in_bytes;
        let size = u64::try_from(f.file_size_in_bytes).unwrap_or(0);
        smallest.1.push(
            PartitionedFile::new(f.file_path.clone(), size)
                .with_extension(FileLocation(f.file_path)),
        );
    }
    groups
        .into_iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(_, g)| FileGroup::new(g))
        .collect()
}

/// The object store URL the scan names: DataFusion looks a store up by it, though every
/// read goes through [`FileIoReaderFactory`]; registered with the table's store.
fn files_url(state: &dyn Session, io: &FileIo, location: &str) -> DfResult<ObjectStoreUrl> {
    let url = ObjectStoreUrl::parse("iceberg://files")?;
    let store = io.object_store(location).map_err(Error::from)?;
    state
        .runtime_env()
        .register_object_store(url.as_ref(), store);
    Ok(url)
}

/// A data file's full location, as the table's metadata names it.
#[derive(Debug, Clone)]
struct FileLocation(String);

/// Opens the scan's Parquet files through the table's [`FileIo`]: ranged reads, with the
/// location exactly as the metadata names it (any scheme the IO knows).
#[derive(Debug)]
struct FileIoReaderFactory {
    io: FileIo,
}

impl ParquetFileReaderFactory for FileIoReaderFactory {
    fn create_reader(
        &self,
        _partition_index: usize,
        file: PartitionedFile,
        _metadata_size_hint: Option<usize>,
        _metrics: &ExecutionPlanMetricsSet,
    ) -> DfResult<Box<dyn AsyncFileReader + Send>> {
        let location = match file.extension::<FileLocation>() {
            Some(FileLocation(l)) => l.clone(),
            None => file.object_meta.location.to_string(),
        };
        Ok(Box::new(FileIoReader::new(&self.io, &location)))
    }
}
