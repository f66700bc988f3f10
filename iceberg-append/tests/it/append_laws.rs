//! Laws of appending, under any sequence of appends, conflicts and lost responses:
//! totals equal the sum of the files, sequence numbers strictly increase, v3 row-id ranges
//! never overlap, snapshots form one chain, and every parent manifest stays reachable.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use crate::support::data_file;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::merge::inherit;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, Result, Table, TableCreation, TableIdent,
    commit_append, read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, FormatVersion, NestedField, PrimitiveType, Schema, TableMetadata};
use proptest::prelude::*;

/// What the wrapped catalog does on the next commit call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Another writer lands a commit first, so ours conflicts.
    ConcurrentWriter,
    /// Our swap lands but the answer is lost; the caller sees a conflict on its retry.
    LostResponse,
}

/// An in-memory catalog whose next commit meets a [`Fault`].
type FaultyCatalog = InterceptingCatalog<InMemoryCatalog, Faults>;

/// The fault of the next commit, and the clock the other writer uses.
#[derive(Debug)]
struct Faults {
    env: Arc<DeterministicEnvironment>,
    next_fault: std::sync::Mutex<Fault>,
    other_commits: AtomicU32,
}

/// An in-memory catalog that injects no fault until told to.
fn faulty_catalog(io: FileIo, env: Arc<DeterministicEnvironment>) -> FaultyCatalog {
    let faults = Faults {
        env: env.clone(),
        next_fault: std::sync::Mutex::new(Fault::None),
        other_commits: AtomicU32::new(0),
    };
    InterceptingCatalog::new(InMemoryCatalog::new(io, env), faults)
}

/// The test table `db.t` (one required long) in `version`, with `props` set.
fn creation(version: FormatVersion, props: &[(&str, &str)]) -> TableCreation {
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    let mut creation = TableCreation::new("memory://wh/db/t", schema);
    creation.format_version = version;
    for (k, v) in props {
        creation.properties.insert((*k).into(), (*v).into());
    }
    creation
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for Faults {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> Result<String> {
        let fault = std::mem::replace(&mut *self.next_fault.lock().unwrap(), Fault::None);
        match fault {
            Fault::None => inner.commit(ident, base, new).await,
            Fault::ConcurrentWriter => {
                let n = self.other_commits.fetch_add(1, Ordering::SeqCst);
                let other = vec![file(&format!("other-{n}"), 7)];
                commit_append(inner, ident, other, BTreeMap::new(), self.env.as_ref())
                    .await
                    .unwrap();
                inner.commit(ident, base, new).await
            }
            Fault::LostResponse => {
                inner.commit(ident, base, new).await?;
                Err(iceberg_append::Error::CommitConflict {
                    table: ident.to_string(),
                    expected: Some(base.to_string()),
                    found: None,
                })
            }
        }
    }
}

/// Live files by path: (snapshot id, data sequence number, first row id, record count).
type LiveFiles = HashMap<String, (i64, i64, Option<i64>, i64)>;

fn file(name: &str, rows: i64) -> DataFile {
    data_file(name, rows)
}

async fn run(version: FormatVersion, ops: Vec<(u8, Vec<i64>)>) {
    run_with(version, ops, &[]).await;
}

async fn run_with(version: FormatVersion, ops: Vec<(u8, Vec<i64>)>, props: &[(&str, &str)]) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 99));
    let io = FileIo::memory();
    let catalog = faulty_catalog(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let mut all = vec![
        ("commit.retry.min-wait-ms", "1"),
        ("commit.retry.max-wait-ms", "2"),
    ];
    all.extend_from_slice(props);
    catalog
        .create_table(&ident, creation(version, &all))
        .await
        .unwrap();

    let mut expected_rows = 0i64;
    let mut expected_files = 0i64;
    let mut ours = Vec::new();
    for (i, (fault, sizes)) in ops.into_iter().enumerate() {
        *catalog.interceptor.next_fault.lock().unwrap() = match fault % 3 {
            0 => Fault::None,
            1 => Fault::ConcurrentWriter,
            _ => Fault::LostResponse,
        };
        if fault % 3 == 1 {
            expected_rows += 7;
            expected_files += 1;
        }
        let files: Vec<DataFile> = sizes
            .iter()
            .enumerate()
            .map(|(j, r)| file(&format!("f{i}-{j}"), *r))
            .collect();
        expected_rows += sizes.iter().sum::<i64>();
        expected_files += files.len() as i64;
        let out = commit_append(&catalog, &ident, files, BTreeMap::new(), env.as_ref())
            .await
            .unwrap();
        ours.push(out.snapshot_id);
    }

    let table = catalog.load_table(&ident).await.unwrap();
    let meta = &table.metadata;
    // The cache hands out exactly what the current metadata file holds.
    let location = table.metadata_location.as_deref().unwrap();
    assert_eq!(&Table::load(catalog.io(), location).await.unwrap(), &table);
    // Each of our appends is in the table exactly once.
    for id in &ours {
        assert_eq!(
            meta.snapshots
                .iter()
                .filter(|s| s.snapshot_id == *id)
                .count(),
            1
        );
    }
    // One chain from the current snapshot back to the first.
    let mut chain = Vec::new();
    let mut cur = meta.current_snapshot();
    while let Some(s) = cur {
        chain.push(s);
        cur = s.parent_snapshot_id.and_then(|p| meta.snapshot_by_id(p));
    }
    assert_eq!(chain.len(), meta.snapshots.len());
    // Sequence numbers strictly increase along the chain (v2+).
    if version != FormatVersion::V1 {
        for w in chain.windows(2) {
            assert!(w[0].sequence_number > w[1].sequence_number);
        }
        assert_eq!(meta.last_sequence_number, chain[0].sequence_number);
    }
    // Totals equal the sum of every file.
    if let Some(head) = chain.first() {
        let summary = head.summary.as_ref().unwrap();
        assert_eq!(summary.get_i64("total-records"), Some(expected_rows));
        assert_eq!(summary.get_i64("total-data-files"), Some(expected_files));
    }
    // Every file live in a parent is live in its child with what it inherited unchanged
    // (merges rewrite manifests, never a file's snapshot id, sequence number or row id);
    // without merges every parent manifest is still listed.
    let io = catalog.io();
    let merging = !props.is_empty();
    let mut previous: Option<(HashSet<String>, LiveFiles)> = None;
    for s in chain.iter().rev() {
        let list = read_manifest_list(io, s.manifest_list.as_deref())
            .await
            .unwrap();
        let paths: HashSet<String> = list.iter().map(|m| m.manifest_path.clone()).collect();
        let mut files = HashMap::new();
        for m in &list {
            let bytes = io.read(&m.manifest_path).await.unwrap();
            let entries = decode_manifest(&m.manifest_path, &bytes).unwrap().entries;
            for e in inherit(m, entries) {
                if e.status.is_live() {
                    let v = (
                        e.snapshot_id.unwrap(),
                        e.sequence_number.unwrap(),
                        e.data_file.first_row_id,
                        e.data_file.record_count,
                    );
                    assert!(
                        files.insert(e.data_file.file_path.clone(), v).is_none(),
                        "file listed twice"
                    );
                }
            }
        }
        if let Some((prev_paths, prev_files)) = &previous {
            if !merging {
                assert!(
                    prev_paths.is_subset(&paths),
                    "snapshot {} dropped a parent manifest",
                    s.snapshot_id
                );
            }
            for (path, v) in prev_files {
                assert_eq!(
                    files.get(path),
                    Some(v),
                    "{path} changed or vanished in snapshot {}",
                    s.snapshot_id
                );
            }
        }
        let rows: i64 = list
            .iter()
            .map(|m| m.added_rows_count.unwrap_or(0) + m.existing_rows_count.unwrap_or(0))
            .sum();
        assert_eq!(
            Some(rows),
            s.summary.as_ref().unwrap().get_i64("total-records")
        );
        // v3: row-id ranges of the manifests never overlap and stay below next-row-id.
        if version == FormatVersion::V3 {
            let mut ranges: Vec<(i64, i64)> = list
                .iter()
                .map(|m| {
                    let first = m
                        .first_row_id
                        .expect("v3 data manifest without first_row_id");
                    (first, first + m.assignable_rows())
                })
                .collect();
            ranges.sort();
            for w in ranges.windows(2) {
                assert!(w[0].1 <= w[1].0, "row-id ranges overlap: {ranges:?}");
            }
            assert!(
                ranges
                    .last()
                    .is_none_or(|r| r.1 <= meta.next_row_id.unwrap())
            );
            // And no two live files share a row id.
            let mut file_ranges: Vec<(i64, i64)> = files
                .values()
                .map(|(_, _, first, rows)| {
                    let first = first.expect("v3 live file without a row id");
                    (first, first + rows)
                })
                .collect();
            file_ranges.sort();
            for w in file_ranges.windows(2) {
                assert!(w[0].1 <= w[1].0, "files share row ids: {file_ranges:?}");
            }
        }
        previous = Some((paths, files));
    }
    if version == FormatVersion::V3 && !merging {
        assert_eq!(meta.next_row_id, Some(expected_rows));
    }
}

/// Merge whenever two manifests share a bin.
const MERGE_EAGERLY: &[(&str, &str)] = &[("commit.manifest.min-count-to-merge", "2")];

fn ops() -> impl Strategy<Value = Vec<(u8, Vec<i64>)>> {
    prop::collection::vec((0u8..3, prop::collection::vec(1i64..50, 1..4)), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn laws_hold_v1(ops in ops()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run(FormatVersion::V1, ops));
    }

    #[test]
    fn laws_hold_v2(ops in ops()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run(FormatVersion::V2, ops));
    }

    #[test]
    fn laws_hold_with_merges_v2(ops in ops()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
            .block_on(run_with(FormatVersion::V2, ops, MERGE_EAGERLY));
    }

    #[test]
    fn laws_hold_with_merges_v3(ops in ops()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
            .block_on(run_with(FormatVersion::V3, ops, MERGE_EAGERLY));
    }

    #[test]
    fn laws_hold_v3(ops in ops()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run(FormatVersion::V3, ops));
    }
}

#[tokio::test]
async fn lost_response_does_not_double_commit() {
    run(FormatVersion::V2, vec![(2, vec![5]), (2, vec![6])]).await;
}

#[tokio::test]
async fn conflict_reuses_snapshot_id_and_manifests() {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 1));
    let io = FileIo::memory();
    let catalog = faulty_catalog(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let props = [("commit.retry.min-wait-ms", "1")];
    catalog
        .create_table(&ident, creation(FormatVersion::V2, &props))
        .await
        .unwrap();
    *catalog.interceptor.next_fault.lock().unwrap() = Fault::ConcurrentWriter;
    let out = commit_append(
        &catalog,
        &ident,
        vec![file("mine", 3)],
        BTreeMap::new(),
        env.as_ref(),
    )
    .await
    .unwrap();
    assert_eq!(out.attempts, 2);
    let table = catalog.load_table(&ident).await.unwrap();
    let snap = table.metadata.current_snapshot().unwrap();
    assert_eq!(snap.snapshot_id, out.snapshot_id);
    assert_eq!(
        snap.sequence_number, 2,
        "re-planned onto the other writer's commit"
    );
    let list_path = snap.manifest_list.clone().unwrap();
    assert!(
        list_path.contains(&format!("snap-{}-2-", out.snapshot_id)),
        "{list_path}"
    );
    let list = read_manifest_list(&io, Some(&list_path)).await.unwrap();
    assert_eq!(list.len(), 2);
    // Our manifest (written once, in attempt 1) comes first; the other writer's is carried.
    let commit_uuid = list_path
        .rsplit('-')
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("-");
    let commit_uuid = commit_uuid.trim_end_matches(".avro");
    assert!(
        list[0].manifest_path.contains(commit_uuid),
        "{} vs {commit_uuid}",
        list[0].manifest_path
    );
    assert_eq!(list[0].added_snapshot_id, out.snapshot_id);
    assert_ne!(list[1].added_snapshot_id, out.snapshot_id);
    // The failed attempt's manifest list was deleted; the manifest was not rewritten.
    let files = io.list("memory://wh/db/t/metadata/").await.unwrap();
    assert!(
        !files
            .iter()
            .any(|f| f.contains(&format!("snap-{}-1-", out.snapshot_id))),
        "{files:?}"
    );
    assert_eq!(
        files
            .iter()
            .filter(|f| f.contains(commit_uuid) && f.contains("-m"))
            .count(),
        1
    );
}

#[tokio::test]
async fn merges_happen_and_keep_what_they_list() {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 3));
    let io = FileIo::memory();
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    catalog
        .create_table(&ident, creation(FormatVersion::V2, MERGE_EAGERLY))
        .await
        .unwrap();
    for i in 0..3 {
        commit_append(
            &catalog,
            &ident,
            vec![file(&format!("m{i}"), 4)],
            BTreeMap::new(),
            env.as_ref(),
        )
        .await
        .unwrap();
    }
    let table = catalog.load_table(&ident).await.unwrap();
    let snap = table.metadata.current_snapshot().unwrap();
    let summary = snap.summary.as_ref().unwrap();
    assert_eq!(
        summary.get_i64("manifests-replaced"),
        Some(1),
        "{summary:?}"
    );
    let list = read_manifest_list(&io, snap.manifest_list.as_deref())
        .await
        .unwrap();
    assert_eq!(list.len(), 1, "everything folded into one manifest");
    assert_eq!(list[0].added_files_count, Some(1));
    assert_eq!(list[0].existing_files_count, Some(2));
    assert!(io.exists(&list[0].manifest_path).await.unwrap());
}

async fn metadata_files_after_five_commits(props: &[(&str, &str)]) -> (usize, Table) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 8));
    let io = FileIo::memory();
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    catalog
        .create_table(&ident, creation(FormatVersion::V2, props))
        .await
        .unwrap();
    for i in 0..5 {
        commit_append(
            &catalog,
            &ident,
            vec![file(&format!("d{i}"), 1)],
            BTreeMap::new(),
            env.as_ref(),
        )
        .await
        .unwrap();
    }
    let files = io.list("memory://wh/db/t/metadata/").await.unwrap();
    let n = files
        .iter()
        .filter(|f| f.ends_with(".metadata.json"))
        .count();
    (n, catalog.load_table(&ident).await.unwrap())
}

#[tokio::test]
async fn old_metadata_files_deleted_only_when_asked() {
    let (kept_all, _) =
        metadata_files_after_five_commits(&[("write.metadata.previous-versions-max", "2")]).await;
    assert_eq!(
        kept_all, 6,
        "without delete-after-commit every version stays"
    );
    let (n, table) = metadata_files_after_five_commits(&[
        ("write.metadata.previous-versions-max", "2"),
        ("write.metadata.delete-after-commit.enabled", "true"),
    ])
    .await;
    assert_eq!(table.metadata.metadata_log.len(), 2);
    assert_eq!(n, 3, "the current file and the two the log keeps");
}

/// Every kind of commit deletes the metadata files it drops from the log, as Java's table
/// operations do, and reads the switch from the metadata it commits: the update that turns
/// deletion on deletes at once, and property updates after it keep no more files.
#[tokio::test]
async fn table_updates_delete_the_metadata_files_they_drop_from_the_log() {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 8));
    let io = FileIo::memory();
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    catalog
        .create_table(
            &ident,
            creation(
                FormatVersion::V2,
                &[("write.metadata.previous-versions-max", "1")],
            ),
        )
        .await
        .unwrap();
    let count = || async {
        let files = io.list("memory://wh/db/t/metadata/").await.unwrap();
        files
            .iter()
            .filter(|f| f.ends_with(".metadata.json"))
            .count()
    };
    for i in 0..2 {
        let update = iceberg_append::TableUpdate::new().set_property("k", i.to_string());
        iceberg_append::commit_table_update(&catalog, &ident, &update, env.as_ref())
            .await
            .unwrap();
    }
    assert_eq!(count().await, 3, "without deletion every version stays");
    let on = iceberg_append::TableUpdate::new()
        .set_property("write.metadata.delete-after-commit.enabled", "true");
    iceberg_append::commit_table_update(&catalog, &ident, &on, env.as_ref())
        .await
        .unwrap();
    // The first file fell off the log before deletion was on and stays (as with Java); the
    // one this update dropped is gone.
    assert_eq!(
        count().await,
        3,
        "the update that turned it on deleted what it dropped"
    );
    for i in 0..3 {
        let update = iceberg_append::TableUpdate::new().set_property("k", format!("again {i}"));
        iceberg_append::commit_table_update(&catalog, &ident, &update, env.as_ref())
            .await
            .unwrap();
        assert_eq!(count().await, 3);
    }
}
