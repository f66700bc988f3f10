//! Per-column Parquet properties as Java writes them: bloom filters
//! (`write.parquet.bloom-filter-enabled.column.<name>`, `-fpp`, `-max-bytes`) in every row
//! group of the named columns, nested ones by their Iceberg names, and columns without
//! Parquet statistics (`write.parquet.stats-enabled.column.<name>=false`), whose Iceberg
//! metrics then hold only their size, as Java's do (but for Java's floats and our uuids,
//! whose metrics come from the values).

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::{ListType, NestedField, PartitionSpec, PrimitiveType, Schema, StructType, Type};
use iceberg_write::WriteOptions;
use iceberg_write::arrow_array::builder::{ListBuilder, StringBuilder};
use iceberg_write::arrow_array::{
    Array, ArrayRef, Int32Array, Int64Array, StringArray, StructArray,
};
use iceberg_write::arrow_schema::{DataType, Field, Fields};
use iceberg_write::parquet::file::properties::ReaderProperties;
use iceberg_write::parquet::file::reader::{FileReader, SerializedFileReader};
use iceberg_write::parquet::file::serialized_reader::ReadOptionsBuilder;

use crate::common::{batch, write};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "name", PrimitiveType::String),
            NestedField::optional(
                3,
                "tags",
                Type::List(ListType::new(4, PrimitiveType::String, false)),
            ),
            NestedField::optional(
                5,
                "s",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    6,
                    "x",
                    PrimitiveType::Int,
                )])),
            ),
            NestedField::optional(7, "payload", PrimitiveType::String),
        ],
    )
    .unwrap()
}

/// Rows `0..n`: id `i`, name `n<i>`, tags `[t<i>, u<i>]`, s.x `i * 3`, payload `p<i>`.
fn rows(n: i64) -> iceberg_write::arrow_array::RecordBatch {
    let mut tags = ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new(
        "element",
        DataType::Utf8,
        false,
    )));
    for i in 0..n {
        tags.values().append_value(format!("t{i}"));
        tags.values().append_value(format!("u{i}"));
        tags.append(true);
    }
    let tags: ArrayRef = Arc::new(tags.finish());
    let x: ArrayRef = Arc::new(Int32Array::from_iter_values((0..n).map(|i| i as i32 * 3)));
    let s = StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int32, true)]),
        vec![x],
        None,
    );
    let strings = |p: &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            (0..n).map(|i| format!("{p}{i}")),
        ))
    };
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("tags", tags.data_type().clone(), true),
            Field::new("s", s.data_type().clone(), true),
            Field::new("payload", DataType::Utf8, true),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            strings("n"),
            tags,
            Arc::new(s),
            strings("p"),
        ],
    )
}

fn options(pairs: &[(&str, &str)]) -> WriteOptions {
    let props: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    WriteOptions::from_table_properties(&props).unwrap()
}

async fn written(n: i64, pairs: &[(&str, &str)]) -> (iceberg_spec::DataFile, Bytes) {
    let io = FileIo::from_location("memory://wh", &Default::default()).unwrap();
    let files = write(
        &io,
        &[rows(n)],
        &schema(),
        &PartitionSpec::unpartitioned(),
        &options(pairs),
    )
    .await;
    assert_eq!(files.len(), 1);
    let bytes = io.read(&files[0].file_path).await.unwrap();
    (files.into_iter().next().unwrap(), bytes)
}

fn reader(bytes: Bytes) -> SerializedFileReader<Bytes> {
    let props = ReaderProperties::builder()
        .set_read_bloom_filter(true)
        .build();
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(props)
        .build();
    SerializedFileReader::new_with_options(bytes, options).unwrap()
}

#[tokio::test]
async fn bloom_filters_hold_every_value_of_the_named_columns() {
    let (file, bytes) = written(
        2_500,
        &[
            ("write.parquet.row-group-size-rows", "1000"),
            ("write.parquet.bloom-filter-enabled.column.id", "true"),
            (
                "write.parquet.bloom-filter-enabled.column.tags.element",
                "true",
            ),
            ("write.parquet.bloom-filter-enabled.column.s.x", "true"),
            ("write.parquet.bloom-filter-fpp.column.s.x", "0.05"),
            ("write.parquet.bloom-filter-enabled.column.name", "false"),
            // Not a column: skipped, as Java skips it.
            ("write.parquet.bloom-filter-enabled.column.nosuch", "true"),
            ("write.parquet.bloom-filter-max-bytes", "4096"),
        ],
    )
    .await;
    let reader = reader(bytes);
    let meta = reader.metadata();
    assert_eq!(meta.num_row_groups(), 3);
    let paths: Vec<String> = meta
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.path().string())
        .collect();
    assert_eq!(paths, ["id", "name", "tags.list.element", "s.x", "payload"]);
    let mut start = 0_i64;
    for g in 0..meta.num_row_groups() {
        let group = reader.get_row_group(g).unwrap();
        let rows = meta.row_group(g).num_rows();
        let filter = |c: usize| group.get_column_bloom_filter(c);
        for c in [1, 4] {
            assert!(filter(c).is_none(), "row group {g} column {}", paths[c]);
        }
        let (id, tags, x) = (filter(0).unwrap(), filter(2).unwrap(), filter(3).unwrap());
        for f in [id, tags, x] {
            assert!(f.num_blocks() * 32 <= 4096, "{} bytes", f.num_blocks() * 32);
        }
        for i in start..start + rows {
            assert!(id.check(&i), "id {i}");
            assert!(tags.check(format!("t{i}").as_str()), "tag t{i}");
            assert!(tags.check(format!("u{i}").as_str()), "tag u{i}");
            assert!(x.check(&(i as i32 * 3)), "x {}", i * 3);
        }
        // Values the group does not hold: mostly told apart (4 KiB for 1,000 values is
        // far below either probability asked).
        let outside = (10_000..20_000_i64).filter(|i| id.check(i)).count();
        assert!(outside < 100, "{outside} of 10,000 absent ids pass");
        let outside = (10_000..20_000)
            .filter(|i| tags.check(format!("t{i}").as_str()))
            .count();
        assert!(
            outside < 100,
            "{outside} of 10,000 absent tags pass ({} bytes)",
            tags.num_blocks() * 32
        );
        start += rows;
    }
    assert_eq!(start, 2_500);
    // The filters change no metric.
    assert_eq!(file.record_count, 2_500);
    assert!(file.lower_bounds.contains_key(&1) && file.lower_bounds.contains_key(&6));
}

/// A filter is never larger than `bloom-filter-max-bytes`, however many values.
#[tokio::test]
async fn bloom_filters_stay_within_their_byte_cap() {
    let (_, bytes) = written(
        20_000,
        &[
            ("write.parquet.bloom-filter-enabled.column.id", "true"),
            ("write.parquet.bloom-filter-max-bytes", "1000"),
        ],
    )
    .await;
    let reader = reader(bytes);
    let group = reader.get_row_group(0).unwrap();
    let id = group.get_column_bloom_filter(0).unwrap();
    assert!(
        id.num_blocks() * 32 <= 1000,
        "{} bytes",
        id.num_blocks() * 32
    );
    assert!((0..20_000_i64).all(|i| id.check(&i)));
}

/// A column with its statistics off has none in the footer, and (as Java reads the footer)
/// only its size in the data file's metrics; the other columns keep theirs.
#[tokio::test]
async fn a_column_without_statistics_keeps_only_its_size() {
    let (file, bytes) = written(
        100,
        &[
            ("write.parquet.stats-enabled.column.payload", "false"),
            ("write.parquet.stats-enabled.column.name", "true"),
        ],
    )
    .await;
    let reader = reader(bytes);
    let group = reader.metadata().row_group(0);
    assert!(group.column(4).statistics().is_none());
    assert!(group.column(1).statistics().is_some());
    assert!(file.column_sizes.contains_key(&7));
    for metric in [&file.value_counts, &file.null_value_counts] {
        assert!(!metric.contains_key(&7) && metric.contains_key(&2));
    }
    assert!(!file.lower_bounds.contains_key(&7) && !file.upper_bounds.contains_key(&7));
    assert!(file.lower_bounds.contains_key(&2) && file.upper_bounds.contains_key(&2));
}
