//! A commit whose pointer swap lands but whose answer is lost (reported as a conflict, or as
//! an unknown outcome) lands once and is reported as landed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, Result, Table, TableCreation, TableIdent,
    commit_append,
};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_spec::{DataFile, TableMetadata};

/// Swaps through the SQL catalog, then loses the first answer: reports `as_conflict` (a
/// catalog that re-checks and sees the pointer moved) or an unknown outcome (the connection
/// dropped).
#[derive(Debug)]
struct LosesFirstAnswer {
    as_conflict: bool,
    lost: AtomicBool,
}

#[async_trait]
impl CommitInterceptor<SqlCatalog> for LosesFirstAnswer {
    async fn commit(
        &self,
        inner: &SqlCatalog,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String> {
        let location = inner.commit(ident, base_location, new_metadata).await?;
        if self.lost.swap(true, Ordering::SeqCst) {
            return Ok(location);
        }
        Err(if self.as_conflict {
            Error::CommitConflict {
                table: ident.to_string(),
                expected: Some(base_location.to_string()),
                found: Some(location),
            }
        } else {
            Error::CommitStateUnknown {
                table: ident.to_string(),
                snapshot_id: new_metadata.current_snapshot_id,
                reason: "injected: connection lost after the UPDATE was sent".into(),
                source: None,
            }
        })
    }
}

type LosingCatalog = InterceptingCatalog<SqlCatalog, LosesFirstAnswer>;

async fn setup(dir: &std::path::Path, as_conflict: bool) -> (LosingCatalog, TableIdent, Table) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 77));
    let inner = SqlCatalog::connect_with_env(SqlCatalogConfig::local(dir), env)
        .await
        .unwrap();
    let db = NamespaceIdent::parse("db").unwrap();
    inner.create_namespace(&db, BTreeMap::new()).await.unwrap();
    let ident = TableIdent::new(db, "t");
    let table = inner
        .create_table(
            &ident,
            TableCreation::new("", crate::catalog_common::schema()),
        )
        .await
        .unwrap();
    let lose = LosesFirstAnswer {
        as_conflict,
        lost: AtomicBool::new(false),
    };
    let catalog = InterceptingCatalog::new(inner, lose);
    (catalog, ident, table)
}

fn file(table: &Table) -> DataFile {
    DataFile {
        file_path: format!("{}/data/a.parquet", table.metadata.location),
        record_count: 5,
        file_size_in_bytes: 10,
        ..Default::default()
    }
}

#[tokio::test]
async fn catalog_lost_answer_reported_as_conflict_lands_once() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ident, table) = setup(dir.path(), true).await;
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 78);
    let done = commit_append(&catalog, &ident, vec![file(&table)], BTreeMap::new(), &env)
        .await
        .unwrap();
    let after = catalog.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata.snapshots.len(), 1, "no second snapshot");
    assert_eq!(after.metadata.current_snapshot_id, Some(done.snapshot_id));
    assert_eq!(done.metadata_location, after.metadata_location.unwrap());
}

#[tokio::test]
async fn catalog_lost_answer_reported_as_unknown_is_found_by_reloading() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, ident, table) = setup(dir.path(), false).await;
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 79);
    let done = commit_append(&catalog, &ident, vec![file(&table)], BTreeMap::new(), &env)
        .await
        .unwrap();
    // It landed, once, is reported as landed, and nothing it points at was deleted.
    let after = catalog.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata.snapshots.len(), 1);
    assert_eq!(after.metadata.current_snapshot_id, Some(done.snapshot_id));
    let snapshot = after.metadata.current_snapshot().unwrap();
    let list = snapshot.manifest_list.clone().unwrap();
    assert!(catalog.io().exists(&list).await.unwrap());
    let manifests = iceberg_append::read_manifest_list(catalog.io(), Some(&list))
        .await
        .unwrap();
    for m in manifests {
        assert!(catalog.io().exists(&m.manifest_path).await.unwrap());
    }
    // The next append goes on from the landed snapshot.
    let mut second = file(&table);
    second.file_path = second.file_path.replace("a.parquet", "b.parquet");
    commit_append(&catalog, &ident, vec![second], BTreeMap::new(), &env)
        .await
        .unwrap();
    let last = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(last.snapshots.len(), 2);
    assert_eq!(
        last.current_snapshot().unwrap().parent_snapshot_id,
        Some(snapshot.snapshot_id)
    );
}
