//! A commit never destroys what may have landed: a "conflict" or an error that follows our own
//! landed swap is found by reloading and reported as success, a failed reload is an unknown
//! outcome with nothing deleted, and a table replaced between attempts is never written into.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use crate::support::data_file;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use async_trait::async_trait;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, Result, Table, TableCreation,
    TableIdent, commit_append, read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_io::object_store::memory::InMemory;
use iceberg_io::testing::FaultInjectingStore;
use iceberg_spec::properties::{COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES};
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema, TableMetadata};

/// What the wrapped catalog does on its first commit call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// The swap lands, then the caller is told "conflict" (a store that retried a conditional
    /// create after a 5xx, whose retry saw our own object).
    LandedThenConflict,
    /// The swap lands, then a transport error arrives instead of the answer.
    LandedThenIoError,
    /// Another writer commits first (a real conflict), and every reload after it fails.
    ConflictThenReloadsFail,
    /// The table is dropped and created again, then the swap conflicts.
    ReplacedThenConflict,
    /// The swap lands, then the catalog says it cannot tell (a connection lost after send).
    LandedThenUnknown,
    /// The catalog cannot tell, and the swap did not land.
    UnknownNotLanded,
    /// As `UnknownNotLanded`, then the retry cannot write its manifest list.
    UnknownThenRetryWritesFail,
    /// The swap lands and the catalog cannot tell; meanwhile the table is renamed to `db.x`
    /// and a new table takes its name.
    LandedThenUnknownThenRenamed,
}

/// An in-memory catalog whose first commit meets a [`Fault`].
type Faulty = InterceptingCatalog<InMemoryCatalog, FirstCommit>;

/// The fault of the first commit, and what the test counts after it.
#[derive(Debug)]
struct FirstCommit {
    store: FaultInjectingStore,
    fault: Fault,
    fired: AtomicBool,
    loads_after_fault: AtomicU32,
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for FirstCommit {
    async fn load_table(&self, inner: &InMemoryCatalog, ident: &TableIdent) -> Result<Table> {
        if self.fault == Fault::ConflictThenReloadsFail && self.fired.load(Ordering::SeqCst) {
            self.loads_after_fault.fetch_add(1, Ordering::SeqCst);
            return Err(Error::Catalog {
                table: ident.to_string(),
                reason: "injected: the catalog is unreachable".into(),
            });
        }
        inner.load_table(ident).await
    }

    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> Result<String> {
        if self.fired.swap(true, Ordering::SeqCst) {
            return inner.commit(ident, base, new).await;
        }
        let conflict = || crate::support::conflict(ident, base);
        let unknown = || Error::CommitStateUnknown {
            table: ident.to_string(),
            snapshot_id: new.current_snapshot_id,
            reason: "injected: the connection dropped after the swap was sent".into(),
            source: None,
        };
        match self.fault {
            Fault::LandedThenConflict => {
                inner.commit(ident, base, new).await?;
                Err(conflict())
            }
            Fault::LandedThenIoError => {
                inner.commit(ident, base, new).await?;
                Err(Error::Io(iceberg_io::Error::Io {
                    path: base.to_string(),
                    source: std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset"),
                }))
            }
            Fault::ConflictThenReloadsFail => Err(conflict()),
            Fault::LandedThenUnknown => {
                inner.commit(ident, base, new).await?;
                Err(unknown())
            }
            Fault::UnknownNotLanded => Err(unknown()),
            Fault::UnknownThenRetryWritesFail => {
                self.store.fail_puts_matching("/snap-");
                Err(unknown())
            }
            Fault::LandedThenUnknownThenRenamed => {
                inner.commit(ident, base, new).await?;
                let moved = TableIdent::parse("db.x").unwrap();
                inner.rename_table(ident, &moved).await?;
                inner.create_table(ident, creation(0)).await?;
                Err(unknown())
            }
            Fault::ReplacedThenConflict => {
                inner.drop_table(ident, false).await?;
                inner.create_table(ident, creation(0)).await?;
                Err(conflict())
            }
        }
    }
}

fn creation(retries: u32) -> TableCreation {
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    let mut c = TableCreation::new("memory://wh/db/t", schema);
    c.properties
        .insert(COMMIT_NUM_RETRIES.into(), retries.to_string());
    c.properties
        .insert(COMMIT_MIN_RETRY_WAIT_MS.into(), "1".into());
    c
}

fn file(name: &str) -> DataFile {
    data_file(name, 3)
}

async fn setup(fault: Fault, retries: u32) -> (Faulty, TableIdent, Arc<DeterministicEnvironment>) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
    let inner = InMemoryCatalog::new(io, env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    inner.create_table(&ident, creation(retries)).await.unwrap();
    commit_append(
        &inner,
        &ident,
        vec![file("first")],
        BTreeMap::new(),
        env.as_ref(),
    )
    .await
    .unwrap();
    let first = FirstCommit {
        store,
        fault,
        fired: AtomicBool::new(false),
        loads_after_fault: AtomicU32::new(0),
    };
    let catalog = InterceptingCatalog::new(inner, first);
    (catalog, ident, env)
}

/// Every manifest list and manifest of every snapshot of the table exists.
async fn all_listed_files_exist(catalog: &dyn Catalog, ident: &TableIdent) {
    let table = catalog.load_table(ident).await.unwrap();
    for s in &table.metadata.snapshots {
        let list = s.manifest_list.clone().unwrap();
        assert!(
            catalog.io().exists(&list).await.unwrap(),
            "{list} was deleted"
        );
        for m in read_manifest_list(catalog.io(), Some(&list)).await.unwrap() {
            assert!(
                catalog.io().exists(&m.manifest_path).await.unwrap(),
                "{} was deleted",
                m.manifest_path
            );
        }
    }
}

/// Appends the data file `second` through `catalog`.
async fn append_second(
    catalog: &Faulty,
    ident: &TableIdent,
    env: &Arc<DeterministicEnvironment>,
) -> Result<iceberg_append::CommitOutcome> {
    commit_append(
        catalog,
        ident,
        vec![file("second")],
        BTreeMap::new(),
        env.as_ref(),
    )
    .await
}

/// `snapshot_id` is current, the second snapshot of the table (it landed once), and every
/// file it lists exists.
async fn landed_once(catalog: &Faulty, ident: &TableIdent, snapshot_id: i64) {
    let table = catalog.load_table(ident).await.unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(snapshot_id));
    assert_eq!(table.metadata.snapshots.len(), 2, "landed once");
    all_listed_files_exist(catalog, ident).await;
}

/// On the last attempt (no retries left) a "conflict" that is our own landed write used to
/// delete the current snapshot's manifests: it is success, and nothing is deleted.
#[tokio::test]
async fn our_landed_write_reported_as_conflict_is_success() {
    for fault in [
        Fault::LandedThenConflict,
        Fault::LandedThenIoError,
        Fault::LandedThenUnknown,
    ] {
        for retries in [0, 2] {
            let (catalog, ident, env) = setup(fault, retries).await;
            let done = append_second(&catalog, &ident, &env)
                .await
                .unwrap_or_else(|e| panic!("{fault:?}, {retries} retries: {e}"));
            landed_once(&catalog, &ident, done.snapshot_id).await;
        }
    }
}

/// A catalog that cannot tell whether its swap landed is reconciled by reloading: absent,
/// the commit is retried and lands once.
#[tokio::test]
async fn an_unknown_swap_found_absent_is_retried() {
    let (catalog, ident, env) = setup(Fault::UnknownNotLanded, 2).await;
    let done = append_second(&catalog, &ident, &env).await.unwrap();
    assert_eq!(done.attempts, 2);
    landed_once(&catalog, &ident, done.snapshot_id).await;
}

/// Appends `second` under `fault` with `retries`, which must end as an unknown outcome
/// that kept the manifest and manifest list it wrote; returns the catalog.
async fn unknown_and_nothing_deleted(fault: Fault, retries: u32) -> Faulty {
    let (catalog, ident, env) = setup(fault, retries).await;
    let metadata = || catalog.io().list("memory://wh/db/t/metadata");
    let before = metadata().await.unwrap();
    let err = append_second(&catalog, &ident, &env).await.unwrap_err();
    assert!(err.is_commit_state_unknown(), "{fault:?}: {err}");
    if fault == Fault::UnknownThenRetryWritesFail {
        // The store's own error stays the typed source, not only words in the reason.
        let source = std::error::Error::source(&err).expect("a source");
        let source = source.downcast_ref::<Box<Error>>().expect("our error");
        assert!(matches!(**source, Error::Io(_)), "{source:?}");
    }
    let after = metadata().await.unwrap();
    assert!(before.iter().all(|p| after.contains(p)));
    let new: Vec<&String> = after.iter().filter(|p| !before.contains(p)).collect();
    assert!(
        new.iter().any(|p| p.contains("/snap-")) && new.iter().any(|p| p.ends_with("-m0.avro")),
        "{fault:?}: the manifest and manifest list written stay: {new:?}"
    );
    catalog
}

/// With no retry left, an unknown swap found absent stays unknown (a late swap may still
/// arrive): nothing the commit wrote is deleted.
#[tokio::test]
async fn an_unknown_swap_without_retries_stays_unknown_and_deletes_nothing() {
    unknown_and_nothing_deleted(Fault::UnknownNotLanded, 0).await;
}

/// A retry that fails to write after an unknown swap (which may still land) is an unknown
/// outcome, not a failure: a caller would delete the data files a late swap lists.
#[tokio::test]
async fn a_failed_retry_after_an_unknown_swap_is_unknown_and_deletes_nothing() {
    unknown_and_nothing_deleted(Fault::UnknownThenRetryWritesFail, 3).await;
}

/// A conflict whose reload fails is an unknown outcome: nothing this commit wrote is deleted.
#[tokio::test]
async fn a_failed_reload_is_unknown_and_deletes_nothing() {
    let catalog = unknown_and_nothing_deleted(Fault::ConflictThenReloadsFail, 3).await;
    assert_eq!(
        catalog.interceptor.loads_after_fault.load(Ordering::SeqCst),
        3,
        "the reload is retried before the outcome is called unknown"
    );
}

/// An unknown swap whose table then holds another table's UUID under its name may have
/// landed in the renamed table: the outcome stays unknown, and every file the renamed table
/// lists exists.
#[tokio::test]
async fn an_unknown_swap_then_a_renamed_table_is_unknown_and_deletes_nothing() {
    let catalog = unknown_and_nothing_deleted(Fault::LandedThenUnknownThenRenamed, 3).await;
    let moved = TableIdent::parse("db.x").unwrap();
    assert_eq!(
        catalog
            .load_table(&moved)
            .await
            .unwrap()
            .metadata
            .snapshots
            .len(),
        2,
        "our swap landed in the renamed table"
    );
    all_listed_files_exist(&catalog, &moved).await;
}

/// A table dropped and created again between attempts is a different table: the append fails
/// (Java: "Table UUID does not match") and the new table gets nothing of it.
#[tokio::test]
async fn a_replaced_table_is_never_written_into() {
    let (catalog, ident, env) = setup(Fault::ReplacedThenConflict, 3).await;
    let err = append_second(&catalog, &ident, &env).await.unwrap_err();
    assert!(err.to_string().contains("UUID"), "{err}");
    let table = catalog.load_table(&ident).await.unwrap();
    assert!(
        table.metadata.snapshots.is_empty(),
        "the new table has no snapshot"
    );
}

/// An environment whose snapshot id is fixed in advance (an idempotent commit).
#[derive(Debug)]
struct FixedId(Arc<DeterministicEnvironment>, i64);

impl iceberg_append::Environment for FixedId {
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn new_uuid(&self) -> uuid::Uuid {
        self.0.new_uuid()
    }

    fn new_snapshot_id(&self) -> i64 {
        self.1
    }

    fn fixed_snapshot_id(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_fixed_snapshot_id_already_in_the_table_is_not_committed_again() {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let catalog = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    catalog.create_table(&ident, creation(0)).await.unwrap();
    let fixed = FixedId(env.clone(), 42);
    commit_append(&catalog, &ident, vec![file("a")], BTreeMap::new(), &fixed)
        .await
        .unwrap();
    let again = commit_append(&catalog, &ident, vec![file("a2")], BTreeMap::new(), &fixed).await;
    assert!(
        matches!(
            again,
            Err(Error::SnapshotAlreadyCommitted {
                snapshot_id: 42,
                ..
            })
        ),
        "{again:?}"
    );
    let table = catalog.load_table(&ident).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    assert_eq!(table.metadata.current_snapshot_id, Some(42));
}
