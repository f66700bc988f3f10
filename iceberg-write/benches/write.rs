//! Micro benchmarks of the data-file writer: bound truncation (Java's `truncate(16)`), and
//! `write_data_files` of one 131,072-row events batch to `memory://` unpartitioned and under
//! `day`, `bucket[16]` and `identity` specs (the difference is the vectorized transform and
//! the split by partition). Throughput in values or rows per second.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // benchmark setup

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iceberg_spec::{PartitionSpec, Transform};
use iceberg_testing::events::{self, SplitMix64};
use iceberg_write::WriteOptions;
use iceberg_write::metrics::truncate::{
    truncate_binary_upper, truncate_string_lower, truncate_string_upper,
};

/// One batch of the events data set.
const ROWS: usize = events::BATCH_ROWS;
const N: usize = 4_096;

fn strings() -> Vec<String> {
    let mut rng = SplitMix64::new(1);
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

fn bench_write(c: &mut Criterion) {
    let schema = events::iceberg_schema().unwrap();
    let batch = events::generate(ROWS).unwrap().remove(0);
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
