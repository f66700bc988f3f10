//! Orphan files (`DeleteOrphanFiles`): what a failed write, a crashed committer or an
//! interrupted expiry leaves under the table is found, and only once old enough; nothing the
//! table refers to ever is, under any spelling of its paths; deleting the orphans leaves a
//! table whose every reachable file exists.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    AppendMode, Catalog, DeleteOrphanFiles, DeterministicEnvironment, ExpireSnapshots,
    InMemoryCatalog, OrphanReport, Table, TableIdent, commit_append,
};
use iceberg_spec::{DataFile, FormatVersion, TableMetadata};

use crate::support::{Fixture, existing, reachable};

/// Strays of every kind a table can be left with.
const STRAYS: [&str; 4] = [
    "memory://wh/db/t/data/uncommitted.parquet",
    "memory://wh/db/t/metadata/abandoned-m0.avro",
    "memory://wh/db/t/metadata/snap-1-1-abandoned.avro",
    "memory://wh/db/t/metadata/00099-abandoned.metadata.json",
];

#[tokio::test]
async fn strays_are_orphans_once_old_and_the_table_never_is() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..3 {
        t.append(2, AppendMode::Merge).await;
    }
    for stray in STRAYS {
        t.io.put(stray, Bytes::from_static(b"x")).await.unwrap();
    }
    let (_, meta) = t.meta().await;
    let table = load(&t).await;
    let now = FAR_AHEAD;
    let found = DeleteOrphanFiles::new()
        .find(&t.io, &table, now)
        .await
        .unwrap();
    let orphans: BTreeSet<&str> = found.orphans.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(orphans, STRAYS.into_iter().collect());
    assert_eq!(found.too_new, 0);
    // The same files written just now are spared by the default age.
    let today = DeleteOrphanFiles::new()
        .find(&t.io, &table, chrono_now())
        .await
        .unwrap();
    assert!(today.orphans.is_empty());
    assert_eq!(today.too_new, STRAYS.len());
    // Deleting them leaves the table whole.
    let kept = reachable(&t.io, &meta).await;
    let deleted = DeleteOrphanFiles::new()
        .delete(&t.io, &table, now)
        .await
        .unwrap();
    assert!(deleted.deleted && deleted.delete_error.is_none());
    let strays: BTreeSet<String> = STRAYS.iter().map(|s| s.to_string()).collect();
    assert!(existing(&t.io, &strays).await.is_empty());
    assert_eq!(existing(&t.io, &kept).await, kept);
    let again = DeleteOrphanFiles::new()
        .find(&t.io, &table, now)
        .await
        .unwrap();
    assert!(again.orphans.is_empty(), "{:?}", again.orphans);
}

#[tokio::test]
async fn what_an_expiry_kept_in_place_becomes_orphans() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..4 {
        t.append(1, AppendMode::Merge).await;
    }
    let expiry = ExpireSnapshots::new().older_than_ms(i64::MAX);
    let (_, meta) = t.meta().await;
    let planned = expiry.plan(&t.io, &meta, 0).await.unwrap();
    assert!(planned.files.manifests.files > 0);
    expiry
        .clone()
        .keep_files()
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    let found = orphans_far_ahead(&t).await;
    // Exactly what the expiry would have deleted: the expired snapshots' lists and the
    // manifests merged away (not the metadata files of the log).
    let orphans: BTreeSet<String> = found.orphans.iter().map(|o| o.path.clone()).collect();
    let would: BTreeSet<String> = planned.files.paths.iter().cloned().collect();
    assert_eq!(orphans, would);
}

/// A time far ahead: every file is older than 3 days then.
const FAR_AHEAD: i64 = i64::MAX / 2;

/// The fixture's table, as its catalog has it.
async fn load(t: &Fixture) -> Table {
    iceberg_append::Catalog::load_table(&t.catalog, &t.ident)
        .await
        .unwrap()
}

/// The orphans of the fixture's table at [`FAR_AHEAD`]; nothing is deleted.
async fn orphans_far_ahead(t: &Fixture) -> OrphanReport {
    DeleteOrphanFiles::new()
        .find(&t.io, &load(t).await, FAR_AHEAD)
        .await
        .unwrap()
}

/// Now in ms, from the system clock (the store stamps objects with it).
fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Files of another table nested in the table's folder (its own `metadata/*.metadata.json`
/// beside them) are never taken for orphans; a stray next to them still is.
#[tokio::test]
async fn another_tables_files_under_the_location_are_never_orphans() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(1, AppendMode::Fast).await;
    let nested = [
        "memory://wh/db/t/x/metadata/00000-a.metadata.json",
        "memory://wh/db/t/x/metadata/snap-1-1-a.avro",
        "memory://wh/db/t/x/data/part-0.parquet",
    ];
    let stray = "memory://wh/db/t/data/uncommitted.parquet";
    for path in nested.iter().chain([&stray]) {
        t.io.put(path, Bytes::from_static(b"x")).await.unwrap();
    }
    let found = orphans_far_ahead(&t).await;
    let orphans: Vec<&str> = found.orphans.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(orphans, [stray]);
    assert_eq!(found.other_tables, nested.len());
}

/// A table whose current metadata file the catalog did not name is refused: that file
/// would look like an orphan.
#[tokio::test]
async fn a_table_without_its_metadata_location_is_refused() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(1, AppendMode::Fast).await;
    let mut table = load(&t).await;
    table.metadata_location = None;
    let err = DeleteOrphanFiles::new()
        .find(&t.io, &table, FAR_AHEAD)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("current metadata file"), "{err}");
}

/// A file added in place (as `add-files` does) by a commit that lands while the folder is
/// being searched is no orphan: `delete_from` loads the table again before deleting.
#[tokio::test]
async fn a_file_added_during_the_search_is_not_deleted() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(1, AppendMode::Fast).await;
    let added = "memory://wh/db/t/data/added-in-place.parquet";
    let stray = "memory://wh/db/t/data/uncommitted.parquet";
    for path in [added, stray] {
        t.io.put(path, Bytes::from_static(b"PAR1")).await.unwrap();
    }
    let catalog = InterceptingCatalog::new(
        t.catalog.clone(),
        AddsAtSecondLoad {
            loads: AtomicUsize::new(0),
            file: Mutex::new(Some(DataFile {
                file_path: added.into(),
                record_count: 1,
                file_size_in_bytes: 4,
                ..Default::default()
            })),
            env: t.env.clone(),
        },
    );
    let report = DeleteOrphanFiles::new()
        .delete_from(&catalog, &t.ident, FAR_AHEAD)
        .await
        .unwrap();
    assert!(report.deleted);
    let orphans: Vec<&str> = report.orphans.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(orphans, [stray]);
    let (_, meta) = t.meta().await;
    let kept = reachable(&t.io, &meta).await;
    assert!(kept.contains(added));
    assert_eq!(existing(&t.io, &kept).await, kept);
}

/// A catalog whose second load of the table first lands another writer's commit of `file`.
#[derive(Debug)]
struct AddsAtSecondLoad {
    loads: AtomicUsize,
    file: Mutex<Option<DataFile>>,
    env: Arc<DeterministicEnvironment>,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for AddsAtSecondLoad {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> iceberg_append::Result<String> {
        inner.commit(ident, base, new).await
    }

    async fn load_table(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
    ) -> iceberg_append::Result<Table> {
        if self.loads.fetch_add(1, Ordering::SeqCst) == 1 {
            let file = self.file.lock().unwrap().take();
            commit_append(
                inner,
                ident,
                file.into_iter().collect(),
                BTreeMap::new(),
                self.env.as_ref(),
            )
            .await
            .unwrap();
        }
        inner.load_table(ident).await
    }
}

/// A table with `gc.enabled=false` may share its files with another table (Spark's
/// `snapshot` procedure): expiry and orphan removal are refused as Java refuses them, and a
/// purge deletes its metadata but not its data files.
#[tokio::test]
async fn a_table_without_garbage_collection_keeps_its_files() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    for _ in 0..3 {
        t.append(1, AppendMode::Merge).await;
    }
    t.edit(|m| {
        m.properties.insert("gc.enabled".into(), "false".into());
    })
    .await;
    let (location, before) = t.meta().await;
    let kept = reachable(&t.io, &before).await;
    let err = ExpireSnapshots::new()
        .older_than_ms(FAR_AHEAD)
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gc.enabled"), "{err}");
    let err = ExpireSnapshots::new()
        .older_than_ms(FAR_AHEAD)
        .plan(&t.io, &before, 0)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gc.enabled"), "{err}");
    let err = DeleteOrphanFiles::new()
        .find(&t.io, &load(&t).await, FAR_AHEAD)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gc.enabled"), "{err}");
    assert_eq!(t.meta().await.0, location, "nothing was committed");
    assert_eq!(existing(&t.io, &kept).await, kept);

    let data: BTreeSet<String> = kept
        .iter()
        .filter(|p| p.contains("/data/"))
        .cloned()
        .collect();
    assert_eq!(data.len(), 3);
    t.catalog.drop_table(&t.ident, true).await.unwrap();
    assert_eq!(existing(&t.io, &data).await, data, "data files stay");
    let metadata: BTreeSet<String> = kept.difference(&data).cloned().collect();
    assert!(existing(&t.io, &metadata).await.is_empty(), "manifests go");
    assert!(!t.io.exists(&location.unwrap()).await.unwrap());
}

/// Hidden paths below the location (a name starting with `_` or `.`) are never orphans, as
/// Java's listing skips them: another format's log beside the table, a job's markers and
/// staging folders. A partition folder of a field whose name starts with `_` is not hidden.
#[tokio::test]
async fn hidden_paths_are_never_orphans_but_partition_folders_of_hidden_names_are_searched() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(1, AppendMode::Fast).await;
    t.edit(|m| {
        let schema = m.current_schema().unwrap().clone();
        let spec = iceberg_spec::PartitionSpec::builder(&schema)
            .with_spec_id(1)
            .add_named("id", iceberg_spec::Transform::Bucket(4), "_id_bucket")
            .unwrap()
            .build()
            .unwrap();
        m.partition_specs.push(spec);
        m.last_partition_id = 1000;
    })
    .await;
    let hidden = [
        "memory://wh/db/t/_delta_log/00000000000000000000.json",
        "memory://wh/db/t/data/_SUCCESS",
        "memory://wh/db/t/data/.staging/p.parquet",
        "memory://wh/db/t/data/_id_trunc/x.parquet",
        "memory://wh/db/t/data/.stray.parquet.crc",
    ];
    let visible = [
        "memory://wh/db/t/data/_id_bucket=2/x.parquet",
        "memory://wh/db/t/data/x_y/z.parquet",
    ];
    for path in hidden.iter().chain(&visible) {
        t.io.put(path, Bytes::from_static(b"x")).await.unwrap();
    }
    let found = orphans_far_ahead(&t).await;
    // (The metadata file the hand edit replaced without logging it is an orphan too.)
    let orphans: BTreeSet<&str> = found
        .orphans
        .iter()
        .map(|o| o.path.as_str())
        .filter(|p| !p.contains("/metadata/"))
        .collect();
    assert_eq!(orphans, visible.into_iter().collect());
    assert_eq!(found.hidden, hidden.len());
}

/// A listed file whose key the table refers to in another bucket may be the referenced file
/// under another name (a copy, a replica's manifests naming the primary): the search fails
/// as Java's default does instead of calling it an orphan.
#[tokio::test]
async fn a_file_referenced_under_another_bucket_stops_the_search() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(2, AppendMode::Fast).await;
    let copy = "memory://other/db/t/data/f1.parquet";
    t.io.put(copy, Bytes::from_static(b"PAR1")).await.unwrap();
    let stray = "memory://other/db/t/data/stray.parquet";
    t.io.put(stray, Bytes::from_static(b"x")).await.unwrap();
    let err = DeleteOrphanFiles::new()
        .location("memory://other/db/t/data")
        .find(&t.io, &load(&t).await, FAR_AHEAD)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(copy) && text.contains("memory://wh/db/t/data/f1.parquet"),
        "{text}"
    );
    assert!(t.io.exists(copy).await.unwrap());
}

/// On local disk an orphan's Hadoop checksum file (hidden, so never an orphan of its own)
/// is deleted with it, as Hadoop's local file system deletes both.
#[tokio::test]
async fn a_local_orphans_checksum_file_goes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}/t", dir.path().display());
    let io =
        iceberg_io::FileIo::from_location(&location, &std::collections::HashMap::new()).unwrap();
    let env = Arc::new(DeterministicEnvironment::new(1_000_000, 1, 7));
    let catalog = InMemoryCatalog::new(io.clone(), env);
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = iceberg_spec::Schema::new(
        0,
        vec![iceberg_spec::NestedField::required(
            1,
            "id",
            iceberg_spec::PrimitiveType::Long,
        )],
    )
    .unwrap();
    catalog
        .create_table(
            &ident,
            iceberg_append::TableCreation::new(&location, schema),
        )
        .await
        .unwrap();
    let stray = format!("{location}/data/stray.parquet");
    let crc = format!("{location}/data/.stray.parquet.crc");
    for path in [&stray, &crc] {
        io.put(path, Bytes::from_static(b"x")).await.unwrap();
    }
    let report = DeleteOrphanFiles::new()
        .delete_from(&catalog, &ident, FAR_AHEAD)
        .await
        .unwrap();
    let orphans: Vec<&str> = report.orphans.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(orphans, [stray.as_str()]);
    assert_eq!(report.hidden, 1);
    assert!(report.deleted);
    assert!(!io.exists(&stray).await.unwrap());
    assert!(!io.exists(&crc).await.unwrap());
}

/// A purge reads `gc.enabled` alone, as Java does (`Boolean.parseBoolean`: `yes` is false),
/// so a property this crate would refuse elsewhere does not stop a drop half way.
#[tokio::test]
async fn a_purge_reads_garbage_collection_alone() {
    let mut t = Fixture::new(FormatVersion::V2).await;
    t.append(2, AppendMode::Fast).await;
    t.edit(|m| {
        m.properties.insert("gc.enabled".into(), "yes".into());
        m.properties
            .insert("commit.retry.num-retries".into(), "-1".into());
    })
    .await;
    let (_, meta) = t.meta().await;
    let kept = reachable(&t.io, &meta).await;
    let data: BTreeSet<String> = kept
        .iter()
        .filter(|p| p.contains("/data/"))
        .cloned()
        .collect();
    assert_eq!(data.len(), 2);
    t.catalog.drop_table(&t.ident, true).await.unwrap();
    assert_eq!(existing(&t.io, &data).await, data, "`yes` is not `true`");
}
