//! `iceberg-append`: the commit layer. Appends and metadata changes of Iceberg tables,
//! committed through a catalog's atomic pointer swap.
//!
//! Layer: uses `iceberg-spec` (records, metadata) and `iceberg-io` (files); uses
//! `iceberg-write` only through the default-on `write` feature (for [`TableHandle::write`],
//! [`Transaction::write`] and [`write_and_prepare_append`]). With `default-features = false`
//! no Parquet is compiled. The `testing` feature adds [`testing::InterceptingCatalog`], a
//! catalog whose commits a test intercepts to inject faults.
//!
//! **The front door** is [`TableHandle`]: load a table, write batches with everything the
//! table says (schema, spec, sort order, properties), and commit changes and an append as one
//! [`Transaction`]:
//!
//! ```
//! # tokio_test_block_on(async {
//! use std::sync::Arc;
//! use iceberg_append::{Catalog, InMemoryCatalog, TableCreation, TableHandle, TableIdent};
//! use iceberg_append::env::DeterministicEnvironment;
//! use iceberg_spec::{NestedField, PrimitiveType, Schema, Transform, Type};
//!
//! let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 42));
//! let catalog = Arc::new(InMemoryCatalog::new(iceberg_io::FileIo::memory(), env.clone()));
//! let ident = TableIdent::parse("db.events").unwrap();
//! let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
//! catalog.create_table(&ident, TableCreation::new("memory://wh/db/events", schema)).await.unwrap();
//!
//! let table = TableHandle::load(catalog.clone(), ident.clone(), env.clone()).await.unwrap();
//! let done = table
//!     .new_transaction()
//!     .update_schema(|s| {
//!         s.add_column(None, "region", Type::Primitive(PrimitiveType::String), None)?;
//!         Ok(())
//!     })
//!     .unwrap()
//!     .update_spec(|p| {
//!         p.add_field("region", Transform::Identity, None)?;
//!         Ok(())
//!     })
//!     .unwrap()
//!     .set_properties([("commit.retry.num-retries", "10")])
//!     .unwrap()
//!     .commit() // with `.append(files)` or `.write(&batches).await?` it also adds a snapshot
//!     .await
//!     .unwrap();
//! assert_eq!(done.schema_id, 1);
//! assert_eq!(done.spec_id, 1);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! Underneath, the free functions stay for callers that hold the pieces themselves (a
//! committer that receives `DataFile`s from many workers):
//!
//! ```
//! # tokio_test_block_on(async {
//! use std::sync::Arc;
//! use iceberg_append::{InMemoryCatalog, TableIdent, TableCreation, commit_append, Catalog};
//! use iceberg_append::env::DeterministicEnvironment;
//! use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema};
//!
//! let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 42));
//! let catalog = InMemoryCatalog::new(iceberg_io::FileIo::memory(), env.clone());
//! let ident = TableIdent::parse("db.events").unwrap();
//! let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
//! catalog.create_table(&ident, TableCreation::new("memory://wh/db/events", schema)).await.unwrap();
//! let file = DataFile {
//!     file_path: "memory://wh/db/events/data/a.parquet".into(),
//!     record_count: 10,
//!     file_size_in_bytes: 1234,
//!     ..Default::default()
//! };
//! let done = commit_append(&catalog, &ident, vec![file], Default::default(), env.as_ref()).await.unwrap();
//! assert_eq!(done.added_records, 10);
//! let table = catalog.load_table(&ident).await.unwrap();
//! assert_eq!(table.metadata.current_snapshot_id, Some(done.snapshot_id));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! Module map:
//! - [`handle`], [`transaction`]: the front door ([`TableHandle`], [`Transaction`]).
//! - [`env`](mod@env): injectable clock and UUID source.
//! - [`manifest`], [`manifest_list`]: the Avro files a commit writes.
//! - [`merge`]: merge append, folding small manifests as Java does.
//! - [`plan`]: the pure plan of one attempt (sequence numbers, row lineage, summary, metadata).
//! - [`append`]: [`prepare_append`] writes manifests and a manifest list, commits nothing.
//! - [`table`]: loading, creating and naming metadata files.
//! - [`catalog`], [`commit`]: the pointer swap, with retries that never double-commit.
//! - [`update`]: metadata changes without a snapshot ([`TableUpdate`], [`commit_table_update`]).
//! - [`evolve`]: an append that evolves the table's schema in the same commit
//!   ([`SchemaEvolution`]).
//! - [`create`]: a table and its first append in one catalog step ([`stage_create`],
//!   [`commit_create_append`]).
//! - [`cache`]: parsed metadata files and manifest lists, so repeated commits do not re-read.

#[cfg(feature = "write")]
pub mod add_files;
pub mod append;
mod avro;
pub mod cache;
pub mod catalog;
pub mod commit;
pub mod create;
pub mod env;
pub mod error;
pub mod evolve;
pub mod handle;
pub mod maintenance;
pub mod manifest;
pub mod manifest_list;
pub mod merge;
pub mod plan;
pub mod summary;
pub mod table;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transaction;
pub mod update;

#[cfg(feature = "write")]
pub use add_files::{AddFilesOutcome, AddPartition, describe_files, live_data_files};
pub use append::{
    AppendMode, AppendResult, OP_APPEND, prepare_append, prepare_append_with_mode,
    read_manifest_list, read_snapshot_manifests,
};
pub use cache::MetadataCache;
pub use catalog::{Catalog, InMemoryCatalog, NamespaceIdent, TableIdent};
pub use commit::{
    CommitOutcome, commit_append, commit_append_with_mode, commit_evolving_append,
    commit_fast_append,
};
pub use create::{commit_create_append, stage_create};
pub use env::{DeterministicEnvironment, Environment, SystemEnvironment};
pub use error::{Error, Result};
pub use evolve::SchemaEvolution;
pub use handle::TableHandle;
#[cfg(feature = "write")]
pub use handle::write_options;
#[cfg(feature = "write")]
pub use maintenance::{CompactionReport, RewriteDataFiles};
pub use maintenance::{
    DeleteOrphanFiles, ExpireSnapshots, ExpiryReport, OrphanReport, RewriteManifests, RewriteReport,
};
pub use summary::{ICEBERG_VERSION_KEY, LIBRARY_VERSION};
pub use table::{
    Table, TableCreation, create_table, metadata_dir, metadata_file_name, next_metadata_version,
    write_metadata_file,
};
pub use transaction::{Transaction, TransactionOutcome};
pub use update::{TableUpdate, UpdateOutcome, commit_table_update};

/// Writes `batches` as data files with the table's spec, sort order and properties, then
/// prepares the append. Nothing is committed.
///
/// When the table has a (non-empty) default sort order, the rows of each data file are
/// sorted by it and the files record its id.
///
/// # Errors
/// When writing the data files fails (nothing is committed), or as [`prepare_append`].
#[cfg(feature = "write")]
pub async fn write_and_prepare_append(
    io: &iceberg_io::FileIo,
    table: &Table,
    batches: &[arrow_array::RecordBatch],
    env: &dyn Environment,
) -> Result<AppendResult> {
    let files = handle::write_as_table(io, &table.metadata, batches).await?;
    prepare_append(io, table, files, Default::default(), env).await
}
