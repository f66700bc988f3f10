#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::snapshot::{Operation, SharedSnapshot, SnapshotLogEntry, Summary};
use crate::table_metadata::FormatVersion;
use crate::table_metadata::StatisticsFile;
use crate::{NestedField, PartitionSpec, PrimitiveType, Schema, SortOrder};

const DAY: i64 = 24 * 60 * 60 * 1000;
const NOW: i64 = 100 * DAY;

fn table(properties: &[(&str, &str)]) -> TableMetadata {
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    TableMetadata::new_table(
        FormatVersion::V2,
        Uuid::nil(),
        "memory://t",
        schema,
        PartitionSpec::unpartitioned(),
        SortOrder::unsorted(),
        properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        0,
    )
    .unwrap()
}

/// Adds snapshot `id` with `parent`, `days_ago` before [`NOW`], without moving any ref.
fn add(meta: &mut TableMetadata, id: i64, parent: Option<i64>, days_ago: i64) {
    meta.last_sequence_number = meta.last_sequence_number.max(id);
    meta.snapshots.push(SharedSnapshot::new(Snapshot {
        snapshot_id: id,
        parent_snapshot_id: parent,
        sequence_number: id,
        timestamp_ms: NOW - days_ago * DAY,
        manifest_list: Some(format!("memory://t/metadata/snap-{id}.avro")),
        manifests: None,
        summary: Some(Summary::new(Operation::Append)),
        schema_id: Some(0),
        first_row_id: None,
        added_rows: None,
        key_id: None,
    }));
}

/// A `main` history `ids` (oldest first), one snapshot per day, the last one today.
fn main_history(meta: &mut TableMetadata, ids: &[i64]) {
    let n = ids.len() as i64;
    for (i, id) in ids.iter().enumerate() {
        let parent = (i > 0).then(|| ids[i - 1]);
        add(meta, *id, parent, n - 1 - i as i64);
        meta.snapshot_log.push(SnapshotLogEntry {
            timestamp_ms: NOW - (n - 1 - i as i64) * DAY,
            snapshot_id: *id,
        });
    }
    let head = *ids.last().unwrap();
    meta.current_snapshot_id = Some(head);
    meta.refs
        .insert(MAIN_BRANCH.into(), SnapshotRef::branch(head));
}

fn ids(set: &BTreeSet<i64>) -> Vec<i64> {
    set.iter().copied().collect()
}

#[test]
fn snapshots_older_than_five_days_expire_by_default_but_the_head() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2, 3, 4, 5, 6, 7, 8]);
    // ages 7..0 days: 1 (7 days), 2 (6), 3 (5 days: exactly the cut-off, kept), ...
    let plan = plan_expiry(&meta, NOW, &ExpireOptions::default()).unwrap();
    assert_eq!(ids(&plan.expired), vec![1, 2]);
    // Everything older than now, but the head: min-snapshots-to-keep is 1.
    let plan = plan_expiry(
        &meta,
        NOW,
        &ExpireOptions {
            older_than_ms: Some(NOW + 1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ids(&plan.expired), vec![1, 2, 3, 4, 5, 6, 7]);
    let expired = apply_expiry(&meta, &plan);
    assert_eq!(expired.snapshots.len(), 1);
    assert_eq!(expired.current_snapshot_id, Some(8));
    assert_eq!(expired.snapshot_log.len(), 1);
}

#[test]
fn retain_last_and_the_table_properties_keep_that_many_of_each_branch() {
    let mut meta = table(&[("history.expire.min-snapshots-to-keep", "3")]);
    main_history(&mut meta, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let all = ExpireOptions {
        older_than_ms: Some(NOW + 1),
        ..Default::default()
    };
    assert_eq!(
        ids(&plan_expiry(&meta, NOW, &all).unwrap().expired),
        vec![1, 2, 3, 4, 5]
    );
    let five = ExpireOptions {
        retain_last: Some(5),
        ..all.clone()
    };
    assert_eq!(
        ids(&plan_expiry(&meta, NOW, &five).unwrap().expired),
        vec![1, 2, 3]
    );
    let none = ExpireOptions {
        retain_last: Some(0),
        ..all.clone()
    };
    let err = plan_expiry(&meta, NOW, &none).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { option, .. } if option == "retain_last"),
        "{err}"
    );
    let mut meta = table(&[("history.expire.max-snapshot-age-ms", &(2 * DAY).to_string())]);
    main_history(&mut meta, &[1, 2, 3, 4]);
    let plan = plan_expiry(&meta, NOW, &ExpireOptions::default()).unwrap();
    assert_eq!(ids(&plan.expired), vec![1]);
}

#[test]
fn branches_and_tags_keep_their_snapshots_under_their_own_retention() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2, 3, 4, 5, 6, 7, 8]);
    // A branch off 3 with two commits of its own, 20 and 19 days old, keeping 2 snapshots.
    add(&mut meta, 31, Some(3), 20);
    add(&mut meta, 32, Some(31), 19);
    meta.refs.insert(
        "audit".into(),
        SnapshotRef {
            snapshot_id: 32,
            retention: SnapshotRetention::Branch {
                min_snapshots_to_keep: Some(2),
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        },
    );
    // A tag on 2 and one on 1 that ages out after 6.5 days.
    let tag = |id, max_ref_age_ms| SnapshotRef {
        snapshot_id: id,
        retention: SnapshotRetention::Tag { max_ref_age_ms },
    };
    meta.refs.insert("v1".into(), tag(2, None));
    meta.refs
        .insert("old".into(), tag(1, Some(6 * DAY + DAY / 2)));
    let everything = ExpireOptions {
        older_than_ms: Some(NOW + 1),
        ..Default::default()
    };
    let plan = plan_expiry(&meta, NOW, &everything).unwrap();
    // main keeps 8; audit keeps 32 and 31; v1 keeps 2; old is removed with snapshot 1.
    assert_eq!(ids(&plan.expired), vec![1, 3, 4, 5, 6, 7]);
    assert_eq!(plan.removed_refs, BTreeSet::from(["old".to_string()]));
    let after = apply_expiry(&meta, &plan);
    let refs: Vec<&String> = after.refs.keys().collect();
    assert_eq!(refs, vec!["audit", "main", "v1"]);
    // A branch whose head is too old for the table's max-ref-age goes, snapshots and all.
    meta.properties.insert(
        "history.expire.max-ref-age-ms".into(),
        (10 * DAY).to_string(),
    );
    let plan = plan_expiry(&meta, NOW, &everything).unwrap();
    assert_eq!(
        plan.removed_refs,
        BTreeSet::from(["audit".to_string(), "old".to_string()])
    );
    assert!(plan.expired.is_superset(&BTreeSet::from([31, 32])));
    // main is never removed, however old its head.
    assert!(!plan.removed_refs.contains(MAIN_BRANCH));
}

#[test]
fn staged_snapshots_stay_while_young_and_named_ones_go_unless_a_ref_holds_them() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2, 3]);
    add(&mut meta, 90, Some(3), 0); // staged today (write-audit-publish), no ref
    add(&mut meta, 91, Some(1), 9); // staged long ago
    let plan = plan_expiry(&meta, NOW, &ExpireOptions::default()).unwrap();
    assert_eq!(ids(&plan.expired), vec![91]);
    let named = ExpireOptions {
        snapshot_ids: BTreeSet::from([2, 90]),
        ..Default::default()
    };
    assert_eq!(
        ids(&plan_expiry(&meta, NOW, &named).unwrap().expired),
        vec![2, 90, 91]
    );
    let head = ExpireOptions {
        snapshot_ids: BTreeSet::from([3]),
        ..Default::default()
    };
    let err = plan_expiry(&meta, NOW, &head).unwrap_err();
    assert!(err.to_string().contains("`main`"), "{err}");
}

#[test]
fn the_snapshot_log_restarts_after_its_last_expired_entry_and_statistics_go_with_their_snapshot() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2, 3, 4]);
    // A rollback: the log goes 1, 2, 3, 1 (current 1 again), then 4.
    meta.snapshot_log.insert(
        3,
        SnapshotLogEntry {
            timestamp_ms: NOW - DAY / 2,
            snapshot_id: 1,
        },
    );
    for id in [2, 4] {
        meta.statistics.push(StatisticsFile {
            snapshot_id: id,
            statistics_path: format!("memory://t/metadata/{id}.stats"),
            file_size_in_bytes: 10,
            file_footer_size_in_bytes: 5,
            key_metadata: None,
            blob_metadata: Vec::new(),
        });
    }
    let plan = ExpiryPlan {
        expired: BTreeSet::from([2]),
        removed_refs: BTreeSet::new(),
    };
    let after = apply_expiry(&meta, &plan);
    let log: Vec<i64> = after.snapshot_log.iter().map(|e| e.snapshot_id).collect();
    assert_eq!(log, vec![3, 1, 4]);
    let stats: Vec<i64> = after.statistics.iter().map(|s| s.snapshot_id).collect();
    assert_eq!(stats, vec![4]);
    after.validate().unwrap();
}

/// Removing only refs leaves the snapshot log alone (Java's `updateSnapshotLog` rewrites it
/// only when snapshots go), even where it names a snapshot that is gone already.
#[test]
fn removing_only_refs_leaves_the_snapshot_log_alone() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2]);
    meta.snapshot_log.insert(
        0,
        SnapshotLogEntry {
            timestamp_ms: NOW - 9 * DAY,
            snapshot_id: 99,
        },
    );
    meta.refs.insert("old".into(), SnapshotRef::branch(1));
    let plan = ExpiryPlan {
        expired: BTreeSet::new(),
        removed_refs: BTreeSet::from(["old".to_string()]),
    };
    let after = apply_expiry(&meta, &plan);
    assert!(!after.refs.contains_key("old"));
    assert_eq!(after.snapshot_log, meta.snapshot_log);
}

/// A random history: a `main` line, branches and tags off random snapshots, random ages
/// and ref retention.
fn history() -> impl Strategy<Value = TableMetadata> {
    (
        2usize..12,
        proptest::collection::vec((0usize..12, 1usize..4, any::<bool>(), 0i64..12), 0..4),
        proptest::collection::vec(0i64..12, 12),
    )
        .prop_map(|(n, refs, ages)| {
            let mut meta = table(&[("history.expire.max-snapshot-age-ms", &(3 * DAY).to_string())]);
            let main: Vec<i64> = (1..=n as i64).collect();
            main_history(&mut meta, &main);
            for (i, snapshot) in meta.snapshots.iter_mut().enumerate() {
                let mut s = snapshot.snapshot().clone();
                s.timestamp_ms = NOW - ages[i] * DAY;
                *snapshot = SharedSnapshot::new(s);
            }
            for (k, (from, len, tag, age)) in refs.into_iter().enumerate() {
                let base = main[from % n];
                if tag {
                    meta.refs.insert(
                        format!("t{k}"),
                        SnapshotRef {
                            snapshot_id: base,
                            retention: SnapshotRetention::Tag {
                                max_ref_age_ms: (age % 2 == 0).then_some(age * DAY),
                            },
                        },
                    );
                    continue;
                }
                let mut parent = base;
                for j in 0..len {
                    let id = 100 * (k as i64 + 1) + j as i64;
                    add(&mut meta, id, Some(parent), age);
                    parent = id;
                }
                meta.refs.insert(
                    format!("b{k}"),
                    SnapshotRef {
                        snapshot_id: parent,
                        retention: SnapshotRetention::Branch {
                            min_snapshots_to_keep: (len % 2 == 0).then_some(2),
                            max_snapshot_age_ms: None,
                            max_ref_age_ms: (age % 3 == 0).then_some(5 * DAY),
                        },
                    },
                );
            }
            meta
        })
}

proptest! {
    /// Whatever the history: every kept ref's snapshot and the main head survive, no kept
    /// ref points at an expired snapshot, only snapshots the plan names are removed, and
    /// the result validates and expires nothing more when planned again.
    #[test]
    fn expiry_keeps_every_kept_ref_and_is_stable(
        meta in history(),
        older in proptest::option::of(0i64..12),
        retain in proptest::option::of(1usize..4),
    ) {
        let options = ExpireOptions {
            older_than_ms: older.map(|d| NOW - d * DAY),
            retain_last: retain,
            snapshot_ids: BTreeSet::new(),
        };
        let plan = plan_expiry(&meta, NOW, &options).unwrap();
        let after = apply_expiry(&meta, &plan);
        after.validate().unwrap();
        prop_assert_eq!(after.current_snapshot_id, meta.current_snapshot_id);
        let kept: BTreeSet<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
        for (name, r) in &after.refs {
            prop_assert!(kept.contains(&r.snapshot_id), "ref {} dangles", name);
        }
        for name in meta.refs.keys() {
            prop_assert!(after.refs.contains_key(name) || plan.removed_refs.contains(name));
        }
        let before: BTreeSet<i64> = meta.snapshots.iter().map(|s| s.snapshot_id).collect();
        let removed: BTreeSet<i64> = before.difference(&kept).copied().collect();
        prop_assert_eq!(&removed, &plan.expired);
        // The head of main keeps at least `retain` of its ancestors.
        let keep = retain.unwrap_or(1);
        let mut head = meta.current_snapshot_id;
        let mut line = 0;
        while let Some(id) = head.filter(|_| line < keep) {
            prop_assert!(kept.contains(&id));
            head = meta.snapshot_by_id(id).and_then(|s| s.parent_snapshot_id);
            line += 1;
        }
        let again = plan_expiry(&after, NOW, &options).unwrap();
        prop_assert!(again.is_empty(), "planned again: {:?}", again);
    }
}

#[test]
fn effective_refs_give_old_documents_a_main() {
    let mut meta = table(&[]);
    main_history(&mut meta, &[1, 2]);
    meta.refs.clear();
    let refs = effective_refs(&meta);
    assert_eq!(refs.get(MAIN_BRANCH).map(|r| r.snapshot_id), Some(2));
    let plan = plan_expiry(
        &meta,
        NOW,
        &ExpireOptions {
            older_than_ms: Some(NOW + 1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ids(&plan.expired), vec![1]);
    assert!(apply_expiry(&meta, &plan).refs.is_empty());
    let _: BTreeMap<String, SnapshotRef> = refs;
}
