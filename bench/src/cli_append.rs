//! `iceberg append` of the events data set (issue 7): the release binary streams one
//! Parquet file of all the rows into a new `day(ts)` table; its peak RSS, polled from
//! `/proc/<pid>/status`, against the size of the input in Arrow.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::measure::{cpu_seconds_of, mib, peak_rss_bytes_of};
use iceberg_testing::events as data;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the run needs.
pub(crate) struct CliArgs {
    pub(crate) rows: usize,
    pub(crate) work_dir: PathBuf,
    /// The release `iceberg` binary.
    pub(crate) binary: PathBuf,
    /// `key=value` table properties of the created table.
    pub(crate) table_properties: Vec<String>,
}

pub(crate) fn run(args: &CliArgs) -> Result<(), BoxError> {
    if !args.binary.exists() {
        println!(
            "skipped: {} not built (`cargo build --release -p iceberg-cli`)",
            args.binary.display()
        );
        return Ok(());
    }
    let dir = args.work_dir.join("cli-append");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let input = dir.join("events.parquet");
    let arrow_bytes = write_input(&input, args.rows)?;
    let input_bytes = std::fs::metadata(&input)?.len();
    let AppendRun {
        wall, peak, report, ..
    } = append(&args.binary, &dir, &input, &args.table_properties)?;
    println!(
        "`iceberg append bench.events events.parquet --create --partition 'day(ts)'{}` \
         (release), {} rows from one {:.1} MiB Parquet file ({:.1} MiB in Arrow):",
        args.table_properties
            .iter()
            .map(|p| format!(" --property {p}"))
            .collect::<String>(),
        args.rows,
        mib(input_bytes),
        mib(arrow_bytes as u64)
    );
    println!(
        "wall {:.2} s, {:.2} M rows/s, {} data files, {:.1} MiB written, peak RSS {}",
        wall.as_secs_f64(),
        args.rows as f64 / wall.as_secs_f64() / 1e6,
        report["added_data_files"],
        report["added_files_size_bytes"].as_f64().unwrap_or(0.0) / (1024.0 * 1024.0),
        peak.map_or_else(|| "n/a".to_string(), |p| format!("{:.0} MiB", mib(p)))
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Writes `rows` events as one zstd(3) Parquet file at `path`; returns their size in Arrow.
pub(crate) fn write_input(path: &Path, rows: usize) -> Result<usize, BoxError> {
    let batches = data::generate(rows)?;
    let arrow_bytes: usize = batches.iter().map(|b| b.get_array_memory_size()).sum();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .build();
    let mut w = ArrowWriter::try_new(File::create(path)?, data::arrow_schema(), Some(props))?;
    for b in &batches {
        w.write(b)?;
    }
    w.close()?;
    Ok(arrow_bytes)
}

/// What one `iceberg append` run took.
pub(crate) struct AppendRun {
    pub(crate) wall: Duration,
    /// Peak RSS, the last reading before the child exited.
    pub(crate) peak: Option<u64>,
    /// User + system CPU seconds, the last reading before the child exited (to within a
    /// 20 ms poll).
    pub(crate) cpu: Option<f64>,
    /// What `--json` printed.
    pub(crate) report: serde_json::Value,
}

/// Runs the append, polling the child's peak RSS and CPU time until it exits; a failed
/// append is an error with its stderr.
pub(crate) fn append(
    binary: &Path,
    dir: &Path,
    input: &Path,
    table_properties: &[String],
) -> Result<AppendRun, BoxError> {
    let started = Instant::now();
    let mut child = Command::new(binary)
        .current_dir(dir)
        .args(["--warehouse", "wh", "--json", "append", "bench.events"])
        .arg(input)
        .args(["--create", "--partition", "day(ts)"])
        .args(
            table_properties
                .iter()
                .flat_map(|p| ["--property", p.as_str()]),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (mut peak, mut cpu) = (None, None);
    while child.try_wait()?.is_none() {
        // VmHWM and CPU time only grow: the last readings before exit are the totals (to
        // within a poll).
        if let Some(p) = peak_rss_bytes_of(child.id()) {
            peak = Some(p);
        }
        if let Some(c) = cpu_seconds_of(child.id()) {
            cpu = Some(c);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let wall = started.elapsed();
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(format!(
            "iceberg append failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(AppendRun {
        wall,
        peak,
        cpu,
        report: serde_json::from_slice(&out.stdout)?,
    })
}
