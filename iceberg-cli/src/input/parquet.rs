//! Parquet inputs: the parquet crate's Arrow reader, `batch_size` rows at a time (it holds
//! one row group's pages at most).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_schema::Schema as ArrowSchema;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::Batches;

fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>, String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| format!("not a Parquet file: {e}"))
}

/// The file's Arrow schema.
pub(crate) fn schema(path: &Path) -> Result<ArrowSchema, String> {
    Ok(builder(path)?.schema().as_ref().clone())
}

/// The file's batches. Progress is the file's size times the share of rows read.
pub(crate) fn open(
    path: &Path,
    batch_size: usize,
    progress: Arc<AtomicU64>,
) -> Result<Batches, String> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let builder = builder(path)?.with_batch_size(batch_size);
    let total_rows = u64::try_from(builder.metadata().file_metadata().num_rows())
        .unwrap_or(0)
        .max(1);
    let reader = builder
        .build()
        .map_err(|e| format!("cannot read Parquet: {e}"))?;
    let mut rows = 0u64;
    let mut reported = 0u64;
    Ok(Box::new(reader.map(move |batch| {
        let batch = batch.map_err(|e| format!("cannot read Parquet: {e}"))?;
        rows += batch.num_rows() as u64;
        let now = (u128::from(size) * u128::from(rows) / u128::from(total_rows)) as u64;
        progress.fetch_add(now.saturating_sub(reported), Ordering::Relaxed);
        reported = now;
        Ok(batch)
    })))
}
