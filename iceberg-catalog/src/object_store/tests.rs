//! The object-store catalog on local disk: Hadoop names, namespaces as folders, tables, and
//! the version probe past a stale hint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, DeterministicEnvironment, TableCreation, TableIdent, commit_append};
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};

use super::*;

fn schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap()
}

fn ns(s: &str) -> NamespaceIdent {
    NamespaceIdent::parse(s).unwrap()
}

fn table(s: &str) -> TableIdent {
    TableIdent::parse(s).unwrap()
}

async fn open(dir: &Path) -> ObjectStoreCatalog {
    let warehouse = format!("file://{}", dir.display());
    let io = FileIo::from_location(&warehouse, &Default::default()).unwrap();
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 9));
    ObjectStoreCatalog::open_with_env(io, &warehouse, env)
        .await
        .unwrap()
}

/// Namespace `db` in `c`; returns the ident `db.t`.
async fn in_db(c: &ObjectStoreCatalog) -> TableIdent {
    c.create_namespace(&ns("db"), BTreeMap::new())
        .await
        .unwrap();
    table("db.t")
}

/// The catalog over `dir` with namespace `db`, and the ident `db.t`.
async fn open_db(dir: &Path) -> (ObjectStoreCatalog, TableIdent) {
    let c = open(dir).await;
    let t = in_db(&c).await;
    (c, t)
}

/// A data file record of `rows` rows named `name` under `table`'s data folder.
fn data_file(table: &iceberg_append::Table, name: &str, rows: i64) -> DataFile {
    DataFile {
        file_path: format!("{}/data/{name}.parquet", table.metadata.location),
        record_count: rows,
        file_size_in_bytes: 10,
        ..Default::default()
    }
}

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn hadoop_names() {
    assert_eq!(version_file_name(7), "v7.metadata.json");
    assert_eq!(
        parse_version("s3://b/t/metadata/v12.metadata.json"),
        Some(12)
    );
    assert_eq!(
        parse_version("s3://b/t/metadata/00012-x.metadata.json"),
        None
    );
    assert_eq!(parse_version("s3://b/t/metadata/version-hint.text"), None);
}

#[tokio::test]
async fn namespaces_are_folders_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    assert!(!c.namespace_exists(&ns("a")).await.unwrap());
    c.create_namespace(&ns("a"), BTreeMap::new()).await.unwrap();
    let again = c.create_namespace(&ns("a"), BTreeMap::new()).await;
    assert!(again.unwrap_err().is_already_exists());
    c.create_namespace(&ns("a.b"), props(&[("owner", "ops")]))
        .await
        .unwrap();
    assert!(dir.path().join("a/b").join(NAMESPACE_MARKER).is_file());
    assert_eq!(c.list_namespaces(None).await.unwrap(), [ns("a")]);
    assert_eq!(
        c.list_namespaces(Some(&ns("a"))).await.unwrap(),
        [ns("a.b")]
    );
    assert!(
        c.list_namespaces(Some(&ns("a.b")))
            .await
            .unwrap()
            .is_empty()
    );
    let missing = c.list_namespaces(Some(&ns("zz"))).await;
    assert!(missing.unwrap_err().is_not_found());

    assert_eq!(
        c.namespace_properties(&ns("a.b")).await.unwrap(),
        props(&[("owner", "ops")])
    );
    c.update_namespace_properties(&ns("a.b"), &["owner".into()], props(&[("tier", "gold")]))
        .await
        .unwrap();
    assert_eq!(
        c.namespace_properties(&ns("a.b")).await.unwrap(),
        props(&[("tier", "gold")])
    );
    assert!(
        c.namespace_properties(&ns("nope"))
            .await
            .unwrap_err()
            .is_not_found()
    );

    // A namespace holding a table is not dropped; emptied, it is.
    let t = table("a.b.t");
    c.create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let err = c.drop_namespace(&ns("a.b")).await.unwrap_err();
    assert!(
        matches!(
            err,
            iceberg_append::Error::NamespaceNotEmpty { tables: 1, .. }
        ),
        "{err}"
    );
    c.drop_table(&t, false).await.unwrap();
    c.drop_namespace(&ns("a.b")).await.unwrap();
    assert!(!c.namespace_exists(&ns("a.b")).await.unwrap());
    assert!(
        c.drop_namespace(&ns("a.b"))
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn tables_make_their_namespace_and_are_not_namespaces() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    // Java's HadoopCatalog creates tables without a namespace first; so may we.
    let t = table("db.events");
    let created = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    assert!(
        created
            .metadata_location
            .unwrap()
            .ends_with("/db/events/metadata/v1.metadata.json")
    );
    assert!(
        dir.path()
            .join("db/events/metadata/version-hint.text")
            .is_file()
    );
    assert!(c.namespace_exists(&ns("db")).await.unwrap());
    assert_eq!(
        c.namespace_properties(&ns("db")).await.unwrap(),
        BTreeMap::new()
    );
    assert!(!c.namespace_exists(&ns("db.events")).await.unwrap());
    assert_eq!(c.list_namespaces(None).await.unwrap(), [ns("db")]);
    assert!(c.list_namespaces(Some(&ns("db"))).await.unwrap().is_empty());
    let err = c
        .create_namespace(&ns("db.events"), BTreeMap::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is a table"), "{err}");

    // A sibling namespace and a leftover data folder are not tables.
    c.create_namespace(&ns("db.raw"), BTreeMap::new())
        .await
        .unwrap();
    std::fs::create_dir_all(dir.path().join("db/old/data")).unwrap();
    std::fs::write(dir.path().join("db/old/data/x.parquet"), b"x").unwrap();
    assert_eq!(c.list_tables(&ns("db")).await.unwrap(), [t]);
    assert_eq!(
        c.list_namespaces(Some(&ns("db"))).await.unwrap(),
        [ns("db.raw")]
    );
    assert!(c.list_tables(&ns("zz")).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn load_probes_past_a_stale_hint() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    let t = table("db.t");
    let created = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 10);
    let file = data_file(&created, "a", 3);
    let done = commit_append(&c, &t, vec![file], BTreeMap::new(), &env)
        .await
        .unwrap();
    assert!(done.metadata_location.ends_with("/v2.metadata.json"));
    // A writer that died between its create and its hint: the hint still says 1.
    let hint = dir.path().join("db/t/metadata").join(VERSION_HINT_FILE);
    std::fs::write(&hint, "1").unwrap();
    let loaded = c.load_table(&t).await.unwrap();
    assert_eq!(loaded.metadata.current_snapshot_id, Some(done.snapshot_id));
    // No hint at all: the highest version listed.
    std::fs::remove_file(&hint).unwrap();
    let loaded = c.load_table(&t).await.unwrap();
    assert_eq!(
        loaded.metadata_location,
        Some(done.metadata_location.clone())
    );
    // A hint naming a version deleted after a later commit (and its successor gone too):
    // listed, never "no such table" (which made `append --create` re-create v1).
    let more = commit_append(
        &c,
        &t,
        vec![data_file(&created, "b", 1)],
        BTreeMap::new(),
        &env,
    )
    .await
    .unwrap();
    let meta = dir.path().join("db/t/metadata");
    for v in [1, 2] {
        std::fs::remove_file(meta.join(format!("v{v}.metadata.json"))).unwrap();
    }
    std::fs::write(&hint, "1").unwrap();
    let loaded = c.load_table(&t).await.unwrap();
    assert_eq!(loaded.metadata_location, Some(more.metadata_location));
    assert_eq!(loaded.metadata.current_snapshot_id, Some(more.snapshot_id));
}

#[tokio::test]
async fn stores_without_conditional_create_are_refused() {
    let io = FileIo::memory();
    let err = ObjectStoreCatalog::open(io, "hdfs://nn/wh")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedStore { .. }), "{err}");
}

#[tokio::test]
async fn parents_exist_through_their_children_and_outlive_them() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    // Only the child has a marker: the parent exists, lists and cannot be dropped.
    c.create_namespace(&ns("a.b"), BTreeMap::new())
        .await
        .unwrap();
    assert!(c.namespace_exists(&ns("a")).await.unwrap());
    assert_eq!(c.list_namespaces(None).await.unwrap(), [ns("a")]);
    assert_eq!(
        c.list_namespaces(Some(&ns("a"))).await.unwrap(),
        [ns("a.b")]
    );
    let err = c.drop_namespace(&ns("a")).await.unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    // A table two levels down keeps its ancestors too.
    c.create_table(&table("x.y.t"), TableCreation::new("", schema()))
        .await
        .unwrap();
    assert!(c.namespace_exists(&ns("x")).await.unwrap());
    assert!(c.drop_namespace(&ns("x")).await.is_err());
    // Emptied from the bottom, each level goes.
    c.drop_namespace(&ns("a.b")).await.unwrap();
    assert!(!c.namespace_exists(&ns("a")).await.unwrap());
    // What a dropped table leaves is neither a table nor a namespace.
    c.drop_table(&table("x.y.t"), false).await.unwrap();
    std::fs::create_dir_all(dir.path().join("x/y/t/data/p=1")).unwrap();
    std::fs::write(dir.path().join("x/y/t/data/p=1/f.parquet"), b"x").unwrap();
    assert!(!c.namespace_exists(&ns("x.y")).await.unwrap());
    assert!(c.list_namespaces(None).await.unwrap().is_empty());
}

#[tokio::test]
async fn names_that_are_not_folder_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(dir.path()).await;
    let sneaky = NamespaceIdent::new(vec!["a/b".into()]).unwrap();
    assert!(c.create_namespace(&sneaky, BTreeMap::new()).await.is_err());
    let up = NamespaceIdent::new(vec!["..".into()]).unwrap();
    assert!(c.namespace_exists(&up).await.is_err());
    let t = TableIdent::new(ns("db"), "x/y");
    assert!(
        c.create_table(&t, TableCreation::new("", schema()))
            .await
            .is_err()
    );
}

/// A table dropped and created again in one process reuses `v1.metadata.json`: loads see the
/// new table (its UUID and schema), never the cached old one, and appends go into it.
#[tokio::test]
async fn a_recreated_table_is_loaded_fresh() {
    for memory in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let c = if memory {
            let io = FileIo::memory();
            let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 9));
            ObjectStoreCatalog::open_with_env(io, "memory://wh", env)
                .await
                .unwrap()
        } else {
            open(dir.path()).await
        };
        let t = in_db(&c).await;
        let old = c
            .create_table(&t, TableCreation::new("", schema()))
            .await
            .unwrap();
        assert_eq!(
            c.load_table(&t).await.unwrap().metadata.table_uuid,
            old.metadata.table_uuid
        );
        c.drop_table(&t, false).await.unwrap();
        let wider = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "name", PrimitiveType::String),
            ],
        )
        .unwrap();
        let new = c
            .create_table(&t, TableCreation::new("", wider.clone()))
            .await
            .unwrap();
        assert_ne!(new.metadata.table_uuid, old.metadata.table_uuid);
        let loaded = c.load_table(&t).await.unwrap();
        assert_eq!(
            loaded.metadata.table_uuid, new.metadata.table_uuid,
            "memory: {memory}"
        );
        assert_eq!(loaded.metadata.current_schema().unwrap(), &wider);
        let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 12);
        let file = data_file(&new, "a", 1);
        commit_append(&c, &t, vec![file], BTreeMap::new(), &env)
            .await
            .unwrap();
        let after = c.load_table(&t).await.unwrap();
        assert_eq!(after.metadata.table_uuid, new.metadata.table_uuid);
        assert_eq!(after.metadata.snapshots.len(), 1);
    }
}

/// Old versions deleted after commit free their names: a writer on a stale base whose version
/// is gone gets a conflict (not the deleted version's successor), and creating the table again
/// is refused while any version exists.
#[tokio::test]
async fn deleted_versions_are_never_created_again() {
    let dir = tempfile::tempdir().unwrap();
    let (c, t) = open_db(dir.path()).await;
    let mut creation = TableCreation::new("", schema());
    creation.properties = props(&[
        ("write.metadata.delete-after-commit.enabled", "true"),
        ("write.metadata.previous-versions-max", "1"),
    ]);
    let created = c.create_table(&t, creation).await.unwrap();
    let stale = c.load_table(&t).await.unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 21);
    for i in 0..3 {
        let file = data_file(&created, &format!("{i}"), 1);
        commit_append(&c, &t, vec![file], BTreeMap::new(), &env)
            .await
            .unwrap();
    }
    let meta = dir.path().join("db/t/metadata");
    assert!(
        !meta.join("v1.metadata.json").exists(),
        "v1 was deleted after commit"
    );
    assert!(!meta.join("v2.metadata.json").exists());
    // A slow writer still on v1: v2's name is free, but its base is gone.
    let err = c
        .commit(
            &t,
            stale.metadata_location.as_deref().unwrap(),
            &stale.metadata,
        )
        .await
        .unwrap_err();
    assert!(err.is_commit_conflict(), "{err}");
    assert!(
        !meta.join("v2.metadata.json").exists(),
        "no deleted version re-created"
    );
    assert_eq!(c.load_table(&t).await.unwrap().metadata.snapshots.len(), 3);
    // Creating the table again while it lives at v4 (v1 gone) is refused.
    let err = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(c.load_table(&t).await.unwrap().metadata.snapshots.len(), 3);
}

/// A version Java wrote gzip-compressed (`v<N>.gz.metadata.json`) is found, read and committed
/// onto; and its name counts as taken when we create the next version.
#[tokio::test]
async fn gzip_versions_written_by_java_are_read_and_respected() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (c, t) = open_db(dir.path()).await;
    let created = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let meta_dir = dir.path().join("db/t/metadata");
    let mut v2 = created.metadata.clone();
    v2.properties.insert("written-by".into(), "java".into());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(v2.to_json().unwrap().as_bytes()).unwrap();
    std::fs::write(meta_dir.join("v2.gz.metadata.json"), gz.finish().unwrap()).unwrap();
    std::fs::write(meta_dir.join(VERSION_HINT_FILE), "2").unwrap();
    let loaded = c.load_table(&t).await.unwrap();
    assert!(
        loaded
            .metadata_location
            .as_deref()
            .unwrap()
            .ends_with("/v2.gz.metadata.json")
    );
    assert_eq!(loaded.metadata.property("written-by"), Some("java"));
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 31);
    let file = data_file(&created, "a", 1);
    let done = commit_append(&c, &t, vec![file], BTreeMap::new(), &env)
        .await
        .unwrap();
    assert!(done.metadata_location.ends_with("/v3.metadata.json"));
    // Java took v4 compressed: a commit on v3 conflicts rather than creating v4 beside it.
    std::fs::copy(
        meta_dir.join("v2.gz.metadata.json"),
        meta_dir.join("v4.gz.metadata.json"),
    )
    .unwrap();
    let v3 = c.load_table(&t).await.unwrap();
    assert!(
        v3.metadata_location
            .as_deref()
            .unwrap()
            .ends_with("/v4.gz.metadata.json")
    );
    let err = c
        .commit(&t, &done.metadata_location, &v3.metadata)
        .await
        .unwrap_err();
    assert!(err.is_commit_conflict(), "{err}");
    assert!(!meta_dir.join("v4.metadata.json").exists());
}

/// A drop claims the next version before deleting anything: a writer racing it (here, on the
/// base it loaded just before) gets a conflict, a load during the drop finds no table, and
/// once the drop is done the folder is empty and the table can be created again.
#[tokio::test]
async fn a_drop_claims_the_next_version_first() {
    let dir = tempfile::tempdir().unwrap();
    let (c, t) = open_db(dir.path()).await;
    c.create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let writer = c.load_table(&t).await.unwrap();
    // The drop's first step, as another process would have made it.
    let meta = dir.path().join("db/t/metadata");
    std::fs::write(meta.join("v2.metadata.json"), DROPPED_MARKER).unwrap();
    let err = c
        .commit(
            &t,
            writer.metadata_location.as_deref().unwrap(),
            &writer.metadata,
        )
        .await
        .unwrap_err();
    assert!(err.is_commit_conflict(), "{err}");
    let err = c.load_table(&t).await.unwrap_err();
    assert!(
        err.is_not_found(),
        "a table being dropped is not loaded: {err}"
    );
    std::fs::remove_file(meta.join("v2.metadata.json")).unwrap();
    // The whole drop.
    c.drop_table(&t, true).await.unwrap();
    assert!(std::fs::read_dir(&meta).map_or(true, |mut d| d.next().is_none()));
    assert!(c.load_table(&t).await.unwrap_err().is_not_found());
    c.create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
}

/// A writer that loaded the table before it was dropped and created again commits onto a
/// `v<N>` of the same name but another table: a conflict, never the old table's metadata
/// (and its purged files) as the new table's current version.
#[tokio::test]
async fn a_writer_on_a_dropped_table_never_commits_into_its_successor() {
    let dir = tempfile::tempdir().unwrap();
    let (c, t) = open_db(dir.path()).await;
    c.create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    let stale = c.load_table(&t).await.unwrap();
    c.drop_table(&t, true).await.unwrap();
    let new = c
        .create_table(&t, TableCreation::new("", schema()))
        .await
        .unwrap();
    assert_eq!(
        new.metadata_location, stale.metadata_location,
        "the same v1 path"
    );
    let err = c
        .commit(
            &t,
            stale.metadata_location.as_deref().unwrap(),
            &stale.metadata,
        )
        .await
        .unwrap_err();
    assert!(err.is_commit_conflict(), "{err}");
    let loaded = c.load_table(&t).await.unwrap();
    assert_eq!(loaded.metadata.table_uuid, new.metadata.table_uuid);
    assert!(
        loaded
            .metadata_location
            .as_deref()
            .unwrap()
            .ends_with("/v1.metadata.json")
    );
}
