//! `cargo xtask bench [args]`: the end-to-end benchmarks of BENCHMARKS.md, i.e.
//! `cargo run --release -p iceberg-bench -- [args]` from the workspace root (after building
//! the release `iceberg` binary that `append-cli` runs, and the iceberg-rust bench binary of
//! the write matrix), with the PyIceberg venv (if already made by `cargo xtask venv`)
//! offered as the python to compare.
//!
//! The iceberg-rust bench (`bench/iceberg-rust`, its own workspace and lock file) builds the
//! `iceberg` crate in release, 6-9 minutes on 2 cores the first time, into
//! `target/iceberg-rust-bench`; `--no-iceberg-rust` skips it, and only the `write` and `all`
//! benchmarks use it.

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
    let mut args: Vec<String> = args.to_vec();
    let skip_iceberg_rust = args.iter().any(|a| a == "--no-iceberg-rust");
    args.retain(|a| a != "--no-iceberg-rust");
    let which = args
        .first()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str);
    if !skip_iceberg_rust && matches!(which, None | Some("all" | "write")) {
        let target = root().join("target").join("iceberg-rust-bench");
        run(Command::new(&cargo)
            .current_dir(root())
            .env("CARGO_TARGET_DIR", &target)
            .args([
                "build",
                "--release",
                "--manifest-path",
                "bench/iceberg-rust/Cargo.toml",
            ]))?;
        let bin = target.join("release").join("iceberg-rust-bench");
        args.push("--iceberg-rust".into());
        args.push(bin.display().to_string());
    }
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root())
        .args(["run", "--release", "-p", "iceberg-bench", "--"])
        .args(&args);
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
