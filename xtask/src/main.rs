//! Project tasks.
//!
//! - `cargo xtask test`: makes a Python venv under `target/pyenv` with the pinned external
//!   readers (PyIceberg, pyarrow, fastavro) and moto's S3 server, then runs every test of the
//!   workspace (nextest when installed, else `cargo test`) and the doctests, with the
//!   external-reader tests required rather than skipped.
//! - `cargo xtask fixtures [--check]`: regenerates the golden fixture tables into
//!   `tests/fixtures/tables/` (through `/tmp/iceberg-fixtures`, the path their metadata
//!   names), or with `--check` fails when the committed ones differ from the generator's.
//! - `cargo xtask interop [--readers ...]`: regenerates the fixtures, installs the external
//!   readers (`interop/setup.sh`: Iceberg Java, PyIceberg, DuckDB) and reads every fixture
//!   table with each, printing the reader x feature matrix of `INTEROP.md`.
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
];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("venv") => venv().map(|p| println!("{}", p.display())),
        Some("bench") => bench::bench(&args[1..]),
        Some("fixtures") => fixtures(&args[1..]),
        Some("interop") => interop(&args[1..]),
        _ => Err("usage: cargo xtask test [-- <test filter args>] | cargo xtask venv | cargo xtask bench [args] | cargo xtask fixtures [--check] | cargo xtask interop [--readers java,pyiceberg,duckdb]".to_string()),
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

fn interop(args: &[String]) -> Result<(), String> {
    let readers = match args {
        [] => "java,pyiceberg,duckdb".to_string(),
        [flag, list] if flag == "--readers" => list.clone(),
        _ => return Err("usage: cargo xtask interop [--readers java,pyiceberg,duckdb]".into()),
    };
    fixtures(&["--check".to_string()])?;
    let venv = venv()?;
    let python = venv.join("bin").join("python");
    let cache = root().join("target").join("interop-cache");
    let out = root().join("target").join("interop");
    let interop = root().join("interop");
    run(Command::new("bash")
        .arg(interop.join("setup.sh"))
        .arg(&venv)
        .arg(&cache))?;
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let spec = out.join("spec.json");
    let expected = out.join("expected.json");
    run(Command::new(&python)
        .arg(interop.join("fixtures_spec.py"))
        .arg("/tmp/iceberg-fixtures")
        .arg("--spec")
        .arg(&spec)
        .arg("--expected")
        .arg(&expected))?;
    run(Command::new(&python)
        .arg(interop.join("read_tables.py"))
        .arg(&spec)
        .arg("--out")
        .arg(out.join("results"))
        .arg("--cache")
        .arg(&cache)
        .arg("--readers")
        .arg(&readers))?;
    let results: Vec<PathBuf> = readers
        .split(',')
        .map(|r| out.join("results").join(format!("{r}.json")))
        .collect();
    // compare.py exits 1 on any disagreement; the known ones are explained in INTEROP.md.
    let status = Command::new(&python)
        .arg(interop.join("compare.py"))
        .arg("--spec")
        .arg(&spec)
        .arg("--expected")
        .arg(&expected)
        .args(&results)
        .arg("--markdown")
        .arg(out.join("matrix.md"))
        .status()
        .map_err(|e| format!("cannot run compare.py: {e}"))?;
    println!(
        "interop matrix (compare.py {status}): {}",
        out.join("matrix.md").display()
    );
    Ok(())
}
