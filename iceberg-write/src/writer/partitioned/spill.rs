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
//! Run files are written and read on the calling task, not on tokio's blocking pool: they are
//! local, and the writer already encodes Parquet on its tasks. On the blocking pool the
//! batches were allocated in other threads' malloc arenas, and peak memory grew by some
//! 150 MiB more for a 16 MiB budget (glibc; `tests/memory.rs` measures it).
//!
//! The alternative, closing the least recently used file and opening a new one when its
//! partition comes back (what the writer did before), makes a file per partition per visit
//! for unordered input: thousands of tiny files for a 90-day backfill into `day(ts)`. Java
//! leaves the clustering to Spark's shuffle; PyIceberg holds the whole input in memory.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, SchemaRef};
use arrow_select::concat::concat_batches;
use iceberg_spec::Datum;

use super::{DataFileWriter, Job, slice_bytes};
use crate::error::{Error, Result};

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
    /// Made at the first run; removed when dropped.
    dir: Option<tempfile::TempDir>,
    partitions: BTreeMap<Vec<u8>, Spilled>,
    memory_bytes: u64,
    runs: Vec<PathBuf>,
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
        }
    }

    /// Whether rows of partition `key` were spilled (its later rows must follow them).
    pub(super) fn contains(&self, key: &[u8]) -> bool {
        self.partitions.contains_key(key)
    }

    /// The run folder, when one was made.
    #[cfg(test)]
    pub(super) fn dir(&self) -> Option<&Path> {
        self.dir.as_ref().map(tempfile::TempDir::path)
    }

    /// Keeps `rows` of partition `key`; writes a run when memory holds the budget.
    ///
    /// # Errors
    /// Creating the run folder or writing the run file failed.
    pub(super) fn push(
        &mut self,
        key: Vec<u8>,
        values: Vec<Option<Datum>>,
        rows: RecordBatch,
    ) -> Result<()> {
        // A group is a slice of its batch's rows: kept as it is, it would hold the whole
        // batch while the budget counts only its own rows.
        let rows = if slice_bytes(&rows).saturating_mul(2) < rows.get_array_memory_size() as u64 {
            let all = arrow_array::UInt32Array::from_iter_values(0..rows.num_rows() as u32);
            arrow_select::take::take_record_batch(&rows, &all)
                .map_err(|e| Error::arrow("<spill>", e))?
        } else {
            rows
        };
        self.memory_bytes += slice_bytes(&rows);
        self.partitions
            .entry(key)
            .or_insert_with(|| Spilled {
                values,
                places: VecDeque::new(),
            })
            .places
            .push_back(Place::Memory(rows));
        if self.memory_bytes >= self.budget {
            self.write_run()?;
        }
        Ok(())
    }

    /// Moves every partition's rows in memory into a new run file: one batch per partition.
    fn write_run(&mut self) -> Result<()> {
        let dir = self.run_dir()?;
        let path = dir.join(format!("run-{}.arrow", self.runs.len()));
        // Rows in memory are always the newest of their partition: they are the tail.
        let mut taken: Vec<(Vec<u8>, Vec<RecordBatch>)> = Vec::new();
        for (key, spilled) in &mut self.partitions {
            let mut tail = Vec::new();
            while let Some(Place::Memory(_)) = spilled.places.back() {
                if let Some(Place::Memory(rows)) = spilled.places.pop_back() {
                    tail.push(rows);
                }
            }
            if !tail.is_empty() {
                tail.reverse();
                taken.push((key.clone(), tail));
            }
        }
        let written = write_run_file(&path, &self.schema, taken)?;
        let run = self.runs.len();
        self.runs.push(path);
        for (batch, (key, bytes)) in written.into_iter().enumerate() {
            if let Some(spilled) = self.partitions.get_mut(&key) {
                spilled.places.push_back(Place::Run { run, batch, bytes });
            }
        }
        self.memory_bytes = 0;
        Ok(())
    }

    fn run_dir(&mut self) -> Result<PathBuf> {
        if let Some(dir) = &self.dir {
            return Ok(dir.path().to_path_buf());
        }
        let parent = self.parent.clone().unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("iceberg-spill-")
            .tempdir_in(&parent)
            .map_err(|e| spill_error(&parent, e))?;
        let path = dir.path().to_path_buf();
        self.dir = Some(dir);
        Ok(path)
    }

    /// The next rows to write: whole partitions in key order while they fit in the budget
    /// (at least one batch), the last one possibly in part; `None` when the spill is empty.
    ///
    /// # Errors
    /// Reading a run file failed.
    pub(super) fn next_group(&mut self) -> Result<Option<Vec<Piece>>> {
        if !self.runs.is_empty() && self.memory_bytes > 0 {
            // Rows in memory would otherwise wait there while groups are read back: memory
            // holds one group at a time, not a group and the rest.
            self.write_run()?;
        }
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
        // Each group is read back while the previous one's files still encode (a round left
        // running); its partitions close once that round is settled.
        let mut finished: Vec<Vec<u8>> = Vec::new();
        loop {
            let group = spill.next_group()?;
            self.settle_round().await?;
            for key in std::mem::take(&mut finished) {
                self.close_key(&key).await?;
            }
            let Some(group) = group else {
                return Ok(());
            };
            let mut jobs = VecDeque::with_capacity(group.len());
            for piece in group {
                if piece.last {
                    finished.push(piece.key.clone());
                }
                jobs.push_back(Job {
                    key: piece.key,
                    values: piece.values,
                    rows: piece.rows,
                    offset: 0,
                    last_key: None,
                });
            }
            self.write_jobs(jobs, true).await?;
        }
    }
}

/// Writes each partition's batches, concatenated, as one batch of a new IPC file; returns
/// each written batch's partition key and size in memory, in file order.
fn write_run_file(
    path: &Path,
    schema: &SchemaRef,
    partitions: Vec<(Vec<u8>, Vec<RecordBatch>)>,
) -> Result<Vec<(Vec<u8>, u64)>> {
    let ipc = |e: ArrowError| spill_error(path, std::io::Error::other(e));
    let file = File::create(path).map_err(|e| spill_error(path, e))?;
    let mut writer = FileWriter::try_new_buffered(file, schema).map_err(ipc)?;
    let mut written = Vec::with_capacity(partitions.len());
    for (key, batches) in partitions {
        let rows = concat_batches(schema, &batches).map_err(ipc)?;
        writer.write(&rows).map_err(ipc)?;
        written.push((key, slice_bytes(&rows)));
    }
    writer.finish().map_err(ipc)?;
    Ok(written)
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

    fn rows(schema: &SchemaRef, ids: std::ops::Range<i64>) -> RecordBatch {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(ids))],
        )
        .unwrap()
    }

    /// Partition `p` gets ids `p*1000 + i` for its `i`th row, in arrival order.
    fn filled(budget: u64, parent: &Path) -> (Spill, BTreeMap<Vec<u8>, Vec<i64>>) {
        let schema: SchemaRef =
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let mut spill = Spill::new(schema.clone(), budget, Some(parent.to_path_buf()));
        let mut expected: BTreeMap<Vec<u8>, Vec<i64>> = BTreeMap::new();
        for round in 0..20i64 {
            for p in [3u8, 1, 2] {
                let first = i64::from(p) * 1000 + round * 10;
                let ids = first..first + 10;
                expected.entry(vec![p]).or_default().extend(ids.clone());
                spill
                    .push(
                        vec![p],
                        vec![Some(Datum::int(i32::from(p)))],
                        rows(&schema, ids),
                    )
                    .unwrap();
            }
        }
        (spill, expected)
    }

    #[test]
    fn rows_come_back_per_partition_in_order_within_the_budget() {
        let parent = tempfile::tempdir().unwrap();
        // 10 ids of 8 bytes per push: a run every 4 pushes, groups of ~320 bytes.
        let (mut spill, expected) = filled(320, parent.path());
        let dir = spill.dir().unwrap().to_path_buf();
        assert!(std::fs::read_dir(&dir).unwrap().count() > 5, "runs written");
        let mut got: BTreeMap<Vec<u8>, Vec<i64>> = BTreeMap::new();
        let mut order = Vec::new();
        while let Some(group) = spill.next_group().unwrap() {
            let bytes: usize = group.iter().map(|p| p.rows.num_rows() * 8).sum();
            assert!(bytes <= 320 + 80, "a group holds about the budget: {bytes}");
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
        assert_eq!(got, expected, "every row once, in arrival order");
        assert_eq!(order, [1, 2, 3], "partitions in key order");
        drop(spill);
        assert!(!dir.exists(), "the run folder goes with the spill");
    }

    #[test]
    fn a_spill_within_the_budget_writes_no_file() {
        let parent = tempfile::tempdir().unwrap();
        let (mut spill, expected) = filled(1 << 20, parent.path());
        assert!(spill.dir().is_none());
        let group = spill.next_group().unwrap().unwrap();
        assert_eq!(group.len(), expected.len());
        assert!(group.iter().all(|p| p.last));
        assert!(spill.next_group().unwrap().is_none());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}
