//! Golden output of an append under a fixed environment: the metadata JSON byte for byte,
//! manifests and manifest lists after decoding (Avro compared as records).
//!
//! Regenerate with `UPDATE_GOLDEN=1 cargo test -p iceberg-append --test it golden`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableIdent, commit_append,
    read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::{
    DataFile, Datum, FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema, Transform,
};

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}; run with UPDATE_GOLDEN=1", path.display()));
    assert!(
        expected == actual,
        "{name} differs from the golden file:\n{actual}"
    );
}

async fn append_twice(version: FormatVersion) {
    let env = Arc::new(DeterministicEnvironment::new(1_767_225_600_000, 1000, 2024));
    let io = FileIo::memory();
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("db.golden").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "name", PrimitiveType::String),
        ],
    )
    .unwrap();
    let mut creation = TableCreation::new("memory://wh/db/golden", schema.clone());
    creation.format_version = version;
    creation.spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)
        .unwrap()
        .add("id", Transform::Bucket(16))
        .unwrap()
        .build()
        .unwrap();
    catalog.create_table(&ident, creation).await.unwrap();
    for commit in 0..2i64 {
        let files = (0..2i64)
            .map(|i| DataFile {
                file_path: format!("memory://wh/db/golden/data/c{commit}-{i}.parquet"),
                partition: vec![
                    Some(Datum::Date(20_454 + commit as i32)),
                    if i == 0 {
                        None
                    } else {
                        Some(Datum::Int(i as i32))
                    },
                ],
                record_count: 10 + i,
                file_size_in_bytes: 4096 + i,
                column_sizes: BTreeMap::from([(1, 80), (2, 90), (3, 100)]),
                value_counts: BTreeMap::from([(1, 10 + i), (2, 10 + i), (3, 10 + i)]),
                null_value_counts: BTreeMap::from([(1, 0), (2, 1), (3, 0)]),
                lower_bounds: BTreeMap::from([(1, Datum::Long(i).to_bytes()), (3, b"a".to_vec())]),
                upper_bounds: BTreeMap::from([
                    (1, Datum::Long(100 + i).to_bytes()),
                    (3, b"zz".to_vec()),
                ]),
                split_offsets: Some(vec![4]),
                ..Default::default()
            })
            .collect();
        commit_append(
            &catalog,
            &ident,
            files,
            BTreeMap::from([("app".into(), "golden".into())]),
            env.as_ref(),
        )
        .await
        .unwrap();
    }
    let table = catalog.load_table(&ident).await.unwrap();
    let v = version.number();
    golden(
        &format!("v{v}.metadata.json"),
        &table.metadata.to_json().unwrap(),
    );
    let snap = table.metadata.current_snapshot().unwrap();
    let list = read_manifest_list(&io, snap.manifest_list.as_deref())
        .await
        .unwrap();
    golden(
        &format!("v{v}.manifest-list.json"),
        &serde_json::to_string_pretty(&list).unwrap(),
    );
    let bytes = io.read(&list[0].manifest_path).await.unwrap();
    let manifest = decode_manifest(&list[0].manifest_path, &bytes).unwrap();
    let meta: BTreeMap<_, _> = manifest
        .metadata
        .into_iter()
        .filter(|(k, _)| !k.starts_with("avro."))
        .collect();
    let decoded = serde_json::json!({"metadata": meta, "entries": manifest.entries});
    golden(
        &format!("v{v}.manifest.json"),
        &serde_json::to_string_pretty(&decoded).unwrap(),
    );
}

#[tokio::test]
async fn golden_v1() {
    append_twice(FormatVersion::V1).await;
}

#[tokio::test]
async fn golden_v2() {
    append_twice(FormatVersion::V2).await;
}

#[tokio::test]
async fn golden_v3() {
    append_twice(FormatVersion::V3).await;
}
