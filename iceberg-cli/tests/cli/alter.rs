//! `iceberg alter`: schema and property changes in a new metadata file; the data stays and
//! reads by field id (renamed columns keep their values, dropped ones vanish, added ones are
//! null in old files); refused changes name the column and leave the table as it was.

use crate::{Env, pyiceberg_read};

fn field_names(env: &Env, table: &str) -> Vec<(i64, String, String)> {
    env.json(&["schema", table])["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn alter_changes_the_schema_and_the_data_reads_by_id() {
    let env = Env::new();
    let a = env.write("a.csv", "id,name,qty,junk\n1,ann,5,x\n2,bob,6,y\n");
    env.ok(&[
        "append",
        "db.t",
        a.to_str().unwrap(),
        "--create",
        "--column",
        "qty=int",
    ]);
    let before = env.json(&["inspect", "db.t"]);
    let out = env.ok(&["alter", "db.t", "rename-column", "name", "who"]);
    assert!(out.contains("renamed `name` to `who`"), "{out}");
    env.ok(&["alter", "db.t", "widen-column", "qty", "long"]);
    env.ok(&["alter", "db.t", "drop-column", "junk"]);
    let v = env.json(&[
        "alter",
        "db.t",
        "add-column",
        "note",
        "string",
        "--after",
        "id",
        "--doc",
        "free text",
    ]);
    assert_eq!(v["changes"][0], "added `note` (id 5)");
    assert_eq!(v["schema_id"], 4);
    env.ok(&[
        "alter",
        "db.t",
        "set-property",
        "owner=ingest",
        "write.parquet.compression-codec=snappy",
    ]);
    env.ok(&["alter", "db.t", "unset-property", "owner"]);
    assert_eq!(
        field_names(&env, "db.t"),
        [
            (1, "id".into(), "long".into()),
            (5, "note".into(), "string".into()),
            (2, "who".into(), "string".into()),
            (3, "qty".into(), "long".into()),
        ]
    );
    let after = env.json(&["inspect", "db.t"]);
    assert_eq!(
        after["snapshots"], before["snapshots"],
        "no snapshot was made"
    );
    assert_eq!(
        after["schemas"].as_array().unwrap().len(),
        5,
        "every schema kept"
    );
    assert_eq!(
        after["properties"]["write.parquet.compression-codec"],
        "snappy"
    );
    assert!(after["properties"].get("owner").is_none());
    let text = env.ok(&["inspect", "db.t"]);
    assert!(
        text.contains("older schema (id 0): id, name, qty, junk"),
        "{text}"
    );

    // New rows under the new schema, old rows by id.
    let b = env.write("b.csv", "id,note,who,qty\n3,hi,cy,8000000000\n");
    env.ok(&["append", "db.t", b.to_str().unwrap()]);
    if let Some(v) = pyiceberg_read(&env, "db.t") {
        let rows = v["rows"].as_array().unwrap();
        let row = |id: i64| rows.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(row(1)["who"], "ann", "a renamed column keeps its data");
        assert!(row(1)["note"].is_null());
        assert!(row(1).get("junk").is_none(), "a dropped column is gone");
        assert_eq!(row(2)["qty"], 6);
        assert_eq!(row(3)["qty"], 8_000_000_000i64);
        assert_eq!(v["types"]["qty"], "long");
    }
}

#[test]
fn refused_alters_name_the_column_and_change_nothing() {
    let env = Env::new();
    let a = env.write("a.csv", "id,day,v\n1,2024-01-01,x\n");
    env.ok(&[
        "append",
        "db.t",
        a.to_str().unwrap(),
        "--create",
        "--partition",
        "day",
    ]);
    let before = env.state("db.t");
    for (args, named) in [
        (vec!["drop-column", "day"], "`day`"),
        (vec!["drop-column", "nope"], "`nope`"),
        (vec!["widen-column", "v", "int"], "`v`"),
        (vec!["rename-column", "v", "id"], "`id`"),
        (vec!["add-column", "id", "int"], "`id`"),
        (vec!["add-column", "v.x", "int"], "`v`"),
        (
            vec!["add-column", "n", "int", "--default", "1"],
            "column `n` with a default requires format version 3",
        ),
        (vec!["set-property", "format-version=3"], "format-version"),
        (
            vec!["set-property", "s3.secret-access-key=abc"],
            "credential",
        ),
        (
            vec!["set-property", "commit.retry.num-retries=many"],
            "commit.retry.num-retries",
        ),
        (vec!["widen-column", "id", "long"], "nothing to change"),
    ] {
        let mut full = vec!["alter", "db.t"];
        full.extend(&args);
        let out = env.run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}: a bad argument");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(named), "{args:?}: {err}");
    }
    assert_eq!(env.state("db.t"), before, "nothing changed");
}

#[test]
fn partition_fields_evolve_and_old_files_keep_their_spec() {
    let env = Env::new();
    let a = env.write(
        "a.csv",
        "id,ts\n1,2024-01-01T10:00:00Z\n2,2024-01-02T10:00:00Z\n",
    );
    env.ok(&[
        "append",
        "db.t",
        a.to_str().unwrap(),
        "--create",
        "--partition",
        "day(ts)",
    ]);
    let v = env.json(&["alter", "db.t", "add-partition-field", "bucket(4, id)"]);
    assert_eq!(v["spec_id"], 1);
    assert_eq!(v["changes"][0], "added partition field bucket(4, id)");
    env.ok(&["alter", "db.t", "drop-partition-field", "ts_day"]);
    env.ok(&[
        "alter",
        "db.t",
        "rename-partition-field",
        "id_bucket_4",
        "b",
    ]);
    let b = env.write(
        "b.csv",
        "id,ts\n3,2024-01-03T10:00:00Z\n4,2024-01-03T11:00:00Z\n",
    );
    env.ok(&["append", "db.t", b.to_str().unwrap()]);

    let inspect = env.json(&["inspect", "db.t", "--files"]);
    let specs = inspect["partition_specs"].as_array().unwrap();
    assert_eq!(specs.len(), 4, "{specs:?}");
    let files = inspect["data_files"].as_array().unwrap();
    let spec_ids: std::collections::BTreeSet<i64> = files
        .iter()
        .map(|f| f["spec_id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        spec_ids,
        [0, 3].into(),
        "old files keep spec 0, new ones get the default"
    );
    let text = env.ok(&["inspect", "db.t"]);
    assert!(
        text.contains("partitioned by: bucket(4, id) as b"),
        "{text}"
    );
    assert!(
        text.contains("older spec (id 0): day(ts) as ts_day"),
        "{text}"
    );

    // Refusals name the field and change nothing.
    let before = env.state("db.t");
    for (args, named) in [
        (
            vec!["add-partition-field", "bucket(4, id)"],
            "already has it",
        ),
        (vec!["add-partition-field", "day(nope)"], "`nope`"),
        (vec!["drop-partition-field", "ts_day"], "`ts_day`"),
        (vec!["add-partition-field", "frobnicate(id)"], "frobnicate"),
    ] {
        let mut full = vec!["alter", "db.t"];
        full.extend(&args);
        let out = env.run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(named), "{args:?}: {err}");
    }
    assert_eq!(env.state("db.t"), before, "nothing changed");

    if let Some(v) = pyiceberg_read(&env, "db.t") {
        let ids: Vec<i64> = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [1, 2, 3, 4]);
    }
}

#[test]
fn a_new_sort_order_sorts_the_next_files() {
    let env = Env::new();
    let a = env.write("a.csv", "id,v\n3,c\n1,a\n2,b\n");
    env.ok(&["append", "db.t", a.to_str().unwrap(), "--create"]);
    let v = env.json(&["alter", "db.t", "set-sort", "id desc"]);
    assert_eq!(v["sort_order_id"], 1);
    let b = env.write("b.csv", "id,v\n4,d\n6,f\n5,e\n");
    env.ok(&["append", "db.t", b.to_str().unwrap()]);
    let inspect = env.json(&["inspect", "db.t", "--files"]);
    let mut orders: Vec<Option<i64>> = inspect["data_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sort_order_id"].as_i64())
        .collect();
    orders.sort();
    assert_eq!(
        orders,
        [None, Some(1)],
        "the new file records the new order; unsorted files record none"
    );
    // No keys: unsorted again (id 0); the same order again reuses its id.
    assert_eq!(env.json(&["alter", "db.t", "set-sort"])["sort_order_id"], 0);
    assert_eq!(
        env.json(&["alter", "db.t", "set-sort", "id desc"])["sort_order_id"],
        1
    );
    let out = env.run(&["alter", "db.t", "set-sort", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}
