//! Manifest rewrites (`RewriteManifests`): many small data manifests become few, as a
//! `replace` snapshot, with every live entry kept exactly (snapshot id, data and file sequence
//! numbers, v3 first row id), totals unchanged and manifests clustered by partition; a racing
//! append is kept; a lost answer is recognised.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};

use iceberg_append::manifest::decode_manifest;
use iceberg_append::merge::inherit;
use iceberg_append::{AppendMode, RewriteManifests, read_manifest_list};
use iceberg_io::FileIo;
use iceberg_spec::{
    DataFile, FormatVersion, ManifestContent, ManifestStatus, Operation, TableMetadata,
};

use crate::support::{Fixture, Race, racing};

/// The live entries of the current snapshot with what they inherit made explicit:
/// path -> (snapshot id, data sequence number, file sequence number, first row id).
type Entries = BTreeMap<String, (Option<i64>, Option<i64>, Option<i64>, Option<i64>)>;

async fn live_entries(io: &FileIo, meta: &TableMetadata) -> (Entries, usize) {
    let head = meta.current_snapshot().unwrap();
    let mut out = BTreeMap::new();
    let mut data_manifests = 0;
    for m in read_manifest_list(io, head.manifest_list.as_deref())
        .await
        .unwrap()
    {
        if m.content == ManifestContent::Data {
            data_manifests += 1;
        }
        let bytes = io.read(&m.manifest_path).await.unwrap();
        let decoded = decode_manifest(&m.manifest_path, &bytes).unwrap();
        for e in inherit(&m, decoded.entries) {
            if e.status != ManifestStatus::Deleted {
                let f = &e.data_file;
                out.insert(
                    f.file_path.clone(),
                    (
                        e.snapshot_id,
                        e.sequence_number,
                        e.file_sequence_number,
                        f.first_row_id,
                    ),
                );
            }
        }
    }
    (out, data_manifests)
}

async fn rewritten_keeps_every_entry(version: FormatVersion) {
    let mut t = Fixture::new(version).await;
    for _ in 0..6 {
        t.append(2, AppendMode::Fast).await;
    }
    let (_, before) = t.meta().await;
    let (entries, manifests) = live_entries(&t.io, &before).await;
    assert_eq!((entries.len(), manifests), (12, 6));
    let report = RewriteManifests::new()
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(
        (
            report.manifests_replaced,
            report.manifests_created,
            report.entries
        ),
        (6, 1, 12)
    );
    let (_, after) = t.meta().await;
    let (kept, manifests) = live_entries(&t.io, &after).await;
    assert_eq!(manifests, 1);
    assert_eq!(kept, entries, "an entry changed what it inherited");
    let head = after.current_snapshot().unwrap();
    assert_eq!(head.snapshot_id, report.snapshot_id.unwrap());
    assert_eq!(head.operation(), Some(&Operation::Replace));
    let (was, now) = (
        before.current_snapshot().unwrap().summary.clone().unwrap(),
        head.summary.clone().unwrap(),
    );
    for key in ["total-records", "total-data-files", "total-files-size"] {
        assert_eq!(now.get_i64(key), was.get_i64(key), "{key}");
    }
    assert_eq!(now.get_i64("manifests-replaced"), Some(6));
    assert_eq!(now.get_i64("entries-processed"), Some(12));
    if version == FormatVersion::V3 {
        // Row ids of the files stay; the rewritten manifest takes a range of its own, as Java's.
        assert!(after.next_row_id >= before.next_row_id);
    }
    // Nothing left to rewrite: no commit.
    let again = RewriteManifests::new()
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert!(again.metadata_location.is_none());
}

#[tokio::test]
async fn a_rewrite_keeps_every_entry_and_total_v1() {
    rewritten_keeps_every_entry(FormatVersion::V1).await;
}

#[tokio::test]
async fn a_rewrite_keeps_every_entry_and_total_v2() {
    rewritten_keeps_every_entry(FormatVersion::V2).await;
}

#[tokio::test]
async fn a_rewrite_keeps_every_entry_and_total_v3() {
    rewritten_keeps_every_entry(FormatVersion::V3).await;
}

#[tokio::test]
async fn small_targets_roll_and_a_racing_append_is_kept() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..8 {
        t.append(3, AppendMode::Fast).await;
    }
    t.io.put(
        "memory://wh/db/t/data/theirs.parquet",
        bytes::Bytes::from_static(b"PAR1"),
    )
    .await
    .unwrap();
    // Their append is a fast one too (a merge would leave nothing to rewrite).
    t.edit(|m| {
        m.properties
            .insert("commit.manifest-merge.enabled".into(), "false".into());
    })
    .await;
    let theirs = DataFile {
        file_path: "memory://wh/db/t/data/theirs.parquet".into(),
        record_count: 1,
        file_size_in_bytes: 4,
        ..Default::default()
    };
    let racing = racing(
        t.catalog.clone(),
        t.env.clone(),
        Some(Race::Append(Box::new(theirs))),
    );
    let (_, before) = t.meta().await;
    let (entries, _) = live_entries(&t.io, &before).await;
    let report = RewriteManifests::new()
        .target_size_bytes(2_000)
        .commit(&racing, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.attempts, 2);
    assert!(report.manifests_created > 1, "{report:?}");
    let (_, after) = t.meta().await;
    let (kept, manifests) = live_entries(&t.io, &after).await;
    assert_eq!(manifests, report.manifests_created);
    // Every earlier entry as it was, and theirs.
    let paths: BTreeSet<&String> = kept.keys().collect();
    assert!(paths.contains(&"memory://wh/db/t/data/theirs.parquet".to_string()));
    for (path, e) in &entries {
        assert_eq!(kept.get(path), Some(e), "{path}");
    }
    // The lost attempt's manifests are gone; everything listed exists.
    let listed = crate::support::reachable(&t.io, &after).await;
    assert_eq!(crate::support::existing(&t.io, &listed).await, listed);
}

#[tokio::test]
async fn a_lost_answer_is_the_rewrite_that_landed() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..3 {
        t.append(1, AppendMode::Fast).await;
    }
    let racing = racing(
        t.catalog.clone(),
        t.env.clone(),
        Some(Race::LandedThenConflict),
    );
    let report = RewriteManifests::new()
        .commit(&racing, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    let (_, after) = t.meta().await;
    assert_eq!(after.current_snapshot_id, report.snapshot_id);
    let listed = crate::support::reachable(&t.io, &after).await;
    assert_eq!(crate::support::existing(&t.io, &listed).await, listed);
}
