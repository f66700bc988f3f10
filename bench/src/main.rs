//! `iceberg-bench`: the end-to-end benchmarks behind BENCHMARKS.md (`cargo xtask bench`).
//!
//! - `write`: the write matrix: the events data set of issue 4 written unpartitioned, by
//!   `day(ts)` and by `bucket(1000, user_id)`, by plain parquet `ArrowWriter` (the floor),
//!   ours (all cores and one), pyarrow, PyIceberg and iceberg-rust, each run a process of
//!   its own, interleaved, medians, CPU and peak RSS, ratios against ours (`write.rs`).
//! - `commit`: commit latency after 1, 100 and 1,000 prior appends (fast and merge append),
//!   and one commit of 100,000 data files (issue 5).
//! - `append-cli`: the release `iceberg append` of the events as one Parquet file, with its
//!   peak memory (issue 7).
//! - `maintenance`: a streaming table of many small fast appends, then compaction, manifest
//!   rewrite and expiry: files, manifests, metadata size and append latency before and
//!   after, and compaction's throughput (issue 20).
//! - `sql`: DataFusion `INSERT INTO` a `day(ts)` table through `iceberg-datafusion-writer`
//!   against `iceberg append` on the same Parquet file: wall, CPU over wall, files, peak RSS
//!   (issue 22).
//!
//! Everything runs on local disk under `target/bench-tmp` and is deleted afterwards.

mod cli_append;
mod commit;
mod maintenance;
mod measure;
mod python;
mod sql;
mod write;
mod write_one;

use std::error::Error;
use std::path::{Path, PathBuf};

use clap::{Parser, ValueEnum};

/// End-to-end benchmarks: partitioned write against a Parquet floor, and commit latency.
#[derive(Debug, Parser)]
#[command(name = "iceberg-bench")]
struct Cli {
    /// Which benchmark to run.
    #[arg(value_enum, default_value_t = Which::All)]
    which: Which,
    /// Rows of the events data set (issue 4 uses 5,000,000).
    #[arg(long, default_value_t = 5_000_000)]
    rows: usize,
    /// Interleaved repetitions of each writer (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Skip PyIceberg / pyarrow even when a python with them is found.
    #[arg(long)]
    no_python: bool,
    /// The iceberg-rust bench binary (`cargo xtask bench` builds it and passes it here).
    #[arg(long)]
    iceberg_rust: Option<PathBuf>,
    /// Layouts of the write matrix (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    layouts: Vec<write_one::Layout>,
    /// Prior-append counts at which commit latency is sampled.
    #[arg(long, value_delimiter = ',', default_value = "1,100,1000")]
    points: Vec<usize>,
    /// Commits timed at each point (the median is reported).
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// Skip the merge-append latency curve (fast append only).
    #[arg(long)]
    no_merge: bool,
    /// Data files in the single big commit (0 skips it).
    #[arg(long, default_value_t = 100_000)]
    big_files: usize,
    /// Table property `key=value` for the table `append-cli` creates; repeatable.
    #[arg(long = "table-property", value_name = "KEY=VALUE")]
    table_properties: Vec<String>,
    /// `maintenance`: fast appends made before the maintenance.
    #[arg(long, default_value_t = 2_000)]
    appends: usize,
    /// `maintenance`: rows per append.
    #[arg(long, default_value_t = 1_000)]
    rows_per_append: usize,
    /// `maintenance`: run on an in-memory store whose requests take this long during the
    /// maintenance steps (an object store's latency); 0 runs on local disk.
    #[arg(long, default_value_t = 0)]
    store_latency_ms: u64,
    /// Scratch folder (default `<workspace>/target/bench-tmp`).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// `write-one` (internal): the writer of one run.
    #[arg(long, value_enum, hide = true)]
    writer: Option<write_one::OurWriter>,
    /// `write`: the input file to keep (generated there when missing); `write-one`: its
    /// input.
    #[arg(long)]
    input: Option<PathBuf>,
    /// `write-one` (internal): its output folder.
    #[arg(long, hide = true)]
    out: Option<PathBuf>,
    /// `write-one` (internal): tokio worker threads.
    #[arg(long, hide = true, default_value_t = 2)]
    threads: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    /// Both benchmarks.
    All,
    /// The end-to-end write benchmark.
    Write,
    /// The commit benchmarks.
    Commit,
    /// `iceberg append` of the events data set (needs the release `iceberg` binary).
    AppendCli,
    /// Many small appends, then compaction, manifest rewrite and expiry.
    Maintenance,
    /// DataFusion `INSERT INTO` a `day(ts)` table against `iceberg append` on the same rows.
    Sql,
    /// One run of the write matrix (internal: the matrix runs it as a process of its own).
    #[value(hide = true)]
    WriteOne,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Machine facts printed with every run.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown memory".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    format!("{cores} cores, {cpu}, {mem}")
}

fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let cli = Cli::parse();
    if cli.which == Which::WriteOne {
        let (Some(writer), Some(input), Some(out)) = (cli.writer, &cli.input, &cli.out) else {
            return Err("write-one needs --writer, --input and --out".into());
        };
        let layout = cli
            .layouts
            .first()
            .copied()
            .unwrap_or(write_one::Layout::Day);
        return write_one::run(writer, layout, input, out, cli.threads);
    }
    tokio::runtime::Runtime::new()?.block_on(Box::pin(run(cli)))
}

async fn run(cli: Cli) -> Result<(), Box<dyn Error + Send + Sync>> {
    let root = workspace_root();
    let work_dir = cli
        .work_dir
        .clone()
        .unwrap_or_else(|| root.join("target").join("bench-tmp"));
    std::fs::create_dir_all(&work_dir)?;
    let work_dir = work_dir.canonicalize()?;
    println!("machine: {}", machine());
    if cfg!(debug_assertions) {
        println!("WARNING: debug build; run with --release for meaningful numbers");
    }
    if matches!(cli.which, Which::All | Which::Write) {
        println!("\n## write matrix (issues 4 and 21)\n");
        let python = if cli.no_python {
            None
        } else {
            python::find_python(&root)
        };
        write::run(&write::WriteArgs {
            rows: cli.rows,
            repeats: cli.repeats.max(1),
            work_dir: work_dir.clone(),
            python,
            iceberg_rust: cli.iceberg_rust.clone(),
            layouts: cli.layouts.clone(),
            input: cli.input.clone(),
        })?;
    }
    if matches!(cli.which, Which::All | Which::Commit) {
        println!("\n## commit (issue 5)\n");
        commit::run(&commit::CommitArgs {
            work_dir: work_dir.clone(),
            points: cli.points.clone(),
            samples: cli.samples.max(1),
            big_files: cli.big_files,
            merge: !cli.no_merge,
        })
        .await?;
    }
    if matches!(cli.which, Which::All | Which::Maintenance) {
        println!("\n## maintenance (issue 20)\n");
        Box::pin(maintenance::run(&maintenance::MaintenanceArgs {
            work_dir: work_dir.clone(),
            appends: cli.appends.max(1),
            rows_per_append: cli.rows_per_append.max(1),
            latency: (cli.store_latency_ms > 0)
                .then(|| std::time::Duration::from_millis(cli.store_latency_ms)),
        }))
        .await?;
    }
    if matches!(cli.which, Which::All | Which::Sql) {
        println!("\n## DataFusion INSERT INTO (issue 22)\n");
        sql::run(&sql::SqlArgs {
            rows: cli.rows,
            work_dir: work_dir.clone(),
            binary: root.join("target").join("release").join("iceberg"),
        })
        .await?;
    }
    if matches!(cli.which, Which::All | Which::AppendCli) {
        println!("\n## iceberg append (issue 7)\n");
        cli_append::run(&cli_append::CliArgs {
            rows: cli.rows,
            work_dir: work_dir.clone(),
            binary: root.join("target").join("release").join("iceberg"),
            table_properties: cli.table_properties.clone(),
        })?;
    }
    Ok(())
}
