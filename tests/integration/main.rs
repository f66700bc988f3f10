//! Cross-crate tests: what we write, read back by readers we did not write.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod avro_readers;
mod catalog_common;
mod catalog_concurrency;
mod catalog_conformance;
mod catalog_faults;
mod catalog_kills;
mod catalog_lifecycle;
mod catalog_merge;
mod catalog_pyiceberg;
mod catalog_rest;
mod commit_faults;
mod datafusion_sql;
mod external;
mod fixtures;
mod fuzz_foreign;
mod layers;
mod maintenance_race;
mod pyiceberg_append;
mod pyiceberg_pruning;
mod readme;
