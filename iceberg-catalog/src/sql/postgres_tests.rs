//! The SQL catalog on PostgreSQL, with errors injected by triggers on `iceberg_tables`: a
//! serialization failure is retried, an error that leaves the outcome unknown is reconciled by
//! reading the row, and neither deletes a file the table may reach.
//!
//! Needs a server: `ICEBERG_TEST_POSTGRES_URL` (`.ci/run` starts one and sets it). Each test
//! uses a catalog name of its own and a trigger that fires only for it, so runs sharing one
//! database never meet.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{
    Catalog, DeterministicEnvironment, TableCreation, TableIdent, commit_append, read_manifest_list,
};
use iceberg_spec::properties::{COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS};
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};

use super::pool::execute;
use super::*;

/// The server's URL, or `None` after saying loudly that the test is skipped (a panic when
/// `ICEBERG_TEST_REQUIRE_POSTGRES=1`, as in CI).
fn postgres_url(test: &str) -> Option<String> {
    if let Ok(url) = std::env::var("ICEBERG_TEST_POSTGRES_URL") {
        return Some(url);
    }
    if std::env::var_os("ICEBERG_TEST_REQUIRE_POSTGRES").is_some_and(|v| v == "1") {
        panic!("ICEBERG_TEST_POSTGRES_URL is not set but PostgreSQL is required");
    }
    eprintln!(
        "\n*** SKIPPED {test}: ICEBERG_TEST_POSTGRES_URL is not set. Run .ci/run (or \
         .ci/postgres.sh) to start a server. ***\n"
    );
    None
}

/// A catalog of its own name on the server, with namespace `db`, tables in `dir`.
async fn catalog(url: &str, dir: &Path) -> SqlCatalog {
    let tag = dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let config = SqlCatalogConfig::new(
        format!("faults_{tag}"),
        url,
        format!("file://{}", dir.display()),
    );
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 5));
    let c = SqlCatalog::connect_with_env(config, env).await.unwrap();
    c.create_namespace(&NamespaceIdent::parse("db").unwrap(), BTreeMap::new())
        .await
        .unwrap();
    c
}

/// Makes the next `times` statements of `event` (`UPDATE` or `INSERT`) on this catalog's rows
/// fail with SQLSTATE `code` before they change anything. A sequence counts them: its
/// `nextval` is not rolled back with the failed statement. Returns the trigger's name.
async fn inject(c: &SqlCatalog, event: &str, code: &str, times: u32) -> String {
    let name = format!("{}_{}", c.name, event.to_lowercase());
    for sql in [
        format!("CREATE SEQUENCE {name}_seq"),
        format!(
            "CREATE FUNCTION {name}_fn() RETURNS trigger AS $$ BEGIN \
             IF NEW.catalog_name = '{catalog}' THEN \
               IF nextval('{name}_seq') <= {times} THEN \
                 RAISE EXCEPTION 'injected by {name}' USING ERRCODE = '{code}'; \
               END IF; \
             END IF; \
             RETURN NEW; END $$ LANGUAGE plpgsql",
            catalog = c.name
        ),
        format!(
            "CREATE TRIGGER {name} BEFORE {event} ON iceberg_tables \
             FOR EACH ROW EXECUTE FUNCTION {name}_fn()"
        ),
    ] {
        execute(&c.pool, &sql, &[]).await.unwrap();
    }
    name
}

/// Drops what [`inject`] made.
async fn remove(c: &SqlCatalog, name: &str) {
    for sql in [
        format!("DROP TRIGGER {name} ON iceberg_tables"),
        format!("DROP FUNCTION {name}_fn()"),
        format!("DROP SEQUENCE {name}_seq"),
    ] {
        execute(&c.pool, &sql, &[]).await.unwrap();
    }
}

fn schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap()
}

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

/// A table whose commits retry quickly.
async fn create(c: &SqlCatalog) -> iceberg_append::Table {
    let mut creation = TableCreation::new("", schema());
    creation.properties = [
        (COMMIT_MIN_RETRY_WAIT_MS, "1"),
        (COMMIT_MAX_RETRY_WAIT_MS, "5"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    c.create_table(&ident(), creation).await.unwrap()
}

/// Appends one data file; returns the outcome.
async fn append(c: &SqlCatalog, table: &iceberg_append::Table) -> iceberg_append::CommitOutcome {
    let file = DataFile {
        file_path: format!("{}/data/a.parquet", table.metadata.location),
        record_count: 3,
        file_size_in_bytes: 100,
        ..Default::default()
    };
    let env = DeterministicEnvironment::new(1_700_000_000_000, 2, 8);
    commit_append(c, &ident(), vec![file], BTreeMap::new(), &env)
        .await
        .unwrap()
}

/// The table's current snapshot is `snapshot_id`, the only one, and every manifest it lists
/// and the metadata file exist.
async fn assert_landed_whole(c: &SqlCatalog, snapshot_id: i64) {
    let table = c.load_table(&ident()).await.unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(snapshot_id));
    assert_eq!(table.metadata.snapshots.len(), 1);
    assert!(
        c.io()
            .exists(table.metadata_location.as_deref().unwrap())
            .await
            .unwrap()
    );
    let list = table
        .metadata
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone();
    let manifests = read_manifest_list(c.io(), list.as_deref()).await.unwrap();
    assert!(!manifests.is_empty());
    for m in manifests {
        assert!(c.io().exists(&m.manifest_path).await.unwrap());
    }
}

/// Two serialization failures (SQLSTATE 40001) on the swap: both are retried with the commit's
/// backoff, and the third attempt lands.
#[tokio::test]
async fn postgres_serialization_failures_are_retried() {
    let Some(url) = postgres_url("postgres_serialization_failures_are_retried") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(&url, dir.path()).await;
    let table = create(&c).await;
    let trigger = inject(&c, "UPDATE", "40001", 2).await;
    let done = append(&c, &table).await;
    remove(&c, &trigger).await;
    assert_eq!(done.attempts, 3, "two refusals, then the swap");
    assert_landed_whole(&c, done.snapshot_id).await;
}

/// A deadlock (40P01) is a refusal worth another attempt, as a serialization failure is.
#[tokio::test]
async fn postgres_deadlock_is_retried() {
    let Some(url) = postgres_url("postgres_deadlock_is_retried") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(&url, dir.path()).await;
    let table = create(&c).await;
    let trigger = inject(&c, "UPDATE", "40P01", 1).await;
    let done = append(&c, &table).await;
    remove(&c, &trigger).await;
    assert_eq!(done.attempts, 2);
    assert_landed_whole(&c, done.snapshot_id).await;
}

/// An administrator shutdown (57P01) mid-swap leaves the outcome unknown: the commit reads
/// the row back, finds its snapshot absent, keeps every file and tries again.
#[tokio::test]
async fn postgres_unknown_outcome_is_reconciled_then_retried() {
    let Some(url) = postgres_url("postgres_unknown_outcome_is_reconciled_then_retried") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(&url, dir.path()).await;
    let table = create(&c).await;
    let trigger = inject(&c, "UPDATE", "57P01", 1).await;
    let done = append(&c, &table).await;
    remove(&c, &trigger).await;
    assert_eq!(done.attempts, 2);
    assert_landed_whole(&c, done.snapshot_id).await;
}

/// A refused insert (a serialization failure) fails `create_table` with no row, and its
/// metadata file is deleted, as the row proves it was never reachable; the next create works.
#[tokio::test]
async fn postgres_refused_create_leaves_no_table() {
    let Some(url) = postgres_url("postgres_refused_create_leaves_no_table") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(&url, dir.path()).await;
    let trigger = inject(&c, "INSERT", "40001", 1).await;
    let refused = c
        .create_table(&ident(), TableCreation::new("", schema()))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(!c.table_exists(&ident()).await.unwrap());
    let metadata = dir.path().join("db/t/metadata");
    let left = std::fs::read_dir(&metadata).map_or(0, |d| d.count());
    assert_eq!(left, 0, "no metadata file stays behind a refused create");
    let created = create(&c).await;
    remove(&c, &trigger).await;
    let loaded = c.load_table(&ident()).await.unwrap();
    assert_eq!(loaded.metadata.table_uuid, created.metadata.table_uuid);
}
