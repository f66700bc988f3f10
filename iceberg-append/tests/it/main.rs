//! The crate's integration tests, one binary (each binary links the whole dependency tree):
//! append laws, commit outcomes, compaction, evolution laws, snapshot expiry, orphan files,
//! manifest rewrites, golden output, the manifest codec, schema evolution, shared tables,
//! table updates, transactions, unknown transforms, void partition fields and sorted writes.

mod append_laws;
mod commit_outcomes;
mod compact;
mod compact_races;
mod evolution_laws;
mod expiry;
mod golden;
mod manifest_codec;
mod orphans;
mod region_table;
mod rewrite_manifests;
mod schema_evolution;
mod shared_tables;
mod support;
mod table_updates;
mod transactions;
mod unknown_transforms;
mod void_partition_fields;
mod write_sorted;
