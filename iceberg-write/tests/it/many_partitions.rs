//! A streaming write over 1,000+ partitions with a small open-file cap: with the spill (the
//! default) every partition gets one file, through local run files that are gone afterwards;
//! without it the cap decides when files are closed. Either way every row is in the file of
//! its partition, and none is lost or duplicated.
//!
//! The public API does not say how many files are open, and an upload only starts when a
//! file is closed (parquet buffers the row groups of a small file), so the store cannot
//! count open files either. The cap is checked through the files made: closed while a batch
//! is written, and exactly as many as LRU eviction under the cap makes for a known sequence.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_io::object_store::memory::InMemory;
use iceberg_io::testing::{FaultInjectingStore, OpKind};
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{Datum, PartitionSpec, Schema, Transform};
use iceberg_write::DataFileWriter;
use iceberg_write::arrow_array::cast::AsArray;
use iceberg_write::arrow_array::types::Int64Type;
use iceberg_write::arrow_array::{Int64Array, StringArray};
use iceberg_write::arrow_schema::{DataType, Field};

use crate::common::*;

const BUCKETS: u32 = 1100;
const CAP: usize = 16;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "payload", PrimitiveType::String),
        ],
    )
    .unwrap()
}

/// A batch of `id` (int64) and `payload` (string) columns.
fn id_payload_batch(
    ids: Vec<i64>,
    payloads: Vec<String>,
) -> iceberg_write::arrow_array::RecordBatch {
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("payload", DataType::Utf8, true),
        ],
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(payloads)),
        ],
    )
}

/// Objects made so far: single puts and completed multipart uploads.
fn objects(store: &FaultInjectingStore) -> usize {
    store.count(OpKind::Put) + store.count(OpKind::CompleteMultipart)
}

/// Writes two batches that each touch 1,000+ of 1,100 buckets under a cap of 16; returns the
/// files, the partitions seen, and how many files each batch's write had closed.
async fn write_1100_buckets(
    opts: iceberg_write::WriteOptions,
) -> (
    Vec<iceberg_spec::DataFile>,
    BTreeSet<i32>,
    Vec<(usize, usize)>,
) {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("id", Transform::Bucket(BUCKETS))
        .unwrap()
        .build()
        .unwrap();
    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();

    let mut closed_per_batch = Vec::new();
    let batches = 2i64;
    let rows_per_batch = 8 * i64::from(BUCKETS);
    for b in 0..batches {
        let ids: Vec<i64> = (b * rows_per_batch..(b + 1) * rows_per_batch).collect();
        let payloads: Vec<String> = ids.iter().map(|i| format!("row-{i}")).collect();
        let touched: HashSet<Option<Datum>> = ids
            .iter()
            .map(|i| {
                Transform::Bucket(BUCKETS)
                    .apply(Some(&Datum::long(*i)))
                    .unwrap()
            })
            .collect();
        assert!(
            touched.len() >= 1000,
            "batch {b}: {} buckets",
            touched.len()
        );
        let batch = id_payload_batch(ids, payloads);
        let before = objects(&store);
        w.write(&batch).await.unwrap();
        closed_per_batch.push((objects(&store) - before, touched.len()));
    }
    let files = w.close().await.unwrap();
    assert_eq!(objects(&store), files.len());

    // Every row once, each in the file of its bucket.
    let mut partitions = BTreeSet::new();
    let mut seen = HashSet::new();
    for f in &files {
        let Some(Datum::Int(bucket)) = f.partition[0].clone() else {
            panic!("bucket partition value of {}", f.file_path);
        };
        assert!(
            f.file_path.contains(&format!("/data/id_bucket={bucket}/")),
            "{}",
            f.file_path
        );
        partitions.insert(bucket);
        let (read, _) = read_back(&io, f).await;
        let mut n = 0;
        for rb in &read {
            let ids = rb.column(0).as_primitive::<Int64Type>();
            let payloads = rb.column(1).as_string::<i32>();
            for (i, id) in ids.values().iter().enumerate() {
                let expect = Transform::Bucket(BUCKETS)
                    .apply(Some(&Datum::long(*id)))
                    .unwrap();
                assert_eq!(
                    expect,
                    Some(Datum::Int(bucket)),
                    "row {id} in {}",
                    f.file_path
                );
                assert!(seen.insert(*id), "row {id} twice");
                assert_eq!(payloads.value(i), format!("row-{id}"));
                n += 1;
            }
        }
        assert_eq!(n, f.record_count, "{}", f.file_path);
    }
    assert_eq!(seen.len() as i64, batches * rows_per_batch);
    assert!(partitions.len() >= 1000, "{} partitions", partitions.len());
    (files, partitions, closed_per_batch)
}

#[tokio::test]
async fn bucket_1100_under_a_cap_of_16_spills_to_one_file_per_partition() {
    let spill_parent = tempfile::tempdir().unwrap();
    // A small memory budget, so that most rows go through run files.
    let opts = options()
        .with_max_open_files(CAP)
        .with_spill_buffer_bytes(64 * 1024)
        .with_spill_dir(spill_parent.path());
    let (files, partitions, _) = write_1100_buckets(opts).await;
    assert_eq!(files.len(), partitions.len(), "one file per partition");
    assert_eq!(
        std::fs::read_dir(spill_parent.path()).unwrap().count(),
        0,
        "nothing is left in the spill folder"
    );
}

#[tokio::test]
async fn bucket_1100_under_a_cap_of_16_without_spill_closes_as_it_goes() {
    let opts = options().with_max_open_files(CAP).with_spill_enabled(false);
    let (files, partitions, closed_per_batch) = write_1100_buckets(opts).await;
    // Files are closed while a batch is written, not held until `close()`: all but at most
    // `CAP` of the batch's partitions are already in the store.
    for (b, (closed, touched)) in closed_per_batch.into_iter().enumerate() {
        assert!(
            closed >= touched - CAP,
            "batch {b} closed {closed} files for {touched} partitions"
        );
    }
    // The second batch reopens every partition but at most the `CAP` still open.
    assert!(
        files.len() >= partitions.len() * 2 - CAP,
        "{} files for {} partitions",
        files.len(),
        partitions.len()
    );
}

/// Batches of one row, cycling `rounds` times through partitions `0..partitions`: the number
/// of files the writer makes under a cap of `CAP`.
async fn files_for_cycle(partitions: i64, rounds: i64, spill: bool) -> usize {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("id", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let io = FileIo::memory();
    let opts = options().with_max_open_files(CAP).with_spill_enabled(spill);
    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
    for _ in 0..rounds {
        for p in 0..partitions {
            let b = batch(
                vec![Field::new("id", DataType::Int64, false)],
                vec![Arc::new(Int64Array::from(vec![p]))],
            );
            w.write(&b).await.unwrap();
        }
    }
    let files = w.close().await.unwrap();
    assert_eq!(
        files.iter().map(|f| f.record_count).sum::<i64>(),
        partitions * rounds
    );
    files.len()
}

#[tokio::test]
async fn open_file_cap_is_exact_under_lru() {
    // 16 partitions in a cycle fit under a cap of 16: one file each, whatever the rounds.
    assert_eq!(files_for_cycle(CAP as i64, 3, false).await, CAP);
    // 17 do not: LRU eviction closes exactly the partition needed next, so every visit
    // opens a new file. A writer that kept 17 files open would make only 17.
    assert_eq!(
        files_for_cycle(CAP as i64 + 1, 3, false).await,
        3 * (CAP + 1)
    );
}

#[tokio::test]
async fn with_the_spill_any_cycle_makes_one_file_per_partition() {
    for partitions in [CAP as i64, CAP as i64 + 1, 10 * CAP as i64] {
        assert_eq!(
            files_for_cycle(partitions, 3, true).await,
            partitions as usize,
            "{partitions} partitions"
        );
    }
}

/// 40 batches of 2,000 rows with a 20-byte payload each.
async fn fill_40_batches(w: &mut DataFileWriter) {
    for b in 0..40i64 {
        let ids: Vec<i64> = (b * 2000..(b + 1) * 2000).collect();
        let payloads: Vec<String> = ids.iter().map(|i| format!("payload-{i:>12}")).collect();
        w.write(&id_payload_batch(ids, payloads)).await.unwrap();
    }
}

/// A spilled partition larger than the target file size rolls into several files, each
/// about the target, and a writer that is aborted or dropped leaves no spill file behind.
#[tokio::test]
async fn spilled_partitions_roll_at_the_target_and_abort_or_drop_leave_nothing() {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("id", Transform::Bucket(4))
        .unwrap()
        .build()
        .unwrap();
    let spill_parent = tempfile::tempdir().unwrap();
    let opts = options()
        .with_max_open_files(1)
        .with_spill_buffer_bytes(16 * 1024)
        .with_spill_dir(spill_parent.path())
        .with_target_file_size_bytes(64 * 1024);
    let io = FileIo::memory();
    let spilled = || std::fs::read_dir(spill_parent.path()).unwrap().count();

    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
    fill_40_batches(&mut w).await;
    assert_eq!(spilled(), 1, "a run folder while writing");
    let files = w.close().await.unwrap();
    assert_eq!(spilled(), 0);
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 80_000);
    let per_partition = files.len() as f64 / 4.0;
    assert!(
        per_partition >= 2.0,
        "{} files: large partitions roll",
        files.len()
    );
    for f in &files {
        assert!(
            f.file_size_in_bytes < 3 * 64 * 1024,
            "{} bytes",
            f.file_size_in_bytes
        );
    }

    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
    fill_40_batches(&mut w).await;
    assert_eq!(spilled(), 1);
    w.abort().await.unwrap();
    assert_eq!(spilled(), 0, "abort");

    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
    fill_40_batches(&mut w).await;
    drop(w);
    // A run still being written keeps the folder until its task ends.
    for _ in 0..500 {
        if spilled() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(spilled(), 0, "drop");
}

mod laws {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Any stream of batches over any number of partitions, under any cap and spill
        /// budget: every row is written once, into the file of its partition, and each
        /// partition has one file (the target size is far away).
        #[test]
        fn spilled_writes_keep_every_row_once_in_one_file_per_partition(
            parts in proptest::collection::vec(
                proptest::collection::vec(0i64..40, 1..200),
                1..8,
            ),
            cap in 1usize..6,
            budget in 64u64..20_000,
        ) {
            let schema = schema();
            let spec = PartitionSpec::builder(&schema)
                .add("id", Transform::Identity)
                .unwrap()
                .build()
                .unwrap();
            let spill_parent = tempfile::tempdir().unwrap();
            let opts = options()
                .with_max_open_files(cap)
                .with_spill_buffer_bytes(budget)
                .with_spill_dir(spill_parent.path());
            let io = FileIo::memory();
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (files, written) = runtime.block_on(async {
                let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts)
                    .unwrap();
                let mut written: Vec<i64> = Vec::new();
                for ids in &parts {
                    // The payload tells rows of one partition apart.
                    let payloads: Vec<String> = ids
                        .iter()
                        .map(|i| format!("{i}-{}", written.len()))
                        .collect();
                    written.extend(ids);
                    w.write(&id_payload_batch(ids.clone(), payloads)).await.unwrap();
                }
                (w.close().await.unwrap(), written)
            });
            prop_assert_eq!(std::fs::read_dir(spill_parent.path()).unwrap().count(), 0);
            let distinct: BTreeSet<i64> = written.iter().copied().collect();
            prop_assert_eq!(files.len(), distinct.len(), "one file per partition");
            let mut seen = Vec::new();
            for f in &files {
                let (read, _) = runtime.block_on(read_back(&io, f));
                for rb in &read {
                    let ids = rb.column(0).as_primitive::<Int64Type>();
                    for id in ids.values().iter() {
                        prop_assert_eq!(f.partition[0].clone(), Some(Datum::long(*id)));
                        seen.push(*id);
                    }
                }
            }
            seen.sort_unstable();
            let mut expected = written;
            expected.sort_unstable();
            prop_assert_eq!(seen, expected);
        }
    }
}
