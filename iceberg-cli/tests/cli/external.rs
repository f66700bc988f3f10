//! PyIceberg's `SqlCatalog` reads a table made by `iceberg create` + `iceberg append`.
//! Needs `ICEBERG_TEST_PYTHON` (a python with pyiceberg 0.12); prints a loud SKIPPED line
//! without it, and fails instead when `ICEBERG_TEST_REQUIRE_EXTERNAL` is set.

use std::process::Command;

use crate::{Env, fixtures};

const SCAN: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.events")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
print(json.dumps({"ids": [r["id"] for r in rows], "names": [r["name"] for r in rows],
                  "spec": str(t.spec()), "snapshots": len(t.snapshots())}))
"#;

#[test]
fn pyiceberg_reads_a_table_the_cli_made() {
    let Some(python) = crate::python("pyiceberg_reads_a_table_the_cli_made") else {
        return;
    };
    let env = Env::new();
    let csv = env.write("a.csv", fixtures::CSV);
    env.ok(&[
        "create",
        "db.events",
        "--schema-from",
        csv.to_str().unwrap(),
        "--partition",
        "day(ts)",
        "--partition",
        "bucket(4, id)",
    ]);
    let pq = fixtures::parquet(&env, "b.parquet", &[7, 8]);
    env.ok(&[
        "append",
        "db.events",
        csv.to_str().unwrap(),
        pq.to_str().unwrap(),
    ]);
    let wh = std::fs::canonicalize(env.warehouse()).unwrap();
    let v = crate::run_python(
        Command::new(python)
            .arg("-c")
            .arg(SCAN)
            .arg(wh.display().to_string()),
    );
    assert_eq!(v["ids"], serde_json::json!([1, 2, 3, 7, 8]));
    assert_eq!(v["names"][1], serde_json::Value::Null);
    assert_eq!(v["snapshots"], 1);
    assert!(v["spec"].as_str().unwrap().contains("day"), "{v}");
}
