//! README's "In code" example, copied verbatim but for the warehouse path, and run.

use iceberg_append::{
    Catalog, InMemoryCatalog, SystemEnvironment, TableCreation, TableIdent, commit_append,
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

#[tokio::test]
async fn readme_example_runs() {
    use std::sync::Arc;
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
