//! One Parquet data file being written: Arrow batches in, row groups encoded column by
//! column ([`encode`](super::encode)) and streamed into an `iceberg_io::FileWriter`, a
//! [`DataFile`] out on close.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use iceberg_io::{FileIo, FileWriter};
use iceberg_spec::{DataFile, Datum, MetricsMode, Schema};
use iceberg_spec::{PrimitiveType, Type};
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use super::dictionary;
use super::encode::{self, InputQueue};

use crate::error::{Error, Result};
use crate::metrics::{ArrayMetrics, LeafColumn, file_metrics};
use crate::options::WriteOptions;
use crate::to_arrow::{LIST_ELEMENT_NAME, MAP_ENTRIES_NAME, MAP_KEY_NAME, MAP_VALUE_NAME};

/// Footer key holding the table schema JSON, as Java writes it.
const ICEBERG_SCHEMA_KEY: &str = "iceberg.schema";

/// One leaf column of the file: its Iceberg full name (`tags.element`, `props.value`), its
/// Parquet path as the Arrow writer names it (lists `<name>.list.element`, maps
/// `<name>.key_value.key|value`), whether it is a uuid and whether it is repeated (in a list
/// or map: more values than rows).
struct Leaf {
    name: String,
    path: ColumnPath,
    uuid: bool,
    repeated: bool,
}

/// Every leaf column written (`unknown` leaves are not).
fn leaf_columns(schema: &Schema) -> Vec<Leaf> {
    fn walk(ty: &Type, name: &str, repeated: bool, path: &mut Vec<String>, out: &mut Vec<Leaf>) {
        let mut nested = |f: &iceberg_spec::NestedField, steps: [&str; 2], out: &mut Vec<Leaf>| {
            path.extend(steps.iter().map(|s| s.to_string()));
            walk(
                &f.field_type,
                &format!("{name}.{}", f.name),
                true,
                path,
                out,
            );
            path.truncate(path.len() - 2);
        };
        match ty {
            Type::Primitive(PrimitiveType::Unknown) => {}
            Type::Primitive(p) => out.push(Leaf {
                name: name.to_string(),
                path: ColumnPath::new(path.clone()),
                uuid: *p == PrimitiveType::Uuid,
                repeated,
            }),
            Type::Struct(s) => {
                for f in &s.fields {
                    path.push(f.name.clone());
                    walk(
                        &f.field_type,
                        &format!("{name}.{}", f.name),
                        repeated,
                        path,
                        out,
                    );
                    path.pop();
                }
            }
            Type::List(l) => nested(&l.element_field, ["list", LIST_ELEMENT_NAME], out),
            Type::Map(m) => {
                nested(&m.key_field, [MAP_ENTRIES_NAME, MAP_KEY_NAME], out);
                nested(&m.value_field, [MAP_ENTRIES_NAME, MAP_VALUE_NAME], out);
            }
        }
    }
    let mut out = Vec::new();
    for f in schema.fields() {
        walk(
            &f.field_type,
            &f.name,
            false,
            &mut vec![f.name.clone()],
            &mut out,
        );
    }
    out
}

/// The most distinct values a bloom filter of at most `max_bytes` is sized for at `fpp`,
/// and no more than `values` (a row group's rows, for a column not in a list or map).
/// Parquet sizes a filter for its distinct values (rounded up to a power of two bytes), then
/// folds it to the smallest size that still meets `fpp` when the column chunk closes. Java's
/// writer (no distinct-value estimate) writes every filter at `max_bytes` instead; readers
/// take either.
fn bloom_filter_ndv(max_bytes: usize, fpp: f64, values: Option<usize>) -> u64 {
    // Parquet's filter of `n` values at `fpp` takes -n / ln(1 - fpp^(1/8)) bytes; sized for
    // the largest power of two within `max_bytes`, less a margin so rounding never doubles it.
    let bytes = max_bytes.checked_ilog2().map_or(0, |log| 1_usize << log);
    let per_byte = -(1.0 - fpp.powf(1.0 / 8.0)).ln();
    let ndv = (bytes as f64 * per_byte * 0.99).floor().max(1.0) as u64;
    values.map_or(ndv, |v| ndv.min(v.max(1) as u64))
}

/// Parquet writer properties for `options`: exact (untruncated) statistics at page level,
/// the table schema in the footer (Java's `iceberg.schema`), and the bloom filters and
/// statistics the table's properties ask per column (a name the schema lacks is skipped, as
/// Java skips it).
///
/// Uuid columns get no Parquet statistics: Parquet orders uuids as unsigned bytes and Java
/// 1.10's row-group and page filters compare the same min/max as signed longs, so a row group
/// whose uuids span both sign classes would be skipped by Java for values it holds. Their
/// Iceberg metrics come from the Arrow arrays instead (`metrics::nan`).
pub(crate) fn writer_properties(options: &WriteOptions, schema: &Schema) -> WriterProperties {
    let schema_json = KeyValue::new(ICEBERG_SCHEMA_KEY.to_string(), schema.to_json().to_string());
    let columns = &options.parquet_columns;
    let mut builder = WriterProperties::builder();
    for leaf in leaf_columns(schema) {
        if leaf.uuid || columns.stats_disabled.contains(&leaf.name) {
            builder =
                builder.set_column_statistics_enabled(leaf.path.clone(), EnabledStatistics::None);
        }
        if let Some(fpp) = columns.bloom_filters.get(&leaf.name) {
            let ndv = bloom_filter_ndv(
                columns.bloom_filter_max_bytes,
                fpp.get(),
                (!leaf.repeated).then_some(options.row_group_size_rows),
            );
            builder = builder
                .set_column_bloom_filter_enabled(leaf.path.clone(), true)
                .set_column_bloom_filter_fpp(leaf.path.clone(), fpp.get())
                .set_column_bloom_filter_max_ndv(leaf.path, ndv);
        }
    }
    builder
        .set_key_value_metadata(Some(vec![schema_json]))
        .set_compression(options.compression)
        .set_max_row_group_row_count(Some(options.row_group_size_rows.max(1)))
        .set_max_row_group_bytes(Some(
            usize::try_from(options.row_group_size_bytes)
                .unwrap_or(usize::MAX)
                .max(1),
        ))
        .set_data_page_size_limit(options.page_size_bytes)
        .set_data_page_row_count_limit(options.page_row_limit)
        .set_dictionary_page_size_limit(options.dict_size_bytes)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(None)
        .set_column_index_truncate_length(None)
        .set_created_by(concat!("iceberg-write version ", env!("CARGO_PKG_VERSION")).to_string())
        .build()
}

/// What a closed file needs to become a [`DataFile`]; owned, so a close can run as a task.
#[derive(Debug, Clone)]
pub(crate) struct FileContext {
    pub(crate) schema: Arc<Schema>,
    pub(crate) modes: Arc<HashMap<i32, MetricsMode>>,
    pub(crate) spec_id: i32,
    pub(crate) sort_order_id: Option<i32>,
}

/// Row groups closed but not yet framed into the file while the next one encodes: one, so
/// two row groups are in flight at most.
const MAX_CLOSING_GROUPS: usize = 1;

/// Rows a file's first row group is encoded in step before its row size is taken as known
/// (at least; an eighth of the row-group row limit when that is more).
const PROBE_ROWS: usize = 65_536;

/// The columns of the open row group (see [`encode`] for the two ways).
enum Columns {
    /// The writers, every write joined: the group's estimate is exact.
    InStep(Vec<ArrowColumnWriter>),
    /// One chain of tasks per column, the group's row count fixed at `cap`.
    Streamed {
        chains: Vec<encode::Chain>,
        cap: usize,
    },
}

/// The row group being buffered.
struct OpenGroup {
    columns: Columns,
    rows: usize,
}

/// A row group whose columns are finishing in tasks.
struct ClosingGroup {
    columns: Vec<encode::Closing>,
    /// Its estimated encoded size, until it is framed.
    predicted: usize,
}

/// Bytes per row measured so far, as a ratio (deterministic: the first row group's exact
/// estimate, then the framed size of each row group as it is written).
#[derive(Debug, Clone, Copy)]
struct RowSize {
    bytes: usize,
    rows: usize,
}

impl RowSize {
    fn of(&self, rows: usize) -> usize {
        rows.saturating_mul(self.bytes) / self.rows.max(1)
    }
}

/// An open Parquet data file: parquet's file framing over an in-memory buffer that is
/// handed to the upload after every row group, with the row groups' columns encoded by
/// [`encode`] (in step, then streamed).
pub(crate) struct ParquetFile {
    path: String,
    sink: FileWriter,
    writer: SerializedFileWriter<Vec<u8>>,
    factory: ArrowRowGroupWriterFactory,
    arrow: SchemaRef,
    open: Option<OpenGroup>,
    closing: VecDeque<ClosingGroup>,
    row_size: Option<RowSize>,
    groups_opened: usize,
    /// Bounds the input slices streamed chains still hold (shared by a writer's files).
    queue: InputQueue,
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
    arrays: ArrayMetrics,
    partition: Vec<Option<Datum>>,
    rows: u64,
}

impl std::fmt::Debug for ParquetFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetFile")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl ParquetFile {
    /// Starts a file at `path` written with `arrow` schema; streamed row groups take their
    /// input from `queue`.
    pub(crate) async fn create(
        io: &FileIo,
        path: String,
        arrow: SchemaRef,
        props: WriterProperties,
        partition: Vec<Option<Datum>>,
        queue: InputQueue,
    ) -> Result<Self> {
        let parquet_err = |e| Error::parquet(&path, e);
        // No embedded `ARROW:schema`, as Java writes none: it would declare uuid columns as
        // the `arrow.uuid` extension type, which pyarrow (and so PyIceberg) then cannot compare
        // in a filter. Readers take types from the Parquet schema and the table schema.
        let schema = encode::parquet_schema(&arrow, &props).map_err(parquet_err)?;
        let (max_rows, max_bytes) = (props.max_row_group_row_count(), props.max_row_group_bytes());
        let writer =
            SerializedFileWriter::new(Vec::new(), schema.root_schema_ptr(), Arc::new(props))
                .map_err(parquet_err)?;
        let factory = ArrowRowGroupWriterFactory::new(&writer, arrow.clone());
        let sink = io.writer(&path).await?;
        Ok(Self {
            path,
            sink,
            writer,
            factory,
            arrow,
            open: None,
            closing: VecDeque::new(),
            row_size: None,
            groups_opened: 0,
            queue,
            max_rows,
            max_bytes,
            arrays: ArrayMetrics::default(),
            partition,
            rows: 0,
        })
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    fn parquet_err(&self, e: parquet::errors::ParquetError) -> Error {
        Error::parquet(&self.path, e)
    }

    /// Appends an aligned batch, closing row groups where the properties' limits say.
    pub(crate) async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.groups_opened == 0 && self.open.is_none() {
            self.choose_dictionaries(batch)?;
        }
        self.arrays.update(batch);
        let mut offset = 0;
        while offset < batch.num_rows() {
            if self.open.is_none() {
                self.open_group().await?;
            }
            let rest = batch.num_rows() - offset;
            let estimate = self.open_estimate();
            let Some(group) = &self.open else {
                continue;
            };
            let take = match &group.columns {
                Columns::InStep(_) => encode::rows_for_group(
                    group.rows,
                    estimate,
                    rest,
                    self.max_rows,
                    self.max_bytes,
                ),
                Columns::Streamed { cap, .. } => rest.min(cap.saturating_sub(group.rows)),
            };
            if take == 0 {
                self.close_group();
                continue;
            }
            self.encode(&batch.slice(offset, take)).await?;
            offset += take;
            self.stream_once_measured();
            let estimate = self.open_estimate();
            let full = self.open.as_ref().is_some_and(|g| match &g.columns {
                Columns::InStep(_) => {
                    encode::group_full(g.rows, estimate, self.max_rows, self.max_bytes)
                }
                Columns::Streamed { cap, .. } => g.rows >= *cap,
            });
            if full {
                self.close_group();
            }
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Restarts the (still empty) file with no dictionary for the columns whose first page
    /// of rows in `batch` would not gain from one ([`dictionary`]).
    fn choose_dictionaries(&mut self, batch: &RecordBatch) -> Result<()> {
        let props = self.writer.properties();
        let plain = dictionary::plain_columns(batch, props.data_page_row_count_limit());
        if plain.is_empty() {
            return Ok(());
        }
        let mut builder = WriterProperties::clone(props).into_builder();
        for path in plain {
            builder = builder.set_column_dictionary_enabled(path, false);
        }
        let schema = self.writer.schema_descr().root_schema_ptr();
        self.writer = SerializedFileWriter::new(Vec::new(), schema, Arc::new(builder.build()))
            .map_err(|e| self.parquet_err(e))?;
        self.factory = ArrowRowGroupWriterFactory::new(&self.writer, self.arrow.clone());
        Ok(())
    }

    /// Opens the next row group: in step while no row size is known, else streamed with a
    /// row count the byte limit allows at that size. At most [`MAX_CLOSING_GROUPS`] earlier
    /// groups stay in flight; older ones are framed first.
    async fn open_group(&mut self) -> Result<()> {
        while self.closing.len() > MAX_CLOSING_GROUPS {
            self.frame_oldest().await?;
        }
        let writers = self
            .factory
            .create_column_writers(self.groups_opened)
            .map_err(|e| self.parquet_err(e))?;
        self.groups_opened += 1;
        let columns = match self.row_size {
            None => Columns::InStep(writers),
            Some(size) => Columns::Streamed {
                chains: writers.into_iter().map(encode::chain).collect(),
                cap: self.streamed_cap(size),
            },
        };
        self.open = Some(OpenGroup { columns, rows: 0 });
        Ok(())
    }

    /// Switches the first row group from in step to streamed once it holds enough rows to
    /// measure their size ([`PROBE_ROWS`]): the rest of it, and the groups after it, are cut
    /// by that size. Files smaller than that stay in step throughout.
    fn stream_once_measured(&mut self) {
        let estimate = self.open_estimate();
        let Some(group) = self.open.take() else {
            return;
        };
        let probe = self
            .max_rows
            .map_or(PROBE_ROWS, |m| (m / 8).max(PROBE_ROWS));
        let columns = match group.columns {
            Columns::InStep(writers) if group.rows >= probe && estimate > 0 => {
                let size = *self.row_size.get_or_insert(RowSize {
                    bytes: estimate,
                    rows: group.rows,
                });
                Columns::Streamed {
                    chains: writers.into_iter().map(encode::chain).collect(),
                    cap: self.streamed_cap(size).max(group.rows),
                }
            }
            other => other,
        };
        self.open = Some(OpenGroup {
            columns,
            rows: group.rows,
        });
    }

    /// The row count of a streamed row group at `size` bytes per row.
    fn streamed_cap(&self, size: RowSize) -> usize {
        let by_bytes = self.max_bytes.map_or(usize::MAX, |max| {
            max.saturating_mul(size.rows.max(1)) / size.bytes.max(1)
        });
        self.max_rows.unwrap_or(usize::MAX).min(by_bytes).max(1)
    }

    /// Encodes `part` into the open row group.
    async fn encode(&mut self, part: &RecordBatch) -> Result<()> {
        let leaves = encode::leaves(&self.arrow, part).map_err(|e| self.parquet_err(e))?;
        let Some(mut group) = self.open.take() else {
            return Ok(());
        };
        // On failure the writers are gone, and with them the row group: the file is unusable.
        group.columns = match group.columns {
            Columns::InStep(writers) => {
                let parallel = part.num_rows() >= encode::PARALLEL_MIN_ROWS;
                Columns::InStep(
                    encode::encode(writers, leaves, parallel)
                        .await
                        .map_err(|e| self.parquet_err(e))?,
                )
            }
            Columns::Streamed { chains, cap } => {
                let permit = self.queue.hold(encode::slice_bytes(part)).await?;
                Columns::Streamed {
                    chains: encode::extend_chains(chains, leaves, permit)
                        .map_err(|e| self.parquet_err(e))?,
                    cap,
                }
            }
        };
        group.rows += part.num_rows();
        self.open = Some(group);
        Ok(())
    }

    /// Closes the open row group: its columns finish in tasks.
    fn close_group(&mut self) {
        let Some(group) = self.open.take() else {
            return;
        };
        let (columns, predicted) = match group.columns {
            Columns::InStep(writers) => {
                let estimate: usize = writers
                    .iter()
                    .map(ArrowColumnWriter::get_estimated_total_bytes)
                    .sum();
                if self.row_size.is_none() && group.rows > 0 {
                    self.row_size = Some(RowSize {
                        bytes: estimate,
                        rows: group.rows,
                    });
                }
                let chains = writers.into_iter().map(encode::chain).collect();
                (encode::close_chains(chains), estimate)
            }
            Columns::Streamed { chains, .. } => {
                let predicted = self.row_size.map_or(0, |s| s.of(group.rows));
                (encode::close_chains(chains), predicted)
            }
        };
        self.closing.push_back(ClosingGroup { columns, predicted });
    }

    /// Frames the oldest closing row group into the file and hands its bytes to the upload;
    /// its size becomes the row size later groups are cut by.
    async fn frame_oldest(&mut self) -> Result<()> {
        let Some(group) = self.closing.pop_front() else {
            return Ok(());
        };
        let chunks = encode::chunks(group.columns)
            .await
            .map_err(|e| self.parquet_err(e))?;
        let before = self.writer.bytes_written();
        let mut framing = self
            .writer
            .next_row_group()
            .map_err(|e| Error::parquet(&self.path, e))?;
        for chunk in chunks {
            chunk
                .append_to_row_group(&mut framing)
                .map_err(|e| Error::parquet(&self.path, e))?;
        }
        let meta = framing.close().map_err(|e| Error::parquet(&self.path, e))?;
        let rows = usize::try_from(meta.num_rows()).unwrap_or(0);
        if rows > 0 {
            self.row_size = Some(RowSize {
                bytes: self.writer.bytes_written() - before,
                rows,
            });
        }
        self.upload().await
    }

    /// The estimated encoded size of the open row group.
    fn open_estimate(&self) -> usize {
        match self.open.as_ref().map(|g| (&g.columns, g.rows)) {
            None => 0,
            Some((Columns::InStep(writers), _)) => writers
                .iter()
                .map(ArrowColumnWriter::get_estimated_total_bytes)
                .sum(),
            Some((Columns::Streamed { .. }, rows)) => self.row_size.map_or(0, |s| s.of(rows)),
        }
    }

    fn buffered_bytes_usize(&self) -> usize {
        self.open_estimate() + self.closing.iter().map(|g| g.predicted).sum::<usize>()
    }

    /// Estimated bytes of the row groups not yet framed into the file.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        self.buffered_bytes_usize() as u64
    }

    /// Writes the buffered rows out as row groups now.
    pub(crate) async fn flush_row_group(&mut self) -> Result<()> {
        self.close_group();
        while !self.closing.is_empty() {
            self.frame_oldest().await?;
        }
        Ok(())
    }

    /// Hands what the framing has buffered to the upload.
    async fn upload(&mut self) -> Result<()> {
        let bytes = std::mem::take(self.writer.inner_mut());
        if bytes.is_empty() {
            return Ok(());
        }
        self.sink.put(Bytes::from(bytes)).await?;
        Ok(())
    }

    /// Bytes framed so far plus the estimated size of the row groups not yet framed.
    pub(crate) fn estimated_size(&self) -> u64 {
        (self.writer.bytes_written() + self.buffered_bytes_usize()) as u64
    }

    /// Rows written so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the last row groups and the footer.
    async fn finish(&mut self) -> Result<ParquetMetaData> {
        self.flush_row_group().await?;
        let meta = self
            .writer
            .finish()
            .map_err(|e| Error::parquet(&self.path, e))?;
        self.upload().await?;
        Ok(meta)
    }

    /// Finishes the file and describes it.
    pub(crate) async fn close(mut self, ctx: &FileContext) -> Result<DataFile> {
        let meta = match self.finish().await {
            Ok(m) => m,
            Err(e) => {
                let _ = self.sink.abort().await;
                return Err(e);
            }
        };
        let size = self.sink.close().await?;
        let leaves = LeafColumn::of_written(&meta, &ctx.schema);
        let metrics = file_metrics(&meta, &ctx.schema, &ctx.modes, Some(&self.arrays), &leaves);
        Ok(metrics.into_data_file(
            self.path,
            size,
            &meta,
            ctx.spec_id,
            self.partition,
            ctx.sort_order_id,
        ))
    }

    /// Discards the file; nothing becomes visible at its path.
    pub(crate) async fn abort(self) -> Result<()> {
        self.sink.abort().await?;
        Ok(())
    }
}
