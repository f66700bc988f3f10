//! `iceberg head NS.T [-n N]` and `iceberg schema NS.T`: a quick look at a table's rows and
//! its current schema.
//!
//! `head` reads the current snapshot's live data files in manifest order through parquet's
//! Arrow reader until it has N rows. A table with delete files (row-level deletes or
//! deletion vectors from Spark, Flink or Trino) is refused: showing rows without applying
//! them would show rows that are deleted.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use bytes::Bytes;
use iceberg_spec::DataContentType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::json;

use super::inspect::live_files;
use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::describe;
use crate::error::{Error, Result};

/// Runs `iceberg head`.
///
/// # Errors
/// A missing table, a table with delete files, or an unreadable data file.
pub(crate) async fn head(cli: &Cli, table: &str, rows: usize) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = first_rows(&open, table, rows).await;
    open.close().await;
    let batches = result?
        .iter()
        .map(displayable)
        .collect::<Result<Vec<_>>>()?;
    if cli.json {
        let mut writer = arrow_json::ArrayWriter::new(Vec::new());
        for b in &batches {
            writer.write(b)?;
        }
        writer.finish()?;
        let text = writer.into_inner();
        let rows: serde_json::Value = if text.is_empty() {
            json!([])
        } else {
            serde_json::from_slice(&text)?
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "table": table, "rows": rows }))?
        );
        return Ok(());
    }
    for line in render(&batches)? {
        outln!("{line}");
    }
    Ok(())
}

async fn first_rows(open: &OpenCatalog, table: &str, limit: usize) -> Result<Vec<RecordBatch>> {
    let (_, t) = open.load(table).await?;
    let io = open.catalog.table_io(&t);
    let files = live_files(&io, &t.metadata).await?;
    if let Some(f) = files.iter().find(|f| f.content != DataContentType::Data) {
        return Err(Error::Table(format!(
            "table `{table}` has delete files ({} among them), which `head` cannot apply: \
             it would show deleted rows; read it with Spark, PyIceberg or DuckDB",
            f.file_path
        )));
    }
    let mut out = Vec::new();
    let mut got = 0usize;
    for f in files.iter().filter(|f| f.record_count > 0) {
        if got >= limit {
            break;
        }
        let bytes: Bytes = io.read(&f.file_path).await?;
        let unreadable = |e: parquet::errors::ParquetError| {
            Error::input(&f.file_path, format!("cannot read Parquet: {e}"))
        };
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .map_err(unreadable)?
            .with_limit(limit - got)
            .with_batch_size((limit - got).clamp(1, 8192))
            .build()
            .map_err(unreadable)?;
        for batch in reader {
            let batch =
                batch.map_err(|e| Error::input(&f.file_path, format!("cannot read: {e}")))?;
            got += batch.num_rows();
            out.push(batch);
        }
    }
    Ok(out)
}

/// `batch` with zoned timestamps at offset `+00:00`: the same instants, and a zone arrow
/// formats without a time zone database (Iceberg's files say `UTC`).
fn displayable(batch: &RecordBatch) -> Result<RecordBatch> {
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        if let DataType::Timestamp(unit, Some(_)) = f.data_type() {
            let to = DataType::Timestamp(*unit, Some("+00:00".into()));
            columns.push(arrow_cast::cast(c, &to)?);
            fields.push(f.as_ref().clone().with_data_type(to));
        } else {
            columns.push(c.clone());
            fields.push(f.as_ref().clone());
        }
    }
    Ok(RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )?)
}

/// The rows as an aligned text table, a header line first.
fn render(batches: &[RecordBatch]) -> Result<Vec<String>> {
    let Some(first) = batches.first() else {
        return Ok(vec!["(no rows)".into()]);
    };
    let names: Vec<String> = first
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut cells: Vec<Vec<String>> = vec![names];
    let options = FormatOptions::default().with_null("null");
    for b in batches {
        let formatters = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for row in 0..b.num_rows() {
            cells.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    let columns = cells[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            cells
                .iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    Ok(cells
        .iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(v, w)| format!("{v:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        })
        .collect())
}

/// Runs `iceberg schema`.
///
/// # Errors
/// A missing table.
pub(crate) async fn schema(cli: &Cli, table: &str) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = open.load(table).await;
    open.close().await;
    let (ident, t) = result?;
    let schema = t.metadata.current_schema()?;
    if cli.json {
        outln!("{}", serde_json::to_string_pretty(&schema.to_json())?);
        return Ok(());
    }
    outln!("table {ident}, schema id {}:", schema.schema_id());
    for line in describe::schema_lines(schema) {
        outln!("  {line}");
    }
    Ok(())
}
