//! Metadata files written by PyIceberg 0.12 parse, validate and round-trip losslessly.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::PathBuf;

use iceberg_spec::{FormatVersion, TableMetadata, Transform};

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/pyiceberg");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_parses_and_round_trips() {
    let all = fixtures();
    assert_eq!(
        all.len(),
        8,
        "fixture set changed: {:?}",
        all.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (name, text) in &all {
        let meta = TableMetadata::from_json(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let written = meta.to_json().unwrap();
        let back = TableMetadata::from_json(&written).unwrap();
        assert_eq!(back, meta, "{name} does not round-trip");
        // Nothing we understand is dropped: every top-level key of theirs is in ours.
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        let ours: serde_json::Value = serde_json::from_str(&written).unwrap();
        for key in theirs.as_object().unwrap().keys() {
            assert!(ours.get(key).is_some(), "{name}: key `{key}` lost");
        }
    }
}

#[test]
fn pyiceberg_v2_table_reads_as_written() {
    let (_, text) = fixtures()
        .into_iter()
        .find(|(n, _)| n == "events_v2-2.metadata.json")
        .unwrap();
    let meta = TableMetadata::from_json(&text).unwrap();
    assert_eq!(meta.format_version, FormatVersion::V2);
    assert_eq!(meta.snapshots.len(), 2);
    assert_eq!(meta.last_sequence_number, 2);
    let current = meta.current_snapshot().unwrap();
    assert_eq!(current.sequence_number, 2);
    let summary = current.summary.as_ref().unwrap();
    assert_eq!(summary.get_i64("total-records"), Some(6));
    let spec = meta.default_spec().unwrap();
    let transforms: Vec<Transform> = spec.fields().iter().map(|f| f.transform.clone()).collect();
    assert_eq!(
        transforms,
        vec![Transform::Day, Transform::Bucket(8), Transform::Truncate(4)]
    );
    let schema = meta.current_schema().unwrap();
    assert_eq!(schema.identifier_field_ids().len(), 1);
    assert!(schema.field_by_name("point.x").is_some());
    assert!(!meta.default_sort_order().unwrap().is_unsorted());
    assert_eq!(meta.metadata_log.len(), 2);
}

#[test]
fn pyiceberg_v1_table_keeps_v1_shape() {
    let (_, text) = fixtures()
        .into_iter()
        .find(|(n, _)| n == "events_v1-2.metadata.json")
        .unwrap();
    let meta = TableMetadata::from_json(&text).unwrap();
    assert_eq!(meta.format_version, FormatVersion::V1);
    let ours: serde_json::Value = serde_json::from_str(&meta.to_json().unwrap()).unwrap();
    assert!(ours.get("schema").is_some() && ours.get("partition-spec").is_some());
    assert!(ours.get("last-sequence-number").is_none());
}
