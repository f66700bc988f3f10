//! `iceberg expire`: snapshot expiry (`iceberg_append::ExpireSnapshots`), one commit, then
//! the files only the expired snapshots reached are deleted; `--dry-run` only reports.

use iceberg_append::maintenance::{ExpiredFiles, FileCount};
use iceberg_append::{Environment, ExpireSnapshots, ExpiryReport, SystemEnvironment};
use serde_json::json;

use crate::catalog::OpenCatalog;
use crate::cli::{Cli, ExpireArgs};
use crate::error::{Error, Result};

/// Runs `iceberg expire`.
///
/// # Errors
/// A bad argument, a missing table, a snapshot a ref holds, or the commit's failure (the
/// table is then unchanged, or its state unknown and nothing deleted).
pub(crate) async fn run(cli: &Cli, args: &ExpireArgs) -> Result<()> {
    let env = SystemEnvironment;
    let now_ms = env.now_ms();
    let mut expiry = ExpireSnapshots::new();
    if let Some(text) = &args.older_than {
        expiry = expiry.older_than_ms(cut_off(text, now_ms)?);
    }
    if let Some(n) = args.retain_last {
        expiry = expiry.retain_last(n as usize);
    }
    for id in &args.snapshot_ids {
        expiry = expiry.expire_snapshot_id(*id);
    }
    if args.keep_files {
        expiry = expiry.keep_files();
    }
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, table) = open.load(&args.table).await?;
        let report = if args.dry_run {
            let io = open.catalog.table_io(&table);
            expiry.plan(&io, &table.metadata, now_ms).await?
        } else {
            expiry.commit(open.catalog.as_ref(), &ident, &env).await?
        };
        Ok::<_, Error>((ident, report))
    }
    .await;
    open.close().await;
    let (ident, report) = result?;
    print(cli.json, &ident.to_string(), &report, args.dry_run)
}

/// The cut-off time of `--older-than`: an age before `now_ms` (`5d`, `36h`) or a time
/// (RFC 3339, or a date for its midnight UTC).
pub(crate) fn cut_off(text: &str, now_ms: i64) -> Result<i64> {
    if let Ok(age) = humantime::parse_duration(text) {
        let ms = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
        return Ok(now_ms.saturating_sub(ms));
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(t.and_utc().timestamp_millis());
    }
    Err(Error::Usage(format!(
        "--older-than `{text}`: expected an age (`5d`, `12h`, `30min`) or a time \
         (`2026-01-01T00:00:00Z`, `2026-01-01`)"
    )))
}

fn print(as_json: bool, table: &str, report: &ExpiryReport, dry_run: bool) -> Result<()> {
    let f = &report.files;
    if as_json {
        let count = |c: &FileCount| json!({"files": c.files, "bytes": c.bytes});
        let out = json!({
            "table": table,
            "dry_run": dry_run,
            "metadata_location": report.metadata_location,
            "expired_snapshots": report.expired_snapshots,
            "removed_refs": report.removed_refs,
            "kept_snapshots": report.kept_snapshots,
            "files_deleted": report.files_deleted,
            "data_files": count(&f.data_files),
            "delete_files": count(&f.delete_files),
            "manifests": count(&f.manifests),
            "manifest_lists": count(&f.manifest_lists),
            "statistics_files": count(&f.statistics_files),
            "cleanup_error": report.cleanup_error.as_ref().map(ToString::to_string),
            "attempts": report.attempts,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let verb = if dry_run { "would expire" } else { "expired" };
        outln!(
            "{table}: {verb} {} snapshot(s), {} kept{}",
            report.expired_snapshots.len(),
            report.kept_snapshots,
            if report.removed_refs.is_empty() {
                String::new()
            } else {
                format!("; refs removed: {}", report.removed_refs.join(", "))
            }
        );
        let what = if dry_run {
            "would delete"
        } else if report.files_deleted {
            "deleted"
        } else {
            "left in place (--keep-files)"
        };
        if !report.expired_snapshots.is_empty() {
            outln!("files only they reached, {what}: {}", files_line(f));
        }
        if let Some(location) = &report.metadata_location {
            outln!("metadata: {location}");
        }
    }
    if let Some(e) = &report.cleanup_error {
        eprintln!(
            "warning: the expiry is committed, but deleting its files failed ({e}); what is \
             left is not referenced by the table"
        );
    }
    Ok(())
}

fn files_line(f: &ExpiredFiles) -> String {
    let mib = |c: &FileCount| c.bytes as f64 / (1024.0 * 1024.0);
    format!(
        "{} data file(s) ({:.1} MiB), {} delete file(s) ({:.1} MiB), {} manifest(s), {} \
         manifest list(s), {} statistics file(s)",
        f.data_files.files,
        mib(&f.data_files),
        f.delete_files.files,
        mib(&f.delete_files),
        f.manifests.files,
        f.manifest_lists.files,
        f.statistics_files.files
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn older_than_takes_ages_and_times() {
        let now = 10 * 86_400_000;
        assert_eq!(cut_off("5d", now).unwrap(), now - 5 * 86_400_000);
        assert_eq!(cut_off("90min", now).unwrap(), now - 90 * 60_000);
        assert_eq!(cut_off("0s", now).unwrap(), now);
        assert_eq!(cut_off("1970-01-02T00:00:00Z", now).unwrap(), 86_400_000);
        assert_eq!(cut_off("1970-01-03", now).unwrap(), 2 * 86_400_000);
        let err = cut_off("yesterday", now).unwrap_err();
        assert!(err.to_string().contains("`yesterday`"), "{err}");
    }
}
