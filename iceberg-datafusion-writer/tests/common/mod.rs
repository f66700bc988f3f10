//! What the SQL tests share: a SQLite catalog with namespace `db`, sessions, raw Parquet
//! input, the `day(ts)` events table.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Int64Type, TimestampMicrosecondType, UInt64Type};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::{CatalogRegistry, register_catalogs};
use iceberg_spec::{NestedField, PrimitiveType, Schema};
use iceberg_testing::events;

pub(crate) const DB: &str = "db";

/// The table's current columns as DataFusion sees them.
pub(crate) fn columns(table: &iceberg_append::Table) -> datafusion::arrow::datatypes::Schema {
    iceberg_write::arrow_schema(table.metadata.current_schema().unwrap()).unwrap()
}

/// A SQLite catalog in `dir` with namespace `db`.
pub(crate) async fn catalog(dir: &std::path::Path) -> Arc<SqlCatalog> {
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir))
        .await
        .unwrap();
    let db = NamespaceIdent::parse(DB).unwrap();
    catalog
        .create_namespace(&db, Default::default())
        .await
        .unwrap();
    Arc::new(catalog)
}

pub(crate) fn ident(name: &str) -> TableIdent {
    TableIdent::new(NamespaceIdent::parse(DB).unwrap(), name)
}

/// Creates the unpartitioned table `db.t`: a required long `id`, then the optional columns
/// `optional`.
pub(crate) async fn create_t(catalog: &SqlCatalog, optional: &[(&str, PrimitiveType)]) {
    let mut fields = vec![NestedField::required(1, "id", PrimitiveType::Long)];
    for (i, (name, ty)) in optional.iter().enumerate() {
        fields.push(NestedField::optional(i as i32 + 2, *name, ty.clone()));
    }
    let schema = Schema::new(0, fields).unwrap();
    catalog
        .create_table(&ident("t"), TableCreation::new("", schema))
        .await
        .unwrap();
}

/// A session with `partitions` target partitions and `catalog` as `iceberg` (and
/// `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` in it).
pub(crate) async fn session(catalog: Arc<SqlCatalog>, partitions: usize) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(partitions);
    let ctx = SessionContext::new_with_config(config);
    let registry = CatalogRegistry::new().with_catalog("iceberg", catalog as Arc<dyn Catalog>);
    register_catalogs(&ctx, &registry).await.unwrap();
    ctx
}

pub(crate) async fn sql(ctx: &SessionContext, query: &str) -> Vec<RecordBatch> {
    ctx.sql(query).await.unwrap().collect().await.unwrap()
}

/// The single i64 (or u64) value of a one-row, one-column answer.
pub(crate) async fn scalar(ctx: &SessionContext, query: &str) -> i64 {
    let batches = sql(ctx, query).await;
    let column = batches[0].column(0);
    match column.as_primitive_opt::<Int64Type>() {
        Some(a) => a.value(0),
        None => i64::try_from(column.as_primitive::<UInt64Type>().value(0)).unwrap(),
    }
}

/// How many rows of `batches` have a `ts` that `keep` keeps.
pub(crate) fn count_ts(batches: &[RecordBatch], keep: impl Fn(i64) -> bool) -> i64 {
    let rows = batches.iter().map(|b| {
        let ts = b.column_by_name("ts").unwrap();
        let ts = ts.as_primitive::<TimestampMicrosecondType>();
        ts.iter().flatten().filter(|t| keep(*t)).count()
    });
    i64::try_from(rows.sum::<usize>()).unwrap()
}

/// `rows` events written as `files` plain Parquet files under `dir/raw`.
pub(crate) fn raw_events(
    dir: &std::path::Path,
    rows: usize,
    files: usize,
) -> (String, Vec<RecordBatch>) {
    let raw = dir.join("raw");
    std::fs::create_dir_all(&raw).unwrap();
    let batches: Vec<RecordBatch> = events::generate(rows)
        .unwrap()
        .iter()
        .flat_map(|b| {
            let step = b.num_rows().div_ceil(files);
            (0..files).map(move |i| b.slice(i * step, step.min(b.num_rows() - i * step)))
        })
        .collect();
    for (i, batch) in batches.iter().enumerate() {
        let file = std::fs::File::create(raw.join(format!("part-{i}.parquet"))).unwrap();
        let mut w = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
    }
    (format!("{}/", raw.display()), batches)
}

/// The empty `day(ts)` table `db.events` in `dir`, and a session with `files` target
/// partitions where `raw` is `rows` events in `files` Parquet files.
pub(crate) async fn events_table(
    dir: &std::path::Path,
    rows: usize,
    files: usize,
) -> (Arc<SqlCatalog>, SessionContext, Vec<RecordBatch>) {
    let catalog = catalog(dir).await;
    let schema = events::iceberg_schema().unwrap();
    let mut creation = TableCreation::new("", schema.clone());
    creation.spec = events::day_spec(&schema).unwrap();
    catalog
        .create_table(&ident("events"), creation)
        .await
        .unwrap();
    let (raw, batches) = raw_events(dir, rows, files);
    let ctx = session(catalog.clone(), files.max(2)).await;
    ctx.register_parquet("raw", &raw, ParquetReadOptions::default())
        .await
        .unwrap();
    (catalog, ctx, batches)
}
