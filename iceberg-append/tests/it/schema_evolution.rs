//! Appends that evolve the schema: the new schema becomes current in the same commit as the
//! snapshot, and a schema change that raced it either re-applies cleanly or is a typed
//! conflict that leaves the table as the other writer made it and deletes what this one wrote.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, Result, SchemaEvolution, TableIdent,
    commit_evolving_append,
};
use iceberg_io::FileIo;
use iceberg_spec::evolution::UnionOptions;
use iceberg_spec::{DataFile, NestedField, PrimitiveType as P, Schema, Type};

use crate::support::{Race, Racing, data_file, fast_retry_creation, racing};

fn file(name: &str) -> DataFile {
    data_file(name, 3)
}

fn input(columns: &[(&str, P)]) -> Vec<NestedField> {
    columns
        .iter()
        .map(|(n, t)| NestedField::optional(0, *n, t.clone()))
        .collect()
}

async fn setup() -> (Racing, TableIdent) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let inner = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(0, vec![NestedField::optional(1, "id", P::Int)]).unwrap();
    let creation = fast_retry_creation("memory://wh/db/t", schema);
    inner.create_table(&ident, creation).await.unwrap();
    let catalog = racing(inner, env, None);
    (catalog, ident)
}

async fn evolution(catalog: &Racing, ident: &TableIdent, columns: &[(&str, P)]) -> SchemaEvolution {
    let table = catalog.load_table(ident).await.unwrap();
    SchemaEvolution::plan(&table.metadata, &input(columns), UnionOptions::default())
        .unwrap()
        .expect("a change")
}

async fn ours(catalog: &Racing, ident: &TableIdent, e: SchemaEvolution) -> Result<i64> {
    commit_evolving_append(
        catalog,
        ident,
        vec![file("ours")],
        e,
        BTreeMap::new(),
        None,
        catalog.interceptor.env.as_ref(),
    )
    .await
    .map(|o| o.snapshot_id)
}

#[tokio::test]
async fn the_schema_and_the_snapshot_land_in_one_commit() {
    let (catalog, ident) = setup().await;
    let e = evolution(&catalog, &ident, &[("id", P::Long), ("note", P::String)]).await;
    let snapshot_id = ours(&catalog, &ident, e).await.unwrap();
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(meta.schemas.len(), 2);
    assert_eq!(meta.current_schema_id, 1);
    assert_eq!(meta.last_column_id, 2);
    let schema = meta.current_schema().unwrap();
    assert_eq!(
        schema.field_by_id(1).unwrap().field_type,
        Type::Primitive(P::Long)
    );
    assert_eq!(schema.field_id_by_name("note"), Some(2));
    let snapshot = meta.snapshot_by_id(snapshot_id).unwrap();
    assert_eq!(
        snapshot.schema_id,
        Some(1),
        "the snapshot names the schema it was written with"
    );
    assert_eq!(meta.snapshots.len(), 1, "one commit");
}

#[tokio::test]
async fn a_race_with_the_same_change_reuses_its_schema() {
    let (catalog, ident) = setup().await;
    let columns = [("id", P::Int), ("note", P::String)];
    let e = evolution(&catalog, &ident, &columns).await;
    *catalog.interceptor.race.lock().unwrap() = Some(Race::Evolve(Box::new((
        file("theirs"),
        evolution(&catalog, &ident, &columns).await,
    ))));
    let snapshot_id = ours(&catalog, &ident, e).await.unwrap();
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(meta.schemas.len(), 2, "the same schema once");
    assert_eq!(meta.snapshots.len(), 2, "both appends landed");
    assert_eq!(meta.current_snapshot_id, Some(snapshot_id));
    assert_eq!(meta.snapshot_by_id(snapshot_id).unwrap().schema_id, Some(1));
}

#[tokio::test]
async fn a_race_that_took_our_ids_is_a_typed_conflict_and_cleans_up() {
    let (catalog, ident) = setup().await;
    let e = evolution(&catalog, &ident, &[("id", P::Int), ("note", P::String)]).await;
    // The other writer adds `other` as id 2, the id our files hold `note` under.
    *catalog.interceptor.race.lock().unwrap() = Some(Race::Evolve(Box::new((
        file("theirs"),
        evolution(&catalog, &ident, &[("other", P::Int)]).await,
    ))));
    let metadata_dir = "memory://wh/db/t/metadata/";
    let before = catalog.io().list(metadata_dir).await.unwrap().len();
    let err = ours(&catalog, &ident, e).await.unwrap_err();
    match &err {
        Error::SchemaConflict { reason, .. } => {
            assert!(
                reason.contains("`note`") && reason.contains("`other`"),
                "{reason}"
            );
        }
        other => panic!("expected a schema conflict, got {other:?}"),
    }
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(meta.snapshots.len(), 1, "only theirs landed");
    let schema = meta.current_schema().unwrap();
    assert_eq!(schema.field_id_by_name("other"), Some(2));
    assert!(schema.field_by_name("note").is_none());
    // Theirs wrote a manifest, a list and a metadata file; ours left nothing.
    let after = catalog.io().list(metadata_dir).await.unwrap();
    assert_eq!(after.len(), before + 3, "{after:#?}");
}
