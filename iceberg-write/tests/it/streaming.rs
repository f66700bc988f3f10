//! The streaming DataFileWriter: files kept open across batches, rolling, open-file cap, abort.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{PartitionSpec, Schema, Transform};
use iceberg_write::arrow_array::{Int64Array, RecordBatch};
use iceberg_write::arrow_schema::{DataType, Field};
use iceberg_write::{DataFileWriter, Error};

use crate::common::*;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "p", PrimitiveType::Long),
        ],
    )
    .unwrap()
}

/// Identity-partitioned by `p`.
fn by_p(schema: &Schema) -> PartitionSpec {
    PartitionSpec::builder(schema)
        .add("p", Transform::Identity)
        .unwrap()
        .build()
        .unwrap()
}

fn rows(ids: std::ops::Range<i64>, p: impl Fn(i64) -> i64) -> RecordBatch {
    let ids: Vec<i64> = ids.collect();
    let ps: Vec<i64> = ids.iter().map(|i| p(*i)).collect();
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("p", DataType::Int64, true),
        ],
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(Int64Array::from(ps)),
        ],
    )
}

#[tokio::test]
async fn one_file_per_partition_across_batches() {
    let schema = schema();
    let spec = by_p(&schema);
    let io = FileIo::memory();
    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &options()).unwrap();
    for k in 0..4 {
        w.write(&rows(k * 10..k * 10 + 10, |i| i % 2))
            .await
            .unwrap();
    }
    let files = w.close().await.unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 40);
}

#[tokio::test]
async fn rolls_at_target_size() {
    let schema = schema();
    let io = FileIo::memory();
    let opts = options().with_target_file_size_bytes(1);
    let mut w = DataFileWriter::new(
        &io,
        LOCATION,
        &schema,
        &PartitionSpec::unpartitioned(),
        None,
        &opts,
    )
    .unwrap();
    w.write(&rows(0..10_000, |_| 0)).await.unwrap();
    let files = w.close().await.unwrap();
    assert_eq!(
        files.len(),
        3,
        "4096-row chunks, each over the 1-byte target"
    );
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 10_000);
    assert!(
        files[0].file_path.ends_with("-00001.parquet")
            && files[2].file_path.ends_with("-00003.parquet")
    );
    for f in &files {
        read_back(&io, f).await;
    }
}

#[tokio::test]
async fn open_file_cap_closes_least_recently_used() {
    let schema = schema();
    let spec = by_p(&schema);
    let io = FileIo::memory();
    // Without the spill (which would keep partition 1 for the end: two files).
    let opts = options().with_max_open_files(1).with_spill_enabled(false);
    let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
    w.write(&rows(0..4, |i| i % 2)).await.unwrap();
    w.write(&rows(4..8, |i| i % 2)).await.unwrap();
    let files = w.close().await.unwrap();
    assert_eq!(
        files.len(),
        4,
        "each batch reopens both partitions under a cap of one"
    );
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 8);
}

#[tokio::test]
async fn abort_deletes_everything_and_bad_batches_keep_writer_usable() {
    let schema = schema();
    let io = FileIo::memory();
    let opts = options().with_target_file_size_bytes(1);
    let mut w = DataFileWriter::new(
        &io,
        LOCATION,
        &schema,
        &PartitionSpec::unpartitioned(),
        None,
        &opts,
    )
    .unwrap();
    w.write(&rows(0..5000, |_| 0)).await.unwrap();
    let bad = batch(
        vec![Field::new("p", DataType::Int64, true)],
        vec![Arc::new(Int64Array::from(vec![1]))],
    );
    assert!(matches!(
        w.write(&bad).await,
        Err(Error::MissingColumn { .. })
    ));
    w.write(&rows(0..10, |_| 0)).await.unwrap();
    assert!(!io.list(LOCATION).await.unwrap().is_empty());
    w.abort().await.unwrap();
    assert!(io.list(LOCATION).await.unwrap().is_empty());
}

#[tokio::test]
async fn futures_are_send_so_writers_can_be_spawned() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    let schema = schema();
    let io = FileIo::memory();
    let b = rows(0..3, |_| 0);
    let spec = PartitionSpec::unpartitioned();
    let opts = options();
    let mut w =
        assert_send(DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap());
    assert_send(w.write(&b)).await.unwrap();
    assert_eq!(assert_send(w.close()).await.unwrap().len(), 1);
    let batches = [b];
    let files = assert_send(iceberg_write::write_data_files(
        &io, LOCATION, &batches, &schema, &spec, None, &opts,
    ));
    assert_eq!(files.await.unwrap().len(), 1);
}

/// Open files share `write.buffer-size-bytes`: past it the largest buffered row group is
/// written out early, so eight open partitions cannot each hold a full row group; every row
/// still lands once, and the early row groups show in the split offsets.
#[tokio::test]
async fn open_files_share_one_row_group_budget() {
    let schema = schema();
    let spec = by_p(&schema);
    let write = |budget: u64| {
        let (schema, spec) = (schema.clone(), spec.clone());
        async move {
            let io = FileIo::memory();
            let opts = options().with_buffer_size_bytes(budget);
            let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, &opts).unwrap();
            for k in 0..20 {
                w.write(&rows(k * 5_000..(k + 1) * 5_000, |i| i % 8))
                    .await
                    .unwrap();
            }
            (io, w.close().await.unwrap())
        }
    };
    let (_, roomy) = write(1 << 30).await;
    assert_eq!(roomy.len(), 8);
    for f in &roomy {
        assert_eq!(
            f.split_offsets.as_ref().map(Vec::len),
            Some(1),
            "one row group"
        );
    }
    let (io, tight) = write(64 * 1024).await;
    assert_eq!(tight.len(), 8, "still one file per partition");
    let mut ids = Vec::new();
    for f in &tight {
        let groups = f.split_offsets.as_ref().map_or(0, Vec::len);
        assert!(groups > 1, "{}: {groups} row group(s)", f.file_path);
        let (batches, meta) = read_back(&io, f).await;
        assert_eq!(meta.num_row_groups(), groups);
        for b in batches {
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(col.values().iter().copied());
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..100_000).collect::<Vec<i64>>());
}

/// Files under `dir`, recursively (none when it does not exist).
fn files_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

/// A writer dropped mid-write (a timeout, a cancelled task) leaves no file under the table:
/// files already finished, and those finishing in the background, are deleted once their
/// closes are done.
#[tokio::test]
async fn a_writer_dropped_mid_write_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}/t", dir.path().display());
    let io = FileIo::from_location(&location, &Default::default()).unwrap();
    let schema = schema();
    let spec = by_p(&schema);
    // Every 4,096-row chunk fills a file: files close while the batches are written.
    let opts = options().with_target_file_size_bytes(1);
    let mut w = DataFileWriter::new(&io, &location, &schema, &spec, None, &opts).unwrap();
    for k in 0..5 {
        w.write(&rows(k * 10_000..(k + 1) * 10_000, |i| i % 3))
            .await
            .unwrap();
    }
    let data = dir.path().join("t/data");
    assert!(
        files_under(&data) > 0,
        "files were finished before the drop"
    );
    drop(w);
    for _ in 0..250 {
        if files_under(&data) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(files_under(&data), 0, "no file outlives a dropped writer");
}
