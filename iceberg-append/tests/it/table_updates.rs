//! Metadata-only updates (schema changes, properties): one new metadata file, snapshots and
//! data untouched; a concurrent append is retried over, a concurrent schema change is a typed
//! conflict, and a refused update leaves the table exactly as it was.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    AppendMode, Catalog, DeterministicEnvironment, Error, InMemoryCatalog, RewriteManifests,
    TableIdent, TableUpdate, commit_append, commit_append_with_mode, commit_table_update,
    read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::evolution::{Position, UpdateSchema};
use iceberg_spec::name_mapping::{DEFAULT_NAME_MAPPING, NameMapping};
use iceberg_spec::properties::COMMIT_NUM_RETRIES;
use iceberg_spec::{
    DataFile, Datum, NestedField, PartitionSpec, PrimitiveType as P, Schema, TableMetadata,
    Transform, Type,
};

use crate::support::{Race, Racing, data_file, fast_retry_creation, qty_table, racing};

/// A data file of bucket 1.
fn file(name: &str) -> DataFile {
    DataFile {
        partition: vec![Some(Datum::int(1))],
        ..data_file(name, 3)
    }
}

async fn setup(race: Option<Race>) -> (Racing, TableIdent) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 5));
    let inner = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Int),
            NestedField::optional(2, "name", P::String),
            NestedField::optional(3, "qty", P::Int),
        ],
    )
    .unwrap();
    let mut creation = fast_retry_creation("memory://wh/db/t", schema.clone());
    creation.spec = PartitionSpec::builder(&schema)
        .add("qty", Transform::Bucket(4))
        .unwrap()
        .build()
        .unwrap();
    inner.create_table(&ident, creation).await.unwrap();
    commit_append(
        &inner,
        &ident,
        vec![file("first")],
        BTreeMap::new(),
        env.as_ref(),
    )
    .await
    .unwrap();
    let catalog = racing(inner, env, race);
    (catalog, ident)
}

/// Renames `name` to `label`, adds `note` after `id`, widens `qty`.
fn plan(meta: &TableMetadata) -> TableUpdate {
    let mut u = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    u.rename_column("name", "label").unwrap();
    u.add_column(None, "note", P::String.into(), None).unwrap();
    u.move_column("note", Position::After("id".into())).unwrap();
    u.widen_column("qty", P::Long).unwrap();
    TableUpdate::new().with_schema(meta, u.apply().unwrap())
}

#[tokio::test]
async fn a_schema_update_is_one_metadata_file_and_keeps_the_snapshots() {
    let (catalog, ident) = setup(None).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let update = plan(&before.metadata).set_property("owner", "ingest");
    let env = catalog.interceptor.env.clone();
    let done = commit_table_update(&catalog, &ident, &update, env.as_ref())
        .await
        .unwrap();
    assert_eq!(done.attempts, 1);
    let after = catalog.load_table(&ident).await.unwrap();
    let m = &after.metadata;
    assert_eq!(
        after.metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );
    assert_eq!(m.current_schema_id, 1);
    assert_eq!(m.schemas.len(), 2, "the old schema stays for the old files");
    let s = m.current_schema().unwrap();
    let names: Vec<&str> = s.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "note", "label", "qty"]);
    assert_eq!(s.field_id_by_name("label"), Some(2));
    assert_eq!(
        s.field_by_id(3).unwrap().field_type,
        Type::Primitive(P::Long)
    );
    assert_eq!(m.last_column_id, 4);
    assert_eq!(m.snapshots, before.metadata.snapshots);
    assert_eq!(m.current_snapshot_id, before.metadata.current_snapshot_id);
    assert_eq!(
        m.properties.get("owner").map(String::as_str),
        Some("ingest")
    );
    assert_eq!(
        m.metadata_log.last().map(|e| e.metadata_file.as_str()),
        before.metadata_location.as_deref()
    );
}

#[tokio::test]
async fn a_concurrent_append_is_retried_over() {
    let (catalog, ident) = setup(Some(Race::Append(Box::new(file("theirs"))))).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let update = plan(&before.metadata);
    let env = catalog.interceptor.env.clone();
    let done = commit_table_update(&catalog, &ident, &update, env.as_ref())
        .await
        .unwrap();
    assert_eq!(done.attempts, 2);
    let m = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(m.snapshots.len(), 2, "their append stays");
    assert_eq!(
        m.current_schema().unwrap().field_id_by_name("note"),
        Some(4)
    );
}

#[tokio::test]
async fn a_concurrent_schema_change_is_a_conflict_and_changes_nothing() {
    let (catalog, ident) = setup(None).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let ours = plan(&before.metadata);
    // Theirs lands first: a column added, so the ids ours planned are taken.
    let mut theirs = UpdateSchema::new(
        before.metadata.current_schema().unwrap(),
        before.metadata.last_column_id,
    );
    theirs
        .add_column(None, "other", P::Int.into(), None)
        .unwrap();
    let theirs = TableUpdate::new().with_schema(&before.metadata, theirs.apply().unwrap());
    *catalog.interceptor.race.lock().unwrap() = Some(Race::Update(Box::new(theirs)));
    let env = catalog.interceptor.env.clone();
    let err = commit_table_update(&catalog, &ident, &ours, env.as_ref())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SchemaConflict { .. }), "{err}");
    let m = catalog.load_table(&ident).await.unwrap().metadata;
    let s = m.current_schema().unwrap();
    assert_eq!(s.field_id_by_name("other"), Some(4));
    assert!(s.field_by_name("note").is_none() && s.field_by_name("name").is_some());
}

#[tokio::test]
async fn our_landed_update_reported_as_conflict_is_success() {
    let (catalog, ident) = setup(Some(Race::LandedThenConflict)).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let env = catalog.interceptor.env.clone();
    let done = commit_table_update(&catalog, &ident, &plan(&before.metadata), env.as_ref())
        .await
        .unwrap();
    assert_eq!(done.attempts, 1);
    let m = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(m.schemas.len(), 2, "landed once");
    assert_eq!(m.metadata_log.len(), before.metadata.metadata_log.len() + 1);
}

/// Our update lands, its answer is lost and another writer appends on top before the reload:
/// the update is found one file back in the log and reported as done, not made again (which
/// would refuse the column it added itself).
#[tokio::test]
async fn our_landed_update_under_a_later_append_is_success() {
    let (catalog, ident) = setup(Some(Race::LandedThenAppended(Box::new(file("theirs"))))).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let env = catalog.interceptor.env.clone();
    let done = commit_table_update(&catalog, &ident, &plan(&before.metadata), env.as_ref())
        .await
        .unwrap();
    assert_eq!(done.attempts, 1);
    let m = catalog.load_table(&ident).await.unwrap().metadata;
    assert_eq!(m.schemas.len(), 2, "landed once");
    assert_eq!(m.metadata_log.len(), before.metadata.metadata_log.len() + 2);
    let ours = &m.metadata_log[m.metadata_log.len() - 1];
    assert_eq!(done.metadata_location, ours.metadata_file);
    assert_eq!(m.snapshots.len(), before.metadata.snapshots.len() + 1);
}

#[tokio::test]
async fn refused_updates_name_what_and_leave_the_table_as_it_was() {
    let (catalog, ident) = setup(None).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let env = catalog.interceptor.env.clone();
    let meta = &before.metadata;
    let mut u = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    u.delete_column("qty").unwrap();
    let drop_source = TableUpdate::new().with_schema(meta, u.apply().unwrap());
    let refusals = [
        (drop_source, "qty"),
        (
            TableUpdate::new().set_property("format-version", "3"),
            "format-version",
        ),
        (
            TableUpdate::new().set_property(COMMIT_NUM_RETRIES, "many"),
            COMMIT_NUM_RETRIES,
        ),
    ];
    for (update, named) in refusals {
        let err = commit_table_update(&catalog, &ident, &update, env.as_ref())
            .await
            .unwrap_err();
        assert!(err.to_string().contains(named), "{named}: {err}");
    }
    let after = catalog.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata_location, before.metadata_location);
    // Removing a property the table lacks, with nothing else, is still a valid update.
    let update = TableUpdate::new().remove_property("absent");
    commit_table_update(&catalog, &ident, &update, env.as_ref())
        .await
        .unwrap();
}

#[tokio::test]
async fn the_name_mapping_follows_a_rename_and_an_add() {
    let (catalog, ident) = setup(None).await;
    let env = catalog.interceptor.env.clone();
    let before = catalog.load_table(&ident).await.unwrap();
    let mapping = NameMapping::from_schema(before.metadata.current_schema().unwrap());
    let set = TableUpdate::new().set_property(DEFAULT_NAME_MAPPING, mapping.to_json());
    commit_table_update(&catalog, &ident, &set, env.as_ref())
        .await
        .unwrap();
    let base = catalog.load_table(&ident).await.unwrap();
    commit_table_update(&catalog, &ident, &plan(&base.metadata), env.as_ref())
        .await
        .unwrap();
    let after = catalog.load_table(&ident).await.unwrap();
    let json = &after.metadata.properties[DEFAULT_NAME_MAPPING];
    let updated = NameMapping::from_json(json).unwrap();
    let names = |id: i32| {
        updated
            .fields
            .iter()
            .find(|m| m.field_id == Some(id))
            .map(|m| m.names.clone())
    };
    // Files written with `name` (no field ids) still resolve to id 2; `note` is mapped.
    assert_eq!(names(2), Some(vec!["name".into(), "label".into()]));
    assert_eq!(names(4), Some(vec!["note".into()]));
}

/// A table partitioned by `identity(qty)` with two fast appends of int partition values
/// (5 and 1), then `qty` widened to long.
async fn widened_after_two_appends() -> (InMemoryCatalog, TableIdent, Arc<DeterministicEnvironment>)
{
    let (catalog, ident, env) = qty_table(Transform::Identity).await;
    for (name, qty) in [("a", Datum::int(5)), ("b", Datum::int(1))] {
        append_qty(&catalog, &ident, &env, name, qty, AppendMode::Fast).await;
    }
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    let mut u = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    u.widen_column("qty", P::Long).unwrap();
    let widen = TableUpdate::new().with_schema(&meta, u.apply().unwrap());
    commit_table_update(&catalog, &ident, &widen, env.as_ref())
        .await
        .unwrap();
    (catalog, ident, env)
}

/// Appends a file of partition `qty` to the table of [`widened_after_two_appends`].
async fn append_qty(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    env: &DeterministicEnvironment,
    name: &str,
    qty: Datum,
    mode: AppendMode,
) {
    let file = DataFile {
        file_path: format!("memory://wh/db/w/data/{name}.parquet"),
        partition: vec![Some(qty)],
        ..data_file(name, 3)
    };
    commit_append_with_mode(catalog, ident, vec![file], BTreeMap::new(), Some(mode), env)
        .await
        .unwrap();
}

/// The partition values of the one manifest of the table's head, in order, after checking
/// that its partition summary's bounds are longs.
async fn qty_values(catalog: &InMemoryCatalog, ident: &TableIdent) -> Vec<Datum> {
    let table = catalog.load_table(ident).await.unwrap();
    let io = catalog.io();
    let snapshot = table.metadata.current_snapshot().unwrap();
    let lists = read_manifest_list(io, snapshot.manifest_list.as_deref())
        .await
        .unwrap();
    assert_eq!(lists.len(), 1, "one manifest");
    let bounds = &lists[0].partitions.as_ref().unwrap()[0];
    assert_eq!(bounds.lower_bound.as_ref().map(Vec::len), Some(8));
    assert_eq!(bounds.upper_bound.as_ref().map(Vec::len), Some(8));
    let bytes = io.read(&lists[0].manifest_path).await.unwrap();
    let manifest = decode_manifest(&lists[0].manifest_path, &bytes).unwrap();
    manifest
        .entries
        .iter()
        .map(|e| e.data_file.partition[0].clone().unwrap())
        .collect()
}

fn longs(values: &[i64]) -> Vec<Datum> {
    values.iter().copied().map(Datum::long).collect()
}

/// A merge after a partition source column was widened (int -> long) carries the older
/// manifests' int values as longs, as Java's projection reads them: the append lands, and
/// every merged value and summary bound is a long.
#[tokio::test]
async fn a_merge_after_widening_a_partition_source_writes_the_wider_values() {
    let (catalog, ident, env) = widened_after_two_appends().await;
    append_qty(
        &catalog,
        &ident,
        &env,
        "c",
        Datum::long(3),
        AppendMode::Merge,
    )
    .await;
    let mut merged = qty_values(&catalog, &ident).await;
    merged.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(merged, longs(&[1, 3, 5]));
}

/// A manifest rewrite after the widening orders the old int values among the new longs
/// (clustered by partition) and writes them as longs.
#[tokio::test]
async fn a_manifest_rewrite_after_widening_orders_old_values_among_new() {
    let (catalog, ident, env) = widened_after_two_appends().await;
    for (name, qty) in [("c", 3), ("d", 2)] {
        append_qty(
            &catalog,
            &ident,
            &env,
            name,
            Datum::long(qty),
            AppendMode::Fast,
        )
        .await;
    }
    let report = RewriteManifests::new()
        .commit(&catalog, &ident, env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.manifests_replaced, 4);
    assert_eq!(qty_values(&catalog, &ident).await, longs(&[1, 2, 3, 5]));
}

/// A partition field removed from the default spec, then its source column dropped: the old
/// spec's manifests still merge and rewrite, written with the newest schema that still has
/// the source, so each header binds its spec (iceberg-rust reads the header's).
#[tokio::test]
async fn manifests_of_a_spec_whose_source_was_dropped_still_merge_and_rewrite() {
    let (catalog, ident, env) = qty_table(Transform::Bucket(4)).await;
    for (name, bucket) in [("a", 1), ("b", 3)] {
        append_qty(
            &catalog,
            &ident,
            &env,
            name,
            Datum::int(bucket),
            AppendMode::Fast,
        )
        .await;
    }
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    let mut spec = iceberg_spec::evolution::UpdatePartitionSpec::new(&meta).unwrap();
    spec.remove_field("qty_bucket").unwrap();
    let unpartitioned = TableUpdate::new().with_spec(&meta, spec.apply().unwrap());
    commit_table_update(&catalog, &ident, &unpartitioned, env.as_ref())
        .await
        .unwrap();
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    let mut drop = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    drop.delete_column("qty").unwrap();
    let drop = TableUpdate::new().with_schema(&meta, drop.apply().unwrap());
    commit_table_update(&catalog, &ident, &drop, env.as_ref())
        .await
        .unwrap();
    let report = RewriteManifests::new()
        .commit(&catalog, &ident, env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.manifests_replaced, 2);
    let file = DataFile {
        file_path: "memory://wh/db/w/data/c.parquet".into(),
        spec_id: 1,
        ..data_file("c", 3)
    };
    commit_append_with_mode(
        &catalog,
        &ident,
        vec![file],
        BTreeMap::new(),
        Some(AppendMode::Merge),
        env.as_ref(),
    )
    .await
    .unwrap();
    let table = catalog.load_table(&ident).await.unwrap();
    let lists = read_manifest_list(
        catalog.io(),
        table
            .metadata
            .current_snapshot()
            .unwrap()
            .manifest_list
            .as_deref(),
    )
    .await
    .unwrap();
    let mut buckets = Vec::new();
    for m in lists.iter().filter(|m| m.partition_spec_id == 0) {
        let bytes = catalog.io().read(&m.manifest_path).await.unwrap();
        let decoded = decode_manifest(&m.manifest_path, &bytes).unwrap();
        let header =
            Schema::from_json(&serde_json::from_str(&decoded.metadata["schema"]).unwrap()).unwrap();
        assert!(
            header.field_by_name("qty").is_some(),
            "the header binds spec 0"
        );
        for e in decoded.entries {
            buckets.push(e.data_file.partition[0].clone());
        }
    }
    buckets.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(buckets, vec![Some(Datum::int(1)), Some(Datum::int(3))]);
}
