//! [`Spill`]: the rows of partitions that found no open file under `write.max-open-files`,
//! kept until the writer closes and then written partition by partition, each into one file
//! (more only past the target file size).
//!
//! Rows stay in memory up to `write.spill.buffer-size-bytes`; past it they go to a local
//! Arrow IPC run file, one batch per partition per run, in a folder of this writer's own that
//! is removed when the writer closes, aborts or is dropped. Draining reads back at most the
//! same budget at a time, whole partitions in key order (a partition larger than the budget
//! in parts, into the same open file).
//!
//! A run is written in a task of the caller's runtime while the calling task goes on
//! splitting input (at most one run in flight: a run starts once memory holds half the
//! budget, so the rows filling and the rows being written stay within it together, give or
//! take the last input batch each side took, as a batch is kept whole); runs are
//! read back on the calling task while the previous group's files encode. Not on tokio's
//! blocking pool: there the batches were allocated in other threads' malloc arenas, and peak
//! memory grew by some 150 MiB more for a 16 MiB budget (glibc; `tests/memory.rs` measures
//! it). A partition whose rows are all in the group read back (nearly all of them) is
//! written into its file by one task from open to close, up to `write.max-open-files` at
//! once, so no file waits for the slowest of a round.
//!
//! The alternative, closing the least recently used file and opening a new one when its
//! partition comes back (what the writer did before), makes a file per partition per visit
//! for unordered input: thousands of tiny files for a 90-day backfill into `day(ts)`. Java
//! leaves the clustering to Spark's shuffle; PyIceberg holds the whole input in memory.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, SchemaRef};
use arrow_select::concat::concat_batches;
use iceberg_spec::Datum;
use tokio::task::JoinHandle;

use super::rounds::fill;
use super::{DataFileWriter, Job, OpenFile, slice_bytes};
use crate::error::{Error, Result};
use crate::writer::file::ParquetFile;

/// Where a partition's spilled rows are, in arrival order.
#[derive(Debug)]
enum Place {
    Memory(RecordBatch),
    /// Batch `batch` of run file `run`, of `bytes` bytes in memory.
    Run {
        run: usize,
        batch: usize,
        bytes: u64,
    },
}

impl Place {
    fn bytes(&self) -> u64 {
        match self {
            Self::Memory(rows) => slice_bytes(rows),
            Self::Run { bytes, .. } => *bytes,
        }
    }
}

#[derive(Debug)]
struct Spilled {
    values: Vec<Option<Datum>>,
    places: VecDeque<Place>,
}

/// A partition's key, values and rows of one input batch, as the writer spills them.
pub(super) type Group = (Vec<u8>, Vec<Option<Datum>>, RecordBatch);

/// A partition's key, values, places taken for a group, and whether they are its last.
type Taken = (Vec<u8>, Vec<Option<Datum>>, Vec<Place>, bool);

/// Rows of one partition taken back from the spill to be written.
#[derive(Debug)]
pub(super) struct Piece {
    pub(super) key: Vec<u8>,
    pub(super) values: Vec<Option<Datum>>,
    pub(super) rows: RecordBatch,
    /// No rows of this partition are left in the spill.
    pub(super) last: bool,
}

/// The spilled partitions of one writer (see the module docs).
#[derive(Debug)]
pub(super) struct Spill {
    schema: SchemaRef,
    budget: u64,
    /// The folder the run folder is made in (`None`: the system's temporary folder).
    parent: Option<PathBuf>,
    /// Made at the first run; removed once the spill and a run still being written are
    /// dropped.
    dir: Option<Arc<tempfile::TempDir>>,
    partitions: BTreeMap<Vec<u8>, Spilled>,
    memory_bytes: u64,
    runs: Vec<PathBuf>,
    /// The run being written in a task, with the bytes it holds.
    writing: Option<(JoinHandle<Result<()>>, u64)>,
}

impl Spill {
    /// An empty spill of rows of `schema`, keeping `budget` bytes in memory.
    pub(super) fn new(schema: SchemaRef, budget: u64, parent: Option<PathBuf>) -> Self {
        Self {
            schema,
            budget,
            parent,
            dir: None,
            partitions: BTreeMap::new(),
            memory_bytes: 0,
            runs: Vec::new(),
            writing: None,
        }
    }

    /// Whether rows of partition `key` were spilled (its later rows must follow them).
    pub(super) fn contains(&self, key: &[u8]) -> bool {
        self.partitions.contains_key(key)
    }

    /// The run folder, when one was made.
    #[cfg(test)]
    pub(super) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref().map(tempfile::TempDir::path)
    }

    /// Keeps the spilled groups of one input batch (`groups`: partition key, values, rows)
    /// in memory; [`Spill::run_if_full`] then moves them to a run when needed. Sync, so the
    /// rows are the spill's before the writer awaits anything (a cancelled write loses none).
    ///
    /// # Errors
    /// Copying the groups' rows out of their batch failed.
    pub(super) fn keep(&mut self, groups: Vec<Group>) -> Result<()> {
        let Some(first) = groups.first() else {
            return Ok(());
        };
        // The groups are slices of one batch, which they hold whole: when they are most of
        // it they are kept as they are and the batch is counted, otherwise their rows are
        // copied out once, together (a copy per group costs an allocation per column and
        // group, which dominates at hundreds of partitions per batch).
        let held = first.2.get_array_memory_size() as u64;
        let spilled: u64 = groups.iter().map(|(_, _, rows)| slice_bytes(rows)).sum();
        let groups = if spilled.saturating_mul(2) < held {
            self.memory_bytes += spilled;
            compact(&self.schema, groups)?
        } else {
            self.memory_bytes += held;
            groups
        };
        for (key, values, rows) in groups {
            self.partitions
                .entry(key)
                .or_insert_with(|| Spilled {
                    values,
                    places: VecDeque::new(),
                })
                .places
                .push_back(Place::Memory(rows));
        }
        Ok(())
    }

    /// Starts a run once memory holds half the budget, after the previous run is written.
    ///
    /// # Errors
    /// Creating the run folder or writing the previous run file failed.
    pub(super) async fn run_if_full(&mut self) -> Result<()> {
        if self.memory_bytes >= self.budget / 2 {
            self.finish_writing().await?;
            self.start_run()?;
        }
        Ok(())
    }

    /// [`Spill::keep`] and [`Spill::run_if_full`] in one call.
    #[cfg(test)]
    async fn push(&mut self, groups: Vec<Group>) -> Result<()> {
        self.keep(groups)?;
        self.run_if_full().await
    }

    /// Waits for the run being written, if any.
    pub(super) async fn finish_writing(&mut self) -> Result<()> {
        // The handle stays ours until the task ended: a cancelled wait leaves it to the next
        // wait (or to the drop), not detached.
        if let Some((task, _)) = &mut self.writing {
            let done = task.await;
            self.writing = None;
            done.map_err(|e| {
                spill_error(
                    Path::new("<spill>"),
                    std::io::Error::other(format!("the run's task failed: {e}")),
                )
            })??;
        }
        Ok(())
    }

    /// Moves every partition's rows in memory into a new run file, one batch per partition,
    /// written in a task.
    fn start_run(&mut self) -> Result<()> {
        let dir = self.run_dir()?;
        let path = dir.path().join(format!("run-{}.arrow", self.runs.len()));
        let run = self.runs.len();
        // Rows in memory are always the newest of their partition: they are the tail.
        let mut taken: Vec<Vec<RecordBatch>> = Vec::new();
        for spilled in self.partitions.values_mut() {
            let mut tail = Vec::new();
            while let Some(Place::Memory(_)) = spilled.places.back() {
                if let Some(Place::Memory(rows)) = spilled.places.pop_back() {
                    tail.push(rows);
                }
            }
            if !tail.is_empty() {
                tail.reverse();
                let bytes = tail.iter().map(slice_bytes).sum();
                spilled.places.push_back(Place::Run {
                    run,
                    batch: taken.len(),
                    bytes,
                });
                taken.push(tail);
            }
        }
        self.runs.push(path.clone());
        let schema = self.schema.clone();
        // The task keeps the folder: a spill dropped meanwhile removes it after the task.
        let task = tokio::spawn(async move {
            let written = write_run_file(&path, &schema, taken);
            drop(dir);
            written
        });
        self.writing = Some((task, self.memory_bytes));
        self.memory_bytes = 0;
        Ok(())
    }

    /// Puts the rows still in memory into a run when runs exist, and waits for every run to
    /// be written: then [`Spill::next_group`] reads memory one group at a time.
    ///
    /// # Errors
    /// Writing a run file failed.
    pub(super) async fn settle(&mut self) -> Result<()> {
        self.finish_writing().await?;
        if !self.runs.is_empty() && self.memory_bytes > 0 {
            // Rows in memory would otherwise wait there while groups are read back: memory
            // holds one group at a time, not a group and the rest.
            self.start_run()?;
            self.finish_writing().await?;
        }
        Ok(())
    }

    fn run_dir(&mut self) -> Result<Arc<tempfile::TempDir>> {
        if let Some(dir) = &self.dir {
            return Ok(dir.clone());
        }
        let parent = self.parent.clone().unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("iceberg-spill-")
            .tempdir_in(&parent)
            .map_err(|e| spill_error(&parent, e))?;
        let dir = Arc::new(dir);
        self.dir = Some(dir.clone());
        Ok(dir)
    }

    /// The next rows to write: whole partitions in key order while they fit in the budget
    /// (at least one batch), the last one possibly in part; `None` when the spill is empty.
    /// Call [`Spill::settle`] first.
    ///
    /// # Errors
    /// Reading a run file failed.
    pub(super) fn next_group(&mut self) -> Result<Option<Vec<Piece>>> {
        let mut taken: Vec<Taken> = Vec::new();
        let mut bytes = 0u64;
        while bytes < self.budget
            && let Some(mut entry) = self.partitions.first_entry()
        {
            let spilled = entry.get_mut();
            let mut places = Vec::new();
            while bytes < self.budget
                && let Some(place) = spilled.places.pop_front()
            {
                bytes += place.bytes();
                places.push(place);
            }
            let last = spilled.places.is_empty();
            let values = spilled.values.clone();
            let key = if last {
                entry.remove_entry().0
            } else {
                entry.key().clone()
            };
            taken.push((key, values, places, last));
        }
        if taken.is_empty() {
            return Ok(None);
        }
        read_pieces(&self.runs, &self.schema, taken).map(Some)
    }
}

impl DataFileWriter {
    /// Writes every spilled partition, a budget's worth at a time, each into one file (more
    /// only past the target size); the spill's folder goes with it.
    pub(super) async fn drain_spill(&mut self) -> Result<()> {
        let Some(mut spill) = self.spill.take() else {
            return Ok(());
        };
        // Pieces come in key order: a partition larger than a group ends one group and
        // starts the next, so its file (the only one open between groups) is written first
        // in each group and, once its last piece is in, closed before the whole partitions
        // of the group take files; those never have to evict it. A group is read back while
        // the previous one's files still encode.
        spill.settle().await?;
        loop {
            let group = spill.next_group()?;
            self.settle_round().await?;
            let Some(group) = group else {
                return Ok(());
            };
            for piece in group {
                if piece.last && self.writes_whole(&piece) {
                    self.write_whole(piece).await?;
                    continue;
                }
                let (key, last) = (piece.key.clone(), piece.last);
                let job = Job {
                    key: piece.key,
                    values: piece.values,
                    rows: piece.rows,
                    offset: 0,
                    last_key: None,
                };
                self.write_jobs(VecDeque::from([job]), true).await?;
                if last {
                    self.settle_round().await?;
                    self.close_key(&key).await?;
                }
            }
        }
    }
}

impl DataFileWriter {
    /// Whether `piece`, the last rows of its partition, is written by [`Self::write_whole`]:
    /// it is the whole partition (no file of it is open) and at most half the target size
    /// in memory, so it cannot fill its file (Parquet is not larger than the Arrow arrays).
    fn writes_whole(&self, piece: &Piece) -> bool {
        !self.open.contains_key(&piece.key)
            && slice_bytes(&piece.rows).saturating_mul(2) <= self.options.target_file_size_bytes
    }

    /// Writes a whole spilled partition into a file of its own in one task, from open to
    /// close, as a background close ([`DataFileWriter::settle_oldest`] collects it, abort and
    /// drop discard it). Unlike a round, nothing waits for the other files of the group: up to
    /// `write.max-open-files` such files encode at once, and the next group is read back
    /// meanwhile. The file is named here, in piece order, and written in the slices a round
    /// would hand it, so its bytes are the same.
    async fn write_whole(&mut self, piece: Piece) -> Result<()> {
        self.make_room(0).await?;
        let dir = self.partition_dir(&piece.values)?;
        let path = self.namer.next_path(&dir);
        let file = ParquetFile::create(
            &self.io,
            path.clone(),
            self.arrow.clone(),
            self.props.clone(),
            piece.values,
            self.queue.clone(),
        )
        .await?;
        let open = OpenFile {
            file,
            opened: 0,
            last_used: 0,
            last_key: None,
        };
        let ctx = self.context.clone();
        let target = self.options.target_file_size_bytes;
        let task = tokio::spawn(async move {
            let rows = piece.rows;
            let (mut open, mut offset, result) = fill(open, rows.clone(), 0, target).await;
            result?;
            // Only reached if the encoded rows outgrew twice their Arrow size: one file
            // slightly past the target rather than a roll whose name would depend on timing.
            while offset < rows.num_rows() {
                let (more, written, result) = fill(open, rows.clone(), offset, u64::MAX).await;
                result?;
                (open, offset) = (more, written);
            }
            open.file.close(&ctx).await
        });
        self.closing.push_back((path, task));
        Ok(())
    }
}

/// Writes each partition's batches, concatenated, as one batch of a new IPC file, in order.
fn write_run_file(
    path: &Path,
    schema: &SchemaRef,
    partitions: Vec<Vec<RecordBatch>>,
) -> Result<()> {
    let ipc = |e: ArrowError| spill_error(path, std::io::Error::other(e));
    let file = File::create(path).map_err(|e| spill_error(path, e))?;
    let mut writer = FileWriter::try_new_buffered(file, schema).map_err(ipc)?;
    for batches in partitions {
        let rows = concat_batches(schema, &batches).map_err(ipc)?;
        writer.write(&rows).map_err(ipc)?;
    }
    writer.finish().map_err(ipc)?;
    Ok(())
}

/// The rows of `groups` (slices of one batch) copied into one batch, and each group's rows
/// as a slice of it.
fn compact(schema: &SchemaRef, groups: Vec<Group>) -> Result<Vec<Group>> {
    let all = concat_batches(schema, groups.iter().map(|(_, _, rows)| rows))
        .map_err(|e| Error::arrow("<spill>", e))?;
    let mut start = 0;
    Ok(groups
        .into_iter()
        .map(|(key, values, rows)| {
            let len = rows.num_rows();
            start += len;
            (key, values, all.slice(start - len, len))
        })
        .collect())
}

/// Reads the places of each taken partition back and concatenates them into its piece.
fn read_pieces(runs: &[PathBuf], schema: &SchemaRef, taken: Vec<Taken>) -> Result<Vec<Piece>> {
    let mut readers: BTreeMap<usize, FileReader<std::io::BufReader<File>>> = BTreeMap::new();
    let mut pieces = Vec::with_capacity(taken.len());
    for (key, values, places, last) in taken {
        let mut batches = Vec::with_capacity(places.len());
        for place in places {
            match place {
                Place::Memory(rows) => batches.push(rows),
                Place::Run { run, batch, .. } => {
                    let path = &runs[run];
                    let ipc = |e: ArrowError| spill_error(path, std::io::Error::other(e));
                    let reader = match readers.entry(run) {
                        std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                        std::collections::btree_map::Entry::Vacant(v) => {
                            let file = File::open(path).map_err(|e| spill_error(path, e))?;
                            v.insert(FileReader::try_new_buffered(file, None).map_err(ipc)?)
                        }
                    };
                    reader.set_index(batch).map_err(ipc)?;
                    let rows = reader
                        .next()
                        .ok_or_else(|| {
                            spill_error(path, std::io::Error::other(format!("no batch {batch}")))
                        })?
                        .map_err(ipc)?;
                    batches.push(rows);
                }
            }
        }
        let rows = concat_batches(schema, &batches)
            .map_err(|e| spill_error(Path::new("<spill>"), std::io::Error::other(e)))?;
        pieces.push(Piece {
            key,
            values,
            rows,
            last,
        });
    }
    Ok(pieces)
}

fn spill_error(path: &Path, source: std::io::Error) -> Error {
    Error::Spill {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Partition `p` gets ids `p*1000 + i` for its `i`th row, in arrival order; each round's
    /// rows of the three partitions are slices of one batch, of which the spill takes
    /// `kept` (all three, or only partition 3's).
    async fn filled(
        budget: u64,
        parent: &Path,
        kept: &[u8],
    ) -> (Spill, BTreeMap<Vec<u8>, Vec<i64>>) {
        let schema: SchemaRef =
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let mut spill = Spill::new(schema.clone(), budget, Some(parent.to_path_buf()));
        let mut expected: BTreeMap<Vec<u8>, Vec<i64>> = BTreeMap::new();
        for round in 0..20i64 {
            let mut ids = Vec::new();
            for p in [3u8, 1, 2] {
                let first = i64::from(p) * 1000 + round * 10;
                ids.extend(first..first + 10);
            }
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from_iter_values(ids))],
            )
            .unwrap();
            let mut groups = Vec::new();
            for (i, p) in [3u8, 1, 2].into_iter().enumerate() {
                if kept.contains(&p) {
                    let rows = batch.slice(i * 10, 10);
                    let ids = rows.column(0).as_primitive::<Int64Type>();
                    expected
                        .entry(vec![p])
                        .or_default()
                        .extend(ids.values().iter());
                    groups.push((vec![p], vec![Some(Datum::int(i32::from(p)))], rows));
                }
            }
            spill.push(groups).await.unwrap();
        }
        (spill, expected)
    }

    /// Every group's rows, checked for budget and values, by partition, and the partitions in
    /// the order they were finished.
    async fn drained(spill: &mut Spill, budget: usize) -> (BTreeMap<Vec<u8>, Vec<i64>>, Vec<u8>) {
        spill.settle().await.unwrap();
        let mut got: BTreeMap<Vec<u8>, Vec<i64>> = BTreeMap::new();
        let mut order = Vec::new();
        while let Some(group) = spill.next_group().unwrap() {
            let bytes: usize = group.iter().map(|p| p.rows.num_rows() * 8).sum();
            assert!(
                bytes <= budget + 80,
                "a group holds about the budget: {bytes}"
            );
            for piece in group {
                assert_eq!(
                    piece.values,
                    vec![Some(Datum::int(i32::from(piece.key[0])))]
                );
                let ids = piece.rows.column(0).as_primitive::<Int64Type>();
                got.entry(piece.key.clone())
                    .or_default()
                    .extend(ids.values().iter());
                if piece.last {
                    order.push(piece.key[0]);
                }
            }
        }
        (got, order)
    }

    #[tokio::test]
    async fn rows_come_back_per_partition_in_order_within_the_budget() {
        let parent = tempfile::tempdir().unwrap();
        // 30 ids of 8 bytes per push: a run every push or two, groups of ~320 bytes.
        let (mut spill, expected) = filled(320, parent.path(), &[1, 2, 3]).await;
        let dir = spill.dir().unwrap().to_path_buf();
        let (got, order) = drained(&mut spill, 320).await;
        assert!(std::fs::read_dir(&dir).unwrap().count() > 5, "runs written");
        assert_eq!(got, expected, "every row once, in arrival order");
        assert_eq!(order, [1, 2, 3], "partitions in key order");
        drop(spill);
        assert!(!dir.exists(), "the run folder goes with the spill");
    }

    #[tokio::test]
    async fn a_spill_within_the_budget_writes_no_file() {
        let parent = tempfile::tempdir().unwrap();
        let (mut spill, expected) = filled(1 << 20, parent.path(), &[1, 2, 3]).await;
        assert!(spill.dir().is_none());
        spill.settle().await.unwrap();
        let group = spill.next_group().unwrap().unwrap();
        assert_eq!(group.len(), expected.len());
        assert!(group.iter().all(|p| p.last));
        assert!(spill.next_group().unwrap().is_none());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn a_small_share_of_a_batch_is_copied_out_and_counted_as_its_rows() {
        let parent = tempfile::tempdir().unwrap();
        // Partition 3's 10 rows are a third of each batch: kept as slices they would hold
        // the whole batch, so they are copied out and count 80 bytes each.
        let (mut spill, expected) = filled(1 << 20, parent.path(), &[3]).await;
        assert_eq!(spill.memory_bytes, 20 * 80);
        let (got, order) = drained(&mut spill, 1 << 20).await;
        assert_eq!(got, expected);
        assert_eq!(order, [3]);
    }

    #[tokio::test]
    async fn a_dropped_spill_leaves_no_folder_while_a_run_is_written() {
        let parent = tempfile::tempdir().unwrap();
        let (spill, _) = filled(320, parent.path(), &[1, 2, 3]).await;
        assert!(spill.dir().is_some(), "runs written");
        drop(spill);
        // The last run's task may still hold the folder: it goes when the task ends.
        let left = || std::fs::read_dir(parent.path()).unwrap().count();
        for _ in 0..200 {
            if left() == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(left(), 0, "the run folder outlived the spill and its task");
    }
}
