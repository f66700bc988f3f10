//! The commit node of an `INSERT INTO`: gathers the data file records of every write task
//! and appends them in one snapshot (fast or merge as the table's properties say), then
//! emits the row count DataFusion reports for DML.
//!
//! The snapshot id is fixed when the insert is planned, so the commit is idempotent: a
//! commit stage that runs again (a retried stage, a lost answer) finds its own snapshot in
//! the table and reports it instead of appending the rows twice.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::Result as DfResult;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::TryStreamExt;
use iceberg_append::{Catalog, Environment, SystemEnvironment, TableIdent, commit_append};
use iceberg_spec::DataFile;
use uuid::Uuid;

use crate::error::Error;
use crate::write::{data_files_of, only_child};

/// Commits what its input (a write node, coalesced to one partition) wrote, once.
#[derive(Debug)]
pub struct IcebergCommitExec {
    input: Arc<dyn ExecutionPlan>,
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    snapshot_id: i64,
    properties: Arc<PlanProperties>,
}

impl IcebergCommitExec {
    /// Commits `input`'s data files to `ident` as snapshot `snapshot_id`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        snapshot_id: i64,
    ) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Self {
            input,
            catalog,
            ident,
            snapshot_id,
            properties: Arc::new(properties),
        }
    }

    /// The snapshot id this commit lands as.
    pub fn snapshot_id(&self) -> i64 {
        self.snapshot_id
    }
}

/// DataFusion's DML result: one `count` row.
fn count_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

impl DisplayAs for IcebergCommitExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IcebergCommitExec: table={}, snapshot_id={}",
            self.ident, self.snapshot_id
        )
    }
}

impl ExecutionPlan for IcebergCommitExec {
    fn name(&self) -> &str {
        "IcebergCommitExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let input = only_child(children, self.name())?;
        Ok(Arc::new(Self::new(
            input,
            self.catalog.clone(),
            self.ident.clone(),
            self.snapshot_id,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "IcebergCommitExec has one partition, not {partition}"
            )));
        }
        let input = self.input.execute(0, context)?;
        let catalog = self.catalog.clone();
        let ident = self.ident.clone();
        let snapshot_id = self.snapshot_id;
        let committed = async move {
            let batches: Vec<RecordBatch> = input.try_collect().await?;
            let table = ident.to_string();
            let mut files = Vec::new();
            for batch in &batches {
                files.extend(data_files_of(&table, batch)?);
            }
            let rows = commit_once(catalog.as_ref(), &ident, files, snapshot_id).await?;
            let count: ArrayRef = Arc::new(UInt64Array::from(vec![rows]));
            Ok(RecordBatch::try_new(count_schema(), vec![count])?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            futures::stream::once(committed),
        )))
    }
}

/// Appends `files` as snapshot `snapshot_id`, unless the table already has it (this commit
/// ran before); returns the rows the snapshot added.
async fn commit_once(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    files: Vec<DataFile>,
    snapshot_id: i64,
) -> Result<u64, Error> {
    let table = catalog.load_table(ident).await?;
    if let Some(done) = table.metadata.snapshot_by_id(snapshot_id) {
        // This run's files have names of their own, so the landed snapshot holds none of
        // them: nothing refers to them.
        let io = catalog.table_io(&table);
        let ours: Vec<String> = files.into_iter().map(|f| f.file_path).collect();
        io.delete_many(ours).await?;
        let added = done
            .summary
            .as_ref()
            .and_then(|s| s.properties.get("added-records"))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        return Ok(added);
    }
    let rows: i64 = files.iter().map(|f| f.record_count).sum();
    if files.is_empty() {
        return Ok(0);
    }
    let env = PinnedSnapshot {
        inner: SystemEnvironment,
        snapshot_id,
        given: AtomicBool::new(false),
    };
    let paths: Vec<String> = files.iter().map(|f| f.file_path.clone()).collect();
    match commit_append(catalog, ident, files, BTreeMap::new(), &env).await {
        Ok(_) => Ok(u64::try_from(rows).unwrap_or(0)),
        Err(e) => {
            // Definitely not landed (the commit deleted its own manifests): the data files
            // are nobody's. Unknown: they may be in the table, so they stay.
            if !e.is_commit_state_unknown() {
                let io = catalog.table_io(&table);
                // Best effort: the commit's error is the one to report.
                let _ = io.delete_many(paths).await;
            }
            Err(e.into())
        }
    }
}

/// The system clock and UUIDs, with the snapshot id the plan fixed: given once (checked
/// absent just before), then fresh ones should the table hold it after all (the same plan
/// committed meanwhile), so the commit never waits on an id it cannot have.
#[derive(Debug)]
struct PinnedSnapshot {
    inner: SystemEnvironment,
    snapshot_id: i64,
    given: AtomicBool,
}

impl Environment for PinnedSnapshot {
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    fn new_uuid(&self) -> Uuid {
        self.inner.new_uuid()
    }

    fn new_snapshot_id(&self) -> i64 {
        if self.given.swap(true, Ordering::SeqCst) {
            self.inner.new_snapshot_id()
        } else {
            self.snapshot_id
        }
    }
}
