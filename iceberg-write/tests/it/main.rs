//! Integration tests of iceberg-write: files written to an in-memory FileIo, read back with
//! parquet, metrics checked against the checklist.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod column_props;
mod common;
mod dictionary;
mod import;
mod import_bounds;
mod layout;
mod locations;
mod many_partitions;
mod metrics;
mod partitioned;
mod props;
mod row_groups;
mod sorted;
mod streaming;
