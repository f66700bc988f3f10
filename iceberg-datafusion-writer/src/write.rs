//! The write node of an `INSERT INTO`: each of its input partitions runs our writer (the
//! table's schema, partition spec, sort order and write properties) and emits the records
//! of the data files it wrote, one JSON string per file, for the commit node. No single
//! partition sink: every partition writes at once, on every core (or executor).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::Result as DfResult;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    Partitioning, PlanProperties,
};
use futures::StreamExt;
use iceberg_append::{Catalog, Table, TableIdent};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, TableMetadata};
use iceberg_write::DataFileWriter;

use crate::error::{Error, Result};
use crate::partition_key::partition_keys;

/// The column of the write node's output: one data file record (JSON) per row.
pub const DATA_FILE_COLUMN: &str = "data_file";

/// What a write task needs to write a table's files, and nothing live: it ships to other
/// processes as JSON ([`crate::codec`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WriteTarget {
    /// The table.
    pub ident: TableIdent,
    /// The metadata file the insert was planned on.
    pub metadata_location: Option<String>,
    /// That file's metadata (schema, spec, sort order, properties, location).
    pub metadata: TableMetadata,
    /// The insert's operation id: it names the files, so tasks of one insert never collide.
    pub operation_id: uuid::Uuid,
}

/// Writes each input partition as data files of the target table.
#[derive(Debug)]
pub struct IcebergWriteExec {
    input: Arc<dyn ExecutionPlan>,
    target: Arc<WriteTarget>,
    /// The catalog the table is in: it hands out the IO for its files.
    catalog: Arc<dyn Catalog>,
    io: FileIo,
    /// The table's partition fields over the input: DataFusion hash-partitions the input by
    /// them, so each table partition reaches one writer (empty: any distribution).
    partition_keys: Vec<Arc<dyn PhysicalExpr>>,
    properties: Arc<PlanProperties>,
}

impl IcebergWriteExec {
    /// Writes `input`'s partitions into `target`, a table of `catalog`.
    ///
    /// # Errors
    /// When the target's metadata lacks its current schema or default spec.
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        target: Arc<WriteTarget>,
        catalog: Arc<dyn Catalog>,
    ) -> DfResult<Self> {
        let table = Table {
            metadata_location: target.metadata_location.clone(),
            metadata: target.metadata.clone(),
        };
        let io = catalog.table_io(&table);
        Self::with_io(input, target, catalog, io)
    }

    fn with_io(
        input: Arc<dyn ExecutionPlan>,
        target: Arc<WriteTarget>,
        catalog: Arc<dyn Catalog>,
        io: FileIo,
    ) -> DfResult<Self> {
        let partition_keys = partition_keys(&target.metadata, &input.schema())?;
        let partitions = input.output_partitioning().partition_count();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(data_file_schema()),
            Partitioning::UnknownPartitioning(partitions),
            input.pipeline_behavior(),
            input.boundedness(),
        );
        Ok(Self {
            input,
            target,
            catalog,
            io,
            partition_keys,
            properties: Arc::new(properties),
        })
    }

    /// The table this node writes.
    pub fn target(&self) -> &WriteTarget {
        &self.target
    }

    /// The catalog the table is in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }
}

/// The schema of the write node's output.
pub fn data_file_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![Field::new(
        DATA_FILE_COLUMN,
        DataType::Utf8,
        false,
    )]))
}

impl DisplayAs for IcebergWriteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IcebergWriteExec: table={}", self.target.ident)
    }
}

impl ExecutionPlan for IcebergWriteExec {
    fn name(&self) -> &str {
        "IcebergWriteExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        // More input partitions, more files written at once.
        vec![true]
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        if self.partition_keys.is_empty() {
            vec![Distribution::UnspecifiedDistribution]
        } else {
            vec![Distribution::KeyPartitioned(self.partition_keys.clone())]
        }
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        for key in &self.partition_keys {
            if f(key)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let input = only_child(children, self.name())?;
        Ok(Arc::new(Self::with_io(
            input,
            self.target.clone(),
            self.catalog.clone(),
            self.io.clone(),
        )?))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let target = self.target.clone();
        let io = self.io.clone();
        let written = async move {
            let files = write_partition(&io, &target, partition, input).await?;
            data_file_batch(&target.ident.to_string(), &files)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            data_file_schema(),
            futures::stream::once(written),
        )))
    }
}

/// The one child of a plan node that has one.
pub(crate) fn only_child(
    children: Vec<Arc<dyn ExecutionPlan>>,
    node: &str,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let mut children = children.into_iter();
    match (children.next(), children.next()) {
        (Some(child), None) => Ok(child),
        _ => Err(datafusion::error::DataFusionError::Internal(format!(
            "{node} has one input"
        ))),
    }
}

/// Writes one input partition; a failure (or a cancelled query) drops the writer, which
/// deletes what it wrote.
async fn write_partition(
    io: &FileIo,
    target: &WriteTarget,
    partition: usize,
    mut input: SendableRecordBatchStream,
) -> DfResult<Vec<DataFile>> {
    let meta = &target.metadata;
    // Names unique to this run of the task (a retried task never overwrites a file an
    // earlier run may have committed), carrying the process that wrote them.
    let mut options = iceberg_append::write_options(meta)
        .map_err(Error::from)?
        .with_operation_id(target.operation_id)
        .with_partition_id(u32::try_from(partition).unwrap_or(u32::MAX))
        .with_task_id(uuid::Uuid::new_v4().as_u64_pair().0 >> 16);
    options.file_suffix = Some(format!("pid{}", std::process::id()));
    let schema = meta.current_schema().map_err(Error::from)?;
    let spec = meta.default_spec().map_err(Error::from)?;
    let mut writer = DataFileWriter::new(io, &meta.location, schema, spec, None, &options)
        .map_err(Error::from)?;
    while let Some(batch) = input.next().await {
        let batch = batch?;
        if batch.num_rows() > 0 {
            Box::pin(writer.write(&batch)).await.map_err(Error::from)?;
        }
    }
    Ok(Box::pin(writer.close()).await.map_err(Error::from)?)
}

/// One row per data file, its record as JSON.
fn data_file_batch(table: &str, files: &[DataFile]) -> DfResult<RecordBatch> {
    let json = files
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| Error::DataFileRecord {
            table: table.to_string(),
            source,
        })?;
    let column: ArrayRef = Arc::new(StringArray::from(json));
    Ok(RecordBatch::try_new(data_file_schema(), vec![column])?)
}

/// The data file records in a write node's output batch.
///
/// # Errors
/// When the batch is not a write node's output.
pub fn data_files_of(table: &str, batch: &RecordBatch) -> Result<Vec<DataFile>> {
    let Some(column) = batch
        .column_by_name(DATA_FILE_COLUMN)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    else {
        return Err(Error::NotWriteOutput {
            table: table.to_string(),
        });
    };
    column
        .iter()
        .flatten()
        .map(|json| {
            serde_json::from_str(json).map_err(|source| Error::DataFileRecord {
                table: table.to_string(),
                source,
            })
        })
        .collect()
}
