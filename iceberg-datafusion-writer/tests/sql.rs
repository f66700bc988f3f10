//! SQL over Iceberg tables in DataFusion: `INSERT INTO ... SELECT` writes on every input
//! partition and lands one snapshot, `SELECT` reads what was written (renamed and added
//! columns by field id) and skips files by their bounds, a commit that runs twice lands once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::UInt64Type;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext, col, lit};
use datafusion::scalar::ScalarValue;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::update::TableUpdate;
use iceberg_append::{Catalog, SystemEnvironment, TableCreation, TableIdent, commit_table_update};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::IcebergTableProvider;
use iceberg_datafusion_writer::commit::IcebergCommitExec;
use iceberg_datafusion_writer::scan::plan_files;
use iceberg_datafusion_writer::write::data_file_schema;
use iceberg_spec::evolution::UpdateSchema;
use iceberg_spec::{NestedField, PrimitiveType, Schema, Type};
use iceberg_testing::events::{DAY_MICROS, START_MICROS};

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_writes_every_partition_in_one_snapshot_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ctx, batches) = events_table(dir.path(), 40_000, 4).await;

    let inserted = scalar(&ctx, "INSERT INTO iceberg.db.events SELECT * FROM raw").await;
    assert_eq!(inserted, 40_000);

    // One snapshot, whose files came from several write partitions at once.
    let table = catalog.load_table(&ident("events")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    let io = catalog.table_io(&table);
    let all = plan_files(&io, "db.events", &table.metadata, &columns(&table), &[])
        .await
        .unwrap();
    let writers: BTreeSet<&str> = all
        .files
        .iter()
        .map(|f| {
            f.file_path
                .rsplit('/')
                .next()
                .unwrap()
                .split('-')
                .next()
                .unwrap()
        })
        .collect();
    assert!(
        writers.len() > 1,
        "one write partition wrote everything: {writers:?}"
    );
    // The input reaches the writers hash-partitioned by day: one file per day, not one per
    // day and writer.
    let days: BTreeSet<String> = all
        .files
        .iter()
        .map(|f| format!("{:?}", f.partition))
        .collect();
    assert_eq!(days.len(), 30);
    assert_eq!(all.files.len(), days.len(), "files per day");
    assert!(
        all.files
            .iter()
            .all(|f| f.file_path.contains(&format!("pid{}", std::process::id())))
    );

    // Every row reads back, and a filter on one day reads that day's files only.
    assert_eq!(
        scalar(&ctx, "SELECT count(*) FROM iceberg.db.events").await,
        40_000
    );
    let qty: i64 = batches
        .iter()
        .map(|b| {
            b.column_by_name("qty")
                .unwrap()
                .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                .iter()
                .map(|v| i64::from(v.unwrap()))
                .sum::<i64>()
        })
        .sum();
    assert_eq!(
        scalar(
            &ctx,
            "SELECT sum(CAST(qty AS BIGINT)) FROM iceberg.db.events"
        )
        .await,
        qty
    );
    let (lo, hi) = (START_MICROS + 3 * DAY_MICROS, START_MICROS + 4 * DAY_MICROS);
    let on_day = count_ts(&batches, |t| (lo..hi).contains(&t));
    assert!(on_day > 0);
    let query = format!(
        "SELECT count(*) FROM iceberg.db.events WHERE ts >= to_timestamp_micros({lo}) \
         AND ts < to_timestamp_micros({hi})"
    );
    assert_eq!(scalar(&ctx, &query).await, on_day);
    // A date string compares as a timestamp, as in the README.
    let from_jan_3 = count_ts(&batches, |t| t >= START_MICROS + 2 * DAY_MICROS);
    let query = "SELECT count(*) FROM iceberg.db.events WHERE ts >= '2024-01-03'";
    assert_eq!(scalar(&ctx, query).await, from_jan_3);
    let ts = |v: i64| {
        lit(ScalarValue::TimestampMicrosecond(
            Some(v),
            Some("UTC".into()),
        ))
    };
    let filters = [col("ts").gt_eq(ts(lo)), col("ts").lt(ts(hi))];
    let pruned = plan_files(
        &io,
        "db.events",
        &table.metadata,
        &columns(&table),
        &filters,
    )
    .await
    .unwrap();
    assert_eq!(pruned.files.len() + pruned.skipped, all.files.len());
    assert!(!pruned.files.is_empty() && pruned.skipped > 0, "{pruned:?}");
    let day = (lo / DAY_MICROS) as i32;
    for f in &pruned.files {
        assert_eq!(
            f.partition.first(),
            Some(&Some(iceberg_spec::Datum::Date(day))),
            "{}",
            f.file_path
        );
    }
}

#[tokio::test]
async fn manifests_of_other_days_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ctx, batches) = events_table(dir.path(), 20_000, 1).await;
    // Two appends, two manifests: days 0-9, then days 20-29.
    let day = |d: i64| START_MICROS + d * DAY_MICROS;
    for (from, to) in [(0, 10), (20, 30)] {
        let insert = format!(
            "INSERT INTO iceberg.db.events SELECT * FROM raw \
             WHERE ts >= to_timestamp_micros({}) AND ts < to_timestamp_micros({})",
            day(from),
            day(to)
        );
        sql(&ctx, &insert).await;
    }
    let table = catalog.load_table(&ident("events")).await.unwrap();
    let io = catalog.table_io(&table);
    let ts = |v: i64| {
        lit(ScalarValue::TimestampMicrosecond(
            Some(v),
            Some("UTC".into()),
        ))
    };
    let filters = [col("ts").gt_eq(ts(day(25) + 1))];
    let scan = plan_files(
        &io,
        "db.events",
        &table.metadata,
        &columns(&table),
        &filters,
    )
    .await
    .unwrap();
    assert_eq!(scan.skipped_manifests, 1, "{scan:?}");
    // Days 25 to 29 are read, one file each.
    assert_eq!(scan.files.len() + scan.skipped, 10);
    assert_eq!(scan.files.len(), 5);
    let expected = count_ts(&batches, |t| t > day(25) && t < day(30));
    let query = format!(
        "SELECT count(*) FROM iceberg.db.events WHERE ts >= to_timestamp_micros({})",
        day(25) + 1
    );
    assert_eq!(scalar(&ctx, &query).await, expected);
}

#[tokio::test]
async fn renamed_and_added_columns_read_by_field_id() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[("name", PrimitiveType::String)]).await;
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (1, 'a'), (2, 'b')").await;

    // `name` becomes `label`, and a new `name` (another field id, a long) is added.
    rename_and_readd(&catalog, "name", "label").await;

    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (3, 'c', 7)").await;
    let rows = sql(&ctx, "SELECT id, label, name FROM iceberg.db.t ORDER BY id").await;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&rows)
        .unwrap()
        .to_string();
    let expected = "\
+----+-------+------+
| id | label | name |
+----+-------+------+
| 1  | a     |      |
| 2  | b     |      |
| 3  | c     | 7    |
+----+-------+------+";
    assert_eq!(text, expected);
}

/// Renames `from` to `to`, then adds a new optional long `from` (another field id).
async fn rename_and_readd(catalog: &SqlCatalog, from: &str, to: &str) {
    for step in 0..2 {
        let meta = catalog.load_table(&ident("t")).await.unwrap().metadata;
        let mut update = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
        if step == 0 {
            update.rename_column(from, to).unwrap();
        } else {
            let long = Type::Primitive(PrimitiveType::Long);
            update.add_column(None, from, long, None).unwrap();
        }
        let change = TableUpdate::new().with_schema(&meta, update.apply().unwrap());
        commit_table_update(catalog, &ident("t"), &change, &SystemEnvironment)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_provider_made_before_a_rename_filters_by_field_id_and_refuses_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[("v", PrimitiveType::Long)]).await;
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (1, 10), (2, 20)").await;
    // A provider made now sees `v` as field 2.
    let stale = IcebergTableProvider::try_new(catalog.clone(), ident("t"))
        .await
        .unwrap();
    let old = SessionContext::new();
    old.register_table("t", Arc::new(stale)).unwrap();

    // `v` becomes `w`, a new `v` (field 3) is added, and a row lands with w = 30, v = 300.
    rename_and_readd(&catalog, "v", "w").await;
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (3, 30, 300)").await;

    // Through the old provider `v = 30` is field 2: row 3, found although the new `v` of its
    // file (300) would rule the file out by name.
    assert_eq!(scalar(&old, "SELECT sum(id) FROM t WHERE v = 30").await, 3);
    assert_eq!(scalar(&old, "SELECT sum(id) FROM t WHERE v >= 20").await, 5);
    let err = match old.sql("INSERT INTO t VALUES (4, 40)").await {
        Ok(df) => df.collect().await.unwrap_err(),
        Err(e) => e,
    };
    assert!(err.to_string().contains("load the table again"), "{err}");
    let table = catalog.load_table(&ident("t")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 2);
}

#[tokio::test]
async fn a_column_added_with_a_default_reads_it_in_older_files() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    let mut creation = TableCreation::new("", schema);
    creation.format_version = iceberg_spec::FormatVersion::V3;
    catalog.create_table(&ident("t"), creation).await.unwrap();
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (1), (2)").await;
    let meta = catalog.load_table(&ident("t")).await.unwrap().metadata;
    let mut update = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    update
        .add_required_column(
            None,
            "flag",
            PrimitiveType::Long,
            serde_json::json!(7),
            None,
        )
        .unwrap();
    let change = TableUpdate::new().with_schema(&meta, update.apply().unwrap());
    commit_table_update(catalog.as_ref(), &ident("t"), &change, &SystemEnvironment)
        .await
        .unwrap();
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (3, 9)").await;
    // Left out of an insert, the column gets its write-default (the spec's rule), not NULL.
    sql(&ctx, "INSERT INTO iceberg.db.t (id) VALUES (4)").await;
    assert_eq!(
        scalar(&ctx, "SELECT sum(flag) FROM iceberg.db.t").await,
        7 + 7 + 9 + 7
    );
    assert_eq!(
        scalar(&ctx, "SELECT count(*) FROM iceberg.db.t WHERE flag = 7").await,
        3
    );
}

#[tokio::test]
async fn an_insert_plan_run_twice_commits_once_and_leaves_no_files_behind() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[]).await;
    let ctx = session(catalog.clone(), 2).await;
    let plan = ctx
        .sql("INSERT INTO iceberg.db.t VALUES (1), (2), (3)")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    for _ in 0..2 {
        let out = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
        assert_eq!(out[0].column(0).as_primitive::<UInt64Type>().value(0), 3);
    }
    let table = catalog.load_table(&ident("t")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    assert_eq!(scalar(&ctx, "SELECT count(*) FROM iceberg.db.t").await, 3);
    // The second run's files were deleted: only the snapshot's are under data/.
    let data = dir.path().join("db/t/data");
    let on_disk = std::fs::read_dir(&data).map(|d| d.count()).unwrap_or(0);
    let io = catalog.table_io(&table);
    let live = plan_files(&io, "db.t", &table.metadata, &columns(&table), &[])
        .await
        .unwrap();
    assert_eq!(on_disk, live.files.len(), "files under {}", data.display());
}

#[tokio::test]
async fn a_commit_stage_run_again_on_the_same_files_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[]).await;
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (1), (2), (3)").await;
    let table = catalog.load_table(&ident("t")).await.unwrap();
    let snapshot_id = table.metadata.current_snapshot_id.unwrap();
    // What the write stage handed the commit stage, handed to it again (a distributed
    // engine retrying the commit stage on the write stage's saved output).
    let io = catalog.table_io(&table);
    let files = plan_files(&io, "db.t", &table.metadata, &columns(&table), &[])
        .await
        .unwrap()
        .files;
    let json: Vec<String> = files
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect();
    let column: ArrayRef = Arc::new(StringArray::from(json));
    let batch = RecordBatch::try_new(data_file_schema(), vec![column]).unwrap();
    let input = MemorySourceConfig::try_new_exec(&[vec![batch]], data_file_schema(), None).unwrap();
    let shared: Arc<dyn Catalog> = catalog.clone();
    let commit = Arc::new(IcebergCommitExec::new(
        input,
        shared,
        ident("t"),
        snapshot_id,
    ));
    let out = collect(commit, ctx.task_ctx()).await.unwrap();
    assert_eq!(out[0].column(0).as_primitive::<UInt64Type>().value(0), 3);
    let table = catalog.load_table(&ident("t")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    for f in &files {
        assert!(
            io.exists(&f.file_path).await.unwrap(),
            "{} was deleted",
            f.file_path
        );
    }
    assert_eq!(scalar(&ctx, "SELECT count(*) FROM iceberg.db.t").await, 3);
}

#[tokio::test]
async fn overwrite_is_refused_and_the_table_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[]).await;
    let provider = IcebergTableProvider::try_new(catalog.clone(), ident("t"))
        .await
        .unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider)).unwrap();
    let err = match ctx.sql("INSERT OVERWRITE t VALUES (1)").await {
        Ok(df) => df.collect().await.unwrap_err(),
        Err(e) => e,
    };
    assert!(err.to_string().contains("only appends"), "{err}");
    let table = catalog.load_table(&ident("t")).await.unwrap();
    assert!(table.metadata.snapshots.is_empty());
}

#[tokio::test]
async fn a_required_column_given_nulls_fails_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[("v", PrimitiveType::Long)]).await;
    let ctx = session(catalog.clone(), 2).await;
    let result = match ctx
        .sql("INSERT INTO iceberg.db.t VALUES (1, 1), (NULL, 2)")
        .await
    {
        Ok(df) => df.collect().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert!(result.is_err());
    let table = catalog.load_table(&ident("t")).await.unwrap();
    assert!(table.metadata.snapshots.is_empty());
    let data = dir.path().join("db/t/data");
    let left = iceberg_testing::files_under(&data);
    assert!(left.is_empty(), "{left:?}");
}

/// Every swap is refused: the pointer always moved.
#[derive(Debug)]
struct AlwaysConflicts;

#[async_trait::async_trait]
impl CommitInterceptor<SqlCatalog> for AlwaysConflicts {
    async fn commit(
        &self,
        _inner: &SqlCatalog,
        ident: &TableIdent,
        base: &str,
        _new: &iceberg_spec::TableMetadata,
    ) -> iceberg_append::Result<String> {
        Err(iceberg_append::Error::CommitConflict {
            table: ident.to_string(),
            expected: Some(base.to_string()),
            found: None,
        })
    }
}

#[tokio::test]
async fn an_insert_whose_commit_fails_deletes_the_files_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let sql_catalog = catalog(dir.path()).await;
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    let mut creation = TableCreation::new("", schema);
    creation
        .properties
        .insert("commit.retry.num-retries".into(), "0".into());
    sql_catalog
        .create_table(&ident("t"), creation)
        .await
        .unwrap();
    let inner = SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
        .await
        .unwrap();
    let failing: Arc<dyn Catalog> = Arc::new(InterceptingCatalog::new(inner, AlwaysConflicts));
    let provider = IcebergTableProvider::try_new(failing, ident("t"))
        .await
        .unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    ctx.register_table("t", Arc::new(provider)).unwrap();
    let err = ctx
        .sql("INSERT INTO t VALUES (1), (2), (3), (4)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("conflict"), "{err}");
    let table = sql_catalog.load_table(&ident("t")).await.unwrap();
    assert!(table.metadata.snapshots.is_empty());
    let left = iceberg_testing::files_under(&dir.path().join("db/t/data"));
    assert!(left.is_empty(), "{left:?}");
}

/// A data file Java wrote as ORC (`write.format.default=orc`) is refused by name with a
/// typed error, not read as Parquet; a query whose bounds skip it still runs.
#[tokio::test]
async fn a_data_file_that_is_not_parquet_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    create_t(&catalog, &[]).await;
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t VALUES (1), (2), (3)").await;
    let table = catalog.load_table(&ident("t")).await.unwrap();
    let orc = iceberg_spec::DataFile {
        file_path: format!("{}/data/java.orc", table.metadata.location),
        file_format: iceberg_spec::FileFormat::Orc,
        record_count: 1,
        file_size_in_bytes: 10,
        lower_bounds: [(1, 100i64.to_le_bytes().to_vec())].into(),
        upper_bounds: [(1, 100i64.to_le_bytes().to_vec())].into(),
        ..Default::default()
    };
    iceberg_append::commit_append(
        catalog.as_ref(),
        &ident("t"),
        vec![orc],
        Default::default(),
        &SystemEnvironment,
    )
    .await
    .unwrap();
    let table = catalog.load_table(&ident("t")).await.unwrap();
    let io = catalog.table_io(&table);
    let err = plan_files(&io, "db.t", &table.metadata, &columns(&table), &[])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, iceberg_datafusion_writer::Error::FormatNotSupported { path, format, .. }
            if path.ends_with("java.orc") && format == "ORC"),
        "{err}"
    );
    let ctx = session(catalog.clone(), 2).await;
    assert_eq!(
        scalar(&ctx, "SELECT count(*) FROM iceberg.db.t WHERE id < 50").await,
        3
    );
}

/// A field added inside a struct with a default: DataFusion's struct cast would read files
/// written before it as null (or refuse a required one), so a scan is refused by name
/// instead of answering `point.z = 7` with no rows.
#[tokio::test]
async fn a_nested_field_with_a_default_is_refused_by_scans() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    let point =
        iceberg_spec::StructType::new(vec![NestedField::optional(3, "x", PrimitiveType::Long)]);
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "point", Type::Struct(point)),
        ],
    )
    .unwrap();
    let mut creation = TableCreation::new("", schema);
    creation.format_version = iceberg_spec::FormatVersion::V3;
    catalog.create_table(&ident("t"), creation).await.unwrap();
    let ctx = session(catalog.clone(), 2).await;
    sql(&ctx, "INSERT INTO iceberg.db.t (id) VALUES (1), (2)").await;
    let meta = catalog.load_table(&ident("t")).await.unwrap().metadata;
    let mut update = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    update
        .add_required_column(
            Some("point"),
            "z",
            PrimitiveType::Long,
            serde_json::json!(7),
            None,
        )
        .unwrap();
    let change = TableUpdate::new().with_schema(&meta, update.apply().unwrap());
    commit_table_update(catalog.as_ref(), &ident("t"), &change, &SystemEnvironment)
        .await
        .unwrap();
    let ctx = session(catalog.clone(), 2).await;
    let err = ctx
        .sql("SELECT count(*) FROM iceberg.db.t WHERE point.z = 7")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("point.z"), "{err}");
}
