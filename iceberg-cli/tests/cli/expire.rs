//! `iceberg expire`: a dry run changes nothing; an expiry keeps the current rows and the
//! kept snapshots (time travel in PyIceberg), removes the older ones with their manifest
//! lists and the manifests a merge replaced, and keeps every data file still live.

use crate::{Env, files_under};

const READ: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.t")
out = {"current": sorted(r["id"] for r in t.scan().to_arrow().to_pylist()), "snapshots": {}}
for s in t.snapshots():
    out["snapshots"][str(s.snapshot_id)] = sorted(
        r["id"] for r in t.scan(snapshot_id=s.snapshot_id).to_arrow().to_pylist())
print(json.dumps(out))
"#;

fn snapshot_ids(env: &Env) -> Vec<i64> {
    let v = env.json(&["log", "db.t"]);
    v["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["snapshot_id"].as_i64().unwrap())
        .collect()
}

#[test]
fn expire_keeps_the_rows_and_the_kept_snapshots_and_deletes_what_only_old_ones_reached() {
    let env = Env::new();
    for i in 0..5 {
        let csv = env.write(
            &format!("r{i}.csv"),
            &format!("id\n{}\n{}\n", 2 * i, 2 * i + 1),
        );
        let mut args = vec!["append", "db.t", csv.to_str().unwrap()];
        if i == 0 {
            args.extend([
                "--create",
                "--table-property",
                "commit.manifest.min-count-to-merge=2",
            ]);
        } else {
            // merging folds the small manifests, so the old ones become unreachable
            args.push("--merge");
        }
        env.ok(&args);
    }
    let before = snapshot_ids(&env);
    assert_eq!(before.len(), 5);
    let metadata = env.warehouse().join("db").join("t").join("metadata");
    let data = env.warehouse().join("db").join("t").join("data");
    let (metadata_files, data_files) = (files_under(&metadata), files_under(&data));

    // Nothing is old enough by default (5 days): nothing to do.
    let v = env.json(&["expire", "db.t"]);
    assert_eq!(v["expired_snapshots"].as_array().unwrap().len(), 0);
    assert!(v["metadata_location"].is_null());

    let dry = env.json(&[
        "expire",
        "db.t",
        "--older-than",
        "0s",
        "--retain-last",
        "2",
        "--dry-run",
    ]);
    assert_eq!(dry["expired_snapshots"].as_array().unwrap().len(), 3);
    assert_eq!(dry["manifest_lists"]["files"], 3);
    assert!(dry["manifests"]["files"].as_u64().unwrap() > 0);
    assert_eq!(dry["data_files"]["files"], 0, "every row is still live");
    assert_eq!(snapshot_ids(&env), before, "a dry run expired");
    assert_eq!(files_under(&metadata), metadata_files, "a dry run deleted");

    let out = env.ok(&["expire", "db.t", "--older-than", "0s", "--retain-last", "2"]);
    assert!(out.contains("expired 3 snapshot(s), 2 kept"), "{out}");
    assert_eq!(snapshot_ids(&env), before[3..].to_vec());
    assert_eq!(
        files_under(&data),
        data_files,
        "a live data file was deleted"
    );
    let after = files_under(&metadata);
    let gone: Vec<_> = metadata_files.difference(&after).collect();
    // Three manifest lists and the manifests the merges replaced.
    assert!(gone.len() > 3, "{gone:?}");
    assert!(
        gone.iter()
            .all(|p| p.extension().is_some_and(|e| e == "avro")),
        "{gone:?}"
    );
    // A snapshot a branch or tag holds cannot be named; an unknown age is refused.
    let err = env.fail(&["expire", "db.t", "--snapshot-id", &before[4].to_string()]);
    assert!(err.contains("`main` points at it"), "{err}");
    let err = env.fail(&["expire", "db.t", "--older-than", "soon"]);
    assert!(err.contains("`soon`"), "{err}");

    let Some(python) = crate::python("expire_keeps_the_rows_and_the_kept_snapshots") else {
        return;
    };
    let v = crate::python_on_warehouse(python, READ, &env);
    let all: Vec<i64> = (0..10).collect();
    assert_eq!(v["current"], serde_json::json!(all));
    // The kept parent still reads as it was: the first four appends' rows.
    let parent = &v["snapshots"][before[3].to_string()];
    assert_eq!(*parent, serde_json::json!((0..8).collect::<Vec<i64>>()));
    assert_eq!(v["snapshots"].as_object().unwrap().len(), 2);
}
