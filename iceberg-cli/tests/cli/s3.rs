//! The binary on S3 (a moto server): the object-store catalog in a bucket, configured with
//! the global `--property` IO settings, as a user without a database runs it.

use std::process::Output;

use iceberg_testing::moto::MotoServer;
use serde_json::Value;

use crate::Env;

/// Runs the binary against `s3://<bucket>/wh` with the object-store catalog.
fn run(env: &Env, moto: &MotoServer, bucket: &str, args: &[&str]) -> Output {
    let mut cmd = env.command();
    cmd.args(["--warehouse", &format!("s3://{bucket}/wh")])
        .args(["--catalog", "object-store"]);
    for (k, v) in moto.s3_properties() {
        cmd.arg("--property").arg(format!("{k}={v}"));
    }
    cmd.args(args).output().unwrap()
}

fn ok_json(env: &Env, moto: &MotoServer, bucket: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(env, moto, bucket, &all);
    assert!(
        out.status.success(),
        "iceberg {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn append_create_and_read_back_on_s3() {
    let Some(moto) = MotoServer::start() else {
        return;
    };
    moto.create_bucket("cli-warehouse");
    let env = Env::new();
    let first = env.write("a.csv", "id,category\n1,x\n2,y\n3,x\n");
    let second = env.write("b.csv", "id,category\n4,z\n5,x\n");
    let first = first.to_str().unwrap();
    ok_json(
        &env,
        &moto,
        "cli-warehouse",
        &[
            "append",
            "db.events",
            first,
            "--create",
            "--partition",
            "category",
        ],
    );
    ok_json(
        &env,
        &moto,
        "cli-warehouse",
        &["append", "db.events", second.to_str().unwrap()],
    );
    let log = ok_json(&env, &moto, "cli-warehouse", &["log", "db.events"]);
    let snapshots = log["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 2, "{log}");
    let current = snapshots.iter().find(|s| s["current"] == true).unwrap();
    assert_eq!(current["total_records"], 5, "{log}");
    let inspect = ok_json(
        &env,
        &moto,
        "cli-warehouse",
        &["inspect", "db.events", "--files"],
    );
    let location = inspect["metadata_location"].as_str().unwrap();
    assert!(
        location.starts_with("s3://cli-warehouse/wh/db/events/metadata/v"),
        "{location}"
    );
    // A bad input on S3 commits nothing either.
    let bad = env.write("bad.csv", "id,category\nnot-a-number,x\n");
    let out = run(
        &env,
        &moto,
        "cli-warehouse",
        &["append", "db.events", bad.to_str().unwrap()],
    );
    assert!(!out.status.success());
    let after = ok_json(&env, &moto, "cli-warehouse", &["log", "db.events"]);
    assert_eq!(after["snapshots"].as_array().unwrap().len(), 2);
}
