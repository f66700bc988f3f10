//! A streaming write over 1,000+ partitions with a small open-file cap: the cap is what
//! decides when files are closed, every row is in the file of its partition, and none is
//! lost or duplicated.
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

/// Objects made so far: single puts and completed multipart uploads.
fn objects(store: &FaultInjectingStore) -> usize {
    store.count(OpKind::Put) + store.count(OpKind::CompleteMultipart)
}

#[tokio::test]
async fn bucket_1100_under_a_cap_of_16_closes_as_it_goes_and_rows_land_in_their_partition() {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("id", Transform::Bucket(BUCKETS))
        .unwrap()
        .build()
        .unwrap();
    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
    let opts = options().with_max_open_files(CAP);
    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();

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
        let batch = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("payload", DataType::Utf8, true),
            ],
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(payloads)),
            ],
        );
        let before = objects(&store);
        w.write(&batch).await.unwrap();
        // Files are closed while the batch is written, not held until `close()`: all but at
        // most `CAP` of the batch's partitions are already in the store.
        let closed = objects(&store) - before;
        assert!(
            closed >= touched.len() - CAP,
            "batch {b} closed {closed} files for {} partitions",
            touched.len()
        );
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
async fn files_for_cycle(partitions: i64, rounds: i64) -> usize {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("id", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let io = FileIo::memory();
    let opts = options().with_max_open_files(CAP);
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
    assert_eq!(files_for_cycle(CAP as i64, 3).await, CAP);
    // 17 do not: LRU eviction closes exactly the partition needed next, so every visit
    // opens a new file. A writer that kept 17 files open would make only 17.
    assert_eq!(files_for_cycle(CAP as i64 + 1, 3).await, 3 * (CAP + 1));
}
