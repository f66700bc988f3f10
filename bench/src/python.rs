//! Optional comparison with PyIceberg's append and pyarrow's partitioned `write_dataset`:
//! the events are written once to a Parquet file, and `bench.py` times both on it.

use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use serde_json::Value;

use crate::data;
use crate::measure::{median, mib};

type BoxError = Box<dyn Error + Send + Sync>;

const SCRIPT: &str = include_str!("bench.py");

/// The python to use: `ICEBERG_TEST_PYTHON`, else `target/pyenv/bin/python`, if it imports
/// pyiceberg and pyarrow.
pub(crate) fn find_python(root: &Path) -> Option<PathBuf> {
    let candidates = std::env::var_os("ICEBERG_TEST_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::iter::once(root.join("target/pyenv/bin/python")));
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pyiceberg, pyarrow"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// Runs `bench.py` with `python` on `batches` and prints its table; `floor` and `ours` are
/// the median walls (s) of the Rust runs, for ratios.
pub(crate) fn run(
    python: &Path,
    batches: &[RecordBatch],
    work: &Path,
    repeats: usize,
    rows: usize,
    floor: f64,
    ours: Option<f64>,
) -> Result<(), BoxError> {
    std::fs::create_dir_all(work)?;
    let src = work.join("events.parquet");
    let mut w = ArrowWriter::try_new(File::create(&src)?, data::arrow_schema(), None)?;
    for b in batches {
        w.write(b)?;
    }
    w.close()?;
    let script = work.join("bench.py");
    std::fs::write(&script, SCRIPT)?;
    let version = Command::new(python)
        .args([
            "-c",
            "import pyiceberg, pyarrow; print(pyiceberg.__version__, pyarrow.__version__)",
        ])
        .output()?;
    println!(
        "\nPyIceberg / pyarrow ({}; versions {}), same rows read from a Parquet file before timing:",
        python.display(),
        String::from_utf8_lossy(&version.stdout).trim()
    );
    let out = Command::new(python)
        .arg(&script)
        .arg(&src)
        .arg(work)
        .arg(repeats.to_string())
        .output()?;
    if !out.status.success() {
        return Err(format!("bench.py failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let mut runs: Vec<(String, f64, f64, u64, u64, u64)> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line)?;
        let name = v["name"].as_str().unwrap_or("?").to_string();
        let wall = v["wall"].as_f64().unwrap_or(f64::NAN);
        let cpu = v["cpu"].as_f64().unwrap_or(f64::NAN);
        let bytes = v["bytes"].as_u64().unwrap_or(0);
        let files = v["files"].as_u64().unwrap_or(0);
        let rss = v["max_rss_kib"].as_u64().unwrap_or(0);
        println!(
            "  run {} {name}: {wall:.3} s, cpu {cpu:.2}, {files} files, {:.1} MiB",
            v["rep"],
            mib(bytes)
        );
        runs.push((name, wall, cpu, bytes, files, rss));
    }
    println!();
    println!(
        "| writer | median wall (s) | rows/s | MiB written | data files | CPU (user+sys)/wall | vs floor | ours vs it |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut names: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
    names.dedup();
    names.sort();
    names.dedup();
    let mut walls = Vec::new();
    for name in &names {
        let mine: Vec<_> = runs.iter().filter(|r| &r.0 == name).collect();
        let wall = median(&mine.iter().map(|r| r.1).collect::<Vec<_>>()).unwrap_or(f64::NAN);
        let cpu = median(&mine.iter().map(|r| r.2).collect::<Vec<_>>()).unwrap_or(f64::NAN);
        let bytes = median(&mine.iter().map(|r| r.3).collect::<Vec<_>>()).unwrap_or(0);
        let files = mine.first().map(|r| r.4).unwrap_or(0);
        println!(
            "| {name} | {wall:.3} | {:.2} M | {:.1} | {files} | {cpu:.2} | {:.2}x | {} |",
            rows as f64 / wall / 1e6,
            mib(bytes),
            wall / floor,
            ours.map(|o| format!("{:.2}x", o / wall))
                .unwrap_or_else(|| "n/a".into()),
        );
        walls.push((name.clone(), wall));
    }
    if let (Some(pa), Some(pi)) = (
        walls.iter().find(|w| w.0.starts_with("pyarrow")),
        walls.iter().find(|w| w.0.starts_with("pyiceberg")),
    ) {
        println!("\nratio pyiceberg/pyarrow = {:.2}", pi.1 / pa.1);
    }
    let max_rss = runs.iter().map(|r| r.5).max().unwrap_or(0);
    println!(
        "python peak RSS over all its runs: {:.0} MiB",
        max_rss as f64 / 1024.0
    );
    std::fs::remove_file(&src)?;
    Ok(())
}
