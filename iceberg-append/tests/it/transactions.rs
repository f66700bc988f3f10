//! The front door: a [`TableHandle`]'s transactions commit schema, spec, sort order and
//! property changes with an append as one metadata file; a concurrent append is retried with
//! every change replayed; a concurrent schema change is a typed conflict that leaves no data
//! file behind; an aborted transaction deletes what it wrote.
#![cfg(feature = "write")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::manifest_list::decode_manifest_list;
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, SchemaEvolution, TableHandle,
    TableIdent, TableUpdate, Transaction,
};
use iceberg_io::FileIo;
use iceberg_spec::evolution::{UnionOptions, UpdateSchema};
use iceberg_spec::{
    DataFile, Datum, NestedField, NullOrder, PrimitiveType as P, Schema, SortDirection, SortField,
    SortOrder, Transform,
};
use iceberg_write::arrow_array::cast::AsArray;
use iceberg_write::arrow_array::types::Int64Type;
use iceberg_write::arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
use iceberg_write::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::support::{Race, Racing, data_file, fast_retry_creation, racing};

const DATA: &str = "memory://wh/db/t/data";
const METADATA: &str = "memory://wh/db/t/metadata";

/// An empty, unpartitioned v2 table `db.t (id long required, name string)` behind a catalog
/// whose first swap meets `race`.
async fn setup(race: Option<Race>) -> (Arc<Racing>, TableHandle) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 5));
    let inner = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long),
            NestedField::optional(2, "name", P::String),
        ],
    )
    .unwrap();
    let creation = fast_retry_creation("memory://wh/db/t", schema);
    inner.create_table(&ident, creation).await.unwrap();
    let catalog = Arc::new(racing(inner, env.clone(), race));
    let dyn_catalog: Arc<dyn Catalog> = catalog.clone();
    let handle = TableHandle::load(dyn_catalog, ident, env).await.unwrap();
    (catalog, handle)
}

/// A batch of `(id, name[, region])` rows; `region` only when `regions` is given.
fn batch(ids: &[i64], regions: Option<&[&str]>) -> RecordBatch {
    batch_named("name", ids, regions)
}

/// [`batch`] with its second column called `name`.
fn batch_named(name: &str, ids: &[i64], regions: Option<&[&str]>) -> RecordBatch {
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new(name, DataType::Utf8, true),
    ];
    let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(StringArray::from(names)),
    ];
    if let Some(regions) = regions {
        fields.push(Field::new("region", DataType::Utf8, true));
        columns.push(Arc::new(StringArray::from(regions.to_vec())));
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).unwrap()
}

/// Stages a new column `region string`.
fn add_region(tx: Transaction) -> Transaction {
    tx.update_schema(|s| {
        s.add_column(None, "region", P::String.into(), None)?;
        Ok(())
    })
    .unwrap()
}

/// Stages an identity partition field on `region`.
fn partition_by_region(tx: Transaction) -> Transaction {
    tx.update_spec(|s| {
        s.add_field("region", Transform::Identity, None)?;
        Ok(())
    })
    .unwrap()
}

async fn metadata_files(io: &FileIo) -> Vec<String> {
    let mut files = io.list(METADATA).await.unwrap();
    files.retain(|p| p.ends_with(".metadata.json"));
    files
}

/// The data files the table's current snapshot reads, as its manifests record them.
async fn live_files(handle: &TableHandle) -> Vec<DataFile> {
    let meta = handle.metadata();
    let Some(snapshot) = meta.current_snapshot() else {
        return Vec::new();
    };
    let list = snapshot.manifest_list.as_deref().unwrap();
    let bytes = handle.io().read(list).await.unwrap();
    let mut files = Vec::new();
    for manifest in decode_manifest_list(list, &bytes).unwrap() {
        let bytes = handle.io().read(&manifest.manifest_path).await.unwrap();
        let decoded = decode_manifest(&manifest.manifest_path, &bytes).unwrap();
        files.extend(decoded.entries.into_iter().map(|e| e.data_file));
    }
    files.sort_by(|a, b| a.file_path.cmp(&b.file_path));
    files
}

/// Every column `name` of the Parquet file at `path`, as strings.
async fn read_strings(io: &FileIo, path: &str, name: &str) -> Vec<Option<String>> {
    let bytes = io.read(path).await.unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let column = b.column_by_name(name).unwrap().as_string::<i32>();
        out.extend(column.iter().map(|v| v.map(str::to_string)));
    }
    out
}

async fn read_ids(io: &FileIo, path: &str) -> Vec<i64> {
    let bytes = io.read(path).await.unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let column = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        out.extend(column.values().iter().copied());
    }
    out
}

#[tokio::test]
async fn schema_spec_property_and_write_are_one_metadata_file() {
    let (_catalog, mut handle) = setup(None).await;
    let before_location = handle.table().metadata_location.clone();
    let before_files = metadata_files(handle.io()).await;
    let done = partition_by_region(add_region(handle.new_transaction()))
        .set_properties([("owner", "ingest")])
        .unwrap()
        .write(&[batch(&[1, 2, 3], Some(&["eu", "us", "eu"]))])
        .await
        .unwrap()
        .commit()
        .await
        .unwrap();
    assert_eq!(done.attempts, 1);
    assert_eq!(done.added_records, 3);
    assert_eq!((done.schema_id, done.spec_id), (1, 1));

    let after_files = metadata_files(handle.io()).await;
    assert_eq!(
        after_files.len(),
        before_files.len() + 1,
        "one metadata file for every change and the snapshot: {after_files:?}"
    );
    handle.refresh().await.unwrap();
    let m = handle.metadata();
    assert_eq!(
        handle.table().metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );
    assert_eq!(
        m.metadata_log.last().map(|e| e.metadata_file.clone()),
        before_location
    );
    assert_eq!(m.current_snapshot_id, done.snapshot_id);
    assert_eq!(m.current_schema_id, 1);
    assert_eq!(m.default_spec_id, 1);
    assert_eq!(
        m.properties.get("owner").map(String::as_str),
        Some("ingest")
    );
    assert_eq!(m.snapshots.len(), 1);
    assert_eq!(m.snapshots[0].schema_id, Some(1));

    // The data was written with the new schema and partitioned by the new spec.
    let files = live_files(&handle).await;
    assert_eq!(files.len(), 2, "one file per region: {files:?}");
    let mut seen = Vec::new();
    for f in &files {
        assert_eq!(f.spec_id, 1);
        let region = read_strings(handle.io(), &f.file_path, "region").await;
        let Some(Some(Datum::String(value))) = f.partition.first() else {
            panic!("partition of {}: {:?}", f.file_path, f.partition);
        };
        assert!(region.iter().all(|r| r.as_deref() == Some(value.as_str())));
        seen.push((value.clone(), f.record_count));
    }
    seen.sort();
    assert_eq!(seen, [("eu".to_string(), 2), ("us".to_string(), 1)]);
}

#[tokio::test]
async fn a_concurrent_append_is_retried_with_every_change_replayed() {
    let theirs = data_file("theirs", 5);
    let (_catalog, mut handle) = setup(Some(Race::Append(Box::new(theirs.clone())))).await;
    let done = add_region(handle.new_transaction())
        // A second schema change planned on the first one's schema.
        .update_schema(|s| {
            s.rename_column("name", "label")?;
            Ok(())
        })
        .unwrap()
        .set_properties([("owner", "ingest")])
        .unwrap()
        .write(&[batch_named("label", &[7, 8], Some(&["eu", "eu"]))])
        .await
        .unwrap()
        .commit()
        .await
        .unwrap();
    assert_eq!(done.attempts, 2, "the race cost one retry");
    handle.refresh().await.unwrap();
    let m = handle.metadata();
    assert_eq!(m.snapshots.len(), 2, "theirs and ours");
    assert_eq!(m.current_snapshot_id, done.snapshot_id);
    let schema = m.current_schema().unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "label", "region"]);
    assert_eq!(m.current_schema_id, done.schema_id);
    assert_eq!(m.schemas.len(), 3, "the base, one per schema change");
    assert_eq!(
        m.properties.get("owner").map(String::as_str),
        Some("ingest")
    );
    let files = live_files(&handle).await;
    let paths: Vec<&str> = files.iter().map(|f| f.file_path.as_str()).collect();
    assert!(paths.contains(&theirs.file_path.as_str()), "{paths:?}");
    let total: i64 = files.iter().map(|f| f.record_count).sum();
    assert_eq!(total, 7);
    // Our file was written with the staged schema: the renamed column reads under its new
    // name, by field id.
    let ours = files
        .iter()
        .find(|f| f.file_path != theirs.file_path)
        .unwrap();
    assert_eq!(read_ids(handle.io(), &ours.file_path).await, [7, 8]);
    assert_eq!(
        read_strings(handle.io(), &ours.file_path, "label").await,
        [Some("n7".to_string()), Some("n8".to_string())]
    );
}

#[tokio::test]
async fn a_concurrent_schema_change_is_a_conflict_and_leaves_nothing_behind() {
    let (catalog, handle) = setup(None).await;
    // Another writer adds a column between our plan and our commit.
    *catalog.interceptor.race.lock().unwrap() = Some(added_int_column(&handle, "theirs"));

    let tx = add_region(handle.new_transaction())
        .write(&[batch(&[1, 2], Some(&["eu", "us"]))])
        .await
        .unwrap();
    assert!(
        !handle.io().list(DATA).await.unwrap().is_empty(),
        "written before the commit"
    );
    let err = tx.commit().await.unwrap_err();
    assert!(matches!(err, Error::SchemaConflict { .. }), "{err}");
    assert!(err.to_string().contains("db.t"), "{err}");
    assert_eq!(
        handle.io().list(DATA).await.unwrap(),
        Vec::<String>::new(),
        "the transaction's data files are deleted"
    );
    let now = catalog.load_table(handle.ident()).await.unwrap();
    let names: Vec<String> = now
        .metadata
        .current_schema()
        .unwrap()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .collect();
    assert_eq!(
        names,
        ["id", "name", "theirs"],
        "theirs landed, ours did not"
    );
    assert!(now.metadata.snapshots.is_empty());
}

#[tokio::test]
async fn changes_apply_in_order_and_a_refused_one_names_its_column() {
    let (_catalog, mut handle) = setup(None).await;
    // Partitioning by a column before adding it is refused at once, naming it.
    let err = handle
        .new_transaction()
        .update_spec(|s| {
            s.add_field("region", Transform::Identity, None)?;
            Ok(())
        })
        .unwrap_err();
    assert!(err.to_string().contains("region"), "{err}");
    // A refused property names the key.
    let err = handle
        .new_transaction()
        .set_properties([("format-version", "3")])
        .unwrap_err();
    assert!(err.to_string().contains("format-version"), "{err}");
    // Dropping a column the staged spec partitions by is refused, naming it ...
    let err = partition_by_region(add_region(handle.new_transaction()))
        .update_schema(|s| {
            s.delete_column("region")?;
            Ok(())
        })
        .unwrap_err();
    assert!(err.to_string().contains("region"), "{err}");
    // ... while dropping the partition field first and then its source column works.
    let tx = partition_by_region(add_region(handle.new_transaction()))
        .update_spec(|s| {
            s.remove_field("region")?;
            Ok(())
        })
        .unwrap()
        .update_schema(|s| {
            s.delete_column("region")?;
            Ok(())
        })
        .unwrap();
    let staged = tx.staged();
    // As Java does, the equal schema and spec that already exist are reused (ids 0), while
    // the ids the dropped column and partition field took are never given out again.
    assert_eq!((staged.current_schema_id, staged.default_spec_id), (0, 0));
    assert_eq!((staged.schemas.len(), staged.partition_specs.len()), (2, 2));
    assert_eq!((staged.last_column_id, staged.last_partition_id), (3, 1000));
    assert!(
        staged
            .current_schema()
            .unwrap()
            .field_id_by_name("region")
            .is_none()
    );
    let done = tx.commit().await.unwrap();
    assert_eq!(done.attempts, 1);
    assert_eq!(done.snapshot_id, None);
    assert_eq!((done.schema_id, done.spec_id), (0, 0));
    handle.refresh().await.unwrap();
    let m = handle.metadata();
    assert_eq!(
        handle.table().metadata_location.as_deref(),
        Some(done.metadata_location.as_str())
    );
    assert_eq!((m.last_column_id, m.last_partition_id), (3, 1000));
    assert_eq!(
        m.metadata_log.len(),
        1,
        "the refused transactions wrote nothing"
    );
}

#[tokio::test]
async fn an_aborted_or_empty_transaction_changes_nothing() {
    let (catalog, handle) = setup(None).await;
    let before = catalog.load_table(handle.ident()).await.unwrap();
    let files_before = metadata_files(handle.io()).await;
    let tx = handle
        .new_transaction()
        .write(&[batch(&[1, 2, 3], None)])
        .await
        .unwrap();
    assert_eq!(handle.io().list(DATA).await.unwrap().len(), 1);
    tx.abort().await;
    assert!(handle.io().list(DATA).await.unwrap().is_empty());

    let done = handle.new_transaction().commit().await.unwrap();
    assert_eq!(done.attempts, 0);
    assert_eq!(
        Some(done.metadata_location.as_str()),
        before.metadata_location.as_deref()
    );
    let after = catalog.load_table(handle.ident()).await.unwrap();
    assert_eq!(after.metadata_location, before.metadata_location);
    assert_eq!(metadata_files(handle.io()).await, files_before);
}

#[tokio::test]
async fn a_handle_writes_with_the_table_sort_order() {
    let (_catalog, mut handle) = setup(None).await;
    let order = SortOrder {
        order_id: 1,
        fields: vec![SortField {
            transform: Transform::Identity,
            source_id: 1,
            direction: SortDirection::Desc,
            null_order: NullOrder::NullsLast,
        }],
    };
    let done = handle
        .new_transaction()
        .replace_sort_order(order)
        .unwrap()
        .commit()
        .await
        .unwrap();
    assert_eq!(done.sort_order_id, 1);
    handle.refresh().await.unwrap();
    let done = Box::pin(handle.append(&[batch(&[2, 9, 4], None)]))
        .await
        .unwrap();
    assert_eq!(done.added_records, 3);
    handle.refresh().await.unwrap();
    let files = live_files(&handle).await;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].sort_order_id, Some(1));
    assert_eq!(read_ids(handle.io(), &files[0].file_path).await, [9, 4, 2]);
}

/// Another writer's commit adding the int column `name` to the table as `handle` has it.
fn added_int_column(handle: &TableHandle, name: &str) -> Race {
    let meta = handle.metadata();
    let mut theirs = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
    theirs.add_column(None, name, P::Int.into(), None).unwrap();
    Race::Update(Box::new(
        TableUpdate::new().with_schema(meta, theirs.apply().unwrap()),
    ))
}

/// The union of `db.t` with [`batch`]'s columns (with `region`).
fn region_union(handle: &TableHandle) -> SchemaEvolution {
    let input = iceberg_write::iceberg_schema(
        &batch(&[1], Some(&["eu"])).schema(),
        handle.metadata().format_version,
    )
    .unwrap();
    SchemaEvolution::plan(handle.metadata(), input.fields(), UnionOptions::default())
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_union_by_name_retried_over_the_same_change_reuses_its_schema() {
    let (catalog, mut handle) = setup(None).await;
    // Another writer unions the same input first.
    let theirs = (data_file("theirs", 5), region_union(&handle));
    *catalog.interceptor.race.lock().unwrap() = Some(Race::Evolve(Box::new(theirs)));
    let rows = batch(&[1, 2], Some(&["eu", "us"]));
    let done = handle
        .new_transaction()
        .union_by_name_arrow(&rows.schema(), UnionOptions::default())
        .unwrap()
        .write(&[rows])
        .await
        .unwrap()
        .commit()
        .await
        .unwrap();
    assert_eq!(done.attempts, 2);
    handle.refresh().await.unwrap();
    let m = handle.metadata();
    assert_eq!(m.schemas.len(), 2, "their schema is ours: one new schema");
    assert_eq!(m.current_schema_id, done.schema_id);
    assert_eq!(m.snapshots.len(), 2);
    let region = m.current_schema().unwrap().field_id_by_name("region");
    assert_eq!(region, Some(3));
    let files = live_files(&handle).await;
    let ours = files
        .iter()
        .find(|f| f.file_path != data_file("theirs", 5).file_path);
    let ours = ours.unwrap();
    assert_eq!(
        read_strings(handle.io(), &ours.file_path, "region").await,
        [Some("eu".to_string()), Some("us".to_string())]
    );
}

#[tokio::test]
async fn a_union_by_name_that_no_longer_fits_is_a_conflict_and_refusals_name_the_column() {
    let (catalog, handle) = setup(None).await;
    // Another writer adds `region` as an int first: our string column cannot go there.
    *catalog.interceptor.race.lock().unwrap() = Some(added_int_column(&handle, "region"));
    let rows = batch(&[1], Some(&["eu"]));
    let err = handle
        .new_transaction()
        .union_by_name_arrow(&rows.schema(), UnionOptions::default())
        .unwrap()
        .write(&[rows])
        .await
        .unwrap()
        .commit()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SchemaConflict { .. }), "{err}");
    assert!(err.to_string().contains("region"), "{err}");
    assert!(handle.io().list(DATA).await.unwrap().is_empty());

    // Refused at once, naming the column: a string for the long `id`.
    let bad = ArrowSchema::new(vec![Field::new("id", DataType::Utf8, false)]);
    let err = handle
        .new_transaction()
        .union_by_name_arrow(&bad, UnionOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("`id`"), "{err}");
    // An input that fits stages nothing.
    let tx = handle
        .new_transaction()
        .union_by_name_arrow(&batch(&[1], None).schema(), UnionOptions::default())
        .unwrap();
    assert_eq!(tx.commit().await.unwrap().attempts, 0);
}
