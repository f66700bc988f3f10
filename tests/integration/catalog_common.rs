//! Helpers shared by the catalog tests: a small table, batches, and appends through any
//! catalog.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use iceberg_append::{Catalog, CommitOutcome, Environment, Table, TableIdent, commit_append};
use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};

/// `id long required, name string optional`.
pub(crate) fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "name", PrimitiveType::String),
        ],
    )
    .unwrap()
}

/// Creation of a table of [`schema`] at the catalog's default location with `properties`.
pub(crate) fn creation_with(properties: &[(&str, &str)]) -> iceberg_append::TableCreation {
    let mut creation = iceberg_append::TableCreation::new("", schema());
    creation.properties = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    creation
}

/// Rows `ids` with names `n<id>`, shaped by the table's current schema (its `id` and
/// `name`; columns an evolution added after them are left to the writer's nulls).
pub(crate) fn batch(schema: &Schema, ids: impl IntoIterator<Item = i64>) -> RecordBatch {
    let id_name = ["id", "name"].map(|n| schema.field_by_name(n).unwrap().clone());
    let id_name = Schema::new(0, id_name.to_vec()).unwrap();
    let arrow = Arc::new(iceberg_write::arrow_schema(&id_name).unwrap());
    let ids: Vec<i64> = ids.into_iter().collect();
    let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(StringArray::from(names)),
    ];
    RecordBatch::try_new(arrow, cols).unwrap()
}

/// Writes `ids` as a data file of the table's current shape and appends it.
pub(crate) async fn append_ids(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    ids: impl IntoIterator<Item = i64>,
    env: &dyn Environment,
) -> CommitOutcome {
    try_append_ids(catalog, ident, ids, env).await.unwrap()
}

/// As [`append_ids`], returning what failed.
pub(crate) async fn try_append_ids(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    ids: impl IntoIterator<Item = i64>,
    env: &dyn Environment,
) -> iceberg_append::Result<CommitOutcome> {
    let table = catalog.load_table(ident).await?;
    let files = write_ids(catalog, &table, ids).await?;
    commit_append(catalog, ident, files, BTreeMap::new(), env).await
}

/// Writes `ids` as a data file of `table`'s current shape (committing nothing).
pub(crate) async fn write_ids(
    catalog: &dyn Catalog,
    table: &Table,
    ids: impl IntoIterator<Item = i64>,
) -> iceberg_append::Result<Vec<DataFile>> {
    let meta = &table.metadata;
    let schema = meta.current_schema()?;
    let options = iceberg_write::WriteOptions::from_table_properties(&meta.properties)?;
    Ok(iceberg_write::write_data_files(
        &catalog.table_io(table),
        &meta.location,
        &[batch(schema, ids)],
        schema,
        meta.default_spec()?,
        None,
        &options,
    )
    .await?)
}

/// Runs this test binary again as `count` worker processes, each running only the test
/// `worker` (`module::test_name`) with `env_var` set to `spec(i)`; their output is piped.
pub(crate) fn spawn_workers(
    worker: &str,
    env_var: &str,
    count: usize,
    spec: impl Fn(usize) -> String,
) -> Vec<std::process::Child> {
    let exe = std::env::current_exe().unwrap();
    (0..count)
        .map(|w| {
            std::process::Command::new(&exe)
                .args([worker, "--exact", "--nocapture", "--test-threads=1"])
                .env(env_var, spec(w))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect()
}
