//! A writer killed at any point leaves the table loadable at the old or the new snapshot,
//! with every file its snapshots reach in place.
//!
//! Two ways of killing: a sweep that aborts a child process at each store operation of one
//! append in turn (before it reaches the store, then after it completed), through the SQLite
//! and the object-store catalogs; and SIGKILL at random moments of a child appending in a
//! loop. The test binary re-runs itself as the child: `catalog_kills_worker` does nothing
//! unless `ICEBERG_KILL_WORKER` describes its job.
//!
//! The SQLite catalog's pointer swap is an `UPDATE`, not a store operation, so "killed after
//! the swap, before the answer" is not a point of its sweep; `catalog_faults.rs` covers that
//! outcome (the lost answer). The object-store catalog's swap is a store operation, and its
//! sweep crashes right after it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    Catalog, DeterministicEnvironment, Environment, SystemEnvironment, Table, TableCreation,
    TableIdent, read_manifest_list,
};
use iceberg_catalog::{ObjectStoreCatalog, SqlCatalog, SqlCatalogConfig};
use iceberg_io::FileIo;
use iceberg_io::object_store::local::LocalFileSystem;
use iceberg_io::testing::{CrashPoint, FaultInjectingStore};
use iceberg_spec::properties::MANIFEST_MIN_MERGE_COUNT;
use iceberg_spec::{FormatVersion, ManifestStatus};

use crate::catalog_common::{append_ids, schema};

const WORKER_ENV: &str = "ICEBERG_KILL_WORKER";
const ROWS_PER_APPEND: i64 = 2;

pub(crate) fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

/// Opens the catalog of `kind` over `dir`, its files served by `io`.
pub(crate) async fn open(
    kind: &str,
    dir: &Path,
    io: FileIo,
    env: Arc<dyn Environment>,
) -> Box<dyn Catalog> {
    let warehouse = format!("file://{}", dir.display());
    match kind {
        "sqlite" => Box::new(
            SqlCatalog::connect_with_io(SqlCatalogConfig::local(dir), io, env)
                .await
                .unwrap(),
        ),
        _ => Box::new(
            ObjectStoreCatalog::open_with_env(io, &warehouse, env)
                .await
                .unwrap(),
        ),
    }
}

/// A fresh catalog (no cache shared with anyone) on plain local IO.
pub(crate) async fn fresh(kind: &str, dir: &Path) -> Box<dyn Catalog> {
    let io =
        FileIo::from_location(&format!("file://{}", dir.display()), &Default::default()).unwrap();
    open(kind, dir, io, Arc::new(SystemEnvironment)).await
}

/// The child: `kind|dir|crash op|before/after/loop|first id`. Appends one batch (with the
/// crash armed) or, for `loop`, appends until killed.
#[tokio::test]
async fn catalog_kills_worker() {
    let Ok(job) = std::env::var(WORKER_ENV) else {
        return;
    };
    let parts: Vec<&str> = job.split('|').collect();
    let (kind, dir) = (parts[0], Path::new(parts[1]));
    let n: u64 = parts[2].parse().unwrap();
    let mut first: i64 = parts[4].parse().unwrap();
    let store = FaultInjectingStore::new(Arc::new(LocalFileSystem::new()));
    let io = FileIo::with_store("file:///", Arc::new(store.clone()));
    let catalog = open(kind, dir, io, Arc::new(SystemEnvironment)).await;
    match parts[3] {
        "loop" => loop {
            append_ids(catalog.as_ref(), &ident(), ids(first), &SystemEnvironment).await;
            println!("landed {first}");
            first += ROWS_PER_APPEND;
        },
        point => {
            // Armed after opening: operation numbers count the append's own IO.
            let point = if point == "before" {
                CrashPoint::Before
            } else {
                CrashPoint::After
            };
            let armed = store.op_count();
            store.crash_at(n, point);
            append_ids(catalog.as_ref(), &ident(), ids(first), &SystemEnvironment).await;
            println!("completed after {} operations", store.op_count() - armed);
        }
    }
}

fn ids(first: i64) -> std::ops::Range<i64> {
    first..first + ROWS_PER_APPEND
}

fn worker(job: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "catalog_kills::catalog_kills_worker",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(WORKER_ENV, job)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

/// A v2 table merging manifests from three on, so that crashes land in merges too.
pub(crate) async fn create(kind: &str, dir: &Path) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 3));
    let io =
        FileIo::from_location(&format!("file://{}", dir.display()), &Default::default()).unwrap();
    let catalog = open(kind, dir, io, env.clone()).await;
    if kind == "sqlite" {
        let db = NamespaceIdent::parse("db").unwrap();
        catalog
            .create_namespace(&db, BTreeMap::new())
            .await
            .unwrap();
    }
    let mut creation = TableCreation::new(format!("file://{}/db/t", dir.display()), schema());
    creation.format_version = FormatVersion::V2;
    creation
        .properties
        .insert(MANIFEST_MIN_MERGE_COUNT.into(), "3".into());
    catalog.create_table(&ident(), creation).await.unwrap();
    append_ids(catalog.as_ref(), &ident(), ids(0), env.as_ref()).await;
}

/// The ids of every snapshot `table` lists.
pub(crate) fn snapshot_ids(table: &Table) -> BTreeSet<i64> {
    table
        .metadata
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .collect()
}

/// Everything the current snapshot reaches exists and adds up; returns the ids it holds.
pub(crate) async fn check_table(table: &Table, io: &FileIo) -> BTreeSet<i64> {
    let meta = &table.metadata;
    let head = meta.current_snapshot().expect("a current snapshot");
    let manifests = read_manifest_list(io, head.manifest_list.as_deref())
        .await
        .expect("the manifest list is there and decodes");
    let mut records = 0;
    let mut files = Vec::new();
    for m in manifests {
        let bytes = io
            .read(&m.manifest_path)
            .await
            .expect("listed manifest exists");
        let decoded = decode_manifest(&m.manifest_path, &bytes).expect("manifest decodes");
        for e in decoded.entries {
            if e.status != ManifestStatus::Deleted {
                records += e.data_file.record_count;
                files.push(e.data_file.file_path);
            }
        }
    }
    let summary = head.summary.as_ref().unwrap();
    assert_eq!(summary.get_i64("total-records"), Some(records));
    let mut held = BTreeSet::new();
    for f in &files {
        let bytes = io.read(f).await.expect("every live data file exists");
        held.extend(parquet_ids(bytes));
    }
    assert_eq!(
        held.len() as i64,
        records,
        "ids are unique and counted once"
    );
    held
}

/// The `id` column of a Parquet data file.
fn parquet_ids<R: iceberg_write::parquet::file::reader::ChunkReader + 'static>(
    bytes: R,
) -> Vec<i64> {
    use arrow_array::Int64Array;
    let reader =
        iceberg_write::parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024)
            .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let ids = batch
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .clone();
        out.extend(ids.values().iter().copied());
    }
    out
}

fn killed(status: ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

/// Aborts a child at every operation of one append in turn; after each, the table is at the
/// old snapshot or the new one, whole, and the next child appends onto it.
async fn sweep(kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    Box::pin(create(kind, dir.path())).await;
    let io = FileIo::from_location(
        &format!("file://{}", dir.path().display()),
        &Default::default(),
    )
    .unwrap();
    let mut expected: BTreeSet<i64> = ids(0).collect();
    let mut next = ROWS_PER_APPEND;
    let (mut crashes, mut landed_anyway) = (0, 0);
    for point in ["before", "after"] {
        let mut at_point = 0;
        for n in 1.. {
            let before = fresh(kind, dir.path())
                .await
                .load_table(&ident())
                .await
                .unwrap();
            let out = worker(&format!(
                "{kind}|{}|{n}|{point}|{next}",
                dir.path().display()
            ))
            .output()
            .unwrap();
            let after = fresh(kind, dir.path())
                .await
                .load_table(&ident())
                .await
                .unwrap_or_else(|e| {
                    panic!("{kind}: crash {point} op {n}: table does not load: {e}")
                });
            let (old, new) = (&before.metadata, &after.metadata);
            let landed = new.current_snapshot_id != old.current_snapshot_id;
            if landed {
                assert_eq!(
                    new.snapshots.len(),
                    old.snapshots.len() + 1,
                    "one snapshot added"
                );
                assert_eq!(
                    new.current_snapshot().unwrap().parent_snapshot_id,
                    old.current_snapshot_id,
                    "the new snapshot follows the old"
                );
                expected.extend(ids(next));
            } else {
                assert_eq!(
                    new, old,
                    "{kind}: crash {point} op {n}: table changed without a snapshot"
                );
            }
            let held = check_table(&after, &io).await;
            assert_eq!(held, expected, "{kind}: crash {point} op {n}");
            next += ROWS_PER_APPEND;
            if out.status.success() {
                assert!(landed, "a completed append landed");
                // It finished only because it had fewer operations than the armed one.
                let done: u64 = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .find_map(|l| {
                        // libtest may print the test's name first on the same line.
                        l.split("completed after ")
                            .nth(1)?
                            .split(' ')
                            .next()?
                            .parse()
                            .ok()
                    })
                    .unwrap_or_else(|| {
                        panic!(
                            "the child reports its operations:\n{}\n{}",
                            String::from_utf8_lossy(&out.stdout),
                            String::from_utf8_lossy(&out.stderr)
                        )
                    });
                assert!(
                    done < n,
                    "{kind}: op {n} ({point}) was armed but not reached in {done}"
                );
                break;
            }
            assert!(
                killed(out.status),
                "{kind}: the child failed instead of crashing at {point} op {n}:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            crashes += 1;
            at_point += 1;
            landed_anyway += usize::from(landed);
        }
        assert!(at_point > 5, "{kind}: only {at_point} crash points {point}");
    }
    if kind == "object" {
        // Its pointer is a store object: some crashes came after it moved (the hint was not
        // written yet), and the append had landed all the same.
        assert!(
            landed_anyway > 0 && landed_anyway < crashes,
            "{landed_anyway} of {crashes}"
        );
    }
    eprintln!("{kind}: {crashes} crash points, {landed_anyway} after the commit had landed");
}

#[tokio::test]
async fn catalog_kills_sqlite_at_every_operation() {
    sweep("sqlite").await;
}

#[tokio::test]
async fn catalog_kills_object_store_at_every_operation() {
    sweep("object").await;
}

/// SIGKILL at random moments of a child appending in a loop, eight times over.
#[tokio::test]
async fn catalog_kills_sigkill_mid_loop() {
    let dir = tempfile::tempdir().unwrap();
    let kind = "sqlite";
    create(kind, dir.path()).await;
    let io = FileIo::from_location(
        &format!("file://{}", dir.path().display()),
        &Default::default(),
    )
    .unwrap();
    let env = SystemEnvironment;
    let mut next = 1_000_000i64;
    let mut landed_in_all = 0;
    for round in 0..8u64 {
        let mut child = worker(&format!("{kind}|{}|0|loop|{next}", dir.path().display()))
            .spawn()
            .unwrap();
        // 150..500 ms: long enough to start and land a few appends, then mid-flight.
        let jitter = u64::from(env.new_uuid().as_bytes()[0]) * 350 / 255;
        tokio::time::sleep(Duration::from_millis(150 + jitter)).await;
        child.kill().unwrap();
        let out = child.wait_with_output().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(9),
            "round {round}: the child ended before the kill:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let landed: Vec<i64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            // The first may follow libtest's `test ... ` on its line.
            .filter_map(|l| l.split("landed ").nth(1)?.trim().parse().ok())
            .collect();
        let table = fresh(kind, dir.path())
            .await
            .load_table(&ident())
            .await
            .unwrap_or_else(|e| panic!("round {round}: table does not load: {e}"));
        let held = check_table(&table, &io).await;
        for first in &landed {
            // What the child reported landed is there (the last one may land unreported).
            assert!(
                ids(*first).all(|i| held.contains(&i)),
                "round {round}: lost {first}"
            );
        }
        landed_in_all += landed.len();
        next += 1_000_000;
    }
    assert!(
        landed_in_all > 0,
        "no child landed an append before its kill"
    );
}
