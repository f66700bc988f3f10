//! Snapshot expiry (`ExpireSnapshots`): over random histories of fast and merge appends,
//! branches, tags and rollbacks, an expiry deletes exactly the files only the expired
//! snapshots reached (checked against reachability computed here from the manifests, and
//! against the store), and everything the kept snapshots reach still exists; a dry run and a
//! metadata-only expiry delete nothing; a racing append is kept.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use iceberg_append::{
    AppendMode, Catalog, DeterministicEnvironment, ExpireSnapshots, InMemoryCatalog, TableIdent,
};
use iceberg_io::FileIo;
use iceberg_spec::snapshot::{MAIN_BRANCH, SnapshotLogEntry, SnapshotRetention};
use iceberg_spec::{DataFile, FormatVersion, NestedField, PrimitiveType, Schema, SnapshotRef};
use proptest::prelude::*;

use crate::support::{Fixture, Race, STEP_MS, existing, fast_retry_creation, racing, reachable};

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    Append(usize, bool),
    /// A tag on the n-th snapshot (modulo), aging out after `Some(ms)`.
    Tag(usize, Option<i64>),
    /// A branch on the n-th snapshot, keeping `Some(k)` snapshots.
    Branch(usize, Option<i32>),
    /// `main` rolled back to its n-th ancestor.
    Rollback(usize),
    /// Snapshots older than the n-th snapshot's time expire, keeping `retain` per branch.
    Expire(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..4, any::<bool>()).prop_map(|(n, merge)| Op::Append(n, merge)),
        1 => (0usize..20, proptest::option::of(1i64..20)).prop_map(|(i, age)| Op::Tag(i, age.map(|a| a * STEP_MS))),
        1 => (0usize..20, proptest::option::of(1i32..3)).prop_map(|(i, k)| Op::Branch(i, k)),
        1 => (1usize..4).prop_map(Op::Rollback),
        2 => (0usize..20, 1usize..3).prop_map(|(i, k)| Op::Expire(i, k)),
    ]
}

async fn run(version: FormatVersion, ops: Vec<Op>) {
    let mut t = Fixture::new(version).await;
    t.append(1, AppendMode::Fast).await;
    for (k, op) in ops.into_iter().enumerate() {
        let (_, meta) = t.meta().await;
        let by_time: Vec<(i64, i64)> = {
            let mut v: Vec<(i64, i64)> = meta
                .snapshots
                .iter()
                .map(|s| (s.timestamp_ms, s.snapshot_id))
                .collect();
            v.sort_unstable();
            v
        };
        let nth = |i: usize| by_time[i % by_time.len()];
        match op {
            Op::Append(n, merge) => {
                let mode = if merge {
                    AppendMode::Merge
                } else {
                    AppendMode::Fast
                };
                t.append(n, mode).await;
            }
            Op::Tag(i, max_ref_age_ms) => {
                let (_, id) = nth(i);
                t.edit(|m| {
                    m.refs.insert(
                        format!("tag{k}"),
                        SnapshotRef {
                            snapshot_id: id,
                            retention: SnapshotRetention::Tag { max_ref_age_ms },
                        },
                    );
                })
                .await;
            }
            Op::Branch(i, min_snapshots_to_keep) => {
                let (_, id) = nth(i);
                t.edit(|m| {
                    m.refs.insert(
                        format!("branch{k}"),
                        SnapshotRef {
                            snapshot_id: id,
                            retention: SnapshotRetention::Branch {
                                min_snapshots_to_keep,
                                max_snapshot_age_ms: None,
                                max_ref_age_ms: None,
                            },
                        },
                    );
                })
                .await;
            }
            Op::Rollback(back) => {
                let mut id = meta.current_snapshot_id.unwrap();
                for _ in 0..back {
                    match meta.snapshot_by_id(id).and_then(|s| s.parent_snapshot_id) {
                        Some(p) if meta.snapshot_by_id(p).is_some() => id = p,
                        _ => break,
                    }
                }
                let now = iceberg_append::Environment::now_ms(t.env.as_ref());
                t.edit(|m| {
                    m.current_snapshot_id = Some(id);
                    m.refs.insert(MAIN_BRANCH.into(), SnapshotRef::branch(id));
                    m.snapshot_log.push(SnapshotLogEntry {
                        timestamp_ms: now,
                        snapshot_id: id,
                    });
                })
                .await;
            }
            Op::Expire(i, retain) => {
                let (time, _) = nth(i);
                let before = reachable(&t.io, &meta).await;
                let expiry = ExpireSnapshots::new()
                    .older_than_ms(time)
                    .retain_last(retain);
                let report = expiry
                    .commit(&t.catalog, &t.ident, t.env.as_ref())
                    .await
                    .unwrap();
                assert!(report.cleanup_error.is_none(), "{:?}", report.cleanup_error);
                let (_, after) = t.meta().await;
                let kept = reachable(&t.io, &after).await;
                // Everything a kept snapshot reaches exists.
                assert_eq!(
                    existing(&t.io, &kept).await,
                    kept,
                    "a kept file was deleted"
                );
                // Everything only the expired snapshots reached is gone, and reported.
                let only_expired: BTreeSet<String> = before.difference(&kept).cloned().collect();
                assert!(
                    existing(&t.io, &only_expired).await.is_empty(),
                    "not deleted"
                );
                let reported: BTreeSet<String> = report.files.paths.iter().cloned().collect();
                assert_eq!(reported, only_expired);
                assert_eq!(
                    report.files.data_files.files
                        + report.files.manifests.files
                        + report.files.manifest_lists.files,
                    only_expired.len()
                );
                assert_eq!(after.snapshots.len(), report.kept_snapshots);
                assert!(report.files_deleted || only_expired.is_empty());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn expiry_deletes_exactly_what_only_expired_snapshots_reach_v2(
        ops in proptest::collection::vec(op(), 1..16)
    ) {
        tokio::runtime::Runtime::new().unwrap().block_on(run(FormatVersion::V2, ops));
    }

    #[test]
    fn expiry_deletes_exactly_what_only_expired_snapshots_reach_v1(
        ops in proptest::collection::vec(op(), 1..16)
    ) {
        tokio::runtime::Runtime::new().unwrap().block_on(run(FormatVersion::V1, ops));
    }
}

#[tokio::test]
async fn a_dry_run_and_a_metadata_only_expiry_delete_nothing() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..4 {
        t.append(1, AppendMode::Merge).await;
    }
    let (_, meta) = t.meta().await;
    let before = reachable(&t.io, &meta).await;
    let expiry = ExpireSnapshots::new().older_than_ms(i64::MAX);
    let planned = expiry.plan(&t.io, &meta, i64::MAX).await.unwrap();
    assert_eq!(planned.expired_snapshots.len(), 3);
    assert!(planned.metadata_location.is_none() && !planned.files_deleted);
    // The merge folded the first manifests into new ones: their files are unreachable now.
    assert!(planned.files.manifests.files > 0);
    assert_eq!(planned.files.manifest_lists.files, 3);
    assert_eq!(
        planned.files.data_files.files, 0,
        "every data file is still live"
    );
    assert_eq!(existing(&t.io, &before).await, before);
    let report = expiry
        .clone()
        .keep_files()
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.expired_snapshots, planned.expired_snapshots);
    assert!(!report.files_deleted);
    assert_eq!(
        existing(&t.io, &before).await,
        before,
        "keep_files deleted a file"
    );
    let (_, after) = t.meta().await;
    assert_eq!(after.snapshots.len(), 1);
    // Nothing left to expire: no commit.
    let again = expiry
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert!(again.metadata_location.is_none() && again.expired_snapshots.is_empty());
}

#[tokio::test]
async fn an_append_racing_the_expiry_is_kept_and_its_files_survive() {
    let t = Fixture::new(FormatVersion::V2).await;
    let racing = racing(t.catalog.clone(), t.env.clone(), None);
    let mut t = t;
    for _ in 0..3 {
        t.append(1, AppendMode::Fast).await;
    }
    t.io.put(
        "memory://wh/db/t/data/theirs.parquet",
        Bytes::from_static(b"PAR1"),
    )
    .await
    .unwrap();
    *racing.interceptor.race.lock().unwrap() = Some(Race::Append(Box::new(DataFile {
        file_path: "memory://wh/db/t/data/theirs.parquet".into(),
        record_count: 1,
        file_size_in_bytes: 4,
        ..Default::default()
    })));
    let report = ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(&racing, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.attempts, 2);
    let (_, after) = t.meta().await;
    // The racing append is the head, so only it is kept; every data file is live in it.
    assert_eq!(after.snapshots.len(), 1);
    let kept = reachable(&t.io, &after).await;
    assert!(kept.contains("memory://wh/db/t/data/theirs.parquet"));
    assert_eq!(existing(&t.io, &kept).await, kept);
    assert_eq!(report.expired_snapshots.len(), 3);
    assert_eq!(report.files.data_files.files, 0);
}

#[tokio::test]
async fn a_lost_answer_still_cleans_up_after_the_expiry_that_landed() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..3 {
        t.append(1, AppendMode::Merge).await;
    }
    let racing = racing(
        t.catalog.clone(),
        t.env.clone(),
        Some(Race::LandedThenConflict),
    );
    let (_, meta) = t.meta().await;
    let before = reachable(&t.io, &meta).await;
    let report = ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(&racing, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.expired_snapshots.len(), 2);
    let (_, after) = t.meta().await;
    let kept = reachable(&t.io, &after).await;
    let gone: BTreeSet<String> = before.difference(&kept).cloned().collect();
    assert!(!gone.is_empty());
    assert!(existing(&t.io, &gone).await.is_empty());
    assert_eq!(existing(&t.io, &kept).await, kept);
}

/// Our expiry lands, its answer is lost and another writer appends on top before the reload:
/// the expiry is found one file back in the log, reported once, and the files only its
/// expired snapshots reached are deleted (not leaked by a second expiry of what was left).
#[tokio::test]
async fn a_lost_answer_under_a_later_append_still_cleans_up_after_the_expiry_that_landed() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..3 {
        t.append(1, AppendMode::Merge).await;
    }
    let theirs = "memory://wh/db/t/data/theirs.parquet";
    t.io.put(theirs, Bytes::from_static(b"PAR1")).await.unwrap();
    let racing = racing(
        t.catalog.clone(),
        t.env.clone(),
        Some(Race::LandedThenAppended(Box::new(DataFile {
            file_path: theirs.into(),
            record_count: 1,
            file_size_in_bytes: 4,
            ..Default::default()
        }))),
    );
    let (_, meta) = t.meta().await;
    let head = meta.current_snapshot_id;
    let before = reachable(&t.io, &meta).await;
    let report = ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(&racing, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!((report.attempts, report.expired_snapshots.len()), (1, 2));
    let (_, after) = t.meta().await;
    // Our expiry's head and their append on it.
    assert_eq!(after.snapshots.len(), 2);
    assert!(after.snapshot_by_id(head.unwrap()).is_some());
    let kept = reachable(&t.io, &after).await;
    assert!(kept.contains(theirs));
    let gone: BTreeSet<String> = before.difference(&kept).cloned().collect();
    assert!(!gone.is_empty());
    assert!(existing(&t.io, &gone).await.is_empty(), "leaked: {gone:?}");
    assert_eq!(existing(&t.io, &kept).await, kept);
}

/// A table of four merge appends (so an expiry has lists, manifests and data files to
/// delete) on a fault-injecting in-memory store.
async fn faulty_table() -> (Fixture, iceberg_io::testing::FaultInjectingStore) {
    let store = iceberg_io::testing::FaultInjectingStore::new(Arc::new(
        iceberg_io::object_store::memory::InMemory::new(),
    ));
    let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
    let env = Arc::new(DeterministicEnvironment::new(1_000_000, STEP_MS, 7));
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    let mut creation = fast_retry_creation("memory://wh/db/t", schema);
    creation
        .properties
        .insert("commit.manifest.min-count-to-merge".into(), "2".into());
    catalog.create_table(&ident, creation).await.unwrap();
    let mut t = Fixture {
        io,
        env,
        catalog,
        ident,
        files: 0,
    };
    for _ in 0..4 {
        t.append(2, AppendMode::Merge).await;
    }
    (t, store)
}

/// Every store operation of an expiry fails in turn (before the store saw it, or after it
/// did): the table always loads, nothing a kept snapshot reaches is missing, and an expiry
/// that reported success kept exactly the snapshots it said; a failure before the commit
/// landed leaves every snapshot, one after it only orphans.
#[tokio::test]
async fn an_expiry_failing_at_any_store_operation_leaves_no_dangling_reference() {
    let expiry = ExpireSnapshots::new().older_than_ms(i64::MAX);
    let (t, store) = faulty_table().await;
    let armed = store.op_count();
    let clean = expiry
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    let ops = store.op_count() - armed;
    assert!(clean.files.manifests.files > 0 && ops > 5, "{ops} ops");
    let mut outcomes = BTreeMap::new();
    for n in 0..ops {
        for point in [
            iceberg_io::testing::FailPoint::Before,
            iceberg_io::testing::FailPoint::After,
        ] {
            let (t, store) = faulty_table().await;
            let (_, before) = t.meta().await;
            let before_files = reachable(&t.io, &before).await;
            store.fail_at(n + 1, point);
            let result = expiry.commit(&t.catalog, &t.ident, t.env.as_ref()).await;
            store.clear_faults();
            let (_, after) = t.meta().await;
            let kept = reachable(&t.io, &after).await;
            assert_eq!(
                existing(&t.io, &kept).await,
                kept,
                "op {n} {point:?}: a file the table reaches is gone"
            );
            let kind = match &result {
                Ok(r) if r.cleanup_error.is_some() => "committed, cleanup failed",
                Ok(_) => "done",
                Err(_) => "failed",
            };
            match result {
                Ok(report) => {
                    assert_eq!(after.snapshots.len(), report.kept_snapshots);
                    assert_eq!(after.snapshots.len(), 1, "op {n} {point:?}");
                }
                Err(e) => {
                    // Before the swap nothing changed; an unknown swap may have landed,
                    // but then nothing was deleted.
                    if after.snapshots.len() != before.snapshots.len() {
                        assert!(
                            matches!(e, iceberg_append::Error::CommitStateUnknown { .. }),
                            "op {n} {point:?}: {e}"
                        );
                        assert_eq!(existing(&t.io, &before_files).await, before_files);
                    }
                }
            }
            *outcomes.entry(kind).or_insert(0) += 1;
        }
    }
    // The sweep reached every phase: reads before the commit, the swap, the deletes.
    assert!(outcomes.len() >= 2, "{outcomes:?}");
}
