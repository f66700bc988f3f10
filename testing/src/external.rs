//! Running the external Python readers (PyIceberg, pyarrow, fastavro) from tests.
//!
//! `cargo xtask test` sets `ICEBERG_TEST_PYTHON` to a venv with the pinned readers and
//! `ICEBERG_TEST_REQUIRE_EXTERNAL=1`, so these tests cannot be skipped in CI. Elsewhere a
//! missing Python prints a loud skip line.

// Test helpers: a reader that fails fails the test that called it, with its output.
#![allow(clippy::panic, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

/// The venv's python, or `None` (after printing why) when the test should be skipped.
pub fn python(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ICEBERG_TEST_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            if std::env::var_os("ICEBERG_TEST_REQUIRE_EXTERNAL").is_some() {
                panic!("{test}: ICEBERG_TEST_PYTHON is not set but external readers are required");
            }
            eprintln!(
                "\n*** SKIPPED {test}: no external reader. Run `cargo xtask test` (or set \
                 ICEBERG_TEST_PYTHON to a python with pyiceberg 0.12) to run it. ***\n"
            );
            None
        }
    }
}

/// Runs `script` with `args`; returns stdout parsed as JSON, failing with stderr on error.
pub fn run_json(python: &PathBuf, script: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("start python");
    assert!(
        out.status.success(),
        "python failed:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "python printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
