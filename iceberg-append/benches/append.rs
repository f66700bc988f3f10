//! Micro benchmarks of the commit layer: manifest encoding (10k entries), manifest-list
//! encoding and decoding, the pure fast-append plan, and `metadata.json` round trips of a
//! table with many snapshots (the per-commit costs that grow with the table). Throughput is
//! in entries, manifests or snapshots per second.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // benchmark setup

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iceberg_append::manifest::{ManifestContext, encode_manifests};
use iceberg_append::manifest_list::{
    ManifestListHeader, decode_manifest_list, encode_manifest_list,
};
use iceberg_append::plan::{AttemptInputs, plan_fast_append};
use iceberg_append::summary::AddedCounts;
use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableIdent,
    commit_fast_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{
    DataFile, Datum, FileFormat, ManifestEntry, PartitionSpec, Schema, TableMetadata, Transform,
};

const DAY_MICROS: i64 = 86_400_000_000;
const FIRST_DAY: i64 = 19_723; // 2024-01-01

/// The events table's schema, as the writer benchmarks write it.
fn schema() -> Schema {
    iceberg_testing::events::iceberg_schema().unwrap()
}

fn spec(schema: &Schema) -> PartitionSpec {
    PartitionSpec::builder(schema)
        .add("ts", Transform::Day)
        .unwrap()
        .build()
        .unwrap()
}

/// A data file with the metrics the writer gives the events table (7 columns).
fn data_file(n: i64) -> DataFile {
    let day = FIRST_DAY + n % 30;
    let records = 100_000 + n % 1_000;
    let bounds = |lower: bool| -> BTreeMap<i32, Vec<u8>> {
        let pick = |lo: Datum, hi: Datum| if lower { lo } else { hi }.to_bytes();
        BTreeMap::from([
            (
                1,
                pick(Datum::Long(n * 200_000), Datum::Long(n * 200_000 + records)),
            ),
            (
                2,
                pick(
                    Datum::Timestamptz(day * DAY_MICROS + n),
                    Datum::Timestamptz((day + 1) * DAY_MICROS - n - 1),
                ),
            ),
            (3, pick(Datum::Long(n % 7), Datum::Long(999_990 + n % 7))),
            (
                4,
                pick(
                    Datum::String("category-00".into()),
                    Datum::String("category-49".into()),
                ),
            ),
            (5, pick(Datum::Double(0.01), Datum::Double(99_999.99))),
            (
                6,
                pick(
                    Datum::String(format!("aaab{n:012}")),
                    Datum::String(format!("zzzy{n:012}")),
                ),
            ),
            (7, pick(Datum::Int(1), Datum::Int(1_000))),
        ])
    };
    let cols = |f: &dyn Fn(i32) -> i64| (1..=7).map(|id| (id, f(id))).collect::<BTreeMap<_, _>>();
    DataFile {
        file_path: format!(
            "memory://wh/db/events/data/ts_day={day}/00000-{n}-3f0c2d5e-8a47-4b1e-9c1d-0f6a2b9e7d41-00001.parquet"
        ),
        file_format: FileFormat::Parquet,
        partition: vec![Some(Datum::Date(day as i32))],
        record_count: records,
        file_size_in_bytes: records * 37,
        column_sizes: cols(&|id| records * 4 + i64::from(id)),
        value_counts: cols(&|_| records),
        null_value_counts: cols(&|id| if id == 5 { records / 100 } else { 0 }),
        nan_value_counts: BTreeMap::from([(5, 0)]),
        lower_bounds: bounds(true),
        upper_bounds: bounds(false),
        split_offsets: Some(vec![4]),
        ..Default::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A `day(ts)` table in memory after `appends` one-file fast appends.
fn table_after(appends: i64) -> (FileIo, TableMetadata) {
    runtime().block_on(async {
        let io = FileIo::memory();
        let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1_000, 7));
        let catalog = InMemoryCatalog::new(io.clone(), env.clone());
        let ident = TableIdent::parse("db.events").unwrap();
        let schema = schema();
        let mut creation = TableCreation::new("memory://wh/db/events", schema.clone());
        creation.spec = spec(&schema);
        catalog.create_table(&ident, creation).await.unwrap();
        for n in 0..appends {
            commit_fast_append(
                &catalog,
                &ident,
                vec![data_file(n)],
                Default::default(),
                env.as_ref(),
            )
            .await
            .unwrap();
        }
        (io, catalog.load_table(&ident).await.unwrap().metadata)
    })
}

fn bench_manifests(c: &mut Criterion) {
    const ENTRIES: usize = 10_000;
    let schema = schema();
    let spec = spec(&schema);
    let entries: Vec<ManifestEntry> = (0..ENTRIES as i64)
        .map(|n| ManifestEntry::added(42, data_file(n)))
        .collect();
    let mut g = c.benchmark_group("encode_manifests");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.sample_size(10);
    for codec in [
        iceberg_spec::AvroCodec::Deflate,
        iceberg_spec::AvroCodec::Uncompressed,
    ] {
        let ctx = ManifestContext {
            version: iceberg_spec::FormatVersion::V2,
            schema: &schema,
            spec: &spec,
            codec,
            marker: [7; 16],
            target_size_bytes: 8 * 1024 * 1024,
            content: iceberg_spec::ManifestContent::Data,
        };
        g.bench_function(format!("10k entries, v2, {codec}"), |b| {
            b.iter(|| {
                encode_manifests(&ctx, 42, black_box(&entries), |i| {
                    format!("memory://wh/db/events/metadata/bench-m{i}.avro")
                })
                .unwrap()
            })
        });
    }
    g.finish();
}

fn bench_manifest_list(c: &mut Criterion) {
    const MANIFESTS: usize = 1_000;
    let schema = schema();
    let spec = spec(&schema);
    let ctx = ManifestContext {
        version: iceberg_spec::FormatVersion::V2,
        schema: &schema,
        spec: &spec,
        codec: iceberg_spec::AvroCodec::Deflate,
        marker: [7; 16],
        target_size_bytes: 8 * 1024 * 1024,
        content: iceberg_spec::ManifestContent::Data,
    };
    // One real manifest row, repeated with distinct paths and sequence numbers.
    let one = encode_manifests(&ctx, 1, &[ManifestEntry::added(1, data_file(1))], |_| {
        "memory://wh/db/events/metadata/m.avro".into()
    })
    .unwrap()
    .remove(0)
    .file;
    let manifests: Vec<_> = (0..MANIFESTS as i64)
        .map(|i| {
            let mut m = one.clone();
            m.manifest_path = format!("memory://wh/db/events/metadata/{i:08}-m0.avro");
            m.sequence_number = i + 1;
            m.min_sequence_number = i + 1;
            m.added_snapshot_id = i;
            m
        })
        .collect();
    let header = ManifestListHeader {
        version: iceberg_spec::FormatVersion::V2,
        snapshot_id: 1,
        parent_snapshot_id: Some(0),
        sequence_number: MANIFESTS as i64 + 1,
        first_row_id: None,
    };
    let path = "memory://wh/db/events/metadata/snap-1-1-x.avro";
    let bytes = encode_manifest_list(
        path,
        &header,
        &manifests,
        iceberg_spec::AvroCodec::Deflate,
        [7; 16],
    )
    .unwrap();
    let mut g = c.benchmark_group("manifest_list");
    g.throughput(Throughput::Elements(MANIFESTS as u64));
    g.bench_function("encode 1k manifests", |b| {
        b.iter(|| {
            encode_manifest_list(
                path,
                &header,
                black_box(&manifests),
                iceberg_spec::AvroCodec::Deflate,
                [7; 16],
            )
        })
    });
    g.bench_function("decode 1k manifests", |b| {
        b.iter(|| decode_manifest_list(path, black_box(&bytes)).unwrap())
    });
    g.finish();
}

fn bench_plan_and_metadata(c: &mut Criterion) {
    let schema = schema();
    let files = vec![data_file(1_000_000)];
    let extra = BTreeMap::new();
    let bases: Vec<(i64, TableMetadata, Vec<_>)> = [1_i64, 1_000]
        .into_iter()
        .map(|snapshots| {
            let (io, base) = table_after(snapshots);
            let list = base
                .current_snapshot()
                .and_then(|s| s.manifest_list.clone());
            let parents: Vec<std::sync::Arc<iceberg_spec::ManifestFile>> = runtime()
                .block_on(iceberg_append::read_manifest_list(&io, list.as_deref()))
                .unwrap()
                .into_iter()
                .map(std::sync::Arc::new)
                .collect();
            (snapshots, base, parents)
        })
        .collect();
    let mut g = c.benchmark_group("plan_fast_append");
    g.throughput(Throughput::Elements(1));
    for (snapshots, base, parent_manifests) in &bases {
        let added = AddedCounts::of(base, &schema, &files).unwrap();
        let new_manifests = vec![iceberg_spec::ManifestFile::clone(&parent_manifests[0])];
        g.bench_function(format!("onto {snapshots} snapshots"), |b| {
            b.iter(|| {
                let inputs = AttemptInputs {
                    snapshot_id: 123_456_789,
                    branch: "main",
                    new_manifests: &new_manifests,
                    parent_manifests,
                    manifests_replaced: 0,
                    added: &added,
                    extra_summary: &extra,
                    manifest_list_path: "memory://wh/db/events/metadata/snap-x.avro".into(),
                    base_location: Some("memory://wh/db/events/metadata/00001-x.metadata.json"),
                    now_ms: 1_800_000_000_000,
                };
                plan_fast_append(black_box(base), &inputs).unwrap()
            })
        });
    }
    g.finish();
    let mut m = c.benchmark_group("metadata_json");
    for (snapshots, base, _) in &bases {
        let json = base.to_json().unwrap();
        m.throughput(Throughput::Bytes(json.len() as u64));
        m.bench_function(format!("to_json, {snapshots} snapshots"), |b| {
            b.iter(|| black_box(base).to_json().unwrap())
        });
        m.bench_function(format!("from_json, {snapshots} snapshots"), |b| {
            b.iter(|| TableMetadata::from_json(black_box(&json)).unwrap())
        });
    }
    m.finish();
}

criterion_group!(
    benches,
    bench_manifests,
    bench_manifest_list,
    bench_plan_and_metadata
);
criterion_main!(benches);
