//! README's "In code" examples, copied verbatim but for the warehouse path, and run.

use iceberg_append::{
    Catalog, InMemoryCatalog, SystemEnvironment, TableCreation, TableHandle, TableIdent,
    commit_append,
};
use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Transform};
use std::sync::Arc;

async fn land(
    wh: String,
    batch: arrow_array::RecordBatch,
) -> Result<(), Box<dyn std::error::Error>> {
    let io = iceberg_io::FileIo::from_location(&wh, &Default::default())?;
    let env = Arc::new(SystemEnvironment);
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.events").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
        ],
    )?;
    let mut creation = TableCreation::new(format!("{wh}/db/events"), schema.clone());
    creation.spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)?
        .build()?;
    let table = catalog.create_table(&ident, creation).await?;
    // Any number of workers may do this part and ship `files` (serde) to one committer.
    let options = iceberg_write::WriteOptions::from_table_properties(&table.metadata.properties)?;
    let files = iceberg_write::write_data_files(
        &io,
        &table.metadata.location,
        &[batch],
        &schema,
        table.metadata.default_spec()?,
        None,
        &options,
    )
    .await?;
    let done = commit_append(&catalog, &ident, files, Default::default(), env.as_ref()).await?;
    println!(
        "snapshot {} added {} rows",
        done.snapshot_id, done.added_records
    );
    Ok(())
}

async fn evolve_and_land(
    catalog: Arc<dyn Catalog>,
    batch: arrow_array::RecordBatch,
) -> Result<(), Box<dyn std::error::Error>> {
    let ident = TableIdent::parse("db.events").ok_or("not a table name")?;
    let table = TableHandle::load(catalog, ident, Arc::new(SystemEnvironment)).await?;
    let done = table
        .new_transaction()
        .update_schema(|s| {
            s.add_column(None, "region", PrimitiveType::String.into(), None)?;
            Ok(())
        })?
        .update_spec(|p| {
            p.add_field("region", Transform::Identity, None)?;
            Ok(())
        })?
        .write(&[batch]) // written with the staged schema and spec
        .await?
        .commit() // one metadata file, one pointer swap
        .await?;
    println!(
        "snapshot {:?}: schema {}, spec {}",
        done.snapshot_id, done.schema_id, done.spec_id
    );
    // Plain appends: `table.append(&batches)`; from many workers: `table.write(&batches)` on
    // each, then `new_transaction().append(files).commit()` on one.
    Ok(())
}

#[tokio::test]
async fn readme_front_door_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let io = iceberg_io::FileIo::from_location(&wh, &Default::default()).unwrap();
    let catalog = Arc::new(InMemoryCatalog::new(io, Arc::new(SystemEnvironment)));
    let ident = TableIdent::parse("db.events").unwrap();
    let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
    catalog
        .create_table(
            &ident,
            TableCreation::new(format!("{wh}/db/events"), schema),
        )
        .await
        .unwrap();
    let batch = arrow_array::RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(arrow_array::Int64Array::from(vec![1, 2])) as arrow_array::ArrayRef,
        ),
        (
            "region",
            Arc::new(arrow_array::StringArray::from(vec!["eu", "us"])),
        ),
    ])
    .unwrap();
    evolve_and_land(catalog.clone(), batch).await.unwrap();
    let table = catalog.load_table(&ident).await.unwrap();
    let m = &table.metadata;
    assert_eq!((m.current_schema_id, m.default_spec_id), (1, 1));
    assert_eq!(m.snapshots.len(), 1);
}

#[tokio::test]
async fn readme_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new(
            "ts",
            arrow_schema::DataType::Timestamp(
                arrow_schema::TimeUnit::Microsecond,
                Some("+00:00".into()),
            ),
            true,
        ),
    ]));
    let batch = arrow_array::RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
            Arc::new(
                arrow_array::TimestampMicrosecondArray::from(vec![0, 86_400_000_000])
                    .with_timezone("+00:00"),
            ),
        ],
    )
    .unwrap();
    land(wh, batch).await.unwrap();
}
