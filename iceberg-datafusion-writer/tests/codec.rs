//! Plans that travel: an `INSERT INTO` and a filtered `SELECT` planned in one session,
//! encoded with our codecs, decoded and run in another session that holds no table, no
//! catalog provider and no object store, only its own connection to the same catalog
//! under the same name (as a Ballista executor does).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties, collect, displayable};
use datafusion::prelude::SessionContext;
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use futures::TryStreamExt;
use iceberg_append::Catalog;
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::scan::plan_files;
use iceberg_datafusion_writer::{CatalogRegistry, IcebergLogicalCodec, IcebergPhysicalCodec};
use iceberg_testing::events::{DAY_MICROS, START_MICROS};

use common::*;

/// Another process's view: its own connection to the catalog in `dir`, named `lake`.
async fn elsewhere(dir: &std::path::Path) -> (CatalogRegistry, SessionContext) {
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir))
        .await
        .unwrap();
    let registry = CatalogRegistry::new().with_catalog("lake", Arc::new(catalog));
    (registry, SessionContext::new())
}

/// `plan` encoded here.
fn encode(plan: Arc<dyn ExecutionPlan>, here: &CatalogRegistry) -> Vec<u8> {
    let codec = IcebergPhysicalCodec::new(here.clone());
    physical_plan_to_bytes_with_extension_codec(plan, &codec)
        .unwrap()
        .to_vec()
}

/// `bytes` decoded in `ctx` with `registry`.
fn decode(
    bytes: &[u8],
    registry: &CatalogRegistry,
    ctx: &SessionContext,
) -> Arc<dyn ExecutionPlan> {
    let codec = IcebergPhysicalCodec::new(registry.clone());
    physical_plan_from_bytes_with_extension_codec(bytes, &ctx.task_ctx(), &codec).unwrap()
}

fn count_of(batches: &[datafusion::arrow::array::RecordBatch]) -> i64 {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::{Int64Type, UInt64Type};
    let column = batches[0].column(0);
    match column.as_primitive_opt::<Int64Type>() {
        Some(a) => a.value(0),
        None => i64::try_from(column.as_primitive::<UInt64Type>().value(0)).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_and_select_plans_run_in_another_session_by_description() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ctx, batches) = events_table(dir.path(), 20_000, 4).await;
    let here = CatalogRegistry::new().with_catalog("lake", catalog.clone() as Arc<dyn Catalog>);
    let (registry, remote) = elsewhere(dir.path()).await;

    // INSERT: planned here, run there.
    let insert = ctx
        .sql("INSERT INTO iceberg.db.events SELECT * FROM raw")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let bytes = encode(insert, &here);
    let shipped = decode(&bytes, &registry, &remote);
    let shown = displayable(shipped.as_ref()).indent(false).to_string();
    assert!(shown.contains("IcebergCommitExec"), "{shown}");
    assert!(shown.contains("iceberg_partition_key"), "{shown}");
    let count = count_of(&collect(shipped, remote.task_ctx()).await.unwrap());
    assert_eq!(count, 20_000);
    let table = catalog.load_table(&ident("events")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    let io = catalog.table_io(&table);
    let files = plan_files(&io, "db.events", &table.metadata, &columns(&table), &[])
        .await
        .unwrap();
    // Hash-partitioned by day there too: one file per day.
    assert_eq!(files.files.len(), 30, "{shown}");

    // The shipped plan run again (a retried job) lands nothing more and leaves no file.
    let again = decode(&bytes, &registry, &remote);
    let again = count_of(&collect(again, remote.task_ctx()).await.unwrap());
    assert_eq!(again, 20_000);
    let table = catalog.load_table(&ident("events")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    let parquet = iceberg_testing::files_under(&dir.path().join("db").join("events"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .count();
    assert_eq!(parquet, 30);

    // SELECT with a filter: planned (and pruned) here, read there.
    let (lo, hi) = (START_MICROS + 3 * DAY_MICROS, START_MICROS + 4 * DAY_MICROS);
    let query = format!(
        "SELECT count(*) FROM iceberg.db.events WHERE ts >= to_timestamp_micros({lo}) \
         AND ts < to_timestamp_micros({hi})"
    );
    let select = ctx
        .sql(&query)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shipped = decode(&encode(select, &here), &registry, &remote);
    let shown = displayable(shipped.as_ref()).indent(false).to_string();
    assert!(
        shown.contains("IcebergScanExec: table=db.events, partitions=1,"),
        "{shown}"
    );
    let on_day = count_ts(&batches, |t| (lo..hi).contains(&t));
    assert!(on_day > 0);
    assert_eq!(
        count_of(&collect(shipped, remote.task_ctx()).await.unwrap()),
        on_day
    );

    // Each partition run alone in its own copy of the plan (a distributed task) reads its
    // own files only: together they read every row once.
    let scan = ctx
        .sql("SELECT id FROM iceberg.db.events")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let partitions = scan.output_partitioning().partition_count();
    assert!(partitions > 1, "{partitions}");
    let bytes = encode(scan, &here);
    let mut rows = 0;
    for p in 0..partitions {
        let task = decode(&bytes, &registry, &remote);
        let stream = task.execute(p, remote.task_ctx()).unwrap();
        let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap();
        rows += batches.iter().map(RecordBatch::num_rows).sum::<usize>();
    }
    assert_eq!(rows, 20_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logical_insert_is_planned_where_it_is_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ctx, _) = events_table(dir.path(), 5_000, 2).await;
    let here = CatalogRegistry::new().with_catalog("lake", catalog.clone() as Arc<dyn Catalog>);
    let (registry, remote) = elsewhere(dir.path()).await;

    // As a Ballista client sends it: the logical plan, its table by description.
    let insert = ctx
        .sql("INSERT INTO iceberg.db.events SELECT * FROM raw WHERE qty > 0")
        .await
        .unwrap()
        .into_unoptimized_plan();
    let bytes =
        logical_plan_to_bytes_with_extension_codec(&insert, &IcebergLogicalCodec::new(here))
            .unwrap();
    let codec = IcebergLogicalCodec::new(registry);
    let decoded =
        logical_plan_from_bytes_with_extension_codec(&bytes, &remote.task_ctx(), &codec).unwrap();
    let rows = remote
        .execute_logical_plan(decoded)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let expected = scalar(&ctx, "SELECT count(*) FROM raw WHERE qty > 0").await;
    assert_eq!(count_of(&rows), expected);
    let table = catalog.load_table(&ident("events")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    assert_eq!(
        scalar(&ctx, "SELECT count(*) FROM iceberg.db.events").await,
        expected
    );
}

#[tokio::test]
async fn a_catalog_missing_from_the_registry_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ctx, _) = events_table(dir.path(), 100, 1).await;
    let insert = ctx
        .sql("INSERT INTO iceberg.db.events SELECT * FROM raw")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    // Not registered where the plan is encoded.
    let err = physical_plan_to_bytes_with_extension_codec(
        insert.clone(),
        &IcebergPhysicalCodec::new(CatalogRegistry::new()),
    )
    .unwrap_err();
    assert!(err.to_string().contains("db.events"), "{err}");
    // Registered under another name where it is decoded.
    let here = CatalogRegistry::new().with_catalog("lake", catalog as Arc<dyn Catalog>);
    let bytes =
        physical_plan_to_bytes_with_extension_codec(insert, &IcebergPhysicalCodec::new(here))
            .unwrap();
    let (registry, remote) = elsewhere(dir.path()).await;
    let _ = registry;
    let other = CatalogRegistry::new().with_catalog(
        "warehouse",
        Arc::new(
            SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
                .await
                .unwrap(),
        ),
    );
    let err = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &remote.task_ctx(),
        &IcebergPhysicalCodec::new(other),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("catalog lake") && message.contains("warehouse"),
        "{message}"
    );
}
