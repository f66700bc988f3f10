//! `iceberg append`: each format, globs, `--create`, modes, and bad inputs that must leave
//! the table exactly as it was.

use crate::{Env, fixtures, total_records};

fn create_events(env: &Env) {
    let csv = env.write("schema.csv", fixtures::CSV);
    env.ok(&[
        "create",
        "db.events",
        "--schema-from",
        csv.to_str().unwrap(),
        "--partition",
        "day(ts)",
    ]);
}

#[test]
fn append_each_format_in_one_commit() {
    let env = Env::new();
    create_events(&env);
    let csv = env.write("a.csv", fixtures::CSV);
    let json = env.write("b.ndjson", fixtures::NDJSON);
    let pq = fixtures::parquet(&env, "c.parquet", &[10, 11, 12, 13]);
    let ipc = env.path("d.arrow");
    fixtures::write_ipc(
        &ipc,
        &[fixtures::events(&[20, 21]), fixtures::events(&[22])],
    );
    let tsv = env.write("e.tsv", "id\tname\n30\tt\n");
    let v = env.json(&[
        "append",
        "db.events",
        csv.to_str().unwrap(),
        json.to_str().unwrap(),
        pq.to_str().unwrap(),
        ipc.to_str().unwrap(),
        tsv.to_str().unwrap(),
        "--batch-size",
        "2",
    ]);
    assert_eq!(v["added_records"], 3 + 2 + 4 + 3 + 1);
    assert_eq!(v["input_files"], 5);
    assert!(v["snapshot_id"].is_i64());
    assert_eq!(total_records(&env, "db.events"), 13);
    let log = env.json(&["log", "db.events"]);
    assert_eq!(log["snapshots"].as_array().unwrap().len(), 1, "one commit");
    // Text output names the snapshot and counts.
    let out = env.ok(&["append", "db.events", pq.to_str().unwrap()]);
    assert!(
        out.starts_with("snapshot ") && out.contains("added 4 rows"),
        "{out}"
    );
}

#[test]
fn append_create_from_a_glob_with_custom_delimiter() {
    let env = Env::new();
    std::fs::create_dir(env.path("in")).unwrap();
    env.write("in/1.csv", "id;name\n1;a\n2;b\n");
    env.write("in/2.csv", "id;name\n3;c\n");
    let pattern = env.path("in").join("*.csv");
    let v = env.json(&[
        "append",
        "new.table",
        pattern.to_str().unwrap(),
        "--create",
        "--delimiter",
        ";",
        "--partition",
        "bucket(4, id)",
    ]);
    assert_eq!(v["created"], true);
    assert_eq!(v["added_records"], 3);
    assert_eq!(v["input_files"], 2);
    let err = env.fail(&["append", "other.table", pattern.to_str().unwrap()]);
    assert!(err.contains("--create"), "{err}");
    let err = env.fail(&[
        "append",
        "new.table",
        env.path("none*.csv").to_str().unwrap(),
    ]);
    assert!(err.contains("matches no file"), "{err}");
}

#[test]
fn append_merge_and_fast_modes() {
    let env = Env::new();
    let pq = fixtures::parquet(&env, "c.parquet", &[1, 2]);
    let p = pq.to_str().unwrap();
    env.ok(&[
        "create",
        "db.events",
        "--schema-from",
        p,
        "--property",
        "commit.manifest.min-count-to-merge=2",
    ]);
    for _ in 0..3 {
        env.ok(&["append", "db.events", p, "--fast"]);
    }
    env.ok(&["append", "db.events", p, "--merge"]);
    assert_eq!(total_records(&env, "db.events"), 8);
    let tree = env.ok(&["tree", "db.events"]);
    assert!(
        !tree.contains("carried by reference;"),
        "merge folds everything: {tree}"
    );
    let err = env.fail(&["append", "db.events", p, "--merge", "--fast"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

/// Runs a failing append and checks the table did not change.
fn refused(env: &Env, file: &std::path::Path, wants: &[&str]) {
    let before = env.state("db.events");
    let err = env.fail(&["append", "db.events", file.to_str().unwrap()]);
    for w in wants {
        assert!(err.contains(w), "wanted `{w}` in: {err}");
    }
    assert!(
        err.contains("nothing was committed") || err.contains("cannot"),
        "{err}"
    );
    assert_eq!(env.state("db.events"), before, "table changed after: {err}");
}

#[test]
fn bad_inputs_commit_nothing_and_leave_no_files() {
    let env = Env::new();
    create_events(&env);
    let good = fixtures::parquet(&env, "good.parquet", &[1, 2, 3]);
    env.ok(&["append", "db.events", good.to_str().unwrap()]);

    let mismatch = fixtures::parquet_with_text_id(&env, "text_id.parquet");
    refused(
        &env,
        &mismatch,
        &["text_id.parquet", "column `id`", "long", "Utf8"],
    );

    let bad_csv = env.write("bad.csv", "id,name\n1,a\n2,b\nzz,c\n");
    refused(
        &env,
        &bad_csv,
        &["bad.csv", "column `id` (line 4)", "expected long", "\"zz\""],
    );

    let unknown = env.write("unknown.csv", "id,colour\n1,red\n");
    refused(
        &env,
        &unknown,
        &["unknown.csv", "`colour`", "not in the table schema"],
    );

    let bad_json = env.write("bad.ndjson", "{\"id\": 1}\n{\"id\": \"nope\"}\n");
    refused(&env, &bad_json, &["bad.ndjson", "id"]);

    let garbage = env.write("garbage.parquet", "this is not parquet");
    refused(&env, &garbage, &["garbage.parquet", "not a Parquet file"]);

    // A good file first, then a bad one: the good file's data is deleted too.
    let before = env.state("db.events");
    let err = env.fail(&[
        "append",
        "db.events",
        good.to_str().unwrap(),
        mismatch.to_str().unwrap(),
    ]);
    assert!(err.contains("text_id.parquet"), "{err}");
    assert_eq!(env.state("db.events"), before);
}

#[test]
fn null_in_a_required_column_is_refused() {
    let env = Env::new();
    let schema = env.write(
        "schema.json",
        r#"{"type": "struct", "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "name", "required": false, "type": "string"}]}"#,
    );
    env.ok(&[
        "create",
        "db.events",
        "--schema-from",
        schema.to_str().unwrap(),
    ]);
    let csv = env.write("nulls.csv", "id,name\n1,a\n,b\n");
    refused(
        &env,
        &csv,
        &["nulls.csv", "column `id` is required", "1 null"],
    );
}

#[test]
fn failed_append_create_leaves_no_table() {
    let env = Env::new();
    let good = env.write("a.csv", fixtures::CSV);
    // Text inputs are inferred together (a text id in one makes the column a string), so
    // the second input that fails is one that says its own types.
    let bad = fixtures::parquet_with_text_id(&env, "b.parquet");
    let err = env.fail(&[
        "append",
        "fresh.t",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--create",
    ]);
    assert!(
        err.contains("b.parquet") && err.contains("column `id`"),
        "{err}"
    );
    let err = env.fail(&["inspect", "fresh.t"]);
    assert!(err.contains("does not exist"), "{err}");
    assert!(crate::files_under(&env.warehouse().join("fresh")).is_empty());
}

/// Scripts tell failures apart by exit status, and by the `--json` error object on stderr.
#[test]
fn errors_have_a_kind_and_an_exit_status() {
    let env = Env::new();
    create_events(&env);
    let good = fixtures::parquet(&env, "good.parquet", &[1]);
    let good = good.to_str().unwrap();
    let status = |args: &[&str]| env.run(args).status.code();
    assert_eq!(status(&["append", "no_namespace", good]), Some(2), "usage");
    assert_eq!(
        status(&["append", "db.events", good, "--delimiter", ";;"]),
        Some(2)
    );
    assert_eq!(status(&["append", "db.missing", good]), Some(4), "table");
    assert_eq!(
        status(&["append", "db.events", "nothing-*.csv"]),
        Some(3),
        "input"
    );

    let bad = env.write("bad.csv", "id,name\n1,a\nzz,c\n");
    let before = env.state("db.events");
    let out = env.run(&["--json", "append", "db.events", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let last = stderr.lines().last().unwrap_or_default();
    let err: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(err["error"]["kind"], "input", "{stderr}");
    assert_eq!(err["error"]["exit_status"], 3);
    let message = err["error"]["message"].as_str().unwrap();
    assert!(message.contains("bad.csv") && message.contains("nothing was committed"));
    assert_eq!(env.state("db.events"), before);
}

/// On a terminal `append` shows its progress (bytes read of the total, rows, rows/s and the
/// file) and clears it at the end; piped, it shows none.
#[test]
fn progress_on_a_terminal_and_none_when_piped() {
    let env = Env::new();
    let mut text = String::from("id,name\n");
    for i in 0..100_000 {
        text.push_str(&format!("{i},n{}\n", i % 97));
    }
    let csv = env.write("many.csv", &text);
    let csv = csv.to_str().unwrap();
    let out = env.run(&[
        "append",
        "db.piped",
        csv,
        "--create",
        "--batch-size",
        "2000",
    ]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("rows/s"));
    // util-linux `script` runs the command on a pseudo-terminal and records its screen.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("\n*** SKIPPED the terminal half: no `script` (util-linux) on PATH ***\n");
        return;
    }
    let command = format!(
        "'{}' --warehouse '{}' append db.tty '{csv}' --create --batch-size 2000",
        env!("CARGO_BIN_EXE_iceberg"),
        env.warehouse().display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains(" rows/s "), "{screen}");
    assert!(screen.contains("many.csv"), "{screen}");
    assert!(screen.contains("KiB/"), "bytes read of the total: {screen}");
    assert!(screen.contains("added 100000 rows"), "{screen}");
    assert_eq!(total_records(&env, "db.tty"), 100_000);
}

/// Options that only shape a new table are refused on an existing one (they used to be
/// accepted and ignored), naming each; the table is unchanged. `--partition` takes a comma
/// list, as `--sort` does.
#[test]
fn creation_options_on_an_existing_table_are_refused_and_partitions_take_a_comma_list() {
    let env = Env::new();
    let csv = env.write("a.csv", fixtures::CSV);
    let c = csv.to_str().unwrap();
    env.ok(&[
        "append",
        "--create",
        "db.t",
        c,
        "--partition",
        "day(ts), bucket(4, id)",
    ]);
    let spec = &env.json(&["inspect", "db.t"])["partition_spec"];
    let text = spec.to_string();
    assert!(
        text.contains("day") && text.contains("bucket[4]"),
        "two partition fields: {text}"
    );
    let before = env.state("db.t");
    for (args, named) in [
        (vec!["--partition", "id"], "--partition"),
        (vec!["--sort", "id"], "--sort"),
        (vec!["--format-version", "2"], "--format-version"),
        (vec!["--table-property", "a=b"], "--table-property"),
        (vec!["--schema-from", c], "--schema-from"),
    ] {
        let mut all = vec!["append", "db.t", c];
        all.extend(args);
        let out = env.run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named) && err.contains("exists"), "{err}");
    }
    assert_eq!(env.state("db.t"), before, "nothing changed");
    env.ok(&["append", "db.t", c]);
}
