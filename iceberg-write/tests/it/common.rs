use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Datum, PartitionSpec, Schema};
use iceberg_write::arrow_array::{ArrayRef, RecordBatch};
use iceberg_write::arrow_schema::{Field, Schema as ArrowSchema};
use iceberg_write::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use iceberg_write::parquet::file::metadata::ParquetMetaData;
use iceberg_write::{WriteOptions, write_data_files};
use uuid::Uuid;

pub(crate) const LOCATION: &str = "memory://wh/db/t";

pub(crate) fn options() -> WriteOptions {
    WriteOptions::default().with_operation_id(Uuid::nil())
}

pub(crate) fn batch(fields: Vec<Field>, cols: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), cols).unwrap()
}

pub(crate) async fn write(
    io: &FileIo,
    batches: &[RecordBatch],
    schema: &Schema,
    spec: &PartitionSpec,
    options: &WriteOptions,
) -> Vec<DataFile> {
    write_data_files(io, LOCATION, batches, schema, spec, None, options)
        .await
        .unwrap()
}

pub(crate) async fn read_back(
    io: &FileIo,
    file: &DataFile,
) -> (Vec<RecordBatch>, Arc<ParquetMetaData>) {
    let bytes: Bytes = io.read(&file.file_path).await.unwrap();
    assert_eq!(
        bytes.len() as i64,
        file.file_size_in_bytes,
        "exact size of {}",
        file.file_path
    );
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let meta = builder.metadata().clone();
    let batches = builder
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (batches, meta)
}

pub(crate) fn lower(f: &DataFile, schema: &Schema, id: i32) -> Option<Datum> {
    f.lower_bound(schema, id).unwrap()
}

pub(crate) fn upper(f: &DataFile, schema: &Schema, id: i32) -> Option<Datum> {
    f.upper_bound(schema, id).unwrap()
}
