//! `iceberg quickstart`: a realistic sample table in three commits.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{SystemEnvironment, TableCreation, TableIdent, commit_append};
use iceberg_spec::{FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema, Transform};
use iceberg_write::{WriteOptions, write_data_files};
use rand::{Rng, SeedableRng};

use super::tree;
use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::error::Result;

const CATEGORIES: [&str; 8] = [
    "books", "games", "garden", "music", "outdoors", "toys", "tools", "travel",
];

fn events_schema() -> Result<Schema> {
    Ok(Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "user_id", PrimitiveType::Long),
            NestedField::optional(4, "category", PrimitiveType::String),
            NestedField::optional(5, "amount", PrimitiveType::Double),
            NestedField::optional(6, "qty", PrimitiveType::Int),
        ],
    )?)
}

/// One batch of sample events: ids from `first_id`, timestamps over 3 days, 2% null amounts.
fn sample(
    schema: &arrow_schema::SchemaRef,
    first_id: i64,
    rows: usize,
    seed: u64,
) -> Result<RecordBatch> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let start = 1_767_225_600_000_000i64; // 2026-01-01T00:00:00Z
    let ids: Vec<i64> = (0..rows as i64).map(|i| first_id + i).collect();
    let ts: Vec<i64> = (0..rows)
        .map(|_| start + rng.random_range(0..3 * 86_400_000_000i64))
        .collect();
    let users: Vec<i64> = (0..rows).map(|_| rng.random_range(0..10_000)).collect();
    let cats: Vec<&str> = (0..rows)
        .map(|_| CATEGORIES[rng.random_range(0..CATEGORIES.len())])
        .collect();
    let amounts: Vec<Option<f64>> = (0..rows)
        .map(|_| {
            (rng.random_range(0..50) != 0).then(|| (rng.random_range(100..100_000) as f64) / 100.0)
        })
        .collect();
    let qty: Vec<i32> = (0..rows).map(|_| rng.random_range(1..10)).collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("+00:00")),
        Arc::new(Int64Array::from(users)),
        Arc::new(StringArray::from(cats)),
        Arc::new(Float64Array::from(amounts)),
        Arc::new(Int32Array::from(qty)),
    ];
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// Creates (or continues) `demo.events` in the catalog (by default the warehouse's SQLite
/// catalog) and appends three batches.
///
/// # Errors
/// When the catalog cannot be opened or a write or commit fails.
pub(crate) async fn run(cli: &Cli, rows: usize) -> Result<()> {
    let open = OpenCatalog::open(cli, true).await?;
    let result = run_in(&open, rows, cli.json).await;
    open.close().await;
    result
}

async fn run_in(open: &OpenCatalog, rows: usize, json: bool) -> Result<()> {
    let catalog = open.catalog.as_ref();
    let env = SystemEnvironment;
    let demo = NamespaceIdent::parse("demo")
        .ok_or_else(|| crate::error::Error::Usage("bad namespace `demo`".into()))?;
    open.ensure_namespace(&demo).await?;
    let ident = TableIdent::new(demo, "events");
    let created = !catalog.table_exists(&ident).await?;
    let mut table = if !created {
        if !json {
            outln!("continuing table demo.events");
        }
        catalog.load_table(&ident).await?
    } else {
        let schema = events_schema()?;
        let mut creation = TableCreation::new("", schema.clone());
        creation.spec = PartitionSpec::builder(&schema)
            .add("ts", Transform::Day)?
            .build()?;
        creation.format_version = FormatVersion::V2;
        let t = catalog.create_table(&ident, creation).await?;
        if !json {
            outln!(
                "created table demo.events at {}, partitioned by day(ts)",
                t.metadata.location
            );
        }
        t
    };
    let io = catalog.io().clone();
    let arrow = Arc::new(iceberg_write::arrow_schema(
        table.metadata.current_schema()?,
    )?);
    let first_id = table
        .metadata
        .current_snapshot()
        .and_then(|s| s.summary.as_ref()?.get_i64("total-records"))
        .unwrap_or(0);
    let mut snapshots = Vec::new();
    for commit in 0..3u64 {
        let start = first_id + (commit as i64) * rows as i64;
        let batch = sample(&arrow, start, rows, first_id as u64 + commit)?;
        let started = std::time::Instant::now();
        let meta = &table.metadata;
        let options = WriteOptions::from_table_properties(&meta.properties)?;
        let files = write_data_files(
            &io,
            &meta.location,
            &[batch],
            meta.current_schema()?,
            meta.default_spec()?,
            None,
            &options,
        )
        .await?;
        let n_files = files.len();
        let done = commit_append(catalog, &ident, files, Default::default(), &env).await?;
        snapshots.push(done.snapshot_id);
        table = catalog.load_table(&ident).await?;
        if json {
            continue;
        }
        outln!(
            "append {}: snapshot {} added {} rows in {} files ({:.0} ms)",
            commit + 1,
            done.snapshot_id,
            done.added_records,
            n_files,
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    if json {
        let out = serde_json::json!({
            "table": ident.to_string(),
            "created": created,
            "location": table.metadata.location,
            "metadata_location": table.metadata_location,
            "snapshots": snapshots,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!();
    tree::print(&io, &table).await?;
    if let (true, Some(root)) = (open.is_default, &open.local_dir) {
        outln!("\nOpen it from PyIceberg:");
        outln!("  from pyiceberg.catalog.sql import SqlCatalog");
        outln!(
            "  catalog = SqlCatalog(\"default\", uri=\"sqlite:///{}/catalog.db\", warehouse=\"file://{}\")",
            root.display(),
            root.display()
        );
        outln!("  print(catalog.load_table(\"demo.events\").scan().to_arrow().num_rows)");
    }
    Ok(())
}
