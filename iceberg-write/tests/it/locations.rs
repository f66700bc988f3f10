//! Data file locations from table properties: the default layout and Java's object-storage
//! layout (`write.object-storage.enabled`, `write.object-storage.partitioned-paths`).

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::transform::murmur3_32;
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{DataFile, PartitionSpec, Schema, Transform};
use iceberg_write::WriteOptions;
use iceberg_write::arrow_array::{Int64Array, StringArray};
use iceberg_write::arrow_schema::{DataType, Field};
use uuid::Uuid;

use crate::common::*;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "p", PrimitiveType::String),
        ],
    )
    .unwrap()
}

async fn write_with(props: &[(&str, &str)], partitioned: bool) -> (FileIo, Vec<DataFile>) {
    let transform = partitioned.then_some(Transform::Identity);
    write_spec(props, transform).await
}

/// Writes three rows with a spec of one field of `transform` on `p` (none: unpartitioned).
async fn write_spec(
    props: &[(&str, &str)],
    transform: Option<Transform>,
) -> (FileIo, Vec<DataFile>) {
    let schema = schema();
    let spec = match transform {
        Some(t) => PartitionSpec::builder(&schema)
            .add("p", t)
            .unwrap()
            .build()
            .unwrap(),
        None => PartitionSpec::unpartitioned(),
    };
    let map: BTreeMap<String, String> = props
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let opts = WriteOptions::from_table_properties(&map)
        .unwrap()
        .with_operation_id(Uuid::nil());
    let b = batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("p", DataType::Utf8, true),
        ],
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec![Some("a b"), Some("c"), Some("a b")])),
        ],
    );
    let io = FileIo::memory();
    let files = write(&io, &[b], &schema, &spec, &opts).await;
    for f in &files {
        // Readable where the record says it is.
        read_back(&io, f).await;
    }
    (io, files)
}

/// The hash directories, derived here from Java's description: the low 20 bits of the
/// Murmur3 hash as binary digits, split 4/4/4/8.
fn hash_dirs(hashed: &str) -> String {
    let bits = format!("{:032b}", murmur3_32(hashed.as_bytes()));
    let low = &bits[12..];
    format!(
        "{}/{}/{}/{}",
        &low[..4],
        &low[4..8],
        &low[8..12],
        &low[12..]
    )
}

fn file_name(f: &DataFile) -> &str {
    f.file_path.rsplit('/').next().unwrap()
}

#[tokio::test]
async fn default_layout_is_data_then_partition() {
    let (_, files) = write_with(&[], true).await;
    let mut paths: Vec<String> = files
        .iter()
        .map(|f| f.file_path.replace(file_name(f), "<file>"))
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        vec![
            format!("{LOCATION}/data/p=a+b/<file>"),
            format!("{LOCATION}/data/p=c/<file>"),
        ]
    );
}

/// A spec whose fields are all void (a v1 table's dropped fields) writes as Java writes an
/// unpartitioned table: `data/<file>` (not `data/p_null=null/`), in the object-storage layout
/// the hash of the name alone; the file keeps its partition tuple of nulls.
#[tokio::test]
async fn a_spec_of_void_fields_writes_unpartitioned_paths() {
    let (_, files) = write_spec(&[], Some(Transform::Void)).await;
    assert_eq!(files.len(), 1);
    let f = &files[0];
    assert_eq!(f.file_path, format!("{LOCATION}/data/{}", file_name(f)));
    assert_eq!(f.partition.len(), 1);
    assert!(f.partition.iter().all(Option::is_none));

    let (_, files) = write_spec(
        &[("write.object-storage.enabled", "true")],
        Some(Transform::Void),
    )
    .await;
    let f = &files[0];
    let name = file_name(f);
    assert_eq!(
        f.file_path,
        format!("{LOCATION}/data/{}/{name}", hash_dirs(name))
    );
}

#[tokio::test]
async fn object_storage_hashes_partition_path_and_name() {
    let (_, files) = write_with(&[("write.object-storage.enabled", "true")], true).await;
    assert_eq!(files.len(), 2);
    for f in &files {
        let name = file_name(f);
        let partition = if f.record_count == 2 { "p=a+b" } else { "p=c" };
        let relative = format!("{partition}/{name}");
        assert_eq!(
            f.file_path,
            format!("{LOCATION}/data/{}/{relative}", hash_dirs(&relative))
        );
    }
}

#[tokio::test]
async fn object_storage_without_partition_paths_joins_the_hash_to_the_name() {
    let props = [
        ("write.object-storage.enabled", "true"),
        ("write.object-storage.partitioned-paths", "false"),
    ];
    for partitioned in [true, false] {
        let (_, files) = write_with(&props, partitioned).await;
        for f in &files {
            let name = file_name(f).split_once('-').unwrap().1;
            assert_eq!(
                f.file_path,
                format!("{LOCATION}/data/{}-{name}", hash_dirs(name)),
                "partitioned: {partitioned}"
            );
            assert!(name.starts_with("00000-0-00000000-0000-0000-0000-000000000000-"));
        }
    }
}

#[tokio::test]
async fn object_storage_under_a_data_path_elsewhere_adds_the_table_context() {
    let props = [
        ("write.object-storage.enabled", "true"),
        ("write.data.path", "memory://wh/elsewhere/"),
    ];
    let (_, files) = write_with(&props, false).await;
    let name = file_name(&files[0]);
    // LOCATION is memory://wh/db/t: its context is `db/t`.
    assert_eq!(
        files[0].file_path,
        format!("memory://wh/elsewhere/{}/db/t/{name}", hash_dirs(name))
    );
}
