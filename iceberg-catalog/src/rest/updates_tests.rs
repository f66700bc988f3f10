#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use iceberg_spec::snapshot::{MAIN_BRANCH, SnapshotRef};
use iceberg_spec::{
    FormatVersion, NestedField, Operation, PartitionSpec, PrimitiveType, Schema, SharedSnapshot,
    Snapshot, SortOrder, Summary, TableMetadata, Transform,
};
use proptest::prelude::*;
use serde_json::json;
use uuid::Uuid;

use super::*;

const UUID: &str = "9c12d441-03fe-4693-9a96-a0705ddf69c1";

fn base(version: FormatVersion) -> TableMetadata {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)
        .unwrap()
        .build()
        .unwrap();
    TableMetadata::new_table(
        version,
        Uuid::parse_str(UUID).unwrap(),
        "s3://b/db/t",
        schema,
        spec,
        SortOrder::unsorted(),
        BTreeMap::from([("owner".into(), "ana".into())]),
        1_700_000_000_000,
    )
    .unwrap()
}

fn snapshot(id: i64, parent: Option<i64>, seq: i64) -> Snapshot {
    Snapshot {
        snapshot_id: id,
        parent_snapshot_id: parent,
        sequence_number: seq,
        timestamp_ms: 1_700_000_000_000 + seq,
        manifest_list: Some(format!("s3://b/db/t/metadata/snap-{id}.avro")),
        manifests: None,
        summary: Some(Summary::new(Operation::Append)),
        schema_id: Some(0),
        first_row_id: None,
        added_rows: None,
        key_id: None,
    }
}

/// `base` with `snapshot` appended to `main`, as an append's planning leaves it.
fn appended(base: &TableMetadata, snapshot: Snapshot) -> TableMetadata {
    let mut new = base.clone();
    new.last_sequence_number = snapshot.sequence_number;
    new.current_snapshot_id = Some(snapshot.snapshot_id);
    new.refs.insert(
        MAIN_BRANCH.into(),
        SnapshotRef::branch(snapshot.snapshot_id),
    );
    new.snapshots.push(SharedSnapshot::new(snapshot));
    new
}

#[test]
fn an_append_is_one_snapshot_and_main_with_main_asserted() {
    let base = base(FormatVersion::V2);
    let first = appended(&base, snapshot(11, None, 1));
    let change = diff(&base, &first).unwrap();
    let text = serde_json::to_value(&change.requirements).unwrap();
    assert_eq!(
        text,
        json!([
            {"type": "assert-table-uuid", "uuid": UUID},
            // The spec's form for "main did not exist": the key present, null.
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null},
        ])
    );
    let updates = serde_json::to_value(&change.updates).unwrap();
    assert_eq!(updates[0]["action"], "add-snapshot");
    assert_eq!(updates[0]["snapshot"]["snapshot-id"], 11);
    assert_eq!(updates[0]["snapshot"]["sequence-number"], 1);
    assert_eq!(updates[0]["snapshot"]["summary"]["operation"], "append");
    assert_eq!(
        updates[1],
        json!({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 11})
    );
    assert_eq!(updates.as_array().unwrap().len(), 2);

    // The next append asserts where main points now.
    let second = appended(&first, snapshot(12, Some(11), 2));
    let change = diff(&first, &second).unwrap();
    assert_eq!(
        change.requirements[1],
        Requirement::AssertRefSnapshotId {
            reference: "main".into(),
            snapshot_id: Some(11)
        }
    );
    assert_eq!(change.updates.len(), 2);
}

/// A table whose refs lack `main` beside a current snapshot (Java loads it so, and so does
/// its server): the append asserts that `main` is absent, as Java's client does, not the
/// `main` a reader takes from the current snapshot.
#[test]
fn an_append_to_refs_without_main_asserts_no_main() {
    let mut base = appended(&base(FormatVersion::V2), snapshot(7, None, 1));
    base.refs.clear();
    let new = appended(&base, snapshot(8, Some(7), 2));
    let change = diff(&base, &new).unwrap();
    let json = serde_json::to_value(&change.requirements).unwrap();
    assert!(
        json.as_array().unwrap().contains(
            &json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null})
        ),
        "{json}"
    );
    // A change that leaves the head alone sends no ref at all.
    let mut props = base.clone();
    props.properties.insert("k".into(), "v".into());
    let change = diff(&base, &props).unwrap();
    let json = serde_json::to_value((&change.requirements, &change.updates)).unwrap();
    assert!(!json.to_string().contains("snapshot-ref"), "{json}");
}

#[test]
fn a_v3_snapshot_carries_its_row_range() {
    let base = base(FormatVersion::V3);
    let mut s = snapshot(11, None, 1);
    s.first_row_id = Some(0);
    s.added_rows = Some(25);
    let change = diff(&base, &appended(&base, s)).unwrap();
    let updates = serde_json::to_value(&change.updates).unwrap();
    assert_eq!(updates[0]["snapshot"]["first-row-id"], 0);
    assert_eq!(updates[0]["snapshot"]["added-rows"], 25);
}

#[test]
fn nothing_changed_is_no_update() {
    let base = base(FormatVersion::V2);
    let change = diff(&base, &base).unwrap();
    assert!(change.updates.is_empty());
    assert_eq!(change.requirements.len(), 1);
}

#[test]
fn a_new_schema_is_added_and_made_current_as_the_last_added() {
    let base = base(FormatVersion::V2);
    let mut new = base.clone();
    let wider = Schema::new(
        1,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "note", PrimitiveType::String),
        ],
    )
    .unwrap();
    new.schemas.push(wider);
    new.current_schema_id = 1;
    new.last_column_id = 3;
    let change = diff(&base, &new).unwrap();
    let updates = serde_json::to_value(&change.updates).unwrap();
    assert_eq!(updates[0]["action"], "add-schema");
    assert_eq!(updates[0]["schema"]["fields"][2]["name"], "note");
    assert_eq!(updates[0]["last-column-id"], 3);
    assert_eq!(
        updates[1],
        json!({"action": "set-current-schema", "schema-id": -1})
    );
    assert!(
        change
            .requirements
            .contains(&Requirement::AssertLastAssignedFieldId {
                last_assigned_field_id: 2
            })
    );
    assert!(
        change
            .requirements
            .contains(&Requirement::AssertCurrentSchemaId {
                current_schema_id: 0
            })
    );
}

#[test]
fn an_upgrade_and_a_location_move_are_sent() {
    let base = base(FormatVersion::V2);
    let mut new = base.clone();
    new.format_version = FormatVersion::V3;
    new.next_row_id = Some(0);
    new.location = "s3://other/t".into();
    let updates = serde_json::to_value(diff(&base, &new).unwrap().updates).unwrap();
    assert_eq!(
        updates,
        json!([
            {"action": "upgrade-format-version", "format-version": 3},
            {"action": "set-location", "location": "s3://other/t"},
        ])
    );
}

#[test]
fn expired_snapshots_and_dropped_refs_are_removed() {
    let base = base(FormatVersion::V2);
    let one = appended(&base, snapshot(11, None, 1));
    let mut two = appended(&one, snapshot(12, Some(11), 2));
    two.refs.insert("audit".into(), SnapshotRef::branch(11));
    let mut expired = two.clone();
    expired.snapshots.retain(|s| s.snapshot_id != 11);
    expired.refs.remove("audit");
    let change = diff(&two, &expired).unwrap();
    assert_eq!(
        change.updates,
        [
            Update::RemoveSnapshots {
                snapshot_ids: vec![11]
            },
            Update::RemoveSnapshotRef {
                ref_name: "audit".into()
            },
        ]
    );
    assert!(
        change
            .requirements
            .contains(&Requirement::AssertRefSnapshotId {
                reference: "audit".into(),
                snapshot_id: Some(11)
            })
    );
}

#[test]
fn an_expired_snapshots_statistics_files_are_removed_and_none_is_added() {
    use iceberg_spec::table_metadata::{PartitionStatisticsFile, StatisticsFile};
    let base = base(FormatVersion::V2);
    let one = appended(&base, snapshot(11, None, 1));
    let mut two = appended(&one, snapshot(12, Some(11), 2));
    for id in [11, 12] {
        two.statistics.push(StatisticsFile {
            snapshot_id: id,
            statistics_path: format!("s3://b/db/t/metadata/{id}.stats"),
            file_size_in_bytes: 10,
            file_footer_size_in_bytes: 4,
            key_metadata: None,
            blob_metadata: Vec::new(),
        });
    }
    two.partition_statistics.push(PartitionStatisticsFile {
        snapshot_id: 11,
        statistics_path: "s3://b/db/t/metadata/11.pstats".into(),
        file_size_in_bytes: 10,
    });
    let mut expired = two.clone();
    expired.snapshots.retain(|s| s.snapshot_id != 11);
    expired.statistics.retain(|s| s.snapshot_id != 11);
    expired.partition_statistics.clear();
    let change = diff(&two, &expired).unwrap();
    assert_eq!(
        serde_json::to_value(&change.updates).unwrap(),
        json!([
            {"action": "remove-snapshots", "snapshot-ids": [11]},
            {"action": "remove-statistics", "snapshot-id": 11},
            {"action": "remove-partition-statistics", "snapshot-id": 11},
        ])
    );
    // Adding one is not something a REST update here says.
    let e = diff(&expired, &two).unwrap_err().to_string();
    assert!(e.contains("statistics files were added"), "{e}");
}

#[test]
fn what_no_update_expresses_is_refused() {
    let base = base(FormatVersion::V2);
    let mut other = base.clone();
    other.table_uuid = Some(Uuid::nil());
    assert!(
        diff(&base, &other)
            .unwrap_err()
            .to_string()
            .contains("UUID")
    );

    let mut edited = base.clone();
    edited.schemas[0] =
        Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    assert!(
        diff(&base, &edited)
            .unwrap_err()
            .to_string()
            .contains("schema 0 was edited")
    );

    // Removing what the base has is not silently skipped.
    let mut wider = base.clone();
    wider.schemas.push(
        Schema::new(
            1,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(3, "note", PrimitiveType::String),
            ],
        )
        .unwrap(),
    );
    let mut fewer = wider.clone();
    fewer.schemas.remove(1);
    let e = diff(&wider, &fewer).unwrap_err().to_string();
    assert!(e.contains("schema 1 was removed"), "{e}");

    // Two schemas added and the first made current: `-1` cannot name it.
    let mut two = base.clone();
    for id in [1, 2] {
        two.schemas.push(
            Schema::new(
                id,
                vec![
                    NestedField::required(1, "id", PrimitiveType::Long),
                    NestedField::optional(2 + id, "c", PrimitiveType::String),
                ],
            )
            .unwrap(),
        );
    }
    two.last_column_id = 4;
    two.current_schema_id = 1;
    let e = diff(&base, &two).unwrap_err().to_string();
    assert!(e.contains("not the last one added"), "{e}");

    // A snapshot edited under its own id.
    let one = appended(&base, snapshot(7, None, 1));
    let mut edited = one.clone();
    let mut changed = snapshot(7, None, 1);
    changed.manifest_list = Some("s3://b/db/t/metadata/other.avro".into());
    edited.snapshots[0] = SharedSnapshot::new(changed);
    let e = diff(&one, &edited).unwrap_err().to_string();
    assert!(e.contains("snapshot 7 was edited in place"), "{e}");

    let v3 = self::base(FormatVersion::V3);
    let mut down = v3.clone();
    down.format_version = FormatVersion::V2;
    assert!(
        diff(&v3, &down)
            .unwrap_err()
            .to_string()
            .contains("format version")
    );
}

proptest! {
    /// The property updates, applied to the base's properties as the server does (set, then
    /// remove), give exactly the new properties.
    #[test]
    fn property_updates_rebuild_the_new_properties(
        old in proptest::collection::btree_map("[a-d]{1,2}", "[x-z]{0,2}", 0..8),
        now in proptest::collection::btree_map("[a-d]{1,2}", "[x-z]{0,2}", 0..8),
    ) {
        let mut base = base(FormatVersion::V2);
        base.properties = old;
        let mut new = base.clone();
        new.properties = now.clone();
        let mut applied = base.properties.clone();
        for update in diff(&base, &new).unwrap().updates {
            match update {
                Update::SetProperties { updates } => applied.extend(updates),
                Update::RemoveProperties { removals } => {
                    for k in removals {
                        applied.remove(&k);
                    }
                }
                other => prop_assert!(false, "unexpected update {other:?}"),
            }
        }
        prop_assert_eq!(applied, now);
    }

    /// A chain of appends: each step is exactly one add-snapshot and one main update, with
    /// main asserted at the previous head.
    #[test]
    fn every_append_asserts_the_previous_head(ids in proptest::collection::btree_set(1i64..1_000_000, 1..6)) {
        let mut meta = base(FormatVersion::V2);
        let mut parent = None;
        for (seq, id) in ids.into_iter().enumerate() {
            let next = appended(&meta, snapshot(id, parent, seq as i64 + 1));
            let change = diff(&meta, &next).unwrap();
            prop_assert_eq!(change.updates.len(), 2);
            prop_assert_eq!(
                &change.requirements[1],
                &Requirement::AssertRefSnapshotId { reference: "main".into(), snapshot_id: parent }
            );
            parent = Some(id);
            meta = next;
        }
    }
}

#[test]
fn a_create_with_its_first_append_is_everything_after_assert_create() {
    let table = appended(&base(FormatVersion::V3), snapshot(11, None, 1));
    let change = create(&table).unwrap();
    assert_eq!(
        serde_json::to_value(&change.requirements).unwrap(),
        json!([{"type": "assert-create"}])
    );
    let updates = serde_json::to_value(&change.updates).unwrap();
    let actions: Vec<&str> = updates
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "assign-uuid",
            "upgrade-format-version",
            "add-schema",
            "set-current-schema",
            "add-spec",
            "set-default-spec",
            "add-sort-order",
            "set-default-sort-order",
            "set-location",
            "set-properties",
            "add-snapshot",
            "set-snapshot-ref",
        ]
    );
    assert_eq!(updates[0]["uuid"], UUID);
    assert_eq!(updates[1]["format-version"], 3);
    assert_eq!(updates[2]["last-column-id"], 2);
    // Each current one is the last added: named as -1, as Java's create transaction does.
    assert_eq!(updates[3]["schema-id"], -1);
    assert_eq!(updates[5]["spec-id"], -1);
    assert_eq!(updates[7]["sort-order-id"], -1);
    assert_eq!(updates[8]["location"], "s3://b/db/t");
    assert_eq!(updates[9]["updates"]["owner"], "ana");
    assert_eq!(updates[10]["snapshot"]["snapshot-id"], 11);
    assert_eq!(updates[11]["ref-name"], "main");
}
