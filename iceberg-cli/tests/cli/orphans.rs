//! `iceberg orphans`: files under a table that nothing of it refers to are listed once older
//! than the cut-off, deleted with `--delete`, and the table reads as before.

use std::collections::BTreeSet;

use crate::{Env, files_under};

#[test]
fn orphans_lists_and_deletes_only_unreferenced_files() {
    let env = Env::new();
    for i in 0..3 {
        let csv = env.write(&format!("r{i}.csv"), &format!("id\n{i}\n"));
        let mut args = vec!["append", "db.t", csv.to_str().unwrap()];
        if i == 0 {
            args.push("--create");
        }
        env.ok(&args);
    }
    let table = env.warehouse().join("db").join("t");
    let strays = [
        table.join("data").join("00000-crashed-writer.parquet"),
        table.join("metadata").join("abandoned-m0.avro"),
    ];
    for s in &strays {
        std::fs::write(s, b"PAR1").unwrap();
    }
    let before = files_under(&table);
    // Written just now: too new for the default 3 days.
    let v = env.json(&["orphans", "db.t"]);
    assert_eq!(v["orphans"].as_array().unwrap().len(), 0);
    assert_eq!(v["too_new"], 2);
    // Every file written before a time far ahead is old enough: exactly the strays.
    let v = env.json(&["orphans", "db.t", "--older-than", "2999-01-01"]);
    let found: BTreeSet<String> = v["orphans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap().to_string())
        .collect();
    let expected: BTreeSet<String> = strays
        .iter()
        .map(|p| format!("file://{}", std::fs::canonicalize(p).unwrap().display()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(files_under(&table), before, "listing deleted something");
    // Files younger than a day are a write in flight's unless the user says otherwise.
    for young in ["2999-01-01", "1h"] {
        let out = env.run(&["orphans", "db.t", "--older-than", young, "--delete"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--allow-recent"), "{err}");
    }
    assert_eq!(
        files_under(&table),
        before,
        "a refused delete deleted something"
    );
    let out = env.ok(&[
        "orphans",
        "db.t",
        "--older-than",
        "2999-01-01",
        "--delete",
        "--allow-recent",
    ]);
    assert!(out.contains("deleted 2 orphan file(s)"), "{out}");
    let after = files_under(&table);
    assert_eq!(before.difference(&after).count(), 2);
    assert!(strays.iter().all(|s| !s.exists()));
    let v = env.json(&["head", "db.t"]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 3, "{v}");
}
