//! The commit loop of the maintenance operations that replace part of a table (compaction,
//! manifest rewrites): every attempt is planned anew on the table as it is then (the caller
//! checks that its inputs still hold), a lost attempt's files are deleted, a lost answer is
//! recognised by the snapshot id, and nothing of a commit that may have landed is deleted.

use std::time::{Duration, Instant};

use iceberg_io::FileIo;
use iceberg_spec::{TableMetadata, TableProperties};

use crate::catalog::{Catalog, TableIdent};
use crate::commit::backoff;
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::table::Table;

/// One planned attempt: the metadata to commit, the files it wrote, and what to report.
pub(crate) struct Planned<T> {
    pub(crate) metadata: TableMetadata,
    pub(crate) written: Vec<String>,
    pub(crate) value: T,
}

/// A landed commit.
pub(crate) struct Committed<T> {
    pub(crate) metadata_location: String,
    pub(crate) attempts: u32,
    pub(crate) value: T,
}

/// Commits the snapshot `snapshot_id` that `plan` makes on each attempt's base (`None`:
/// nothing to do, nothing committed), retrying on conflicts with the table's
/// `commit.retry.*` properties.
///
/// # Errors
/// `plan`'s errors; [`Error::RetriesExhausted`]; [`Error::CommitStateUnknown`] (the
/// attempt's files are kept: the catalog could not tell, or the table could not be reloaded
/// after a failed swap); the catalog's errors (its files deleted: the table shows the
/// snapshot did not land).
pub(crate) async fn commit_planned<T>(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    env: &dyn Environment,
    snapshot_id: i64,
    mut plan: impl AsyncFnMut(&Table, &FileIo, u32) -> Result<Option<Planned<T>>>,
) -> Result<Option<Committed<T>>> {
    let mut base = catalog.load_table(ident).await?;
    let retry = TableProperties::parse_for_commit(&base.metadata.properties)?.commit_retry;
    let started = Instant::now();
    let mut attempt = 1u32;
    loop {
        let io = catalog.table_io(&base);
        let Some(planned) = plan(&base, &io, attempt).await? else {
            return Ok(None);
        };
        let base_location = base.metadata_location.clone().unwrap_or_default();
        let error = match catalog
            .commit(ident, &base_location, &planned.metadata)
            .await
        {
            Ok(location) => {
                let dropped =
                    crate::commit::dropped_metadata_files(catalog, &base, &planned.metadata);
                crate::commit::cleanup(&io, dropped).await;
                return Ok(Some(Committed {
                    metadata_location: location,
                    attempts: attempt,
                    value: planned.value,
                }));
            }
            // Said before anything was sent: nothing can have landed.
            Err(e) if e.is_pre_request_refusal() => {
                let _ = io.delete_many(planned.written).await;
                return Err(e);
            }
            Err(e) => e,
        };
        // A conflict may be our own swap whose answer was lost (a store that retried a
        // conditional create answers "already exists"), with other commits on top of it
        // since, and any other error may have come after the swap was made: only the
        // table can say, by holding the snapshot anywhere, not only at its head.
        base = match catalog.load_table(ident).await {
            Ok(table) => table,
            Err(reload) => {
                return Err(Error::CommitStateUnknown {
                    table: ident.to_string(),
                    snapshot_id: Some(snapshot_id),
                    reason: format!("{error}; then reloading the table failed: {reload}"),
                    source: Some(Box::new(error)),
                });
            }
        };
        if base.metadata.snapshot_by_id(snapshot_id).is_some() {
            return Ok(Some(Committed {
                metadata_location: base.metadata_location.clone().unwrap_or_default(),
                attempts: attempt,
                value: planned.value,
            }));
        }
        if error.is_commit_state_unknown() {
            // Not there yet, but it may still land: keep its files.
            return Err(error);
        }
        let _ = io.delete_many(planned.written).await;
        if !error.is_commit_conflict() {
            // Not there, and not a conflict: the swap failed for good.
            return Err(error);
        }
        let out_of_time = started.elapsed() >= Duration::from_millis(retry.total_timeout_ms);
        if attempt > retry.num_retries || out_of_time {
            return Err(Error::RetriesExhausted {
                table: ident.to_string(),
                snapshot_id,
                attempts: attempt,
                last: Box::new(error),
            });
        }
        tokio::time::sleep(backoff(attempt, retry.min_wait_ms, retry.max_wait_ms, env)).await;
        attempt += 1;
    }
}
