//! The REST catalog against a real server (rustberg): faults between client and server
//! (lost answers, 503s, 409s) land each append exactly once and delete nothing a snapshot
//! needs; bad input is a typed error; PyIceberg's `RestCatalog` reads what we commit and we
//! append to what it created. The conformance suite and the many-process test run REST too
//! (`catalog_conformance`, `catalog_concurrency`).

use std::collections::BTreeSet;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, Error, SystemEnvironment, TableCreation, TableIdent};
use iceberg_catalog::{RestCatalog, RestCatalogConfig};
use iceberg_spec::properties::{
    COMMIT_MIN_RETRY_WAIT_MS, METADATA_DELETE_AFTER_COMMIT_ENABLED, METADATA_PREVIOUS_VERSIONS_MAX,
};

use crate::catalog_common::{append_ids, schema, try_append_ids, write_ids};
use crate::catalog_kills::check_table;
use crate::external;
use iceberg_catalog::testing::RestServer;
use iceberg_catalog::testing::{Fault, FaultProxy};

/// A server on a fresh `file://` warehouse (`None`: skipped).
fn server(test: &str) -> Option<(tempfile::TempDir, RestServer)> {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let server = RestServer::start(test, &wh, None)?;
    Some((dir, server))
}

/// Namespace `db`, created when missing.
async fn db(catalog: &dyn Catalog) -> NamespaceIdent {
    let db = NamespaceIdent::parse("db").unwrap();
    if !catalog.namespace_exists(&db).await.unwrap() {
        catalog
            .create_namespace(&db, Default::default())
            .await
            .unwrap();
    }
    db
}

async fn create(catalog: &dyn Catalog, name: &str) -> TableIdent {
    let ident = TableIdent::new(db(catalog).await, name);
    let mut creation = TableCreation::new("", schema());
    creation
        .properties
        .insert(COMMIT_MIN_RETRY_WAIT_MS.into(), "10".into());
    catalog.create_table(&ident, creation).await.unwrap();
    ident
}

/// The commit endpoint of `table` in `db`, as the proxy matches it.
fn commit_path(table: &str) -> String {
    format!("/namespaces/db/tables/{table}")
}

#[tokio::test]
async fn rest_faults_each_land_the_append_once() {
    let Some((_dir, server)) = server("rest_faults_each_land_the_append_once") else {
        return;
    };
    let proxy = FaultProxy::start(&server.uri);
    let catalog = RestCatalog::connect(RestCatalogConfig::new(&proxy.uri))
        .await
        .unwrap();
    assert!(
        catalog.is_idempotent(),
        "rustberg advertises Idempotency-Key"
    );
    // Once: the client resends with the same Idempotency-Key (or, for 409, the retry loop
    // plans again). Three times: more than the client resends, so the append's loop sees an
    // unknown outcome, reloads, and finds its snapshot (or not, and tries again).
    let cases = [
        ("dropped_once", Fault::DropAnswer, 1),
        ("dropped_thrice", Fault::DropAnswer, 3),
        ("unavailable_once", Fault::Unavailable, 1),
        ("unavailable_thrice", Fault::Unavailable, 3),
        ("conflict_once", Fault::Conflict, 1),
        // The server ran nothing: sent again after `Retry-After`, as Java's client does.
        ("throttled_twice", Fault::TooManyRequests, 2),
    ];
    for (name, fault, count) in cases {
        let ident = create(&catalog, name).await;
        append_ids(&catalog, &ident, 0..3, &SystemEnvironment).await;
        proxy.inject("POST", &commit_path(name), fault, count);
        let done = try_append_ids(&catalog, &ident, 3..6, &SystemEnvironment)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}\n{:#?}", proxy.log()));
        assert_eq!(proxy.pending(), 0, "{name}: the fault was not hit");
        // A fresh client (no remembered base) sees one new snapshot, with every row once
        // and every file it reaches still there.
        let fresh = server.catalog(&[]).await;
        let table = fresh.load_table(&ident).await.unwrap();
        assert_eq!(
            table.metadata.snapshots.len(),
            2,
            "{name}: {:#?}",
            proxy.log()
        );
        assert_eq!(table.metadata.current_snapshot_id, Some(done.snapshot_id));
        let held = check_table(&table, fresh.io()).await;
        assert_eq!(held, (0..6).collect::<BTreeSet<i64>>(), "{name}");
        // And the next append goes on from it.
        append_ids(&catalog, &ident, 6..9, &SystemEnvironment).await;
        let after = fresh.load_table(&ident).await.unwrap();
        assert_eq!(after.metadata.snapshots.len(), 3, "{name}");
        assert_eq!(check_table(&after, fresh.io()).await.len(), 9, "{name}");
    }
}

/// A commit answered with a redirect is not followed (a redirected POST becomes a GET,
/// whose 200 is the table as it was): the append fails and the table is as it was.
#[tokio::test]
async fn rest_a_redirected_commit_is_no_success() {
    let Some((_dir, server)) = server("rest_a_redirected_commit_is_no_success") else {
        return;
    };
    let proxy = FaultProxy::start(&server.uri);
    let catalog = RestCatalog::connect(RestCatalogConfig::new(&proxy.uri))
        .await
        .unwrap();
    let ident = create(&catalog, "redirected").await;
    append_ids(&catalog, &ident, 0..3, &SystemEnvironment).await;
    proxy.inject("POST", &commit_path("redirected"), Fault::Redirect, 1);
    let result = try_append_ids(&catalog, &ident, 3..6, &SystemEnvironment).await;
    assert_eq!(proxy.pending(), 0, "the redirect was not hit");
    let fresh = server.catalog(&[]).await;
    let table = fresh.load_table(&ident).await.unwrap();
    match result {
        // Retried past the redirect: then the table holds it.
        Ok(done) => {
            assert!(table.metadata.snapshot_by_id(done.snapshot_id).is_some());
            assert_eq!(check_table(&table, fresh.io()).await.len(), 6);
        }
        Err(e) => {
            assert_eq!(table.metadata.snapshots.len(), 1, "{e}");
            assert_eq!(check_table(&table, fresh.io()).await.len(), 3, "{e}");
        }
    }
}

/// A client that never loaded the base of a commit (a committer given the plan, or one whose
/// remembered bases were evicted) gets it from the server: the commit lands on the current
/// base, and a stale base is a conflict that names where the table is now.
#[tokio::test]
async fn rest_a_commit_on_a_base_this_client_never_loaded() {
    let Some((_dir, server)) = server("rest_a_commit_on_a_base_this_client_never_loaded") else {
        return;
    };
    let planner = server.catalog(&[]).await;
    let ident = create(&planner, "unseen").await;
    append_ids(&planner, &ident, 0..3, &SystemEnvironment).await;
    let base = planner.load_table(&ident).await.unwrap();
    let base_location = base.metadata_location.clone().unwrap();
    let plan = |ids: std::ops::Range<i64>| {
        let (planner, base) = (&planner, &base);
        async move {
            let files = write_ids(planner, base, ids).await.unwrap();
            iceberg_append::prepare_append(
                &planner.table_io(base),
                base,
                files,
                Default::default(),
                &SystemEnvironment,
            )
            .await
            .unwrap()
        }
    };
    let first = plan(3..6).await;
    let committer = server.catalog(&[]).await;
    let landed = committer
        .commit(&ident, &base_location, &first.metadata)
        .await
        .unwrap();
    // Planned on the same base, now stale: a conflict naming the new pointer.
    let second = plan(6..9).await;
    let fresh = server.catalog(&[]).await;
    let err = fresh
        .commit(&ident, &base_location, &second.metadata)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::CommitConflict { found: Some(f), .. } if *f == landed),
        "{err}"
    );
    let table = fresh.load_table(&ident).await.unwrap();
    assert_eq!(table.metadata.current_snapshot_id, Some(first.snapshot_id));
    assert_eq!(check_table(&table, fresh.io()).await.len(), 6);
}

/// A server whose config moves the client to another `uri` (Nessie answers a branch URL's
/// config with its catalog root and the branch as `prefix`) is followed, as Java's client
/// does: every later request goes there.
#[tokio::test]
async fn rest_a_config_override_of_the_uri_is_followed() {
    let Some((_dir, server)) = server("rest_a_config_override_of_the_uri_is_followed") else {
        return;
    };
    let proxy = FaultProxy::start(&server.uri);
    let moved =
        serde_json::json!({"defaults": {}, "overrides": {"uri": format!("{}/", server.uri)}});
    let moved: &'static str = Box::leak(moved.to_string().into_boxed_str());
    proxy.inject("GET", "/v1/config", Fault::Json(moved), 1);
    let catalog = RestCatalog::connect(RestCatalogConfig::new(format!("{}/branch", proxy.uri)))
        .await
        .unwrap();
    assert_eq!(catalog.uri(), server.uri.trim_end_matches('/'));
    let ident = create(&catalog, "moved").await;
    append_ids(&catalog, &ident, 0..3, &SystemEnvironment).await;
    assert_eq!(
        proxy.log().len(),
        1,
        "only the config went to the first uri: {:#?}",
        proxy.log()
    );
    let table = server.catalog(&[]).await.load_table(&ident).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
}

#[tokio::test]
async fn rest_bad_input_is_a_typed_error_that_says_what_to_fix() {
    let Some((_dir, server)) = server("rest_bad_input_is_a_typed_error_that_says_what_to_fix")
    else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    let ident = create(&catalog, "events").await;

    // Unknown table and namespace: the trait's not-found errors, naming them.
    let missing = catalog
        .load_table(&TableIdent::parse("db.nope").unwrap())
        .await
        .unwrap_err();
    assert!(matches!(&missing, Error::NoSuchTable { table } if table == "db.nope"));
    let nowhere = TableIdent::parse("nowhere.t").unwrap();
    let e = try_append_ids(&catalog, &nowhere, 0..1, &SystemEnvironment)
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    let e = catalog
        .create_table(&nowhere, TableCreation::new("", schema()))
        .await
        .unwrap_err();
    // The spec's answer is NoSuchNamespaceException; rustberg 0.3 says NoSuchTableException.
    // Either way a not-found naming it.
    assert!(e.is_not_found() && e.to_string().contains("nowhere"), "{e}");

    // Nothing listening: the connect error names the server.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let e = RestCatalog::connect(RestCatalogConfig::new(&dead))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("GET /v1/config"), "{e}");
    assert!(
        std::error::Error::source(&e).is_some(),
        "the HTTP error is kept as the source"
    );

    // A credential the token endpoint refuses: a typed error at connect, naming the endpoint.
    let e = RestCatalog::connect(server.config(&[("credential", "client:wrong-secret")]))
        .await
        .unwrap_err();
    match &e {
        iceberg_catalog::Error::RestResponse {
            operation, status, ..
        } => {
            assert!(operation.contains("/v1/oauth/tokens"), "{e}");
            assert!(*status >= 400, "{e}");
        }
        other => panic!("expected a refused token request, got {other:?}"),
    }

    // A header property HTTP does not allow is named.
    let e = RestCatalog::connect(server.config(&[("header.bad name", "v")]))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("header.bad name"), "{e}");

    // A server that does not offer the commit endpoint: refused before sending, the table
    // as it was, and nothing of the append left in its metadata folder.
    let proxy = FaultProxy::start(&server.uri);
    proxy.inject(
        "GET",
        "/v1/config",
        Fault::Json(
            r#"{"defaults": {}, "overrides": {}, "endpoints": [
                "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}"#,
        ),
        1,
    );
    let read_only = RestCatalog::connect(RestCatalogConfig::new(&proxy.uri))
        .await
        .unwrap();
    let before = catalog.load_table(&ident).await.unwrap();
    let metadata_dir = format!("{}/metadata", before.metadata.location);
    let files_before = catalog.io().list(&metadata_dir).await.unwrap().len();
    let e = try_append_ids(&read_only, &ident, 0..3, &SystemEnvironment)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");
    assert!(e.to_string().contains("not offered"), "{e}");
    assert!(e.to_string().contains("tables/{table}"), "{e}");
    let after = catalog.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata_location, before.metadata_location);
    assert_eq!(
        catalog.io().list(&metadata_dir).await.unwrap().len(),
        files_before,
        "the refused append left manifests behind"
    );
}

/// A proxy to `server` that answers its first token request (rustberg has no token
/// endpoint) with a token that expires in 2 s.
fn token_proxy(server: &RestServer) -> FaultProxy {
    let proxy = FaultProxy::start(&server.uri);
    proxy.inject(
        "POST",
        "/v1/oauth/tokens",
        Fault::Json(r#"{"access_token": "tok-1", "token_type": "bearer", "expires_in": 2}"#),
        1,
    );
    proxy
}

#[tokio::test]
async fn rest_oauth2_client_credentials_are_exchanged_and_refreshed_before_expiry() {
    let test = "rest_oauth2_client_credentials_are_exchanged_and_refreshed_before_expiry";
    let Some((_dir, server)) = server(test) else {
        return;
    };
    // The token endpoint throttles the first request: asked again after `Retry-After`.
    let proxy = FaultProxy::start(&server.uri);
    proxy.inject("POST", "/v1/oauth/tokens", Fault::TooManyRequests, 1);
    proxy.inject(
        "POST",
        "/v1/oauth/tokens",
        Fault::Json(r#"{"access_token": "tok-1", "token_type": "bearer", "expires_in": 2}"#),
        1,
    );
    proxy.inject(
        "POST",
        "/v1/oauth/tokens",
        Fault::Json(r#"{"access_token": "tok-2", "token_type": "bearer", "expires_in": 3600}"#),
        1,
    );
    let config = RestCatalogConfig::new(&proxy.uri)
        .with_property("credential", "client-id:client-secret")
        .with_property("scope", "PRINCIPAL_ROLE:ALL");
    let catalog = RestCatalog::connect(config).await.unwrap();
    let ident = create(&catalog, "authed").await;
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    append_ids(&catalog, &ident, 0..2, &SystemEnvironment).await;
    let log = proxy.log();
    let tokens: Vec<&String> = log.iter().filter(|l| l.contains("/oauth/tokens")).collect();
    assert_eq!(
        tokens.len(),
        3,
        "a throttled request, one token, then one refresh: {log:#?}"
    );
    assert!(tokens[0].contains("TooManyRequests"), "{log:#?}");
    let calls: Vec<&String> = log
        .iter()
        .filter(|l| !l.contains("/oauth/tokens"))
        .collect();
    assert!(calls.iter().all(|l| l.contains("[Bearer tok-")), "{log:#?}");
    assert!(
        calls.first().unwrap().contains("[Bearer tok-1]"),
        "{log:#?}"
    );
    assert!(calls.last().unwrap().contains("[Bearer tok-2]"), "{log:#?}");
}

/// A commit whose token cannot be refreshed never went out: a definite failure (its files
/// may be deleted), not an unknown outcome that keeps them.
#[tokio::test]
async fn rest_a_commit_without_a_token_is_not_an_unknown_outcome() {
    let test = "rest_a_commit_without_a_token_is_not_an_unknown_outcome";
    let Some((_dir, server)) = server(test) else {
        return;
    };
    let proxy = token_proxy(&server);
    let config = RestCatalogConfig::new(&proxy.uri).with_property("credential", "id:secret");
    let catalog = RestCatalog::connect(config).await.unwrap();
    let ident = create(&catalog, "tokenless").await;
    let base = catalog.load_table(&ident).await.unwrap();
    let files = write_ids(&catalog, &base, 0..3).await.unwrap();
    let planned = iceberg_append::prepare_append(
        &catalog.table_io(&base),
        &base,
        files,
        Default::default(),
        &SystemEnvironment,
    )
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    proxy.inject("POST", "/v1/oauth/tokens", Fault::Unavailable, 100);
    let err = catalog
        .commit(
            &ident,
            base.metadata_location.as_deref().unwrap(),
            &planned.metadata,
        )
        .await
        .unwrap_err();
    assert!(!err.is_commit_state_unknown(), "{err}");
    assert!(
        !proxy
            .log()
            .iter()
            .any(|l| l.starts_with("POST") && l.contains("/tables/tokenless")),
        "the commit went out: {:#?}",
        proxy.log()
    );
}

#[tokio::test]
async fn rest_vended_credentials_configure_the_tables_io() {
    let test = "rest_vended_credentials_configure_the_tables_io";
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("vended");
    let s3 = moto.s3_properties();
    let Some(server) = RestServer::start(test, "s3://vended/wh", Some(s3.clone())) else {
        return;
    };
    // A client that has the S3 settings itself makes the table.
    let admin = server.catalog(&[]).await;
    let ident = create(&admin, "t").await;
    append_ids(&admin, &ident, 0..2, &SystemEnvironment).await;
    let table = admin.load_table(&ident).await.unwrap();
    let location = table.metadata_location.clone().unwrap();
    let metadata: serde_json::Value =
        serde_json::from_slice(&admin.io().read(&location).await.unwrap()).unwrap();
    // The load answer as a vending server gives it: the settings in `config`, the
    // credentials in `storage-credentials` (the longest matching prefix wins).
    let mut config: serde_json::Map<String, serde_json::Value> = s3
        .iter()
        .filter(|(k, _)| !k.contains("key"))
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    config.insert("s3.access-key-id".into(), "wrong".into());
    let vended = serde_json::json!({
        "metadata-location": location,
        "metadata": metadata,
        "config": config,
        "storage-credentials": [
            {"prefix": "s3://vended/", "config": {"s3.access-key-id": "wrong"}},
            {"prefix": "s3://vended/wh/db/", "config": {
                "s3.access-key-id": s3["s3.access-key-id"],
                "s3.secret-access-key": s3["s3.secret-access-key"]}},
        ],
    });
    let vended: &'static str = Box::leak(vended.to_string().into_boxed_str());
    let proxy = FaultProxy::start(&server.uri);
    proxy.inject("GET", &commit_path("t"), Fault::Json(vended), 1);
    // A client with no S3 settings of its own: only the vended ones reach the bucket.
    let bare = RestCatalog::connect(RestCatalogConfig::new(&proxy.uri))
        .await
        .unwrap();
    assert!(
        !bare.properties().contains_key("s3.endpoint"),
        "the server's config gives S3 settings itself: {:?}",
        bare.properties().keys().collect::<Vec<_>>()
    );
    let loaded = bare.load_table(&ident).await.unwrap();
    let io = bare.table_io(&loaded);
    assert!(
        io.exists(&location).await.unwrap(),
        "the vended IO reaches the table"
    );
    let done = try_append_ids(&bare, &ident, 2..4, &SystemEnvironment)
        .await
        .unwrap();
    let after = admin.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata.current_snapshot_id, Some(done.snapshot_id));
    assert_eq!(
        check_table(&after, admin.io()).await,
        (0..4).collect::<BTreeSet<i64>>()
    );
}

/// With `write.metadata.delete-after-commit.enabled`, the server keeps the metadata log and
/// deletes what leaves it; the committer deletes nothing of it. (rustberg trims the log as
/// our plan does, so this guards the outcome; `a_catalog_that_writes_its_metadata_...` below
/// shows the committer leaves the files alone.)
#[tokio::test]
async fn rest_the_server_keeps_the_metadata_log_it_writes() {
    let Some((_dir, server)) = server("rest_the_server_keeps_the_metadata_log_it_writes") else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, Default::default())
        .await
        .unwrap();
    let ident = TableIdent::new(db, "logged");
    let mut creation = TableCreation::new("", schema());
    for (k, v) in [
        (METADATA_DELETE_AFTER_COMMIT_ENABLED, "true"),
        (METADATA_PREVIOUS_VERSIONS_MAX, "1"),
    ] {
        creation.properties.insert(k.into(), v.into());
    }
    catalog.create_table(&ident, creation).await.unwrap();
    for i in 0..4 {
        append_ids(&catalog, &ident, i * 2..i * 2 + 2, &SystemEnvironment).await;
        let table = catalog.load_table(&ident).await.unwrap();
        for entry in &table.metadata.metadata_log {
            assert!(
                catalog.io().exists(&entry.metadata_file).await.unwrap(),
                "append {i}: {} is in the server's log but was deleted",
                entry.metadata_file
            );
        }
        assert_eq!(
            check_table(&table, catalog.io()).await.len() as i64,
            i * 2 + 2
        );
    }
}

/// An in-memory catalog that says it writes its own metadata files, as a REST server does.
#[derive(Debug)]
struct WritesOwnMetadata(iceberg_append::InMemoryCatalog);

#[async_trait::async_trait]
impl Catalog for WritesOwnMetadata {
    async fn load_table(
        &self,
        ident: &TableIdent,
    ) -> iceberg_append::Result<iceberg_append::Table> {
        self.0.load_table(ident).await
    }

    async fn create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> iceberg_append::Result<iceberg_append::Table> {
        self.0.create_table(ident, creation).await
    }

    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &iceberg_spec::TableMetadata,
    ) -> iceberg_append::Result<String> {
        self.0.commit(ident, base_location, new_metadata).await
    }

    fn io(&self) -> &iceberg_io::FileIo {
        self.0.io()
    }

    fn writes_metadata_files(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_catalog_that_writes_its_metadata_keeps_it_from_the_committers_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let io = iceberg_io::FileIo::from_location(&wh, &Default::default()).unwrap();
    let env = std::sync::Arc::new(SystemEnvironment);
    for own in [false, true] {
        let inner = iceberg_append::InMemoryCatalog::new(io.clone(), env.clone());
        let catalog: Box<dyn Catalog> = if own {
            Box::new(WritesOwnMetadata(inner))
        } else {
            Box::new(inner)
        };
        let ident = TableIdent::parse(&format!("db.own_{own}")).unwrap();
        let mut creation = TableCreation::new(format!("{wh}/db/own_{own}"), schema());
        for (k, v) in [
            (METADATA_DELETE_AFTER_COMMIT_ENABLED, "true"),
            (METADATA_PREVIOUS_VERSIONS_MAX, "1"),
        ] {
            creation.properties.insert(k.into(), v.into());
        }
        let created = catalog.create_table(&ident, creation).await.unwrap();
        for i in 0..3 {
            append_ids(
                catalog.as_ref(),
                &ident,
                i * 2..i * 2 + 2,
                &SystemEnvironment,
            )
            .await;
        }
        let first = created.metadata_location.unwrap();
        // The committer deletes the expired first metadata file only where it wrote the log.
        assert_eq!(io.exists(&first).await.unwrap(), own, "own={own}");
    }
}

/// Opens the REST catalog at `argv[1]` as PyIceberg users would.
const PY_OPEN: &str = r#"
import json, sys
from pyiceberg.catalog.rest import RestCatalog
cat = RestCatalog("rest", uri=sys.argv[1])
"#;

const PY_SCAN: &str = r#"
t = cat.load_table("db.ours")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
print(json.dumps({"ids": [r["id"] for r in rows], "snapshots": len(t.snapshots()),
                  "format": t.metadata.format_version,
                  "next_row_id": getattr(t.metadata, "next_row_id", None)}))
"#;

const PY_CREATE: &str = r#"
import pyarrow as pa
arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
t = cat.create_table("db.theirs", schema=arrow)
t.append(pa.table({"id": [100, 101], "name": ["a", "b"]}, schema=arrow))
print(json.dumps({"snapshots": len(t.snapshots())}))
"#;

const PY_SCAN_THEIRS: &str = r#"
t = cat.load_table("db.theirs")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
print(json.dumps({"ids": [r["id"] for r in rows], "snapshots": len(t.snapshots())}))
"#;

#[tokio::test]
async fn rest_pyiceberg_reads_ours_and_we_append_to_theirs() {
    let test = "rest_pyiceberg_reads_ours_and_we_append_to_theirs";
    let Some(python) = external::python(test) else {
        return;
    };
    let Some((_dir, server)) = server(test) else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    let py = |body: &str| external::run_json(&python, &format!("{PY_OPEN}{body}"), &[&server.uri]);

    // v3, so that PyIceberg also reads the row lineage the server kept from our commits.
    let ours = TableIdent::new(db(&catalog).await, "ours");
    let mut creation = TableCreation::new("", schema());
    creation.format_version = iceberg_spec::FormatVersion::V3;
    catalog.create_table(&ours, creation).await.unwrap();
    append_ids(&catalog, &ours, 0..3, &SystemEnvironment).await;
    append_ids(&catalog, &ours, 3..5, &SystemEnvironment).await;
    let seen = py(PY_SCAN);
    assert_eq!(seen["ids"], serde_json::json!([0, 1, 2, 3, 4]), "{seen}");
    assert_eq!(seen["snapshots"], 2, "{seen}");
    assert_eq!(seen["format"], 3, "{seen}");
    assert_eq!(seen["next_row_id"], 5, "{seen}");

    let made = py(PY_CREATE);
    assert_eq!(made["snapshots"], 1, "{made}");
    let theirs = TableIdent::parse("db.theirs").unwrap();
    append_ids(&catalog, &theirs, 0..2, &SystemEnvironment).await;
    let seen = py(PY_SCAN_THEIRS);
    assert_eq!(seen["ids"], serde_json::json!([0, 1, 100, 101]), "{seen}");
    assert_eq!(seen["snapshots"], 2, "{seen}");
}

/// DuckDB's iceberg extension (with httpfs, from their PyPI wheels) attached to the server.
const DUCKDB_SCAN: &str = r#"
import json, sys
from pathlib import Path
import duckdb, duckdb_extension_avro, duckdb_extension_httpfs, duckdb_extension_iceberg
uri, warehouse = sys.argv[1], sys.argv[2]
c = duckdb.connect()
for mod in (duckdb_extension_avro, duckdb_extension_httpfs, duckdb_extension_iceberg):
    c.execute(f"LOAD '{next(Path(mod.__file__).parent.glob('extensions/*/*.duckdb_extension'))}'")
c.execute(f"ATTACH '{warehouse}' AS lake (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')")
ids = [r[0] for r in c.execute("SELECT id FROM lake.db.staged ORDER BY id").fetchall()]
names = [r[0] for r in c.execute("SELECT name FROM lake.db.staged ORDER BY id").fetchall()]
print(json.dumps({"ids": ids, "names": names}))
"#;

/// A table created with its first append in one commit (staged create, `assert-create`),
/// then appended to, read by DuckDB through the REST server.
#[tokio::test]
async fn rest_duckdb_reads_a_staged_create_and_an_append() {
    let test = "rest_duckdb_reads_a_staged_create_and_an_append";
    let Some(python) = external::python(test) else {
        return;
    };
    let Some((dir, server)) = server(test) else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    let ident = TableIdent::new(db(&catalog).await, "staged");
    let env = SystemEnvironment;
    let staged =
        iceberg_append::stage_create(&catalog, &ident, TableCreation::new("", schema()), &env)
            .await
            .unwrap();
    assert!(
        !catalog.table_exists(&ident).await.unwrap(),
        "staged is not created"
    );
    let files = write_ids(&catalog, &staged, 0..3).await.unwrap();
    iceberg_append::commit_create_append(&catalog, &ident, &staged, files, None, &env)
        .await
        .unwrap();
    append_ids(&catalog, &ident, 3..5, &env).await;
    let warehouse = format!("file://{}", dir.path().display());
    let seen = external::run_json(&python, DUCKDB_SCAN, &[&server.uri, &warehouse]);
    assert_eq!(seen["ids"], serde_json::json!([0, 1, 2, 3, 4]), "{seen}");
    assert_eq!(seen["names"][4], "n4", "{seen}");
}
