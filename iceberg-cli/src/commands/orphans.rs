//! `iceberg orphans`: files under a table's location that nothing of the table refers to
//! (`iceberg_append::DeleteOrphanFiles`), listed, or deleted with `--delete`.

use iceberg_append::{DeleteOrphanFiles, Environment, OrphanReport, SystemEnvironment};
use serde_json::json;

use super::expire::cut_off;
use super::format_ms;
use crate::catalog::OpenCatalog;
use crate::cli::{Cli, OrphansArgs};
use crate::error::{Error, Result};

/// How young a file `--delete` leaves alone unless `--allow-recent` is given.
const RECENT_MS: i64 = 24 * 60 * 60 * 1000;

/// Runs `iceberg orphans`.
///
/// # Errors
/// A bad argument, a missing table, or a listing or manifest that cannot be read (then
/// nothing is deleted).
pub(crate) async fn run(cli: &Cli, args: &OrphansArgs) -> Result<()> {
    let now_ms = SystemEnvironment.now_ms();
    let mut search = DeleteOrphanFiles::new();
    if let Some(text) = &args.older_than {
        let older_than_ms = cut_off(text, now_ms)?;
        if args.delete && !args.allow_recent && older_than_ms > now_ms - RECENT_MS {
            // Java's `remove_orphan_files` procedure refuses the same, for the same reason.
            return Err(Error::Usage(format!(
                "--older-than {text} would delete files younger than 24 hours, which a \
                 write in flight may still commit (its table would then refer to missing \
                 files); give an older cut-off, or add --allow-recent if nothing writes to \
                 the table"
            )));
        }
        search = search.older_than_ms(older_than_ms);
    }
    if let Some(location) = &args.location {
        search = search.location(location.clone());
    }
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, table) = open.load(&args.table).await?;
        let report = if args.delete {
            // Loaded again after the search: what a commit referred to meanwhile stays.
            search
                .delete_from(open.catalog.as_ref(), &ident, now_ms)
                .await?
        } else {
            let io = open.catalog.table_io(&table);
            search.find(&io, &table, now_ms).await?
        };
        Ok::<_, Error>((ident, report))
    }
    .await;
    open.close().await;
    let (ident, report) = result?;
    print(cli.json, &ident.to_string(), &report)?;
    if let Some(e) = report.delete_error {
        return Err(Error::Table(format!(
            "deleting the orphans of {ident} failed: {e}"
        )));
    }
    Ok(())
}

fn print(as_json: bool, table: &str, report: &OrphanReport) -> Result<()> {
    let bytes: u64 = report.orphans.iter().map(|o| o.size).sum();
    if as_json {
        let out = json!({
            "table": table,
            "orphans": report.orphans.iter().map(|o| json!({
                "path": o.path,
                "size": o.size,
                "last_modified_ms": o.last_modified_ms,
            })).collect::<Vec<_>>(),
            "orphan_bytes": bytes,
            "listed": report.listed,
            "referenced": report.referenced,
            "too_new": report.too_new,
            "other_tables": report.other_tables,
            "hidden": report.hidden,
            "deleted": report.deleted,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for o in &report.orphans {
        outln!(
            "{}  {:>12}  {}",
            format_ms(o.last_modified_ms),
            o.size,
            o.path
        );
    }
    let verb = if report.deleted { "deleted" } else { "found" };
    outln!(
        "{table}: {verb} {} orphan file(s), {bytes} bytes, of {} listed ({} referenced, {} \
         unreferenced but too new, {} of other tables nested in its folder, {} hidden){}",
        report.orphans.len(),
        report.listed,
        report.referenced,
        report.too_new,
        report.other_tables,
        report.hidden,
        if report.deleted || report.orphans.is_empty() {
            ""
        } else {
            "; --delete deletes them"
        }
    );
    Ok(())
}
