//! `iceberg-catalog`: where a table's current-metadata pointer lives, and how it moves.
//!
//! Layer: on top of `iceberg-append` (whose [`Catalog`] trait these types implement, and
//! whose [`commit_append`](iceberg_append::commit_append) drives the retries) and
//! `iceberg-io`. Nothing here writes data or manifests.
//!
//! | catalog | pointer | for |
//! |---|---|---|
//! | [`SqlCatalog`] on SQLite | a row in `<warehouse>/catalog.db` | one machine, several processes, nothing to install |
//! | [`SqlCatalog`] on PostgreSQL | a row in a shared database | many writers on many machines |
//! | [`ObjectStoreCatalog`] | `metadata/v<N>.metadata.json`, created only if absent | only a bucket; stores with conditional create |
//! | [`RestCatalog`] (feature `rest`) | kept by a REST catalog server | Polaris, Unity, Glue, Lakekeeper, Nessie, ... |
//!
//! The SQL catalog's tables are those of Java's `JdbcCatalog` and PyIceberg's `SqlCatalog`,
//! so those engines open our tables by name, and we theirs.
//!
//! Module map:
//! - [`sql`] (features `sqlite` and `postgres`, default on): [`SqlCatalog`], its config and
//!   backends ([`sql::sqlite`], [`sql::postgres`]), the catalog tables' DDL ([`sql::schema`]).
//!   With `default-features = false` no SQL driver is compiled (the object-store catalog,
//!   and the REST one with `rest`).
//! - [`object_store`]: [`ObjectStoreCatalog`], Hadoop-table layout.
//! - `rest` (feature `rest`): [`RestCatalog`], the REST protocol client; `rest::updates`
//!   turns a commit's metadata into the protocol's requirements and updates.
//! - `testing` (feature `testing`): a REST server launcher (rustberg) and a fault-injecting
//!   HTTP proxy, for this workspace's tests and users' own.
//! - [`error`]: [`Error`], the error of opening a catalog (operations speak
//!   [`iceberg_append::Error`]).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use iceberg_append::catalog::NamespaceIdent;
//! use iceberg_append::{Catalog, TableCreation, TableIdent};
//! use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
//! use iceberg_spec::{NestedField, PrimitiveType, Schema};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir.path())).await?;
//! let db = NamespaceIdent::parse("db").unwrap();
//! catalog.create_namespace(&db, Default::default()).await?;
//! let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)])?;
//! let ident = TableIdent::new(db.clone(), "events");
//! // An empty location means `<warehouse>/db/events`.
//! let table = catalog.create_table(&ident, TableCreation::new("", schema)).await?;
//! assert!(table.metadata_location.unwrap().contains("/db/events/metadata/00000-"));
//! assert_eq!(catalog.list_tables(&db).await?, [ident]);
//! # Ok(())
//! # }
//! ```

pub mod error;
pub mod object_store;
#[cfg(feature = "rest")]
pub mod rest;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod sql;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::{Error, Result};
pub use iceberg_append::Catalog;
pub use object_store::ObjectStoreCatalog;
#[cfg(feature = "rest")]
pub use rest::{RestCatalog, RestCatalogConfig};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::{SqlCatalog, SqlCatalogConfig};
