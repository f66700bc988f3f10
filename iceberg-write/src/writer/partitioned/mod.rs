//! [`DataFileWriter`]: the streaming writer. One open file per partition across batches,
//! a new file once the current one reaches the target size, at most `max_open_files` open.
//! Rows of partitions past that cap are spilled ([`spill`]) and each such partition is
//! written once when the writer closes, so any partition count gets one file per partition
//! per target size, in bounded memory. Without spilling (`write.spill.enabled=false`, or a
//! sort order, whose runs the spill does not merge) the least recently used file is closed
//! to make room, and a partition that comes back gets a new file.
//!
//! With a sort order ([`WriteOptions::sort_order`]) every file holds one sorted run and
//! honestly records the order's id (Java's writers claim the id only for sorted input, too).
//! The streaming writer gathers input until `sort_buffer_bytes`
//! (`write.sort.buffer-size-bytes`) and then writes it ordered by partition and sort key,
//! so each partition gets one sorted run per buffer, not one per batch. It remembers the
//! sort key of the last row written to each open file, and when a run's first row sorts
//! before it, the file is closed and a new one started: input larger than the buffer makes
//! about one file per partition per buffer's worth, input sorted across buffers none extra.
//! The alternative, keeping one file and not recording the order, was rejected: readers and
//! compaction rely on the id.
//!
//! The files of one batch are encoded concurrently, each in a task of its own on the
//! caller's tokio runtime ([`rounds`]), the last round of a write still running while the
//! next batch is split; a large write into one file encodes its columns, and its row groups,
//! in tasks too (`writer::encode`), so a multi-threaded runtime uses every core however many
//! partitions are open. A file is finished and uploaded in a task while the next batch is
//! encoded. Each file's columns still see their rows in order, and every decision is taken
//! at fixed points, so its bytes do not depend on the scheduling; files are named, and
//! returned, in a fixed order.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_row::OwnedRow;
use arrow_schema::SchemaRef;
use arrow_select::interleave::interleave_record_batch;
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Datum, PartitionSpec, Schema};
use parquet::file::properties::WriterProperties;
use tokio::task::JoinHandle;

mod discard;
mod rounds;
mod spill;

use self::rounds::{Job, ROLL_CHECK_ROWS, Round};
use self::spill::Spill;
use super::encode::InputQueue;
use super::file::{FileContext, ParquetFile, writer_properties};
use crate::align::{Rules, align_batch};
use crate::error::{Error, Result};
use crate::location::DataLocations;
use crate::naming::FileNamer;
use crate::options::WriteOptions;
use crate::partition::Partitioner;
use crate::sort::{SortedBatch, Sorter, slice_order};
use crate::to_arrow::{arrow_schema, check_writable};

/// Rows copied at a time when a slice of batches is written in sort order.
const SLICE_CHUNK_ROWS: usize = 16 * ROLL_CHECK_ROWS;

/// Files finishing in the background at once (within the open-file cap); past it the writer
/// waits for the oldest, since a finishing file still holds its buffered row group.
const MAX_CLOSING: usize = 4;

#[derive(Debug)]
struct OpenFile {
    file: ParquetFile,
    opened: u64,
    last_used: u64,
    /// Sort key of the last row written, when the writer sorts.
    last_key: Option<OwnedRow>,
}

pub(super) use super::encode::slice_bytes;

/// Writes a stream of batches as partitioned, size-bounded Parquet data files.
///
/// Batches are aligned to the table schema and split by partition; each partition has one
/// open file until it reaches `target_file_size_bytes`. With a sort order in the options,
/// rows are sorted within each file and files record the order (see the module docs).
/// [`DataFileWriter::close`] returns a [`DataFile`] per file; [`DataFileWriter::abort`]
/// deletes everything written.
#[derive(Debug)]
pub struct DataFileWriter {
    io: FileIo,
    schema: Schema,
    spec: PartitionSpec,
    options: WriteOptions,
    arrow: SchemaRef,
    props: WriterProperties,
    /// The input its files' streamed row groups may hold (half of `write.buffer-size-bytes`).
    queue: InputQueue,
    partitioner: Partitioner,
    sorter: Option<Sorter>,
    namer: FileNamer,
    open: HashMap<Vec<u8>, OpenFile>,
    /// The last round of the last write, still running ([`rounds`]): its files are out of
    /// `open` until it is settled.
    round: Round,
    /// Files being finished in the background (with their paths), in the order they were
    /// closed; they count toward the open-file cap until done.
    closing: VecDeque<(String, JoinHandle<Result<DataFile>>)>,
    context: FileContext,
    /// Rows of partitions past the open-file cap (when spilling; see [`spill`]).
    spill: Option<Spill>,
    /// Aligned batches gathered for the next sorted run (when the writer sorts).
    pending: Vec<RecordBatch>,
    pending_bytes: u64,
    clock: u64,
    closed: Vec<DataFile>,
    failed: Option<String>,
}

impl DataFileWriter {
    /// A writer for the table at `location` (data goes under `<location>/data` unless
    /// `options.data_location` says otherwise).
    ///
    /// `sort_order_id` is the caller's word that rows arrive already sorted by that order;
    /// it is recorded as given when `options` carry no sort order. When they do, the writer
    /// sorts and records that order's id itself, and a different `sort_order_id` is refused.
    ///
    /// # Errors
    /// When the schema has a type this writer cannot store, the spec or sort order does not
    /// fit the schema, or an option is out of range.
    pub fn new(
        io: &FileIo,
        location: &str,
        schema: &Schema,
        spec: &PartitionSpec,
        sort_order_id: Option<i32>,
        options: &WriteOptions,
    ) -> Result<Self> {
        options.validate()?;
        check_writable(schema)?;
        let arrow = Arc::new(arrow_schema(schema)?);
        let sorter = Sorter::new(&options.sort_order, schema)?;
        let sort_order_id = match (&sorter, sort_order_id) {
            (Some(s), Some(claimed)) if claimed != s.order_id() => {
                return Err(Error::InvalidOption {
                    option: "sort_order_id".into(),
                    value: claimed.to_string(),
                    reason: format!("the options sort by order {}", s.order_id()),
                });
            }
            (Some(s), _) => Some(s.order_id()),
            (None, claimed) => claimed,
        };
        let locations = DataLocations::new(
            location,
            options.data_location.as_deref(),
            options.object_storage_enabled,
            options.object_storage_partitioned_paths,
        );
        Ok(Self {
            io: io.clone(),
            schema: schema.clone(),
            spec: spec.clone(),
            options: options.clone(),
            arrow: arrow.clone(),
            props: writer_properties(options, schema),
            queue: InputQueue::new(options.buffer_size_bytes / 2),
            partitioner: Partitioner::new(spec, schema)?,
            spill: (sorter.is_none() && options.spill_enabled).then(|| {
                Spill::new(
                    arrow.clone(),
                    options.spill_buffer_bytes,
                    options.spill_dir.clone(),
                )
            }),
            sorter,
            namer: FileNamer::new(
                locations,
                options.partition_id,
                options.task_id,
                options.operation_id,
                options.file_suffix.clone(),
                options.file_counter.clone(),
            ),
            open: HashMap::new(),
            round: Vec::new(),
            closing: VecDeque::new(),
            pending: Vec::new(),
            pending_bytes: 0,
            context: FileContext {
                schema: Arc::new(schema.clone()),
                modes: Arc::new(options.metrics.resolve(schema)),
                spec_id: spec.spec_id(),
                sort_order_id,
            },
            clock: 0,
            closed: Vec::new(),
            failed: None,
        })
    }

    /// The Arrow schema files are written with (see [`crate::arrow_schema()`]).
    pub fn arrow_schema(&self) -> &SchemaRef {
        &self.arrow
    }

    /// Checks and aligns `batch` to the table schema without writing it.
    ///
    /// # Errors
    /// A missing required column, an unknown column, a type that cannot be cast, or nulls
    /// in a required column.
    pub fn align(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let rules = Rules {
            floor_nanoseconds: self.options.floor_nanoseconds,
        };
        align_batch(batch, self.schema.fields(), &self.arrow, rules)
    }

    /// Writes one batch. A batch refused by [`DataFileWriter::align`] writes nothing and
    /// leaves the writer usable; an IO or Parquet failure makes it unusable (abort it).
    /// With a sort order the batch may only be buffered: errors of writing it then come
    /// from a later `write` or from [`DataFileWriter::close`]. Needs a Tokio runtime (the
    /// files are written in tasks on it).
    ///
    /// # Errors
    /// See [`DataFileWriter::align`]; IO and Parquet errors naming the file.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_usable()?;
        let aligned = self.align(batch)?;
        if self.sorter.is_none() {
            return self.write_aligned(&aligned).await;
        }
        // Gathered, then written as one sorted run per partition once the buffer is full.
        // Slices count their own rows, not the whole buffers they share.
        self.pending_bytes += slice_bytes(&aligned);
        self.pending.push(aligned);
        if self.pending_bytes >= self.options.sort_buffer_bytes {
            self.flush_pending().await?;
        }
        Ok(())
    }

    /// Writes the gathered batches in sort order.
    async fn flush_pending(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let result = self.write_all_aligned(&pending).await;
        if let Err(e) = &result {
            self.failed = Some(e.to_string());
        }
        result
    }

    /// Writes a batch already aligned by [`DataFileWriter::align`].
    pub(crate) async fn write_aligned(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_usable()?;
        let result = self.write_groups(batch).await;
        if let Err(e) = &result {
            self.failed = Some(e.to_string());
        }
        result
    }

    /// Writes aligned batches that are all in memory. When the writer sorts, rows are first
    /// ordered across the whole slice (partition by partition), so each partition gets one
    /// sorted run instead of one per batch; the reordered rows are copied a chunk at a time.
    pub(crate) async fn write_all_aligned(&mut self, batches: &[RecordBatch]) -> Result<()> {
        let order = match &self.sorter {
            Some(sorter) if batches.len() > 1 => {
                let partition_keys = batches
                    .iter()
                    .map(|b| self.partitioner.keys(b))
                    .collect::<Result<Vec<_>>>()?;
                let sort_keys = batches
                    .iter()
                    .map(|b| sorter.keys(b))
                    .collect::<Result<Vec<_>>>()?;
                slice_order(&partition_keys, &sort_keys)
            }
            _ => None,
        };
        let Some(order) = order else {
            for batch in batches {
                self.write_aligned(batch).await?;
            }
            return Ok(());
        };
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        for chunk in order.chunks(SLICE_CHUNK_ROWS) {
            let indices: Vec<(usize, usize)> = chunk
                .iter()
                .map(|&(b, r)| (b as usize, r as usize))
                .collect();
            let batch =
                interleave_record_batch(&refs, &indices).map_err(|e| Error::arrow("<batch>", e))?;
            self.write_aligned(&batch).await?;
        }
        Ok(())
    }

    fn check_usable(&self) -> Result<()> {
        match &self.failed {
            Some(reason) => Err(Error::WriterFailed {
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    async fn write_groups(&mut self, batch: &RecordBatch) -> Result<()> {
        // Split while the last write's round still encodes; then its files are settled.
        let groups = self.partitioner.split(batch)?;
        self.settle_round().await?;
        let mut jobs = VecDeque::new();
        let cap = self.options.max_open_files.max(1);
        // Partitions with a file, or to get one in this batch.
        let mut admitted = self.open.len();
        let mut spilled = Vec::new();
        for group in groups {
            if group.batch.num_rows() == 0 {
                continue;
            }
            if let Some(spill) = &self.spill {
                let has_file = self.open.contains_key(&group.key);
                // Once spilled, always spilled: its rows are written together at the end.
                if spill.contains(&group.key) || (!has_file && admitted >= cap) {
                    spilled.push((group.key, group.values, group.batch));
                    continue;
                }
                if !has_file {
                    admitted += 1;
                }
            }
            let (rows, last_key) = match &self.sorter {
                Some(sorter) => {
                    let sorted = sorter.sort(&group.batch)?;
                    if self.breaks_order(&group.key, &sorted, 0) {
                        // The open file would stop being sorted: start a new one.
                        self.close_key(&group.key).await?;
                    }
                    let last = sorted.owned_key(sorted.batch.num_rows() - 1);
                    (sorted.batch, Some(last))
                }
                None => (group.batch, None),
            };
            jobs.push_back(Job {
                key: group.key,
                values: group.values,
                rows,
                offset: 0,
                last_key,
            });
        }
        // Kept before any await: a write cancelled in `write_jobs` loses no spilled rows.
        if let Some(spill) = &mut self.spill {
            spill.keep(spilled)?;
        }
        // After the round is started: waiting for the previous run overlaps its files.
        self.write_jobs(jobs, true).await?;
        match &mut self.spill {
            Some(spill) => spill.run_if_full().await,
            None => Ok(()),
        }
    }

    /// The open file of partition `key`, taken out of the map for a task (opened when
    /// needed, closing the least recently used when `in_use` taken files and the open ones
    /// reach the cap).
    async fn take_open(
        &mut self,
        key: &[u8],
        values: &[Option<Datum>],
        in_use: usize,
    ) -> Result<OpenFile> {
        self.ensure_open(key, values, in_use).await?;
        self.clock += 1;
        let mut open = self.open.remove(key).ok_or_else(|| Error::WriterFailed {
            reason: "a partition's file was not opened".into(),
        })?;
        open.last_used = self.clock;
        Ok(open)
    }

    /// True when sorted row `i` sorts before the last row of the open file of `key`.
    fn breaks_order(&self, key: &[u8], sorted: &SortedBatch, i: usize) -> bool {
        self.open
            .get(key)
            .and_then(|f| f.last_key.as_ref())
            .is_some_and(|last| last.row() > sorted.key(i))
    }

    /// Settles finishing files and closes the least recently used open ones until one more
    /// file fits under `write.max-open-files` beside `in_use` files held elsewhere.
    async fn make_room(&mut self, in_use: usize) -> Result<()> {
        while self.open.len() + in_use + self.closing.len() >= self.options.max_open_files.max(1) {
            if !self.closing.is_empty() {
                // A finishing file still holds its row group: it counts until it is done.
                self.settle_oldest().await?;
                continue;
            }
            let lru = self
                .open
                .iter()
                .min_by_key(|(_, f)| f.last_used)
                .map(|(k, _)| k.clone());
            match lru {
                Some(k) => self.close_key(&k).await?,
                None => break,
            }
        }
        Ok(())
    }

    /// The folder of a file of partition `values`: none when the spec has no field that is
    /// not void (a v1 table whose fields were all dropped), as Java writes such a table
    /// (`spec.isUnpartitioned()`: `data/<file>`, never `data/ts_day=null/<file>`).
    fn partition_dir(&self, values: &[Option<Datum>]) -> Result<String> {
        if self.spec.is_unpartitioned() {
            return Ok(String::new());
        }
        Ok(self.spec.partition_to_path(&self.schema, values)?)
    }

    /// Opens a file for the partition `key` unless one is open, making room under the cap
    /// (counting `in_use` files taken out by running tasks).
    async fn ensure_open(
        &mut self,
        key: &[u8],
        values: &[Option<Datum>],
        in_use: usize,
    ) -> Result<()> {
        if self.open.contains_key(key) {
            return Ok(());
        }
        self.make_room(in_use).await?;
        let dir = self.partition_dir(values)?;
        let path = self.namer.next_path(&dir);
        let file = ParquetFile::create(
            &self.io,
            path,
            self.arrow.clone(),
            self.props.clone(),
            values.to_vec(),
            self.queue.clone(),
        )
        .await?;
        self.clock += 1;
        self.open.insert(
            key.to_vec(),
            OpenFile {
                file,
                opened: self.clock,
                last_used: self.clock,
                last_key: None,
            },
        );
        Ok(())
    }

    /// Finishes the file of `key` in a background task (waiting for the oldest such task
    /// when too many are running).
    async fn close_key(&mut self, key: &[u8]) -> Result<()> {
        if let Some(open) = self.open.remove(key) {
            let ctx = self.context.clone();
            let path = open.file.path().to_string();
            let task = tokio::spawn(async move { open.file.close(&ctx).await });
            self.closing.push_back((path, task));
            let limit = MAX_CLOSING.min(self.options.max_open_files.max(1));
            while self.closing.len() > limit {
                self.settle_oldest().await?;
            }
        }
        Ok(())
    }

    /// Waits for the oldest background close and records its file; a close that failed
    /// has its object deleted (its upload may have landed before the error).
    async fn settle_oldest(&mut self) -> Result<()> {
        let Some((path, task)) = self.closing.pop_front() else {
            return Ok(());
        };
        let result = match task.await {
            Ok(result) => result,
            Err(e) => Err(Error::WriterFailed {
                reason: format!("the close task of {path} failed: {e}"),
            }),
        };
        match result {
            Ok(file) => {
                self.closed.push(file);
                Ok(())
            }
            Err(e) => {
                let _ = self.io.delete(&path).await;
                Err(e)
            }
        }
    }

    /// Closes every open file and returns all files written, in the order they were closed.
    ///
    /// # Errors
    /// When the writer had failed, or closing a file fails; everything written is then
    /// deleted (best effort) before the error is returned.
    pub async fn close(mut self) -> Result<Vec<DataFile>> {
        if self.failed.is_none()
            && !self.pending.is_empty()
            && let Err(e) = self.flush_pending().await
        {
            let _ = self.abort().await;
            return Err(e);
        }
        if let Some(reason) = self.failed.take() {
            let _ = self.abort().await;
            return Err(Error::WriterFailed { reason });
        }
        if let Err(e) = self.settle_round().await {
            let _ = self.abort().await;
            return Err(e);
        }
        let mut keys: Vec<(u64, Vec<u8>)> = self
            .open
            .iter()
            .map(|(k, f)| (f.opened, k.clone()))
            .collect();
        keys.sort();
        for (_, key) in keys {
            if let Err(e) = self.close_key(&key).await {
                let _ = self.abort().await;
                return Err(e);
            }
        }
        if let Err(e) = self.drain_spill().await {
            let _ = self.abort().await;
            return Err(e);
        }
        while !self.closing.is_empty() {
            if let Err(e) = self.settle_oldest().await {
                let _ = self.abort().await;
                return Err(e);
            }
        }
        Ok(std::mem::take(&mut self.closed))
    }
}
