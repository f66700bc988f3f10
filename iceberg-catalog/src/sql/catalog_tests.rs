//! The SQL catalog on a SQLite file: namespaces, tables and the conditional swap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, DeterministicEnvironment, TableCreation, TableIdent, commit_append};
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};

use super::pool::fetch;
use super::*;

fn schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap()
}

fn ns(s: &str) -> NamespaceIdent {
    NamespaceIdent::parse(s).unwrap()
}

async fn open(dir: &Path) -> SqlCatalog {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 5));
    SqlCatalog::connect_with_env(SqlCatalogConfig::local(dir), env)
        .await
        .unwrap()
}

fn file(table: &iceberg_append::Table, name: &str, rows: i64) -> DataFile {
    DataFile {
        file_path: format!("{}/data/{name}.parquet", table.metadata.location),
        record_count: rows,
        file_size_in_bytes: 100,
        ..Default::default()
    }
}

#[tokio::test]
async fn namespaces_follow_pyiceberg_rules() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    c.create_namespace(&ns("a"), BTreeMap::new()).await.unwrap();
    assert!(c.create_namespace(&ns("a"), BTreeMap::new()).await.is_err());
    assert_eq!(
        c.namespace_properties(&ns("a")).await.unwrap(),
        [("exists".to_string(), "true".to_string())].into()
    );
    c.create_namespace(&ns("a.b_c"), [("k".into(), "v".into())].into())
        .await
        .unwrap();
    // `_` is not a wildcard: `a.bxc` does not exist.
    assert!(!c.namespace_exists(&ns("a.bxc")).await.unwrap());
    assert_eq!(c.list_namespaces(None).await.unwrap(), [ns("a")]);
    assert_eq!(
        c.list_namespaces(Some(&ns("a"))).await.unwrap(),
        [ns("a.b_c")]
    );
    c.update_namespace_properties(
        &ns("a.b_c"),
        &["k".into()],
        [("x".into(), "y".into())].into(),
    )
    .await
    .unwrap();
    assert_eq!(
        c.namespace_properties(&ns("a.b_c")).await.unwrap(),
        [
            ("exists".to_string(), "true".to_string()),
            ("x".to_string(), "y".to_string())
        ]
        .into()
    );
    // Its other properties removed (as Spark may), the namespace stays: `exists` holds it.
    c.update_namespace_properties(&ns("a.b_c"), &["x".into()], BTreeMap::new())
        .await
        .unwrap();
    assert!(c.namespace_exists(&ns("a.b_c")).await.unwrap());
    // `exists` itself is reserved (Java refuses to set it): removed, the namespace would go
    // for every client.
    for (removals, updates) in [
        (vec!["exists".to_string()], BTreeMap::new()),
        (vec![], [("exists".to_string(), "false".to_string())].into()),
    ] {
        let err = c
            .update_namespace_properties(&ns("a.b_c"), &removals, updates)
            .await
            .unwrap_err();
        assert!(
            matches!(err, iceberg_append::Error::Unsupported { .. }),
            "{err}"
        );
    }
    assert!(c.namespace_exists(&ns("a.b_c")).await.unwrap());
    // `a` has `a.b_c` below it: refused, as Java's JdbcCatalog does, and its properties stay.
    let err = c.drop_namespace(&ns("a")).await.unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(c.namespace_properties(&ns("a")).await.unwrap().len(), 1);
    c.drop_namespace(&ns("a.b_c")).await.unwrap();
    assert!(!c.namespace_exists(&ns("a.b_c")).await.unwrap());
    c.drop_namespace(&ns("a")).await.unwrap();
    assert!(
        c.drop_namespace(&ns("zz"))
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn tables_create_load_rename_register_drop() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    let t = TableIdent::parse("db.t").unwrap();
    let err = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    c.create_namespace(&ns("db"), BTreeMap::new())
        .await
        .unwrap();
    let created = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let loc = created.metadata_location.clone().unwrap();
    let expected = format!("file://{}/db/t/metadata/00000-", dir.path().display());
    assert!(loc.starts_with(&expected), "{loc}");
    assert_eq!(
        created.metadata.property("write.parquet.compression-codec"),
        Some("zstd")
    );
    assert!(matches!(
        c.create_table(&t, TableCreation::new("", schema())).await,
        Err(iceberg_append::Error::TableAlreadyExists { .. })
    ));
    assert_eq!(c.load_table(&t).await.unwrap(), created);
    assert_eq!(
        c.list_tables(&ns("db")).await.unwrap(),
        std::slice::from_ref(&t)
    );
    let err = c.drop_namespace(&ns("db")).await.unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");

    let moved = TableIdent::parse("db.moved").unwrap();
    c.rename_table(&t, &moved).await.unwrap();
    assert!(!c.table_exists(&t).await.unwrap());
    assert!(c.rename_table(&t, &moved).await.unwrap_err().is_not_found());
    let again = TableIdent::parse("db.again").unwrap();
    c.register_table(&again, &loc).await.unwrap();
    assert!(matches!(
        c.rename_table(&again, &moved).await,
        Err(iceberg_append::Error::TableAlreadyExists { .. })
    ));
    c.drop_table(&again, false).await.unwrap();
    assert!(c.io().exists(&loc).await.unwrap());
    c.drop_table(&moved, true).await.unwrap();
    assert!(!c.io().exists(&loc).await.unwrap());
    assert!(c.list_tables(&ns("db")).await.unwrap().is_empty());
}

#[tokio::test]
async fn commit_swaps_only_from_the_current_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    c.create_namespace(&ns("db"), BTreeMap::new())
        .await
        .unwrap();
    let t = TableIdent::parse("db.t").unwrap();
    let base = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 9);
    let done = commit_append(&c, &t, vec![file(&base, "a", 3)], BTreeMap::new(), &env)
        .await
        .unwrap();
    assert!(done.metadata_location.contains("/metadata/00001-"));
    // A stale base is a conflict, and the file it wrote is gone.
    let stale = base.metadata_location.clone().unwrap();
    let before = c
        .io()
        .list(&format!("{}/metadata", base.metadata.location))
        .await
        .unwrap();
    let err = c.commit(&t, &stale, &base.metadata).await.unwrap_err();
    assert!(err.is_commit_conflict(), "{err}");
    let after = c
        .io()
        .list(&format!("{}/metadata", base.metadata.location))
        .await
        .unwrap();
    assert_eq!(before, after);
    // commit_append retries onto the new base.
    let second = commit_append(&c, &t, vec![file(&base, "b", 4)], BTreeMap::new(), &env)
        .await
        .unwrap();
    let table = c.load_table(&t).await.unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(second.snapshot_id));
    assert_eq!(table.metadata.snapshots.len(), 2);
    assert_eq!(table.metadata.metadata_log.len(), 2);
    let prev = fetch(
        &c.pool,
        "SELECT previous_metadata_location FROM iceberg_tables",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(prev[0][0].as_deref(), Some(done.metadata_location.as_str()));
}

/// An error that comes back after the row was written (here a trigger that fails after the
/// insert, which SQLite's `RAISE(FAIL)` leaves in place) is reconciled by reading the row: the
/// table exists and its metadata file was kept, never a row pointing at a deleted file.
#[tokio::test]
async fn create_reconciles_an_error_after_the_row_landed() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    c.create_namespace(&ns("db"), BTreeMap::new())
        .await
        .unwrap();
    super::pool::execute(
        &c.pool,
        "CREATE TRIGGER fail_after_insert AFTER INSERT ON iceberg_tables \
         BEGIN SELECT RAISE(FAIL, 'injected: the answer is lost'); END",
        &[],
    )
    .await
    .unwrap();
    let ident = TableIdent::new(ns("db"), "t");
    let created = c
        .create_table(&ident, TableCreation::new("", schema()))
        .await
        .unwrap();
    let location = created.metadata_location.clone().unwrap();
    assert!(
        c.io().exists(&location).await.unwrap(),
        "the metadata file stays"
    );
    let loaded = c.load_table(&ident).await.unwrap();
    assert_eq!(loaded.metadata.table_uuid, created.metadata.table_uuid);
}

/// The same for a commit: a swap whose change stays although the statement failed is found
/// by reading the row, and the append succeeds with every file it lists in place.
#[tokio::test]
async fn commit_reconciles_an_error_after_the_swap_landed() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    c.create_namespace(&ns("db"), BTreeMap::new())
        .await
        .unwrap();
    let ident = TableIdent::new(ns("db"), "t");
    let table = c
        .create_table(&ident, TableCreation::new("", schema()))
        .await
        .unwrap();
    super::pool::execute(
        &c.pool,
        "CREATE TRIGGER fail_after_update AFTER UPDATE ON iceberg_tables \
         BEGIN SELECT RAISE(FAIL, 'injected: the answer is lost'); END",
        &[],
    )
    .await
    .unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 8);
    let done = commit_append(
        &c,
        &ident,
        vec![file(&table, "a", 3)],
        BTreeMap::new(),
        &env,
    )
    .await
    .unwrap();
    let loaded = c.load_table(&ident).await.unwrap();
    assert_eq!(loaded.metadata.current_snapshot_id, Some(done.snapshot_id));
    let list = loaded
        .metadata
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone();
    for m in iceberg_append::read_manifest_list(c.io(), list.as_deref())
        .await
        .unwrap()
    {
        assert!(c.io().exists(&m.manifest_path).await.unwrap());
    }
}
