//! Create a table, append three times, and let PyIceberg scan it and inspect its entries.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use iceberg_append::{
    DeterministicEnvironment, Table, TableCreation, create_table, write_and_prepare_append,
    write_metadata_file,
};
use iceberg_io::FileIo;
use iceberg_spec::{FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema, Transform};

use crate::external;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "category", PrimitiveType::String),
            NestedField::optional(4, "amount", PrimitiveType::Double),
            NestedField::optional(5, "flag", PrimitiveType::Boolean),
        ],
    )
    .unwrap()
}

/// Rows of batch `b`: ids b*100.., two categories, a null amount and a NaN.
fn batch(arrow: &arrow_schema::SchemaRef, b: i64) -> RecordBatch {
    let n = 7i64;
    let ids: Vec<i64> = (0..n).map(|i| b * 100 + i).collect();
    let ts: Vec<Option<i64>> = ids
        .iter()
        .map(|i| Some(1_700_000_000_000_000 + i * 3_600_000_000))
        .collect();
    let cats: Vec<Option<&str>> = ids
        .iter()
        .map(|i| match i % 3 {
            0 => Some("books"),
            1 => Some("games"),
            _ => None,
        })
        .collect();
    let amounts: Vec<Option<f64>> = ids
        .iter()
        .map(|i| match i % 5 {
            0 => None,
            4 => Some(f64::NAN),
            _ => Some(*i as f64 * 1.5 - 20.0),
        })
        .collect();
    let flags: Vec<Option<bool>> = ids.iter().map(|i| Some(i % 2 == 0)).collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("+00:00")),
        Arc::new(StringArray::from(cats)),
        Arc::new(Float64Array::from(amounts)),
        Arc::new(BooleanArray::from(flags)),
    ];
    RecordBatch::try_new(arrow.clone(), cols).unwrap()
}

const SCAN: &str = r#"
import json, math, sys
from pyiceberg.table import StaticTable
t = StaticTable.from_metadata(sys.argv[1], properties=json.loads(sys.argv[2]))
rows = t.scan().to_arrow().sort_by("id").to_pylist()
def clean(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v
entries = []
for e in t.inspect.entries().to_pylist():
    df = e["data_file"]
    rm = e["readable_metrics"]
    entries.append({
        "status": e["status"],
        "sequence_number": e["sequence_number"],
        "file_path": df["file_path"],
        "record_count": df["record_count"],
        "partition": {k: v for k, v in df["partition"].items()},
        "id_lower": rm["id"]["lower_bound"],
        "id_upper": rm["id"]["upper_bound"],
        "amount_nulls": rm["amount"]["null_value_count"],
        "amount_nans": rm["amount"]["nan_value_count"],
    })
snaps = [{"id": s.snapshot_id, "parent": s.parent_snapshot_id, "seq": s.sequence_number,
          "summary": s.summary.additional_properties | {"operation": s.summary.operation.value}}
         for s in t.snapshots()]
print(json.dumps({"rows": [{k: clean(v) for k, v in r.items()} for r in rows],
                  "entries": entries, "snapshots": snaps}, default=str))
"#;

async fn three_appends(version: FormatVersion, spec_of: impl Fn(&Schema) -> PartitionSpec) {
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}/db/events", dir.path().display());
    three_appends_at(&location, &HashMap::new(), version, spec_of).await;
}

/// The same three appends at any location, with IO properties PyIceberg is given too.
async fn three_appends_at(
    location: &str,
    props: &HashMap<String, String>,
    version: FormatVersion,
    spec_of: impl Fn(&Schema) -> PartitionSpec,
) {
    let Some(python) = external::python("pyiceberg_reads_three_appends") else {
        return;
    };
    let location = location.to_string();
    let io = FileIo::from_location(&location, props).unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1000, 11);
    let s = schema();
    let mut creation = TableCreation::new(location.clone(), s.clone());
    creation.spec = spec_of(&s);
    creation.format_version = version;
    let mut table: Table = create_table(&io, creation, &env).await.unwrap();
    let arrow = Arc::new(iceberg_write::arrow_schema(&s).unwrap());
    let mut written = Vec::new();
    for b in 0..3 {
        let batches = [batch(&arrow, b)];
        let result = write_and_prepare_append(&io, &table, &batches, &env)
            .await
            .unwrap();
        written.extend(result.data_files.clone());
        let loc = write_metadata_file(
            &io,
            &result.metadata,
            table.metadata_location.as_deref(),
            &env,
        )
        .await
        .unwrap();
        table = Table::load(&io, &loc).await.unwrap();
    }
    let loc = table.metadata_location.clone().unwrap();
    assert!(loc.contains("/metadata/00003-"), "{loc}");

    let py_props = serde_json::to_string(props).unwrap();
    let out = external::run_json(&python, SCAN, &[&loc, &py_props]);

    // Every row, exactly.
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 21);
    for (i, row) in rows.iter().enumerate() {
        let b = i as i64 / 7;
        let id = b * 100 + (i as i64 % 7);
        assert_eq!(row["id"], id);
        let cat = match id % 3 {
            0 => serde_json::json!("books"),
            1 => serde_json::json!("games"),
            _ => serde_json::Value::Null,
        };
        assert_eq!(row["category"], cat, "row {id}");
        match id % 5 {
            0 => assert!(row["amount"].is_null()),
            4 => assert_eq!(row["amount"], "NaN"),
            _ => assert_eq!(row["amount"].as_f64().unwrap(), id as f64 * 1.5 - 20.0),
        }
        assert_eq!(row["flag"], id % 2 == 0);
        let micros = 1_700_000_000_000_000i64 + id * 3_600_000_000;
        let expected_ts = chrono_like_iso(micros);
        assert_eq!(row["ts"], expected_ts.as_str(), "row {id}");
    }

    // The stats PyIceberg decodes are the ones we wrote.
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), written.len());
    for f in &written {
        let e = entries
            .iter()
            .find(|e| e["file_path"] == f.file_path.as_str())
            .unwrap_or_else(|| panic!("no entry for {}", f.file_path));
        assert_eq!(e["status"], 1);
        assert_eq!(e["record_count"], f.record_count);
        let lower = f.lower_bound(&s, 1).unwrap().unwrap();
        let upper = f.upper_bound(&s, 1).unwrap().unwrap();
        assert_eq!(
            e["id_lower"],
            serde_json::to_value(lower.to_json()).unwrap()
        );
        assert_eq!(
            e["id_upper"],
            serde_json::to_value(upper.to_json()).unwrap()
        );
        assert_eq!(e["amount_nulls"], f.null_value_counts[&4]);
        assert_eq!(e["amount_nans"], f.nan_value_counts[&4]);
    }

    // Three snapshots in one chain with Java's summary totals.
    let snaps = out["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 3);
    assert!(snaps[0]["parent"].is_null());
    assert_eq!(snaps[1]["parent"], snaps[0]["id"]);
    assert_eq!(snaps[2]["parent"], snaps[1]["id"]);
    assert_eq!(snaps[2]["summary"]["total-records"], "21");
    assert_eq!(snaps[2]["summary"]["operation"], "append");
    if version != FormatVersion::V1 {
        assert_eq!(snaps[2]["seq"], 3);
    }
}

/// PyIceberg prints timestamptz as `YYYY-MM-DDTHH:MM:SS+00:00`.
fn chrono_like_iso(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[tokio::test]
async fn pyiceberg_reads_three_appends_unpartitioned_v2() {
    three_appends(FormatVersion::V2, |_| PartitionSpec::unpartitioned()).await;
}

#[tokio::test]
async fn pyiceberg_reads_three_appends_identity_v2() {
    three_appends(FormatVersion::V2, |s| {
        PartitionSpec::builder(s)
            .add("category", Transform::Identity)
            .unwrap()
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn pyiceberg_reads_three_appends_day_v1() {
    three_appends(FormatVersion::V1, |s| {
        PartitionSpec::builder(s)
            .add("ts", Transform::Day)
            .unwrap()
            .build()
            .unwrap()
    })
    .await;
}

/// The same slice, unchanged but for the location and IO properties, on S3 (moto).
#[tokio::test]
async fn pyiceberg_reads_three_appends_on_s3() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("warehouse");
    let props: HashMap<String, String> = moto.s3_properties();
    three_appends_at("s3://warehouse/db/events", &props, FormatVersion::V2, |s| {
        PartitionSpec::builder(s)
            .add("ts", Transform::Day)
            .unwrap()
            .build()
            .unwrap()
    })
    .await;
}
