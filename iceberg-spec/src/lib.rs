//! `iceberg-spec`: the Apache Iceberg table format (v1, v2, v3) as Rust types.
//!
//! This is the base layer of the workspace. It does no IO, no async, and depends on no
//! other crate of the workspace; `iceberg-write` and `iceberg-append` build on it.
//!
//! Module map:
//! - [`types`], [`schema`]: data types, schemas and their JSON form.
//! - [`datum`]: single typed values, their ordering, Appendix-D bytes and JSON form.
//! - [`transform`]: partition transforms (identity, bucket, truncate, year, month, day,
//!   hour, void) and the human strings of partition paths.
//! - [`partition`], [`sort_order`]: partition specs and sort orders; [`partition_expr`]:
//!   both from the expressions Spark users write (`day(ts)`, `bucket(16, id)`, `ts desc`).
//! - [`data_file`], [`manifest`]: the records a commit writes (data files, manifest entries,
//!   manifest-list rows).
//! - [`snapshot`]: snapshots, summaries, refs and log entries.
//! - [`evolution`]: schema evolution by the spec's rules (union by name, type promotion) and
//!   the metadata edit that makes a schema current.
//! - [`table_metadata`]: the `metadata.json` document, parsed, validated and written.
//! - [`properties`]: typed table properties with Java's defaults.

pub mod codec;
pub mod data_file;
pub mod datum;
pub mod error;
pub mod evolution;
pub mod manifest;
pub mod name_mapping;
pub mod partition;
pub mod partition_expr;
pub mod properties;
pub mod retention;
pub mod schema;
pub mod snapshot;
pub mod sort_order;
pub mod table_metadata;
pub mod transform;
pub mod types;

pub use codec::{AvroCodec, ParquetCodec};
pub use data_file::{DELETE_FILE_PATH_FIELD_ID, DataContentType, DataFile, FileFormat};
pub use datum::Datum;
pub use error::{Error, Result};
pub use manifest::{FieldSummary, ManifestContent, ManifestEntry, ManifestFile, ManifestStatus};
pub use partition::{PartitionField, PartitionSpec};
pub use properties::{MetricsMode, TableProperties};
pub use schema::Schema;
pub use snapshot::{Operation, SharedSnapshot, Snapshot, SnapshotRef, Summary};
pub use sort_order::{NullOrder, SortDirection, SortField, SortOrder};
pub use table_metadata::{FormatVersion, TableMetadata};
pub use transform::Transform;
pub use types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
