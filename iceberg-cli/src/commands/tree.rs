//! The metadata tree of a snapshot: metadata file, manifest list, manifests, data files,
//! marking what the snapshot wrote (new) and what it carried by reference, as text or as
//! Graphviz `dot` (new nodes filled and bold, carried ones dashed and grey).

use std::fmt::Write as _;
use std::io::Write;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{Table, read_snapshot_manifests};
use iceberg_io::FileIo;
use iceberg_spec::{ManifestFile, ManifestStatus, Snapshot};

use serde_json::{Value, json};

use super::short;
use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::error::Result;

/// One data file under a manifest.
#[derive(Debug)]
struct FileNode {
    path: String,
    rows: i64,
    bytes: i64,
    new: bool,
}

/// One manifest of the list.
#[derive(Debug)]
struct ManifestNode {
    manifest: ManifestFile,
    new: bool,
    /// The entries of new manifests (carried manifests are not opened).
    files: Vec<FileNode>,
}

/// What the tree shows.
#[derive(Debug)]
struct Model<'a> {
    metadata_location: String,
    snapshot: &'a Snapshot,
    manifests: Vec<ManifestNode>,
}

async fn model<'a>(io: &FileIo, table: &'a Table, snapshot: &'a Snapshot) -> Result<Model<'a>> {
    let id = snapshot.snapshot_id;
    let mut manifests = Vec::new();
    for m in read_snapshot_manifests(io, snapshot).await? {
        let new = m.added_snapshot_id == id;
        let mut files = Vec::new();
        if new {
            let bytes = io.read(&m.manifest_path).await?;
            for e in decode_manifest(&m.manifest_path, &bytes)?.entries {
                if e.status == ManifestStatus::Deleted {
                    continue;
                }
                let added_here = e.status == ManifestStatus::Added
                    && e.snapshot_id.unwrap_or(m.added_snapshot_id) == id;
                files.push(FileNode {
                    path: e.data_file.file_path,
                    rows: e.data_file.record_count,
                    bytes: e.data_file.file_size_in_bytes,
                    new: added_here,
                });
            }
        }
        manifests.push(ManifestNode {
            manifest: m,
            new,
            files,
        });
    }
    Ok(Model {
        metadata_location: table
            .metadata_location
            .clone()
            .unwrap_or_else(|| "?".into()),
        snapshot,
        manifests,
    })
}

/// The tree as JSON: the metadata file, the snapshot, its manifest list, and each manifest
/// with `new` and (for new ones) its files.
fn render_json(m: &Model<'_>, table: &str) -> Value {
    let s = m.snapshot;
    let manifests: Vec<Value> = m
        .manifests
        .iter()
        .map(|node| {
            let mf = &node.manifest;
            json!({
                "manifest_path": mf.manifest_path,
                "new": node.new,
                "content": if mf.content == iceberg_spec::ManifestContent::Data { "data" } else { "deletes" },
                "added_snapshot_id": mf.added_snapshot_id,
                "files": mf.added_files_count.unwrap_or(0) + mf.existing_files_count.unwrap_or(0),
                "rows": mf.added_rows_count.unwrap_or(0) + mf.existing_rows_count.unwrap_or(0),
                "data_files": node.files.iter().map(|f| json!({
                    "file_path": f.path,
                    "record_count": f.rows,
                    "file_size_in_bytes": f.bytes,
                    "new": f.new,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "table": table,
        "metadata_location": m.metadata_location,
        "snapshot": {
            "snapshot_id": s.snapshot_id,
            "sequence_number": s.sequence_number,
            "operation": s.operation().map(|o| o.as_str()),
            "manifest_list": s.manifest_list,
        },
        "manifests": manifests,
    })
}

fn tag(new: bool) -> &'static str {
    if new { "new" } else { "carried by reference" }
}

fn render_text(m: &Model<'_>, loc: &str, out: &mut impl Write) -> std::io::Result<()> {
    let s = m.snapshot;
    writeln!(out, "{}", short(&m.metadata_location, loc))?;
    writeln!(
        out,
        "└── snapshot {} (sequence {}, {})",
        s.snapshot_id,
        s.sequence_number,
        s.operation().map_or("?", |o| o.as_str())
    )?;
    writeln!(
        out,
        "    └── {}  [new]",
        short(s.manifest_list.as_deref().unwrap_or("?"), loc)
    )?;
    for (i, node) in m.manifests.iter().enumerate() {
        let last = i + 1 == m.manifests.len();
        let mf = &node.manifest;
        writeln!(
            out,
            "        {} {}  [{}; {} files, {} rows]",
            if last { "└──" } else { "├──" },
            short(&mf.manifest_path, loc),
            tag(node.new),
            mf.added_files_count.unwrap_or(0) + mf.existing_files_count.unwrap_or(0),
            mf.added_rows_count.unwrap_or(0) + mf.existing_rows_count.unwrap_or(0),
        )?;
        for (j, f) in node.files.iter().enumerate() {
            writeln!(
                out,
                "        {}   {} {}  ({} rows, {} bytes{})",
                if last { " " } else { "│" },
                if j + 1 == node.files.len() {
                    "└──"
                } else {
                    "├──"
                },
                short(&f.path, loc),
                f.rows,
                f.bytes,
                if f.new { "" } else { "; carried by reference" }
            )?;
        }
    }
    Ok(())
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn style(new: bool) -> &'static str {
    if new {
        "style=\"filled,bold\", fillcolor=\"#c6efce\", color=\"#2e7d32\""
    } else {
        "style=dashed, color=gray50, fontcolor=gray40"
    }
}

fn render_dot(m: &Model<'_>, loc: &str) -> String {
    let s = m.snapshot;
    let mut d = String::new();
    let list = s.manifest_list.as_deref().unwrap_or("?");
    let _ = writeln!(d, "digraph iceberg {{");
    let _ = writeln!(d, "  rankdir=LR;");
    let _ = writeln!(
        d,
        "  node [shape=box, fontname=\"Helvetica\", fontsize=10];"
    );
    let _ = writeln!(
        d,
        "  label={}; labelloc=t;",
        quote(&format!(
            "snapshot {} (sequence {}): green = new, dashed grey = carried by reference",
            s.snapshot_id, s.sequence_number
        ))
    );
    let _ = writeln!(
        d,
        "  metadata [label={}, shape=note, {}];",
        quote(&format!("metadata\n{}", short(&m.metadata_location, loc))),
        style(true)
    );
    let _ = writeln!(
        d,
        "  list [label={}, {}];",
        quote(&format!(
            "manifest list\nsnapshot {}\n{}",
            s.snapshot_id,
            short(list, loc)
        )),
        style(true)
    );
    let _ = writeln!(d, "  metadata -> list;");
    for (i, node) in m.manifests.iter().enumerate() {
        let mf = &node.manifest;
        let rows = mf.added_rows_count.unwrap_or(0) + mf.existing_rows_count.unwrap_or(0);
        let _ = writeln!(
            d,
            "  m{i} [label={}, {}];",
            quote(&format!(
                "manifest\n{}\n{rows} rows",
                short(&mf.manifest_path, loc)
            )),
            style(node.new)
        );
        let _ = writeln!(
            d,
            "  list -> m{i}{};",
            if node.new { "" } else { " [style=dashed]" }
        );
        for (j, f) in node.files.iter().enumerate() {
            let _ = writeln!(
                d,
                "  f{i}_{j} [label={}, shape=cylinder, {}];",
                quote(&format!("{}\n{} rows", short(&f.path, loc), f.rows)),
                style(f.new)
            );
            let _ = writeln!(d, "  m{i} -> f{i}_{j};");
        }
    }
    d.push_str("}\n");
    d
}

/// Prints the text tree of the table's current snapshot.
///
/// # Errors
/// When a manifest list or manifest cannot be read, or stdout is closed.
pub(crate) async fn print(io: &FileIo, table: &Table) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let Some(snap) = table.metadata.current_snapshot() else {
        writeln!(
            out,
            "{} (no snapshot yet)",
            table.metadata_location.as_deref().unwrap_or("?")
        )?;
        return Ok(());
    };
    let m = model(io, table, snap).await?;
    render_text(&m, &table.metadata.location, &mut out)?;
    Ok(())
}

/// Runs `iceberg tree`.
///
/// # Errors
/// A missing table or snapshot, or unreadable metadata.
pub(crate) async fn run(cli: &Cli, name: &str, snapshot: Option<i64>, dot: bool) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, table) = open.load(name).await?;
        let meta = &table.metadata;
        let snap = match snapshot {
            Some(id) => meta.snapshot_by_id(id).ok_or_else(|| {
                let ids: Vec<String> = meta
                    .snapshots
                    .iter()
                    .map(|s| s.snapshot_id.to_string())
                    .collect();
                crate::error::Error::Table(format!(
                    "table `{ident}` has no snapshot {id} (snapshots: {})",
                    if ids.is_empty() {
                        "none".into()
                    } else {
                        ids.join(", ")
                    }
                ))
            })?,
            None => match meta.current_snapshot() {
                Some(s) => s,
                None if cli.json => {
                    outln!(
                        "{}",
                        json!({ "table": ident.to_string(), "snapshot": null })
                    );
                    return Ok(());
                }
                None => {
                    outln!("{ident}: no snapshot yet");
                    return Ok(());
                }
            },
        };
        let m = model(&open.catalog.table_io(&table), &table, snap).await?;
        let mut out = std::io::stdout().lock();
        if cli.json {
            let text = serde_json::to_string_pretty(&render_json(&m, &ident.to_string()))?;
            writeln!(out, "{text}")?;
        } else if dot {
            out.write_all(render_dot(&m, &meta.location).as_bytes())?;
        } else {
            render_text(&m, &meta.location, &mut out)?;
        }
        Ok::<(), crate::error::Error>(())
    }
    .await;
    open.close().await;
    result
}
