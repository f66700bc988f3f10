//! Faithful input: what each value of a text input becomes (one rule for CSV and NDJSON,
//! read back from the data files and by PyIceberg, types included), conversions that would
//! lose information refused with the file, line, column and value, compressed, folder,
//! stdin and compressed-IPC inputs, and an `append --create` that is one commit.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float64Type, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, RecordBatch};
use serde_json::{Value, json};

use crate::{Env, data_rows, fixtures, pyiceberg_read, total_records};

const CSV: &str = "id,at,local,day,code,price,flag,note\n\
    1,2024-01-01T10:00:00Z,2024-01-01T10:00:00,2024-01-01,007,12.5,true,\"\"\n\
    2,2024-01-01T12:00:00+02:00,2024-01-01 11:30:00.5,2024-02-29,012,,false,\n";

const NDJSON: &str = "{\"id\":1,\"at\":\"2024-01-01T10:00:00Z\",\"local\":\"2024-01-01T10:00:00\",\
    \"day\":\"2024-01-01\",\"code\":\"007\",\"price\":12.5,\"flag\":true,\"note\":\"\"}\n\
    {\"id\":2,\"at\":\"2024-01-01T12:00:00+02:00\",\"local\":\"2024-01-01 11:30:00.5\",\
    \"day\":\"2024-02-29\",\"code\":\"012\",\"price\":null,\"flag\":false,\"note\":null}\n";

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// The Iceberg type of each top-level column, from `inspect --json`.
fn types(env: &Env, table: &str) -> Value {
    let v = env.json(&["inspect", table]);
    let mut out = serde_json::Map::new();
    for f in v["schema"]["fields"].as_array().unwrap() {
        out.insert(f["name"].as_str().unwrap().into(), f["type"].clone());
    }
    Value::Object(out)
}

fn sorted_by_id(batch: &RecordBatch) -> RecordBatch {
    let ids = batch.column_by_name("id").unwrap();
    let order = arrow_ord::sort::sort_to_indices(ids, None, None).unwrap();
    arrow_select::take::take_record_batch(batch, &order).unwrap()
}

#[test]
fn one_dataset_one_type_in_every_text_format() {
    let cases: [(&str, Vec<u8>); 4] = [
        ("a.csv", CSV.as_bytes().to_vec()),
        ("a.ndjson", NDJSON.as_bytes().to_vec()),
        ("a.csv.gz", gzip(CSV)),
        (
            "a.jsonl.zst",
            zstd::encode_all(NDJSON.as_bytes(), 3).unwrap(),
        ),
    ];
    for (i, (file, bytes)) in cases.iter().enumerate() {
        let env = Env::new();
        let path = env.path(file);
        std::fs::write(&path, bytes).unwrap();
        let table = format!("db.t{i}");
        let out = env.ok(&["append", &table, path.to_str().unwrap(), "--create"]);
        assert!(
            out.contains("schema:") && out.contains("timestamptz"),
            "{file}: {out}"
        );
        assert_eq!(
            types(&env, &table),
            json!({"id": "long", "at": "timestamptz", "local": "timestamp", "day": "date",
                   "code": "string", "price": "double", "flag": "boolean", "note": "string"}),
            "{file}"
        );
        let rows = sorted_by_id(&data_rows(&env, &table));
        let at = rows
            .column_by_name("at")
            .unwrap()
            .as_primitive::<TimestampMicrosecondType>();
        assert_eq!(
            at.values().to_vec(),
            vec![1_704_103_200_000_000; 2],
            "{file}: one instant"
        );
        let local = rows.column_by_name("local").unwrap();
        let local = local.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(local.value(1) - local.value(0), 5_400_500_000, "{file}");
        let code = rows.column_by_name("code").unwrap().as_string::<i32>();
        assert_eq!((code.value(0), code.value(1)), ("007", "012"), "{file}");
        let note = rows.column_by_name("note").unwrap().as_string::<i32>();
        assert!(
            note.is_valid(0) && note.value(0).is_empty(),
            "{file}: \"\" is text"
        );
        assert!(note.is_null(1), "{file}: an unquoted empty field is null");
        if let Some(v) = pyiceberg_read(&env, &table) {
            assert_eq!(v["types"]["at"], "timestamptz", "{file}: {v}");
            assert_eq!(v["types"]["local"], "timestamp", "{file}: {v}");
            assert_eq!(v["types"]["day"], "date", "{file}: {v}");
            let r = &v["rows"];
            assert_eq!(r[0]["at"], "2024-01-01T10:00:00+00:00", "{file}: {v}");
            assert_eq!(r[1]["at"], "2024-01-01T10:00:00+00:00", "{file}: {v}");
            assert_eq!(r[1]["local"], "2024-01-01T11:30:00.500000", "{file}: {v}");
            assert_eq!(r[1]["day"], "2024-02-29", "{file}: {v}");
            assert_eq!(r[0]["code"], "007", "{file}: {v}");
            assert_eq!(r[0]["note"], "", "{file}: {v}");
            assert_eq!(r[1]["note"], Value::Null, "{file}: {v}");
            assert_eq!(r[1]["price"], Value::Null, "{file}: {v}");
        }
    }
}

#[test]
fn parquet_of_the_same_data_appends_to_the_table_csv_made() {
    let env = Env::new();
    let csv = env.write("a.csv", "id,at\n1,2024-01-01T10:00:00Z\n");
    env.ok(&["append", "db.t", csv.to_str().unwrap(), "--create"]);
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, true),
        arrow_schema::Field::new(
            "at",
            arrow_schema::DataType::Timestamp(
                arrow_schema::TimeUnit::Microsecond,
                Some("UTC".into()),
            ),
            true,
        ),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![2])),
            Arc::new(
                arrow_array::TimestampMicrosecondArray::from(vec![1_704_103_200_000_000])
                    .with_timezone("UTC"),
            ),
        ],
    )
    .unwrap();
    let pq = env.path("b.parquet");
    fixtures::write_parquet(&pq, &[batch]);
    env.ok(&["append", "db.t", pq.to_str().unwrap()]);
    assert_eq!(total_records(&env, "db.t"), 2);
}

#[test]
fn null_markers_apply_to_unquoted_fields_only() {
    let env = Env::new();
    let csv = env.write("a.csv", "id,a,b\n1,NA,x\n2,\"NA\",\n");
    env.ok(&[
        "append",
        "db.marked",
        csv.to_str().unwrap(),
        "--create",
        "--null-value",
        "NA",
    ]);
    let rows = sorted_by_id(&data_rows(&env, "db.marked"));
    let a = rows.column_by_name("a").unwrap().as_string::<i32>();
    let b = rows.column_by_name("b").unwrap().as_string::<i32>();
    assert!(
        a.is_null(0) && a.value(1) == "NA",
        "a quoted marker is text"
    );
    assert!(
        b.value(0) == "x" && b.is_valid(1) && b.value(1).is_empty(),
        "`NA` replaced `` as null"
    );
    env.ok(&["append", "db.plain", csv.to_str().unwrap(), "--create"]);
    let rows = sorted_by_id(&data_rows(&env, "db.plain"));
    let a = rows.column_by_name("a").unwrap().as_string::<i32>();
    let b = rows.column_by_name("b").unwrap().as_string::<i32>();
    assert_eq!((a.value(0), a.value(1)), ("NA", "NA"));
    assert!(b.is_null(1), "by default the unquoted empty field is null");
}

/// Fails `append --create` of `file` with `args`, and checks nothing was created.
fn refused_create(env: &Env, table: &str, file: &std::path::Path, args: &[&str], wants: &[&str]) {
    let mut all = vec!["append", table, file.to_str().unwrap(), "--create"];
    all.extend_from_slice(args);
    let err = env.fail(&all);
    for w in wants {
        assert!(err.contains(w), "wanted `{w}` in: {err}");
    }
    let err = env.fail(&["inspect", table]);
    assert!(err.contains("does not exist"), "{err}");
    let (ns, name) = table.split_once('.').unwrap();
    assert!(crate::files_under(&env.warehouse().join(ns).join(name)).is_empty());
}

#[test]
fn lossy_conversions_are_refused_unless_allowed() {
    let env = Env::new();
    let money = env.write("money.csv", "id,price\n1,12.30\n2,12.345\n");
    let decimal = ["--column", "price=decimal(10, 2)"];
    refused_create(
        &env,
        "db.money",
        &money,
        &decimal,
        &[
            "money.csv",
            "column `price` (line 3)",
            "\"12.345\"",
            "--allow-rounding",
        ],
    );
    let mut allowed = decimal.to_vec();
    allowed.push("--allow-rounding");
    env.ok(&[
        "append",
        "db.money",
        money.to_str().unwrap(),
        "--create",
        allowed[0],
        allowed[1],
        allowed[2],
    ]);
    let rows = sorted_by_id(&data_rows(&env, "db.money"));
    let price = rows
        .column_by_name("price")
        .unwrap()
        .as_primitive::<Decimal128Type>();
    assert_eq!(price.values().to_vec(), vec![1230, 1235], "half up");
    if let Some(v) = pyiceberg_read(&env, "db.money") {
        assert_eq!(v["types"]["price"], "decimal(10, 2)", "{v}");
        assert_eq!(v["rows"][1]["price"], "12.35", "{v}");
    }

    let nanos = env.write("nanos.csv", "id,ts\n1,2024-01-01T00:00:00.123456789\n");
    refused_create(
        &env,
        "db.v2",
        &nanos,
        &[],
        &[
            "column `ts` (line 2)",
            "fraction digits",
            "--allow-rounding",
        ],
    );
    env.ok(&[
        "append",
        "db.v3",
        nanos.to_str().unwrap(),
        "--create",
        "--format-version",
        "3",
    ]);
    assert_eq!(types(&env, "db.v3")["ts"], "timestamp_ns");
    let ts = data_rows(&env, "db.v3");
    let ts = ts
        .column_by_name("ts")
        .unwrap()
        .as_primitive::<TimestampNanosecondType>();
    assert_eq!(
        ts.value(0),
        1_704_067_200_123_456_789,
        "every digit kept on v3"
    );

    let big = env.write("big.csv", "id,n\n1,3000000000\n");
    refused_create(
        &env,
        "db.int",
        &big,
        &["--column", "n=int"],
        &["column `n` (line 2)", "3000000000"],
    );

    // A zone cannot go into a timestamp without zone; text without zone into timestamptz is UTC.
    let local = env.write("local.csv", "id,ts\n1,2024-01-01T00:00:00\n");
    env.ok(&["append", "db.local", local.to_str().unwrap(), "--create"]);
    let zoned = env.write("zoned.csv", "id,ts\n2,2024-01-01T00:00:00+01:00\n");
    let before = env.state("db.local");
    let err = env.fail(&["append", "db.local", zoned.to_str().unwrap()]);
    assert!(
        err.contains("column `ts` (line 2)") && err.contains("zone"),
        "{err}"
    );
    assert_eq!(env.state("db.local"), before);

    // A JSON fraction into an integer column: refused (arrow-json would cast it to 1).
    let whole = env.write("whole.ndjson", "{\"id\": 1, \"qty\": 2}\n");
    env.ok(&["append", "db.qty", whole.to_str().unwrap(), "--create"]);
    let half = env.write(
        "half.ndjson",
        "{\"id\": 2, \"qty\": 2}\n{\"id\": 3, \"qty\": 1.5}\n",
    );
    let before = env.state("db.qty");
    let err = env.fail(&["append", "db.qty", half.to_str().unwrap()]);
    assert!(
        err.contains("column `qty` (record 2)") && err.contains("1.5"),
        "{err}"
    );
    assert_eq!(env.state("db.qty"), before);

    // Parquet nanoseconds into a microsecond column: the same rule.
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, true),
        arrow_schema::Field::new(
            "ts",
            arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, None),
            true,
        ),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![3])),
            Arc::new(arrow_array::TimestampNanosecondArray::from(vec![
                1_704_067_200_000_000_001,
            ])),
        ],
    )
    .unwrap();
    let pq = env.path("nanos.parquet");
    fixtures::write_parquet(&pq, &[batch]);
    let err = env.fail(&["append", "db.local", pq.to_str().unwrap()]);
    assert!(
        err.contains("nanos.parquet")
            && err.contains("column `ts` (row 1)")
            && err.contains("--allow-rounding"),
        "{err}"
    );
    env.ok(&[
        "append",
        "db.local",
        pq.to_str().unwrap(),
        "--allow-rounding",
    ]);

    // The same inside a struct (pandas and pyarrow write nanoseconds at every depth).
    let ts = arrow_schema::Field::new(
        "ts",
        arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, None),
        true,
    );
    let s = arrow_array::StructArray::from(vec![(
        Arc::new(ts),
        Arc::new(arrow_array::TimestampNanosecondArray::from(vec![
            1_704_067_200_000_000_001,
        ])) as arrow_array::ArrayRef,
    )]);
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "s",
        s.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(s)]).unwrap();
    let pq = env.path("nested_nanos.parquet");
    fixtures::write_parquet(&pq, &[batch]);
    let err = env.fail(&["append", "db.nested", pq.to_str().unwrap(), "--create"]);
    assert!(
        err.contains("column `s.ts`") && err.contains("--allow-rounding"),
        "{err}"
    );
}

/// NDJSON values inside structs, lists and maps follow the same text rules as top-level
/// ones (arrow-json's own decoders cast `1.5` into an int as 1, cut a decimal's extra digits
/// and move an offset's wall time): integral floats taken, the rest refused naming the
/// nested column and the record.
#[test]
fn nested_json_values_follow_the_text_rules() {
    let env = Env::new();
    let schema = env.write(
        "nested.json",
        r#"{"type":"struct","schema-id":0,"fields":[
            {"id":1,"name":"id","required":false,"type":"long"},
            {"id":2,"name":"s","required":false,"type":{"type":"struct","fields":[
                {"id":3,"name":"qty","required":false,"type":"int"},
                {"id":4,"name":"amount","required":false,"type":"decimal(9, 2)"},
                {"id":5,"name":"at","required":false,"type":"timestamptz"}]}},
            {"id":6,"name":"l","required":false,"type":{"type":"list","element-id":7,
                "element-required":false,"element":"long"}},
            {"id":8,"name":"m","required":false,"type":{"type":"map","key-id":9,"key":"string",
                "value-id":10,"value-required":false,"value":"date"}}]}"#,
    );
    let good = env.write(
        "good.ndjson",
        "{\"id\": 1, \"s\": {\"qty\": 2.0, \"amount\": 12.5, \"at\": \"2024-01-01T12:00:00+02:00\"}, \
         \"l\": [1, 2e3], \"m\": {\"k\": \"2024-02-29\"}}\n\
         {\"id\": 2, \"s\": null, \"l\": [null], \"m\": {}}\n",
    );
    let schema_arg = schema.to_str().unwrap();
    env.ok(&[
        "append",
        "db.n",
        good.to_str().unwrap(),
        "--create",
        "--schema-from",
        schema_arg,
    ]);
    let rows = sorted_by_id(&data_rows(&env, "db.n"));
    let s = rows.column_by_name("s").unwrap().as_struct();
    let qty = s.column_by_name("qty").unwrap();
    assert_eq!(
        qty.as_primitive::<arrow_array::types::Int32Type>().value(0),
        2
    );
    let amount = s.column_by_name("amount").unwrap();
    assert_eq!(amount.as_primitive::<Decimal128Type>().value(0), 1250);
    let at = s.column_by_name("at").unwrap();
    assert_eq!(
        at.as_primitive::<TimestampMicrosecondType>().value(0),
        1_704_103_200_000_000,
        "the instant, not the wall time"
    );
    assert!(s.is_null(1));
    let l = rows.column_by_name("l").unwrap().as_list::<i32>();
    let first = l.value(0);
    assert_eq!(
        first
            .as_primitive::<arrow_array::types::Int64Type>()
            .values()
            .to_vec(),
        vec![1, 2000]
    );
    let m = rows.column_by_name("m").unwrap().as_map();
    let days = m.value(0).column(1).clone();
    assert_eq!(
        days.as_primitive::<arrow_array::types::Date32Type>()
            .value(0),
        19_782
    );

    let cases = [
        (
            "{\"id\": 3, \"s\": {\"qty\": 1.5}}\n",
            "column `s.qty` (record 1)",
            "1.5",
        ),
        (
            "{\"id\": 3, \"l\": [1]}\n{\"id\": 4, \"l\": [2, 3, 2.5]}\n",
            "column `l.element` (record 2)",
            "2.5",
        ),
        (
            "{\"id\": 3, \"s\": {\"amount\": 1.234}}\n",
            "column `s.amount` (record 1)",
            "--allow-rounding",
        ),
        (
            "{\"id\": 3, \"m\": {\"k\": \"2024-02-30\"}}\n",
            "column `m.value` (record 1)",
            "2024-02-30",
        ),
    ];
    for (i, (text, at, value)) in cases.iter().enumerate() {
        let bad = env.write(&format!("bad{i}.ndjson"), text);
        let before = env.state("db.n");
        let err = env.fail(&["append", "db.n", bad.to_str().unwrap()]);
        assert!(err.contains(at) && err.contains(value), "{text}: {err}");
        assert_eq!(env.state("db.n"), before);
    }
    // With --allow-rounding the decimal is rounded half up, as at the top level.
    let round = env.write("round.ndjson", "{\"id\": 5, \"s\": {\"amount\": 1.235}}\n");
    env.ok(&[
        "append",
        "db.n",
        round.to_str().unwrap(),
        "--allow-rounding",
    ]);
    let rows = sorted_by_id(&data_rows(&env, "db.n"));
    let s = rows.column_by_name("s").unwrap().as_struct();
    let amount = s.column_by_name("amount").unwrap();
    assert_eq!(amount.as_primitive::<Decimal128Type>().value(2), 124);
}

#[test]
fn inference_reads_every_row_unless_told_otherwise() {
    let env = Env::new();
    let mut text = String::from("id,n\n");
    for i in 0..5000 {
        text.push_str(&format!("{i},{i}\n"));
    }
    text.push_str("5000,1.5\n");
    let csv = env.write("late.csv", &text);
    env.ok(&["append", "db.all", csv.to_str().unwrap(), "--create"]);
    assert_eq!(types(&env, "db.all")["n"], "double");
    let rows = data_rows(&env, "db.all");
    let n = rows
        .column_by_name("n")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!(n.values().contains(&1.5));
    refused_create(
        &env,
        "db.first",
        &csv,
        &["--infer-rows", "100"],
        &["column `n` (line 5002)", "\"1.5\""],
    );
    env.ok(&[
        "append",
        "db.first",
        csv.to_str().unwrap(),
        "--create",
        "--infer-rows",
        "100",
        "--column",
        "n=double",
    ]);
    assert_eq!(types(&env, "db.first")["n"], "double");
    let err = env.fail(&[
        "append",
        "db.x",
        csv.to_str().unwrap(),
        "--create",
        "--column",
        "nope=long",
    ]);
    assert!(
        err.contains("no column `nope`") && err.contains("id, n"),
        "{err}"
    );
}

#[test]
fn folders_stdin_and_compressed_ipc_are_inputs() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("in/day=1")).unwrap();
    env.write("in/day=1/part-0.csv", "id,name\n1,a\n");
    std::fs::write(env.path("in/part-1.csv.gz"), gzip("id,name\n2,b\n")).unwrap();
    env.write("in/_SUCCESS", "");
    env.write("in/.part-0.csv.crc", "junk");
    let folder = env.path("in");
    let v = env.json(&["append", "db.f", folder.to_str().unwrap(), "--create"]);
    assert_eq!(
        (v["input_files"].as_i64(), v["added_records"].as_i64()),
        (Some(2), Some(2))
    );
    let err = env.fail(&[
        "append",
        "db.f",
        folder.to_str().unwrap(),
        env.path("in/part-1.csv.gz").to_str().unwrap(),
    ]);
    assert!(err.contains("named twice"), "{err}");

    let mut child = env
        .command()
        .args([
            "--warehouse",
            env.warehouse().to_str().unwrap(),
            "append",
            "db.f",
            "-",
            "--format",
            "csv",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"id,name\n3,c\n4,d\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(total_records(&env, "db.f"), 4);
    let err = env.fail(&["append", "db.f", "-"]);
    assert!(err.contains("--format"), "{err}");

    // What pyarrow's write_feather (LZ4) and compression="zstd" write.
    create_events(&env);
    for (name, codec) in [
        ("lz4.feather", arrow_ipc::CompressionType::LZ4_FRAME),
        ("zstd.arrow", arrow_ipc::CompressionType::ZSTD),
    ] {
        let path = env.path(name);
        let batch = fixtures::events(&[10, 11]);
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(Some(codec))
            .unwrap();
        let f = std::fs::File::create(&path).unwrap();
        let mut w =
            arrow_ipc::writer::FileWriter::try_new_with_options(f, &batch.schema(), options)
                .unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        env.ok(&["append", "db.events", path.to_str().unwrap()]);
    }
    assert_eq!(total_records(&env, "db.events"), 4);
}

fn create_events(env: &Env) {
    let pq = fixtures::parquet(env, "schema.parquet", &[0]);
    env.ok(&["create", "db.events", "--schema-from", pq.to_str().unwrap()]);
}

#[test]
fn append_create_is_one_commit_or_no_table() {
    let env = Env::new();
    // The definition is printed; a dry run writes nothing.
    let csv = env.write("a.csv", "id,at\n1,2024-01-01T00:00:00Z\n");
    let out = env.ok(&[
        "append",
        "db.t",
        csv.to_str().unwrap(),
        "--create",
        "--partition",
        "day(at)",
        "--dry-run",
    ]);
    assert!(
        out.contains("would create table db.t")
            && out.contains("day(at)")
            && out.contains("timestamptz"),
        "{out}"
    );
    assert!(env.fail(&["inspect", "db.t"]).contains("does not exist"));
    // A header-only text input has no types to give: refused, nothing created.
    let header = env.write("header.csv", "id,at\n");
    refused_create(&env, "db.empty", &header, &[], &["header.csv", "no rows"]);
    let empty = env.write("empty.ndjson", "");
    refused_create(
        &env,
        "db.none",
        &empty,
        &[],
        &["empty.ndjson", "no columns"],
    );
    // A typed empty input makes an empty table.
    let pq = fixtures::parquet(&env, "none.parquet", &[]);
    env.ok(&["append", "db.typed", pq.to_str().unwrap(), "--create"]);
    assert_eq!(env.state("db.typed").0, 0, "created, no snapshot");

    // One commit: the table's first metadata already has the snapshot.
    env.ok(&["append", "db.t", csv.to_str().unwrap(), "--create"]);
    let v = env.json(&["inspect", "db.t"]);
    assert_eq!(v["snapshots"].as_array().unwrap().len(), 1);
    assert!(
        v["metadata_location"].as_str().unwrap().contains("/00000-"),
        "{v}"
    );

    // Killed while reading its input: no table, no files.
    let fifo = env.path("slow.csv");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let schema = env.write("schema.json", r#"{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"}]}"#);
    let mut child = env
        .command()
        .args([
            "--warehouse",
            env.warehouse().to_str().unwrap(),
            "append",
            "db.killed",
        ])
        .arg(&fifo)
        .args(["--create", "--schema-from"])
        .arg(&schema)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    pipe.write_all(b"id\n1\n2\n").unwrap();
    pipe.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(pipe);
    assert!(
        env.fail(&["inspect", "db.killed"])
            .contains("does not exist")
    );
    assert!(crate::files_under(&env.warehouse().join("db").join("killed")).is_empty());
}
