//! Rounds: the rows of a batch, split by partition into [`Job`]s, written into their
//! partitions' files, each file filled in a task of its own.
//!
//! The last round of a write is left running when the write returns ([`Round`]): the next
//! write splits its batch (and the caller reads its next input) while those files encode,
//! and settles the round only before it touches the files again. Everything that decides
//! (which file a row goes to, when a file rolls, which row groups are flushed for the
//! budget) happens at those settle points, in job order, so the files do not depend on
//! scheduling. An error of a round left running is reported by the next call.

use std::collections::VecDeque;

use arrow_array::RecordBatch;
use arrow_row::OwnedRow;
use iceberg_spec::Datum;
use tokio::task::JoinHandle;

use super::{DataFileWriter, OpenFile};
use crate::error::{Error, Result};
use crate::writer::file::ParquetFile;

/// Rows handed to a file at a time, so the target size is checked at this granularity.
pub(super) const ROLL_CHECK_ROWS: usize = 4096;

/// A partition's rows of one batch, on their way into its open file.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) key: Vec<u8>,
    pub(super) values: Vec<Option<Datum>>,
    pub(super) rows: RecordBatch,
    /// Rows written so far.
    pub(super) offset: usize,
    /// Sort key of the last row, when the writer sorts.
    pub(super) last_key: Option<OwnedRow>,
}

/// What a file's task hands back: the file, how far it got, and any error.
type Filled = (OpenFile, usize, Result<()>);

/// The files of a round, out of the writer's map in tasks, with their jobs.
pub(super) type Round = Vec<(Job, JoinHandle<Filled>)>;

/// Rows to hand `file` before its size is checked against `target` again: a roll-check
/// chunk while the file is new, then half of what its bytes per row so far say still fits.
/// Large writes thus reach the file (and its column tasks) in large slices, while a file
/// still rolls within about a chunk of the target.
fn rows_before_check(file: &ParquetFile, target: u64) -> usize {
    let (rows, size) = (file.rows(), file.estimated_size());
    if rows == 0 || size == 0 {
        return ROLL_CHECK_ROWS;
    }
    let per_row = (size / rows).max(1);
    let fit = target.saturating_sub(size) / per_row / 2;
    usize::try_from(fit)
        .unwrap_or(usize::MAX)
        .max(ROLL_CHECK_ROWS)
}

/// Writes `rows` from `offset` into `open`, checking its size between slices, until they
/// run out or the file reaches `target` bytes.
pub(super) async fn fill(
    mut open: OpenFile,
    rows: RecordBatch,
    mut offset: usize,
    target: u64,
) -> Filled {
    while offset < rows.num_rows() {
        let len = rows_before_check(&open.file, target).min(rows.num_rows() - offset);
        if let Err(e) = open.file.write(&rows.slice(offset, len)).await {
            return (open, offset, Err(e));
        }
        offset += len;
        if open.file.estimated_size() >= target {
            break;
        }
    }
    (open, offset, Ok(()))
}

/// Marks the writer unusable while files are out of its map and a cancelled future could
/// lose them with their rows.
const IN_TASKS: &str = "a write was interrupted while its files were in tasks";

impl DataFileWriter {
    /// Writes the rows of `jobs` (one per partition) into their partitions' files, leaving
    /// the last round running when `defer` (see the module docs).
    pub(super) async fn write_jobs(&mut self, mut jobs: VecDeque<Job>, defer: bool) -> Result<()> {
        self.settle_round().await?;
        // Rounds: every partition still holding rows gets its open file filled in a task of
        // its own, until its rows are written or the file is full (then it rolls); at most
        // `max_open_files` files are open, in use or not.
        let cap = self.options.max_open_files.max(1);
        let target = self.options.target_file_size_bytes;
        while !jobs.is_empty() {
            let mut running = Vec::new();
            let mut first_error = None;
            // Until the round's files are back in the map or kept in `round`, a cancelled
            // write leaves the writer unusable rather than silently short of their rows.
            self.failed = Some(IN_TASKS.into());
            while running.len() < cap
                && let Some(job) = jobs.pop_front()
            {
                match self.take_open(&job.key, &job.values, running.len()).await {
                    Ok(file) => {
                        let (rows, offset) = (job.rows.clone(), job.offset);
                        running.push((job, tokio::spawn(fill(file, rows, offset, target))));
                    }
                    Err(e) => {
                        first_error = Some(e);
                        break;
                    }
                }
            }
            if first_error.is_none() && jobs.is_empty() && defer {
                // The files are the writer's again once settled; a dropped writer drops
                // them with their uploads, which abort.
                self.round = running;
                self.failed = None;
                return Ok(());
            }
            self.finish_round(running, &mut jobs, first_error).await?;
        }
        Ok(())
    }

    /// Waits for the round left running, if any, and acts on its outcome (rolls included).
    pub(super) async fn settle_round(&mut self) -> Result<()> {
        if self.round.is_empty() {
            return Ok(());
        }
        let running = std::mem::take(&mut self.round);
        let mut rolled = VecDeque::new();
        self.finish_round(running, &mut rolled, None).await?;
        if rolled.is_empty() {
            return Ok(());
        }
        Box::pin(self.write_jobs(rolled, false)).await
    }

    /// Puts every file of `running` back into the map, then closes the full ones and
    /// queues in `jobs` the rows a full file did not take; keeps the buffers in budget.
    async fn finish_round(
        &mut self,
        running: Round,
        jobs: &mut VecDeque<Job>,
        mut first_error: Option<Error>,
    ) -> Result<()> {
        let target = self.options.target_file_size_bytes;
        // Until every file of the round is back in the map, a cancelled (dropped) write
        // leaves the writer unusable rather than silently short of those files' rows.
        self.failed = Some(IN_TASKS.into());
        // Every task is awaited and its file put back before any error is acted on.
        let mut done = Vec::new();
        for (job, task) in running {
            match task.await {
                Ok((open, written, result)) => {
                    self.open.insert(job.key.clone(), open);
                    match result {
                        Ok(()) => done.push((job, written)),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Err(e) => {
                    first_error.get_or_insert(Error::WriterFailed {
                        reason: format!("a file's write task failed: {e}"),
                    });
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        self.failed = None;
        for (mut job, written) in done {
            job.offset = written;
            let full = self
                .open
                .get(&job.key)
                .is_some_and(|f| f.file.estimated_size() >= target);
            if job.offset == job.rows.num_rows() {
                if let Some(f) = self.open.get_mut(&job.key) {
                    f.last_key = job.last_key.take();
                }
                if full {
                    self.close_key(&job.key).await?;
                }
            } else {
                // Full before its rows ran out: roll to a new file for the rest.
                self.close_key(&job.key).await?;
                jobs.push_back(job);
            }
        }
        self.keep_buffers_within_budget().await
    }

    /// Writes out the largest buffered row groups until the open files together buffer at
    /// most `write.buffer-size-bytes`: each file's row groups are capped on their own, but
    /// many open files could otherwise hold that cap each. The chosen files flush in tasks,
    /// concurrently, as they fill.
    async fn keep_buffers_within_budget(&mut self) -> Result<()> {
        let budget = self.options.buffer_size_bytes;
        let mut total: u64 = self.open.values().map(|f| f.file.buffered_bytes()).sum();
        if total <= budget {
            return Ok(());
        }
        let mut by_size: Vec<(u64, Vec<u8>)> = self
            .open
            .iter()
            .map(|(k, f)| (f.file.buffered_bytes(), k.clone()))
            .collect();
        by_size.sort_unstable_by_key(|(bytes, _)| std::cmp::Reverse(*bytes));
        // As in a round: while files are out in tasks, a cancelled write leaves the writer
        // unusable rather than silently short of them.
        self.failed = Some(IN_TASKS.into());
        let mut tasks = Vec::new();
        for (bytes, key) in by_size {
            if total <= budget || bytes == 0 {
                break;
            }
            total -= bytes;
            if let Some(mut open) = self.open.remove(&key) {
                tasks.push((
                    key,
                    tokio::spawn(async move {
                        let result = open.file.flush_row_group().await;
                        (open, result)
                    }),
                ));
            }
        }
        // Every file goes back into the map before an error is acted on (as in a round).
        let mut first_error = None;
        for (key, task) in tasks {
            match task.await {
                Ok((open, result)) => {
                    self.open.insert(key, open);
                    if let Err(e) = result {
                        first_error.get_or_insert(e);
                    }
                }
                Err(e) => {
                    first_error.get_or_insert(Error::WriterFailed {
                        reason: format!("a file's flush task failed: {e}"),
                    });
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => {
                self.failed = None;
                Ok(())
            }
        }
    }
}
