//! Sorted writes: every file written with a sort order is sorted by it, as Java compares
//! (the spec's scalar transforms and `Datum::compare`, direction, absolute null order),
//! records the order's id, and no row is lost or duplicated.

use std::cmp::Ordering;
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{NestedField, PrimitiveType, StructType, Type};
use iceberg_spec::{
    DataFile, Datum, NullOrder, PartitionSpec, Schema, SortDirection, SortField, SortOrder,
    Transform,
};
use iceberg_write::arrow_array::cast::AsArray;
use iceberg_write::arrow_array::types::{Float64Type, Int64Type, TimestampMicrosecondType};
use iceberg_write::arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, StructArray,
    TimestampMicrosecondArray,
};
use iceberg_write::arrow_schema::DataType;
use iceberg_write::{DataFileWriter, Error, WriteOptions, arrow_schema, write_data_files};
use proptest::prelude::*;

use crate::common::*;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "name", PrimitiveType::String),
            NestedField::optional(
                3,
                "s",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    4,
                    "x",
                    PrimitiveType::Double,
                )])),
            ),
            NestedField::optional(5, "ts", PrimitiveType::Timestamp),
        ],
    )
    .unwrap()
}

/// One input row; `x` as bits so NaNs compare for the multiset check.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    id: Option<i64>,
    name: Option<String>,
    /// `None` when the struct `s` is null.
    s: Option<Option<u64>>,
    ts: Option<i64>,
}

impl Row {
    /// The source value of field `id` (nested `x` is null when `s` is).
    fn source(&self, id: i32) -> Option<Datum> {
        match id {
            1 => self.id.map(Datum::Long),
            2 => self.name.clone().map(Datum::String),
            4 => self.s.flatten().map(|b| Datum::Double(f64::from_bits(b))),
            5 => self.ts.map(Datum::Timestamp),
            _ => unreachable!(),
        }
    }
}

fn to_batch(rows: &[Row]) -> RecordBatch {
    let arrow = Arc::new(arrow_schema(&schema()).unwrap());
    let DataType::Struct(children) = arrow.field(2).data_type().clone() else {
        unreachable!()
    };
    let xs: Vec<Option<f64>> = rows
        .iter()
        .map(|r| r.s.flatten().map(f64::from_bits))
        .collect();
    let valid: Vec<bool> = rows.iter().map(|r| r.s.is_some()).collect();
    let s = StructArray::new(
        children,
        vec![Arc::new(Float64Array::from(xs)) as ArrayRef],
        Some(valid.into()),
    );
    RecordBatch::try_new(
        arrow,
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(s),
            Arc::new(TimestampMicrosecondArray::from(
                rows.iter().map(|r| r.ts).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn from_batch(b: &RecordBatch) -> Vec<Row> {
    let id = b.column(0).as_primitive::<Int64Type>();
    let name = b.column(1).as_string::<i32>();
    let s = b.column(2).as_struct();
    let x = s.column(0).as_primitive::<Float64Type>();
    let ts = b.column(3).as_primitive::<TimestampMicrosecondType>();
    let opt = |a: &dyn Array, i: usize| a.is_valid(i);
    (0..b.num_rows())
        .map(|i| Row {
            id: opt(id, i).then(|| id.value(i)),
            name: opt(name, i).then(|| name.value(i).to_string()),
            s: opt(s, i).then(|| opt(x, i).then(|| x.value(i).to_bits())),
            ts: opt(ts, i).then(|| ts.value(i)),
        })
        .collect()
}

/// Java's comparison of two rows under `order`.
fn compare(order: &SortOrder, a: &Row, b: &Row) -> Ordering {
    for f in &order.fields {
        let ka = f.transform.apply(a.source(f.source_id).as_ref()).unwrap();
        let kb = f.transform.apply(b.source(f.source_id).as_ref()).unwrap();
        let nulls_first = f.null_order == NullOrder::NullsFirst;
        let c = match (ka, kb) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) if nulls_first => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) if nulls_first => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => {
                let c = x.compare(&y).unwrap();
                if f.direction == SortDirection::Desc {
                    c.reverse()
                } else {
                    c
                }
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

async fn rows_of(io: &FileIo, f: &DataFile) -> Vec<Row> {
    let (batches, _) = read_back(io, f).await;
    batches.iter().flat_map(from_batch).collect()
}

/// Checks every file is sorted by `order` and records it, and the rows are the input's.
async fn check(io: &FileIo, files: &[DataFile], order: &SortOrder, input: &[Row]) {
    let mut all = Vec::new();
    for f in files {
        assert_eq!(
            f.sort_order_id,
            Some(order.order_id as i32),
            "{}",
            f.file_path
        );
        let rows = rows_of(io, f).await;
        assert_eq!(rows.len() as i64, f.record_count);
        for w in rows.windows(2) {
            assert_ne!(
                compare(order, &w[0], &w[1]),
                Ordering::Greater,
                "{} not sorted by {order:?}: {:?} before {:?}",
                f.file_path,
                w[0],
                w[1]
            );
        }
        all.extend(rows);
    }
    let mut expected = input.to_vec();
    expected.sort();
    all.sort();
    assert_eq!(all, expected, "rows lost or duplicated");
}

fn key(source_id: i32, transform: Transform, desc: bool, nulls_first: bool) -> SortField {
    SortField {
        transform,
        source_id,
        direction: if desc {
            SortDirection::Desc
        } else {
            SortDirection::Asc
        },
        null_order: if nulls_first {
            NullOrder::NullsFirst
        } else {
            NullOrder::NullsLast
        },
    }
}

fn rows_strategy() -> impl Strategy<Value = Vec<Row>> {
    let double = prop_oneof![
        (-3i32..3).prop_map(|v| f64::from(v) * 0.5),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::from_bits(0xFFF8_0000_0000_0001)),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
    ];
    let row = (
        prop::option::weighted(0.9, -40i64..40),
        prop::option::weighted(0.9, "[ab😀é]{0,3}"),
        prop::option::weighted(
            0.9,
            prop::option::weighted(0.9, double.prop_map(f64::to_bits)),
        ),
        prop::option::weighted(0.9, -4_000_000_000_000i64..4_000_000_000_000),
    )
        .prop_map(|(id, name, s, ts)| Row { id, name, s, ts });
    prop::collection::vec(row, 0..120)
}

fn transform_for(source_id: i32) -> BoxedStrategy<Transform> {
    match source_id {
        1 | 2 => prop_oneof![
            Just(Transform::Identity),
            (1u32..8).prop_map(Transform::Bucket),
            (1u32..12).prop_map(Transform::Truncate),
        ]
        .boxed(),
        5 => prop_oneof![
            Just(Transform::Identity),
            Just(Transform::Year),
            Just(Transform::Month),
            Just(Transform::Day),
            Just(Transform::Hour),
            (1u32..8).prop_map(Transform::Bucket),
        ]
        .boxed(),
        _ => Just(Transform::Identity).boxed(),
    }
}

fn order_strategy() -> impl Strategy<Value = SortOrder> {
    let field = prop_oneof![Just(1), Just(2), Just(4), Just(5)].prop_flat_map(|source| {
        (transform_for(source), any::<bool>(), any::<bool>())
            .prop_map(move |(t, desc, nf)| key(source, t, desc, nf))
    });
    (1i64..5, prop::collection::vec(field, 1..4))
        .prop_map(|(order_id, fields)| SortOrder { order_id, fields })
}

fn spec_strategy() -> impl Strategy<Value = PartitionSpec> {
    prop_oneof![
        Just(PartitionSpec::unpartitioned()),
        Just(
            PartitionSpec::builder(&schema())
                .add("id", Transform::Bucket(3))
                .unwrap()
                .build()
                .unwrap()
        ),
    ]
}

fn split(rows: &[Row], cuts: &[usize]) -> Vec<Vec<Row>> {
    let mut out = Vec::new();
    let mut start = 0;
    for c in cuts {
        let end = (start + c).min(rows.len());
        out.push(rows[start..end].to_vec());
        start = end;
    }
    out.push(rows[start..].to_vec());
    out
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_file_is_sorted_by_the_order_and_no_row_is_lost(
        rows in rows_strategy(),
        order in order_strategy(),
        spec in spec_strategy(),
        cuts in prop::collection::vec(0usize..50, 0..4),
        streaming in any::<bool>(),
    ) {
        runtime().block_on(async {
            let schema = schema();
            let io = FileIo::memory();
            let opts = options().with_sort_order(&order);
            let batches: Vec<RecordBatch> = split(&rows, &cuts).iter().map(|r| to_batch(r)).collect();
            let files = if streaming {
                let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
                for b in &batches {
                    w.write(b).await.unwrap();
                }
                w.close().await.unwrap()
            } else {
                let files = write_data_files(&io, LOCATION, &batches, &schema, &spec, None, &opts)
                    .await
                    .unwrap();
                // The slice is sorted as a whole: one file per partition.
                let partitions: std::collections::HashSet<_> =
                    files.iter().map(|f| f.partition.clone()).collect();
                assert_eq!(files.len(), partitions.len());
                files
            };
            check(&io, &files, &order, &rows).await;
        });
    }
}

fn ordered_rows(ids: std::ops::Range<i64>) -> Vec<Row> {
    ids.map(|i| Row {
        id: Some(i),
        name: None,
        s: None,
        ts: None,
    })
    .collect()
}

fn by_id(desc: bool) -> SortOrder {
    SortOrder {
        order_id: 7,
        fields: vec![key(1, Transform::Identity, desc, true)],
    }
}

#[tokio::test]
async fn streaming_keeps_one_file_while_batches_stay_in_order() {
    let io = FileIo::memory();
    let order = by_id(true);
    let opts = options().with_sort_order(&order);
    let spec = PartitionSpec::unpartitioned();
    let mut w = DataFileWriter::new(&io, LOCATION, &schema(), &spec, None, &opts).unwrap();
    let mut input = Vec::new();
    // Each batch is reversed within itself, and batches come in descending order.
    for k in (0..5).rev() {
        let mut rows = ordered_rows(k * 10..k * 10 + 10);
        input.extend(rows.clone());
        rows.reverse();
        rows.rotate_left(3);
        w.write(&to_batch(&rows)).await.unwrap();
    }
    let files = w.close().await.unwrap();
    assert_eq!(files.len(), 1, "batches in order need no new file");
    check(&io, &files, &order, &input).await;
    let ids: Vec<i64> = rows_of(&io, &files[0])
        .await
        .iter()
        .map(|r| r.id.unwrap())
        .collect();
    assert_eq!(ids, (0..50).rev().collect::<Vec<_>>());
}

#[tokio::test]
async fn streaming_rolls_to_a_new_file_when_a_batch_goes_back() {
    let io = FileIo::memory();
    let order = by_id(false);
    // A one-byte buffer: every batch is its own run.
    let opts = options().with_sort_order(&order).with_sort_buffer_bytes(1);
    let spec = PartitionSpec::unpartitioned();
    let mut w = DataFileWriter::new(&io, LOCATION, &schema(), &spec, None, &opts).unwrap();
    let batches = [0..10, 10..20, 5..8, 30..40, 40..41, 39..40];
    let mut input = Vec::new();
    for ids in batches {
        let rows = ordered_rows(ids);
        input.extend(rows.clone());
        w.write(&to_batch(&rows)).await.unwrap();
    }
    let files = w.close().await.unwrap();
    // Runs: [0..20], [5..8, 30..41], [39].
    let counts: Vec<i64> = files.iter().map(|f| f.record_count).collect();
    assert_eq!(counts, vec![20, 14, 1]);
    check(&io, &files, &order, &input).await;
}

#[tokio::test]
async fn streaming_sorts_a_buffer_of_unsorted_batches_into_one_run_per_partition() {
    let io = FileIo::memory();
    let order = by_id(true);
    let spec = PartitionSpec::builder(&schema())
        .add("id", Transform::Bucket(3))
        .unwrap()
        .build()
        .unwrap();
    let mut input = Vec::new();
    let batches: Vec<Vec<Row>> = (0..40)
        .map(|k| {
            // Interleaved ids: every batch spans the whole range, in no order.
            let rows: Vec<Row> = ordered_rows(0..25)
                .into_iter()
                .map(|mut r| {
                    r.id = r.id.map(|i| (i * 40 + k * 7) % 1000);
                    r
                })
                .collect();
            input.extend(rows.clone());
            rows
        })
        .collect();
    let write = |buffer: u64| {
        let (io, spec, order, batches) = (io.clone(), spec.clone(), order.clone(), batches.clone());
        async move {
            let opts = options()
                .with_sort_order(&order)
                .with_sort_buffer_bytes(buffer);
            let mut w = DataFileWriter::new(&io, LOCATION, &schema(), &spec, None, &opts).unwrap();
            for b in &batches {
                w.write(&to_batch(b)).await.unwrap();
            }
            w.close().await.unwrap()
        }
    };
    // Everything fits the default buffer: one file per bucket.
    let files = write(options().sort_buffer_bytes).await;
    assert_eq!(files.len(), 3);
    check(&io, &files, &order, &input).await;
    // A buffer of about ten batches: a run per bucket per buffer, not per batch.
    let one_batch = to_batch(&batches[0]).get_array_memory_size() as u64;
    let files = write(10 * one_batch).await;
    assert!(files.len() <= 3 * 4, "{} files", files.len());
    assert!(files.len() > 3, "{} files", files.len());
    check(&io, &files, &order, &input).await;
}

#[tokio::test]
async fn equal_keys_across_batches_do_not_roll() {
    let io = FileIo::memory();
    let order = SortOrder {
        order_id: 2,
        fields: vec![key(1, Transform::Truncate(100), false, false)],
    };
    let opts = options().with_sort_order(&order);
    let spec = PartitionSpec::unpartitioned();
    let mut w = DataFileWriter::new(&io, LOCATION, &schema(), &spec, None, &opts).unwrap();
    // truncate[100] maps every id here to 0: one run however the batches come.
    for ids in [50..60, 0..10, 90..100] {
        w.write(&to_batch(&ordered_rows(ids))).await.unwrap();
    }
    assert_eq!(w.close().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_claimed_order_other_than_the_options_is_refused() {
    let opts = options().with_sort_order(&by_id(false));
    let spec = PartitionSpec::unpartitioned();
    let io = FileIo::memory();
    let err = DataFileWriter::new(&io, LOCATION, &schema(), &spec, Some(3), &opts).unwrap_err();
    assert!(matches!(err, Error::InvalidOption { .. }), "{err}");
    assert!(DataFileWriter::new(&io, LOCATION, &schema(), &spec, Some(7), &opts).is_ok());
}

#[tokio::test]
async fn without_a_sort_order_nothing_is_claimed_or_reordered() {
    let io = FileIo::memory();
    let spec = PartitionSpec::unpartitioned();
    let mut rows = ordered_rows(0..10);
    rows.reverse();
    let files = write_data_files(
        &io,
        LOCATION,
        &[to_batch(&rows)],
        &schema(),
        &spec,
        None,
        &WriteOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(files[0].sort_order_id, None);
    assert_eq!(rows_of(&io, &files[0]).await, rows);
}

/// A file sorted by a uuid claims the order Java checks it in: `UUID.compareTo`, two signed
/// longs, so uuids with byte 0's top bit set come first.
#[tokio::test]
async fn uuid_keys_sort_in_java_order() {
    use iceberg_spec::datum::uuid_order::java_uuid_cmp;
    use iceberg_write::arrow_array::FixedSizeBinaryArray;
    let schema = Schema::new(0, vec![NestedField::optional(1, "u", PrimitiveType::Uuid)]).unwrap();
    let order = SortOrder {
        order_id: 1,
        fields: vec![SortField {
            transform: Transform::Identity,
            source_id: 1,
            direction: SortDirection::Asc,
            null_order: NullOrder::NullsFirst,
        }],
    };
    let values: Vec<u128> = vec![
        0x0000_0000_0000_0001_0000_0000_0000_0000,
        0x8000_0000_0000_0000_0000_0000_0000_0000,
        0x0000_0000_0000_0001_8000_0000_0000_0000,
        0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF,
        0x7FFF_0000_0000_0000_0000_0000_0000_0000,
    ];
    let arrow = Arc::new(arrow_schema(&schema).unwrap());
    let a = FixedSizeBinaryArray::try_from_iter(values.iter().map(|v| v.to_be_bytes())).unwrap();
    let batch = RecordBatch::try_new(arrow, vec![Arc::new(a)]).unwrap();
    let io = FileIo::memory();
    let opts = options().with_sort_order(&order);
    let files = write_data_files(
        &io,
        LOCATION,
        &[batch],
        &schema,
        &PartitionSpec::unpartitioned(),
        None,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(files[0].sort_order_id, Some(1));
    let (batches, _) = read_back(&io, &files[0]).await;
    let got: Vec<uuid::Uuid> = batches
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_fixed_size_binary().clone();
            (0..a.len())
                .map(|i| uuid::Uuid::from_slice(a.value(i)).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut want: Vec<uuid::Uuid> = values.iter().map(|v| uuid::Uuid::from_u128(*v)).collect();
    want.sort_by(java_uuid_cmp);
    assert_eq!(got, want);
    assert_ne!(
        want[0],
        uuid::Uuid::from_u128(values[0]),
        "Java's order is not the unsigned one here"
    );
}
