//! `list`, `namespace`, `drop`, `rename`, `schema` and `head`, in text and `--json`, and
//! names that are nearly right.

use crate::{Env, files_under, fixtures};

#[test]
fn list_rename_drop_and_namespaces() {
    let env = Env::new();
    let pq = fixtures::parquet(&env, "a.parquet", &[1, 2, 3]);
    let p = pq.to_str().unwrap();
    let err = env.fail(&["list"]);
    assert!(err.contains("does not exist"), "no warehouse yet: {err}");
    env.ok(&["namespace", "create", "empty", "--property", "owner=me"]);
    assert_eq!(env.ok(&["list", "empty"]).trim(), "(nothing here)");
    env.ok(&["append", "db.events", p, "--create"]);
    env.ok(&["create", "db.other", "--schema-from", p]);
    let v = env.json(&["list"]);
    assert_eq!(v["namespaces"], serde_json::json!(["db", "empty"]));
    assert_eq!(v["tables"], serde_json::json!(["db.events", "db.other"]));
    let text = env.ok(&["list", "db"]);
    assert_eq!(text.lines().collect::<Vec<_>>(), ["db.events", "db.other"]);
    let err = env.fail(&["namespace", "create", "empty"]);
    assert!(err.contains("already exists"), "{err}");
    let err = env.fail(&["list", "dv"]);
    assert!(
        err.contains("namespace `dv` does not exist") && err.contains("`db`"),
        "{err}"
    );

    // Nearly right names get the nearest ones.
    let err = env.fail(&["inspect", "db.evnts"]);
    assert!(err.contains("did you mean `db.events`?"), "{err}");
    let err = env.fail(&["append", "db.event", p]);
    assert!(
        err.contains("`db.events`") && err.contains("--create"),
        "{err}"
    );

    env.ok(&["rename", "db.other", "empty.moved"]);
    let err = env.fail(&["rename", "db.events", "empty.moved"]);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(
        env.json(&["list", "empty"])["tables"],
        serde_json::json!(["empty.moved"])
    );
    let err = env.fail(&["namespace", "drop", "empty"]);
    assert!(err.contains("empty") && err.contains("not empty"), "{err}");

    let data = env.warehouse().join("db").join("events");
    assert!(!files_under(&data).is_empty());
    let out = env.ok(&["drop", "db.events", "--purge"]);
    assert!(out.contains("deleted its files"), "{out}");
    assert!(files_under(&data).is_empty(), "purged");
    env.ok(&["drop", "empty.moved"]);
    env.ok(&["namespace", "drop", "empty"]);
    assert_eq!(env.json(&["list"])["namespaces"], serde_json::json!(["db"]));
}

#[test]
fn schema_and_head_show_the_current_snapshot() {
    let env = Env::new();
    let csv = env.write(
        "a.csv",
        "id,name,at\n1,a,2024-01-01T00:00:00Z\n2,,2024-01-02T00:00:00Z\n3,c,2024-01-03T00:00:00Z\n",
    );
    env.ok(&["append", "db.t", csv.to_str().unwrap(), "--create"]);
    let text = env.ok(&["schema", "db.t"]);
    assert!(
        text.contains("1 id: long") && text.contains("3 at: timestamptz"),
        "{text}"
    );
    assert_eq!(env.json(&["schema", "db.t"])["fields"][1]["name"], "name");

    let text = env.ok(&["head", "db.t", "-n", "2"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "header and two rows: {text}");
    assert!(lines[0].starts_with("id  name  at"), "{text}");
    assert!(
        lines[2].contains("null") && lines[2].contains("2024-01-02T00:00:00"),
        "{text}"
    );
    let v = env.json(&["head", "db.t"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["id"], 1);
    assert_eq!(
        rows[1].get("name"),
        None,
        "a null is left out by arrow's JSON writer"
    );

    env.ok(&["create", "db.empty", "--schema-from", csv.to_str().unwrap()]);
    assert!(env.ok(&["head", "db.empty"]).contains("(no rows)"));
}
