//! DataFile metrics against the checklist (section 5).

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{ListType, NestedField, PrimitiveType, StructType, Type};
use iceberg_spec::{Datum, PartitionSpec, Schema};
use iceberg_write::arrow_array::builder::{Float64Builder, ListBuilder};
use iceberg_write::arrow_array::{
    Array, ArrayRef, BinaryArray, Float32Array, Float64Array, Int32Array, Int64Array, StringArray,
    StructArray,
};
use iceberg_write::arrow_schema::{DataType, Field};
use iceberg_write::{Error, WriteOptions, write_data_files};

use crate::common::*;

fn flat_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "name", PrimitiveType::String),
            NestedField::optional(3, "score", PrimitiveType::Double),
            NestedField::optional(4, "f", PrimitiveType::Float),
            NestedField::optional(5, "blob", PrimitiveType::Binary),
        ],
    )
    .unwrap()
}

fn flat_batch() -> iceberg_write::arrow_array::RecordBatch {
    let long = "abcdefghijklmnopqrstuvwxyz";
    batch(
        vec![
            Field::new("id", DataType::Int32, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("score", DataType::Float64, true),
            Field::new("f", DataType::Float32, true),
            Field::new("blob", DataType::Binary, true),
        ],
        vec![
            Arc::new(Int32Array::from(vec![3, -7, 12, 0])),
            Arc::new(StringArray::from(vec![
                Some("aa"),
                None,
                Some(long),
                Some("a"),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(f64::NAN),
                Some(0.0),
                Some(-0.0),
                None,
            ])),
            Arc::new(Float32Array::from(vec![
                Some(f32::NAN),
                None,
                Some(f32::NAN),
                None,
            ])),
            Arc::new(BinaryArray::from(vec![
                Some(&[0x01u8; 20][..]),
                Some(&[0xFF; 20][..]),
                None,
                Some(&[0x00][..]),
            ])),
        ],
    )
}

#[tokio::test]
async fn counts_sizes_and_bounds() {
    let io = FileIo::memory();
    let schema = flat_schema();
    let files = write(
        &io,
        &[flat_batch()],
        &schema,
        &PartitionSpec::unpartitioned(),
        &options(),
    )
    .await;
    let f = &files[0];
    let (_, meta) = read_back(&io, f).await;
    assert_eq!(f.record_count, 4);
    assert_eq!(f.spec_id, 0);
    assert!(f.partition.is_empty());
    assert_eq!(f.sort_order_id, None);
    assert_eq!(
        f.split_offsets.as_ref().unwrap().len(),
        meta.num_row_groups()
    );
    assert_eq!(
        f.split_offsets.as_ref().unwrap()[0],
        4,
        "first row group starts after the magic"
    );
    assert!(
        f.file_path.starts_with(
            "memory://wh/db/t/data/00000-0-00000000-0000-0000-0000-000000000000-00001"
        )
    );

    assert_eq!(
        f.value_counts,
        BTreeMap::from([(1, 4), (2, 4), (3, 4), (4, 4), (5, 4)])
    );
    assert_eq!(
        f.null_value_counts,
        BTreeMap::from([(1, 0), (2, 1), (3, 1), (4, 2), (5, 1)])
    );
    assert_eq!(f.nan_value_counts, BTreeMap::from([(3, 1), (4, 2)]));
    assert_eq!(
        f.column_sizes.keys().copied().collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );

    assert_eq!(
        f.lower_bounds[&1],
        (-7i64).to_le_bytes().to_vec(),
        "long width, not int"
    );
    assert_eq!(upper(f, &schema, 1), Some(Datum::Long(12)));
    assert_eq!(lower(f, &schema, 2), Some(Datum::String("a".into())));
    assert_eq!(
        upper(f, &schema, 2),
        Some(Datum::String("abcdefghijklmnoq".into()))
    );
    assert_eq!(
        f.lower_bounds[&3],
        (-0.0f64).to_le_bytes().to_vec(),
        "-0.0 is the lower bound"
    );
    assert_eq!(f.upper_bounds[&3], 0.0f64.to_le_bytes().to_vec());
    assert!(
        !f.lower_bounds.contains_key(&4) && !f.upper_bounds.contains_key(&4),
        "all-NaN float: no bounds"
    );
    assert_eq!(f.lower_bounds[&5], vec![0x00]);
    assert!(
        !f.upper_bounds.contains_key(&5),
        "0xFF x20 truncated to 16 cannot be incremented"
    );
}

#[tokio::test]
async fn metrics_modes_per_column() {
    let io = FileIo::memory();
    let schema = flat_schema();
    let mut props = BTreeMap::new();
    props.insert(
        "write.metadata.metrics.default".to_string(),
        "counts".to_string(),
    );
    props.insert(
        "write.metadata.metrics.column.name".to_string(),
        "full".to_string(),
    );
    props.insert(
        "write.metadata.metrics.column.id".to_string(),
        "none".to_string(),
    );
    props.insert(
        "write.metadata.metrics.column.blob".to_string(),
        "truncate(2)".to_string(),
    );
    let opts = WriteOptions::from_table_properties(&props).unwrap();
    let files = write(
        &io,
        &[flat_batch()],
        &schema,
        &PartitionSpec::unpartitioned(),
        &opts,
    )
    .await;
    let f = &files[0];
    assert!(
        !f.column_sizes.contains_key(&1) && !f.value_counts.contains_key(&1),
        "none: nothing at all"
    );
    assert_eq!(
        upper(f, &schema, 2),
        Some(Datum::String("abcdefghijklmnopqrstuvwxyz".into())),
        "full"
    );
    assert!(
        f.value_counts.contains_key(&3) && !f.lower_bounds.contains_key(&3),
        "counts: no bounds"
    );
    assert_eq!(f.nan_value_counts[&3], 1);
    assert_eq!(f.lower_bounds[&5], vec![0x00]);
    assert!(
        !f.upper_bounds.contains_key(&5),
        "truncate(2) of FF FF .. has no upper bound"
    );
}

#[tokio::test]
async fn nested_struct_children_get_metrics_list_children_sizes_only() {
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(
                1,
                "s",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    2,
                    "x",
                    PrimitiveType::Double,
                )])),
            ),
            NestedField::optional(
                3,
                "l",
                Type::List(ListType::new(4, PrimitiveType::Double, false)),
            ),
        ],
    )
    .unwrap();
    let s = StructArray::try_new(
        vec![Field::new("x", DataType::Float64, true)].into(),
        vec![Arc::new(Float64Array::from(vec![
            Some(f64::NAN),
            Some(2.0),
            Some(9.0),
        ])) as ArrayRef],
        Some(vec![true, true, false].into()),
    )
    .unwrap();
    let mut l = ListBuilder::new(Float64Builder::new()).with_field(Field::new(
        "element",
        DataType::Float64,
        false,
    ));
    l.values().append_value(1.0);
    l.append(true);
    l.append(false);
    l.append(true);
    let l = l.finish();
    let b = batch(
        vec![
            Field::new("s", s.data_type().clone(), true),
            Field::new("l", l.data_type().clone(), true),
        ],
        vec![Arc::new(s), Arc::new(l)],
    );
    let io = FileIo::memory();
    let files = write(
        &io,
        &[b],
        &schema,
        &PartitionSpec::unpartitioned(),
        &options(),
    )
    .await;
    let f = &files[0];
    assert_eq!(f.value_counts.get(&2), Some(&3));
    assert_eq!(
        f.null_value_counts.get(&2),
        Some(&1),
        "null parent counts as null"
    );
    assert_eq!(f.nan_value_counts.get(&2), Some(&1));
    assert_eq!(lower(f, &schema, 2), Some(Datum::Double(2.0)));
    assert_eq!(
        upper(f, &schema, 2),
        Some(Datum::Double(2.0)),
        "9.0 sits under a null struct"
    );
    assert!(f.column_sizes.contains_key(&4));
    assert!(!f.value_counts.contains_key(&4) && !f.lower_bounds.contains_key(&4));
    assert!(
        !f.column_sizes.contains_key(&1) && !f.column_sizes.contains_key(&3),
        "no entries for nested ids"
    );
}

#[tokio::test]
async fn bounds_merge_across_row_groups() {
    let schema = Schema::new(0, vec![NestedField::optional(1, "v", PrimitiveType::Long)]).unwrap();
    let mut opts = options();
    opts.row_group_size_rows = 3;
    let values: Vec<Option<i64>> = vec![Some(5), None, Some(9), Some(-4), Some(100), None, Some(7)];
    let b = batch(
        vec![Field::new("v", DataType::Int64, true)],
        vec![Arc::new(Int64Array::from(values))],
    );
    let io = FileIo::memory();
    let files = write(&io, &[b], &schema, &PartitionSpec::unpartitioned(), &opts).await;
    let f = &files[0];
    let offsets = f.split_offsets.clone().unwrap();
    assert_eq!(offsets.len(), 3);
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
    assert_eq!((f.value_counts[&1], f.null_value_counts[&1]), (7, 2));
    assert_eq!(
        (lower(f, &schema, 1), upper(f, &schema, 1)),
        (Some(Datum::Long(-4)), Some(Datum::Long(100)))
    );
}

#[tokio::test]
async fn refused_batches_write_nothing() {
    let io = FileIo::memory();
    let schema = flat_schema();
    let good = flat_batch();
    let bad = batch(
        vec![Field::new("id", DataType::Int64, true)],
        vec![Arc::new(Int64Array::from(vec![Some(1), None]))],
    );
    let err = write_data_files(
        &io,
        LOCATION,
        &[good, bad],
        &schema,
        &PartitionSpec::unpartitioned(),
        None,
        &options(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, Error::NullInRequiredColumn { column, nulls: 1 } if column == "id"),
        "{err}"
    );
    assert!(io.list(LOCATION).await.unwrap().is_empty());
}

#[tokio::test]
async fn uuid_bounds_only_when_java_and_byte_order_agree() {
    use iceberg_write::arrow_array::FixedSizeBinaryArray;
    let schema = Schema::new(0, vec![NestedField::optional(1, "u", PrimitiveType::Uuid)]).unwrap();
    let write_uuids = |values: Vec<Option<[u8; 16]>>| {
        let schema = schema.clone();
        async move {
            let a = FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16)
                .unwrap();
            let b = batch(
                vec![Field::new("u", DataType::FixedSizeBinary(16), true)],
                vec![Arc::new(a)],
            );
            let io = FileIo::memory();
            let f = write(
                &io,
                &[b],
                &schema,
                &PartitionSpec::unpartitioned(),
                &options(),
            )
            .await
            .remove(0);
            let (_, meta) = read_back(&io, &f).await;
            for rg in meta.row_groups() {
                // Java 1.10's row-group and page filters read Parquet's unsigned min/max in
                // signed order: a uuid column carries none (no chunk statistics also means no
                // column index).
                assert!(
                    rg.column(0).statistics().is_none(),
                    "uuid row-group statistics"
                );
            }
            f
        }
    };
    let f = write_uuids(vec![Some([0x10; 16]), None, Some([0x20; 16])]).await;
    assert_eq!(f.lower_bounds[&1], vec![0x10; 16]);
    assert_eq!(f.upper_bounds[&1], vec![0x20; 16], "uuid never truncated");
    assert_eq!((f.value_counts[&1], f.null_value_counts[&1]), (3, 1));
    let f = write_uuids(vec![Some([0x10; 16]), Some([0x90; 16]), None]).await;
    assert_eq!((f.value_counts[&1], f.null_value_counts[&1]), (3, 1));
    assert!(
        f.lower_bounds.is_empty() && f.upper_bounds.is_empty(),
        "G16: mixed top bits, counts only"
    );
    let mut b8 = [0x10; 16];
    b8[8] = 0x90;
    let f = write_uuids(vec![Some([0x10; 16]), Some(b8)]).await;
    assert!(
        f.lower_bounds.is_empty(),
        "byte 8's sign differs: counts only"
    );
}

#[tokio::test]
async fn zero_only_float_chunks_carry_no_parquet_min_max() {
    // Parquet widens an all-zero chunk to min -0.0 / max +0.0, which pyarrow 26 takes for
    // "only -0.0" and skips for `x IN (0.0)`: such chunks keep their counts, lose those two
    // bounds, and the data file's Iceberg bounds (from the arrays) stay exact.
    let io = FileIo::from_location("memory://wh", &Default::default()).unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "zeros", PrimitiveType::Double),
            NestedField::optional(2, "mixed", PrimitiveType::Double),
            NestedField::optional(3, "fzeros", PrimitiveType::Float),
        ],
    )
    .unwrap();
    let b = batch(
        vec![
            Field::new("zeros", DataType::Float64, true),
            Field::new("mixed", DataType::Float64, true),
            Field::new("fzeros", DataType::Float32, true),
        ],
        vec![
            Arc::new(Float64Array::from(vec![Some(0.0), None, Some(0.0)])) as ArrayRef,
            Arc::new(Float64Array::from(vec![Some(0.0), Some(2.5), None])),
            Arc::new(Float32Array::from(vec![Some(-0.0), Some(0.0), None])),
        ],
    );
    let files = write(
        &io,
        &[b],
        &schema,
        &PartitionSpec::unpartitioned(),
        &options(),
    )
    .await;
    let (_, meta) = read_back(&io, &files[0]).await;
    let rg = &meta.row_groups()[0];
    for (i, name) in [(0, "zeros"), (2, "fzeros")] {
        let stats = rg.column(i).statistics().unwrap();
        assert!(
            stats.min_bytes_opt().is_none() && stats.max_bytes_opt().is_none(),
            "{name}"
        );
        assert_eq!(
            stats.null_count_opt(),
            Some(1),
            "{name} keeps its null count"
        );
    }
    let mixed = rg.column(1).statistics().unwrap();
    assert!(
        mixed.min_bytes_opt().is_some(),
        "a chunk with other values keeps its bounds"
    );
    let f = &files[0];
    assert_eq!(f.null_value_counts[&1], 1);
    assert_eq!(lower(f, &schema, 1), Some(Datum::double(0.0)));
    assert_eq!(upper(f, &schema, 1), Some(Datum::double(0.0)));
    assert_eq!(lower(f, &schema, 3), Some(Datum::float(-0.0)));
    assert_eq!(upper(f, &schema, 3), Some(Datum::float(0.0)));
}
