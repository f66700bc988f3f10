//! `inspect`, `log` and `tree` (text, `--json` and `dot`).

use crate::{Env, fixtures};

fn two_appends(env: &Env) -> (i64, i64) {
    let csv = env.write("a.csv", fixtures::CSV);
    let json = env.write("b.ndjson", fixtures::NDJSON);
    let first = env.json(&[
        "append",
        "db.t",
        csv.to_str().unwrap(),
        "--create",
        "--partition",
        "day(ts)",
    ]);
    let second = env.json(&["append", "db.t", json.to_str().unwrap(), "--fast"]);
    (
        first["snapshot_id"].as_i64().unwrap(),
        second["snapshot_id"].as_i64().unwrap(),
    )
}

#[test]
fn inspect_files_shows_decoded_bounds() {
    let env = Env::new();
    two_appends(&env);
    let v = env.json(&["inspect", "db.t", "--files"]);
    let files = v["data_files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    let rows: i64 = files
        .iter()
        .map(|f| f["record_count"].as_i64().unwrap())
        .sum();
    assert_eq!(rows, 5);
    let day2 = files
        .iter()
        .find(|f| {
            f["file_path"]
                .as_str()
                .unwrap()
                .contains("ts_day=2024-01-02")
        })
        .unwrap();
    let id = &day2["columns"][0];
    assert_eq!(id["name"], "id");
    assert_eq!(
        (id["lower_bound"].clone(), id["upper_bound"].clone()),
        (2.into(), 3.into())
    );
    let ts = &day2["columns"][1];
    assert_eq!(ts["lower_bound"], "2024-01-02T11:00:00.000000");
    let name = &day2["columns"][2];
    assert_eq!(name["null_value_count"], 1);
    let text = env.ok(&["inspect", "db.t", "--files"]);
    assert!(
        text.contains("partitioned by: day(ts) as ts_day [1000]"),
        "{text}"
    );
    assert!(text.contains("lower 2024-01-02T11:00:00.000000"), "{text}");
}

#[test]
fn log_lists_snapshots_with_counts() {
    let env = Env::new();
    let (first, second) = two_appends(&env);
    let v = env.json(&["log", "db.t"]);
    let s = v["snapshots"].as_array().unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0]["snapshot_id"], first);
    assert_eq!(s[1]["parent_snapshot_id"], first);
    assert_eq!(s[1]["snapshot_id"], second);
    assert_eq!(s[1]["operation"], "append");
    assert_eq!(s[1]["added_records"], 2);
    assert_eq!(s[1]["total_records"], 5);
    assert_eq!(s[1]["total_data_files"], 3);
    let text = env.ok(&["log", "db.t"]);
    assert!(text.contains(&format!("* {second}")), "{text}");
}

#[test]
fn tree_of_a_chosen_snapshot_and_as_dot() {
    let env = Env::new();
    let (first, second) = two_appends(&env);
    let current = env.ok(&["tree", "db.t"]);
    assert!(current.contains(&format!("snapshot {second}")), "{current}");
    assert!(current.contains("[carried by reference;"), "{current}");
    let old = env.ok(&["tree", "db.t", "--snapshot", &first.to_string()]);
    assert!(old.contains(&format!("snapshot {first}")), "{old}");
    assert!(!old.contains("carried by reference"), "{old}");
    let dot = env.ok(&["tree", "db.t", "--dot"]);
    assert!(dot.starts_with("digraph iceberg {"), "{dot}");
    assert!(dot.contains("style=dashed"), "{dot}");
    assert!(dot.contains("style=\"filled,bold\""), "{dot}");
    assert!(dot.trim_end().ends_with('}'));
    let err = env.fail(&["tree", "db.t", "--snapshot", "42"]);
    assert!(err.contains("no snapshot 42"), "{err}");
    let v = env.json(&["tree", "db.t"]);
    assert_eq!(v["snapshot"]["snapshot_id"], second);
    let manifests = v["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 2, "{v}");
    let new: Vec<bool> = manifests
        .iter()
        .map(|m| m["new"].as_bool().unwrap())
        .collect();
    assert_eq!(new, [true, false], "new first, then the carried one: {v}");
    assert_eq!(manifests[0]["content"], "data");
    let files = manifests[0]["data_files"].as_array().unwrap();
    assert!(
        !files.is_empty() && files.iter().all(|f| f["new"] == true),
        "{v}"
    );
    assert!(
        manifests[1]["data_files"].as_array().unwrap().is_empty(),
        "carried ones are not opened"
    );
}
