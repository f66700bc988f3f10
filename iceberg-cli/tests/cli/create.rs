//! `iceberg create`: schemas from data files and schema JSON, partition and sort syntax.

use crate::{Env, files_under, fixtures};

#[test]
fn create_from_csv_with_partition_sort_version_and_properties() {
    let env = Env::new();
    let csv = env.write("a.csv", fixtures::CSV);
    let v = env.json(&[
        "create",
        "db.events",
        "--schema-from",
        csv.to_str().unwrap(),
        "--partition",
        "day(ts)",
        "--partition",
        "bucket(16, id)",
        "--sort",
        "ts desc nulls last",
        "--format-version",
        "3",
        "--property",
        "commit.retry.num-retries=7",
    ]);
    assert_eq!(v["format_version"], 3);
    let fields = v["schema"]["fields"].as_array().unwrap();
    let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["id", "ts", "name", "amount"]);
    assert_eq!(fields[0]["id"], 1);
    assert_eq!(fields[1]["type"], "timestamp");
    let spec: Vec<&str> = v["partition_spec"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(spec, ["ts_day", "id_bucket"]);
    assert_eq!(v["sort_order"]["fields"][0]["direction"], "desc");
    let inspect = env.json(&["inspect", "db.events"]);
    assert_eq!(inspect["properties"]["commit.retry.num-retries"], "7");
    // The same name twice is refused.
    let err = env.fail(&[
        "create",
        "db.events",
        "--schema-from",
        csv.to_str().unwrap(),
    ]);
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn create_from_parquet_assigns_ids_top_level_first() {
    let env = Env::new();
    let p = fixtures::nested_parquet(&env, "n.parquet");
    let v = env.json(&[
        "create",
        "db.nested",
        "--schema-from",
        p.to_str().unwrap(),
        "--partition",
        "st.x",
    ]);
    let f = &v["schema"]["fields"];
    assert_eq!(
        (f[0]["id"].clone(), f[1]["id"].clone(), f[2]["id"].clone()),
        (1.into(), 2.into(), 3.into())
    );
    assert_eq!(f[0]["required"], true);
    assert_eq!(f[1]["type"]["fields"][0]["id"], 4);
    assert_eq!(f[1]["type"]["fields"][0]["required"], true);
    assert_eq!(f[1]["type"]["fields"][1]["id"], 5);
    assert_eq!(v["partition_spec"]["fields"][0]["source-id"], 4);
}

#[test]
fn create_from_iceberg_schema_json_keeps_ids() {
    let env = Env::new();
    let schema = env.write(
        "schema.json",
        r#"{"type": "struct", "schema-id": 0, "fields": [
            {"id": 10, "name": "id", "required": true, "type": "long"},
            {"id": 11, "name": "ts", "required": false, "type": "timestamptz"}]}"#,
    );
    let v = env.json(&[
        "create",
        "db.js",
        "--schema-from",
        schema.to_str().unwrap(),
        "--partition",
        "hour(ts)",
    ]);
    assert_eq!(v["schema"]["fields"][0]["id"], 10);
    assert_eq!(v["partition_spec"]["fields"][0]["name"], "ts_hour");
}

#[test]
fn create_errors_point_at_the_offending_part() {
    let env = Env::new();
    let csv = env.write("a.csv", fixtures::CSV);
    let c = csv.to_str().unwrap();
    let cases = [
        (
            "bucket(x, id)",
            "bucket(x, id)`: `x` is not an integer in 1..=2147483647",
        ),
        ("day(nope)", "no column `nope`"),
        (
            "day(name)",
            "cannot be applied to column `name` of type string",
        ),
        ("dya(ts)", "unknown transform `dya`"),
    ];
    for (expr, want) in cases {
        let err = env.fail(&["create", "db.t", "--schema-from", c, "--partition", expr]);
        assert!(err.contains(want), "{expr}: {err}");
    }
    let err = env.fail(&[
        "create",
        "db.t",
        "--schema-from",
        c,
        "--sort",
        "ts sideways",
    ]);
    assert!(err.contains("`sideways`"), "{err}");
    let err = env.fail(&["create", "notable", "--schema-from", c]);
    assert!(err.contains("namespace.table"), "{err}");
    // Nothing was created by the failures.
    let err = env.fail(&["inspect", "db.t"]);
    assert!(err.contains("does not exist"), "{err}");
}

/// A credential given as a table property is refused (exit 2) with a message saying where it
/// goes, whichever spelling, for `create` and `append --create`: nothing is created and the
/// secret is in no file under the warehouse.
#[test]
fn credentials_are_refused_as_table_properties_and_never_written() {
    let env = Env::new();
    let input = fixtures::parquet(&env, "a.parquet", &[1, 2, 3]);
    let p = input.to_str().unwrap();
    let cases: [&[&str]; 3] = [
        &[
            "create",
            "db.t",
            "--schema-from",
            p,
            "--property",
            "s3.secret-access-key=TOPSECRET42",
        ],
        &[
            "append",
            "--create",
            "db.t",
            p,
            "--table-property",
            "s3.session-token=TOPSECRET42",
        ],
        &[
            "append",
            "--create",
            "db.t",
            p,
            "--property",
            "adls.sas-token.acct.dfs.core.windows.net=TOPSECRET42",
        ],
    ];
    for args in cases {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("before the subcommand") && err.contains("--io"),
            "{args:?}: {err}"
        );
    }
    for file in files_under(&env.warehouse()) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(11).any(|w| w == b"TOPSECRET42"),
            "{} holds the secret",
            file.display()
        );
    }
    let err = env.fail(&["inspect", "db.t"]);
    assert!(err.contains("does not exist"), "{err}");
    // Ordinary table properties still go in, with either spelling.
    env.ok(&[
        "create",
        "db.t",
        "--schema-from",
        p,
        "--table-property",
        "write.parquet.compression-codec=snappy",
        "--property",
        "commit.retry.num-retries=7",
    ]);
    let props = &env.json(&["inspect", "db.t"])["properties"];
    assert_eq!(props["write.parquet.compression-codec"], "snappy");
    assert_eq!(props["commit.retry.num-retries"], "7");
}
