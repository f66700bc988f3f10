//! PyIceberg's `SqlCatalog` reads a table made by `iceberg create` + `iceberg append`.
//! Needs `ICEBERG_TEST_PYTHON` (a python with pyiceberg 0.12); prints a loud SKIPPED line
//! without it, and fails instead when `ICEBERG_TEST_REQUIRE_EXTERNAL` is set.

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
    let v = crate::python_on_warehouse(python, SCAN, &env);
    assert_eq!(v["ids"], serde_json::json!([1, 2, 3, 7, 8]));
    assert_eq!(v["names"][1], serde_json::Value::Null);
    assert_eq!(v["snapshots"], 1);
    assert!(v["spec"].as_str().unwrap().contains("day"), "{v}");
}

const PLAIN_SCAN: &str = r#"
import json, sys
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.plain")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
files = [task.file.file_path for task in t.scan().plan_files()]
dicts = {}
for f in files:
    md = pq.ParquetFile(f.removeprefix("file://")).metadata
    for c in range(md.num_columns):
        col = md.row_group(0).column(c)
        dicts[col.path_in_schema] = col.has_dictionary_page
print(json.dumps({"rows": rows, "dictionaries": dicts}))
"#;

/// A file whose distinct columns the writer wrote plain (and its repeating one with a
/// dictionary) reads back in PyIceberg value for value.
#[test]
fn pyiceberg_reads_columns_written_plain() {
    let Some(python) = crate::python("pyiceberg_reads_columns_written_plain") else {
        return;
    };
    let env = Env::new();
    let mut csv = String::from("id,text,kind\n");
    for i in 0..3000 {
        csv.push_str(&format!("{i},text {i:05},k{}\n", i % 7));
    }
    let path = env.write("plain.csv", &csv);
    env.ok(&["append", "db.plain", path.to_str().unwrap(), "--create"]);
    let v = crate::python_on_warehouse(python, PLAIN_SCAN, &env);
    assert_eq!(
        v["dictionaries"],
        serde_json::json!({"id": false, "text": false, "kind": true})
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3000);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["id"], i as i64);
        assert_eq!(row["text"], format!("text {i:05}"));
        assert_eq!(row["kind"], format!("k{}", i % 7));
    }
}
