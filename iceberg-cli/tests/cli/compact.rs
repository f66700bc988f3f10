//! `iceberg compact`: six small appends into one partition become one file, PyIceberg reads
//! every row, and a second run has nothing to do.

use crate::Env;

const READ: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.t")
print(json.dumps({
    "ids": sorted(r["id"] for r in t.scan().to_arrow().to_pylist()),
    "files": len(list(t.scan().plan_files())),
    "operation": t.current_snapshot().summary.operation.value,
}))
"#;

#[test]
fn compact_rewrites_small_files_into_one_and_keeps_every_row() {
    let env = Env::new();
    for i in 0..6 {
        let csv = env.write(
            &format!("r{i}.csv"),
            &format!("id,k\n{i},a\n{},a\n", i + 10),
        );
        let mut args = vec!["append", "db.t", csv.to_str().unwrap()];
        if i == 0 {
            args.extend(["--create", "--partition", "k"]);
        }
        env.ok(&args);
    }
    let err = env.fail(&["compact", "db.t", "--target-file-size", "12 parsecs"]);
    assert!(err.contains("unknown unit"), "{err}");
    let v = env.json(&["compact", "db.t", "--target-file-size", "64MiB"]);
    assert_eq!(v["partitions"], 1);
    assert_eq!(v["files_rewritten"], 6);
    assert_eq!(v["files_written"], 1);
    assert_eq!(v["rows"], 12);
    let out = env.ok(&["compact", "db.t"]);
    assert!(out.contains("nothing compacted"), "{out}");
    let Some(python) = crate::python("compact_rewrites_small_files_into_one_and_keeps_every_row")
    else {
        return;
    };
    let v = crate::python_on_warehouse(python, READ, &env);
    let ids: Vec<i64> = (0..6).chain(10..16).collect();
    assert_eq!(v["ids"], serde_json::json!(ids));
    assert_eq!(v["files"], 1);
    assert_eq!(v["operation"], "replace");
}
