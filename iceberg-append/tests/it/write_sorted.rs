//! `write_and_prepare_append` on a table with a sort order: the data files are sorted by it
//! and both the returned records and the manifest entries carry its id.
#![cfg(feature = "write")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    DeterministicEnvironment, TableCreation, create_table, write_and_prepare_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{
    NestedField, NullOrder, PrimitiveType, Schema, SortDirection, SortField, SortOrder, Transform,
};
use iceberg_write::arrow_array::cast::AsArray;
use iceberg_write::arrow_array::types::Int64Type;
use iceberg_write::arrow_array::{Int64Array, RecordBatch};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
use iceberg_write::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn ids(values: Vec<Option<i64>>) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![Field::new(
            "id",
            DataType::Int64,
            true,
        )])),
        vec![Arc::new(Int64Array::from(values))],
    )
    .unwrap()
}

async fn append(sort_order: SortOrder) -> (FileIo, Vec<iceberg_spec::DataFile>, Vec<String>) {
    let io = FileIo::memory();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1, 7);
    let schema = Schema::new(0, vec![NestedField::optional(1, "id", PrimitiveType::Long)]).unwrap();
    let mut creation = TableCreation::new("memory://wh/db/t", schema);
    creation.sort_order = sort_order;
    let table = create_table(&io, creation, &env).await.unwrap();
    let batches = [
        ids(vec![Some(1), None, Some(5)]),
        ids(vec![Some(3), Some(4)]),
    ];
    let result = write_and_prepare_append(&io, &table, &batches, &env)
        .await
        .unwrap();
    (io, result.data_files, result.manifest_paths)
}

async fn file_ids(io: &FileIo, path: &str) -> Vec<Option<i64>> {
    let bytes = io.read(path).await.unwrap();
    ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap()
        .flat_map(|b| {
            let b = b.unwrap();
            b.column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn files_are_sorted_by_the_table_order_and_record_it() {
    let order = SortOrder {
        order_id: 1,
        fields: vec![SortField {
            transform: Transform::Identity,
            source_id: 1,
            direction: SortDirection::Desc,
            null_order: NullOrder::NullsLast,
        }],
    };
    let (io, files, manifests) = append(order).await;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].sort_order_id, Some(1));
    assert_eq!(
        file_ids(&io, &files[0].file_path).await,
        vec![Some(5), Some(4), Some(3), Some(1), None]
    );
    let bytes = io.read(&manifests[0]).await.unwrap();
    let entries = decode_manifest(&manifests[0], &bytes).unwrap().entries;
    assert_eq!(entries[0].data_file.sort_order_id, Some(1));
}

#[tokio::test]
async fn unsorted_tables_keep_the_input_order_and_claim_nothing() {
    let (io, files, _) = append(SortOrder::unsorted()).await;
    assert_eq!(files[0].sort_order_id, None);
    assert_eq!(
        file_ids(&io, &files[0].file_path).await,
        vec![Some(1), None, Some(5), Some(3), Some(4)]
    );
}
