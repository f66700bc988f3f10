#![allow(clippy::unwrap_used)]

use super::*;
use crate::partition::PartitionSpec;
use crate::snapshot::{Operation, Summary};
use crate::transform::Transform;
use crate::types::{NestedField, PrimitiveType};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
        ],
    )
    .unwrap()
}

fn table(version: FormatVersion) -> TableMetadata {
    let s = schema();
    let spec = PartitionSpec::builder(&s)
        .add("ts", Transform::Day)
        .unwrap()
        .build()
        .unwrap();
    TableMetadata::new_table(
        version,
        Uuid::from_u128(7),
        "file:///tmp/t/",
        s,
        spec,
        SortOrder::unsorted(),
        BTreeMap::from([("k".to_string(), "v".to_string())]),
        1000,
    )
    .unwrap()
}

fn with_snapshot(mut m: TableMetadata) -> TableMetadata {
    let v3 = m.format_version == FormatVersion::V3;
    if m.format_version != FormatVersion::V1 {
        m.last_sequence_number = 1;
    }
    m.snapshots.push(SharedSnapshot::new(Snapshot {
        snapshot_id: 42,
        parent_snapshot_id: None,
        sequence_number: if m.format_version == FormatVersion::V1 {
            0
        } else {
            1
        },
        timestamp_ms: 2000,
        manifest_list: Some("file:///tmp/t/metadata/snap-42-1-x.avro".into()),
        manifests: None,
        summary: Some(Summary::new(Operation::Append)),
        schema_id: Some(0),
        first_row_id: v3.then_some(0),
        added_rows: v3.then_some(10),
        key_id: None,
    }));
    if v3 {
        m.next_row_id = Some(10);
    }
    m.current_snapshot_id = Some(42);
    m.refs.insert("main".into(), SnapshotRef::branch(42));
    m.snapshot_log.push(SnapshotLogEntry {
        timestamp_ms: 2000,
        snapshot_id: 42,
    });
    m.metadata_log.push(MetadataLogEntry {
        timestamp_ms: 1000,
        metadata_file: "file:///tmp/t/metadata/00000-a.metadata.json".into(),
    });
    m
}

#[test]
fn round_trips_every_version() {
    for v in [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3] {
        for m in [table(v), with_snapshot(table(v))] {
            let text = m.to_json().unwrap();
            let back = TableMetadata::from_json(&text).unwrap();
            assert_eq!(back, m, "version {v}");
            assert_eq!(back.to_json().unwrap(), text);
        }
    }
}

#[test]
fn version_specific_fields() {
    let v1: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V1).to_json().unwrap()).unwrap();
    assert!(v1.get("schema").is_some() && v1.get("partition-spec").is_some());
    assert!(v1.get("last-sequence-number").is_none());
    assert_eq!(v1["current-snapshot-id"], -1);
    let v3: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V3).to_json().unwrap()).unwrap();
    assert!(v3["current-snapshot-id"].is_null());
    assert_eq!(v3["next-row-id"], 0);
    assert_eq!(v3["location"], "file:///tmp/t");
    assert_eq!(v3["last-partition-id"], 1000);
}

#[test]
fn missing_required_field_is_named() {
    let mut v: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V2).to_json().unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("last-sequence-number");
    let err = TableMetadata::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("last-sequence-number"), "{err}");

    let mut v: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V3).to_json().unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("next-row-id");
    let err = TableMetadata::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("next-row-id"), "{err}");
}

#[test]
fn dangling_references_are_refused() {
    let mut m = with_snapshot(table(FormatVersion::V2));
    m.refs.insert("main".into(), SnapshotRef::branch(43));
    assert!(m.to_json().unwrap_err().to_string().contains("refs.main"));

    let mut m = table(FormatVersion::V2);
    m.current_schema_id = 5;
    assert!(
        m.to_json()
            .unwrap_err()
            .to_string()
            .contains("current-schema-id")
    );

    // A second snapshot with the same id; a ref and a current id naming none.
    let mut m = with_snapshot(table(FormatVersion::V2));
    let copy = m.snapshots[0].snapshot().clone();
    m.snapshots.push(copy.into());
    let err = m.to_json().unwrap_err().to_string();
    assert!(err.contains("duplicate snapshot id 42"), "{err}");
    let mut m = with_snapshot(table(FormatVersion::V2));
    m.refs.insert("audit".into(), SnapshotRef::branch(7));
    let err = m.to_json().unwrap_err().to_string();
    assert!(
        err.contains("refs.audit") && err.contains("missing snapshot 7"),
        "{err}"
    );
    let mut m = with_snapshot(table(FormatVersion::V2));
    m.refs.clear();
    m.current_snapshot_id = Some(9);
    let err = m.to_json().unwrap_err().to_string();
    assert!(err.contains("current-snapshot-id"), "{err}");
}

#[test]
fn v3_types_need_v3() {
    let s = Schema::new(
        0,
        vec![NestedField::optional(1, "t", PrimitiveType::TimestampNs)],
    )
    .unwrap();
    let r = TableMetadata::new_table(
        FormatVersion::V2,
        Uuid::from_u128(1),
        "file:///t",
        s,
        PartitionSpec::unpartitioned(),
        SortOrder::unsorted(),
        BTreeMap::new(),
        0,
    );
    assert!(r.is_err());
}

/// A metadata file that stores a reserved name as a property (`format-version`, written by
/// some engines) loads, as Java loads it; a new table may not store one.
#[test]
fn reserved_property_names_load_but_are_not_created() {
    let mut m = table(FormatVersion::V2);
    m.properties.insert("format-version".into(), "2".into());
    let back = TableMetadata::from_json(&m.to_json().unwrap()).unwrap();
    assert_eq!(
        back.properties.get("format-version").map(String::as_str),
        Some("2")
    );
    let err = TableMetadata::new_table(
        FormatVersion::V2,
        Uuid::nil(),
        "s3://b/t",
        schema(),
        PartitionSpec::unpartitioned(),
        SortOrder::unsorted(),
        m.properties.clone(),
        0,
    )
    .unwrap_err();
    assert!(err.to_string().contains("format-version"), "{err}");
}

/// Manifests of a spec whose source column was dropped since are written with the newest
/// schema that still has it; every other spec's with the current schema.
#[test]
fn the_schema_for_a_spec_binds_its_sources() {
    let mut m = table(FormatVersion::V2);
    let without_ts =
        Schema::new(1, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    m.schemas.push(without_ts);
    m.current_schema_id = 1;
    let day = m.partition_specs[0].clone();
    assert_eq!(m.schema_for_spec(&day).unwrap().schema_id(), 0);
    let unpartitioned = PartitionSpec::new_unchecked(1, Vec::new());
    assert_eq!(m.schema_for_spec(&unpartitioned).unwrap().schema_id(), 1);
    // No schema has the source: the current one (the spec's type then comes from its
    // transform alone).
    let gone = PartitionSpec::new_unchecked(
        2,
        vec![crate::partition::PartitionField {
            name: "x_bucket".into(),
            transform: Transform::Bucket(2),
            source_id: 99,
            field_id: 1001,
        }],
    );
    assert_eq!(m.schema_for_spec(&gone).unwrap().schema_id(), 1);
}

/// The spec: "All v3 readers are required to read tables with unknown transforms". Metadata
/// whose default spec and sort order use a transform this library does not know loads and is
/// written back unchanged; only a new table (or a write) refuses it.
#[test]
fn unknown_transforms_load_and_are_written_back_but_no_new_table_has_one() {
    let mut v: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V3).to_json().unwrap()).unwrap();
    v["partition-specs"][0]["fields"][0]["transform"] = "zorder".into();
    v["sort-orders"] = serde_json::json!([
        {"order-id": 0, "fields": []},
        {"order-id": 1, "fields": [{"transform": "hilbert[2]", "source-id": 2,
                                    "direction": "asc", "null-order": "nulls-first"}]}]);
    v["default-sort-order-id"] = 1.into();
    let m = TableMetadata::from_json(&v.to_string()).unwrap();
    let spec = m.default_spec().unwrap();
    assert_eq!(
        spec.fields()[0].transform,
        Transform::Unknown("zorder".into())
    );
    assert!(spec.has_unknown_transform());
    let back: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
    assert_eq!(back, v);
    // Where its values would be needed, the error names the transform.
    let err = spec
        .partition_type(m.current_schema().unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("zorder"), "{err}");
    let order = m.default_sort_order().unwrap().clone();
    assert!(order.validate(m.current_schema().unwrap()).is_err());
    let err = TableMetadata::new_table(
        FormatVersion::V3,
        Uuid::nil(),
        "s3://b/t",
        schema(),
        spec.clone(),
        SortOrder::unsorted(),
        BTreeMap::new(),
        0,
    )
    .unwrap_err();
    assert!(err.to_string().contains("zorder"), "{err}");
    let err = TableMetadata::new_table(
        FormatVersion::V3,
        Uuid::nil(),
        "s3://b/t",
        schema(),
        PartitionSpec::unpartitioned(),
        order,
        BTreeMap::new(),
        0,
    )
    .unwrap_err();
    assert!(err.to_string().contains("hilbert[2]"), "{err}");
}

/// Tables Java loads that an earlier version of this parser refused: a v1 void field whose
/// source column was dropped (Spark's REPLACE PARTITION FIELD, then DROP COLUMN), a v2
/// `write-default` (forward-compatible, so Java writes it on v2), and counters below ids in
/// use (raised, so no id assigned later collides), a v2 snapshot without a summary.
#[test]
fn tables_java_loads_load() {
    let mut v: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V1).to_json().unwrap()).unwrap();
    v["partition-specs"] = serde_json::json!([{"spec-id": 0, "fields": [
        {"name": "day_of_ts", "transform": "void", "source-id": 3, "field-id": 1000},
        {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1001}]}]);
    v["partition-spec"] = v["partition-specs"][0]["fields"].clone();
    v["last-partition-id"] = 1001.into();
    let m = TableMetadata::from_json(&v.to_string()).unwrap();
    assert_eq!(m.default_spec().unwrap().fields().len(), 2);

    let mut v: serde_json::Value =
        serde_json::from_str(&table(FormatVersion::V2).to_json().unwrap()).unwrap();
    v["schemas"][0]["fields"][0]["write-default"] = 5.into();
    // JSON null is no default (Java's `SingleValueParser`), so no v3 feature either.
    v["schemas"][0]["fields"][1]["initial-default"] = serde_json::Value::Null;
    v["last-partition-id"] = 999.into();
    v["last-column-id"] = 1.into();
    let m = TableMetadata::from_json(&v.to_string()).unwrap();
    assert!(m.current_schema().unwrap().min_format_version() < 3);
    assert_eq!(
        m.current_schema().unwrap().fields()[1].initial_default,
        None
    );
    assert_eq!((m.last_partition_id, m.last_column_id), (1000, 2));
    let mut initial = v.clone();
    initial["schemas"][0]["fields"][0]["initial-default"] = 5.into();
    let err = TableMetadata::from_json(&initial.to_string()).unwrap_err();
    assert!(err.to_string().contains("version 3"), "{err}");

    // A v2 snapshot without a summary (Java's `SnapshotParser` takes it: no operation).
    let mut bare = v.clone();
    bare["snapshots"] = serde_json::json!([{"snapshot-id": 7, "sequence-number": 1,
        "timestamp-ms": 1_700_000_000_000_i64, "manifest-list": "file:///t/metadata/snap-7.avro",
        "schema-id": 0}]);
    bare["current-snapshot-id"] = 7.into();
    bare["last-sequence-number"] = 1.into();
    let m = TableMetadata::from_json(&bare.to_string()).unwrap();
    assert_eq!(m.current_snapshot().unwrap().operation(), None);

    // Refs without `main` beside a current snapshot stay so (Java's `TableMetadataParser`
    // makes `main` only when there are no refs at all); `main`'s head is still the current
    // snapshot.
    assert_eq!(bare["refs"], serde_json::json!({}));
    assert!(m.refs.is_empty(), "{:?}", m.refs);
    assert_eq!(m.branch_head("main").unwrap().snapshot_id, 7);
    let again: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
    assert_eq!(again["refs"], serde_json::json!({}));
    let mut no_refs = bare.clone();
    no_refs.as_object_mut().unwrap().remove("refs");
    let m = TableMetadata::from_json(&no_refs.to_string()).unwrap();
    assert_eq!(m.refs["main"].snapshot_id, 7);
}
