//! `iceberg rewrite-manifests`: the current snapshot's data manifests re-clustered into few
//! (`iceberg_append::RewriteManifests`), one `replace` commit.

use iceberg_append::{RewriteManifests, SystemEnvironment};
use serde_json::json;

use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::error::{Error, Result};

/// Runs `iceberg rewrite-manifests`.
///
/// # Errors
/// A missing table, an unreadable manifest, or the commit's failure (the table is then
/// unchanged, or its state unknown).
pub(crate) async fn run(cli: &Cli, table: &str, target_size: Option<u64>) -> Result<()> {
    let mut rewrite = RewriteManifests::new();
    if let Some(bytes) = target_size {
        rewrite = rewrite.target_size_bytes(bytes);
    }
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, _) = open.load(table).await?;
        let report = rewrite
            .commit(open.catalog.as_ref(), &ident, &SystemEnvironment)
            .await?;
        Ok::<_, Error>((ident, report))
    }
    .await;
    open.close().await;
    let (ident, r) = result?;
    if cli.json {
        let out = json!({
            "table": ident.to_string(),
            "metadata_location": r.metadata_location,
            "snapshot_id": r.snapshot_id,
            "manifests_replaced": r.manifests_replaced,
            "manifests_created": r.manifests_created,
            "manifests_kept": r.manifests_kept,
            "entries": r.entries,
            "attempts": r.attempts,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else if r.metadata_location.is_none() {
        outln!("{ident}: no partition spec has two data manifests; nothing to rewrite");
    } else {
        outln!(
            "{ident}: snapshot {}: {} data manifest(s) rewritten as {} ({} entries), {} kept",
            r.snapshot_id.unwrap_or_default(),
            r.manifests_replaced,
            r.manifests_created,
            r.entries,
            r.manifests_kept
        );
    }
    Ok(())
}
