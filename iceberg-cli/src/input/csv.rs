//! CSV inputs with a header line. Every column is read as text and then cast to the type of
//! the table column of the same name, so a value that does not parse is reported with its
//! column, line, expected type and text. Empty fields are nulls. Columns the table does not
//! have are passed on as text (the writer refuses them by name).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_cast::CastOptions;
use arrow_csv::ReaderBuilder;
use arrow_csv::reader::Format;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use super::{Batches, Counting, INFER_SCHEMA_RECORDS, ReadOptions, Target};

fn format(delimiter: u8) -> Format {
    Format::default()
        .with_header(true)
        .with_delimiter(delimiter)
}

/// The schema inferred from the header and the first records.
pub(crate) fn infer_schema(path: &Path, delimiter: u8) -> Result<ArrowSchema, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let (schema, _) = format(delimiter)
        .infer_schema(f, Some(INFER_SCHEMA_RECORDS))
        .map_err(|e| format!("not CSV: {e}"))?;
    Ok(schema)
}

/// The file's batches, cast to the table's types.
pub(crate) fn open(
    path: &Path,
    target: &Target,
    options: &ReadOptions,
    progress: Arc<AtomicU64>,
) -> Result<Batches, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let (header, _) = format(options.delimiter)
        .infer_schema(f, Some(0))
        .map_err(|e| format!("cannot read the CSV header: {e}"))?;
    let text_schema = Arc::new(ArrowSchema::new(
        header
            .fields()
            .iter()
            .map(|h| Field::new(h.name(), DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let reader = ReaderBuilder::new(text_schema)
        .with_format(format(options.delimiter))
        .with_batch_size(options.batch_size)
        .build(Counting::new(f, progress))
        .map_err(|e| format!("cannot read CSV: {e}"))?;
    let target = target.clone();
    let mut rows_before = 0usize;
    Ok(Box::new(reader.map(move |b| {
        let batch = b.map_err(|e| format!("cannot read CSV: {e}"))?;
        let out = typed(&batch, &target, rows_before);
        rows_before += batch.num_rows();
        out
    })))
}

/// `batch` (all text) with each column cast to its table type.
fn typed(batch: &RecordBatch, target: &Target, rows_before: usize) -> Result<RecordBatch, String> {
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let name = field.name();
        let Ok(to) = target.arrow.field_with_name(name) else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
            continue;
        };
        let expected = target
            .schema
            .field_by_name(name)
            .map_or_else(|| to.data_type().to_string(), |f| f.field_type.to_string());
        if matches!(
            to.data_type(),
            DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) | DataType::Map(..)
        ) {
            return Err(format!(
                "column `{name}`: expected {expected}, which CSV cannot hold (use JSON or Parquet)"
            ));
        }
        columns.push(cast(column, to.data_type(), name, &expected, rows_before)?);
        fields.push(
            Field::new(name, to.data_type().clone(), true).with_metadata(to.metadata().clone()),
        );
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)
        .map_err(|e| format!("cannot assemble a batch: {e}"))
}

fn cast(
    column: &ArrayRef,
    to: &DataType,
    name: &str,
    expected: &str,
    rows_before: usize,
) -> Result<ArrayRef, String> {
    if column.data_type() == to {
        return Ok(column.clone());
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    match arrow_cast::cast_with_options(column, to, &strict) {
        Ok(a) => Ok(a),
        Err(e) => {
            // Find the first value that does not parse, to show it.
            let lenient = arrow_cast::cast(column, to).map_err(|_| {
                format!("column `{name}`: expected {expected}, cannot convert text: {e}")
            })?;
            let text = column.as_any().downcast_ref::<StringArray>();
            let bad = (0..column.len()).find(|&i| column.is_valid(i) && lenient.is_null(i));
            match (bad, text) {
                (Some(i), Some(text)) => Err(format!(
                    "column `{name}` (line {}): expected {expected}, found {:?}",
                    rows_before + i + 2,
                    text.value(i)
                )),
                _ => Err(format!("column `{name}`: expected {expected}: {e}")),
            }
        }
    }
}
