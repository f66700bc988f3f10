//! `iceberg add-files`: existing Parquet registered in place, bad files refused with the
//! table unchanged, and (with PyIceberg) pyarrow's plain and Hive-partitioned files read back.

use std::process::Command;

use crate::{Env, fixtures};

#[test]
fn add_files_registers_files_in_place_and_refuses_bad_ones() {
    let env = Env::new();
    let a = fixtures::parquet(&env, "a.parquet", &[1, 2, 3]);
    let b = fixtures::parquet(&env, "b.parquet", &[4, 5]);
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    // --create makes the table from the files' columns; the files stay where they are.
    let v = env.json(&["add-files", "db.t", a_s, "--create"]);
    assert_eq!(v["created"], true);
    assert_eq!(v["added_records"], 3);
    assert_eq!(v["name_mapping_added"], true);
    let uri = format!("file://{}", std::fs::canonicalize(&a).unwrap().display());
    assert_eq!(v["data_files"], serde_json::json!([uri]));
    assert!(a.exists());
    let before = env.state("db.t");
    assert!(
        before.2.is_empty(),
        "nothing is written under the table: {:?}",
        before.2
    );

    // The same file again, a file named twice, a text file, a missing file: refused, the
    // table unchanged, the files untouched.
    let err = env.fail(&["add-files", "db.t", b_s, a_s]);
    assert!(err.contains("already a data file"), "{err}");
    let err = env.fail(&["add-files", "db.t", b_s, b_s]);
    assert!(
        err.contains("named twice") || err.contains("given twice"),
        "{err}"
    );
    let notes = env.write("notes.parquet", "not parquet at all");
    let err = env.fail(&["add-files", "db.t", notes.to_str().unwrap()]);
    assert!(err.contains("not a readable Parquet file"), "{err}");
    let text_id = fixtures::parquet_with_text_id(&env, "text.parquet");
    let err = env.fail(&["add-files", "db.t", text_id.to_str().unwrap()]);
    assert!(
        err.contains("column `id`") && err.contains("text.parquet"),
        "{err}"
    );
    assert_eq!(env.state("db.t").1, before.1);
    assert!(a.exists() && b.exists() && notes.exists() && text_id.exists());

    // A dry run reads and checks, and commits nothing.
    let out = env.ok(&["add-files", "db.t", b_s, "--dry-run"]);
    assert!(out.contains("would add 1 file(s), 2 rows"), "{out}");
    assert_eq!(env.state("db.t").1, before.1);
    let v = env.json(&["add-files", "db.t", b_s]);
    assert_eq!(v["added_records"], 2);
    assert_eq!(v["name_mapping_added"], false);
    assert_eq!(crate::total_records(&env, "db.t"), 5);

    // A failed --create leaves no table behind.
    let err = env.fail(&["add-files", "db.u", a_s, "--create", "--partition", "id"]);
    assert!(
        err.contains("spans partitions") && err.contains("nothing was committed"),
        "{err}"
    );
    let err = env.fail(&["inspect", "db.u"]);
    assert!(err.contains("does not exist"), "{err}");
    assert!(a.exists());
}

const WRITE: &str = r#"
import sys
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.dataset as ds
out = sys.argv[1]
n = 3000
t = pa.table({
    "id": pa.array(range(n), pa.int64()),
    "name": pa.array([f"name {i:05}" if i % 5 else None for i in range(n)]),
    "category": pa.array([i % 4 for i in range(n)], pa.int32()),
    "ts": pa.array([1_700_000_000_000_000 + i * 1_000_000 for i in range(n)], pa.timestamp("us", tz="UTC")),
})
pq.write_table(t, f"{out}/plain/part-0.parquet", row_group_size=1000)
ds.write_dataset(t, f"{out}/hive", format="parquet", partitioning=["category"],
                 partitioning_flavor="hive")
"#;

const READ: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
out = {}
for name in ["db.plain", "db.hive", "db.hive_created"]:
    t = cat.load_table(name)
    rows = t.scan().to_arrow().sort_by("id").to_pylist()
    three = t.scan(row_filter="category == 3")
    out[name] = {
        "rows": [[r["id"], r["name"], r["category"], r["ts"].isoformat()] for r in rows],
        "files": len(list(t.scan().plan_files())),
        "files_for_3": len(list(three.plan_files())),
        "rows_for_3": three.to_arrow().num_rows,
        "mapping": "schema.name-mapping.default" in t.properties,
        "schema": [[f.name, str(f.field_type)] for f in t.schema().fields],
        "spec": str(t.spec()),
    }
print(json.dumps(out))
"#;

/// pyarrow's own files (no field ids; one plain, four Hive folders without the partition
/// column) added in place read back in PyIceberg row for row, and the partition filter
/// prunes to the one folder.
#[test]
fn pyiceberg_reads_pyarrow_files_added_in_place() {
    let Some(python) = crate::python("pyiceberg_reads_pyarrow_files_added_in_place") else {
        return;
    };
    let env = Env::new();
    let dir = std::fs::canonicalize(env.path("")).unwrap();
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    let status = Command::new(&python)
        .arg("-c")
        .arg(WRITE)
        .arg(dir.display().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let plain = dir.join("plain/part-0.parquet");
    let plain = plain.to_str().unwrap();
    env.ok(&["add-files", "db.plain", plain, "--create"]);
    env.ok(&[
        "create",
        "db.hive",
        "--schema-from",
        plain,
        "--partition",
        "category",
    ]);
    let hive = dir.join("hive");
    let out = env.ok(&[
        "add-files",
        "db.hive",
        hive.to_str().unwrap(),
        "--hive-partitioning",
    ]);
    assert!(out.contains("added 4 existing file(s), 3000 rows"), "{out}");
    // The folders alone define the table: `category`, absent from the files, an int column
    // partitioned by identity.
    let out = env.ok(&[
        "add-files",
        "db.hive_created",
        hive.to_str().unwrap(),
        "--hive-partitioning",
        "--create",
    ]);
    assert!(out.contains("added 4 existing file(s), 3000 rows"), "{out}");
    let v = crate::python_on_warehouse(python, READ, &env);
    let plain_rows = &v["db.plain"]["rows"];
    assert_eq!(plain_rows.as_array().unwrap().len(), 3000);
    assert_eq!(v["db.hive"]["rows"], *plain_rows);
    assert_eq!(
        plain_rows[7],
        serde_json::json!([7, "name 00007", 3, "2023-11-14T22:13:27+00:00"])
    );
    assert_eq!(plain_rows[5][1], serde_json::Value::Null);
    assert_eq!(v["db.hive"]["files"], 4);
    assert_eq!(v["db.hive"]["files_for_3"], 1);
    assert_eq!(v["db.hive"]["rows_for_3"], 750);
    assert_eq!(v["db.hive"]["mapping"], true);
    let created = &v["db.hive_created"];
    assert_eq!(created["rows"], *plain_rows);
    assert_eq!(created["files_for_3"], 1);
    assert_eq!(created["rows_for_3"], 750);
    assert_eq!(
        created["schema"],
        serde_json::json!([
            ["id", "long"],
            ["name", "string"],
            ["ts", "timestamptz"],
            ["category", "int"]
        ])
    );
    assert!(
        created["spec"].as_str().unwrap().contains("category"),
        "{created}"
    );
    // Unpartitioned, the one file holds every category; its bounds still prune nothing.
    assert_eq!(v["db.plain"]["files"], 1);
    assert_eq!(v["db.plain"]["rows_for_3"], 750);
}
