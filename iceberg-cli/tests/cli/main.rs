//! End-to-end tests of the `iceberg` binary: every command, every input format, bad inputs
//! that must leave the table unchanged, and PyIceberg reading what the CLI wrote.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod add_files;
mod alter;
mod append;
mod compact;
mod config;
mod create;
mod evolve;
mod expire;
mod external;
mod faithful;
mod fixtures;
mod manage;
mod orphans;
#[cfg(feature = "rest")]
mod rest;
mod rewrite_manifests;
#[cfg(feature = "s3")]
mod s3;
mod show;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A temp folder with a warehouse in it.
pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn warehouse(&self) -> PathBuf {
        self.dir.path().join("warehouse")
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a text file into the temp folder.
    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The binary, in the temp folder, with the temp folder as its home and none of the
    /// caller's PyIceberg or `ICEBERG_*` settings (so a developer's `~/.pyiceberg.yaml`
    /// changes no test).
    pub(crate) fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iceberg"));
        c.current_dir(self.dir.path()).env("HOME", self.dir.path());
        for (name, _) in std::env::vars() {
            if name.starts_with("PYICEBERG_")
                || [
                    "ICEBERG_WAREHOUSE",
                    "ICEBERG_CATALOG",
                    "ICEBERG_CATALOG_NAME",
                ]
                .contains(&name.as_str())
            {
                c.env_remove(name);
            }
        }
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command()
            .arg("--warehouse")
            .arg(self.warehouse())
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs and expects success; returns stdout.
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "iceberg {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs with `--json` and parses stdout.
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs and expects failure; returns stderr.
    pub(crate) fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "iceberg {args:?} should have failed:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stderr).unwrap()
    }

    /// Snapshot count, metadata location and the files under the table's `data/`.
    pub(crate) fn state(&self, table: &str) -> (usize, String, BTreeSet<PathBuf>) {
        let v = self.json(&["inspect", table]);
        let (ns, name) = table.split_once('.').unwrap();
        let data = self.warehouse().join(ns).join(name).join("data");
        (
            v["snapshots"].as_array().unwrap().len(),
            v["metadata_location"].as_str().unwrap().to_string(),
            files_under(&data),
        )
    }
}

/// Every file below `dir` (none when it does not exist).
pub(crate) fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.insert(p);
        }
    }
    out
}

/// Every row of every data file under the table's `data/`, in one batch.
pub(crate) fn data_rows(env: &Env, table: &str) -> arrow_array::RecordBatch {
    let (ns, name) = table.split_once('.').unwrap();
    let mut batches = Vec::new();
    for path in files_under(&env.warehouse().join(ns).join(name).join("data")) {
        let file = std::fs::File::open(&path).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(Result::unwrap));
    }
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// `ICEBERG_TEST_PYTHON` (a python with pyiceberg 0.12); `None`, with a loud SKIPPED line
/// naming `what`, when it is not set, and a failure when external readers are required.
pub(crate) fn python(what: &str) -> Option<std::ffi::OsString> {
    let python = std::env::var_os("ICEBERG_TEST_PYTHON");
    if python.is_none() {
        assert!(
            std::env::var_os("ICEBERG_TEST_REQUIRE_EXTERNAL").is_none(),
            "ICEBERG_TEST_PYTHON is not set but external readers are required"
        );
        eprintln!(
            "\n*** SKIPPED {what}: set ICEBERG_TEST_PYTHON to a python with pyiceberg 0.12 to \
             run it. ***\n"
        );
    }
    python
}

const PYICEBERG_READ: &str = r#"
import datetime, decimal, json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh, name = sys.argv[1], sys.argv[2]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table(name)
def show(v):
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v
arrow = t.scan().to_arrow()
first = arrow.column_names[0]
rows = arrow.sort_by(first).to_pylist()
print(json.dumps({
    "types": {f.name: str(f.field_type) for f in t.schema().fields},
    "rows": [{k: show(v) for k, v in r.items()} for r in rows],
}))
"#;

/// PyIceberg's reading of `table`: `{"types": {column: type}, "rows": [{column: value}]}`
/// sorted by the first column (timestamps and dates ISO, decimals as text); `None`, with a
/// loud note, when `ICEBERG_TEST_PYTHON` is not set (a failure when external readers are
/// required).
pub(crate) fn pyiceberg_read(env: &Env, table: &str) -> Option<Value> {
    let python = python(&format!("PyIceberg's read of {table}"))?;
    let wh = std::fs::canonicalize(env.warehouse()).unwrap();
    Some(run_python(
        Command::new(python)
            .arg("-c")
            .arg(PYICEBERG_READ)
            .arg(wh.display().to_string())
            .arg(table),
    ))
}

/// Runs the python `script` with the test warehouse's canonical path as its argument, and
/// parses the one JSON value it prints.
pub(crate) fn python_on_warehouse(python: std::ffi::OsString, script: &str, env: &Env) -> Value {
    let wh = std::fs::canonicalize(env.warehouse()).unwrap();
    run_python(
        Command::new(python)
            .arg("-c")
            .arg(script)
            .arg(wh.display().to_string()),
    )
}

/// Runs a python command that prints one JSON value, and parses it (a failure shows its
/// output).
pub(crate) fn run_python(command: &mut Command) -> Value {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `total-records` of the current snapshot.
pub(crate) fn total_records(env: &Env, table: &str) -> i64 {
    let v = env.json(&["log", table]);
    let snaps = v["snapshots"].as_array().unwrap();
    snaps
        .iter()
        .find(|s| s["current"] == true)
        .map_or(0, |s| s["total_records"].as_i64().unwrap())
}

#[test]
fn quickstart_writes_three_commits_and_prints_the_tree() {
    let env = Env::new();
    let out = env.ok(&["quickstart", "--rows", "500"]);
    assert!(out.contains("created table demo.events"), "{out}");
    assert!(out.contains("carried by reference"), "{out}");
    assert!(out.contains("SqlCatalog(\"default\""), "{out}");
    assert_eq!(total_records(&env, "demo.events"), 1500);
    let log = env.json(&["log", "demo.events"]);
    assert_eq!(log["snapshots"].as_array().unwrap().len(), 3);
    let again = env.json(&["quickstart", "--rows", "10"]);
    assert_eq!(again["created"], false);
    assert_eq!(again["snapshots"].as_array().unwrap().len(), 3);
    assert_eq!(total_records(&env, "demo.events"), 1530);
}
