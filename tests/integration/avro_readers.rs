//! Our manifests and manifest lists, read by fastavro (raw) and PyIceberg (inspect), for
//! format versions 1, 2 and 3, with hand-made data files (no Parquet needed).

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableIdent, commit_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{
    DataFile, Datum, FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema, Transform,
};

use crate::external;

const READ: &str = r#"
import json, sys, fastavro
from pyiceberg.table import StaticTable
t = StaticTable.from_metadata(sys.argv[1])
snap = t.current_snapshot()
def header(path):
    with open(path.removeprefix("file://"), "rb") as f:
        r = fastavro.reader(f)
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.metadata.items() if not k.startswith("avro.")}
        schema = json.loads(r.metadata["avro.schema"])
        rows = list(r)
    return meta, schema, rows
lmeta, lschema, lrows = header(snap.manifest_list)
manifests = []
for row in lrows:
    mmeta, mschema, mrows = header(row["manifest_path"])
    manifests.append({"meta": mmeta, "schema": mschema, "rows": len(mrows),
                      "first_row_ids": [r["data_file"].get("first_row_id") for r in mrows],
                      "seq": [r.get("sequence_number") for r in mrows]})
entries = t.inspect.entries().to_pylist()
print(json.dumps({
  "list_meta": lmeta, "list_schema": lschema,
  "list_rows": [{k: v for k, v in r.items() if k != "partitions"} | {"partitions": [
      {"contains_null": p["contains_null"], "contains_nan": p.get("contains_nan"),
       "lower": p["lower_bound"].hex() if p["lower_bound"] is not None else None,
       "upper": p["upper_bound"].hex() if p["upper_bound"] is not None else None}
      for p in (r["partitions"] or [])]} for r in lrows],
  "manifests": manifests,
  "entries": [{"path": e["data_file"]["file_path"], "records": e["data_file"]["record_count"],
               "status": e["status"], "seq": e["sequence_number"], "snapshot": e["snapshot_id"],
               "partition": {k: str(v) for k, v in e["data_file"]["partition"].items()}} for e in entries],
  "snapshots": len(t.snapshots()),
}, default=str))
"#;

fn field_ids(v: &serde_json::Value, out: &mut Vec<i64>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(id) = m.get("field-id").and_then(|x| x.as_i64()) {
                out.push(id);
            }
            m.values().for_each(|x| field_ids(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| field_ids(x, out)),
        _ => {}
    }
}

fn file(location: &str, n: i64, day: i32, bucket_src: i64) -> DataFile {
    DataFile {
        file_path: format!("{location}/data/f{n}.parquet"),
        spec_id: 0,
        partition: vec![
            Some(Datum::Date(day)),
            Some(Datum::Int(bucket_src as i32 % 4)),
        ],
        record_count: 10 * n,
        file_size_in_bytes: 1000 + n,
        lower_bounds: BTreeMap::from([(1, Datum::Long(n).to_bytes())]),
        upper_bounds: BTreeMap::from([(1, Datum::Long(n * 100).to_bytes())]),
        value_counts: BTreeMap::from([(1, 10 * n)]),
        null_value_counts: BTreeMap::from([(1, 0)]),
        split_offsets: Some(vec![4]),
        ..Default::default()
    }
}

async fn check(version: FormatVersion) {
    let Some(python) = external::python("avro_readers") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}/db/t", dir.path().display());
    let io = FileIo::from_location(&location, &Default::default()).unwrap();
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1000, 3));
    let catalog = InMemoryCatalog::new(io, env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "d", PrimitiveType::Date),
        ],
    )
    .unwrap();
    let mut creation = TableCreation::new(location.clone(), schema.clone());
    creation.format_version = version;
    creation.spec = PartitionSpec::builder(&schema)
        .add("d", Transform::Identity)
        .unwrap()
        .add("id", Transform::Bucket(4))
        .unwrap()
        .build()
        .unwrap();
    catalog.create_table(&ident, creation).await.unwrap();
    let mut n = 0;
    for commit in 0..3 {
        let files: Vec<DataFile> = (0..2)
            .map(|i| {
                n += 1;
                file(&location, n, 19_000 + commit, i)
            })
            .collect();
        commit_append(&catalog, &ident, files, BTreeMap::new(), env.as_ref())
            .await
            .unwrap();
    }
    let table = catalog.load_table(&ident).await.unwrap();
    let loc = table.metadata_location.clone().unwrap();
    let out = external::run_json(&python, READ, &[&loc]);

    // Key-value metadata as Java writes it.
    let lm = &out["list_meta"];
    assert_eq!(lm["format-version"], version.number().to_string());
    assert_eq!(
        lm["snapshot-id"],
        table.metadata.current_snapshot_id.unwrap().to_string()
    );
    assert!(
        lm["parent-snapshot-id"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .is_ok()
    );
    assert_eq!(out["list_schema"]["name"], "manifest_file");
    let mut ids = Vec::new();
    field_ids(&out["list_schema"], &mut ids);
    assert!(ids.contains(&500) && ids.contains(&507) && ids.contains(&509));
    assert_eq!(ids.contains(&520), version == FormatVersion::V3);
    assert_eq!(ids.contains(&515), version != FormatVersion::V1);

    // New manifest first, then the parents' by reference, newest first.
    let rows = out["list_rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let snaps: Vec<i64> = rows
        .iter()
        .map(|r| r["added_snapshot_id"].as_i64().unwrap())
        .collect();
    assert_eq!(snaps[0], table.metadata.current_snapshot_id.unwrap());
    if version != FormatVersion::V1 {
        let seqs: Vec<i64> = rows
            .iter()
            .map(|r| r["sequence_number"].as_i64().unwrap())
            .collect();
        assert_eq!(seqs, vec![3, 2, 1]);
    }
    if version == FormatVersion::V3 {
        // Row ranges: commit 1 got [0, 30), commit 2 [30, 100), commit 3 [100, 210).
        let firsts: Vec<i64> = rows
            .iter()
            .map(|r| r["first_row_id"].as_i64().unwrap())
            .collect();
        assert_eq!(firsts, vec![100, 30, 0]);
        assert_eq!(table.metadata.next_row_id, Some(210));
    }
    // Partition summaries in the result types: date 4 bytes LE, bucket int 4 bytes.
    let p = &rows[0]["partitions"];
    assert_eq!(p[0]["lower"], hex(&Datum::Date(19_002).to_bytes()));
    assert_eq!(p[0]["contains_null"], false);
    assert_eq!(p[1]["lower"], "00000000");
    assert_eq!(p[1]["upper"], "01000000");

    for m in out["manifests"].as_array().unwrap() {
        assert_eq!(m["meta"]["format-version"], version.number().to_string());
        assert_eq!(m["meta"]["partition-spec-id"], "0");
        let spec: serde_json::Value =
            serde_json::from_str(m["meta"]["partition-spec"].as_str().unwrap()).unwrap();
        assert_eq!(spec[1]["transform"], "bucket[4]");
        assert_eq!(m["schema"]["name"], "manifest_entry");
        let mut ids = Vec::new();
        field_ids(&m["schema"], &mut ids);
        for id in [
            0, 1, 2, 100, 101, 102, 103, 104, 1000, 1001, 117, 118, 125, 132,
        ] {
            assert!(ids.contains(&id), "manifest schema lacks field-id {id}");
        }
        assert_eq!(ids.contains(&105), version == FormatVersion::V1);
        assert_eq!(ids.contains(&142), version == FormatVersion::V3);
        // ADDED entries inherit: null sequence numbers and first_row_id.
        assert!(m["seq"].as_array().unwrap().iter().all(|s| s.is_null()));
        assert!(
            m["first_row_ids"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s.is_null())
        );
    }

    // PyIceberg resolves inheritance the same way.
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 6);
    assert_eq!(out["snapshots"], 3);
    for e in entries {
        assert_eq!(e["status"], 1);
        let n: i64 = e["path"]
            .as_str()
            .unwrap()
            .rsplit('f')
            .next()
            .unwrap()
            .trim_end_matches(".parquet")
            .parse()
            .unwrap();
        assert_eq!(e["records"], 10 * n);
        if version != FormatVersion::V1 {
            assert_eq!(e["seq"], (n + 1) / 2);
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[tokio::test]
async fn fastavro_and_pyiceberg_read_v1_manifests() {
    check(FormatVersion::V1).await;
}

#[tokio::test]
async fn fastavro_and_pyiceberg_read_v2_manifests() {
    check(FormatVersion::V2).await;
}

#[tokio::test]
async fn fastavro_and_pyiceberg_read_v3_manifests() {
    check(FormatVersion::V3).await;
}
