//! Encoding row groups: a parquet `ArrowColumnWriter` per leaf column, and the column
//! chunks checked before they are framed into the file.
//!
//! A file's first row group is encoded *in step*: each write's columns in tasks of their
//! own when the write is large ([`encode`]), all joined before the write returns, so the
//! group's size estimate is exact and it closes where parquet's `ArrowWriter` would close
//! it. Later row groups are *streamed*: their row count is fixed when they open (from the
//! bytes per row measured so far), and each column is a [`Chain`] of tasks that encodes
//! slice after slice without waiting for the other columns, so a heavy column of one row
//! group runs beside the next row group. Every column writer still sees its values in
//! order and every decision depends only on rows and measured sizes, so a file's bytes do
//! not depend on how the tasks were scheduled.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema as ArrowSchema;
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn, compute_leaves,
};
use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// Writes of fewer rows encode their columns on the calling task: a task per column costs
/// more than it saves on small slices (a partition's share of a batch, say).
pub(crate) const PARALLEL_MIN_ROWS: usize = 8192;

/// The Parquet schema for `arrow`, as parquet converts it but for the spec's physical type
/// of `decimal(1, s)`: INT32 (arrow-rs 59 gives it INT64, checklist gotcha G28).
pub(crate) fn parquet_schema(
    arrow: &ArrowSchema,
    props: &WriterProperties,
) -> ParquetResult<SchemaDescriptor> {
    let converted = ArrowSchemaConverter::new()
        .with_coerce_types(props.coerce_types())
        .convert(arrow)?;
    let root = with_spec_decimals(&converted.root_schema_ptr())?;
    Ok(SchemaDescriptor::new(root))
}

/// `ty` with every INT64 decimal of precision at most 9 made INT32.
fn with_spec_decimals(ty: &TypePtr) -> ParquetResult<TypePtr> {
    let info = ty.get_basic_info();
    if ty.is_primitive() {
        let small_decimal = ty.get_physical_type() == PhysicalType::INT64
            && matches!(info.logical_type_ref(), Some(LogicalType::Decimal(d)) if d.precision <= 9);
        if !small_decimal {
            return Ok(ty.clone());
        }
        let mut b = Type::primitive_type_builder(info.name(), PhysicalType::INT32)
            .with_repetition(info.repetition())
            .with_converted_type(info.converted_type())
            .with_logical_type(info.logical_type_ref().cloned())
            .with_precision(ty.get_precision())
            .with_scale(ty.get_scale());
        if info.has_id() {
            b = b.with_id(Some(info.id()));
        }
        return Ok(Arc::new(b.build()?));
    }
    let mut fields = ty
        .get_fields()
        .iter()
        .map(with_spec_decimals)
        .collect::<ParquetResult<Vec<_>>>()?;
    let mut b = Type::group_type_builder(info.name())
        .with_converted_type(info.converted_type())
        .with_logical_type(info.logical_type_ref().cloned())
        .with_fields(std::mem::take(&mut fields));
    if info.has_repetition() {
        b = b.with_repetition(info.repetition());
    }
    if info.has_id() {
        b = b.with_id(Some(info.id()));
    }
    Ok(Arc::new(b.build()?))
}

/// How many of `n` more rows go into the row group holding `buffered` rows and an estimated
/// `bytes`, under the writer properties' row and byte limits; 0 means "close the group
/// first". This is `ArrowWriter::write`'s rule, so row groups split where parquet's own
/// writer splits them.
pub(crate) fn rows_for_group(
    buffered: usize,
    bytes: usize,
    n: usize,
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
) -> usize {
    let mut take = n;
    if let Some(max) = max_rows {
        take = take.min(max.saturating_sub(buffered));
    }
    if let Some(max) = max_bytes
        && buffered > 0
    {
        if bytes >= max {
            return 0;
        }
        if let Some(fit) = (max - bytes).checked_div(bytes / buffered) {
            take = take.min(fit);
        }
    }
    take
}

/// True once a group of `buffered` rows and `bytes` must be closed.
pub(crate) fn group_full(
    buffered: usize,
    bytes: usize,
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
) -> bool {
    max_rows.is_some_and(|m| buffered >= m) || max_bytes.is_some_and(|m| bytes >= m)
}

/// The leaf columns of `batch`, in the order of the column writers.
pub(crate) fn leaves(
    arrow: &ArrowSchema,
    batch: &RecordBatch,
) -> ParquetResult<Vec<ArrowLeafColumn>> {
    let mut out = Vec::with_capacity(batch.num_columns());
    for (field, column) in arrow.fields().iter().zip(batch.columns()) {
        out.extend(compute_leaves(field, column)?);
    }
    Ok(out)
}

/// Whether the current tokio runtime can run tasks on other threads.
fn multi_threaded() -> bool {
    tokio::runtime::Handle::try_current().is_ok_and(|h| {
        matches!(
            h.runtime_flavor(),
            tokio::runtime::RuntimeFlavor::MultiThread
        )
    })
}

fn task_failed(e: tokio::task::JoinError) -> ParquetError {
    ParquetError::General(format!("a column's encoding task failed: {e}"))
}

/// Encodes `leaves` into `columns` (one leaf per writer), each column in a task of its own
/// when `parallel` and the runtime has threads for it. The writers are returned, in order,
/// unless a task failed (then the row group is lost and so is the file).
pub(crate) async fn encode(
    mut columns: Vec<ArrowColumnWriter>,
    leaves: Vec<ArrowLeafColumn>,
    parallel: bool,
) -> ParquetResult<Vec<ArrowColumnWriter>> {
    if columns.len() != leaves.len() {
        return Err(ParquetError::General(format!(
            "{} leaf columns for {} column writers",
            leaves.len(),
            columns.len()
        )));
    }
    if !parallel || columns.len() < 2 || !multi_threaded() {
        for (w, leaf) in columns.iter_mut().zip(&leaves) {
            w.write(leaf)?;
        }
        return Ok(columns);
    }
    let tasks: Vec<_> = columns
        .into_iter()
        .zip(leaves)
        .map(|(mut w, leaf)| {
            tokio::spawn(async move {
                let result = w.write(&leaf);
                (w, result)
            })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    let mut first_error = None;
    for task in tasks {
        match task.await {
            Ok((w, result)) => {
                out.push(w);
                if let Err(e) = result {
                    first_error.get_or_insert(e);
                }
            }
            Err(e) => {
                first_error.get_or_insert(task_failed(e));
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Bounds the input arrays that streamed chains hold (shared by the files of one writer):
/// a slice holds its bytes until every column encoded it, and a producer waits beyond the
/// bound.
#[derive(Debug, Clone)]
pub(crate) struct InputQueue {
    permits: Arc<Semaphore>,
    /// Permits in all, in KiB.
    units: u32,
}

impl InputQueue {
    /// A queue for `bytes` of input (at least 1 KiB).
    pub(crate) fn new(bytes: u64) -> Self {
        let units = u32::try_from(bytes / 1024)
            .unwrap_or(u32::MAX)
            .clamp(1, u32::try_from(Semaphore::MAX_PERMITS).unwrap_or(u32::MAX));
        Self {
            permits: Arc::new(Semaphore::new(units as usize)),
            units,
        }
    }

    /// Waits until `bytes` fit (a slice larger than the whole queue takes all of it).
    pub(crate) async fn hold(&self, bytes: u64) -> crate::error::Result<Arc<OwnedSemaphorePermit>> {
        let units = u32::try_from(bytes / 1024)
            .unwrap_or(u32::MAX)
            .clamp(1, self.units);
        let permit = self
            .permits
            .clone()
            .acquire_many_owned(units)
            .await
            .map_err(|e| crate::error::Error::WriterFailed {
                reason: format!("the input queue closed: {e}"),
            })?;
        Ok(Arc::new(permit))
    }
}

/// The bytes of `batch`'s own rows (a slice does not count the buffers it shares).
pub(crate) fn slice_bytes(batch: &RecordBatch) -> u64 {
    batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data();
            data.get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size()) as u64
        })
        .sum()
}

/// One column of a streamed row group: the task that holds its writer once every slice
/// given to it so far is encoded.
pub(crate) type Chain = JoinHandle<ParquetResult<ArrowColumnWriter>>;

/// A chain holding `writer`, nothing to encode yet.
pub(crate) fn chain(writer: ArrowColumnWriter) -> Chain {
    tokio::spawn(std::future::ready(Ok(writer)))
}

/// Appends `leaves` to the chains of a streamed row group, one leaf per column: each
/// column's task waits for its previous slice and encodes this one, without waiting for
/// the other columns (so a heavy column runs on while the next row group starts). `permit`
/// is held until the slice is encoded in every column.
pub(crate) fn extend_chains(
    chains: Vec<Chain>,
    leaves: Vec<ArrowLeafColumn>,
    permit: Arc<OwnedSemaphorePermit>,
) -> ParquetResult<Vec<Chain>> {
    if chains.len() != leaves.len() {
        return Err(ParquetError::General(format!(
            "{} leaf columns for {} column writers",
            leaves.len(),
            chains.len()
        )));
    }
    Ok(chains
        .into_iter()
        .zip(leaves)
        .map(|(previous, leaf)| {
            let permit = permit.clone();
            tokio::spawn(async move {
                let mut w = previous.await.map_err(task_failed)??;
                w.write(&leaf)?;
                drop(permit);
                Ok(w)
            })
        })
        .collect())
}

/// The closing of one column of a row group: its chunk, checked, once it is finished.
pub(crate) type Closing = JoinHandle<ParquetResult<ArrowColumnChunk>>;

/// Finishes each chain (its last page and dictionary page are compressed there) in a task.
pub(crate) fn close_chains(chains: Vec<Chain>) -> Vec<Closing> {
    chains
        .into_iter()
        .map(|previous| {
            tokio::spawn(async move {
                let mut chunk = previous.await.map_err(task_failed)??.close()?;
                drop_widened_zero_bounds(&mut chunk)?;
                Ok(chunk)
            })
        })
        .collect()
}

/// The chunks of closing columns, in order.
pub(crate) async fn chunks(closing: Vec<Closing>) -> ParquetResult<Vec<ArrowColumnChunk>> {
    let mut out = Vec::with_capacity(closing.len());
    for task in closing {
        out.push(task.await.map_err(task_failed)??);
    }
    Ok(out)
}

/// A float or double chunk holding only zeros gets min -0.0 and max +0.0 (Parquet's rule for
/// signed zeros, followed by parquet-mr too). pyarrow 26 (so PyIceberg) takes such a chunk
/// for one that holds only -0.0 and skips it for `x IN (0.0, ...)`, losing its rows. The
/// chunk keeps its counts and loses only those two bounds, which nothing needs: the data
/// file's Iceberg bounds come from the arrays, and other chunks keep theirs.
fn drop_widened_zero_bounds(chunk: &mut ArrowColumnChunk) -> ParquetResult<()> {
    let close = chunk.close_mut();
    let stripped = match close.metadata.statistics() {
        Some(Statistics::Double(s)) if s.min_opt() == Some(&0.0) && s.max_opt() == Some(&0.0) => {
            Statistics::double(None, None, s.distinct_count(), s.null_count_opt(), false)
        }
        Some(Statistics::Float(s)) if s.min_opt() == Some(&0.0) && s.max_opt() == Some(&0.0) => {
            Statistics::float(None, None, s.distinct_count(), s.null_count_opt(), false)
        }
        _ => return Ok(()),
    };
    close.metadata = close
        .metadata
        .clone()
        .into_builder()
        .set_statistics(stripped)
        .build()?;
    // Its pages' column-index entries carry the same widened bounds.
    close.column_index = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn rows_for_group_follows_parquets_split_rule() {
        // No limits: everything fits.
        assert_eq!(rows_for_group(0, 0, 10, None, None), 10);
        // Row limit: fill up to it.
        assert_eq!(rows_for_group(7, 0, 10, Some(10), None), 3);
        assert_eq!(rows_for_group(10, 0, 10, Some(10), None), 0);
        // Byte limit from the average row so far: 100 bytes over 10 rows, 50 bytes left.
        assert_eq!(rows_for_group(10, 100, 20, None, Some(150)), 5);
        assert_eq!(rows_for_group(10, 150, 20, None, Some(150)), 0);
        // Less than a row left: close first.
        assert_eq!(rows_for_group(10, 145, 20, None, Some(150)), 0);
        // An empty group takes a write whole, whatever its size.
        assert_eq!(rows_for_group(0, 0, 1_000_000, None, Some(1)), 1_000_000);
        // Both: the tighter one wins.
        assert_eq!(rows_for_group(10, 100, 20, Some(12), Some(1000)), 2);
        assert!(group_full(10, 0, Some(10), None));
        assert!(group_full(1, 150, None, Some(150)));
        assert!(!group_full(9, 149, Some(10), Some(150)));
    }

    #[test]
    fn small_decimals_are_int32_and_everything_else_as_parquet_converts_it() {
        use arrow_schema::{DataType, Field};
        let arrow = ArrowSchema::new(vec![
            Field::new("d1", DataType::Decimal128(1, 0), false),
            Field::new("d9", DataType::Decimal128(9, 2), true),
            Field::new("d10", DataType::Decimal128(10, 2), true),
            Field::new(
                "s",
                DataType::Struct(
                    vec![Field::new("inner", DataType::Decimal128(1, 1), true)].into(),
                ),
                true,
            ),
            Field::new("x", DataType::Int64, false),
        ]);
        let props = WriterProperties::builder().build();
        let ours = parquet_schema(&arrow, &props).unwrap();
        let theirs = ArrowSchemaConverter::new().convert(&arrow).unwrap();
        let physical: Vec<_> = ours.columns().iter().map(|c| c.physical_type()).collect();
        assert_eq!(
            physical,
            [
                PhysicalType::INT32,
                PhysicalType::INT32,
                PhysicalType::INT64,
                PhysicalType::INT32,
                PhysicalType::INT64
            ]
        );
        for (a, b) in ours.columns().iter().zip(theirs.columns()) {
            assert_eq!(a.path(), b.path());
            assert_eq!(a.logical_type_ref(), b.logical_type_ref());
            assert_eq!(
                a.self_type().get_basic_info().repetition(),
                b.self_type().get_basic_info().repetition()
            );
        }
    }
}
