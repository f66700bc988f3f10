//! `iceberg rewrite-manifests`: five appends' manifests become one `replace` snapshot, and
//! PyIceberg reads the same rows, pruning by partition as before.

use crate::Env;

const READ: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.t")
snap = t.current_snapshot()
print(json.dumps({
    "ids": sorted(r["id"] for r in t.scan().to_arrow().to_pylist()),
    "k3": sorted(r["id"] for r in t.scan(row_filter="k == 3").to_arrow().to_pylist()),
    "files_k3": len(list(t.scan(row_filter="k == 3").plan_files())),
    "operation": snap.summary.operation.value,
    "manifests": len(snap.manifests(t.io)),
}))
"#;

#[test]
fn rewrite_manifests_folds_five_appends_into_one_manifest() {
    let env = Env::new();
    for i in 0..5 {
        let csv = env.write(
            &format!("r{i}.csv"),
            &format!("id,k\n{i},{i}\n{},{i}\n", i + 10),
        );
        let mut args = vec!["append", "db.t", csv.to_str().unwrap(), "--fast"];
        if i == 0 {
            args.extend(["--create", "--partition", "k"]);
        }
        env.ok(&args);
    }
    let v = env.json(&["rewrite-manifests", "db.t"]);
    assert_eq!(v["manifests_replaced"], 5);
    assert_eq!(v["manifests_created"], 1);
    assert_eq!(v["entries"], 5);
    let out = env.ok(&["rewrite-manifests", "db.t"]);
    assert!(out.contains("nothing to rewrite"), "{out}");
    let log = env.json(&["log", "db.t"]);
    let last = log["snapshots"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["operation"], "replace");
    assert_eq!(last["total_records"], 10);
    let Some(python) = crate::python("rewrite_manifests_folds_five_appends_into_one_manifest")
    else {
        return;
    };
    let v = crate::python_on_warehouse(python, READ, &env);
    let ids: Vec<i64> = (0..5).chain(10..15).collect();
    assert_eq!(v["ids"], serde_json::json!(ids));
    assert_eq!(v["k3"], serde_json::json!([3, 13]));
    assert_eq!(v["files_k3"], 1);
    assert_eq!(v["operation"], "replace");
    assert_eq!(v["manifests"], 1);
}
