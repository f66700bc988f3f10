//! Row groups encoded column by column in tasks (in step, then streamed): whatever the
//! runtime and its thread count, a file's bytes are the same, every row is there in order,
//! and row groups respect the row limit.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::{ListType, NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg_write::arrow_array::builder::{ListBuilder, StringBuilder};
use iceberg_write::arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use iceberg_write::arrow_schema::{DataType, Field};
use iceberg_write::{DataFileWriter, WriteOptions};

use proptest::prelude::*;

use crate::common::{LOCATION, batch, options, read_back};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "text", PrimitiveType::String),
            NestedField::optional(3, "x", PrimitiveType::Double),
            NestedField::optional(
                4,
                "tags",
                Type::List(ListType::new(5, PrimitiveType::String, false)),
            ),
        ],
    )
    .unwrap()
}

/// `n` rows from `start`: ids, text of varying length (some null), doubles with zeros and
/// nulls, and lists.
fn rows(start: i64, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (start..start + n as i64).collect();
    let mut text = StringBuilder::new();
    let mut tags = ListBuilder::new(StringBuilder::new());
    for &i in &ids {
        if i % 11 == 0 {
            text.append_null();
        } else {
            text.append_value(format!("{i:x}-{}", "z".repeat((i % 37) as usize)));
        }
        for k in 0..(i % 3) {
            tags.values().append_value(format!("t{}", (i + k) % 5));
        }
        tags.append(i % 7 != 0);
    }
    let x: Float64Array = ids
        .iter()
        .map(|&i| (i % 5 != 0).then(|| if i % 4 == 0 { 0.0 } else { i as f64 / 3.0 }))
        .collect();
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
            Field::new(
                "tags",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ],
        vec![
            Arc::new(Int64Array::from(ids)) as ArrayRef,
            Arc::new(text.finish()),
            Arc::new(x),
            Arc::new(tags.finish()),
        ],
    )
}

/// The batches, split at `sizes` (cycled) until `total` rows.
fn batches(total: usize, sizes: &[usize]) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    let mut start = 0;
    for size in sizes.iter().cycle() {
        if start >= total {
            break;
        }
        let n = (*size).max(1).min(total - start);
        out.push(rows(start as i64, n));
        start += n;
    }
    out
}

/// Every file's bytes, written through one streaming writer on a runtime with `threads`
/// workers (0: a current-thread runtime).
fn write_on(threads: usize, input: &[RecordBatch], limits: (usize, u64)) -> Vec<Vec<u8>> {
    write_partitioned_on(threads, input, limits, None)
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect()
}

/// Every file (path and bytes), written through one streaming writer on a runtime with
/// `threads` workers (0: a current-thread runtime), partitioned by `bucket(n, id)` under
/// `max_open_files` when `buckets` gives both.
fn write_partitioned_on(
    threads: usize,
    input: &[RecordBatch],
    limits: (usize, u64),
    buckets: Option<(u32, usize)>,
) -> Vec<(String, Vec<u8>)> {
    // Fresh options per run: clones share one file counter, which would rename the files.
    let mut options = row_group_options(limits.0, limits.1);
    if let Some((_, max_open)) = buckets {
        options.max_open_files = max_open;
    }
    let options = &options;
    let runtime = match threads {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    }
    .unwrap();
    runtime.block_on(async {
        let io = FileIo::from_location("memory://wh", &Default::default()).unwrap();
        let schema = schema();
        let spec = match buckets {
            Some((n, _)) => PartitionSpec::builder(&schema)
                .add("id", Transform::Bucket(n))
                .unwrap()
                .build()
                .unwrap(),
            None => PartitionSpec::unpartitioned(),
        };
        let mut w = DataFileWriter::new(&io, LOCATION, &schema, &spec, None, options).unwrap();
        for b in input {
            w.write(b).await.unwrap();
        }
        let files = w.close().await.unwrap();
        let mut out = Vec::new();
        let mut ids = Vec::new();
        for f in &files {
            let (read, meta) = read_back(&io, f).await;
            for rg in meta.row_groups() {
                assert!(
                    rg.num_rows() as usize <= options.row_group_size_rows,
                    "row group of {} rows",
                    rg.num_rows()
                );
            }
            for b in read {
                let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                ids.extend(col.values().iter().copied());
            }
            out.push((
                f.file_path.clone(),
                io.read(&f.file_path).await.unwrap().to_vec(),
            ));
        }
        let total: usize = input.iter().map(RecordBatch::num_rows).sum();
        if buckets.is_some() {
            ids.sort_unstable();
        }
        assert_eq!(
            ids,
            (0..total as i64).collect::<Vec<_>>(),
            "every row once, in order"
        );
        out
    })
}

fn row_group_options(rows: usize, bytes: u64) -> WriteOptions {
    let mut o = options();
    o.row_group_size_rows = rows;
    o.row_group_size_bytes = bytes;
    o
}

#[test]
fn bytes_do_not_depend_on_the_runtime_or_its_threads() {
    // 400k rows in batches of varied sizes: the first row group is encoded in step, the
    // rest streamed (several in flight on a multi-threaded runtime).
    let input = batches(400_000, &[70_000, 3, 20_000, 131_072]);
    let limits = (60_000, 1 << 30);
    let one = write_on(0, &input, limits);
    assert_eq!(one.len(), 1);
    for threads in [1, 2, 4] {
        let other = write_on(threads, &input, limits);
        assert!(other == one, "{threads} threads: other bytes");
    }
}

#[test]
fn the_byte_limit_cuts_streamed_row_groups_too() {
    let input = batches(300_000, &[50_000]);
    let limits = (1_000_000, 1 << 19);
    let files = write_on(2, &input, limits);
    let meta = iceberg_write::parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(
        files[0].clone(),
    ))
    .map(|r| iceberg_write::parquet::file::reader::FileReader::metadata(&r).clone())
    .unwrap();
    let groups = meta.row_groups();
    assert!(groups.len() >= 4, "{} row groups", groups.len());
    // Streamed groups are cut by the measured row size: none is more than twice the limit.
    for g in groups {
        assert!(
            g.compressed_size() < 2 << 19,
            "a row group of {} bytes",
            g.compressed_size()
        );
    }
    assert!(
        files == write_on(0, &input, limits),
        "other bytes on one thread"
    );
}

#[test]
fn partitioned_files_do_not_depend_on_the_runtime_either() {
    // 6 buckets under 4 open files: rounds left running between writes, rolls, the spill,
    // and files past their first row group all meet.
    let input = batches(200_000, &[9_000, 40_000, 1]);
    let one = write_partitioned_on(0, &input, (10_000, 1 << 30), Some((6, 4)));
    assert_eq!(one.len(), 6, "one file per bucket");
    for threads in [1, 2, 3] {
        let other = write_partitioned_on(threads, &input, (10_000, 1 << 30), Some((6, 4)));
        let same = other == one;
        assert!(same, "{threads} threads: other files or bytes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn any_batches_and_limits_give_the_same_file_on_any_runtime(
        total in 1usize..120_000,
        sizes in prop::collection::vec(1usize..40_000, 1..5),
        group_rows in 1_000usize..70_000,
        group_bytes in prop::sample::select(vec![64u64 << 10, 512 << 10, 1 << 30]),
    ) {
        let input = batches(total, &sizes);
        let limits = (group_rows, group_bytes);
        let one = write_on(0, &input, limits);
        prop_assert!(write_on(2, &input, limits) == one, "other bytes on two threads");
    }
}
