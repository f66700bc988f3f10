//! [`DataFileWriter`]: the streaming writer. One open file per partition across batches,
//! a new file once the current one reaches the target size, at most `max_open_files` open
//! (the least recently used is closed to make room).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Datum, MetricsMode, PartitionSpec, Schema};
use parquet::file::properties::WriterProperties;

use super::file::{FileContext, ParquetFile, writer_properties};
use crate::align::align_batch;
use crate::error::{Error, Result};
use crate::location::DataLocations;
use crate::naming::FileNamer;
use crate::options::WriteOptions;
use crate::partition::Partitioner;
use crate::to_arrow::arrow_schema;

/// Rows handed to a file at a time, so the target size is checked at this granularity.
const ROLL_CHECK_ROWS: usize = 4096;

#[derive(Debug)]
struct OpenFile {
    file: ParquetFile,
    opened: u64,
    last_used: u64,
}

/// Writes a stream of batches as partitioned, size-bounded Parquet data files.
///
/// Batches are aligned to the table schema and split by partition; each partition has one
/// open file until it reaches `target_file_size_bytes`. [`DataFileWriter::close`] returns a
/// [`DataFile`] per file; [`DataFileWriter::abort`] deletes everything written.
#[derive(Debug)]
pub struct DataFileWriter {
    io: FileIo,
    schema: Schema,
    spec: PartitionSpec,
    sort_order_id: Option<i32>,
    options: WriteOptions,
    arrow: SchemaRef,
    props: WriterProperties,
    modes: HashMap<i32, MetricsMode>,
    partitioner: Partitioner,
    namer: FileNamer,
    open: HashMap<Vec<u8>, OpenFile>,
    clock: u64,
    closed: Vec<DataFile>,
    failed: Option<String>,
}

impl DataFileWriter {
    /// A writer for the table at `location` (data goes under `<location>/data` unless
    /// `options.data_location` says otherwise).
    ///
    /// # Errors
    /// When the schema has a type this writer cannot store, the spec does not fit the
    /// schema, or an option is out of range.
    pub fn new(
        io: &FileIo,
        location: &str,
        schema: &Schema,
        spec: &PartitionSpec,
        sort_order_id: Option<i32>,
        options: &WriteOptions,
    ) -> Result<Self> {
        options.validate()?;
        let arrow = Arc::new(arrow_schema(schema)?);
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
            sort_order_id,
            options: options.clone(),
            arrow,
            props: writer_properties(options, schema),
            modes: options.metrics.resolve(schema),
            partitioner: Partitioner::new(spec, schema)?,
            namer: FileNamer::new(
                locations,
                options.partition_id,
                options.task_id,
                options.operation_id,
                options.file_suffix.clone(),
                options.file_counter.clone(),
            ),
            open: HashMap::new(),
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
        align_batch(batch, self.schema.fields(), &self.arrow)
    }

    /// Writes one batch. A batch refused by [`DataFileWriter::align`] writes nothing and
    /// leaves the writer usable; an IO or Parquet failure makes it unusable (abort it).
    ///
    /// # Errors
    /// See [`DataFileWriter::align`]; IO and Parquet errors naming the file.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_usable()?;
        let aligned = self.align(batch)?;
        self.write_aligned(&aligned).await
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

    fn check_usable(&self) -> Result<()> {
        match &self.failed {
            Some(reason) => Err(Error::WriterFailed {
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    async fn write_groups(&mut self, batch: &RecordBatch) -> Result<()> {
        for group in self.partitioner.split(batch)? {
            let rows = group.batch.num_rows();
            let mut offset = 0;
            while offset < rows {
                let len = ROLL_CHECK_ROWS.min(rows - offset);
                let chunk = group.batch.slice(offset, len);
                offset += len;
                self.ensure_open(&group.key, &group.values).await?;
                self.clock += 1;
                let clock = self.clock;
                let target = self.options.target_file_size_bytes;
                let Some(open) = self.open.get_mut(&group.key) else {
                    continue;
                };
                open.last_used = clock;
                open.file.write(&chunk).await?;
                if open.file.estimated_size() >= target {
                    self.close_key(&group.key).await?;
                }
            }
        }
        Ok(())
    }

    /// Opens a file for the partition `key` unless one is open, making room under the cap.
    async fn ensure_open(&mut self, key: &[u8], values: &[Option<Datum>]) -> Result<()> {
        if self.open.contains_key(key) {
            return Ok(());
        }
        while self.open.len() >= self.options.max_open_files.max(1) {
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
        let dir = self.spec.partition_to_path(&self.schema, values)?;
        let path = self.namer.next_path(&dir);
        let file = ParquetFile::create(
            &self.io,
            path,
            self.arrow.clone(),
            self.props.clone(),
            values.to_vec(),
        )
        .await?;
        self.clock += 1;
        self.open.insert(
            key.to_vec(),
            OpenFile {
                file,
                opened: self.clock,
                last_used: self.clock,
            },
        );
        Ok(())
    }

    async fn close_key(&mut self, key: &[u8]) -> Result<()> {
        if let Some(open) = self.open.remove(key) {
            let ctx = FileContext {
                schema: &self.schema,
                modes: &self.modes,
                spec_id: self.spec.spec_id(),
                sort_order_id: self.sort_order_id,
            };
            let data_file = open.file.close(&ctx).await?;
            self.closed.push(data_file);
        }
        Ok(())
    }

    /// Closes every open file and returns all files written, in the order they were closed.
    ///
    /// # Errors
    /// When the writer had failed, or closing a file fails; everything written is then
    /// deleted (best effort) before the error is returned.
    pub async fn close(mut self) -> Result<Vec<DataFile>> {
        if let Some(reason) = self.failed.take() {
            let _ = self.abort().await;
            return Err(Error::WriterFailed { reason });
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
        Ok(std::mem::take(&mut self.closed))
    }

    /// Discards every open file and deletes every file already closed.
    ///
    /// # Errors
    /// The first IO error met; the other files are still attempted.
    pub async fn abort(mut self) -> Result<()> {
        let mut first_error = None;
        for (_, open) in self.open.drain() {
            let path = open.file.path().to_string();
            if let Err(e) = open.file.abort().await {
                // The upload may have completed already: remove what is there.
                if self.io.delete(&path).await.is_err() {
                    first_error.get_or_insert(e);
                }
            }
        }
        let paths: Vec<String> = self.closed.drain(..).map(|f| f.file_path).collect();
        if !paths.is_empty()
            && let Err(e) = self.io.delete_many(paths).await
        {
            first_error.get_or_insert(e.into());
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
