//! Dictionaries only where they pay off, decided on a file's first page of rows as
//! parquet-mr does for Java: distinct columns are written plain, repeating ones with a
//! dictionary, and every value reads back either way.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Transform};
use iceberg_write::arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use iceberg_write::arrow_schema::{DataType, Field};
use iceberg_write::parquet::file::metadata::ParquetMetaData;

use crate::common::{batch, options, read_back, write};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "category", PrimitiveType::String),
            NestedField::optional(3, "payload", PrimitiveType::String),
        ],
    )
    .unwrap()
}

/// Rows `start..start + n`: a unique id, one of 20 categories, a unique text.
fn rows(start: i64, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (start..start + n as i64).collect();
    let category = StringArray::from_iter_values(ids.iter().map(|i| format!("c{}", i % 20)));
    let payload = StringArray::from_iter_values(ids.iter().map(|i| format!("text {i:08x}")));
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("category", DataType::Utf8, true),
            Field::new("payload", DataType::Utf8, true),
        ],
        vec![
            Arc::new(Int64Array::from(ids)) as ArrayRef,
            Arc::new(category),
            Arc::new(payload),
        ],
    )
}

/// Per column (by name), whether every row group has a dictionary page.
fn dictionaries(meta: &ParquetMetaData) -> Vec<(String, bool)> {
    let descr = meta.file_metadata().schema_descr();
    (0..descr.num_columns())
        .map(|i| {
            let all = meta
                .row_groups()
                .iter()
                .all(|rg| rg.column(i).dictionary_page_offset().is_some());
            (descr.column(i).name().to_string(), all)
        })
        .collect()
}

fn ids(read: &[RecordBatch]) -> Vec<i64> {
    read.iter()
        .flat_map(|b| {
            let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            c.values().to_vec()
        })
        .collect()
}

#[tokio::test]
async fn distinct_columns_are_plain_and_repeating_ones_keep_a_dictionary() {
    let io = FileIo::memory();
    let mut o = options();
    o.row_group_size_rows = 50_000;
    let input: Vec<RecordBatch> = (0..4).map(|k| rows(k * 30_000, 30_000)).collect();
    let files = write(&io, &input, &schema(), &PartitionSpec::unpartitioned(), &o).await;
    assert_eq!(files.len(), 1);
    let (read, meta) = read_back(&io, &files[0]).await;
    assert!(meta.row_groups().len() >= 2);
    assert_eq!(
        dictionaries(&meta),
        [
            ("id".to_string(), false),
            ("category".to_string(), true),
            ("payload".to_string(), false)
        ]
    );
    assert_eq!(ids(&read), (0..120_000).collect::<Vec<_>>());
    let categories: Vec<String> = read
        .iter()
        .flat_map(|b| {
            let c = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            c.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
        })
        .collect();
    assert!(
        categories
            .iter()
            .enumerate()
            .all(|(i, c)| *c == format!("c{}", i % 20))
    );
}

#[tokio::test]
async fn a_file_that_starts_with_few_rows_keeps_every_dictionary() {
    // Each bucket's file starts with a handful of rows: too few to judge, so parquet's
    // defaults (a dictionary, falling back when full) stay.
    let io = FileIo::memory();
    let spec = PartitionSpec::builder(&schema())
        .add("id", Transform::Bucket(4))
        .unwrap()
        .build()
        .unwrap();
    let input = vec![rows(0, 40), rows(40, 20_000)];
    let files = write(&io, &input, &schema(), &spec, &options()).await;
    assert_eq!(files.len(), 4);
    let mut all = Vec::new();
    for f in &files {
        let (read, meta) = read_back(&io, f).await;
        assert!(
            dictionaries(&meta).iter().all(|(_, d)| *d),
            "{}",
            f.file_path
        );
        all.extend(ids(&read));
    }
    all.sort_unstable();
    assert_eq!(all, (0..20_040).collect::<Vec<_>>());
}
