//! Compaction (`RewriteDataFiles`) under races and faults: racing compactions, lost answers,
//! a table changed before our swap (upgraded to v3, `main` rolled back, deletes committed),
//! and a store failing at every operation; nothing is lost, nothing dangles.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::region_table::{append_small_files, batch, ids, live, table, table_on};
use crate::support::conflict;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, CompactionReport, DeterministicEnvironment, Error, InMemoryCatalog, RewriteDataFiles,
    TableIdent, commit_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, FormatVersion, Operation, TableMetadata};

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
    let report = compact_behind(
        &catalog,
        &ident,
        &env,
        LandedThenAppended {
            theirs: Mutex::new(Some(theirs)),
            env: env.clone(),
        },
    )
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

/// A compaction of `ident` committed through `catalog` behind `interceptor`.
async fn compact_behind<I: CommitInterceptor<InMemoryCatalog>>(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    env: &DeterministicEnvironment,
    interceptor: I,
) -> iceberg_append::Result<CompactionReport> {
    let racing = InterceptingCatalog::new(catalog.clone(), interceptor);
    RewriteDataFiles::new()
        .commit(&racing, ident, env, |_, _, _| {})
        .await
}

/// When the table cannot be reloaded after a failed swap, the compaction's outcome is
/// unknown and none of its files is deleted: the swap had landed, and the table reads whole.
#[tokio::test]
async fn an_unreadable_table_after_a_failed_swap_keeps_the_compactions_files() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let err = compact_behind(&catalog, &ident, &env, LandedThenUnreadable::default())
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

/// Before our first swap, another writer commits `change` of the current metadata; the swap
/// then conflicts and the compaction judges the changed table on its retry.
#[derive(Debug)]
struct ChangedFirst {
    change: fn(TableMetadata) -> TableMetadata,
    done: AtomicBool,
}

impl ChangedFirst {
    fn new(change: fn(TableMetadata) -> TableMetadata) -> Self {
        Self {
            change,
            done: AtomicBool::new(false),
        }
    }
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for ChangedFirst {
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
        let changed = (self.change)(table.metadata);
        let current = table.metadata_location.as_deref().unwrap_or_default();
        inner.commit(ident, current, &changed).await?;
        Err(conflict(ident, base))
    }
}

/// The table upgraded to v3.
fn upgraded_to_v3(mut meta: TableMetadata) -> TableMetadata {
    meta.format_version = FormatVersion::V3;
    meta.next_row_id = Some(0);
    meta
}

/// `main` rolled back to the parent of its head.
fn rolled_back(mut meta: TableMetadata) -> TableMetadata {
    let parent = meta
        .current_snapshot()
        .and_then(|s| s.parent_snapshot_id)
        .unwrap();
    meta.current_snapshot_id = Some(parent);
    meta.refs.get_mut("main").unwrap().snapshot_id = parent;
    meta
}

/// A table upgraded to v3 while a compaction runs does not take the rewrite on retry (its
/// rows would lose their row ids): the compaction is refused and leaves nothing behind.
#[tokio::test]
async fn a_table_upgraded_to_v3_meanwhile_refuses_the_retry() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    let io = handle.io().clone();
    let ident = handle.ident().clone();
    let err = compact_behind(&catalog, &ident, &env, ChangedFirst::new(upgraded_to_v3))
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
        // Rolled back to the parent of the snapshot the compaction started from.
        let result = compact_behind(
            &catalog,
            handle.ident(),
            &env,
            ChangedFirst::new(rolled_back),
        )
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
        let result = compact_behind(
            &catalog,
            handle.ident(),
            &env,
            DeletesFirst {
                deletes: Mutex::new(Some(vec![file])),
            },
        )
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
