//! What DataFusion SQL writes through `iceberg-datafusion-writer`, PyIceberg reads: the rows
//! of an `INSERT INTO ... SELECT` into a `day(ts)` table, in one snapshot, and the same rows
//! for the same filter as our `SELECT`.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::{SessionConfig, SessionContext};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::IcebergCatalogProvider;
use iceberg_testing::events::{self, DAY_MICROS, START_MICROS};

use crate::external;

const PYICEBERG_READS: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan
wh, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.events")
rows = t.scan().to_arrow()
day = t.scan(row_filter=And(GreaterThanOrEqual("ts", lo), LessThan("ts", hi))).to_arrow()
print(json.dumps({
    "rows": rows.num_rows,
    "ids": sum(rows.column("id").to_pylist()),
    "qty": sum(q for q in rows.column("qty").to_pylist() if q is not None),
    "day_rows": day.num_rows,
    "day_ids": sum(day.column("id").to_pylist()),
    "snapshots": len(t.snapshots()),
}))
"#;

async fn one_i64(ctx: &SessionContext, query: &str) -> i64 {
    let batches = ctx.sql(query).await.unwrap().collect().await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datafusion_insert_into_a_day_table_reads_the_same_in_pyiceberg() {
    let Some(python) =
        external::python("datafusion_insert_into_a_day_table_reads_the_same_in_pyiceberg")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let catalog = Arc::new(
        SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
            .await
            .unwrap(),
    );
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, BTreeMap::new())
        .await
        .unwrap();
    let schema = events::iceberg_schema().unwrap();
    let mut creation = TableCreation::new("", schema.clone());
    creation.spec = events::day_spec(&schema).unwrap();
    catalog
        .create_table(&TableIdent::new(db, "events"), creation)
        .await
        .unwrap();

    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    let provider = IcebergCatalogProvider::try_new(catalog.clone())
        .await
        .unwrap();
    ctx.register_catalog("iceberg", Arc::new(provider));
    let batches = events::generate(30_000).unwrap();
    ctx.register_batch(
        "raw",
        datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap(),
    )
    .unwrap();
    ctx.sql("INSERT INTO iceberg.db.events SELECT * FROM raw")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();

    let (lo, hi) = (START_MICROS + 5 * DAY_MICROS, START_MICROS + 7 * DAY_MICROS);
    let ours = (
        one_i64(&ctx, "SELECT count(*) FROM iceberg.db.events").await,
        one_i64(&ctx, "SELECT sum(id) FROM iceberg.db.events").await,
        one_i64(
            &ctx,
            "SELECT sum(CAST(qty AS BIGINT)) FROM iceberg.db.events",
        )
        .await,
        one_i64(
            &ctx,
            &format!(
                "SELECT count(*) FROM iceberg.db.events WHERE ts >= to_timestamp_micros({lo}) \
                 AND ts < to_timestamp_micros({hi})"
            ),
        )
        .await,
        one_i64(
            &ctx,
            &format!(
                "SELECT sum(id) FROM iceberg.db.events WHERE ts >= to_timestamp_micros({lo}) \
                 AND ts < to_timestamp_micros({hi})"
            ),
        )
        .await,
    );
    catalog.close().await;

    let theirs = external::run_json(
        &python,
        PYICEBERG_READS,
        &[
            &dir.path().display().to_string(),
            &lo.to_string(),
            &hi.to_string(),
        ],
    );
    assert_eq!(theirs["snapshots"], 1);
    assert_eq!(ours.0, 30_000);
    assert_eq!(theirs["rows"], ours.0);
    assert_eq!(theirs["ids"], ours.1);
    assert_eq!(theirs["qty"], ours.2);
    assert!(ours.3 > 0);
    assert_eq!(theirs["day_rows"], ours.3);
    assert_eq!(theirs["day_ids"], ours.4);
}
