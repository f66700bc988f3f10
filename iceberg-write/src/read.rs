//! Reading data files back as Arrow batches, streamed with ranged reads through [`FileIo`]
//! (parquet's async Arrow reader), for rewrites such as compaction: memory holds one batch
//! and the pages it decodes, not the file.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use iceberg_io::FileIo;
use iceberg_spec::Schema;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::{AsyncFileReader, ParquetRecordBatchStream};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use crate::error::{Error, Result};
use crate::import::read_parquet_footer;

/// A Parquet file read through [`FileIo`]: its footer once, then the byte ranges the
/// reader asks for.
#[derive(Debug, Clone)]
pub struct FileIoReader {
    io: FileIo,
    path: String,
    metadata: Option<Arc<ParquetMetaData>>,
}

impl FileIoReader {
    /// A reader of the Parquet file at `path`.
    pub fn new(io: &FileIo, path: &str) -> Self {
        Self {
            io: io.clone(),
            path: path.to_string(),
            metadata: None,
        }
    }

    /// The file's footer (read once, in at most two ranged reads).
    ///
    /// # Errors
    /// As [`read_parquet_footer`].
    pub async fn metadata(&mut self) -> Result<Arc<ParquetMetaData>> {
        if let Some(m) = &self.metadata {
            return Ok(m.clone());
        }
        let (meta, _) = read_parquet_footer(&self.io, &self.path).await?;
        let meta = Arc::new(meta);
        self.metadata = Some(meta.clone());
        Ok(meta)
    }

    /// Whether the file's columns are exactly `schema`'s: the same field ids under the same
    /// names at every level (list elements and map entries by id alone), so its batches
    /// write as the table's rows without renaming, adding or dropping a column. Files
    /// without field ids never are.
    ///
    /// # Errors
    /// As [`FileIoReader::metadata`]; a Parquet schema with no Arrow equivalent.
    pub async fn has_columns_of(&mut self, schema: &Schema) -> Result<bool> {
        let meta = self.metadata().await?;
        let table = crate::to_arrow::arrow_schema(schema)?;
        has_columns(&meta, &self.path, &table)
    }

    /// The file's rows as a stream of batches of at most `batch_size` rows.
    ///
    /// # Errors
    /// The footer cannot be read, or the Parquet schema has no Arrow equivalent.
    pub async fn into_stream(
        mut self,
        batch_size: usize,
    ) -> Result<ParquetRecordBatchStream<FileIoReader>> {
        let path = self.path.clone();
        let meta = self.metadata().await?;
        let options = ArrowReaderOptions::new();
        let metadata = parquet::arrow::arrow_reader::ArrowReaderMetadata::try_new(meta, options)
            .map_err(|e| Error::parquet_read(&path, e))?;
        ParquetRecordBatchStreamBuilder::new_with_metadata(self, metadata)
            .with_batch_size(batch_size.max(1))
            .build()
            .map_err(|e| Error::parquet_read(&path, e))
    }
}

/// Reads the whole Parquet file at `path` in one request and decodes it into batches of at
/// most `batch_size` rows, in a task of the current runtime: for small files, where the
/// streamed reader's ranged reads would cost a request per column chunk. With `columns_of`,
/// a file whose columns are not exactly that schema's (as [`FileIoReader::has_columns_of`]
/// decides, from the footer this read decodes anyway) is not decoded: `None`.
///
/// # Errors
/// The file cannot be read or is not valid Parquet.
pub async fn read_whole_file(
    io: &FileIo,
    path: &str,
    batch_size: usize,
    columns_of: Option<&Schema>,
) -> Result<Option<Vec<arrow_array::RecordBatch>>> {
    let table = columns_of.map(crate::to_arrow::arrow_schema).transpose()?;
    let bytes = io.read(path).await?;
    let owned = path.to_string();
    let decode = move || -> Result<Option<Vec<arrow_array::RecordBatch>>> {
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .map_err(|e| Error::parquet_read(&owned, e))?;
        if let Some(table) = &table
            && !has_columns(builder.metadata(), &owned, table)?
        {
            return Ok(None);
        }
        let reader = builder
            .with_batch_size(batch_size.max(1))
            .build()
            .map_err(|e| Error::parquet_read(&owned, e))?;
        // A page that does not decode is the file's fault: the error names it.
        reader
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Some)
            .map_err(|e| Error::parquet_read(&owned, e.into()))
    };
    tokio::spawn(async move { decode() })
        .await
        .map_err(|e| Error::WriterFailed {
            reason: format!("decoding {path} failed: {e}"),
        })?
}

/// Whether the file at `path` with footer `meta` has exactly the columns of `table` (a table
/// schema as Arrow); see [`FileIoReader::has_columns_of`].
fn has_columns(meta: &ParquetMetaData, path: &str, table: &arrow_schema::Schema) -> Result<bool> {
    let file_meta = meta.file_metadata();
    let file = parquet::arrow::parquet_to_arrow_schema(
        file_meta.schema_descr(),
        file_meta.key_value_metadata(),
    )
    .map_err(|e| Error::parquet_read(path, e))?;
    Ok(same_columns(file.fields(), table.fields(), true))
}

impl AsyncFileReader for FileIoReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move {
            self.io
                .read_range(&self.path, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            self.metadata()
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }
}

/// Whether two Arrow field lists carry the same columns: names (where `named`) and
/// `PARQUET:field_id`s equal, recursively.
fn same_columns(a: &arrow_schema::Fields, b: &arrow_schema::Fields, named: bool) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| same_field(x, y, named))
}

fn same_field(a: &arrow_schema::Field, b: &arrow_schema::Field, named: bool) -> bool {
    use arrow_schema::DataType;
    let id = |f: &arrow_schema::Field| f.metadata().get("PARQUET:field_id").cloned();
    if id(a).is_none() || id(a) != id(b) || (named && a.name() != b.name()) {
        return false;
    }
    match (a.data_type(), b.data_type()) {
        (DataType::Struct(x), DataType::Struct(y)) => same_columns(x, y, true),
        (
            DataType::List(x) | DataType::LargeList(x),
            DataType::List(y) | DataType::LargeList(y),
        ) => same_field(x, y, false),
        (DataType::Map(x, _), DataType::Map(y, _)) => match (x.data_type(), y.data_type()) {
            (DataType::Struct(kx), DataType::Struct(ky)) => same_columns(kx, ky, false),
            _ => false,
        },
        (
            DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) | DataType::Map(..),
            _,
        )
        | (
            _,
            DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) | DataType::Map(..),
        ) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};

    use super::*;

    fn schema(id: i32) -> Schema {
        iceberg_testing::id_column_schema(id).unwrap()
    }

    /// A Parquet file of `schema`'s columns holding `0..n`, stored at `path`.
    async fn put_file(io: &FileIo, path: &str, schema: &Schema, n: i64) -> Vec<u8> {
        let arrow = Arc::new(crate::to_arrow::arrow_schema(schema).unwrap());
        let batch = RecordBatch::try_new(
            arrow.clone(),
            vec![Arc::new(Int64Array::from_iter_values(0..n))],
        )
        .unwrap();
        let mut bytes = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, arrow, None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        io.put(path, bytes.clone().into()).await.unwrap();
        bytes
    }

    /// A whole-file read gives the rows, `None` for a file of other columns (by field id),
    /// and names the file whose pages do not decode.
    #[tokio::test]
    async fn whole_file_reads_check_columns_and_name_broken_files() {
        let io = FileIo::memory();
        let (ours, other) = (schema(1), schema(2));
        put_file(&io, "memory://wh/a.parquet", &ours, 100).await;
        let read = read_whole_file(&io, "memory://wh/a.parquet", 30, Some(&ours))
            .await
            .unwrap()
            .unwrap();
        let rows: Vec<usize> = read.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(rows, [30, 30, 30, 10]);
        assert!(
            read_whole_file(&io, "memory://wh/a.parquet", 30, Some(&other))
                .await
                .unwrap()
                .is_none()
        );
        let mut broken = put_file(&io, "memory://wh/b.parquet", &ours, 100).await;
        // The first page's header, right after the magic.
        broken[4..20].fill(0xFF);
        io.put("memory://wh/b.parquet", broken.into())
            .await
            .unwrap();
        let err = read_whole_file(&io, "memory://wh/b.parquet", 30, None)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("b.parquet"), "{err}");
    }
}
