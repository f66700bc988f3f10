//! `iceberg log`: the snapshot history, oldest first, with operation and summary counts.

use serde_json::json;

use super::format_ms;
use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::error::Result;

/// Summary keys shown per snapshot, with their column headings.
const COUNTS: [(&str, &str); 4] = [
    ("added-records", "+rows"),
    ("total-records", "rows"),
    ("added-data-files", "+files"),
    ("total-data-files", "files"),
];

/// Runs `iceberg log`.
///
/// # Errors
/// A missing table.
pub(crate) async fn run(cli: &Cli, name: &str) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let loaded = open.load(name).await;
    open.close().await;
    let (ident, table) = loaded?;
    let meta = &table.metadata;
    let mut snapshots: Vec<_> = meta.snapshots.iter().collect();
    snapshots.sort_by_key(|s| (s.sequence_number, s.timestamp_ms));
    let count = |s: &iceberg_spec::Snapshot, k: &str| s.summary.as_ref().and_then(|x| x.get_i64(k));
    if cli.json {
        let out: Vec<_> = snapshots
            .iter()
            .map(|s| {
                let mut v = json!({
                    "snapshot_id": s.snapshot_id,
                    "parent_snapshot_id": s.parent_snapshot_id,
                    "sequence_number": s.sequence_number,
                    "timestamp_ms": s.timestamp_ms,
                    "timestamp": format_ms(s.timestamp_ms),
                    "operation": s.operation().map(|o| o.as_str()),
                    "current": meta.current_snapshot_id == Some(s.snapshot_id),
                });
                if let Some(obj) = v.as_object_mut() {
                    for (key, _) in COUNTS {
                        obj.insert(key.replace('-', "_"), json!(count(s, key)));
                    }
                }
                v
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"table": ident.to_string(), "snapshots": out}))?
        );
        return Ok(());
    }
    if snapshots.is_empty() {
        outln!("{ident}: no snapshots yet");
        return Ok(());
    }
    outln!(
        "  {:<20} {:<20} {:<23} {:<9} {:>10} {:>12} {:>7} {:>7}",
        "snapshot",
        "parent",
        "time (UTC)",
        "operation",
        "+rows",
        "rows",
        "+files",
        "files"
    );
    for s in snapshots {
        let c = |k: &str| count(s, k).map_or("-".into(), |v| v.to_string());
        outln!(
            "{} {:<20} {:<20} {:<23} {:<9} {:>10} {:>12} {:>7} {:>7}",
            if meta.current_snapshot_id == Some(s.snapshot_id) {
                "*"
            } else {
                " "
            },
            s.snapshot_id,
            s.parent_snapshot_id.map_or("-".into(), |p| p.to_string()),
            format_ms(s.timestamp_ms),
            s.operation().map_or("?", |o| o.as_str()),
            c(COUNTS[0].0),
            c(COUNTS[1].0),
            c(COUNTS[2].0),
            c(COUNTS[3].0),
        );
    }
    Ok(())
}
