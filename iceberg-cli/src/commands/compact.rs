//! `iceberg compact`: small data files rewritten per partition into files near the target
//! size (`iceberg_append::RewriteDataFiles`), one `replace` commit, with progress.

use iceberg_append::{RewriteDataFiles, SystemEnvironment};
use serde_json::json;

use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::error::{Error, Result};

/// Runs `iceberg compact`.
///
/// # Errors
/// A missing table, a v3 table, a read or write failure (the files written so far are
/// deleted), a conflict with a concurrent commit, or the commit's failure.
pub(crate) async fn run(
    cli: &Cli,
    table: &str,
    target_file_size: Option<u64>,
    min_input_files: usize,
) -> Result<()> {
    let mut compaction = RewriteDataFiles::new().min_input_files(min_input_files);
    if let Some(bytes) = target_file_size {
        compaction = compaction.target_file_size_bytes(bytes);
    }
    let quiet = cli.json;
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, _) = open.load(table).await?;
        let report = compaction
            .commit(
                open.catalog.as_ref(),
                &ident,
                &SystemEnvironment,
                |i, n, files| {
                    if !quiet {
                        eprintln!(
                            "[{}/{n}] compacting {files} file(s) of one partition",
                            i + 1
                        );
                    }
                },
            )
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
            "partitions": r.groups,
            "files_rewritten": r.files_rewritten,
            "bytes_rewritten": r.bytes_rewritten,
            "files_written": r.files_written,
            "bytes_written": r.bytes_written,
            "rows": r.rows,
            "skipped_with_deletes": r.skipped_with_deletes,
            "skipped_other_schema": r.skipped_other_schema,
            "skipped_unknown_transform": r.skipped_unknown_transform,
            "attempts": r.attempts,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if r.metadata_location.is_none() {
        outln!("{ident}: no partition has enough small files; nothing compacted");
    } else {
        outln!(
            "{ident}: snapshot {}: {} partition(s), {} file(s) ({} bytes) rewritten as {} ({} \
             bytes), {} rows",
            r.snapshot_id.unwrap_or_default(),
            r.groups,
            r.files_rewritten,
            r.bytes_rewritten,
            r.files_written,
            r.bytes_written,
            r.rows
        );
    }
    if r.skipped_with_deletes + r.skipped_other_schema > 0 {
        outln!(
            "left alone: {} small file(s) a delete file applies to, {} written with another schema",
            r.skipped_with_deletes,
            r.skipped_other_schema
        );
    }
    if r.skipped_unknown_transform > 0 {
        outln!(
            "left alone: {} small file(s) of a partition spec with a transform this tool does \
             not know",
            r.skipped_unknown_transform
        );
    }
    Ok(())
}
