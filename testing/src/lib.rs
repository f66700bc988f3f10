//! Test support for the workspace's tests and benchmarks, written once: the deterministic
//! events data set ([`events`]) the benchmarks and examples write, and a throwaway moto S3
//! server ([`moto`]) for loopback S3 tests, and the external Python readers ([`external`]). An unpublished crate, so that no library crate
//! ships test scripts; fault-injecting wrappers stay beside the types they wrap
//! (`iceberg_io::testing`, `iceberg_catalog::testing`).

pub mod events;
pub mod external;
pub mod moto;

use std::path::{Path, PathBuf};

use iceberg_spec::{NestedField, PrimitiveType, Schema};

/// A table schema of one optional long column `id` whose field id is `field_id` (two such
/// schemas of different ids have the same name but not the same column).
pub fn id_column_schema(field_id: i32) -> Result<Schema, iceberg_spec::Error> {
    Schema::new(
        0,
        vec![NestedField::optional(field_id, "id", PrimitiveType::Long)],
    )
}

/// Every file under `dir`, recursively (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() { files_under(&p) } else { vec![p] }
        })
        .collect()
}
