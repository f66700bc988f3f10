//! Partitioned writes: one file per partition tuple, Java-style paths, partition datums.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{Datum, PartitionSpec, Schema, Transform};
use iceberg_write::arrow_array::{Array, Int64Array, StringArray, TimestampMicrosecondArray};
use iceberg_write::arrow_schema::{DataType, Field, TimeUnit};
use iceberg_write::write_data_files;

use crate::common::*;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "cat", PrimitiveType::String),
            NestedField::optional(3, "ts", PrimitiveType::Timestamptz),
        ],
    )
    .unwrap()
}

fn input() -> iceberg_write::arrow_array::RecordBatch {
    // 2017-11-16T22:31:08Z and one µs before the epoch.
    let t = 1_510_871_468_000_000i64;
    batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("cat", DataType::Utf8, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
        ],
        vec![
            Arc::new(Int64Array::from(vec![34, 1, 2, 3, 4])),
            Arc::new(StringArray::from(vec![
                Some("a b/c"),
                Some("x"),
                None,
                Some("a b/c"),
                Some("x"),
            ])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(t),
                    Some(-1),
                    None,
                    Some(t + 1),
                    Some(t),
                ])
                .with_timezone("UTC"),
            ),
        ],
    )
}

#[tokio::test]
async fn identity_partitions_one_file_each() {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .with_spec_id(3)
        .add("cat", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let io = FileIo::memory();
    let files = write_data_files(
        &io,
        LOCATION,
        &[input()],
        &schema,
        &spec,
        Some(1),
        &options(),
    )
    .await
    .unwrap();
    assert_eq!(files.len(), 3);
    let by_value: Vec<(Option<Datum>, i64, &str)> = files
        .iter()
        .map(|f| (f.partition[0].clone(), f.record_count, f.file_path.as_str()))
        .collect();
    assert_eq!(by_value[0].0, Some(Datum::String("a b/c".into())));
    assert_eq!(by_value[0].1, 2);
    assert!(
        by_value[0]
            .2
            .starts_with("memory://wh/db/t/data/cat=a+b%2Fc/00000-0-"),
        "{}",
        by_value[0].2
    );
    assert_eq!(
        (by_value[1].0.clone(), by_value[1].1),
        (Some(Datum::String("x".into())), 2)
    );
    assert_eq!((by_value[2].0.clone(), by_value[2].1), (None, 1));
    assert!(by_value[2].2.contains("/data/cat=null/"));
    for f in &files {
        assert_eq!(f.spec_id, 3);
        assert_eq!(f.sort_order_id, Some(1));
        let (batches, _) = read_back(&io, f).await;
        assert_eq!(
            batches.iter().map(|b| b.num_rows() as i64).sum::<i64>(),
            f.record_count
        );
    }
    let names: std::collections::BTreeSet<&str> =
        files.iter().map(|f| f.file_path.as_str()).collect();
    assert_eq!(names.len(), 3, "unique names");
}

#[tokio::test]
async fn transforms_partition_rows() {
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)
        .unwrap()
        .add("id", Transform::Bucket(16))
        .unwrap()
        .build()
        .unwrap();
    let io = FileIo::memory();
    let files = write(&io, &[input()], &schema, &spec, &options()).await;
    let paths: Vec<String> = files
        .iter()
        .map(|f| {
            f.file_path
                .trim_start_matches("memory://wh/db/t/data/")
                .rsplit_once('/')
                .unwrap()
                .0
                .to_string()
        })
        .collect();
    // id 34 → bucket 3 (spec vector); the day of 2017-11-16T22:31:08Z.
    assert_eq!(paths[0], "ts_day=2017-11-16/id_bucket=3");
    assert_eq!(
        files[0].partition,
        vec![Some(Datum::Date(17486)), Some(Datum::Int(3))]
    );
    assert!(paths.iter().any(|p| p.starts_with("ts_day=1969-12-31/")));
    assert!(paths.iter().any(|p| p.starts_with("ts_day=null/")));
    let total: i64 = files.iter().map(|f| f.record_count).sum();
    assert_eq!(total, 5);
    assert!(files.iter().all(|f| f.partition.len() == 2));
}

#[tokio::test]
async fn partition_source_inside_a_struct() {
    use iceberg_spec::types::{StructType, Type};
    use iceberg_write::arrow_array::{ArrayRef, StructArray};
    let schema = Schema::new(
        0,
        vec![NestedField::optional(
            1,
            "s",
            Type::Struct(StructType::new(vec![NestedField::optional(
                2,
                "k",
                PrimitiveType::Long,
            )])),
        )],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("s.k", Transform::Truncate(10))
        .unwrap()
        .build()
        .unwrap();
    let s = StructArray::try_new(
        vec![Field::new("k", DataType::Int64, true)].into(),
        vec![Arc::new(Int64Array::from(vec![11, 19, 5, 12])) as ArrayRef],
        Some(vec![true, true, true, false].into()),
    )
    .unwrap();
    let b = batch(
        vec![Field::new("s", s.data_type().clone(), true)],
        vec![Arc::new(s)],
    );
    let io = FileIo::memory();
    let files = write(&io, &[b], &schema, &PartitionSpec::clone(&spec), &options()).await;
    let parts: Vec<(Option<Datum>, i64)> = files
        .iter()
        .map(|f| (f.partition[0].clone(), f.record_count))
        .collect();
    assert_eq!(
        parts,
        vec![
            (Some(Datum::Long(10)), 2),
            (Some(Datum::Long(0)), 1),
            (None, 1)
        ],
        "null struct → null"
    );
    assert!(
        files[0].file_path.contains("/data/s.k_trunc=10/"),
        "{}",
        files[0].file_path
    );
}

#[tokio::test]
async fn repeated_writes_with_the_same_options_never_reuse_a_name() {
    let schema = schema();
    let io = FileIo::memory();
    let opts = options();
    let a = write(
        &io,
        &[input()],
        &schema,
        &PartitionSpec::unpartitioned(),
        &opts,
    )
    .await;
    let b = write(
        &io,
        &[input()],
        &schema,
        &PartitionSpec::unpartitioned(),
        &opts.clone(),
    )
    .await;
    assert_ne!(a[0].file_path, b[0].file_path);
    assert_eq!(io.list(LOCATION).await.unwrap().len(), 2);
}

#[tokio::test]
async fn io_failure_deletes_files_already_written() {
    use iceberg_io::object_store::memory::InMemory;
    use iceberg_io::testing::FaultInjectingStore;
    use iceberg_write::Error;

    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let io = FileIo::with_store("memory://wh", Arc::new(store.clone()));
    store.fail_puts_matching("cat=x/");
    let schema = schema();
    let spec = PartitionSpec::builder(&schema)
        .add("cat", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let err = write_data_files(&io, LOCATION, &[input()], &schema, &spec, None, &options())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(
        io.list(LOCATION).await.unwrap().is_empty(),
        "the cat=a+b%2Fc file was removed"
    );
}
