//! Committing an append through a catalog, with Java's retry rules and no double commits.
//!
//! ```text
//! data files -> manifest(s) -> manifest list -> metadata.json -> catalog pointer swap
//!               (written once)  (one per attempt)                   (conflict? reload,
//!                                                                     re-plan, retry)
//! ```
//! One rule decides what is deleted: a file this commit wrote is deleted only when the commit
//! definitely did not land. After any error but a refusal made before anything was sent
//! ([`Error::is_pre_request_refusal`]), the table is reloaded and searched for our snapshot
//! id: found means success (an earlier answer was lost, or a store that retried a conditional
//! create called our own write a conflict); a failed reload means the outcome is unknown
//! ([`Error::CommitStateUnknown`], nothing deleted); absent means a conflict to retry, or a
//! failure. A catalog that itself cannot tell (a connection lost after the swap was sent) is
//! reconciled the same way, as Java's `checkCommitStatus` does: absent, it is retried; but a
//! late swap may still arrive, so from then on the commit never reports a definite failure
//! nor deletes anything: if it gives up, its outcome is unknown. Every retry also checks
//! that the table is still the same table (its UUID), as Java's `SnapshotProducer` does. A
//! retry plans the same snapshot id and manifests onto the new base with a new manifest list
//! (so a late swap of an earlier attempt and a later attempt can never both land).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use iceberg_spec::{DataFile, TableProperties};

use crate::append::{AppendInput, AppendMode, AppendResult, PendingAppend, start_append};
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::evolve::SchemaEvolution;

/// A landed append.
#[derive(Debug, Clone)]
pub struct CommitOutcome {
    /// The committed snapshot.
    pub snapshot_id: i64,
    /// The new current metadata file.
    pub metadata_location: String,
    /// Attempts it took.
    pub attempts: u32,
    /// Rows added.
    pub added_records: i64,
}

/// Appends `data_files` to `ident` through `catalog`, retrying on conflicts; merges small
/// manifests when the table enables `commit.manifest-merge.enabled` (Java's default).
///
/// # Errors
/// [`Error::RetriesExhausted`] when every attempt lost to a concurrent commit, and
/// [`Error::CommitFailed`] when a definite error occurred (either way the manifests and
/// manifest lists this commit wrote are deleted); [`Error::CommitStateUnknown`] when the
/// outcome cannot be known (nothing is deleted).
pub async fn commit_append(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    data_files: Vec<DataFile>,
    extra_summary: BTreeMap<String, String>,
    env: &dyn Environment,
) -> Result<CommitOutcome> {
    commit_append_with_mode(catalog, ident, data_files, extra_summary, None, env).await
}

/// As [`commit_append`], always a fast append (no manifest merging): the cheapest commit.
///
/// # Errors
/// As [`commit_append`].
pub async fn commit_fast_append(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    data_files: Vec<DataFile>,
    extra_summary: BTreeMap<String, String>,
    env: &dyn Environment,
) -> Result<CommitOutcome> {
    commit_append_with_mode(
        catalog,
        ident,
        data_files,
        extra_summary,
        Some(AppendMode::Fast),
        env,
    )
    .await
}

/// As [`commit_append`] with an explicit mode (`None`: from the table's properties).
///
/// # Errors
/// As [`commit_append`].
pub async fn commit_append_with_mode(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    data_files: Vec<DataFile>,
    extra_summary: BTreeMap<String, String>,
    mode: Option<AppendMode>,
    env: &dyn Environment,
) -> Result<CommitOutcome> {
    let input = AppendInput::new(data_files, extra_summary, mode, None);
    // Boxed: the loop's state is large, and callers' futures should not carry it.
    Ok(
        Box::pin(commit_input(catalog, ident, input, mode.is_none(), env))
            .await?
            .0,
    )
}

/// As [`commit_append_with_mode`], making `evolution` the table's current schema in the same
/// commit (the data files were written with [`SchemaEvolution::schema`]).
///
/// # Errors
/// As [`commit_append`]; [`Error::SchemaConflict`] when a concurrent schema change means the
/// files would not read as written (the manifests this commit wrote are deleted).
pub async fn commit_evolving_append(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    data_files: Vec<DataFile>,
    evolution: SchemaEvolution,
    extra_summary: BTreeMap<String, String>,
    mode: Option<AppendMode>,
    env: &dyn Environment,
) -> Result<CommitOutcome> {
    let input = AppendInput::new(data_files, extra_summary, mode, Some(evolution));
    // Boxed: the loop's state is large, and callers' futures should not carry it.
    Ok(
        Box::pin(commit_input(catalog, ident, input, mode.is_none(), env))
            .await?
            .0,
    )
}

/// The current schema, default spec and default sort order ids of landed metadata.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetadataIds {
    pub(crate) schema_id: i32,
    pub(crate) spec_id: i32,
    pub(crate) sort_order_id: i64,
}

impl MetadataIds {
    fn of(meta: &iceberg_spec::TableMetadata) -> Self {
        Self {
            schema_id: meta.current_schema_id,
            spec_id: meta.default_spec_id,
            sort_order_id: meta.default_sort_order_id,
        }
    }
}

/// The commit loop; `mode_from_table`: the input's mode is replaced by the table's.
pub(crate) async fn commit_input(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    mut input: AppendInput,
    mode_from_table: bool,
    env: &dyn Environment,
) -> Result<(CommitOutcome, MetadataIds)> {
    let cache = catalog.metadata_cache();
    let mut base = catalog.load_table(ident).await?;
    let io = catalog.table_io(&base);
    let props = TableProperties::parse_for_commit(&base.metadata.properties)?;
    let retry = props.commit_retry;
    if mode_from_table {
        input.mode = AppendMode::from_properties(&props);
    }
    let (mut pending, first) = start_append(&io, &base, input, env, cache).await?;
    let started = Instant::now();
    let mut lists = vec![first.manifest_list.clone()];
    let mut result: AppendResult = first;
    let mut attempt = 1u32;
    // Everything this commit wrote except the final manifest list and the manifests it lists.
    let written = |pending: &PendingAppend, lists: &[String], keep: &[String]| -> Vec<String> {
        lists
            .iter()
            .cloned()
            .chain(
                pending
                    .new_manifests
                    .iter()
                    .map(|m| m.manifest_path.clone()),
            )
            .chain(pending.merged.values().map(|m| m.manifest_path.clone()))
            .filter(|p| !keep.contains(p))
            .collect()
    };
    let table_uuid = base.metadata.table_uuid;
    // Why an earlier attempt's swap may still land (its catalog could not tell): once set, a
    // failure is reported as unknown and nothing is deleted.
    let mut uncertain: Option<String> = None;
    loop {
        let base_location = base.metadata_location.clone().unwrap_or_default();
        let swap = catalog
            .commit(ident, &base_location, &result.metadata)
            .await;
        let error = match swap {
            Ok(location) => {
                let mut keep = result.manifest_paths.clone();
                keep.push(result.manifest_list.clone());
                let mut stale = written(&pending, &lists, &keep);
                stale.extend(dropped_metadata_files(catalog, &base, &result.metadata));
                cleanup(&io, stale).await;
                let outcome = CommitOutcome {
                    snapshot_id: result.snapshot_id,
                    metadata_location: location,
                    attempts: attempt,
                    added_records: result.added_records(),
                };
                let ids = MetadataIds::of(&result.metadata);
                if let Some(cache) = cache {
                    // What this commit wrote is what the next commit of this table reads.
                    cache.insert_manifest_list(&result.manifest_list, result.listed_manifests);
                    cache.insert_metadata(&outcome.metadata_location, result.metadata);
                }
                return Ok((outcome, ids));
            }
            // Said before anything was sent: nothing can have landed.
            Err(e) if e.is_pre_request_refusal() => {
                return Err(give_up(&io, ident, &pending, &lists, attempt, e, &uncertain).await);
            }
            Err(e) => e,
        };
        // A conflict may be our own landed write (a store that retried a conditional create
        // answers "already exists"; a lost answer), and any other error may have come after
        // the swap was made: only the catalog itself can say. Nothing is deleted until it
        // says our snapshot is not there.
        let reloaded = match reload(catalog, ident, &retry, env).await {
            Ok(table) => table,
            // Not found is no proof either: the table may have been renamed, or its current
            // metadata file replaced between the probe and the read.
            Err(reload) => {
                return Err(Error::CommitStateUnknown {
                    table: ident.to_string(),
                    snapshot_id: Some(pending.snapshot_id),
                    reason: format!("{error}; then reloading the table failed: {reload}"),
                    source: Some(Box::new(error)),
                });
            }
        };
        if reloaded
            .metadata
            .snapshot_by_id(pending.snapshot_id)
            .is_some()
        {
            // An attempt landed; its answer was lost or garbled. Keep everything it listed.
            let outcome = CommitOutcome {
                snapshot_id: pending.snapshot_id,
                metadata_location: reloaded.metadata_location.clone().unwrap_or_default(),
                attempts: attempt,
                added_records: result.added_records(),
            };
            return Ok((outcome, MetadataIds::of(&result.metadata)));
        }
        if error.is_commit_state_unknown() {
            // Not there yet: try again, but never again call this commit failed for sure
            // (nor below, when the name now holds another table: ours may be renamed).
            uncertain = Some(error.to_string());
        }
        if let Err(why) = same_table(&reloaded, table_uuid) {
            return Err(give_up(&io, ident, &pending, &lists, attempt, why, &uncertain).await);
        }
        if !error.is_commit_state_unknown() && !error.is_commit_conflict() {
            // Not there, and not a conflict: the swap failed for good.
            return Err(give_up(&io, ident, &pending, &lists, attempt, error, &uncertain).await);
        }
        let out_of_time = started.elapsed() >= Duration::from_millis(retry.total_timeout_ms);
        if attempt > retry.num_retries || out_of_time {
            if let Some(why) = uncertain {
                return Err(unknown(ident, &pending, Cause::Error(error), &why));
            }
            cleanup(&io, written(&pending, &lists, &[])).await;
            return Err(Error::RetriesExhausted {
                table: ident.to_string(),
                snapshot_id: pending.snapshot_id,
                attempts: attempt,
                last: Box::new(error),
            });
        }
        tokio::time::sleep(backoff(attempt, retry.min_wait_ms, retry.max_wait_ms, env)).await;
        base = match catalog.load_table(ident).await {
            Ok(table) => table,
            Err(reload) => {
                // Our snapshot was not there a moment ago and nothing since was ours.
                let why = Cause::Context("reloading the table for a retry failed", reload);
                return Err(give_up(&io, ident, &pending, &lists, attempt, why, &uncertain).await);
            }
        };
        if let Err(why) = same_table(&base, table_uuid) {
            return Err(give_up(&io, ident, &pending, &lists, attempt, why, &uncertain).await);
        }
        attempt += 1;
        result = match pending.attempt(&io, &base, attempt, env, cache).await {
            Ok(result) => result,
            Err(e) => {
                // A schema conflict, or the retry's own writes failed. Our snapshot was not
                // there a moment ago, but an earlier attempt's late swap may still land: then
                // the outcome is unknown and nothing is deleted (a caller deleting its data
                // files on this error would break the table).
                if let Some(why) = uncertain {
                    return Err(unknown(ident, &pending, Cause::Error(e), &why));
                }
                cleanup(&io, written(&pending, &lists, &[])).await;
                return Err(e);
            }
        };
        lists.push(result.manifest_list.clone());
    }
}

/// The metadata files a landed commit of `new` dropped from `base`'s log, when `new` asks for
/// their deletion (`write.metadata.delete-after-commit.enabled`, read from the new metadata
/// as Java reads it) and this process wrote the log: a server that writes its own may still
/// list what ours dropped. Every kind of commit deletes them, as Java's table operations do.
pub(crate) fn dropped_metadata_files(
    catalog: &dyn Catalog,
    base: &crate::table::Table,
    new: &iceberg_spec::TableMetadata,
) -> Vec<String> {
    let asked = TableProperties::parse_for_commit(&new.properties)
        .is_ok_and(|p| p.metadata_delete_after_commit);
    if !asked || catalog.writes_metadata_files() {
        return Vec::new();
    }
    let kept: std::collections::HashSet<&str> = new
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.as_str())
        .collect();
    base.metadata
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.clone())
        .chain(base.metadata_location.clone())
        .filter(|f| !kept.contains(f.as_str()))
        .collect()
}

/// Deletes `paths` after a commit landed; best effort (leftovers are orphans no reader sees).
pub(crate) async fn cleanup(io: &iceberg_io::FileIo, paths: Vec<String>) {
    if !paths.is_empty() {
        let _ = io.delete_many(paths).await;
    }
}

/// Exponential backoff from `min_ms` doubling per attempt up to `max_ms`, with up to 10%
/// jitter drawn from the environment (so tests stay deterministic).
pub(crate) fn backoff(attempt: u32, min_ms: u64, max_ms: u64, env: &dyn Environment) -> Duration {
    let exp = min_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(30));
    let base = exp.min(max_ms.max(min_ms));
    let jitter_unit = u64::from(env.new_uuid().as_bytes()[0]);
    Duration::from_millis(base + base * jitter_unit / 2550)
}

/// Whether `table` is still the table the append started on: dropped and created again, it
/// is another table and the append must not land in it (Java: "Table UUID does not match").
pub(crate) fn same_table(
    table: &crate::table::Table,
    table_uuid: Option<uuid::Uuid>,
) -> std::result::Result<(), String> {
    if table.metadata.table_uuid == table_uuid {
        Ok(())
    } else {
        Err(format!(
            "table UUID changed from {table_uuid:?} to {:?}: the table was replaced",
            table.metadata.table_uuid
        ))
    }
}

/// Attempts to reload the table after an error that left the outcome open: the reload has
/// its own retries (the catalog that just failed may be briefly unreachable), since giving up
/// means reporting an unknown outcome.
const RELOAD_ATTEMPTS: u32 = 3;

/// The table reloaded, retrying a failed load [`RELOAD_ATTEMPTS`] times with the commit's
/// backoff; the last error when every attempt failed.
async fn reload(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    retry: &iceberg_spec::properties::CommitRetryProperties,
    env: &dyn Environment,
) -> Result<crate::table::Table> {
    let mut attempt = 1;
    loop {
        match catalog.load_table(ident).await {
            Ok(table) => return Ok(table),
            Err(e) if attempt >= RELOAD_ATTEMPTS => return Err(e),
            Err(_) => {
                tokio::time::sleep(backoff(attempt, retry.min_wait_ms, retry.max_wait_ms, env))
                    .await;
                attempt += 1;
            }
        }
    }
}

/// Why a commit stops: an error of its own (kept as the typed source of the commit's error),
/// words, or words about an error.
enum Cause {
    Error(Error),
    Text(String),
    Context(&'static str, Error),
}

impl From<Error> for Cause {
    fn from(e: Error) -> Self {
        Self::Error(e)
    }
}

impl From<String> for Cause {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl Cause {
    /// The reason's words, and the error behind them.
    fn split(self) -> (String, Option<Box<Error>>) {
        match self {
            Self::Error(e) => (e.to_string(), Some(Box::new(e))),
            Self::Text(text) => (text, None),
            Self::Context(what, e) => (format!("{what}: {e}"), Some(Box::new(e))),
        }
    }
}

/// The error of a commit that stops trying: a definite failure after deleting everything it
/// wrote ([`failed`]), or, when an earlier attempt's outcome is `uncertain`, an unknown
/// outcome with nothing deleted.
async fn give_up(
    io: &iceberg_io::FileIo,
    ident: &TableIdent,
    pending: &PendingAppend,
    lists: &[String],
    attempts: u32,
    cause: impl Into<Cause>,
    uncertain: &Option<String>,
) -> Error {
    let cause = cause.into();
    match uncertain {
        Some(why) => unknown(ident, pending, cause, why),
        None => failed(io, ident, pending, lists, attempts, cause).await,
    }
}

/// The unknown outcome of a commit that stopped on `cause` after an attempt whose swap may
/// still land (`why`).
fn unknown(ident: &TableIdent, pending: &PendingAppend, cause: Cause, why: &str) -> Error {
    let (reason, source) = cause.split();
    Error::CommitStateUnknown {
        table: ident.to_string(),
        snapshot_id: Some(pending.snapshot_id),
        reason: format!("{reason}; an earlier attempt may still land: {why}"),
        source,
    }
}

/// The error of a commit that definitely did not land, after deleting everything it wrote.
async fn failed(
    io: &iceberg_io::FileIo,
    ident: &TableIdent,
    pending: &PendingAppend,
    lists: &[String],
    attempts: u32,
    cause: Cause,
) -> Error {
    let mut paths = lists.to_vec();
    paths.extend(
        pending
            .new_manifests
            .iter()
            .map(|m| m.manifest_path.clone()),
    );
    paths.extend(pending.merged.values().map(|m| m.manifest_path.clone()));
    cleanup(io, paths).await;
    let (reason, source) = cause.split();
    Error::CommitFailed {
        table: ident.to_string(),
        snapshot_id: pending.snapshot_id,
        attempts,
        reason,
        source,
    }
}
