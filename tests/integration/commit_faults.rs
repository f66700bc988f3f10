//! The fault matrix of one append: every store operation of it (data files, manifests,
//! manifest list, metadata file, the object-store swap, the version hint, and the reads between)
//! fails in turn, before the store saw it, after the store did it, or (for puts) as the
//! "already exists" of a retried conditional create that had in fact succeeded. After each, the
//! table loads, everything its current snapshot reaches exists, no snapshot that was committed
//! is gone, and the append's outcome is true: `Ok` means its snapshot is current, a definite
//! failure means its snapshot is not in the table, and only an unknown outcome may be either.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, Environment, SystemEnvironment, TableCreation};
use iceberg_catalog::ObjectStoreCatalog;
use iceberg_io::FileIo;
use iceberg_io::object_store::local::LocalFileSystem;
use iceberg_io::testing::{FailPoint, FaultInjectingStore};
use iceberg_spec::properties::MANIFEST_MIN_MERGE_COUNT;

use crate::catalog_common::try_append_ids;
use crate::catalog_kills::{check_table, create, ident, open, snapshot_ids};

/// Where the table of a sweep lives.
enum Backend {
    /// A catalog (`sqlite` or `object-store`) over a local folder.
    Local(&'static str, tempfile::TempDir),
    /// The object-store catalog on S3 (moto), at this warehouse.
    S3(iceberg_testing::moto::MotoServer, String),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Self::Local(kind, _) => kind,
            Self::S3(..) => "object-store on S3",
        }
    }

    /// IO without faults.
    fn io(&self) -> FileIo {
        match self {
            Self::Local(_, dir) => FileIo::from_location(
                &format!("file://{}", dir.path().display()),
                &Default::default(),
            )
            .unwrap(),
            Self::S3(moto, warehouse) => {
                FileIo::from_location(warehouse, &moto.s3_properties()).unwrap()
            }
        }
    }

    /// IO whose store is `store`'s fault injector.
    fn faulty_io(&self) -> (FileIo, FaultInjectingStore) {
        match self {
            Self::Local(..) => {
                let store = FaultInjectingStore::new(Arc::new(LocalFileSystem::new()));
                (
                    FileIo::with_store("file:///", Arc::new(store.clone())),
                    store,
                )
            }
            Self::S3(_, warehouse) => {
                let inner = self.io().object_store(warehouse).unwrap();
                let store = FaultInjectingStore::new(inner);
                let bucket = warehouse.split('/').take(3).collect::<Vec<_>>().join("/");
                (FileIo::with_store(&bucket, Arc::new(store.clone())), store)
            }
        }
    }

    async fn catalog(&self, io: FileIo, env: Arc<dyn Environment>) -> Box<dyn Catalog> {
        match self {
            Self::Local(kind, dir) => open(kind, dir.path(), io, env).await,
            Self::S3(_, warehouse) => Box::new(
                ObjectStoreCatalog::open_with_env(io, warehouse, env)
                    .await
                    .unwrap(),
            ),
        }
    }

    /// The table `db.t` with one append, merging from three manifests on.
    async fn create(&self) {
        match self {
            Self::Local(kind, dir) => create(kind, dir.path()).await,
            Self::S3(..) => {
                let catalog = self.catalog(self.io(), Arc::new(SystemEnvironment)).await;
                let db = NamespaceIdent::parse("db").unwrap();
                catalog
                    .create_namespace(&db, BTreeMap::new())
                    .await
                    .unwrap();
                let mut creation = TableCreation::new("", crate::catalog_common::schema());
                creation
                    .properties
                    .insert(MANIFEST_MIN_MERGE_COUNT.into(), "3".into());
                catalog.create_table(&ident(), creation).await.unwrap();
            }
        }
    }
}

/// One append of `ids` through a catalog whose store fails operation `n` at `point`; returns
/// the outcome and how many operations the append made.
async fn faulty_append(
    backend: &Backend,
    ids: std::ops::Range<i64>,
    fault: Option<(u64, FailPoint)>,
) -> (Result<i64, iceberg_append::Error>, u64) {
    let (io, store) = backend.faulty_io();
    let env: Arc<dyn Environment> = Arc::new(SystemEnvironment);
    let catalog = backend.catalog(io, env.clone()).await;
    let armed = store.op_count();
    if let Some((n, point)) = fault {
        store.fail_at(n, point);
    }
    let outcome = try_append_ids(catalog.as_ref(), &ident(), ids, env.as_ref())
        .await
        .map(|done| done.snapshot_id);
    (outcome, store.op_count() - armed)
}

/// How an append under a fault ended, as [`check_outcome`] verified it.
enum Outcome {
    Landed,
    Failed,
    Unknown,
}

/// Checks the table after an append of `ids` that ended in `outcome`: it loads, everything its
/// current snapshot reaches exists, no snapshot in `committed` is gone, and the outcome is
/// true (`Ok`: its snapshot is current and its rows are there; a definite failure: its rows
/// are not). Updates `committed` to the table's snapshots.
async fn check_outcome(
    backend: &Backend,
    label: &str,
    outcome: Result<i64, iceberg_append::Error>,
    ids: std::ops::Range<i64>,
    committed: &mut BTreeSet<i64>,
) -> Outcome {
    let kind = backend.name();
    let catalog = backend
        .catalog(backend.io(), Arc::new(SystemEnvironment))
        .await;
    let table = catalog
        .load_table(&ident())
        .await
        .unwrap_or_else(|e| panic!("{kind}: {label}: the table must load: {e}"));
    let held = check_table(&table, catalog.io()).await;
    let snapshots = snapshot_ids(&table);
    assert!(
        committed.is_subset(&snapshots),
        "{kind}: {label}: a committed snapshot disappeared"
    );
    *committed = snapshots;
    match outcome {
        Ok(id) => {
            assert_eq!(
                table.metadata.current_snapshot_id,
                Some(id),
                "{kind}: {label}"
            );
            assert!(ids.clone().all(|i| held.contains(&i)), "{kind}: {label}");
            Outcome::Landed
        }
        Err(e) if e.is_commit_state_unknown() => Outcome::Unknown,
        Err(e) => {
            assert!(
                ids.clone().all(|i| !held.contains(&i)),
                "{kind}: {label}: failed ({e}) but its rows are in the table"
            );
            Outcome::Failed
        }
    }
}

async fn sweep(backend: Backend) {
    let kind = backend.name();
    backend.create().await;
    let (first, ops) = faulty_append(&backend, 100..102, None).await;
    first.unwrap();
    assert!(ops > 5, "{kind}: an append makes {ops} store operations");
    let mut next_id = 200;
    let mut committed: BTreeSet<i64> = BTreeSet::new();
    let (mut landed, mut failed, mut unknown) = (0, 0, 0);
    for n in 1..=ops {
        for point in [
            FailPoint::Before,
            FailPoint::After,
            FailPoint::AfterAsAlreadyExists,
        ] {
            let ids = next_id..next_id + 2;
            next_id += 2;
            let (outcome, _) = faulty_append(&backend, ids.clone(), Some((n, point))).await;
            match check_outcome(
                &backend,
                &format!("op {n} {point:?}"),
                outcome,
                ids,
                &mut committed,
            )
            .await
            {
                Outcome::Landed => landed += 1,
                Outcome::Failed => failed += 1,
                Outcome::Unknown => unknown += 1,
            }
        }
    }
    eprintln!(
        "{kind}: {ops} operations x 3 faults: {landed} landed, {failed} failed, {unknown} unknown"
    );
    assert!(failed > 0, "{kind}: the sweep reached failures");
    if kind.starts_with("object-store") {
        // Its swap is a store operation: failed after the store did it (an error, or the
        // "already exists" of a retried create), the append is found by reloading and lands.
        assert!(
            landed >= 2,
            "{kind}: a swap that landed despite its error is success"
        );
    }
}

fn local(kind: &'static str) -> Backend {
    Backend::Local(kind, tempfile::tempdir().unwrap())
}

#[tokio::test]
async fn commit_faults_sqlite_at_every_operation() {
    sweep(local("sqlite")).await;
}

#[tokio::test]
async fn commit_faults_object_store_at_every_operation() {
    sweep(local("object-store")).await;
}

#[tokio::test]
async fn commit_faults_object_store_s3_at_every_operation() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("faults");
    sweep(Backend::S3(moto, "s3://faults/wh".into())).await;
}

/// On S3 (moto): the swap's conditional create is stored, then answered 503; the client
/// retries it, and the retry's "already exists" is our own write. With no retries left (the
/// last attempt) the append must still report success and delete nothing: before, its cleanup
/// deleted the manifest list and manifests of the snapshot that had become current.
#[tokio::test]
async fn s3_swap_stored_then_503_is_our_own_write() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("lost");
    let warehouse = "s3://lost/wh";
    let props = iceberg_testing::moto::s3_properties(&moto.endpoint);
    let io = FileIo::from_location(warehouse, &props).unwrap();
    let catalog = iceberg_catalog::ObjectStoreCatalog::open(io, warehouse)
        .await
        .unwrap();
    let db = iceberg_append::catalog::NamespaceIdent::parse("db").unwrap();
    iceberg_append::Catalog::create_namespace(&catalog, &db, Default::default())
        .await
        .unwrap();
    let mut creation = iceberg_append::TableCreation::new("", crate::catalog_common::schema());
    creation
        .properties
        .insert("commit.retry.num-retries".into(), "0".into());
    iceberg_append::Catalog::create_table(&catalog, &ident(), creation)
        .await
        .unwrap();
    moto.store_then_503("metadata/v2.metadata.json", 1);
    let done =
        crate::catalog_common::append_ids(&catalog, &ident(), 0..3, &SystemEnvironment).await;
    let table = iceberg_append::Catalog::load_table(&catalog, &ident())
        .await
        .unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(done.snapshot_id));
    let held = check_table(&table, iceberg_append::Catalog::io(&catalog)).await;
    assert_eq!(held, (0..3).collect());
}

/// The table of [`Backend::create`] in a new moto server's `bucket`; `None` when moto is
/// missing (and not required).
async fn s3_table(bucket: &str) -> Option<Backend> {
    let moto = iceberg_testing::moto::MotoServer::start()?;
    moto.create_bucket(bucket);
    let backend = Backend::S3(moto, format!("s3://{bucket}/wh"));
    backend.create().await;
    Some(backend)
}

/// On S3 (moto), each write of an append in turn is stored and then its answer is lost: a 503
/// (which the client retries) or a connection closed with no answer. Every outcome is true
/// and the table stays whole.
#[tokio::test]
async fn s3_lost_answers_at_each_write_of_an_append() {
    let Some(backend) = s3_table("answers").await else {
        return;
    };
    let Backend::S3(moto, _) = &backend else {
        unreachable!()
    };
    let mut committed = BTreeSet::new();
    let mut next_id = 0;
    let mut landed = 0;
    for mode in ["503", "drop"] {
        for fragment in [
            "/data/",
            "-m0.avro",
            "/snap-",
            ".metadata.json",
            "version-hint.text",
        ] {
            if mode == "503" {
                moto.store_then_503(fragment, 1);
            } else {
                moto.store_then_drop(fragment, 1);
            }
            let ids = next_id..next_id + 2;
            next_id += 2;
            let (outcome, _) = faulty_append(&backend, ids.clone(), None).await;
            let label = format!("{mode} at {fragment}");
            eprintln!(
                "{label}: {:?}",
                outcome.as_ref().map_err(ToString::to_string)
            );
            assert_eq!(moto.faults_pending(), 0, "{label}: the fault fired");
            if let Outcome::Landed =
                check_outcome(&backend, &label, outcome, ids, &mut committed).await
            {
                landed += 1;
            }
        }
    }
    // A lost answer to a write that was stored costs nothing: every append lands (the swap's
    // by being found on reload).
    assert_eq!(landed, 10);
}

/// On S3 (moto): a writer whose swap is slow is overtaken by another; its conditional create
/// then finds the version taken, it reloads, re-plans onto the other's snapshot and lands.
#[tokio::test]
async fn s3_slow_swap_is_overtaken_and_retried() {
    let Some(backend) = s3_table("slow").await else {
        return;
    };
    let Backend::S3(moto, _) = &backend else {
        unreachable!()
    };
    moto.delay(".metadata.json", 1, std::time::Duration::from_millis(1500));
    let slow = faulty_append(&backend, 0..2, None);
    let fast = async {
        // Only once the slow swap is held at the server.
        while moto.faults_pending() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        faulty_append(&backend, 2..4, None).await
    };
    let ((slow, _), (fast, _)) = tokio::join!(slow, fast);
    let (slow, fast) = (slow.unwrap(), fast.unwrap());
    let catalog = backend
        .catalog(backend.io(), Arc::new(SystemEnvironment))
        .await;
    let table = catalog.load_table(&ident()).await.unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(slow));
    let head = table.metadata.snapshot_by_id(slow).unwrap();
    assert_eq!(
        head.parent_snapshot_id,
        Some(fast),
        "re-planned onto the fast one"
    );
    assert_eq!(check_table(&table, catalog.io()).await, (0..4).collect());
}
