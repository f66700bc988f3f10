//! The Parquet files themselves: schema layout, field ids, physical types, round trip.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
use iceberg_spec::{PartitionSpec, Schema};
use iceberg_write::arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use iceberg_write::arrow_array::{
    Array, ArrayRef, Decimal128Array, FixedSizeBinaryArray, Int64Array, StringArray, StructArray,
    TimestampNanosecondArray,
};
use iceberg_write::arrow_schema::{DataType, Field, Fields, TimeUnit};
use iceberg_write::parquet::basic::{
    LogicalType, Repetition, TimeUnit as PqTimeUnit, Type as PhysicalType,
};
use iceberg_write::parquet::schema::types::Type as PqType;

use crate::common::*;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(
                2,
                "d1",
                PrimitiveType::Decimal {
                    precision: 1,
                    scale: 0,
                },
            ),
            NestedField::optional(
                3,
                "d10",
                PrimitiveType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            NestedField::optional(
                4,
                "d20",
                PrimitiveType::Decimal {
                    precision: 20,
                    scale: 2,
                },
            ),
            NestedField::optional(5, "u", PrimitiveType::Uuid),
            NestedField::optional(6, "ns", PrimitiveType::TimestampNs),
            NestedField::optional(
                7,
                "tags",
                Type::List(ListType::new(8, PrimitiveType::Int, false)),
            ),
            NestedField::optional(
                9,
                "props",
                Type::Map(MapType::new(
                    10,
                    PrimitiveType::String,
                    11,
                    PrimitiveType::String,
                    false,
                )),
            ),
            NestedField::optional(
                12,
                "s",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    13,
                    "x",
                    PrimitiveType::String,
                )])),
            ),
        ],
    )
    .unwrap()
}

fn input() -> iceberg_write::arrow_array::RecordBatch {
    let mut tags = ListBuilder::new(Int32Builder::new());
    tags.values().append_value(1);
    tags.values().append_null();
    tags.append(true);
    tags.append(false);
    let mut props = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    props.keys().append_value("k");
    props.values().append_value("v");
    props.append(true).unwrap();
    props.append(true).unwrap();
    let s = StructArray::from(vec![(
        Arc::new(Field::new("x", DataType::Utf8, true)),
        Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef,
    )]);
    let tags = tags.finish();
    let props = props.finish();
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("d1", DataType::Decimal128(1, 0), true),
            Field::new("d10", DataType::Decimal128(10, 2), true),
            Field::new("d20", DataType::Decimal128(20, 2), true),
            Field::new("u", DataType::FixedSizeBinary(16), true),
            Field::new("ns", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("tags", tags.data_type().clone(), true),
            Field::new("props", props.data_type().clone(), true),
            Field::new("s", s.data_type().clone(), true),
        ],
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(
                Decimal128Array::from(vec![Some(5), None])
                    .with_precision_and_scale(1, 0)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(-1420), Some(1)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(1i128 << 64), Some(-1)])
                    .with_precision_and_scale(20, 2)
                    .unwrap(),
            ),
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some([1u8; 16]), None].into_iter(),
                    16,
                )
                .unwrap(),
            ),
            Arc::new(TimestampNanosecondArray::from(vec![
                Some(1_510_871_468_000_000_001),
                None,
            ])),
            Arc::new(tags),
            Arc::new(props),
            Arc::new(s),
        ],
    )
}

fn find<'a>(t: &'a PqType, name: &str) -> &'a PqType {
    t.get_fields()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.as_ref())
        .expect(name)
}

fn id(t: &PqType) -> Option<i32> {
    let info = t.get_basic_info();
    info.has_id().then(|| info.id())
}

#[tokio::test]
async fn parquet_schema_layout_and_field_ids() {
    let io = FileIo::memory();
    let schema = schema();
    let files = write(
        &io,
        &[input()],
        &schema,
        &PartitionSpec::unpartitioned(),
        &options(),
    )
    .await;
    assert_eq!(files.len(), 1);
    let (_, meta) = read_back(&io, &files[0]).await;
    let kv = meta.file_metadata().key_value_metadata().unwrap();
    let iceberg_schema = kv.iter().find(|k| k.key == "iceberg.schema").unwrap();
    assert!(iceberg_schema.value.as_deref().unwrap().contains("\"d20\""));
    let root = meta.file_metadata().schema();
    assert_eq!(id(root), None);

    let idf = find(root, "id");
    assert_eq!(
        (id(idf), idf.get_basic_info().repetition()),
        (Some(1), Repetition::REQUIRED)
    );
    let d1 = find(root, "d1");
    assert_eq!(
        d1.get_physical_type(),
        PhysicalType::INT32,
        "G28: precision 1 is INT32"
    );
    assert_eq!(find(root, "d10").get_physical_type(), PhysicalType::INT64);
    let d20 = find(root, "d20");
    assert_eq!(d20.get_physical_type(), PhysicalType::FIXED_LEN_BYTE_ARRAY);
    if let PqType::PrimitiveType { type_length, .. } = d20 {
        assert_eq!(*type_length, 9);
    }
    let u = find(root, "u");
    assert_eq!(
        u.get_basic_info().logical_type_ref(),
        Some(&LogicalType::Uuid)
    );
    let ns = find(root, "ns");
    assert_eq!(
        ns.get_basic_info().logical_type_ref(),
        Some(&LogicalType::timestamp(false, PqTimeUnit::NANOS))
    );

    let tags = find(root, "tags");
    assert_eq!(id(tags), Some(7));
    assert_eq!(
        tags.get_basic_info().logical_type_ref(),
        Some(&LogicalType::List)
    );
    let list = find(tags, "list");
    assert_eq!(
        (id(list), list.get_basic_info().repetition()),
        (None, Repetition::REPEATED)
    );
    let element = find(list, "element");
    assert_eq!(
        (id(element), element.get_basic_info().repetition()),
        (Some(8), Repetition::OPTIONAL)
    );

    let props = find(root, "props");
    assert_eq!(id(props), Some(9));
    assert_eq!(
        props.get_basic_info().logical_type_ref(),
        Some(&LogicalType::Map)
    );
    let kv = find(props, "key_value");
    assert_eq!(id(kv), None);
    assert_eq!(id(find(kv, "key")), Some(10));
    assert_eq!(id(find(kv, "value")), Some(11));
    assert_eq!(id(find(find(root, "s"), "x")), Some(13));
}

#[tokio::test]
async fn round_trip_returns_the_input() {
    let io = FileIo::memory();
    let schema = schema();
    let input = input();
    let files = write(
        &io,
        std::slice::from_ref(&input),
        &schema,
        &PartitionSpec::unpartitioned(),
        &options(),
    )
    .await;
    let (batches, _) = read_back(&io, &files[0]).await;
    assert_eq!(batches.len(), 1);
    let out = &batches[0];
    assert_eq!(out.num_rows(), 2);
    for i in [0usize, 1, 2, 3, 4, 5] {
        let a = out.column(i);
        let b = input.column(i);
        assert_eq!(a.len(), b.len());
        assert_eq!(a.to_data().buffers(), b.to_data().buffers(), "column {i}");
    }
    let read_field = out.schema().field(4).clone();
    assert_eq!(read_field.extension_type_name(), Some("arrow.uuid"));
    let s = out
        .column(8)
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let x = s.column(0).as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(x.value(0), "a");
    let _ = Fields::empty();
}
