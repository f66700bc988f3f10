//! Tables whose partition specs use a transform this library does not know (a later spec's,
//! another engine's): the spec requires readers to read them and forbids writers to commit
//! data with one. Appends to a known spec land, merges and manifest rewrites carry the
//! unknown spec's manifests unchanged, compaction leaves its files alone, and data for such a
//! spec is refused without touching the table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    AppendMode, Catalog, DeterministicEnvironment, InMemoryCatalog, RewriteDataFiles,
    RewriteManifests, TableIdent, TableUpdate, commit_append_with_mode, commit_table_update,
    read_manifest_list,
};
use iceberg_spec::evolution::UpdatePartitionSpec;
use iceberg_spec::{DataFile, Datum, PartitionField, PartitionSpec, Transform};

use crate::support::{data_file, qty_table};

const UNKNOWN: &str = "zorder[4]";

/// The table of [`qty_table`] partitioned by `bucket[4](qty)`, with two fast appends
/// (buckets 1 and 3).
async fn bucketed() -> (InMemoryCatalog, TableIdent, Arc<DeterministicEnvironment>) {
    let (catalog, ident, env) = qty_table(Transform::Bucket(4)).await;
    for (name, bucket) in [("a", 1), ("b", 3)] {
        append(
            &catalog,
            &ident,
            &env,
            name,
            0,
            vec![Some(Datum::int(bucket))],
            AppendMode::Fast,
        )
        .await
        .unwrap();
    }
    (catalog, ident, env)
}

async fn append(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    env: &DeterministicEnvironment,
    name: &str,
    spec_id: i32,
    partition: Vec<Option<Datum>>,
    mode: AppendMode,
) -> iceberg_append::Result<()> {
    let file = DataFile {
        file_path: format!("memory://wh/db/w/data/{name}.parquet"),
        spec_id,
        partition,
        ..data_file(name, 3)
    };
    commit_append_with_mode(catalog, ident, vec![file], BTreeMap::new(), Some(mode), env)
        .await
        .map(|_| ())
}

/// Turns spec 0's `bucket[4]` into [`UNKNOWN`] everywhere it is written: in the table's
/// metadata (a commit) and in the headers of its manifests (same length, so the Avro
/// header's framing holds), as a writer that knows the transform would have written them.
async fn make_spec_0_unknown(catalog: &InMemoryCatalog, ident: &TableIdent) -> Vec<String> {
    let table = catalog.load_table(ident).await.unwrap();
    let io = catalog.io();
    let head = table.metadata.current_snapshot().unwrap();
    let mut paths = Vec::new();
    for m in read_manifest_list(io, head.manifest_list.as_deref())
        .await
        .unwrap()
    {
        if m.partition_spec_id != 0 {
            continue;
        }
        let bytes = io.read(&m.manifest_path).await.unwrap().to_vec();
        let (from, to) = (b"bucket[4]", UNKNOWN.as_bytes());
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("header names it");
        let mut edited = bytes.clone();
        edited[at..at + from.len()].copy_from_slice(to);
        io.put(&m.manifest_path, Bytes::from(edited)).await.unwrap();
        paths.push(m.manifest_path);
    }
    let mut meta = table.metadata.clone();
    let spec = meta.spec_by_id(0).unwrap();
    let fields = spec
        .fields()
        .iter()
        .map(|f| PartitionField {
            transform: Transform::Unknown(UNKNOWN.into()),
            ..f.clone()
        })
        .collect();
    let position = meta
        .partition_specs
        .iter()
        .position(|s| s.spec_id() == 0)
        .unwrap();
    meta.partition_specs[position] = PartitionSpec::new_unchecked(0, fields);
    catalog
        .commit(ident, table.metadata_location.as_deref().unwrap(), &meta)
        .await
        .unwrap();
    paths.sort();
    paths
}

/// The manifests the table's head lists, by spec.
async fn head_manifests(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    spec_id: i32,
) -> Vec<String> {
    let table = catalog.load_table(ident).await.unwrap();
    let head = table.metadata.current_snapshot().unwrap();
    let mut paths: Vec<String> = read_manifest_list(catalog.io(), head.manifest_list.as_deref())
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.partition_spec_id == spec_id)
        .map(|m| m.manifest_path)
        .collect();
    paths.sort();
    paths
}

/// An older spec whose transform this library does not know: the table loads, appends to the
/// current spec merge around its manifests (carried unchanged, their values still read),
/// manifest rewrites leave them alone, compaction counts its files as left alone, and the
/// metadata written back keeps the transform's name.
#[tokio::test]
async fn an_old_spec_of_an_unknown_transform_is_read_and_carried_never_written() {
    let (catalog, ident, env) = bucketed().await;
    let meta = catalog.load_table(&ident).await.unwrap().metadata;
    let mut spec = UpdatePartitionSpec::new(&meta).unwrap();
    spec.remove_field("qty_bucket").unwrap();
    let update = TableUpdate::new().with_spec(&meta, spec.apply().unwrap());
    commit_table_update(&catalog, &ident, &update, env.as_ref())
        .await
        .unwrap();
    let unknown = make_spec_0_unknown(&catalog, &ident).await;
    assert_eq!(unknown.len(), 2);

    let table = catalog.load_table(&ident).await.unwrap();
    let spec_0 = table.metadata.spec_by_id(0).unwrap();
    assert_eq!(
        spec_0.fields()[0].transform,
        Transform::Unknown(UNKNOWN.into())
    );
    // The values of its manifests are read with the manifest's own Avro type.
    let mut buckets = Vec::new();
    for path in &unknown {
        let bytes = catalog.io().read(path).await.unwrap();
        for e in decode_manifest(path, &bytes).unwrap().entries {
            buckets.push(e.data_file.partition[0].clone());
        }
    }
    buckets.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(buckets, vec![Some(Datum::int(1)), Some(Datum::int(3))]);

    // Merge appends to the current spec: both land (min count 2 merges them), spec 0's
    // manifests are listed as they were.
    for name in ["c", "d"] {
        append(
            &catalog,
            &ident,
            &env,
            name,
            1,
            Vec::new(),
            AppendMode::Merge,
        )
        .await
        .unwrap();
    }
    assert_eq!(head_manifests(&catalog, &ident, 0).await, unknown);
    assert_eq!(head_manifests(&catalog, &ident, 1).await.len(), 1);

    // A third append, fast, then a manifest rewrite: spec 1's two manifests are replaced,
    // spec 0's kept.
    append(&catalog, &ident, &env, "e", 1, Vec::new(), AppendMode::Fast)
        .await
        .unwrap();
    let report = RewriteManifests::new()
        .commit(&catalog, &ident, env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.manifests_replaced, 2);
    assert_eq!(head_manifests(&catalog, &ident, 0).await, unknown);

    // Compaction leaves spec 0's small files alone and says so.
    let report = RewriteDataFiles::new()
        .commit(&catalog, &ident, env.as_ref(), |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.skipped_unknown_transform, 2);
    assert_eq!(report.files_rewritten, 0);

    let table = catalog.load_table(&ident).await.unwrap();
    let text = catalog
        .io()
        .read(table.metadata_location.as_deref().unwrap())
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let spec_0 = json["partition-specs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["spec-id"] == 0)
        .unwrap();
    assert_eq!(
        spec_0["fields"][0]["transform"], UNKNOWN,
        "written back by name"
    );
}

/// The default spec's transform is unknown: data for it is refused with an error naming the
/// transform and the table stays as it was; a metadata-only update still commits (Java's
/// `UnknownTransform` tables take property changes too).
#[tokio::test]
async fn data_for_a_spec_of_an_unknown_transform_is_refused_and_changes_nothing() {
    let (catalog, ident, env) = bucketed().await;
    make_spec_0_unknown(&catalog, &ident).await;
    let before = catalog.load_table(&ident).await.unwrap();
    let err = append(
        &catalog,
        &ident,
        &env,
        "c",
        0,
        vec![Some(Datum::int(2))],
        AppendMode::Fast,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains(UNKNOWN), "{err}");
    let after = catalog.load_table(&ident).await.unwrap();
    assert_eq!(after.metadata_location, before.metadata_location);

    let update = TableUpdate::new().set_property("owner", "ops");
    commit_table_update(&catalog, &ident, &update, env.as_ref())
        .await
        .unwrap();
    let table = catalog.load_table(&ident).await.unwrap();
    assert_eq!(
        table.metadata.properties.get("owner").map(String::as_str),
        Some("ops")
    );
    assert!(
        table
            .metadata
            .default_spec()
            .unwrap()
            .has_unknown_transform()
    );
}
