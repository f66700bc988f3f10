//! One Parquet data file being written: Arrow batches in through parquet's
//! `AsyncArrowWriter` into an `iceberg_io::FileWriter`, a [`DataFile`] out on close.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use iceberg_io::{FileIo, FileWriter};
use iceberg_spec::{DataContentType, DataFile, Datum, FileFormat, MetricsMode, Schema};
use iceberg_spec::{PrimitiveType, Type};
use parquet::arrow::AsyncArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::metrics::{ArrayMetrics, file_metrics, split_offsets};
use crate::options::WriteOptions;
use crate::to_arrow::{LIST_ELEMENT_NAME, MAP_ENTRIES_NAME, MAP_KEY_NAME, MAP_VALUE_NAME};

/// Footer key holding the table schema JSON, as Java writes it.
const ICEBERG_SCHEMA_KEY: &str = "iceberg.schema";

/// The Parquet column paths of every uuid leaf, as the Arrow writer names them (lists
/// `<name>.list.element`, maps `<name>.key_value.key|value`).
fn uuid_column_paths(schema: &Schema) -> Vec<ColumnPath> {
    fn walk(ty: &Type, path: &mut Vec<String>, out: &mut Vec<ColumnPath>) {
        match ty {
            Type::Primitive(PrimitiveType::Uuid) => out.push(ColumnPath::new(path.clone())),
            Type::Primitive(_) => {}
            Type::Struct(s) => {
                for f in &s.fields {
                    path.push(f.name.clone());
                    walk(&f.field_type, path, out);
                    path.pop();
                }
            }
            Type::List(l) => {
                path.extend(["list".to_string(), LIST_ELEMENT_NAME.to_string()]);
                walk(&l.element_field.field_type, path, out);
                path.truncate(path.len() - 2);
            }
            Type::Map(m) => {
                for (name, f) in [
                    (MAP_KEY_NAME, &m.key_field),
                    (MAP_VALUE_NAME, &m.value_field),
                ] {
                    path.extend([MAP_ENTRIES_NAME.to_string(), name.to_string()]);
                    walk(&f.field_type, path, out);
                    path.truncate(path.len() - 2);
                }
            }
        }
    }
    let mut out = Vec::new();
    for f in schema.fields() {
        walk(&f.field_type, &mut vec![f.name.clone()], &mut out);
    }
    out
}

/// Parquet writer properties for `options`: exact (untruncated) statistics at page level,
/// and the table schema in the footer (Java's `iceberg.schema`).
///
/// Uuid columns get no Parquet statistics: Parquet orders uuids as unsigned bytes and Java
/// 1.10's row-group and page filters compare the same min/max as signed longs, so a row group
/// whose uuids span both sign classes would be skipped by Java for values it holds. Their
/// Iceberg metrics come from the Arrow arrays instead (`metrics::nan`).
pub(crate) fn writer_properties(options: &WriteOptions, schema: &Schema) -> WriterProperties {
    let schema_json = KeyValue::new(ICEBERG_SCHEMA_KEY.to_string(), schema.to_json().to_string());
    let mut builder = WriterProperties::builder();
    for path in uuid_column_paths(schema) {
        builder = builder.set_column_statistics_enabled(path, EnabledStatistics::None);
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

/// An open Parquet data file.
pub(crate) struct ParquetFile {
    path: String,
    writer: AsyncArrowWriter<FileWriter>,
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
    /// Starts a file at `path` written with `arrow` schema.
    pub(crate) async fn create(
        io: &FileIo,
        path: String,
        arrow: SchemaRef,
        props: WriterProperties,
        partition: Vec<Option<Datum>>,
    ) -> Result<Self> {
        let sink = io.writer(&path).await?;
        // No embedded `ARROW:schema`, as Java writes none: it would declare uuid columns as
        // the `arrow.uuid` extension type, which pyarrow (and so PyIceberg) then cannot compare
        // in a filter. Readers take types from the Parquet schema and the table schema.
        let options = ArrowWriterOptions::new()
            .with_properties(props)
            .with_skip_arrow_metadata(true);
        let writer = AsyncArrowWriter::try_new_with_options(sink, arrow, options)
            .map_err(|e| Error::parquet(&path, e))?;
        Ok(Self {
            path,
            writer,
            arrays: ArrayMetrics::default(),
            partition,
            rows: 0,
        })
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Appends an aligned batch.
    pub(crate) async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.arrays.update(batch);
        self.writer
            .write(batch)
            .await
            .map_err(|e| Error::parquet(&self.path, e))?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Estimated bytes of the row group being buffered.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        self.writer.in_progress_size() as u64
    }

    /// Writes the buffered rows out as a row group now.
    pub(crate) async fn flush_row_group(&mut self) -> Result<()> {
        self.writer
            .flush()
            .await
            .map_err(|e| Error::parquet(&self.path, e))
    }

    /// Bytes flushed so far plus the estimated size of the buffered row group.
    pub(crate) fn estimated_size(&self) -> u64 {
        (self.writer.bytes_written() + self.writer.in_progress_size()) as u64
    }

    /// Finishes the file and describes it.
    pub(crate) async fn close(mut self, ctx: &FileContext) -> Result<DataFile> {
        let meta = match self.writer.finish().await {
            Ok(m) => m,
            Err(e) => {
                let _ = self.writer.into_inner().abort().await;
                return Err(Error::parquet(&self.path, e));
            }
        };
        let size = self.writer.into_inner().close().await?;
        let metrics = file_metrics(&meta, &ctx.schema, &ctx.modes, &self.arrays);
        let (lower_bounds, upper_bounds) = metrics.encoded_bounds();
        Ok(DataFile {
            content: DataContentType::Data,
            file_path: self.path,
            file_format: FileFormat::Parquet,
            spec_id: ctx.spec_id,
            partition: self.partition,
            record_count: meta.file_metadata().num_rows(),
            file_size_in_bytes: i64::try_from(size).unwrap_or(i64::MAX),
            column_sizes: metrics.column_sizes,
            value_counts: metrics.value_counts,
            null_value_counts: metrics.null_value_counts,
            nan_value_counts: metrics.nan_value_counts,
            lower_bounds,
            upper_bounds,
            key_metadata: None,
            split_offsets: Some(split_offsets(&meta)),
            equality_ids: None,
            sort_order_id: ctx.sort_order_id,
            first_row_id: None,
            referenced_data_file: None,
            content_offset: None,
            content_size_in_bytes: None,
        })
    }

    /// Discards the file; nothing becomes visible at its path.
    pub(crate) async fn abort(self) -> Result<()> {
        self.writer.into_inner().abort().await?;
        Ok(())
    }
}
