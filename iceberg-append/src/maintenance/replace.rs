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
/// attempt's files are kept); the catalog's errors.
pub(crate) async fn commit_planned<T>(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    env: &dyn Environment,
    snapshot_id: i64,
    mut plan: impl AsyncFnMut(&Table, &FileIo, u32) -> Result<Option<Planned<T>>>,
) -> Result<Option<Committed<T>>> {
    let mut base = catalog.load_table(ident).await?;
    let retry = TableProperties::parse(&base.metadata.properties)?.commit_retry;
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
                return Ok(Some(Committed {
                    metadata_location: location,
                    attempts: attempt,
                    value: planned.value,
                }));
            }
            Err(e) if e.is_commit_conflict() => e,
            Err(e) => {
                if !e.is_commit_state_unknown() {
                    let _ = io.delete_many(planned.written).await;
                }
                return Err(e);
            }
        };
        base = catalog.load_table(ident).await?;
        if base.metadata.current_snapshot_id == Some(snapshot_id) {
            // Our swap landed and its answer was lost.
            return Ok(Some(Committed {
                metadata_location: base.metadata_location.clone().unwrap_or_default(),
                attempts: attempt,
                value: planned.value,
            }));
        }
        let _ = io.delete_many(planned.written).await;
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
