//! Micro benchmarks of the per-value spec code: bucket hashing, truncation, time transforms
//! and Appendix-D encoding. Throughput is in values (elements) per second.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iceberg_spec::transform::{
    bucket_i64, bucket_str, micros_to_day, micros_to_hour, truncate_str,
};
use iceberg_spec::{Datum, PrimitiveType, Transform};

const N: usize = 4_096;

fn longs() -> Vec<i64> {
    // A simple LCG: reproducible and spread over the whole range.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..N)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x as i64
        })
        .collect()
}

fn strings() -> Vec<String> {
    longs()
        .iter()
        .map(|v| format!("customer-{v:x}-é-😀-{}", v % 1_000))
        .collect()
}

fn micros() -> Vec<i64> {
    // Timestamps from 1900 to 2100.
    longs()
        .iter()
        .map(|v| v.rem_euclid(6_311_390_400_000_000) - 2_208_988_800_000_000)
        .collect()
}

fn bench_bucket(c: &mut Criterion) {
    let mut g = c.benchmark_group("bucket");
    g.throughput(Throughput::Elements(N as u64));
    let longs = longs();
    g.bench_function("bucket_i64[16]", |b| {
        b.iter(|| {
            longs
                .iter()
                .map(|v| bucket_i64(black_box(*v), 16))
                .sum::<i32>()
        })
    });
    let strings = strings();
    g.bench_function("bucket_str[16]", |b| {
        b.iter(|| {
            strings
                .iter()
                .map(|s| bucket_str(black_box(s), 16))
                .sum::<i32>()
        })
    });
    let datums: Vec<Datum> = longs.iter().map(|v| Datum::Long(*v)).collect();
    g.bench_function("apply_bucket[16]_datum_long", |b| {
        b.iter(|| {
            datums
                .iter()
                .filter_map(|d| Transform::Bucket(16).apply(Some(black_box(d))).ok())
                .count()
        })
    });
    g.finish();
}

fn bench_truncate(c: &mut Criterion) {
    let mut g = c.benchmark_group("truncate");
    g.throughput(Throughput::Elements(N as u64));
    let strings = strings();
    g.bench_function("truncate_str[16]", |b| {
        b.iter(|| {
            strings
                .iter()
                .map(|s| truncate_str(black_box(s), 16).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

fn bench_temporal(c: &mut Criterion) {
    let mut g = c.benchmark_group("temporal");
    g.throughput(Throughput::Elements(N as u64));
    let micros = micros();
    g.bench_function("micros_to_day", |b| {
        b.iter(|| {
            micros
                .iter()
                .map(|v| i64::from(micros_to_day(black_box(*v))))
                .sum::<i64>()
        })
    });
    g.bench_function("micros_to_hour", |b| {
        b.iter(|| {
            micros
                .iter()
                .map(|v| i64::from(micros_to_hour(black_box(*v))))
                .sum::<i64>()
        })
    });
    g.finish();
}

fn bench_appendix_d(c: &mut Criterion) {
    let mut g = c.benchmark_group("appendix_d");
    g.throughput(Throughput::Elements(N as u64));
    let longs: Vec<Datum> = longs().into_iter().map(Datum::Long).collect();
    let decimals: Vec<Datum> = micros()
        .into_iter()
        .map(|v| Datum::Decimal {
            unscaled: i128::from(v),
            precision: 38,
            scale: 4,
        })
        .collect();
    let strings: Vec<Datum> = strings().into_iter().map(Datum::String).collect();
    for (name, ty, values) in [
        ("long", PrimitiveType::Long, &longs),
        (
            "decimal",
            PrimitiveType::Decimal {
                precision: 38,
                scale: 4,
            },
            &decimals,
        ),
        ("string", PrimitiveType::String, &strings),
    ] {
        g.bench_function(format!("encode_{name}"), |b| {
            b.iter(|| {
                values
                    .iter()
                    .map(|d| black_box(d).to_bytes().len())
                    .sum::<usize>()
            })
        });
        let encoded: Vec<Vec<u8>> = values.iter().map(Datum::to_bytes).collect();
        g.bench_function(format!("decode_{name}"), |b| {
            b.iter(|| {
                encoded
                    .iter()
                    .filter(|bytes| Datum::from_bytes(&ty, black_box(bytes)).is_ok())
                    .count()
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_bucket,
    bench_truncate,
    bench_temporal,
    bench_appendix_d
);
criterion_main!(benches);
