//! `cargo xtask bench [args]`: the end-to-end benchmarks of BENCHMARKS.md, i.e.
//! `cargo run --release -p iceberg-bench -- [args]` from the workspace root (after building
//! the release `iceberg` binary that `append-cli` runs), with the
//! PyIceberg venv (if already made by `cargo xtask venv`) offered as the python to compare.

use std::env;
use std::process::Command;

use crate::{root, run};

/// Runs the `iceberg-bench` binary in release with `args`.
pub(crate) fn bench(args: &[String]) -> Result<(), String> {
    // `cargo xtask bench -- --rows 1000` and `cargo xtask bench --rows 1000` alike.
    let args = args.strip_prefix(&["--".to_string()]).unwrap_or(args);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The `append-cli` benchmark runs the release `iceberg` binary.
    run(Command::new(&cargo).current_dir(root()).args([
        "build",
        "--release",
        "-p",
        "iceberg-cli",
        "--bin",
        "iceberg",
    ]))?;
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root())
        .args(["run", "--release", "-p", "iceberg-bench", "--"])
        .args(args);
    let python = root()
        .join("target")
        .join("pyenv")
        .join("bin")
        .join("python");
    if env::var_os("ICEBERG_TEST_PYTHON").is_none() && python.exists() {
        cmd.env("ICEBERG_TEST_PYTHON", python);
    }
    run(&mut cmd)
}
