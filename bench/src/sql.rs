//! DataFusion `INSERT INTO` a `day(ts)` table (issue 22) against our CLI on the same rows:
//! one zstd(3) Parquet file of the events data set, appended in process through
//! `iceberg-datafusion-writer` (DataFusion splits the file into one scan partition per core,
//! each feeding a writer) and by the release `iceberg append --create --partition 'day(ts)'`.
//! Wall time, CPU time over wall (2.0 = both cores busy), files and peak RSS of each.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::UInt64Type;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::IcebergCatalogProvider;
use iceberg_testing::events;

use crate::cli_append::{AppendRun, append, write_input};
use crate::measure::{count_files, measure, mib};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the run needs.
pub(crate) struct SqlArgs {
    pub(crate) rows: usize,
    pub(crate) work_dir: PathBuf,
    /// The release `iceberg` binary (its run is skipped when it is missing).
    pub(crate) binary: PathBuf,
}

pub(crate) async fn run(args: &SqlArgs) -> Result<(), BoxError> {
    let dir = args.work_dir.join("sql-insert");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let input = dir.join("events.parquet");
    write_input(&input, args.rows)?;
    println!(
        "{} events in one {:.1} MiB Parquet file, into a new `day(ts)` table:\n",
        args.rows,
        mib(std::fs::metadata(&input)?.len())
    );
    println!("| writer | wall s | CPU / wall | data files | peak RSS MiB |");
    println!("|---|---|---|---|---|");

    let warehouse = dir.join("df");
    std::fs::create_dir_all(&warehouse)?;
    let catalog = Arc::new(SqlCatalog::connect(SqlCatalogConfig::local(&warehouse)).await?);
    let db = NamespaceIdent::parse("bench").ok_or("namespace")?;
    catalog.create_namespace(&db, Default::default()).await?;
    let schema = events::iceberg_schema()?;
    let mut creation = TableCreation::new("", schema.clone());
    creation.spec = events::day_spec(&schema)?;
    catalog
        .create_table(&TableIdent::new(db, "events"), creation)
        .await?;
    let ctx = SessionContext::new();
    ctx.register_catalog(
        "iceberg",
        Arc::new(IcebergCatalogProvider::try_new(catalog.clone()).await?),
    );
    ctx.register_parquet(
        "raw",
        &input.display().to_string(),
        ParquetReadOptions::default(),
    )
    .await?;
    let started = Instant::now();
    let (rows, sample) = measure(async {
        let out = ctx
            .sql("INSERT INTO iceberg.bench.events SELECT * FROM raw")
            .await?
            .collect()
            .await?;
        Ok::<_, BoxError>(out[0].column(0).as_primitive::<UInt64Type>().value(0))
    })
    .await?;
    let wall = started.elapsed();
    if usize::try_from(rows)? != args.rows {
        return Err(format!("INSERT INTO wrote {rows} rows, not {}", args.rows).into());
    }
    let files = count_files(&warehouse, |n| n.ends_with(".parquet"))?;
    println!(
        "| DataFusion `INSERT INTO` ({} partitions) | {:.2} | {} | {files} | {} |",
        ctx.state().config().target_partitions(),
        wall.as_secs_f64(),
        sample
            .cpu_util
            .map_or_else(|| "n/a".into(), |c| format!("{c:.2}")),
        sample
            .peak_rss
            .map_or_else(|| "n/a".into(), |p| format!("{:.0}", mib(p)))
    );
    catalog.close().await;

    if args.binary.exists() {
        let AppendRun {
            wall,
            peak,
            cpu,
            report,
        } = append(&args.binary, &dir, &input, &[])?;
        println!(
            "| `iceberg append` (CLI) | {:.2} | {} | {} | {} |",
            wall.as_secs_f64(),
            cpu.map_or_else(
                || "n/a".into(),
                |c| format!("{:.2}", c / wall.as_secs_f64())
            ),
            report["added_data_files"],
            peak.map_or_else(|| "n/a".into(), |p| format!("{:.0}", mib(p)))
        );
    } else {
        println!(
            "| `iceberg append` (CLI) | skipped: {} not built | | | |",
            args.binary.display()
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
