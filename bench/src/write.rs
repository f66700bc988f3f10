//! The write matrix (issues 4 and 21): the same events written by every writer, for three
//! partition layouts (unpartitioned, `day(ts)`, `bucket(1000, user_id)`), each run in a
//! process of its own (`write-one`, `bench.py`, the iceberg-rust binary) so that its peak
//! memory is its own, repetitions interleaved, medians reported, ratios against ours.
//!
//! Writers: parquet's `ArrowWriter` on rows split by partition before timing (the floor,
//! one core), ours (`write_data_files` + a fast append) on all cores and on one tokio worker
//! (how it scales), pyarrow (`write_table` / `write_dataset`), PyIceberg `append`, and
//! iceberg-rust 0.10.1 (`bench/iceberg-rust`, built outside the workspace). zstd level 3 for
//! every writer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use arrow_array::RecordBatch;
use serde_json::Value;

use crate::measure::{median, mib};
use crate::python;
use crate::write_one::{self, Layout};
use iceberg_testing::events as data;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct WriteArgs {
    pub(crate) rows: usize,
    pub(crate) repeats: usize,
    pub(crate) work_dir: PathBuf,
    pub(crate) python: Option<PathBuf>,
    /// The built iceberg-rust bench binary, when it is to run.
    pub(crate) iceberg_rust: Option<PathBuf>,
    /// Layouts to run (all when empty).
    pub(crate) layouts: Vec<Layout>,
    /// The input file to keep (made there when missing, read when present), e.g. to
    /// profile one writer with `iceberg-bench write-one` on it.
    pub(crate) input: Option<PathBuf>,
}

/// What one run reported (the JSON line every writer prints).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunOutput {
    wall: f64,
    cpu: f64,
    rss_before: u64,
    peak_rss: u64,
    bytes: u64,
    files: u64,
    rows: u64,
}

impl RunOutput {
    /// Runs `cmd` and parses the last line it printed.
    pub(crate) fn from_command(cmd: &mut Command) -> Result<Self, BoxError> {
        let out = cmd.output()?;
        if !out.status.success() {
            return Err(format!(
                "{cmd:?} failed: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().last().ok_or("no output")?;
        let v: Value = serde_json::from_str(line)?;
        let num = |k: &str| v[k].as_f64().ok_or_else(|| format!("no {k} in {line}"));
        Ok(Self {
            wall: num("wall_s")?,
            cpu: num("cpu_s")?,
            rss_before: num("rss_before_bytes")? as u64,
            peak_rss: num("peak_rss_bytes")? as u64,
            bytes: num("bytes")? as u64,
            files: num("files")? as u64,
            rows: num("rows")? as u64,
        })
    }

    /// Peak memory above what the process held once its input was loaded.
    fn peak_above_input(&self) -> u64 {
        self.peak_rss.saturating_sub(self.rss_before)
    }
}

/// One writer of the matrix.
#[derive(Debug, Clone)]
enum Writer {
    Ours { floor: bool, threads: Option<usize> },
    Python(&'static str),
    IcebergRust(PathBuf),
}

impl Writer {
    fn name(&self, pyiceberg: &str, pyarrow: &str, layout: Layout) -> String {
        match self {
            Self::Ours { floor: true, .. } => {
                "floor: parquet ArrowWriter per partition, 1 core".into()
            }
            Self::Ours {
                threads: Some(t), ..
            } => format!("ours, {t} tokio worker"),
            Self::Ours { .. } => "ours".into(),
            Self::Python("pyarrow") if layout == Layout::Unpartitioned => {
                format!("pyarrow {pyarrow} write_table")
            }
            Self::Python("pyarrow") => format!("pyarrow {pyarrow} write_dataset"),
            Self::Python(_) => format!("PyIceberg {pyiceberg} append"),
            Self::IcebergRust(_) => "iceberg-rust 0.10.1".into(),
        }
    }
}

/// Runs the matrix and prints a table per layout.
pub(crate) fn run(args: &WriteArgs) -> Result<(), BoxError> {
    let root = args.work_dir.join("write");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    std::fs::create_dir_all(&root)?;
    let t0 = Instant::now();
    let input = args
        .input
        .clone()
        .unwrap_or_else(|| root.join("events.arrow"));
    if !input.exists() {
        let batches = data::generate(args.rows)?;
        write_one::write_ipc(&input, &batches)?;
    }
    let rows = write_one::read_ipc(&input)?
        .iter()
        .map(RecordBatch::num_rows)
        .sum::<usize>();
    println!(
        "data set: {rows} rows in {}, an Arrow IPC file ({:.0} MiB) each writer reads before \
         timing ({:.1} s, not timed)",
        input.display(),
        mib(std::fs::metadata(&input)?.len()),
        t0.elapsed().as_secs_f64()
    );
    let me = std::env::current_exe()?;
    let mut writers = vec![
        Writer::Ours {
            floor: false,
            threads: None,
        },
        Writer::Ours {
            floor: false,
            threads: Some(1),
        },
        Writer::Ours {
            floor: true,
            threads: None,
        },
    ];
    let (mut pyiceberg, mut pyarrow) = ("?".to_string(), "?".to_string());
    let script = match &args.python {
        Some(py) => {
            (pyiceberg, pyarrow) = python::versions(py)?;
            writers.push(Writer::Python("pyarrow"));
            writers.push(Writer::Python("pyiceberg"));
            Some(python::install_script(&root)?)
        }
        None => {
            println!(
                "pyarrow / PyIceberg: skipped (no python with pyiceberg: set ICEBERG_TEST_PYTHON \
                 or run `cargo xtask venv`)"
            );
            None
        }
    };
    match &args.iceberg_rust {
        Some(bin) => writers.push(Writer::IcebergRust(bin.clone())),
        None => println!(
            "iceberg-rust: skipped (`cargo xtask bench` builds it unless --no-iceberg-rust)"
        ),
    }
    let layouts = if args.layouts.is_empty() {
        Layout::ALL.to_vec()
    } else {
        args.layouts.clone()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut results = vec![vec![Vec::<RunOutput>::new(); writers.len()]; layouts.len()];
    for rep in 0..args.repeats {
        for (l, layout) in layouts.iter().enumerate() {
            for (w, writer) in writers.iter().enumerate() {
                let out = root.join(format!("run-{rep}-{}-{w}", layout.name()));
                std::fs::create_dir_all(&out)?;
                let r = match writer {
                    Writer::Ours { floor, threads: t } => {
                        let mut cmd = Command::new(&me);
                        cmd.arg("write-one")
                            .arg("--writer")
                            .arg(if *floor { "floor" } else { "ours" })
                            .arg("--layouts")
                            .arg(layout.name())
                            .arg("--input")
                            .arg(&input)
                            .arg("--out")
                            .arg(&out)
                            .arg("--threads")
                            .arg(t.unwrap_or(threads).to_string());
                        RunOutput::from_command(&mut cmd)?
                    }
                    Writer::Python(name) => {
                        let (Some(py), Some(script)) = (&args.python, &script) else {
                            continue;
                        };
                        python::run_one(py, script, name, *layout, &input, &out)?
                    }
                    Writer::IcebergRust(bin) => {
                        let mut cmd = Command::new(bin);
                        cmd.arg("--input")
                            .arg(&input)
                            .arg("--layouts")
                            .arg(layout.name())
                            .arg("--out")
                            .arg(&out);
                        RunOutput::from_command(&mut cmd)?
                    }
                };
                if r.rows != rows as u64 {
                    return Err(format!(
                        "{} wrote {} rows of {rows}",
                        writer.name(&pyiceberg, &pyarrow, *layout),
                        r.rows
                    )
                    .into());
                }
                println!(
                    "  run {rep} {} / {}: {:.3} s, cpu {:.2}, {} files, {:.1} MiB, peak +{:.0} MiB",
                    layout.name(),
                    writer.name(&pyiceberg, &pyarrow, *layout),
                    r.wall,
                    r.cpu / r.wall,
                    r.files,
                    mib(r.bytes),
                    mib(r.peak_above_input())
                );
                empty_files(&out)?;
                results[l][w].push(r);
            }
        }
    }
    for (l, layout) in layouts.iter().enumerate() {
        println!("\n### {} ({rows} rows)\n", layout_title(*layout));
        println!(
            "| writer | median wall (s) | rows/s | CPU/wall | peak RSS above input (MiB) | data files | MiB written | wall / ours |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        let ours = median_wall(&results[l][0]);
        for (w, writer) in writers.iter().enumerate() {
            let runs = &results[l][w];
            if runs.is_empty() {
                continue;
            }
            let wall = median_wall(runs);
            let cpu = median(&runs.iter().map(|r| r.cpu / r.wall).collect::<Vec<_>>())
                .unwrap_or(f64::NAN);
            let peak = runs
                .iter()
                .map(RunOutput::peak_above_input)
                .max()
                .unwrap_or(0);
            let bytes = median(&runs.iter().map(|r| r.bytes).collect::<Vec<_>>()).unwrap_or(0);
            let files = runs.first().map_or(0, |r| r.files);
            println!(
                "| {} | {wall:.3} | {:.2} M | {cpu:.2} | {:.0} | {files} | {:.1} | {:.2}x |",
                writer.name(&pyiceberg, &pyarrow, *layout),
                rows as f64 / wall / 1e6,
                mib(peak),
                mib(bytes),
                wall / ours,
            );
        }
    }
    println!(
        "\nmedians of {} interleaved runs; each run is its own process, which reads the input \
         before timing; peak RSS is the run's VmHWM above its RSS once the input was loaded",
        args.repeats
    );
    std::fs::remove_dir_all(&root)?;
    Ok(())
}

/// Frees the space of a run's files but keeps the files until the matrix ends (its folder is
/// removed then): on ext4, files created within a minute or so of a deletion nearby search
/// past the freed inodes (`recently_deleted`), which made every repetition after the first
/// of bucket(1000), 1,000 files, up to 30% slower when each run's folder was deleted.
fn empty_files(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            empty_files(&entry.path())?;
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .open(entry.path())?
                .set_len(0)?;
        }
    }
    Ok(())
}

fn layout_title(layout: Layout) -> &'static str {
    match layout {
        Layout::Unpartitioned => "unpartitioned, one file",
        Layout::Day => "day(ts), 30 partitions",
        Layout::Bucket => "bucket(1000, user_id), 1,000 partitions",
    }
}

fn median_wall(runs: &[RunOutput]) -> f64 {
    median(&runs.iter().map(|r| r.wall).collect::<Vec<_>>()).unwrap_or(f64::NAN)
}
