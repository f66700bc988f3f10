//! End-to-end tests of the `iceberg` binary: every command, every input format, bad inputs
//! that must leave the table unchanged, and PyIceberg reading what the CLI wrote.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod append;
mod create;
mod external;
mod fixtures;
#[cfg(feature = "rest")]
mod rest;
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

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_iceberg"))
            .current_dir(self.dir.path())
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
}
