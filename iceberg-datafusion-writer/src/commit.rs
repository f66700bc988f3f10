//! The commit node of an `INSERT INTO`: gathers the data file records of every write task
//! and appends them in one snapshot (fast or merge as the table's properties say), then
//! emits the row count DataFusion reports for DML.
//!
//! The snapshot id is fixed when the insert is planned, so the commit is idempotent: a
//! commit stage that runs again (a retried stage, a lost answer) finds its own snapshot in
//! the table and reports it instead of appending the rows twice.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

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
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    Catalog, Environment, SystemEnvironment, Table, TableIdent, commit_append,
    read_snapshot_manifests,
};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Snapshot};
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

    /// The catalog the table is in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// The table.
    pub fn ident(&self) -> &TableIdent {
        &self.ident
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
            // A failed input leaves the files of tasks that finished as orphans on purpose:
            // a distributed engine may run this stage again on the same saved output after
            // a fetch failure, and would then commit files deleted here.
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
    let paths: Vec<String> = files.iter().map(|f| f.file_path.clone()).collect();
    if table.metadata.snapshot_by_id(snapshot_id).is_some() {
        return landed_before(catalog, &table, snapshot_id, paths).await;
    }
    let rows: i64 = files.iter().map(|f| f.record_count).sum();
    if files.is_empty() {
        return Ok(0);
    }
    let env = PinnedSnapshot {
        inner: SystemEnvironment,
        snapshot_id,
    };
    match commit_append(catalog, ident, files, BTreeMap::new(), &env).await {
        Ok(_) => Ok(u64::try_from(rows).unwrap_or(0)),
        // May have landed: nothing of it is ours to delete.
        Err(e) if e.is_commit_state_unknown() => Err(e.into()),
        Err(e) => {
            // Not landed by this run (the commit deleted its own manifests). Another run of
            // the same commit may have landed it meanwhile (the append then fails as
            // `SnapshotAlreadyCommitted`): the files it shares with that run are the table's.
            let Ok(now) = catalog.load_table(ident).await else {
                return Err(e.into());
            };
            if now.metadata.snapshot_by_id(snapshot_id).is_some() {
                return landed_before(catalog, &now, snapshot_id, paths).await;
            }
            // Best effort: the commit's error is the one to report.
            let _ = catalog.table_io(&now).delete_many(paths).await;
            Err(e.into())
        }
    }
}

/// Snapshot `snapshot_id` landed in an earlier run of this commit: deletes the files this
/// run wrote that the snapshot does not hold (a rerun of the write stage writes new names;
/// a rerun of the commit stage alone brings the snapshot's own files, which stay), and
/// returns the rows the snapshot added.
async fn landed_before(
    catalog: &dyn Catalog,
    table: &Table,
    snapshot_id: i64,
    paths: Vec<String>,
) -> Result<u64, Error> {
    let Some(snapshot) = table.metadata.snapshot_by_id(snapshot_id) else {
        return Ok(0);
    };
    let added = snapshot
        .summary
        .as_ref()
        .and_then(|s| s.properties.get("added-records"))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let io = catalog.table_io(table);
    // What the snapshot cannot be shown not to hold stays.
    let Ok(held) = files_of(&io, snapshot).await else {
        return Ok(added);
    };
    let orphans: Vec<String> = paths.into_iter().filter(|p| !held.contains(p)).collect();
    io.delete_many(orphans).await?;
    Ok(added)
}

/// Every data file path a snapshot's manifests list, whatever the entry's status.
async fn files_of(io: &FileIo, snapshot: &Snapshot) -> Result<HashSet<String>, Error> {
    let mut held = HashSet::new();
    for m in read_snapshot_manifests(io, snapshot).await? {
        let bytes = io.read(&m.manifest_path).await?;
        let manifest = decode_manifest(&m.manifest_path, &bytes)?;
        held.extend(manifest.entries.into_iter().map(|e| e.data_file.file_path));
    }
    Ok(held)
}

/// The system clock and UUIDs, with the snapshot id the plan fixed: a table that already
/// holds it makes the append fail as already committed, never take another id.
#[derive(Debug)]
struct PinnedSnapshot {
    inner: SystemEnvironment,
    snapshot_id: i64,
}

impl Environment for PinnedSnapshot {
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    fn new_uuid(&self) -> Uuid {
        self.inner.new_uuid()
    }

    fn new_snapshot_id(&self) -> i64 {
        self.snapshot_id
    }

    fn fixed_snapshot_id(&self) -> bool {
        true
    }
}
