//! The metadata tree of a snapshot: metadata file, manifest list, manifests, data files,
//! marking what the snapshot wrote and what it carried by reference.

use std::io::Write;
use std::path::Path;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{Catalog, Table, TableIdent, read_manifest_list};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_io::FileIo;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn short(path: &str, location: &str) -> String {
    path.strip_prefix(location)
        .map(|p| p.trim_start_matches('/').to_string())
        .unwrap_or_else(|| path.to_string())
}

/// Prints the tree of the table's current snapshot.
pub(crate) async fn print(io: &FileIo, table: &Table) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    let meta = &table.metadata;
    let loc = &meta.location;
    let Some(snap) = meta.current_snapshot() else {
        writeln!(
            out,
            "{} (no snapshot yet)",
            table.metadata_location.as_deref().unwrap_or("?")
        )?;
        return Ok(());
    };
    writeln!(
        out,
        "{}",
        short(table.metadata_location.as_deref().unwrap_or("?"), loc)
    )?;
    writeln!(
        out,
        "└── snapshot {} (sequence {}, {})",
        snap.snapshot_id,
        snap.sequence_number,
        snap.operation().map_or("?", |o| o.as_str())
    )?;
    let list = snap.manifest_list.as_deref();
    writeln!(out, "    └── {}  [new]", short(list.unwrap_or("?"), loc))?;
    let manifests = read_manifest_list(io, list).await?;
    for (i, m) in manifests.iter().enumerate() {
        let last = i + 1 == manifests.len();
        let new = m.added_snapshot_id == snap.snapshot_id;
        writeln!(
            out,
            "        {} {}  [{}; {} files, {} rows]",
            if last { "└──" } else { "├──" },
            short(&m.manifest_path, loc),
            if new { "new" } else { "carried by reference" },
            m.added_files_count.unwrap_or(0) + m.existing_files_count.unwrap_or(0),
            m.added_rows_count.unwrap_or(0) + m.existing_rows_count.unwrap_or(0),
        )?;
        if new {
            let bytes = io.read(&m.manifest_path).await?;
            let decoded = decode_manifest(&m.manifest_path, &bytes)?;
            for (j, e) in decoded.entries.iter().enumerate() {
                writeln!(
                    out,
                    "        {}   {} {}  ({} rows, {} bytes)",
                    if last { " " } else { "│" },
                    if j + 1 == decoded.entries.len() {
                        "└──"
                    } else {
                        "├──"
                    },
                    short(&e.data_file.file_path, loc),
                    e.data_file.record_count,
                    e.data_file.file_size_in_bytes
                )?;
            }
        }
    }
    Ok(())
}

/// `iceberg tree ns.table`: the tree of a table in the warehouse's catalog.
pub(crate) async fn run_for_name(warehouse: &Path, name: &str) -> Result<(), BoxError> {
    let ident = TableIdent::parse(name)
        .ok_or_else(|| format!("table name `{name}` must be namespace.table"))?;
    let root = std::fs::canonicalize(warehouse)?;
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(&root)).await?;
    let table = catalog.load_table(&ident).await?;
    print(catalog.io(), &table).await
}
