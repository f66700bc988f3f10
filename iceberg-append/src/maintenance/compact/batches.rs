//! The rows read back from small files, gathered into batches of [`READ_BATCH_ROWS`]
//! before they reach the writer: a streaming table's files hold a thousand rows or so, and
//! the writer's per-write work (aligning, metrics, a task per column) and its dictionary
//! choice (made on a file's first page of rows) want whole pages, as a fresh write has.

use arrow_array::RecordBatch;
use arrow_select::coalesce::BatchCoalescer;
use iceberg_write::DataFileWriter;

use crate::error::Result;

/// Rows per batch handed to the writer (and per batch when files are read back).
pub(super) const READ_BATCH_ROWS: usize = 64 * 1024;

/// Batches of at least this many rows pass through uncopied.
const PASS_THROUGH_ROWS: usize = READ_BATCH_ROWS / 2;

/// Feeds a writer batches of [`READ_BATCH_ROWS`] rows, in the order the rows came.
pub(super) struct Gathered<'a> {
    writer: &'a mut DataFileWriter,
    /// Rows of one Arrow schema; a batch of another schema (a file of another writer that
    /// decodes to other nullability or metadata) flushes it and starts a new one.
    pending: Option<BatchCoalescer>,
}

impl<'a> Gathered<'a> {
    /// Gathers rows for `writer`.
    pub(super) fn new(writer: &'a mut DataFileWriter) -> Self {
        Self {
            writer,
            pending: None,
        }
    }

    /// Takes `batch`'s rows, writing every batch completed.
    pub(super) async fn write(&mut self, batch: RecordBatch) -> Result<()> {
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.schema() != *batch.schema_ref())
        {
            self.flush().await?;
        }
        let pending = self.pending.get_or_insert_with(|| {
            BatchCoalescer::new(batch.schema(), READ_BATCH_ROWS)
                .with_biggest_coalesce_batch_size(Some(PASS_THROUGH_ROWS))
        });
        pending.push_batch(batch).map_err(arrow_error)?;
        self.write_completed().await
    }

    /// Writes the rows still gathered.
    pub(super) async fn flush(&mut self) -> Result<()> {
        if let Some(pending) = &mut self.pending {
            pending.finish_buffered_batch().map_err(arrow_error)?;
            self.write_completed().await?;
        }
        self.pending = None;
        Ok(())
    }

    async fn write_completed(&mut self) -> Result<()> {
        while let Some(done) = self.pending.as_mut().and_then(|p| p.next_completed_batch()) {
            self.writer.write(&done).await?;
        }
        Ok(())
    }
}

fn arrow_error(source: arrow_schema::ArrowError) -> crate::error::Error {
    iceberg_write::Error::Arrow {
        column: "<batch>".into(),
        source,
    }
    .into()
}

/// The `Int64` values of the first column of `batches`, in order (for tests).
#[cfg(test)]
pub(super) fn first_column_longs(batches: &[RecordBatch]) -> Vec<i64> {
    use arrow_array::cast::AsArray;
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<arrow_array::types::Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema as ArrowSchema};
    use iceberg_io::FileIo;
    use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Type};
    use iceberg_write::{DataFileWriter, WriteOptions, read::read_whole_file};

    use super::*;

    fn batch(nullable: bool, from: i64, n: i64) -> RecordBatch {
        let schema = ArrowSchema::new(vec![Field::new("id", DataType::Int64, nullable)]);
        let ids = Int64Array::from_iter_values(from..from + n);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids)]).unwrap()
    }

    /// Small batches of two Arrow schemas (nullable or not) and large ones come out as the
    /// same rows in the same order: none lost or repeated where the schema changes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gathers_rows_in_order_across_schemas() {
        let dir = tempfile::tempdir().unwrap();
        let location = format!("file://{}", dir.path().display());
        let io = FileIo::from_location(&location, &Default::default()).unwrap();
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )],
        )
        .unwrap();
        let options = WriteOptions::default();
        let mut writer = DataFileWriter::new(
            &io,
            &location,
            &schema,
            &PartitionSpec::unpartitioned(),
            None,
            &options,
        )
        .unwrap();
        let mut gathered = Gathered::new(&mut writer);
        let mut next = 0;
        for (nullable, n) in [(true, 1000), (true, 70_000), (false, 10), (false, 1000)]
            .into_iter()
            .chain(std::iter::repeat_n((true, 999), 100))
            .chain([(true, PASS_THROUGH_ROWS as i64)])
        {
            gathered.write(batch(nullable, next, n)).await.unwrap();
            next += n;
        }
        gathered.flush().await.unwrap();
        let files = writer.close().await.unwrap();
        assert_eq!(files.len(), 1);
        let read = read_whole_file(&io, &files[0].file_path, 1 << 20, None)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first_column_longs(&read), (0..next).collect::<Vec<_>>());
    }
}
