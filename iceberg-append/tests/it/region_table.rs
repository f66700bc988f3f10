//! A table `db.t` of `id` and `region`, partitioned by `identity(region)`, written through
//! [`TableHandle::append`] in small files: the compaction and void-field tests' table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::merge::inherit;
use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableHandle, TableIdent,
    read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::{
    FormatVersion, ManifestStatus, NestedField, PartitionSpec, PrimitiveType, Schema,
    TableMetadata, Transform,
};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
use iceberg_write::read::FileIoReader;

/// The table in `version` on an in-memory store, manifest merging off, partition summaries
/// on.
pub(crate) async fn table(
    version: FormatVersion,
) -> (
    Arc<InMemoryCatalog>,
    TableHandle,
    Arc<DeterministicEnvironment>,
) {
    table_on(FileIo::memory(), version).await
}

/// [`table`] on `io`.
pub(crate) async fn table_on(
    io: FileIo,
    version: FormatVersion,
) -> (
    Arc<InMemoryCatalog>,
    TableHandle,
    Arc<DeterministicEnvironment>,
) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 11));
    let catalog = Arc::new(InMemoryCatalog::new(io, env.clone()));
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "region", PrimitiveType::String),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("region", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    let mut creation = TableCreation::new("memory://wh/db/t", schema);
    creation.spec = spec;
    creation.format_version = version;
    creation
        .properties
        .insert("commit.manifest-merge.enabled".into(), "false".into());
    creation
        .properties
        .insert("write.summary.partition-limit".into(), "100".into());
    let ident = TableIdent::parse("db.t").unwrap();
    catalog.create_table(&ident, creation).await.unwrap();
    let dyn_catalog: Arc<dyn Catalog> = catalog.clone();
    let handle = TableHandle::load(dyn_catalog, ident, env.clone())
        .await
        .unwrap();
    (catalog, handle, env)
}

/// Appends one 10-row file per `k` in `files` (ids `k*10..k*10+10`) to `region`.
pub(crate) async fn append_small_files(
    handle: &mut TableHandle,
    files: std::ops::Range<i64>,
    region: &str,
) {
    for k in files {
        handle
            .append(&[batch(k * 10..k * 10 + 10, region)])
            .await
            .unwrap();
        handle.refresh().await.unwrap();
    }
}

/// A batch of `ids`, all in `region`.
pub(crate) fn batch(ids: std::ops::Range<i64>, region: &str) -> RecordBatch {
    let schema = ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, true),
    ]);
    let n = ids.clone().count();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(ids)),
        Arc::new(StringArray::from(vec![region; n])),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

/// Live data files of the current snapshot: path -> (region, data sequence number).
pub(crate) async fn live(
    io: &FileIo,
    meta: &TableMetadata,
) -> BTreeMap<String, (String, Option<i64>)> {
    let mut out = BTreeMap::new();
    let head = meta.current_snapshot().unwrap();
    for m in read_manifest_list(io, head.manifest_list.as_deref())
        .await
        .unwrap()
    {
        let bytes = io.read(&m.manifest_path).await.unwrap();
        for e in inherit(
            &m,
            decode_manifest(&m.manifest_path, &bytes).unwrap().entries,
        ) {
            if e.status != ManifestStatus::Deleted {
                let region = format!("{:?}", e.data_file.partition);
                out.insert(e.data_file.file_path, (region, e.sequence_number));
            }
        }
    }
    out
}

/// Every id the live files hold, read back.
pub(crate) async fn ids(io: &FileIo, meta: &TableMetadata) -> Vec<i64> {
    let mut out = Vec::new();
    for path in live(io, meta).await.keys() {
        let mut stream = Box::pin(FileIoReader::new(io, path).into_stream(1024).await.unwrap());
        while let Some(b) = stream.try_next().await.unwrap() {
            out.extend(
                b.column(0)
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .copied(),
            );
        }
    }
    out.sort_unstable();
    out
}
