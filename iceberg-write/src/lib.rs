//! `iceberg-write`: Arrow record batches in, Parquet data files out, with the Iceberg
//! [`DataFile`] records (partition tuple, counts, sizes, Appendix-D bounds) a manifest needs.
//!
//! Layer: builds on `iceberg-spec` (types, schemas, partition specs, properties, datums) and
//! `iceberg-io` (file IO). It never touches Avro, manifests or table metadata: committing the
//! returned [`DataFile`]s is `iceberg-append`'s job.
//!
//! Module map:
//! - [`write_data_files`] (here): write a slice of batches, get the data files back.
//! - [`DataFileWriter`] (`writer`): the streaming writer — one open file per partition,
//!   rolling at the target size, every file sorted when the table has a sort order; `file`
//!   writes one Parquet file; `spill` keeps the partitions past the open-file cap. Memory
//!   is bounded by our own properties, not by the input: `write.max-open-files` (64; rows of
//!   further partitions are spilled and each is written once at close, so any partition
//!   count gets one file per partition), `write.spill.buffer-size-bytes` (128 MiB of spilled
//!   rows in memory; past it they go to local Arrow IPC files under `TMPDIR` or
//!   [`WriteOptions::spill_dir`], removed afterwards), `write.buffer-size-bytes` (128 MiB of
//!   row groups shared by the open files; past it the largest is written out early), plus
//!   `write.sort.buffer-size-bytes` with a sort order (sorted writers do not spill: past the
//!   cap the least recently used file closes, as with `write.spill.enabled=false`).
//! - [`WriteOptions`] (`options`): codec, sizes, metrics config, per-column bloom filters
//!   and statistics switches (`write.parquet.bloom-filter-enabled.column.<name>`, `-fpp`,
//!   `write.parquet.bloom-filter-max-bytes`, `write.parquet.stats-enabled.column.<name>`, as
//!   Java reads them; `writer::file::writer_properties` applies them) and file-naming ids,
//!   parsed once from table properties.
//! - [`read`]: data files streamed back as Arrow batches through `FileIo` (compaction).
//! - [`import`]: existing Parquet files (written by other tools) as data files, from their
//!   footers: [`import::data_file_from_parquet`], the name mapping, partition inference.
//! - [`arrow_schema()`] (`to_arrow`): Iceberg → Arrow with `PARQUET:field_id` everywhere.
//! - `align`: batches matched to the table schema by name or field id, cast, checked.
//! - `partition`: vectorized transforms and splitting batches by partition tuple.
//! - `sort`: sort keys (transforms of source columns) as Arrow rows; sorting by them.
//! - [`metrics`]: Java's metrics modes, footer metrics, float/NaN handling, truncation.
//! - `naming`: Java-style unique data file names.
//! - `location`: where they go — `<data>/<partition>/` or Java's object-storage layout.
//!
//! Example:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use iceberg_write::arrow_array::{Int64Array, RecordBatch};
//! use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
//! use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema};
//!
//! let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)])?;
//! let batch = RecordBatch::try_new(
//!     Arc::new(ArrowSchema::new(vec![Field::new("id", DataType::Int64, false)])),
//!     vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
//! )?;
//! let io = iceberg_io::FileIo::memory();
//! let files = iceberg_write::write_data_files(
//!     &io, "memory://wh/t", &[batch], &schema, &PartitionSpec::unpartitioned(), None,
//!     &iceberg_write::WriteOptions::default(),
//! ).await?;
//! assert_eq!(files[0].record_count, 3);
//! assert_eq!(files[0].value_counts[&1], 3);
//! # Ok(())
//! # }
//! ```

mod align;
mod defaults;
mod error;
mod from_arrow;
pub mod import;
mod location;
pub mod metrics;
mod naming;
mod options;
mod partition;
pub mod read;
mod sort;
mod to_arrow;
mod writer;

pub use ::arrow_array;
pub use ::arrow_schema;
pub use ::parquet;

pub use crate::defaults::default_array;
pub use crate::error::{Error, Result};
pub use crate::from_arrow::iceberg_schema;
pub use crate::metrics::MetricsConfig;
pub use crate::naming::FileCounter;
pub use crate::options::{
    DEFAULT_BROTLI_LEVEL, DEFAULT_GZIP_LEVEL, DEFAULT_ZSTD_LEVEL, WriteOptions,
};
pub use crate::partition::transform::transform_array;
pub use crate::to_arrow::{
    LIST_ELEMENT_NAME, MAP_ENTRIES_NAME, MAP_KEY_NAME, MAP_VALUE_NAME, UTC_TIME_ZONE, arrow_schema,
    arrow_type,
};
pub use crate::writer::DataFileWriter;

use iceberg_io::FileIo;
use iceberg_spec::{DataFile, PartitionSpec, Schema};

use ::arrow_array::RecordBatch;

/// Writes `batches` as Parquet data files of the table at `location` and describes them.
///
/// Every batch is aligned and checked before anything is written, so a refused batch leaves
/// no file behind. Rows are split by `spec`; each partition gets one file (more once the
/// target file size is reached). With a sort order in `options`
/// ([`WriteOptions::with_sort_order`]) the rows of the whole slice are sorted by it, each
/// partition's file holds them in that order and records the order's id. Without one,
/// `sort_order_id` is recorded as given: pass `None` unless the rows really are sorted by
/// that order (see [`DataFileWriter::new`]). Files are encoded in tasks on the current
/// Tokio runtime, several at once on a multi-threaded one.
///
/// # Errors
/// Data errors ([`Error::MissingColumn`], [`Error::TypeMismatch`],
/// [`Error::NullInRequiredColumn`], ...) before writing; IO and Parquet errors while
/// writing, after which files already written are deleted.
pub async fn write_data_files(
    io: &FileIo,
    location: &str,
    batches: &[RecordBatch],
    schema: &Schema,
    spec: &PartitionSpec,
    sort_order_id: Option<i32>,
    options: &WriteOptions,
) -> Result<Vec<DataFile>> {
    let mut writer = DataFileWriter::new(io, location, schema, spec, sort_order_id, options)?;
    let aligned = batches
        .iter()
        .map(|b| writer.align(b))
        .collect::<Result<Vec<_>>>()?;
    if let Err(e) = writer.write_all_aligned(&aligned).await {
        let _ = writer.abort().await;
        return Err(e);
    }
    writer.close().await
}
