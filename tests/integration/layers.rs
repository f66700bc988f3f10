//! The layering promises, checked on the real dependency graph: a commit-only user compiles
//! no Parquet, a write-only user no Avro, the IO layer knows nothing of Iceberg, and the spec
//! layer does no IO.

use std::process::Command;

/// The normal (non-dev) dependency names of `package` with `args` (features).
fn deps(package: &str, args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
        ])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn assert_absent(package: &str, args: &[&str], forbidden: &[&str]) {
    let d = deps(package, args);
    for f in forbidden {
        assert!(
            !d.iter().any(|x| x == f),
            "{package} {args:?} depends on {f}"
        );
    }
}

#[test]
fn commit_only_users_compile_no_parquet() {
    assert_absent(
        "iceberg-append",
        &["--no-default-features"],
        &["parquet", "iceberg-write", "arrow-array"],
    );
    assert_absent("iceberg-catalog", &[], &["parquet", "iceberg-write"]);
    assert!(
        deps("iceberg-append", &[]).iter().any(|x| x == "parquet"),
        "the default `write` feature brings the writer"
    );
}

#[test]
fn write_only_users_compile_no_avro() {
    assert_absent(
        "iceberg-write",
        &[],
        &["apache-avro", "iceberg-append", "sqlx"],
    );
}

#[test]
fn io_knows_nothing_of_iceberg_and_spec_does_no_io() {
    assert_absent(
        "iceberg-io",
        &["--all-features"],
        &["iceberg-spec", "parquet", "apache-avro"],
    );
    assert_absent(
        "iceberg-spec",
        &[],
        &[
            "tokio",
            "object_store",
            "parquet",
            "apache-avro",
            "iceberg-io",
        ],
    );
}
