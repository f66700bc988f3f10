//! Micro benchmarks of the data-file writer: bound truncation (Java's `truncate(16)`), and
//! `write_data_files` of one 131,072-row events batch to `memory://` unpartitioned and under
//! `day`, `bucket[16]` and `identity` specs (the difference is the vectorized transform and
//! the split by partition). Throughput in values or rows per second.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // benchmark setup

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Transform};
use iceberg_write::WriteOptions;
use iceberg_write::arrow_array::builder::{Float64Builder, StringBuilder};
use iceberg_write::arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, TimestampMicrosecondArray,
};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema, TimeUnit};
use iceberg_write::metrics::truncate::{
    truncate_binary_upper, truncate_string_lower, truncate_string_upper,
};

const ROWS: usize = 131_072;
const N: usize = 4_096;

/// SplitMix64: reproducible everywhere.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

fn strings() -> Vec<String> {
    let mut rng = Rng(1);
    (0..N)
        .map(|i| {
            let len = 8 + rng.below(56) as usize;
            let mut s: String = (0..len)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect();
            if i % 4 == 0 {
                s.insert_str(4, "é😀");
            }
            s
        })
        .collect()
}

fn bench_truncate(c: &mut Criterion) {
    let strings = strings();
    let mut g = c.benchmark_group("truncate(16)");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("string lower", |b| {
        b.iter(|| {
            strings
                .iter()
                .map(|s| truncate_string_lower(black_box(s), 16).len())
                .sum::<usize>()
        })
    });
    g.bench_function("string upper", |b| {
        b.iter(|| {
            strings
                .iter()
                .filter_map(|s| truncate_string_upper(black_box(s), 16))
                .map(|s| s.len())
                .sum::<usize>()
        })
    });
    g.bench_function("binary upper", |b| {
        b.iter(|| {
            strings
                .iter()
                .filter_map(|s| truncate_binary_upper(black_box(s.as_bytes()), 16))
                .map(|s| s.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "user_id", PrimitiveType::Long),
            NestedField::optional(4, "category", PrimitiveType::String),
            NestedField::optional(5, "amount", PrimitiveType::Double),
            NestedField::optional(6, "payload", PrimitiveType::String),
            NestedField::optional(7, "qty", PrimitiveType::Int),
        ],
    )
    .unwrap()
}

/// One batch of the events data set of issue 4 (30 days, 50 categories, 1% null amounts).
fn events() -> RecordBatch {
    let mut rng = Rng(2);
    let start = 1_704_067_200_000_000_i64;
    let span = 30 * 86_400_000_000_u64;
    let ts = TimestampMicrosecondArray::from_iter_values(
        (0..ROWS).map(|_| start + rng.below(span) as i64),
    )
    .with_timezone("UTC");
    let user = Int64Array::from_iter_values((0..ROWS).map(|_| rng.below(1_000_000) as i64));
    let mut category = StringBuilder::new();
    let mut amount = Float64Builder::new();
    let mut payload = StringBuilder::new();
    for _ in 0..ROWS {
        category.append_value(format!("category-{:02}", rng.below(50)));
        if rng.below(100) == 0 {
            amount.append_null();
        } else {
            amount.append_value(rng.below(10_000_000) as f64 / 100.0);
        }
        let len = 16 + rng.below(33);
        let p: String = (0..len)
            .map(|_| char::from(b'a' + rng.below(26) as u8))
            .collect();
        payload.append_value(p);
    }
    let qty = Int32Array::from_iter_values((0..ROWS).map(|_| 1 + rng.below(1_000) as i32));
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("user_id", DataType::Int64, true),
        Field::new("category", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
        Field::new("payload", DataType::Utf8, true),
        Field::new("qty", DataType::Int32, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..ROWS as i64)),
        Arc::new(ts),
        Arc::new(user),
        Arc::new(category.finish()),
        Arc::new(amount.finish()),
        Arc::new(payload.finish()),
        Arc::new(qty),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

fn bench_write(c: &mut Criterion) {
    let schema = schema();
    let batch = events();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let specs = [
        ("unpartitioned", PartitionSpec::unpartitioned()),
        (
            "day(ts), 30 partitions",
            PartitionSpec::builder(&schema)
                .add("ts", Transform::Day)
                .unwrap()
                .build()
                .unwrap(),
        ),
        (
            "bucket[16](user_id)",
            PartitionSpec::builder(&schema)
                .add("user_id", Transform::Bucket(16))
                .unwrap()
                .build()
                .unwrap(),
        ),
        (
            "identity(category), 50 partitions",
            PartitionSpec::builder(&schema)
                .add("category", Transform::Identity)
                .unwrap()
                .build()
                .unwrap(),
        ),
    ];
    let options = WriteOptions::default();
    let batches = [batch];
    let mut g = c.benchmark_group("write_data_files 131k rows to memory");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, spec) in &specs {
        g.bench_function(*name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let io = iceberg_io::FileIo::memory();
                    iceberg_write::write_data_files(
                        &io,
                        "memory://wh/db/events",
                        black_box(&batches),
                        &schema,
                        spec,
                        None,
                        &options,
                    )
                    .await
                    .unwrap()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_truncate, bench_write);
criterion_main!(benches);
