//! Compaction (`RewriteDataFiles`): small files of each partition become one, as a `replace`
//! snapshot that keeps every row, gives the new files the starting snapshot's data sequence
//! number and marks the old ones DELETED; a partition with too few files is left alone; a
//! file written with another schema is skipped; of two racing compactions one lands and the
//! other is a typed conflict that leaves nothing behind; v3 is refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::region_table::{append_small_files, batch, ids, live, table, table_on};
use crate::support::conflict;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, RewriteDataFiles, TableHandle,
    TableIdent, commit_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, FormatVersion, Operation, PrimitiveType, TableMetadata};

/// Adds an optional `note` column: files written before it have other columns.
async fn add_note_column(handle: &mut TableHandle) {
    handle
        .new_transaction()
        .update_schema(|s| {
            s.add_column(None, "note", PrimitiveType::String.into(), None)?;
            Ok(())
        })
        .unwrap()
        .commit()
        .await
        .unwrap();
    handle.refresh().await.unwrap();
}

#[tokio::test]
async fn small_files_of_each_partition_become_one_and_keep_every_row() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..6, "eu").await;
    // Only two small files in `us`: left alone.
    append_small_files(&mut handle, 6..8, "us").await;
    let before = handle.metadata().clone();
    let start_sequence = before.current_snapshot().unwrap().sequence_number;
    let io = handle.io().clone();
    let files_before = live(&io, &before).await;
    assert_eq!(files_before.len(), 8);
    let mut groups = Vec::new();
    let report = RewriteDataFiles::new()
        .commit(
            catalog.as_ref(),
            handle.ident(),
            env.as_ref(),
            |i, n, files| {
                groups.push((i, n, files));
            },
        )
        .await
        .unwrap();
    assert_eq!(groups, vec![(0, 1, 6)]);
    assert_eq!(
        (
            report.groups,
            report.files_rewritten,
            report.files_written,
            report.rows
        ),
        (1, 6, 1, 60)
    );
    handle.refresh().await.unwrap();
    let after = handle.metadata().clone();
    let files_after = live(&io, &after).await;
    assert_eq!(files_after.len(), 3);
    let new: Vec<_> = files_after
        .iter()
        .filter(|(p, _)| !files_before.contains_key(*p))
        .collect();
    assert_eq!(new.len(), 1);
    // The starting snapshot's data sequence number, so later deletes apply as before.
    assert_eq!(new[0].1.1, Some(start_sequence));
    assert_eq!(ids(&io, &after).await, (0..80).collect::<Vec<_>>());
    let head = after.current_snapshot().unwrap();
    assert_eq!(head.operation(), Some(&Operation::Replace));
    let summary = head.summary.as_ref().unwrap();
    assert_eq!(summary.get_i64("total-records"), Some(80));
    assert_eq!(summary.get_i64("total-data-files"), Some(3));
    assert_eq!(summary.get_i64("deleted-data-files"), Some(6));
    assert_eq!(summary.get_i64("added-data-files"), Some(1));
    // The partition left and came back: changed, with both sides in its text (Java's
    // `ManifestFilterManager` counts removed files' partitions).
    assert_eq!(summary.get_i64("changed-partition-count"), Some(1));
    let text = &summary.properties["partitions.region=eu"];
    assert!(
        text.starts_with(
            "added-data-files=1,deleted-data-files=6,added-records=60,deleted-records=60,"
        ),
        "{text}"
    );
    // Nothing left to do.
    let again = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert!(again.metadata_location.is_none());
    // `min_input_files(2)` takes `us` too.
    let us = RewriteDataFiles::new()
        .min_input_files(2)
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(us.files_rewritten, 2);
}

#[tokio::test]
async fn files_of_another_schema_are_skipped() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    add_note_column(&mut handle).await;
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.skipped_other_schema, 5);
    assert!(report.metadata_location.is_none());
}

/// Files of another schema are found as the group is read: in a partition with enough
/// files of the current schema those are compacted and the others kept; a partition left
/// with one such file is not rewritten, and what was written for it is deleted.
#[tokio::test]
async fn files_of_another_schema_are_kept_beside_a_compaction() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    append_small_files(&mut handle, 5..9, "us").await;
    add_note_column(&mut handle).await;
    append_small_files(&mut handle, 10..15, "eu").await;
    append_small_files(&mut handle, 15..16, "us").await;
    let io = handle.io().clone();
    let before = live(&io, handle.metadata()).await;
    let stored_before = io.list("memory://wh/db/t/data").await.unwrap().len();
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.skipped_other_schema, 9);
    assert_eq!((report.groups, report.files_rewritten), (1, 5));
    assert_eq!(report.files_written, 1);
    assert_eq!(report.rows, 50);
    let after = catalog.load_table(handle.ident()).await.unwrap().metadata;
    let now = live(&io, &after).await;
    // eu's 5 old files, us's 5 files and the new one.
    assert_eq!(now.len(), 11);
    let kept = now.keys().filter(|p| before.contains_key(*p)).count();
    assert_eq!(kept, 10);
    let mut expect: Vec<i64> = (0..90).chain(100..160).collect();
    expect.sort_unstable();
    assert_eq!(ids(&io, &after).await, expect);
    // The one file written for `us` was deleted again: only eu's new file is stored.
    let stored_after = io.list("memory://wh/db/t/data").await.unwrap().len();
    assert_eq!(stored_after, stored_before + 1);
}

#[tokio::test]
async fn of_two_racing_compactions_one_lands_and_the_other_conflicts() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let (first, second) = (RewriteDataFiles::new(), RewriteDataFiles::new());
    let (a, b) = tokio::join!(
        first.commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {}),
        second.commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {}),
    );
    let (won, lost) = match (a, b) {
        (Ok(r), Err(e)) | (Err(e), Ok(r)) => (r, e),
        other => panic!("expected one landing and one conflict: {other:?}"),
    };
    assert!(matches!(lost, Error::RewriteConflict { .. }), "{lost}");
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    assert_eq!(meta.current_snapshot_id, won.snapshot_id);
    assert_eq!(ids(&io, meta).await, (0..50).collect::<Vec<_>>());
    // The loser's files are gone: only what the table reaches is under data/.
    let on_disk = io.list("memory://wh/db/t/data").await.unwrap();
    let reached: Vec<String> = live(&io, meta).await.into_keys().collect();
    let old: Vec<String> = on_disk
        .into_iter()
        .filter(|p| !reached.contains(p))
        .collect();
    // The five compacted-away files stay until an expiry; the loser left nothing.
    assert_eq!(old.len(), 5, "{old:?}");
}

/// Our swap lands, another writer appends on top of it, then the catalog answers
/// "conflict" (a store that retried our conditional create, say).
#[derive(Debug)]
struct LandedThenAppended {
    theirs: Mutex<Option<Vec<DataFile>>>,
    env: Arc<DeterministicEnvironment>,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for LandedThenAppended {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        let theirs = self.theirs.lock().unwrap().take();
        let location = inner.commit(ident, base, new).await?;
        let Some(theirs) = theirs else {
            return Ok(location);
        };
        commit_append(inner, ident, theirs, BTreeMap::new(), self.env.as_ref())
            .await
            .unwrap();
        Err(conflict(ident, base))
    }
}

/// A compaction whose answer was lost, with an append on top of it before the reload, is
/// the compaction that landed: none of its files is deleted, every row reads back.
#[tokio::test]
async fn a_lost_answer_under_a_later_append_is_the_compaction_that_landed() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let meta = handle.metadata();
    let theirs = iceberg_write::write_data_files(
        &io,
        &format!("{}/data", meta.location),
        &[batch(1000..1010, "eu")],
        meta.current_schema().unwrap(),
        meta.default_spec().unwrap(),
        None,
        &iceberg_write::WriteOptions::default(),
    )
    .await
    .unwrap();
    let racing = InterceptingCatalog::new(
        InMemoryCatalog::clone(&catalog),
        LandedThenAppended {
            theirs: Mutex::new(Some(theirs)),
            env: env.clone(),
        },
    );
    let report = RewriteDataFiles::new()
        .commit(&racing, &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    let ours = meta.snapshot_by_id(report.snapshot_id.unwrap()).unwrap();
    assert_eq!(ours.summary.as_ref().unwrap().operation, Operation::Replace);
    assert_ne!(meta.current_snapshot_id, report.snapshot_id);
    // Every live file is read back: the compacted one was kept.
    let mut expected: Vec<i64> = (0..50).chain(1000..1010).collect();
    expected.sort_unstable();
    assert_eq!(ids(&io, meta).await, expected);
    assert_eq!(live(&io, meta).await.len(), 2);
}

/// Our swap lands and the catalog answers "conflict"; then the table cannot be loaded once.
#[derive(Debug, Default)]
struct LandedThenUnreadable {
    landed: AtomicBool,
    load_failed: AtomicBool,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for LandedThenUnreadable {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        inner.commit(ident, base, new).await?;
        self.landed.store(true, Ordering::SeqCst);
        Err(conflict(ident, base))
    }

    async fn load_table(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
    ) -> iceberg_append::Result<iceberg_append::Table> {
        if self.landed.load(Ordering::SeqCst) && !self.load_failed.swap(true, Ordering::SeqCst) {
            return Err(Error::NoSuchTable {
                table: ident.to_string(),
            });
        }
        inner.load_table(ident).await
    }
}

/// When the table cannot be reloaded after a failed swap, the compaction's outcome is
/// unknown and none of its files is deleted: the swap had landed, and the table reads whole.
#[tokio::test]
async fn an_unreadable_table_after_a_failed_swap_keeps_the_compactions_files() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let racing = InterceptingCatalog::new(
        InMemoryCatalog::clone(&catalog),
        LandedThenUnreadable::default(),
    );
    let err = RewriteDataFiles::new()
        .commit(&racing, &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap_err();
    assert!(err.is_commit_state_unknown(), "{err}");
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    assert_eq!(
        meta.current_snapshot()
            .unwrap()
            .summary
            .as_ref()
            .unwrap()
            .operation,
        Operation::Replace
    );
    assert_eq!(ids(&io, meta).await, (0..50).collect::<Vec<_>>());
}

/// Before our swap, another process upgrades the table to v3; the swap then conflicts.
#[derive(Debug, Default)]
struct UpgradedFirst {
    done: AtomicBool,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for UpgradedFirst {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        if self.done.swap(true, Ordering::SeqCst) {
            return inner.commit(ident, base, new).await;
        }
        let table = inner.load_table(ident).await?;
        let mut upgraded = table.metadata.clone();
        upgraded.format_version = FormatVersion::V3;
        upgraded.next_row_id = Some(0);
        inner.commit(ident, base, &upgraded).await?;
        Err(conflict(ident, base))
    }
}

/// A table upgraded to v3 while a compaction runs does not take the rewrite on retry (its
/// rows would lose their row ids): the compaction is refused and leaves nothing behind.
#[tokio::test]
async fn a_table_upgraded_to_v3_meanwhile_refuses_the_retry() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let racing =
        InterceptingCatalog::new(InMemoryCatalog::clone(&catalog), UpgradedFirst::default());
    let err = RewriteDataFiles::new()
        .commit(&racing, &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotSupportedForTable { .. }), "{err}");
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    assert_eq!(meta.format_version, FormatVersion::V3);
    assert_eq!(ids(&io, meta).await, (0..50).collect::<Vec<_>>());
    // Only the five small files are left under data/: the compacted one was discarded.
    assert_eq!(io.list("memory://wh/db/t/data").await.unwrap().len(), 5);
}

#[tokio::test]
async fn v3_tables_are_refused() {
    let (catalog, mut handle, env) = table(FormatVersion::V3).await;
    handle.append(&[batch(0..10, "eu")]).await.unwrap();
    handle.refresh().await.unwrap();
    let err = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotSupportedForTable { .. }), "{err}");
}

/// Every store operation of a compaction fails in turn, before or after the store: the
/// table loads, everything it reaches exists and reads the same rows, and a failure leaves
/// the table as it was (only orphans behind).
#[tokio::test]
async fn a_compaction_failing_at_any_store_operation_leaves_the_table_whole() {
    use iceberg_io::testing::{FailPoint, FaultInjectingStore};
    async fn faulty() -> (
        Arc<InMemoryCatalog>,
        TableIdent,
        Arc<DeterministicEnvironment>,
        FileIo,
        FaultInjectingStore,
    ) {
        let store =
            FaultInjectingStore::new(Arc::new(iceberg_io::object_store::memory::InMemory::new()));
        let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
        let (catalog, mut handle, env) = table_on(io.clone(), FormatVersion::V2).await;
        append_small_files(&mut handle, 0..5, "eu").await;
        (catalog, handle.ident().clone(), env, io, store)
    }
    let (catalog, ident, env, _, store) = faulty().await;
    let before = store.op_count();
    RewriteDataFiles::new()
        .commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    let ops = store.op_count() - before;
    assert!(ops > 10, "{ops}");
    let mut failed = 0;
    for n in 0..ops {
        for point in [FailPoint::Before, FailPoint::After] {
            let (catalog, ident, env, io, store) = faulty().await;
            let start = catalog.load_table(&ident).await.unwrap().metadata;
            store.fail_at(n + 1, point);
            let result = RewriteDataFiles::new()
                .commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {})
                .await;
            store.clear_faults();
            let now = catalog.load_table(&ident).await.unwrap().metadata;
            assert_eq!(
                ids(&io, &now).await,
                (0..50).collect::<Vec<_>>(),
                "op {n} {point:?}"
            );
            let reached = crate::support::reachable(&io, &now).await;
            assert_eq!(
                crate::support::existing(&io, &reached).await,
                reached,
                "op {n} {point:?}"
            );
            match result {
                Ok(_) => assert_ne!(now.current_snapshot_id, start.current_snapshot_id),
                Err(e) => {
                    failed += 1;
                    if !e.is_commit_state_unknown() {
                        assert_eq!(
                            now.current_snapshot_id, start.current_snapshot_id,
                            "op {n} {point:?}: {e}"
                        );
                    }
                }
            }
        }
    }
    assert!(failed > 0);
}

/// Before our swap, another writer rolls `main` back to the parent of the snapshot the
/// compaction started from.
#[derive(Debug, Default)]
struct RolledBackFirst {
    done: AtomicBool,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for RolledBackFirst {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        if self.done.swap(true, Ordering::SeqCst) {
            return inner.commit(ident, base, new).await;
        }
        let table = inner.load_table(ident).await?;
        let mut rolled = table.metadata.clone();
        let parent = rolled
            .current_snapshot()
            .and_then(|s| s.parent_snapshot_id)
            .unwrap();
        rolled.current_snapshot_id = Some(parent);
        rolled.refs.get_mut("main").unwrap().snapshot_id = parent;
        inner
            .commit(ident, table.metadata_location.as_deref().unwrap(), &rolled)
            .await?;
        Err(conflict(ident, base))
    }
}

/// A head on another lineage than the compaction's start (here `main` rolled back past it)
/// may carry deletes older than the start, which the retry's checks cannot see: a conflict,
/// as in Java (`validationHistory`), although every rewritten file is still live there. A
/// v1 table has no deletes, and Java checks no history there: the compaction lands.
#[tokio::test]
async fn a_head_that_does_not_descend_from_the_start_is_a_conflict_from_v2_on() {
    for version in [FormatVersion::V1, FormatVersion::V2] {
        let (catalog, mut handle, env) = table(version).await;
        append_small_files(&mut handle, 0..5, "eu").await;
        append_small_files(&mut handle, 5..6, "us").await;
        let racing =
            InterceptingCatalog::new(InMemoryCatalog::clone(&catalog), RolledBackFirst::default());
        let result = RewriteDataFiles::new()
            .commit(&racing, handle.ident(), env.as_ref(), |_, _, _| {})
            .await;
        let now = catalog.load_table(handle.ident()).await.unwrap().metadata;
        let io = handle.io().clone();
        let reached = crate::support::reachable(&io, &now).await;
        assert_eq!(crate::support::existing(&io, &reached).await, reached);
        if version == FormatVersion::V1 {
            result.unwrap();
            assert_eq!(live(&io, &now).await.len(), 1, "eu's five files in one");
            assert_eq!(ids(&io, &now).await, (0..50).collect::<Vec<_>>());
            continue;
        }
        let err = result.unwrap_err();
        assert!(
            matches!(&err, Error::RewriteConflict { reason, .. } if reason.contains("does not descend")),
            "{err}"
        );
        assert_eq!(
            live(&io, &now).await.len(),
            5,
            "the rolled-back head, untouched"
        );
    }
}

/// Before our swap, another writer commits `deletes` (a row-level DELETE or an upsert);
/// the swap then conflicts and the compaction judges them on its retry.
#[derive(Debug)]
struct DeletesFirst {
    deletes: Mutex<Option<Vec<DataFile>>>,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for DeletesFirst {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        let Some(deletes) = self.deletes.lock().unwrap().take() else {
            return inner.commit(ident, base, new).await;
        };
        crate::support::commit_foreign_manifest(
            inner,
            ident,
            iceberg_spec::ManifestContent::Deletes,
            deletes,
            iceberg_spec::ManifestEntry::added,
            |_| {},
        )
        .await;
        Err(conflict(ident, base))
    }
}

/// Delete files committed while a compaction runs, judged as Java judges them: equality
/// deletes apply to the rewritten rows as well (the new files keep the starting sequence
/// number), and a position delete naming a file conflicts only when that file is rewritten;
/// one without a named file conflicts with its whole partition.
#[tokio::test]
async fn deletes_committed_meanwhile_conflict_only_where_they_apply_to_rewritten_files() {
    enum Kind {
        Equality,
        NamesAFileKept,
        NamesARewrittenFile,
        PartitionWide,
    }
    for (kind, lands) in [
        (Kind::Equality, true),
        (Kind::NamesAFileKept, true),
        (Kind::NamesARewrittenFile, false),
        (Kind::PartitionWide, false),
    ] {
        let (catalog, mut handle, env) = table(FormatVersion::V2).await;
        append_small_files(&mut handle, 0..5, "eu").await;
        append_small_files(&mut handle, 5..6, "us").await;
        let io = handle.io().clone();
        let before = live(&io, handle.metadata()).await;
        let of = |region: &str| {
            before
                .iter()
                .find(|(_, (r, _))| r.contains(region))
                .map(|(p, _)| p.clone())
                .unwrap()
        };
        let eu = vec![Some(iceberg_spec::Datum::string("eu"))];
        let us = vec![Some(iceberg_spec::Datum::string("us"))];
        let delete = |partition: Vec<Option<iceberg_spec::Datum>>| DataFile {
            content: iceberg_spec::DataContentType::PositionDeletes,
            file_path: "memory://wh/db/t/data/other-deletes.parquet".into(),
            partition,
            record_count: 1,
            file_size_in_bytes: 10,
            ..Default::default()
        };
        let file = match kind {
            Kind::Equality => DataFile {
                content: iceberg_spec::DataContentType::EqualityDeletes,
                equality_ids: Some(vec![1]),
                ..delete(eu.clone())
            },
            Kind::NamesAFileKept => DataFile {
                referenced_data_file: Some(of("us")),
                ..delete(us)
            },
            Kind::NamesARewrittenFile => DataFile {
                referenced_data_file: Some(of("eu")),
                ..delete(eu.clone())
            },
            Kind::PartitionWide => delete(eu),
        };
        let racing = InterceptingCatalog::new(
            InMemoryCatalog::clone(&catalog),
            DeletesFirst {
                deletes: Mutex::new(Some(vec![file])),
            },
        );
        let result = RewriteDataFiles::new()
            .commit(&racing, handle.ident(), env.as_ref(), |_, _, _| {})
            .await;
        handle.refresh().await.unwrap();
        let after = live(&io, handle.metadata()).await;
        assert!(after.contains_key("memory://wh/db/t/data/other-deletes.parquet"));
        if lands {
            let report = result.unwrap();
            assert_eq!(report.files_rewritten, 5);
            assert_eq!(handle.metadata().current_snapshot_id, report.snapshot_id);
            assert!(!after.contains_key(&of("eu")));
        } else {
            let err = result.unwrap_err();
            assert!(matches!(err, Error::RewriteConflict { .. }), "{err}");
            assert!(after.contains_key(&of("eu")));
        }
    }
}

/// After the partition field is removed, the small files of the old spec (one per region,
/// so never five in one of its partitions) join the current spec's all-null partition, as
/// Java's bin-pack planner groups them: they are written out once in the current spec.
#[tokio::test]
async fn small_files_of_an_older_spec_are_compacted_together_into_the_current_one() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    for (k, region) in ["eu", "us", "ap", "sa", "af"].iter().enumerate() {
        let k = k as i64;
        append_small_files(&mut handle, k..k + 1, region).await;
    }
    handle
        .new_transaction()
        .update_spec(|s| {
            s.remove_field("region")?;
            Ok(())
        })
        .unwrap()
        .commit()
        .await
        .unwrap();
    handle.refresh().await.unwrap();
    // A small file of the current spec joins them (its partition is the all-null one).
    append_small_files(&mut handle, 5..6, "eu").await;
    let io = handle.io().clone();
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!((report.groups, report.files_rewritten), (1, 6));
    assert_eq!(report.files_written, 1);
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    let now = live(&io, meta).await;
    assert_eq!(now.len(), 1);
    let (partition, _) = now.values().next().unwrap();
    assert_eq!(
        partition, "[]",
        "written in the current, unpartitioned spec"
    );
    assert_eq!(ids(&io, meta).await, (0..60).collect::<Vec<_>>());
}

/// Compacting `identity(u)` partitions of both uuid sign classes writes a manifest per class,
/// as appends do: one manifest spanning both would have partition bounds (00.. to 80..) that
/// Java's signed uuid order reads as empty, and its scans would skip the rows.
#[tokio::test]
async fn compacted_uuid_partitions_keep_one_sign_class_per_manifest() {
    use arrow_array::{ArrayRef, FixedSizeBinaryArray, Int64Array, RecordBatch};
    use iceberg_spec::{NestedField, PartitionSpec, Schema, Transform};
    use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let catalog = Arc::new(InMemoryCatalog::new(FileIo::memory(), env.clone()));
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "u", PrimitiveType::Uuid),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("u", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let mut creation = iceberg_append::TableCreation::new("memory://wh/db/u", schema);
    creation.spec = spec;
    creation
        .properties
        .insert("commit.manifest-merge.enabled".into(), "false".into());
    let ident = TableIdent::parse("db.u").unwrap();
    catalog.create_table(&ident, creation).await.unwrap();
    let shared: Arc<dyn Catalog> = catalog.clone();
    let mut handle = TableHandle::load(shared, ident.clone(), env.clone())
        .await
        .unwrap();
    let arrow = Arc::new(ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("u", DataType::FixedSizeBinary(16), true),
    ]));
    let mut low = [0u8; 16];
    low[15] = 1;
    let mut high = [0u8; 16];
    high[0] = 0x80;
    for (k, u) in [low, high].iter().flat_map(|u| (0..5).map(move |k| (k, u))) {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![k, k + 100]));
        let uuids: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_iter([u.to_vec(), u.to_vec()].into_iter()).unwrap(),
        );
        let batch = RecordBatch::try_new(arrow.clone(), vec![ids, uuids]).unwrap();
        handle.append(&[batch]).await.unwrap();
        handle.refresh().await.unwrap();
    }
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!((report.files_rewritten, report.files_written), (10, 2));
    handle.refresh().await.unwrap();
    let meta = handle.metadata().clone();
    let listed = iceberg_append::read_manifest_list(
        handle.io(),
        meta.current_snapshot().unwrap().manifest_list.as_deref(),
    )
    .await
    .unwrap();
    let added: Vec<_> = listed
        .iter()
        .filter(|m| m.added_files_count.unwrap_or(0) > 0)
        .collect();
    assert_eq!(added.len(), 2, "one manifest of new files per sign class");
    for m in listed {
        assert!(
            iceberg_append::merge::manifest_class(&m, &[0]).is_some(),
            "{} spans both uuid sign classes",
            m.manifest_path
        );
    }
}
