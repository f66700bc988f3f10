//! Compaction (`RewriteDataFiles`): small files of each partition become one, as a `replace`
//! snapshot that keeps every row, gives the new files the starting snapshot's data sequence
//! number and marks the old ones DELETED; a partition with too few files is left alone; a
//! file written with another schema is skipped; an older spec's files join the current one;
//! uuid partitions keep one sign class per manifest; v3 is refused. Races and faults:
//! `compact_races.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use crate::region_table::{append_small_files, batch, ids, live, table};
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, RewriteDataFiles, TableHandle,
    TableIdent,
};
use iceberg_io::FileIo;
use iceberg_spec::{FormatVersion, Operation, PrimitiveType};

/// Adds an optional `note` column: files written before it have other columns.
async fn add_note_column(handle: &mut TableHandle) {
    handle
        .new_transaction()
        .update_schema(|s| {
            s.add_column(None, "note", PrimitiveType::String.into(), None)?;
            Ok(())
        })
        .unwrap()
        .commit()
        .await
        .unwrap();
    handle.refresh().await.unwrap();
}

#[tokio::test]
async fn small_files_of_each_partition_become_one_and_keep_every_row() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..6, "eu").await;
    // Only two small files in `us`: left alone.
    append_small_files(&mut handle, 6..8, "us").await;
    let before = handle.metadata().clone();
    let start_sequence = before.current_snapshot().unwrap().sequence_number;
    let io = handle.io().clone();
    let files_before = live(&io, &before).await;
    assert_eq!(files_before.len(), 8);
    let mut groups = Vec::new();
    let report = RewriteDataFiles::new()
        .commit(
            catalog.as_ref(),
            handle.ident(),
            env.as_ref(),
            |i, n, files| {
                groups.push((i, n, files));
            },
        )
        .await
        .unwrap();
    assert_eq!(groups, vec![(0, 1, 6)]);
    assert_eq!(
        (
            report.groups,
            report.files_rewritten,
            report.files_written,
            report.rows
        ),
        (1, 6, 1, 60)
    );
    handle.refresh().await.unwrap();
    let after = handle.metadata().clone();
    let files_after = live(&io, &after).await;
    assert_eq!(files_after.len(), 3);
    let new: Vec<_> = files_after
        .iter()
        .filter(|(p, _)| !files_before.contains_key(*p))
        .collect();
    assert_eq!(new.len(), 1);
    // The starting snapshot's data sequence number, so later deletes apply as before.
    assert_eq!(new[0].1.1, Some(start_sequence));
    assert_eq!(ids(&io, &after).await, (0..80).collect::<Vec<_>>());
    let head = after.current_snapshot().unwrap();
    assert_eq!(head.operation(), Some(&Operation::Replace));
    let summary = head.summary.as_ref().unwrap();
    assert_eq!(summary.get_i64("total-records"), Some(80));
    assert_eq!(summary.get_i64("total-data-files"), Some(3));
    assert_eq!(summary.get_i64("deleted-data-files"), Some(6));
    assert_eq!(summary.get_i64("added-data-files"), Some(1));
    // The partition left and came back: changed, with both sides in its text (Java's
    // `ManifestFilterManager` counts removed files' partitions).
    assert_eq!(summary.get_i64("changed-partition-count"), Some(1));
    let text = &summary.properties["partitions.region=eu"];
    assert!(
        text.starts_with(
            "added-data-files=1,deleted-data-files=6,added-records=60,deleted-records=60,"
        ),
        "{text}"
    );
    // Nothing left to do.
    let again = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert!(again.metadata_location.is_none());
    // `min_input_files(2)` takes `us` too.
    let us = RewriteDataFiles::new()
        .min_input_files(2)
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(us.files_rewritten, 2);
}

#[tokio::test]
async fn files_of_another_schema_are_skipped() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    add_note_column(&mut handle).await;
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.skipped_other_schema, 5);
    assert!(report.metadata_location.is_none());
}

/// Files of another schema are found as the group is read: in a partition with enough
/// files of the current schema those are compacted and the others kept; a partition left
/// with one such file is not rewritten, and what was written for it is deleted.
#[tokio::test]
async fn files_of_another_schema_are_kept_beside_a_compaction() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    append_small_files(&mut handle, 0..5, "eu").await;
    append_small_files(&mut handle, 5..9, "us").await;
    add_note_column(&mut handle).await;
    append_small_files(&mut handle, 10..15, "eu").await;
    append_small_files(&mut handle, 15..16, "us").await;
    let io = handle.io().clone();
    let before = live(&io, handle.metadata()).await;
    let stored_before = io.list("memory://wh/db/t/data").await.unwrap().len();
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.skipped_other_schema, 9);
    assert_eq!((report.groups, report.files_rewritten), (1, 5));
    assert_eq!(report.files_written, 1);
    assert_eq!(report.rows, 50);
    let after = catalog.load_table(handle.ident()).await.unwrap().metadata;
    let now = live(&io, &after).await;
    // eu's 5 old files, us's 5 files and the new one.
    assert_eq!(now.len(), 11);
    let kept = now.keys().filter(|p| before.contains_key(*p)).count();
    assert_eq!(kept, 10);
    let mut expect: Vec<i64> = (0..90).chain(100..160).collect();
    expect.sort_unstable();
    assert_eq!(ids(&io, &after).await, expect);
    // The one file written for `us` was deleted again: only eu's new file is stored.
    let stored_after = io.list("memory://wh/db/t/data").await.unwrap().len();
    assert_eq!(stored_after, stored_before + 1);
}

#[tokio::test]
async fn v3_tables_are_refused() {
    let (catalog, mut handle, env) = table(FormatVersion::V3).await;
    handle.append(&[batch(0..10, "eu")]).await.unwrap();
    handle.refresh().await.unwrap();
    let err = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotSupportedForTable { .. }), "{err}");
}

/// After the partition field is removed, the small files of the old spec (one per region,
/// so never five in one of its partitions) join the current spec's all-null partition, as
/// Java's bin-pack planner groups them: they are written out once in the current spec.
#[tokio::test]
async fn small_files_of_an_older_spec_are_compacted_together_into_the_current_one() {
    let (catalog, mut handle, env) = table(FormatVersion::V2).await;
    for (k, region) in ["eu", "us", "ap", "sa", "af"].iter().enumerate() {
        let k = k as i64;
        append_small_files(&mut handle, k..k + 1, region).await;
    }
    handle
        .new_transaction()
        .update_spec(|s| {
            s.remove_field("region")?;
            Ok(())
        })
        .unwrap()
        .commit()
        .await
        .unwrap();
    handle.refresh().await.unwrap();
    // A small file of the current spec joins them (its partition is the all-null one).
    append_small_files(&mut handle, 5..6, "eu").await;
    let io = handle.io().clone();
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), handle.ident(), env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!((report.groups, report.files_rewritten), (1, 6));
    assert_eq!(report.files_written, 1);
    handle.refresh().await.unwrap();
    let meta = handle.metadata();
    let now = live(&io, meta).await;
    assert_eq!(now.len(), 1);
    let (partition, _) = now.values().next().unwrap();
    assert_eq!(
        partition, "[]",
        "written in the current, unpartitioned spec"
    );
    assert_eq!(ids(&io, meta).await, (0..60).collect::<Vec<_>>());
}

/// Compacting `identity(u)` partitions of both uuid sign classes writes a manifest per class,
/// as appends do: one manifest spanning both would have partition bounds (00.. to 80..) that
/// Java's signed uuid order reads as empty, and its scans would skip the rows.
#[tokio::test]
async fn compacted_uuid_partitions_keep_one_sign_class_per_manifest() {
    use arrow_array::{ArrayRef, FixedSizeBinaryArray, Int64Array, RecordBatch};
    use iceberg_spec::{NestedField, PartitionSpec, Schema, Transform};
    use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let catalog = Arc::new(InMemoryCatalog::new(FileIo::memory(), env.clone()));
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "u", PrimitiveType::Uuid),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("u", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let mut creation = iceberg_append::TableCreation::new("memory://wh/db/u", schema);
    creation.spec = spec;
    creation
        .properties
        .insert("commit.manifest-merge.enabled".into(), "false".into());
    let ident = TableIdent::parse("db.u").unwrap();
    catalog.create_table(&ident, creation).await.unwrap();
    let shared: Arc<dyn Catalog> = catalog.clone();
    let mut handle = TableHandle::load(shared, ident.clone(), env.clone())
        .await
        .unwrap();
    let arrow = Arc::new(ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("u", DataType::FixedSizeBinary(16), true),
    ]));
    let mut low = [0u8; 16];
    low[15] = 1;
    let mut high = [0u8; 16];
    high[0] = 0x80;
    for (k, u) in [low, high].iter().flat_map(|u| (0..5).map(move |k| (k, u))) {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![k, k + 100]));
        let uuids: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_iter([u.to_vec(), u.to_vec()].into_iter()).unwrap(),
        );
        let batch = RecordBatch::try_new(arrow.clone(), vec![ids, uuids]).unwrap();
        handle.append(&[batch]).await.unwrap();
        handle.refresh().await.unwrap();
    }
    let report = RewriteDataFiles::new()
        .commit(catalog.as_ref(), &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!((report.files_rewritten, report.files_written), (10, 2));
    handle.refresh().await.unwrap();
    let meta = handle.metadata().clone();
    let listed = iceberg_append::read_manifest_list(
        handle.io(),
        meta.current_snapshot().unwrap().manifest_list.as_deref(),
    )
    .await
    .unwrap();
    let added: Vec<_> = listed
        .iter()
        .filter(|m| m.added_files_count.unwrap_or(0) > 0)
        .collect();
    assert_eq!(added.len(), 2, "one manifest of new files per sign class");
    for m in listed {
        assert!(
            iceberg_append::merge::manifest_class(&m, &[0]).is_some(),
            "{} spans both uuid sign classes",
            m.manifest_path
        );
    }
}
