//! Project tasks.
//!
//! - `cargo xtask test`: makes a Python venv under `target/pyenv` with the pinned external
//!   readers (PyIceberg, pyarrow, fastavro) and moto's S3 server, then runs every test of the
//!   workspace (nextest when installed, else `cargo test`) and the doctests, with the
//!   external-reader tests required rather than skipped.
//! - `cargo xtask fixtures [--check]`: regenerates the golden fixture tables into
//!   `tests/fixtures/tables/` (through `/tmp/iceberg-fixtures`, the path their metadata
//!   names), or with `--check` fails when the committed ones differ from the generator's.
//! - `cargo xtask interop [--check] [--readers ...] [--no-java-tables]`: checks the fixtures,
//!   installs the external readers (`interop/setup.sh`: Iceberg Java, PyIceberg, iceberg-rust,
//!   DuckDB), has Java (through Spark) and PyIceberg write tables that our CLI then appends to,
//!   and DataFusion (`iceberg-ballista sql`) write one through `iceberg-datafusion-writer`,
//!   reads every fixture and every such table with each reader and writes the reader x feature
//!   matrix of `INTEROP.md` to `target/interop/matrix.md`. With `--check` (CI) it fails on any
//!   disagreement that `interop/known_disagreements.json` does not list, or that it lists but
//!   that no longer disagrees.
//! - `cargo xtask bench [args]`: the end-to-end benchmarks of BENCHMARKS.md in release
//!   (`iceberg-bench`; `--help` lists the args).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod bench;

/// Python packages the external-reader tests use, pinned.
const PY_PACKAGES: &[&str] = &[
    "pyiceberg[sql-sqlite,pyarrow,pyiceberg-core]==0.12.0",
    "pyarrow==26.0.1",
    "fastavro==1.13.1",
    "moto[server]==5.2.5",
    // DuckDB reading through the REST catalog (with httpfs); the interop matrix's too.
    "duckdb==1.5.5",
    "duckdb-extension-iceberg==1.5.5",
    "duckdb-extension-avro==1.5.5",
    "duckdb-extension-httpfs==1.5.5",
];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("venv") => venv().map(|p| println!("{}", p.display())),
        Some("bench") => bench::bench(&args[1..]),
        Some("fixtures") => fixtures(&args[1..]),
        Some("interop") => interop(&args[1..]),
        _ => Err("usage: cargo xtask test [-- <test filter args>] | cargo xtask venv | cargo xtask bench [args] | cargo xtask fixtures [--check] | cargo xtask interop [--check] [--readers ...] [--no-java-tables]".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}

/// Creates (once) the venv with the pinned packages and returns its folder.
fn venv() -> Result<PathBuf, String> {
    let dir = root().join("target").join("pyenv");
    let python = dir.join("bin").join("python");
    let stamp = dir.join("packages.txt");
    let wanted = PY_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) && python.exists() {
        return Ok(dir);
    }
    let system_python = env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(Command::new(&system_python)
        .args(["-m", "venv", "--clear"])
        .arg(&dir))?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(PY_PACKAGES))?;
    std::fs::write(&stamp, wanted).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(dir)
}

fn test(extra: &[String]) -> Result<(), String> {
    let venv = venv()?;
    let bin = venv.join("bin");
    let path = format!("{}:{}", bin.display(), env::var("PATH").unwrap_or_default());
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let with_env = |cmd: &mut Command| {
        cmd.current_dir(root())
            .env("PATH", &path)
            .env("ICEBERG_TEST_PYTHON", bin.join("python"))
            .env("ICEBERG_TEST_REQUIRE_EXTERNAL", "1")
            .env("ICEBERG_TEST_MOTO", "1");
    };
    let has_nextest = Command::new(&cargo)
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let mut tests = Command::new(&cargo);
    if has_nextest {
        tests.args([
            "nextest",
            "run",
            "--workspace",
            "--all-features",
            "--no-fail-fast",
        ]);
    } else {
        tests.args(["test", "--workspace", "--all-features", "--no-fail-fast"]);
    }
    tests.args(extra);
    with_env(&mut tests);
    run(&mut tests)?;
    if has_nextest {
        // nextest does not run doctests.
        let mut doc = Command::new(&cargo);
        doc.args(["test", "--workspace", "--all-features", "--doc"]);
        with_env(&mut doc);
        run(&mut doc)?;
    }
    Ok(())
}

fn fixtures(args: &[String]) -> Result<(), String> {
    let mode = match args.first().map(String::as_str) {
        None => "write",
        Some("--check") => "check",
        Some(other) => return Err(format!("unknown fixtures argument {other}")),
    };
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).current_dir(root()).args([
        "run",
        "--quiet",
        "-p",
        "iceberg-tests",
        "--bin",
        "make-fixtures",
        "--",
        mode,
    ]))
}

/// What `cargo xtask interop` was asked to do.
struct InteropArgs {
    /// Fail when compare.py finds a disagreement that is not on the known list.
    check: bool,
    readers: String,
    /// Also make tables with Iceberg Java through Spark (~40 s) and append to them.
    java_tables: bool,
}

/// The readers of the matrix in INTEROP.md (chdb and polars are report-only extras).
const DEFAULT_READERS: &str = "java,pyiceberg,iceberg_rust,duckdb,data_files";

const INTEROP_USAGE: &str =
    "usage: cargo xtask interop [--check] [--readers java,pyiceberg,...] [--no-java-tables]";

fn interop_args(args: &[String]) -> Result<InteropArgs, String> {
    let mut parsed = InteropArgs {
        check: false,
        readers: DEFAULT_READERS.into(),
        java_tables: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--check" => parsed.check = true,
            "--no-java-tables" => parsed.java_tables = false,
            "--readers" => parsed.readers = it.next().ok_or(INTEROP_USAGE)?.clone(),
            _ => return Err(INTEROP_USAGE.into()),
        }
    }
    Ok(parsed)
}

/// The folder cargo builds into (CARGO_TARGET_DIR when set, as in CI's shared caches).
fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

fn interop(args: &[String]) -> Result<(), String> {
    let args = interop_args(args)?;
    let started = std::time::Instant::now();
    let step = |what: &str| eprintln!("xtask interop: {what} ({} s)", started.elapsed().as_secs());
    // The binaries of the test build (`cargo xtask test` has just made them in CI): building
    // them alone would compile the workspace again with another feature set.
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(&cargo).current_dir(root()).args([
        "test",
        "--workspace",
        "--all-features",
        "--no-run",
        "--quiet",
    ]))?;
    let bin = |name: &str| target_dir().join("debug").join(name);
    // Leaves a fresh copy at /tmp/iceberg-fixtures, where the tables' metadata points.
    run(Command::new(bin("make-fixtures"))
        .current_dir(root())
        .arg("check"))?;
    step("fixtures checked, CLI built");
    let venv = venv()?;
    let python = venv.join("bin").join("python");
    let cache = root().join("target").join("interop-cache");
    let out = root().join("target").join("interop");
    let interop = root().join("interop");
    run(Command::new("bash")
        .arg(interop.join("setup.sh"))
        .arg(&venv)
        .arg(&cache))?;
    step("readers installed");
    // The verdict machinery's own unit checks (stdlib only, a fraction of a second).
    run(Command::new(&python).current_dir(root()).args([
        "-m",
        "unittest",
        "discover",
        "--quiet",
        "-s",
        "interop",
        "-p",
        "test_*.py",
    ]))?;
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let file = |name: &str| out.join(name);
    run(Command::new(&python)
        .arg(interop.join("fixtures_spec.py"))
        .arg("/tmp/iceberg-fixtures")
        .arg("--spec")
        .arg(file("spec-fixtures.json"))
        .arg("--expected")
        .arg(file("expected-fixtures.json")))?;
    let mut foreign = Command::new(&python);
    foreign
        .arg(interop.join("foreign_appends.py"))
        .arg(file("foreign"))
        .arg("--iceberg")
        .arg(bin("iceberg"))
        .arg("--sql")
        .arg(bin("iceberg-ballista"))
        .arg("--cache")
        .arg(&cache)
        .arg("--spec")
        .arg(file("spec-foreign.json"))
        .arg("--expected")
        .arg(file("expected-foreign.json"));
    if !args.java_tables {
        foreign.arg("--no-java");
    }
    run(&mut foreign)?;
    step("tables of other engines written and appended to");
    run(Command::new(&python)
        .arg(interop.join("read_tables.py"))
        .arg(file("spec-fixtures.json"))
        .arg(file("spec-foreign.json"))
        .arg("--out")
        .arg(file("results"))
        .arg("--cache")
        .arg(&cache)
        .arg("--readers")
        .arg(&args.readers))?;
    step("tables read");
    let results: Vec<PathBuf> = args
        .readers
        .split(',')
        .map(|r| file("results").join(format!("{r}.json")))
        .collect();
    // compare.py exits 1 on a disagreement that interop/known_disagreements.json does not
    // list, and on a listed one that no longer disagrees; INTEROP.md's copy of the matrix
    // is rewritten (or, with --check, must be current) when every reader and table ran.
    let mut compare = Command::new(&python);
    compare.arg(interop.join("compare.py"));
    if args.readers == DEFAULT_READERS && args.java_tables {
        compare
            .arg("--doc")
            .arg(root().join("INTEROP.md"))
            .arg("--doc-mode")
            .arg(if args.check { "check" } else { "update" });
    }
    step(&format!(
        "comparing; matrix and notes in {}",
        file("matrix.md").display()
    ));
    let status = compare
        .arg("--spec")
        .arg(file("spec-fixtures.json"))
        .arg("--spec")
        .arg(file("spec-foreign.json"))
        .arg("--expected")
        .arg(file("expected-fixtures.json"))
        .arg("--expected")
        .arg(file("expected-foreign.json"))
        .arg("--known")
        .arg(interop.join("known_disagreements.json"))
        .args(&results)
        .arg("--markdown")
        .arg(file("matrix.md"))
        .arg("--report")
        .arg(file("verdicts.json"))
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run compare.py: {e}"))?;
    // Nothing printed after compare.py's closing "interop: N passed, M failed" on success: CI
    // reads a run's closing line.
    if !status.success() {
        step(&format!("compare.py {status}"));
    }
    if args.check && !status.success() {
        return Err(format!(
            "interop: disagreements not on interop/known_disagreements.json, or stale entries there; see {}",
            file("matrix.md").display()
        ));
    }
    Ok(())
}
