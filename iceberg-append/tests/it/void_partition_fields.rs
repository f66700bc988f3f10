//! A v1 table whose removed partition field stayed as `void` and whose source column was
//! dropped since (Spark's REPLACE PARTITION FIELD, then DROP COLUMN): Java types such a
//! field `unknown` and writes it in manifests as the Avro `null` type. Appends, manifest
//! rewrites and compaction land, and every row reads back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{RewriteDataFiles, RewriteManifests, read_manifest_list};
use iceberg_io::FileIo;
use iceberg_spec::{Datum, FormatVersion, TableMetadata, Transform};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};

use crate::region_table::{append_small_files, ids, table};

/// `ids` with no `region` column (the table no longer has one).
fn id_batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = ArrowSchema::new(vec![Field::new("id", DataType::Int64, false)]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(Int64Array::from_iter_values(ids))],
    )
    .unwrap()
}

/// The Avro type of partition field `name` in each live manifest of spec `spec_id`, with
/// the partition tuples of its entries.
async fn partitions_of_spec(
    io: &FileIo,
    meta: &TableMetadata,
    spec_id: i32,
    name: &str,
) -> Vec<(serde_json::Value, Vec<Vec<Option<Datum>>>)> {
    let list = meta.current_snapshot().unwrap().manifest_list.as_deref();
    let mut out = Vec::new();
    for m in read_manifest_list(io, list).await.unwrap() {
        if m.partition_spec_id != spec_id {
            continue;
        }
        let bytes = io.read(&m.manifest_path).await.unwrap();
        let decoded = decode_manifest(&m.manifest_path, &bytes).unwrap();
        let reader = apache_avro::Reader::new(&bytes[..]).unwrap();
        let schema = serde_json::to_value(reader.writer_schema()).unwrap();
        let field = |record: &serde_json::Value, field: &str| {
            record["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == field)
                .unwrap()
                .clone()
        };
        let data_file = field(&schema, "data_file")["type"].clone();
        let partition = field(&data_file, "partition")["type"].clone();
        let ty = field(&partition, name)["type"].clone();
        let tuples = decoded
            .entries
            .into_iter()
            .map(|e| e.data_file.partition)
            .collect();
        out.push((ty, tuples));
    }
    out
}

#[tokio::test]
async fn a_v1_void_field_whose_source_was_dropped_is_written_as_java_writes_it() {
    let (catalog, mut handle, env) = table(FormatVersion::V1).await;
    append_small_files(&mut handle, 0..2, "eu").await;
    // v1 keeps a removed field as `void(region)`; then `region` is dropped (staged on the
    // new spec, so checked against it).
    handle
        .new_transaction()
        .update_spec(|s| {
            s.remove_field("region")?;
            s.add_field("id", Transform::Bucket(2), None)?;
            Ok(())
        })
        .unwrap()
        .update_schema(|s| {
            s.delete_column("region")?;
            Ok(())
        })
        .unwrap()
        .commit()
        .await
        .unwrap();
    handle.refresh().await.unwrap();
    let spec = handle.metadata().default_spec().unwrap().clone();
    assert_eq!(spec.fields()[0].transform, Transform::Void);

    for k in 2..7 {
        handle
            .append(&[id_batch(k * 10..k * 10 + 10)])
            .await
            .unwrap();
        handle.refresh().await.unwrap();
    }
    let io = handle.io().clone();
    let every_id: Vec<i64> = (0..70).collect();
    assert_eq!(ids(&io, handle.metadata()).await, every_id);
    let written = partitions_of_spec(&io, handle.metadata(), spec.spec_id(), "region").await;
    assert_eq!(written.len(), 5, "one manifest per fast append");
    for (ty, tuples) in &written {
        assert_eq!(
            ty,
            &serde_json::json!("null"),
            "Java's Avro type for `unknown`"
        );
        for t in tuples {
            assert_eq!(t[0], None);
            assert!(matches!(t[1], Some(Datum::Int(0 | 1))), "{t:?}");
        }
    }

    // A manifest rewrite carries both specs' entries, each in its own spec's manifest.
    let report = RewriteManifests::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref())
        .await
        .unwrap();
    assert!(report.manifests_replaced >= 5, "{report:?}");
    handle.refresh().await.unwrap();
    assert_eq!(ids(&io, handle.metadata()).await, every_id);
    let rewritten = partitions_of_spec(&io, handle.metadata(), spec.spec_id(), "region").await;
    assert_eq!(rewritten.len(), 1);
    assert_eq!(rewritten[0].0, serde_json::json!("null"));
    assert_eq!(rewritten[0].1.len(), 10, "five appends of two buckets");

    // Compaction rewrites each bucket's five small files into one.
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(
        (report.files_rewritten, report.files_written),
        (10, 2),
        "{report:?}"
    );
    handle.refresh().await.unwrap();
    assert_eq!(ids(&io, handle.metadata()).await, every_id);
}
