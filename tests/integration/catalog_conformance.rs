//! One conformance suite for every catalog, as object_store has one for every store: adding a
//! catalog is implementing [`Catalog`] and adding a test here that runs [`conformance`].
//!
//! The suite works in a namespace of its own (`conf_<tag>`), so catalogs on shared servers
//! (PostgreSQL, a REST server) may hold other tests' tables meanwhile.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{
    Catalog, Error, ExpireSnapshots, InMemoryCatalog, SchemaEvolution, SystemEnvironment, Table,
    TableCreation, TableHandle, TableIdent, TableUpdate, commit_create_append,
    commit_evolving_append, commit_table_update, stage_create,
};
use iceberg_catalog::{ObjectStoreCatalog, SqlCatalog, SqlCatalogConfig};
use iceberg_io::FileIo;
use iceberg_spec::evolution::{UnionOptions, UpdateSchema};
use iceberg_spec::properties::COMMIT_MIN_RETRY_WAIT_MS;
use iceberg_spec::{FormatVersion, NestedField, PrimitiveType, Transform};

use crate::catalog_common::{append_ids, schema, write_ids};
use iceberg_catalog::testing::RestServer;

/// What a catalog does beyond the trait's required methods; the suite checks that a catalog
/// without one refuses it with [`Error::Unsupported`], never by doing something else.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Abilities {
    /// `rename_table` and `register_table`.
    pub(crate) rename_and_register: bool,
    /// Tables may be created in a namespace nobody created.
    pub(crate) implicit_namespaces: bool,
    /// Tables need a location given (the catalog has no warehouse of its own).
    pub(crate) needs_location: bool,
    /// `create_table_from_metadata`: a table and its first append in one step.
    pub(crate) create_from_metadata: bool,
}

const FULL: Abilities = Abilities {
    rename_and_register: true,
    implicit_namespaces: false,
    needs_location: false,
    create_from_metadata: true,
};

fn ns(levels: &[&str]) -> NamespaceIdent {
    NamespaceIdent::new(levels.iter().map(|l| l.to_string()).collect()).unwrap()
}

/// A table of `format` at `location` (empty: where the catalog puts it).
fn creation(format: FormatVersion, location: &str) -> TableCreation {
    let mut c = TableCreation::new(location, schema());
    c.format_version = format;
    // Two appends racing below: retry fast.
    c.properties
        .insert(COMMIT_MIN_RETRY_WAIT_MS.into(), "10".into());
    c
}

/// Snapshot ids from the current snapshot back to the first.
fn chain(table: &Table) -> Vec<i64> {
    let meta = &table.metadata;
    let mut ids = Vec::new();
    let mut next = meta.current_snapshot_id;
    while let Some(id) = next {
        ids.push(id);
        next = meta.snapshot_by_id(id).and_then(|s| s.parent_snapshot_id);
    }
    ids
}

fn assert_not_found(result: iceberg_append::Result<impl std::fmt::Debug>, what: &str) {
    match result {
        Err(e) if e.is_not_found() => {}
        other => panic!("{what}: expected not-found, got {other:?}"),
    }
}

/// The suite: namespaces, tables' create/load/list/rename/register/drop, typed errors for
/// what does not exist, a stale commit refused as a conflict with the table unchanged, racing
/// appends that both land in one chain, and v3 row lineage through the catalog.
///
/// `warehouse` is where tables go when the catalog [needs a location](Abilities).
pub(crate) async fn conformance(
    shared: Arc<dyn Catalog>,
    tag: &str,
    abilities: Abilities,
    warehouse: &str,
) {
    let at = |t: &TableIdent| {
        if abilities.needs_location {
            format!("{warehouse}/{}/{}", t.namespace.join("/"), t.name)
        } else {
            String::new()
        }
    };
    let catalog = shared.as_ref();
    let root = ns(&[&format!("conf_{tag}")]);
    let child = ns(&[&format!("conf_{tag}"), "child"]);

    // Namespaces.
    assert!(!catalog.namespace_exists(&root).await.unwrap());
    assert_not_found(
        catalog.namespace_properties(&root).await,
        "properties of missing",
    );
    let props = BTreeMap::from([("owner".to_string(), "suite".to_string())]);
    catalog
        .create_namespace(&root, props.clone())
        .await
        .unwrap();
    assert!(catalog.namespace_exists(&root).await.unwrap());
    let again = catalog.create_namespace(&root, BTreeMap::new()).await;
    assert!(
        again.as_ref().is_err_and(Error::is_already_exists),
        "second create: {again:?}"
    );
    assert_eq!(
        catalog
            .namespace_properties(&root)
            .await
            .unwrap()
            .get("owner"),
        Some(&"suite".to_string())
    );
    catalog
        .update_namespace_properties(
            &root,
            &["owner".to_string()],
            BTreeMap::from([("team".to_string(), "ingest".to_string())]),
        )
        .await
        .unwrap();
    let now = catalog.namespace_properties(&root).await.unwrap();
    assert_eq!(now.get("team"), Some(&"ingest".to_string()));
    assert!(!now.contains_key("owner"), "{now:?}");
    catalog
        .create_namespace(&child, BTreeMap::new())
        .await
        .unwrap();
    assert!(catalog.list_namespaces(None).await.unwrap().contains(&root));
    assert_eq!(
        catalog.list_namespaces(Some(&root)).await.unwrap(),
        std::slice::from_ref(&child)
    );

    // What does not exist is a typed not-found.
    let t = TableIdent::new(root.clone(), "events");
    assert!(!catalog.table_exists(&t).await.unwrap());
    assert_not_found(catalog.load_table(&t).await, "load of missing table");
    assert_not_found(catalog.drop_table(&t, false).await, "drop of missing table");
    if !abilities.implicit_namespaces {
        let nowhere = TableIdent::new(ns(&[&format!("conf_{tag}_nowhere")]), "t");
        let r = catalog
            .create_table(&nowhere, creation(FormatVersion::V2, &at(&nowhere)))
            .await;
        assert_not_found(r, "create in a missing namespace");
        assert_not_found(
            catalog.list_tables(&nowhere.namespace_ident()).await,
            "list of a missing namespace",
        );
    }

    // Create, load, list.
    let created = catalog
        .create_table(&t, creation(FormatVersion::V2, &at(&t)))
        .await
        .unwrap();
    let location = created.metadata_location.clone().unwrap();
    assert!(catalog.table_exists(&t).await.unwrap());
    let loaded = catalog.load_table(&t).await.unwrap();
    assert_eq!(loaded.metadata_location.as_deref(), Some(location.as_str()));
    assert_eq!(loaded.metadata.table_uuid, created.metadata.table_uuid);
    assert_eq!(loaded.metadata.format_version, FormatVersion::V2);
    let dup = catalog
        .create_table(&t, creation(FormatVersion::V2, &at(&t)))
        .await;
    assert!(dup.as_ref().is_err_and(Error::is_already_exists), "{dup:?}");
    assert_eq!(
        catalog.list_tables(&root).await.unwrap(),
        std::slice::from_ref(&t)
    );
    assert!(catalog.list_tables(&child).await.unwrap().is_empty());

    let env = SystemEnvironment;
    staged_create(
        catalog,
        &root,
        abilities,
        at(&TableIdent::new(root.clone(), "staged")),
    )
    .await;

    // An append lands; a commit planned on the old base is a conflict and changes nothing.
    let first = append_ids(catalog, &t, 0..3, &env).await;
    let after_first = catalog.load_table(&t).await.unwrap();
    assert_eq!(
        after_first.metadata.current_snapshot_id,
        Some(first.snapshot_id)
    );
    let stale = catalog.commit(&t, &location, &after_first.metadata).await;
    assert!(
        stale.as_ref().is_err_and(Error::is_commit_conflict),
        "stale commit: {stale:?}"
    );
    let unchanged = catalog.load_table(&t).await.unwrap();
    assert_eq!(unchanged.metadata_location, after_first.metadata_location);
    assert_eq!(chain(&unchanged), [first.snapshot_id]);

    // Two appends racing through one catalog both land, one after the other.
    let (a, b) = tokio::join!(
        append_ids(catalog, &t, 10..13, &env),
        append_ids(catalog, &t, 20..23, &env)
    );
    let raced = catalog.load_table(&t).await.unwrap();
    let ids = chain(&raced);
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(
        ids.contains(&a.snapshot_id) && ids.contains(&b.snapshot_id),
        "{ids:?}"
    );
    assert_eq!(ids[2], first.snapshot_id);
    let total: i64 = raced
        .metadata
        .current_snapshot()
        .and_then(|s| s.summary.as_ref()?.properties.get("total-records"))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert_eq!(total, 9);

    // v3: each snapshot gets the next row range, and the table's next-row-id follows.
    let v3 = TableIdent::new(root.clone(), "lineage");
    catalog
        .create_table(&v3, creation(FormatVersion::V3, &at(&v3)))
        .await
        .unwrap();
    append_ids(catalog, &v3, 0..4, &env).await;
    append_ids(catalog, &v3, 4..6, &env).await;
    let lineage = catalog.load_table(&v3).await.unwrap();
    assert_eq!(lineage.metadata.format_version, FormatVersion::V3);
    let mut ranges: Vec<(i64, i64)> = lineage
        .metadata
        .snapshots
        .iter()
        .map(|s| (s.first_row_id.unwrap(), s.added_rows.unwrap()))
        .collect();
    ranges.sort();
    assert_eq!(ranges, [(0, 4), (4, 2)]);
    assert_eq!(lineage.metadata.next_row_id, Some(6));

    // An append that evolves the schema: the new schema and the snapshot in one commit (for
    // REST: add-schema and set-current-schema beside add-snapshot, checked against the
    // base's schema id), and a plain append after it chains on.
    let note = [NestedField::optional(0, "note", PrimitiveType::String)];
    let evolution = SchemaEvolution::plan(&lineage.metadata, &note, UnionOptions::default())
        .unwrap()
        .unwrap();
    let files = write_ids(catalog, &lineage, 6..8).await.unwrap();
    let evolved =
        commit_evolving_append(catalog, &v3, files, evolution, BTreeMap::new(), None, &env)
            .await
            .unwrap();
    let after = append_ids(catalog, &v3, 8..9, &env).await;
    let lineage = catalog.load_table(&v3).await.unwrap();
    let current = lineage.metadata.current_schema().unwrap();
    let note_id = current.field_id_by_name("note").unwrap();
    assert_eq!(note_id, lineage.metadata.last_column_id);
    assert_eq!(lineage.metadata.schemas.len(), 2);
    let schema_of = |id: i64| lineage.metadata.snapshot_by_id(id).unwrap().schema_id;
    assert_eq!(schema_of(evolved.snapshot_id), Some(current.schema_id()));
    assert_eq!(schema_of(after.snapshot_id), Some(current.schema_id()));
    assert_eq!(lineage.metadata.next_row_id, Some(9));

    // A metadata-only update (for REST: add-schema, set-current-schema, set-properties and
    // remove-properties, no snapshot): a rename keeps the column's id, a column is dropped,
    // and the snapshots stay as they were.
    let mut update = UpdateSchema::new(current, lineage.metadata.last_column_id);
    update.rename_column("note", "remark").unwrap();
    update.delete_column("name").unwrap();
    let evolved = update.apply().unwrap();
    let change = TableUpdate::new()
        .with_schema(&lineage.metadata, evolved)
        .set_property("owner", "conformance")
        .remove_property(COMMIT_MIN_RETRY_WAIT_MS);
    let done = commit_table_update(catalog, &v3, &change, &env)
        .await
        .unwrap();
    let updated = catalog.load_table(&v3).await.unwrap();
    assert_eq!(
        updated.metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );
    let schema_now = updated.metadata.current_schema().unwrap();
    assert_eq!(schema_now.schema_id(), done.schema_id);
    assert_eq!(schema_now.field_id_by_name("remark"), Some(note_id));
    assert!(schema_now.field_by_name("name").is_none());
    // The same snapshots (a REST server may list them in another order).
    let by_id = |t: &Table| {
        let mut s = t.metadata.snapshots.clone();
        s.sort_by_key(|s| s.snapshot_id);
        s
    };
    assert_eq!(by_id(&updated), by_id(&lineage));
    assert_eq!(
        updated.metadata.properties.get("owner").map(String::as_str),
        Some("conformance")
    );
    assert!(
        !updated
            .metadata
            .properties
            .contains_key(COMMIT_MIN_RETRY_WAIT_MS)
    );

    // The front door's transaction (for REST: add-schema, set-current-schema, add-spec,
    // set-default-spec, set-properties and add-snapshot in one commit): a column added,
    // partitioned by, written with the staged shape and appended, as one new metadata file.
    let handle = TableHandle::load(shared.clone(), v3.clone(), Arc::new(SystemEnvironment))
        .await
        .unwrap();
    let regions = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(vec![9, 10, 11])) as ArrayRef,
        ),
        (
            "region",
            Arc::new(StringArray::from(vec!["eu", "us", "eu"])),
        ),
    ])
    .unwrap();
    let done = handle
        .new_transaction()
        .update_schema(|s| {
            s.add_column(None, "region", PrimitiveType::String.into(), None)?;
            Ok(())
        })
        .unwrap()
        .update_spec(|s| {
            s.add_field("region", Transform::Identity, None)?;
            Ok(())
        })
        .unwrap()
        .set_properties([("stage", "transaction")])
        .unwrap()
        .write(&[regions])
        .await
        .unwrap()
        .commit()
        .await
        .unwrap();
    let staged = catalog.load_table(&v3).await.unwrap();
    let m = &staged.metadata;
    assert_eq!(
        staged.metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );
    assert_eq!(
        m.metadata_log.last().map(|e| e.metadata_file.as_str()),
        updated.metadata_location.as_deref(),
        "one metadata file for the whole transaction"
    );
    assert_eq!(m.current_snapshot_id, done.snapshot_id);
    assert_eq!(m.current_schema_id, done.schema_id);
    assert_eq!(m.default_spec_id, done.spec_id);
    assert_ne!(done.spec_id, updated.metadata.default_spec_id);
    assert_eq!(m.default_spec().unwrap().fields().len(), 1);
    assert_eq!(
        m.properties.get("stage").map(String::as_str),
        Some("transaction")
    );
    assert_eq!(m.snapshots.len(), updated.metadata.snapshots.len() + 1);
    // The snapshot's row range starts where the table's ended; a merge append (the
    // default) also rewrites the old spec's manifests, whose rows take new ids as in Java.
    let snap = m.current_snapshot().unwrap();
    assert_eq!(snap.first_row_id, Some(9));
    let added_rows = snap.added_rows.unwrap();
    assert!(added_rows >= 3, "{added_rows}");
    assert_eq!(m.next_row_id, Some(9 + added_rows));
    assert_eq!(done.added_records, 3);

    // Snapshot expiry: one commit keeps the head alone; the expired snapshots' manifest
    // lists are gone from the store, the head's rows and row lineage stay.
    let expired_lists: Vec<String> = m
        .snapshots
        .iter()
        .filter(|s| Some(s.snapshot_id) != m.current_snapshot_id)
        .filter_map(|s| s.manifest_list.clone())
        .collect();
    assert!(!expired_lists.is_empty());
    let report = handle
        .expire_snapshots(&ExpireSnapshots::new().older_than_ms(i64::MAX))
        .await
        .unwrap();
    assert!(report.cleanup_error.is_none(), "{:?}", report.cleanup_error);
    assert_eq!(report.expired_snapshots.len(), expired_lists.len());
    let after = catalog.load_table(&v3).await.unwrap();
    assert_eq!(
        after.metadata_location.as_deref(),
        report.metadata_location.as_deref()
    );
    assert_eq!(after.metadata.snapshots.len(), 1);
    assert_eq!(after.metadata.current_snapshot_id, done.snapshot_id);
    assert_eq!(after.metadata.next_row_id, m.next_row_id);
    let io = catalog.table_io(&after);
    for list in &expired_lists {
        assert!(!io.exists(list).await.unwrap(), "{list} was not deleted");
    }
    assert!(
        io.exists(
            after
                .metadata
                .current_snapshot()
                .unwrap()
                .manifest_list
                .as_deref()
                .unwrap()
        )
        .await
        .unwrap()
    );

    // Rename and register, or a typed refusal.
    let renamed = TableIdent::new(child.clone(), "events_renamed");
    let last = if abilities.rename_and_register {
        catalog.rename_table(&t, &renamed).await.unwrap();
        assert_not_found(catalog.load_table(&t).await, "load under the old name");
        let moved = catalog.load_table(&renamed).await.unwrap();
        assert_eq!(moved.metadata.table_uuid, created.metadata.table_uuid);
        assert_eq!(chain(&moved), ids);
        let taken = catalog.rename_table(&v3, &renamed).await;
        assert!(
            taken.as_ref().is_err_and(Error::is_already_exists),
            "{taken:?}"
        );
        assert!(
            catalog.load_table(&v3).await.is_ok(),
            "a refused rename moved it"
        );

        let registered = TableIdent::new(root.clone(), "registered");
        let at = moved.metadata_location.clone().unwrap();
        let reg = catalog.register_table(&registered, &at).await.unwrap();
        assert_eq!(chain(&reg), ids);
        catalog.drop_table(&registered, false).await.unwrap();
        // Dropped without purge: the files it shared with `renamed` stay.
        assert!(catalog.io().exists(&at).await.unwrap());
        assert_eq!(chain(&catalog.load_table(&renamed).await.unwrap()), ids);
        renamed
    } else {
        let r = catalog.rename_table(&t, &renamed).await;
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
        assert!(catalog.load_table(&t).await.is_ok());
        t.clone()
    };

    // A namespace with tables is not dropped; purge leaves nothing to load.
    let full = catalog.drop_namespace(&root).await;
    assert!(full.is_err(), "dropped a namespace with tables");
    assert!(catalog.namespace_exists(&root).await.unwrap());
    catalog.drop_table(&last, true).await.unwrap();
    assert_not_found(catalog.load_table(&last).await, "load after drop");
    assert!(!catalog.table_exists(&last).await.unwrap());
    catalog.drop_table(&v3, false).await.unwrap();
    catalog.drop_namespace(&child).await.unwrap();
    catalog.drop_namespace(&root).await.unwrap();
    assert!(!catalog.namespace_exists(&root).await.unwrap());
    assert!(!catalog.list_namespaces(None).await.unwrap().contains(&root));
}

/// A table and its first append in one catalog step: nothing exists until it lands, the
/// first metadata file holds the snapshot, and a second creator loses with a typed error
/// and changes nothing. A catalog without the ability refuses with [`Error::Unsupported`].
async fn staged_create(
    catalog: &dyn Catalog,
    root: &NamespaceIdent,
    abilities: Abilities,
    location: String,
) {
    let env = SystemEnvironment;
    let t = TableIdent::new(root.clone(), "staged");
    let staged = stage_create(catalog, &t, creation(FormatVersion::V2, &location), &env).await;
    if !abilities.create_from_metadata {
        assert!(
            matches!(staged, Err(Error::Unsupported { .. })),
            "{staged:?}"
        );
        return;
    }
    let staged = staged.unwrap();
    assert!(
        !catalog.table_exists(&t).await.unwrap(),
        "staging creates nothing"
    );
    let files = write_ids(catalog, &staged, 0..5).await.unwrap();
    let done = commit_create_append(catalog, &t, &staged, files, None, &env)
        .await
        .unwrap();
    let loaded = catalog.load_table(&t).await.unwrap();
    assert_eq!(loaded.metadata.table_uuid, staged.metadata.table_uuid);
    assert_eq!(loaded.metadata.current_snapshot_id, Some(done.snapshot_id));
    assert_eq!(loaded.metadata.snapshots.len(), 1);
    // A server writing its own files may log its staged metadata first; ours never do.
    if !catalog.writes_metadata_files() {
        assert!(
            loaded.metadata.metadata_log.is_empty(),
            "the first metadata file already holds the snapshot"
        );
    }
    assert_eq!(
        loaded.metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );

    // A server may refuse to stage a table that exists; others refuse the create itself.
    match stage_create(catalog, &t, creation(FormatVersion::V2, &location), &env).await {
        Err(e) if e.is_already_exists() => {}
        Ok(late) => {
            let late_files = write_ids(catalog, &late, 5..7).await.unwrap();
            let lost = commit_create_append(catalog, &t, &late, late_files, None, &env).await;
            assert!(
                lost.as_ref().is_err_and(Error::is_already_exists),
                "{lost:?}"
            );
        }
        Err(other) => panic!("staging an existing table: {other:?}"),
    }
    let after = catalog.load_table(&t).await.unwrap();
    assert_eq!(
        after.metadata_location, loaded.metadata_location,
        "the winner stays"
    );
    assert_eq!(after.metadata.snapshots.len(), 1);
    catalog.drop_table(&t, true).await.unwrap();
}

fn local_io(dir: &std::path::Path) -> FileIo {
    FileIo::from_location(&format!("file://{}", dir.display()), &Default::default()).unwrap()
}

#[tokio::test]
async fn conformance_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = InMemoryCatalog::new(local_io(dir.path()), Arc::new(SystemEnvironment));
    let abilities = Abilities {
        implicit_namespaces: true,
        needs_location: true,
        ..FULL
    };
    let wh = format!("file://{}", dir.path().display());
    Box::pin(conformance(Arc::new(catalog), "memory", abilities, &wh)).await;
}

#[tokio::test]
async fn conformance_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
        .await
        .unwrap();
    Box::pin(conformance(Arc::new(catalog), "sqlite", FULL, "")).await;
}

#[tokio::test]
async fn conformance_postgres() {
    let Ok(url) = std::env::var("ICEBERG_TEST_POSTGRES_URL") else {
        if std::env::var_os("ICEBERG_TEST_REQUIRE_POSTGRES").is_some_and(|v| v == "1") {
            panic!("ICEBERG_TEST_POSTGRES_URL is not set but PostgreSQL is required");
        }
        eprintln!(
            "\n*** SKIPPED conformance_postgres: ICEBERG_TEST_POSTGRES_URL is not set. Run \
             .ci/run (or .ci/postgres.sh) to start a server. ***\n"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let tag = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace('.', "");
    let config = SqlCatalogConfig::new(format!("conformance-{tag}"), &url, &wh);
    let catalog = SqlCatalog::connect(config).await.unwrap();
    Box::pin(conformance(Arc::new(catalog), "postgres", FULL, "")).await;
}

const OBJECT_STORE: Abilities = Abilities {
    rename_and_register: false,
    implicit_namespaces: true,
    needs_location: false,
    create_from_metadata: true,
};

#[tokio::test]
async fn conformance_object_store() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let catalog = ObjectStoreCatalog::open(local_io(dir.path()), &wh)
        .await
        .unwrap();
    Box::pin(conformance(Arc::new(catalog), "object", OBJECT_STORE, "")).await;
}

#[tokio::test]
async fn conformance_object_store_s3() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("conformance");
    let wh = "s3://conformance/wh";
    let io = FileIo::from_location(wh, &moto.s3_properties()).unwrap();
    let catalog = ObjectStoreCatalog::open(io, wh).await.unwrap();
    Box::pin(conformance(
        Arc::new(catalog),
        "object_s3",
        OBJECT_STORE,
        "",
    ))
    .await;
}

#[tokio::test]
async fn conformance_rest() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let Some(server) = RestServer::start("conformance_rest", &wh, None) else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    assert!(catalog.is_idempotent());
    Box::pin(conformance(Arc::new(catalog), "rest", FULL, "")).await;
}

#[tokio::test]
async fn conformance_rest_s3() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("restwh");
    let props = moto.s3_properties();
    let Some(server) = RestServer::start("conformance_rest_s3", "s3://restwh/wh", Some(props))
    else {
        return;
    };
    let catalog = server.catalog(&[]).await;
    Box::pin(conformance(Arc::new(catalog), "rest_s3", FULL, "")).await;
}
