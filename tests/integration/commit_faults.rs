//! The fault matrix of one append: every store operation of it (data files, manifests,
//! manifest list, metadata file, the object-store swap, the version hint, and the reads between)
//! fails in turn, before the store saw it, after the store did it, or (for puts) as the
//! "already exists" of a retried conditional create that had in fact succeeded. After each, the
//! table loads, everything its current snapshot reaches exists, no snapshot that was committed
//! is gone, and the append's outcome is true: `Ok` means its snapshot is current, a definite
//! failure means its snapshot is not in the table, and only an unknown outcome may be either.

use std::collections::BTreeSet;
use std::sync::Arc;

use iceberg_append::{Environment, SystemEnvironment, commit_append};
use iceberg_io::FileIo;
use iceberg_io::object_store::local::LocalFileSystem;
use iceberg_io::testing::{FailPoint, FaultInjectingStore};

use crate::catalog_common::batch;
use crate::catalog_kills::{check_table, create, fresh, ident, open};

/// One append of `ids` through a catalog whose store fails operation `n` at `point`; returns
/// the outcome and how many operations the append made.
async fn faulty_append(
    kind: &str,
    dir: &std::path::Path,
    ids: std::ops::Range<i64>,
    fault: Option<(u64, FailPoint)>,
) -> (Result<i64, iceberg_append::Error>, u64) {
    let store = FaultInjectingStore::new(Arc::new(LocalFileSystem::new()));
    let io = FileIo::with_store("file:///", Arc::new(store.clone()));
    let env: Arc<dyn Environment> = Arc::new(SystemEnvironment);
    let catalog = open(kind, dir, io, env.clone()).await;
    let armed = store.op_count();
    if let Some((n, point)) = fault {
        store.fail_at(n, point);
    }
    let outcome = async {
        let table = catalog.load_table(&ident()).await?;
        let meta = &table.metadata;
        let schema = meta.current_schema()?;
        let options = iceberg_write::WriteOptions::from_table_properties(&meta.properties)?;
        let files = iceberg_write::write_data_files(
            catalog.io(),
            &meta.location,
            &[batch(schema, ids)],
            schema,
            meta.default_spec()?,
            None,
            &options,
        )
        .await?;
        let done = commit_append(
            catalog.as_ref(),
            &ident(),
            files,
            Default::default(),
            env.as_ref(),
        )
        .await?;
        Ok(done.snapshot_id)
    }
    .await;
    (outcome, store.op_count() - armed)
}

async fn sweep(kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    create(kind, dir.path()).await;
    let (first, ops) = faulty_append(kind, dir.path(), 100..102, None).await;
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
            let (outcome, _) = faulty_append(kind, dir.path(), ids.clone(), Some((n, point))).await;
            let catalog = fresh(kind, dir.path()).await;
            let table = catalog
                .load_table(&ident())
                .await
                .unwrap_or_else(|e| panic!("{kind}: op {n} {point:?}: the table must load: {e}"));
            let held = check_table(&table, catalog.io()).await;
            let snapshots: BTreeSet<i64> = table
                .metadata
                .snapshots
                .iter()
                .map(|s| s.snapshot_id)
                .collect();
            assert!(
                committed.is_subset(&snapshots),
                "{kind}: op {n} {point:?}: a committed snapshot disappeared"
            );
            match outcome {
                Ok(id) => {
                    landed += 1;
                    assert_eq!(
                        table.metadata.current_snapshot_id,
                        Some(id),
                        "{kind}: op {n} {point:?}"
                    );
                    assert!(ids.clone().all(|i| held.contains(&i)));
                }
                Err(e) if e.is_commit_state_unknown() => unknown += 1,
                Err(e) => {
                    failed += 1;
                    assert!(
                        ids.clone().all(|i| !held.contains(&i)),
                        "{kind}: op {n} {point:?}: failed ({e}) but its rows are in the table"
                    );
                }
            }
            committed = snapshots;
        }
    }
    eprintln!(
        "{kind}: {ops} operations x 3 faults: {landed} landed, {failed} failed, {unknown} unknown"
    );
    assert!(failed > 0, "{kind}: the sweep reached failures");
    if kind == "object-store" {
        // Its swap is a store operation: failed after the store did it (an error, or the
        // "already exists" of a retried create), the append is found by reloading and lands.
        assert!(
            landed >= 2,
            "{kind}: a swap that landed despite its error is success"
        );
    }
}

#[tokio::test]
async fn commit_faults_sqlite_at_every_operation() {
    sweep("sqlite").await;
}

#[tokio::test]
async fn commit_faults_object_store_at_every_operation() {
    sweep("object-store").await;
}

/// On S3 (moto): the swap's conditional create is stored, then answered 503; the client
/// retries it, and the retry's "already exists" is our own write. With no retries left (the
/// last attempt) the append must still report success and delete nothing: before, its cleanup
/// deleted the manifest list and manifests of the snapshot that had become current.
#[tokio::test]
async fn s3_swap_stored_then_503_is_our_own_write() {
    let Some(moto) = iceberg_io::testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("lost");
    let warehouse = "s3://lost/wh";
    let props = iceberg_io::testing::moto::s3_properties(&moto.endpoint);
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
