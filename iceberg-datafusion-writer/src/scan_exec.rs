//! The scan node: a table's data files read by DataFusion's own Parquet source, the files
//! opened through the table's IO and their columns matched by field id.
//!
//! Which files a partition reads is data, not an index: the node's one input is a small
//! in-memory plan with one partition per file group, whose rows are the group's files
//! (path, size). A runner that hands each task a slice of a stage's partitions (Ballista
//! restricts a stage's leaves to the task's slice) slices that input, so a task reads its
//! own files, whatever partition number they have in its copy of the plan. The rest (table,
//! metadata file, projection, limit, predicate) travels as a description ([`crate::codec`]);
//! the table's IO comes from the decoding process's own catalog of that name.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::Result as DfResult;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::object_store::ObjectStoreUrl;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfigBuilder, ParquetFileReaderFactory, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use iceberg_append::{Catalog, Table, TableIdent};
use iceberg_io::FileIo;
use iceberg_spec::name_mapping::{DEFAULT_NAME_MAPPING, NameMapping};
use iceberg_write::read::FileIoReader;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::field_ids::FieldIdAdapterFactory;
use crate::write::only_child;

/// One data file a scan reads: its location as the metadata names it, and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanFile {
    /// The file's location.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// How a scan reads, without its files or catalog: enough to rebuild it anywhere.
#[derive(Debug, Clone)]
pub struct ScanDescription {
    /// The table.
    pub ident: TableIdent,
    /// The table as the scan was planned on it (the metadata file and its metadata).
    pub table: Arc<Table>,
    /// The schema whose columns the scan returns (the provider's).
    pub schema_id: i32,
    /// The columns returned, as indices into the schema (all when `None`).
    pub projection: Option<Vec<usize>>,
    /// At most this many rows per partition (DataFusion limits the total above the scan).
    pub limit: Option<usize>,
    /// Rows that cannot match it are skipped by row group and page (over the schema's
    /// columns); DataFusion filters the rows again above the scan.
    pub predicate: Option<Arc<dyn PhysicalExpr>>,
}

/// Reads a table's data files: for each partition of its input (a file list), DataFusion's
/// Parquet source over those files.
#[derive(Debug)]
pub struct IcebergScanExec {
    description: ScanDescription,
    catalog: Arc<dyn Catalog>,
    io: FileIo,
    /// One partition per file group, one row per file ([`file_list`]).
    files: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl IcebergScanExec {
    /// The scan `description` of a table of `catalog`, reading `groups` (one output
    /// partition per group).
    ///
    /// # Errors
    /// When the description's schema is not in the table's metadata, has no Arrow
    /// equivalent, or the table's name mapping is not valid.
    pub fn try_new(
        description: ScanDescription,
        groups: &[Vec<ScanFile>],
        catalog: Arc<dyn Catalog>,
    ) -> DfResult<Self> {
        Self::with_file_list(description, file_list(groups)?, catalog)
    }

    /// The scan `description` of a table of `catalog`, reading the files `files` lists (a
    /// [`file_list`] plan, or a slice of one).
    ///
    /// # Errors
    /// As [`IcebergScanExec::try_new`].
    pub fn with_file_list(
        description: ScanDescription,
        files: Arc<dyn ExecutionPlan>,
        catalog: Arc<dyn Catalog>,
    ) -> DfResult<Self> {
        let io = catalog.table_io(&description.table);
        // The reading plan over no file has the columns (and field metadata) it returns.
        let schema = reading_plan(&description, &io, Vec::new())?.schema();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            files.output_partitioning().clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Self {
            description,
            catalog,
            io,
            files,
            properties: Arc::new(properties),
        })
    }

    /// How the scan reads.
    pub fn description(&self) -> &ScanDescription {
        &self.description
    }

    /// The catalog the table is in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }
}

/// The schema of a scan's file list: one row per file.
pub fn file_list_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("size", DataType::UInt64, false),
    ]))
}

/// An in-memory plan with one partition per group, listing its files.
///
/// # Errors
/// Never in practice (the batches fit their schema).
pub fn file_list(groups: &[Vec<ScanFile>]) -> DfResult<Arc<dyn ExecutionPlan>> {
    let schema = file_list_schema();
    let mut partitions = Vec::with_capacity(groups.len().max(1));
    for group in groups {
        let paths: ArrayRef = Arc::new(StringArray::from_iter_values(
            group.iter().map(|f| f.path.as_str()),
        ));
        let sizes: ArrayRef = Arc::new(UInt64Array::from_iter_values(group.iter().map(|f| f.size)));
        partitions.push(vec![RecordBatch::try_new(
            schema.clone(),
            vec![paths, sizes],
        )?]);
    }
    if partitions.is_empty() {
        partitions.push(Vec::new());
    }
    Ok(MemorySourceConfig::try_new_exec(&partitions, schema, None)?)
}

/// The files a file list's batches name.
fn files_in(batches: &[RecordBatch]) -> DfResult<Vec<ScanFile>> {
    let mut files = Vec::new();
    for batch in batches {
        let paths = batch.column(0).as_any().downcast_ref::<StringArray>();
        let sizes = batch.column(1).as_any().downcast_ref::<UInt64Array>();
        let (Some(paths), Some(sizes)) = (paths, sizes) else {
            return Err(DataFusionError::Internal(
                "IcebergScanExec: its input is not a file list".into(),
            ));
        };
        for i in 0..paths.len() {
            files.push(ScanFile {
                path: paths.value(i).to_string(),
                size: sizes.value(i),
            });
        }
    }
    Ok(files)
}

/// DataFusion's Parquet source over `files`, one partition (an empty plan when none).
fn reading_plan(
    d: &ScanDescription,
    io: &FileIo,
    files: Vec<ScanFile>,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let meta = &d.table.metadata;
    let schema = meta
        .schema_by_id(d.schema_id)
        .ok_or_else(|| Error::SchemaMissing {
            table: d.ident.to_string(),
            schema_id: d.schema_id,
        })?;
    let arrow = Arc::new(iceberg_write::arrow_schema(schema).map_err(Error::from)?);
    if files.is_empty() {
        let projected = match &d.projection {
            Some(p) => Arc::new(arrow.project(p)?),
            None => arrow,
        };
        return Ok(Arc::new(EmptyExec::new(projected)));
    }
    let mapping = match meta.properties.get(DEFAULT_NAME_MAPPING) {
        Some(json) => Some(NameMapping::from_json(json).map_err(Error::from)?),
        None => None,
    };
    let mut source = ParquetSource::new(arrow.clone())
        .with_parquet_file_reader_factory(Arc::new(FileIoReaderFactory { io: io.clone() }));
    if let Some(predicate) = &d.predicate {
        source = source.with_predicate(predicate.clone());
    }
    // Columns the files lack read as their initial default, else null.
    let adapter = FieldIdAdapterFactory::new(mapping.as_ref()).with_defaults_of(schema)?;
    let group = FileGroup::new(files.iter().map(partitioned_file).collect());
    let config = FileScanConfigBuilder::new(files_url()?, Arc::new(source))
        .with_file_groups(vec![group])
        .with_projection_indices(d.projection.clone())?
        .with_limit(d.limit)
        .with_expr_adapter(Some(Arc::new(adapter)))
        .build();
    Ok(DataSourceExec::from_data_source(config))
}

fn partitioned_file(f: &ScanFile) -> PartitionedFile {
    PartitionedFile::new(f.path.clone(), f.size).with_extension(FileLocation(f.path.clone()))
}

/// The object store URL the scan names: DataFusion looks a store up by it (every process
/// that runs the scan registers the table's store under it), though every read goes
/// through [`FileIoReaderFactory`].
fn files_url() -> DfResult<ObjectStoreUrl> {
    ObjectStoreUrl::parse("iceberg://files")
}

impl DisplayAs for IcebergScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IcebergScanExec: table={}, partitions={}, projection={:?}, predicate={}",
            self.description.ident,
            self.properties.output_partitioning().partition_count(),
            self.description.projection,
            self.description
                .predicate
                .as_ref()
                .map_or_else(|| "none".to_string(), |p| p.to_string()),
        )
    }
}

impl ExecutionPlan for IcebergScanExec {
    fn name(&self) -> &str {
        "IcebergScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.files]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        // The file list is partitioned as the files should be read.
        vec![false]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        match &self.description.predicate {
            Some(p) => f(p),
            None => Ok(TreeNodeRecursion::Continue),
        }
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let files = only_child(children, self.name())?;
        Ok(Arc::new(Self::with_file_list(
            self.description.clone(),
            files,
            self.catalog.clone(),
        )?))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let url = files_url()?;
        let runtime = context.runtime_env();
        if runtime.object_store(&url).is_err() {
            let store = self
                .io
                .object_store(&self.description.table.metadata.location)
                .map_err(Error::from)?;
            runtime.register_object_store(url.as_ref(), store);
        }
        let listed = self.files.execute(partition, context.clone())?;
        let description = self.description.clone();
        let io = self.io.clone();
        let read = async move {
            let batches: Vec<RecordBatch> = listed.try_collect().await?;
            let plan = reading_plan(&description, &io, files_in(&batches)?)?;
            plan.execute(0, context)
        };
        let stream = futures::stream::once(read).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream.boxed(),
        )))
    }
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
