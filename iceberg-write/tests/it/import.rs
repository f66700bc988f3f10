//! Existing Parquet files as data files: our own files describe as the writer described them,
//! files without field ids resolve through the name mapping, and bad files are refused with
//! the file and column named.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::types::{ListType, NestedField, PrimitiveType, StructType};
use iceberg_spec::{DataFile, Datum, PartitionSpec, Schema, Transform};
use iceberg_write::WriteOptions;
use iceberg_write::arrow_array::{
    Array, ArrayRef, Float32Array, Float64Array, Int8Array, Int32Array, Int64Array, ListArray,
    RecordBatch, StringArray, StructArray, TimestampMicrosecondArray, TimestampMillisecondArray,
};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema, TimeUnit};
use iceberg_write::import::{
    HIVE_NULL, ImportTarget, PartitionSource, data_file_from_parquet, read_parquet_footer,
};
use iceberg_write::parquet::arrow::ArrowWriter;
use iceberg_write::parquet::file::properties::WriterProperties;
use proptest::prelude::*;

use crate::common::*;

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

/// The events-like table the tests import into.
fn table() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "category", PrimitiveType::Int),
            NestedField::optional(3, "amount", PrimitiveType::Double),
            NestedField::optional(4, "name", PrimitiveType::String),
            NestedField::optional(5, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(
                6,
                "point",
                StructType::new(vec![
                    NestedField::optional(7, "x", PrimitiveType::Int),
                    NestedField::optional(8, "label", PrimitiveType::String),
                ]),
            ),
            NestedField::optional(9, "tags", ListType::new(10, PrimitiveType::Long, false)),
        ],
    )
    .unwrap()
}

/// Parquet as another tool writes it: plain Arrow fields (no field ids), the narrow types
/// pyarrow keeps (int8 category, float32 amount), three-level lists.
fn foreign_batch(rows: usize, category: Option<i8>) -> RecordBatch {
    let n = rows as i64;
    let point = StructArray::from(vec![
        (
            Arc::new(Field::new("x", DataType::Int32, true)),
            Arc::new(Int32Array::from_iter((0..n).map(|i| Some(i as i32 - 5)))) as ArrayRef,
        ),
        (
            Arc::new(Field::new("label", DataType::Utf8, true)),
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| (i % 3 != 0).then(|| format!("label-{i:04}"))),
            )) as ArrayRef,
        ),
    ]);
    let tags = ListArray::from_iter_primitive::<iceberg_write::arrow_array::types::Int64Type, _, _>(
        (0..n).map(|i| Some(vec![Some(i), Some(i * 2)])),
    );
    let fields = vec![
        Field::new("id", DataType::Int64, true),
        Field::new("category", DataType::Int8, true),
        Field::new("amount", DataType::Float32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("point", point.data_type().clone(), true),
        Field::new("tags", tags.data_type().clone(), true),
    ];
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int8Array::from_iter((0..n).map(|_| category))),
        Arc::new(Float32Array::from_iter(
            (0..n).map(|i| (i % 7 != 0).then_some(i as f32 * 0.5 - 3.0)),
        )),
        Arc::new(StringArray::from_iter(
            (0..n).map(|i| Some(format!("a fairly long name number {i:06}"))),
        )),
        Arc::new(
            TimestampMicrosecondArray::from_iter(
                (0..n).map(|i| Some(1_700_000_000_000_000 + i * 60_000_000)),
            )
            .with_timezone("UTC"),
        ),
        Arc::new(point),
        Arc::new(tags),
    ];
    batch(fields, cols)
}

/// The same rows as our writer takes them (the table's own types).
fn same_rows_as_table_types(foreign: &RecordBatch) -> RecordBatch {
    let cast = |i: usize, to: DataType| arrow_cast::cast(foreign.column(i), &to).unwrap();
    let fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new("category", DataType::Int32, true),
        Field::new("amount", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("point", foreign.column(5).data_type().clone(), true),
        Field::new("tags", foreign.column(6).data_type().clone(), true),
    ];
    let cols = vec![
        foreign.column(0).clone(),
        cast(1, DataType::Int32),
        cast(2, DataType::Float64),
        foreign.column(3).clone(),
        cast(4, fields[4].data_type().clone()),
        foreign.column(5).clone(),
        foreign.column(6).clone(),
    ];
    batch(fields, cols)
}

/// Writes `batch` with parquet's own `ArrowWriter` (no field ids, default properties,
/// `rows_per_group` rows per row group) to `path`.
async fn put_foreign(io: &FileIo, path: &str, batch: &RecordBatch, rows_per_group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    io.put(path, Bytes::from(buf)).await.unwrap();
}

fn target(spec: &PartitionSpec) -> ImportTarget {
    ImportTarget::new(&table(), spec, &options())
}

/// The metrics a footer can give, of a record: everything but sizes and NaN counts.
fn comparable(f: &DataFile) -> impl PartialEq + std::fmt::Debug + '_ {
    (
        f.record_count,
        &f.value_counts,
        &f.null_value_counts,
        &f.lower_bounds,
        &f.upper_bounds,
        &f.partition,
    )
}

#[test]
fn a_foreign_file_gets_the_metrics_our_writer_gives_the_same_rows() {
    run(async {
        let io = FileIo::memory();
        let foreign = foreign_batch(3_000, Some(4));
        let path = "memory://elsewhere/part-0.parquet";
        put_foreign(&io, path, &foreign, 1_000).await;
        let spec = PartitionSpec::builder(&table())
            .add("category", Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let imported = data_file_from_parquet(&io, path, &target(&spec), &PartitionSource::Infer)
            .await
            .unwrap();
        assert!(!imported.uses_field_ids);
        let f = &imported.data_file;
        let ours = write(
            &io,
            &[same_rows_as_table_types(&foreign)],
            &table(),
            &spec,
            &options(),
        )
        .await;
        assert_eq!(comparable(f), comparable(&ours[0]));
        assert_eq!(f.partition, vec![Some(Datum::Int(4))]);
        assert_eq!(f.file_path, path);
        assert_eq!(f.file_size_in_bytes, io.len(path).await.unwrap() as i64);
        assert_eq!(f.split_offsets.as_ref().map(Vec::len), Some(3));
        // A footer cannot count NaNs; Java's footer metrics have none either.
        assert!(f.nan_value_counts.is_empty());
        assert!(!ours[0].nan_value_counts.is_empty());
        // Every column has a size, list elements no counts (as for files we write).
        assert_eq!(
            f.column_sizes.keys().copied().collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5, 7, 8, 10]
        );
        assert!(!f.value_counts.contains_key(&10));
        assert_eq!(
            f.lower_bound(&table(), 5).unwrap(),
            Some(Datum::Timestamptz(1_700_000_000_000_000))
        );
    });
}

#[test]
fn a_renamed_column_is_found_by_the_mapping_names() {
    run(async {
        let io = FileIo::memory();
        let foreign = foreign_batch(10, None);
        let mut fields: Vec<Field> = foreign
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields[3] = fields[3].clone().with_name("old_name");
        let renamed = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(fields)),
            foreign.columns().to_vec(),
        )
        .unwrap();
        let path = "memory://elsewhere/renamed.parquet";
        put_foreign(&io, path, &renamed, 1_000).await;
        let spec = PartitionSpec::unpartitioned();
        let err = data_file_from_parquet(&io, path, &target(&spec), &PartitionSource::Infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::UnknownColumn { column, path: p, .. } if column == "old_name" && p == path),
            "{err}"
        );
        let mut mapping = iceberg_spec::name_mapping::NameMapping::from_schema(&table());
        mapping.fields[3].names.push("old_name".into());
        let t = target(&spec).with_name_mapping(mapping);
        let f = data_file_from_parquet(&io, path, &t, &PartitionSource::Infer)
            .await
            .unwrap();
        assert_eq!(f.data_file.value_counts[&4], 10);
    });
}

#[test]
fn bad_files_are_refused_naming_file_and_column() {
    run(async {
        let io = FileIo::memory();
        let spec = PartitionSpec::unpartitioned();
        let t = target(&spec);
        let infer = PartitionSource::Infer;

        // Not Parquet.
        io.put(
            "memory://x/notes.parquet",
            Bytes::from_static(b"hello, not parquet"),
        )
        .await
        .unwrap();
        let err = data_file_from_parquet(&io, "memory://x/notes.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(err, iceberg_write::Error::NotParquet { .. }),
            "{err}"
        );
        // Missing.
        let err = data_file_from_parquet(&io, "memory://x/none.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(err.is_not_found(), "{err}");

        // A type that does not fit: text where the table has a long.
        let text = batch(
            vec![Field::new("id", DataType::Utf8, false)],
            vec![Arc::new(StringArray::from(vec!["1"])) as ArrayRef],
        );
        put_foreign(&io, "memory://x/text.parquet", &text, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/text.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::IncompatibleColumn { column, reason, .. } if column == "id" && reason.ends_with("the table's long")),
            "{err}"
        );
        assert!(err.to_string().contains("memory://x/text.parquet"), "{err}");

        // Unsigned 32-bit integers would read negative past 2^31.
        let unsigned = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("category", DataType::UInt32, true),
            ],
            vec![
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
                Arc::new(iceberg_write::arrow_array::UInt32Array::from(vec![
                    u32::MAX,
                ])),
            ],
        );
        put_foreign(&io, "memory://x/unsigned.parquet", &unsigned, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/unsigned.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::IncompatibleColumn { column, .. } if column == "category"),
            "{err}"
        );

        // Millisecond timestamps: Java's row-group filters and iceberg-rust misread them.
        let millis = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new(
                    "ts",
                    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                    true,
                ),
            ],
            vec![
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
                Arc::new(
                    TimestampMillisecondArray::from(vec![1_700_000_000_000]).with_timezone("UTC"),
                ),
            ],
        );
        put_foreign(&io, "memory://x/millis.parquet", &millis, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/millis.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::IncompatibleColumn { column, reason, .. }
                if column == "ts" && reason.contains("microseconds")),
            "{err}"
        );

        // A required column with nulls, and one missing.
        let nulls = batch(
            vec![Field::new("id", DataType::Int64, true)],
            vec![Arc::new(Int64Array::from(vec![Some(1), None])) as ArrayRef],
        );
        put_foreign(&io, "memory://x/nulls.parquet", &nulls, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/nulls.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::RequiredColumn { column, .. } if column == "id"),
            "{err}"
        );
        let no_id = batch(
            vec![Field::new("name", DataType::Utf8, true)],
            vec![Arc::new(StringArray::from(vec!["a"])) as ArrayRef],
        );
        put_foreign(&io, "memory://x/no_id.parquet", &no_id, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/no_id.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::RequiredColumn { column, .. } if column == "id"),
            "{err}"
        );

        // Field ids that disagree with the table: id 4 (the table's `name`) on a long column.
        let with_ids = batch(
            vec![
                Field::new("id", DataType::Int64, false)
                    .with_metadata([("PARQUET:field_id".to_string(), "1".to_string())].into()),
                Field::new("extra", DataType::Int64, true)
                    .with_metadata([("PARQUET:field_id".to_string(), "99".to_string())].into()),
            ],
            vec![
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
                Arc::new(Int64Array::from(vec![2])),
            ],
        );
        put_foreign(&io, "memory://x/ids.parquet", &with_ids, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/ids.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::FieldIdMismatch { column, field_id: 99, .. } if column == "extra"),
            "{err}"
        );
        let nested_id = batch(
            vec![
                Field::new("id", DataType::Int64, false)
                    .with_metadata([("PARQUET:field_id".to_string(), "1".to_string())].into()),
                Field::new("x", DataType::Int32, true)
                    .with_metadata([("PARQUET:field_id".to_string(), "7".to_string())].into()),
            ],
            vec![
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
                Arc::new(Int32Array::from(vec![2])),
            ],
        );
        put_foreign(&io, "memory://x/nested_id.parquet", &nested_id, 10).await;
        let err = data_file_from_parquet(&io, "memory://x/nested_id.parquet", &t, &infer)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("point.x"), "{err}");
    });
}

#[test]
fn a_file_spanning_partitions_is_refused_and_hive_folders_give_the_tuple() {
    run(async {
        let io = FileIo::memory();
        let spec = PartitionSpec::builder(&table())
            .add("ts", Transform::Day)
            .unwrap()
            .add("category", Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let t = target(&spec);
        // 3,000 rows a minute apart from 2023-11-14T22:13:20Z cross midnight.
        let spanning = foreign_batch(3_000, Some(1));
        put_foreign(&io, "memory://x/span.parquet", &spanning, 1_000).await;
        let err =
            data_file_from_parquet(&io, "memory://x/span.parquet", &t, &PartitionSource::Infer)
                .await
                .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::Partition { field, reason, .. }
                if field == "ts_day" && reason.contains("2023-11-14") && reason.contains("2023-11-17")),
            "{err}"
        );

        // pyarrow's write_dataset leaves the partition column out of the file.
        let rows = foreign_batch(90, None);
        let without_category = rows.project(&[0, 2, 3, 4, 5, 6]).unwrap();
        let path = "memory://x/ts_day=2023-11-14/category=7/part-0.parquet";
        put_foreign(&io, path, &without_category, 1_000).await;
        let f = data_file_from_parquet(&io, path, &t, &PartitionSource::HivePath)
            .await
            .unwrap();
        assert_eq!(
            f.data_file.partition,
            vec![Some(Datum::Date(19_675)), Some(Datum::Int(7))]
        );
        // Inference alone cannot tell the missing column's value... it reads as null.
        let f = data_file_from_parquet(&io, path, &t, &PartitionSource::Infer)
            .await
            .unwrap();
        assert_eq!(f.data_file.partition, vec![Some(Datum::Date(19_675)), None]);
        // A folder that disagrees with the statistics is refused.
        let wrong = "memory://x/ts_day=2023-11-15/category=7/part-0.parquet";
        put_foreign(&io, wrong, &without_category, 1_000).await;
        let err = data_file_from_parquet(&io, wrong, &t, &PartitionSource::HivePath)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::Partition { field, .. } if field == "ts_day"),
            "{err}"
        );
        let null = format!("memory://x/ts_day=2023-11-14/category={HIVE_NULL}/part-0.parquet");
        put_foreign(&io, &null, &without_category, 1_000).await;
        let f = data_file_from_parquet(&io, &null, &t, &PartitionSource::HivePath)
            .await
            .unwrap();
        assert_eq!(f.data_file.partition[1], None);
        // Given values are checked against the statistics too.
        let given = PartitionSource::Given(vec![Some(Datum::Date(19_600)), None]);
        let err = data_file_from_parquet(&io, path, &t, &given)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::Partition { field, .. } if field == "ts_day"),
            "{err}"
        );
    });
}

/// A float column's bounds leave NaN out (pyarrow, parquet-rs): a file of 1.5 and NaN has
/// bounds [1.5, 1.5], so inference cannot tell an identity partition of it; a given value
/// is taken.
#[test]
fn a_float_partition_is_never_inferred_from_bounds_that_leave_nan_out() {
    run(async {
        let io = FileIo::memory();
        let spec = PartitionSpec::builder(&table())
            .add("amount", Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let t = target(&spec);
        let schema = Arc::new(ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("amount", DataType::Float64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(Float64Array::from(vec![1.5, f64::NAN, 1.5])),
            ],
        )
        .unwrap();
        let path = "memory://x/nan.parquet";
        put_foreign(&io, path, &batch, 1_000).await;
        let (footer, _) = read_parquet_footer(&io, path).await.unwrap();
        let stats = footer.row_group(0).column(1).statistics().unwrap();
        assert_eq!(stats.min_bytes_opt(), Some(&1.5f64.to_le_bytes()[..]));
        assert_eq!(stats.max_bytes_opt(), Some(&1.5f64.to_le_bytes()[..]));
        let err = data_file_from_parquet(&io, path, &t, &PartitionSource::Infer)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, iceberg_write::Error::Partition { field, reason, .. }
                if field == "amount" && reason.contains("NaN")),
            "{err}"
        );
        let given = PartitionSource::Given(vec![Some(Datum::double(1.5))]);
        let f = data_file_from_parquet(&io, path, &t, &given).await.unwrap();
        assert_eq!(f.data_file.partition, vec![Some(Datum::double(1.5))]);
    });
}

#[test]
fn a_footer_past_the_first_read_is_fetched_whole() {
    run(async {
        let io = FileIo::memory();
        let rows = foreign_batch(10, None);
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![
                iceberg_write::parquet::file::metadata::KeyValue::new(
                    "padding".into(),
                    "x".repeat(200_000),
                ),
            ]))
            .build();
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, rows.schema(), Some(props)).unwrap();
        w.write(&rows).unwrap();
        w.close().unwrap();
        io.put("memory://x/big-footer.parquet", Bytes::from(buf))
            .await
            .unwrap();
        let (meta, len) = read_parquet_footer(&io, "memory://x/big-footer.parquet")
            .await
            .unwrap();
        assert_eq!(meta.file_metadata().num_rows(), 10);
        assert!(len > 200_000);
    });
}

fn small_table() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "k", PrimitiveType::Int),
            NestedField::optional(3, "v", PrimitiveType::Double),
            NestedField::optional(4, "s", PrimitiveType::String),
            NestedField::optional(5, "d", PrimitiveType::Date),
        ],
    )
    .unwrap()
}

/// One row of `small_table` (its id is the row number): k, v, s, d.
type SmallRow = (Option<i32>, Option<f64>, Option<String>, Option<i32>);

fn small_rows(rows: &[SmallRow]) -> RecordBatch {
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("k", DataType::Int32, true),
            Field::new("v", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows.len() as i64)) as ArrayRef,
            Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.0))),
            Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.1))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.2.clone()))),
            Arc::new(iceberg_write::arrow_array::Date32Array::from_iter(
                rows.iter().map(|r| r.3),
            )),
        ],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Our writer's own files, read back by their footers, give the records the writer
    /// returned (but the NaN counts, which only the values give).
    #[test]
    fn our_files_describe_as_the_writer_described_them(
        rows in prop::collection::vec(
            (
                prop::option::of(0i32..4),
                prop::option::of(prop_oneof![any::<f64>(), Just(f64::NAN), Just(-0.0), Just(0.0)]),
                prop::option::of("[a-e]{0,24}"),
                prop::option::of(-3i32..3),
            ),
            1..120,
        ),
        spec_kind in 0usize..4,
        mode in prop_oneof![Just("counts"), Just("truncate(3)"), Just("full"), Just("none")],
        group_rows in 5usize..50,
    ) {
        let schema = small_table();
        let spec = match spec_kind {
            0 => PartitionSpec::unpartitioned(),
            1 => PartitionSpec::builder(&schema).add("k", Transform::Identity).unwrap().build().unwrap(),
            2 => PartitionSpec::builder(&schema).add("d", Transform::Month).unwrap().build().unwrap(),
            _ => PartitionSpec::builder(&schema).add("id", Transform::Bucket(3)).unwrap().build().unwrap(),
        };
        let props: BTreeMap<String, String> = [
            ("write.metadata.metrics.default".to_string(), mode.to_string()),
            ("write.parquet.row-group-size-rows".to_string(), group_rows.to_string()),
        ]
        .into();
        let opts = WriteOptions::from_table_properties(&props).unwrap().with_operation_id(uuid::Uuid::nil());
        run(async {
            let io = FileIo::memory();
            let files = write(&io, &[small_rows(&rows)], &schema, &spec, &opts).await;
            let target = ImportTarget::new(&schema, &spec, &opts);
            for written in &files {
                // Bucket values cannot be told from a range of ids: they are given.
                let source = if spec_kind == 3 {
                    PartitionSource::Given(written.partition.clone())
                } else {
                    PartitionSource::Infer
                };
                let imported = data_file_from_parquet(&io, &written.file_path, &target, &source)
                    .await
                    .unwrap();
                prop_assert!(imported.uses_field_ids);
                let mut expected = written.clone();
                expected.nan_value_counts.clear();
                // Float bounds: parquet-rs keeps no min/max for a page of only zeros, and
                // writes a zero minimum as -0.0 (the Parquet rule; Java's footer metrics
                // keep it too). Both are true bounds: compare by value where present.
                let mut got = imported.data_file.clone();
                let double = |b: &BTreeMap<i32, Vec<u8>>| {
                    b.get(&3).map(|v| f64::from_le_bytes(v.as_slice().try_into().unwrap()))
                };
                for (ours, theirs) in [
                    (&mut expected.lower_bounds, &mut got.lower_bounds),
                    (&mut expected.upper_bounds, &mut got.upper_bounds),
                ] {
                    if let Some(t) = double(theirs) {
                        prop_assert_eq!(Some(t), double(ours));
                    }
                    ours.remove(&3);
                    theirs.remove(&3);
                }
                prop_assert_eq!(&got, &expected);
            }
            Ok(())
        })?;
    }
}
