//! A drop that runs exactly between a commit's base check and its conditional create: the
//! commit re-creates a version the drop had just deleted, sees its base gone, and deletes it
//! again; while a base deleted by a later commit built on ours is no drop.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, DeterministicEnvironment, TableCreation, TableIdent, commit_append};
use iceberg_io::object_store::local::LocalFileSystem;
use iceberg_io::testing::{FaultInjectingStore, HookPoint};
use iceberg_spec::snapshot::MetadataLogEntry;
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};

use super::*;

/// The catalog over `dir` through a fault injector, with `db.t` created and appended to once
/// (it is at `v2`); returns the injector and the metadata folder.
async fn table_at_v2(dir: &Path) -> (ObjectStoreCatalog, FaultInjectingStore, PathBuf) {
    let (c, store) = catalog_at(dir).await;
    c.create_table(&ident(), TableCreation::new("", schema()))
        .await
        .unwrap();
    append(&c, "first").await.unwrap();
    (c, store, dir.join("db/t/metadata"))
}

/// The catalog over `dir` through a fault injector, with namespace `db`; and the injector.
async fn catalog_at(dir: &Path) -> (ObjectStoreCatalog, FaultInjectingStore) {
    let store = FaultInjectingStore::new(Arc::new(LocalFileSystem::new()));
    let io = FileIo::with_store("file:///", Arc::new(store.clone()));
    let warehouse = format!("file://{}", dir.display());
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 31));
    let c = ObjectStoreCatalog::open_with_env(io, &warehouse, env)
        .await
        .unwrap();
    c.create_namespace(&NamespaceIdent::parse("db").unwrap(), BTreeMap::new())
        .await
        .unwrap();
    (c, store)
}

fn schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap()
}

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

async fn append(c: &ObjectStoreCatalog, name: &str) -> iceberg_append::Result<i64> {
    let table = c.load_table(&ident()).await?;
    let file = DataFile {
        file_path: format!("{}/data/{name}.parquet", table.metadata.location),
        record_count: 1,
        file_size_in_bytes: 10,
        ..Default::default()
    };
    let env = DeterministicEnvironment::new(1_700_000_000_000, 2, 32);
    commit_append(c, &ident(), vec![file], BTreeMap::new(), &env)
        .await
        .map(|done| done.snapshot_id)
}

/// Another writer's commit of `v<version+1>` onto `v<version>` in `meta`: the same
/// metadata a millisecond later, its log ending with `v<version>`.
fn commit_onto(meta: &Path, version: u32) {
    let base = meta.join(version_file_name(version));
    let mut next = TableMetadata::from_json(&std::fs::read_to_string(&base).unwrap()).unwrap();
    next.metadata_log.push(MetadataLogEntry {
        timestamp_ms: next.last_updated_ms,
        metadata_file: format!("file://{}", base.display()),
    });
    next.last_updated_ms += 1;
    std::fs::write(
        meta.join(version_file_name(version + 1)),
        next.to_json().unwrap(),
    )
    .unwrap();
}

fn versions(meta: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(meta)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| parse_version(n).is_some())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn a_commit_that_recreates_a_dropped_version_deletes_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store, meta) = table_at_v2(dir.path()).await;
    // Another process drops the table (v2) right after our base check: it claims v3 with its
    // marker, then deletes v1, v2 and the marker, oldest first.
    let drop_meta = meta.clone();
    store.on_put_matching("v3.metadata.json", HookPoint::Before, move || {
        std::fs::write(drop_meta.join("v3.metadata.json"), DROPPED_MARKER).unwrap();
        for v in 1..=3 {
            std::fs::remove_file(drop_meta.join(version_file_name(v))).unwrap();
        }
    });
    let err = append(&c, "second").await.unwrap_err();
    assert!(
        !err.is_commit_state_unknown(),
        "a version taken back is a definite failure: {err}"
    );
    assert_eq!(
        versions(&meta),
        Vec::<String>::new(),
        "the table stays dropped"
    );
    assert!(c.load_table(&ident()).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn a_base_deleted_by_a_commit_built_on_ours_is_no_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store, meta) = table_at_v2(dir.path()).await;
    // Right after our v3 is created, another writer commits v4 onto it and deletes v2
    // (`write.metadata.delete-after-commit.enabled` with one previous version kept).
    let other = meta.clone();
    store.on_put_matching("v3.metadata.json", HookPoint::After, move || {
        commit_onto(&other, 3);
        std::fs::remove_file(other.join("v2.metadata.json")).unwrap();
    });
    let snapshot = append(&c, "second").await.unwrap();
    assert_eq!(
        versions(&meta),
        ["v1.metadata.json", "v3.metadata.json", "v4.metadata.json"]
    );
    let table = c.load_table(&ident()).await.unwrap();
    assert!(table.metadata.snapshot_by_id(snapshot).is_some());
}

#[tokio::test]
async fn a_base_deleted_with_the_commits_built_on_ours_is_no_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store, meta) = table_at_v2(dir.path()).await;
    // Right after our v3 is created, other writers commit v4 onto it and v5 onto v4, and
    // keep one previous version (`write.metadata.previous-versions-max=1` with
    // delete-after-commit): v2, v3 and v4 are deleted.
    let other = meta.clone();
    store.on_put_matching("v3.metadata.json", HookPoint::After, move || {
        commit_onto(&other, 3);
        commit_onto(&other, 4);
        for v in 2..=4 {
            std::fs::remove_file(other.join(version_file_name(v))).unwrap();
        }
    });
    let snapshot = append(&c, "second").await.unwrap();
    assert_eq!(versions(&meta), ["v1.metadata.json", "v5.metadata.json"]);
    let table = c.load_table(&ident()).await.unwrap();
    let ours = table.metadata.snapshot_by_id(snapshot).unwrap();
    // Nothing of the landed commit was taken back.
    let list = ours.manifest_list.as_deref().unwrap();
    assert!(c.io().exists(list).await.unwrap(), "{list} was deleted");
}

/// Right after our base check, other writers commit v3, v4 and v5 and (keeping one previous
/// version) delete v2, v3 and v4: our create of v3 finds the name free. That version forks a
/// history that went on without it: it is taken back and the append lands on v5 instead of
/// being reported done in a version no loader reads.
#[tokio::test]
async fn a_version_created_on_a_name_later_commits_freed_is_taken_back() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store, meta) = table_at_v2(dir.path()).await;
    let other = meta.clone();
    store.on_put_matching("v3.metadata.json", HookPoint::Before, move || {
        for v in 2..=4 {
            commit_onto(&other, v);
        }
        for v in 2..=4 {
            std::fs::remove_file(other.join(version_file_name(v))).unwrap();
        }
        std::fs::write(other.join(VERSION_HINT_FILE), "5").unwrap();
    });
    let snapshot = append(&c, "second").await.unwrap();
    assert_eq!(
        versions(&meta),
        ["v1.metadata.json", "v5.metadata.json", "v6.metadata.json"]
    );
    let table = c.load_table(&ident()).await.unwrap();
    assert!(
        table
            .metadata_location
            .unwrap()
            .ends_with("v6.metadata.json")
    );
    assert!(table.metadata.snapshot_by_id(snapshot).is_some());
}

/// As above, but v4 survives and is built on the other writers' v3, not on ours: ours is
/// taken back as a conflict (the table lives), not as a dropped table.
#[tokio::test]
async fn a_version_beside_a_successor_built_on_another_is_taken_back() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store, meta) = table_at_v2(dir.path()).await;
    let other = meta.clone();
    store.on_put_matching("v3.metadata.json", HookPoint::Before, move || {
        commit_onto(&other, 2);
        commit_onto(&other, 3);
        for v in 2..=3 {
            std::fs::remove_file(other.join(version_file_name(v))).unwrap();
        }
    });
    let snapshot = append(&c, "second").await.unwrap();
    assert_eq!(
        versions(&meta),
        ["v1.metadata.json", "v4.metadata.json", "v5.metadata.json"]
    );
    let table = c.load_table(&ident()).await.unwrap();
    assert!(table.metadata.snapshot_by_id(snapshot).is_some());
}

/// A create of `v1` whose put failed may still have landed on a remote store: its outcome is
/// unknown, so a caller keeps the files the metadata names.
#[tokio::test]
async fn a_failed_create_is_an_unknown_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (c, store) = catalog_at(dir.path()).await;
    store.fail_puts_matching("v1.metadata.json");
    let err = c
        .create_table(&ident(), TableCreation::new("", schema()))
        .await
        .unwrap_err();
    assert!(err.is_commit_state_unknown(), "{err}");
}

/// A drop that stopped half way (killed after its marker and the first deletes, or a delete
/// refused) leaves its marker as the top version: the table does not load, and dropping it
/// again finishes the drop, so the name can be listed no more and created again.
#[tokio::test]
async fn a_drop_that_stopped_half_way_is_finished_by_the_next_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _store, meta) = table_at_v2(dir.path()).await;
    std::fs::write(meta.join(version_file_name(3)), DROPPED_MARKER).unwrap();
    std::fs::remove_file(meta.join(version_file_name(1))).unwrap();
    assert!(c.load_table(&ident()).await.unwrap_err().is_not_found());
    c.drop_table(&ident(), false).await.unwrap();
    assert_eq!(versions(&meta), Vec::<String>::new());
    let listed = c
        .list_tables(&NamespaceIdent::parse("db").unwrap())
        .await
        .unwrap();
    assert!(listed.is_empty(), "{listed:?}");
    c.create_table(&ident(), TableCreation::new("", schema()))
        .await
        .unwrap();
    // A table that was never there is still not found.
    let other = TableIdent::parse("db.nothing").unwrap();
    assert!(
        c.drop_table(&other, false)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

/// Finishing a half-done drop with `purge` purges from the newest version left below the
/// marker: the data files go too.
#[tokio::test]
async fn a_purge_that_stopped_half_way_purges_from_the_version_left() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _store, meta) = table_at_v2(dir.path()).await;
    let data = dir.path().join("db/t/data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("first.parquet"), b"PAR1").unwrap();
    std::fs::write(meta.join(version_file_name(3)), DROPPED_MARKER).unwrap();
    std::fs::remove_file(meta.join(version_file_name(1))).unwrap();
    c.drop_table(&ident(), true).await.unwrap();
    assert_eq!(versions(&meta), Vec::<String>::new());
    assert!(
        !data.join("first.parquet").exists(),
        "the data file was purged"
    );
}
