//! `iceberg-datafusion-writer`: Iceberg tables in Apache DataFusion, written by this
//! workspace's writer and committed by its commit layer.
//!
//! Layer: on top of `iceberg-write`, `iceberg-append` and `iceberg-catalog`; nothing below
//! depends on DataFusion. The workspace's arrow, parquet and object_store are DataFusion's,
//! so a DataFusion `RecordBatch` is ours.
//!
//! - [`IcebergTableProvider`]: one table. `SELECT` reads the current snapshot's live data
//!   files with DataFusion's Parquet source, skipping manifests whose partition summaries
//!   and files whose column bounds rule the filters out ([`scan`]), columns matched by field id ([`field_ids`]: renamed and added
//!   columns read right). `INSERT INTO` plans a write node with as many partitions as its
//!   input ([`write::IcebergWriteExec`]: every partition runs our writer, the input
//!   hash-partitioned by the table's partition key, [`partition_key`]) and one commit node
//!   ([`commit::IcebergCommitExec`]: one snapshot, its id fixed in the plan, so a commit
//!   that runs twice lands once).
//! - [`IcebergCatalogProvider`]: any of our catalogs, namespaces as schemas;
//!   [`register_catalogs`] installs a [`CatalogRegistry`]'s catalogs in a session with
//!   [`IcebergTableFactory`] for `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` ([`create`]:
//!   partitions, sort order, format version and properties from the statement).
//! - [`codec`]: the provider and the nodes as small descriptions for other processes
//!   (Ballista), catalogs named by a [`CatalogRegistry`] each process holds.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use iceberg_append::catalog::NamespaceIdent;
//! use iceberg_append::{Catalog, TableCreation, TableIdent};
//! use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
//! use iceberg_datafusion_writer::IcebergCatalogProvider;
//! use iceberg_spec::{NestedField, PrimitiveType, Schema};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = Arc::new(SqlCatalog::connect(SqlCatalogConfig::local(dir.path())).await?);
//! let db = NamespaceIdent::parse("db").expect("a namespace");
//! catalog.create_namespace(&db, Default::default()).await?;
//! let schema = Schema::new(0, vec![
//!     NestedField::required(1, "id", PrimitiveType::Long),
//!     NestedField::optional(2, "name", PrimitiveType::String),
//! ])?;
//! catalog.create_table(&TableIdent::new(db, "t"), TableCreation::new("", schema)).await?;
//!
//! let ctx = SessionContext::new();
//! ctx.register_catalog("iceberg", Arc::new(IcebergCatalogProvider::try_new(catalog).await?));
//! ctx.sql("INSERT INTO iceberg.db.t VALUES (1, 'a'), (2, 'b')").await?.collect().await?;
//! let rows = ctx.sql("SELECT name FROM iceberg.db.t WHERE id > 1").await?.collect().await?;
//! assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
//! # Ok(())
//! # }
//! ```

pub mod catalog;
pub mod codec;
pub mod commit;
pub mod create;
pub mod error;
pub mod field_ids;
pub mod partition_key;
pub mod provider;
mod prune;
pub mod scan;
pub mod scan_exec;
pub mod write;

pub use catalog::{IcebergCatalogProvider, IcebergSchemaProvider, register_catalogs};
pub use codec::{CatalogRegistry, IcebergLogicalCodec, IcebergPhysicalCodec};
pub use create::IcebergTableFactory;
pub use error::{Error, Result};
pub use partition_key::partition_key_udf;
pub use provider::IcebergTableProvider;
