//! Input files: expanding globs, telling formats apart, and reading each one as a stream of
//! Arrow batches (never the whole file in memory).
//!
//! - [`parquet`]: Parquet through the parquet crate's Arrow reader, one batch at a time.
//! - [`csv`]: CSV with a header, read as text and cast column by column to the table's
//!   types, so a bad value is reported with its column, line and text.
//! - [`json`]: newline-delimited JSON decoded straight into the table's types.
//! - [`ipc`]: Arrow IPC files (`.arrow`, `.feather`) and streams (`.arrows`).

pub(crate) mod csv;
pub(crate) mod ipc;
pub(crate) mod json;
pub(crate) mod parquet;

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef};
use iceberg_spec::Schema;

use crate::cli::InputFormat;
use crate::error::{Error, Result};

/// A stream of batches of one file; errors are messages without the file name.
pub(crate) type Batches = Box<dyn Iterator<Item = Result<RecordBatch, String>> + Send>;

/// Rows read at a time when a file's schema is inferred from its first records.
pub(crate) const INFER_SCHEMA_RECORDS: usize = 1000;

/// One input file.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// Its path.
    pub(crate) path: PathBuf,
    /// Its format.
    pub(crate) format: InputFormat,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// How to read inputs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadOptions {
    /// Rows per batch.
    pub(crate) batch_size: usize,
    /// CSV delimiter.
    pub(crate) delimiter: u8,
}

/// What a batch reader needs to know about the table it feeds.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The table's schema.
    pub(crate) schema: Schema,
    /// Its Arrow form (`iceberg_write::arrow_schema`).
    pub(crate) arrow: SchemaRef,
}

/// The format `path` has by its extension.
pub(crate) fn format_of(path: &Path) -> Option<InputFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "parquet" | "pq" | "parq" => InputFormat::Parquet,
        "csv" | "tsv" | "txt" => InputFormat::Csv,
        "json" | "ndjson" | "jsonl" => InputFormat::Json,
        "arrow" | "arrows" | "ipc" | "feather" => InputFormat::Ipc,
        _ => return None,
    })
}

/// The files `patterns` name, in order (each glob's matches sorted).
///
/// # Errors
/// A bad pattern, a pattern or path that names no file, or a file of unknown format.
pub(crate) fn expand(patterns: &[String], forced: Option<InputFormat>) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for pattern in patterns {
        let paths: Vec<PathBuf> = if pattern.contains(['*', '?', '[']) {
            let mut found: Vec<PathBuf> = glob::glob(pattern)
                .map_err(|e| Error::Usage(format!("bad glob `{pattern}`: {e}")))?
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(Error::input(pattern, "matches no file"));
            }
            found
        } else {
            vec![PathBuf::from(pattern)]
        };
        for path in paths {
            let meta = std::fs::metadata(&path)
                .map_err(|e| Error::input(path.display(), format!("cannot read: {e}")))?;
            let format = forced.or_else(|| format_of(&path)).ok_or_else(|| {
                Error::input(
                    path.display(),
                    "unknown format (use .parquet, .csv, .tsv, .json/.ndjson/.jsonl, \
                     .arrow/.arrows/.feather, or pass --format)",
                )
            })?;
            out.push(Input {
                path,
                format,
                size: meta.len(),
            });
        }
    }
    Ok(out)
}

/// The Arrow schema of a data file (inferred from the first records for CSV and JSON).
///
/// # Errors
/// When the file cannot be read or parsed, naming it.
pub(crate) fn file_schema(input: &Input, options: &ReadOptions) -> Result<ArrowSchema> {
    let r = match input.format {
        InputFormat::Parquet => parquet::schema(&input.path),
        InputFormat::Csv => csv::infer_schema(&input.path, options.delimiter),
        InputFormat::Json => json::infer_schema(&input.path),
        InputFormat::Ipc => ipc::schema(&input.path),
    };
    r.map_err(|e| Error::input(input.path.display(), e))
}

/// Opens `input` as a stream of batches; `progress` counts the bytes consumed.
///
/// # Errors
/// When the file cannot be opened or its header parsed (the message names no file).
pub(crate) fn open(
    input: &Input,
    target: &Target,
    options: &ReadOptions,
    progress: Arc<AtomicU64>,
) -> Result<Batches, String> {
    match input.format {
        InputFormat::Parquet => parquet::open(&input.path, options, progress),
        InputFormat::Csv => csv::open(&input.path, target, options, progress),
        InputFormat::Json => json::open(&input.path, target, options, progress),
        InputFormat::Ipc => ipc::open(&input.path, progress),
    }
}

/// The CSV delimiter of a file: `--delimiter`, except that `.tsv` files default to tab.
///
/// # Errors
/// A delimiter that is not one byte ([`Error::Usage`]).
pub(crate) fn delimiter_for(path: &Path, given: &str) -> Result<u8> {
    let is_tsv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
    match given {
        "," if is_tsv => Ok(b'\t'),
        "\\t" | "tab" | "\t" => Ok(b'\t'),
        s if s.len() == 1 => Ok(s.as_bytes()[0]),
        s => Err(Error::Usage(format!(
            "--delimiter `{s}` must be one byte (or `\\t`)"
        ))),
    }
}

/// `schema` with every field nullable (map keys excepted), so readers accept nulls and
/// the writer reports them against the required column by name.
pub(crate) fn all_nullable(schema: &ArrowSchema) -> SchemaRef {
    Arc::new(ArrowSchema::new(
        schema
            .fields()
            .iter()
            .map(|f| nullable_field(f))
            .collect::<Vec<_>>(),
    ))
}

fn nullable_field(f: &Field) -> Field {
    let dt = match f.data_type() {
        DataType::Struct(children) => DataType::Struct(Fields::from(
            children
                .iter()
                .map(|c| nullable_field(c))
                .collect::<Vec<_>>(),
        )),
        DataType::List(e) => DataType::List(Arc::new(nullable_field(e))),
        DataType::LargeList(e) => DataType::LargeList(Arc::new(nullable_field(e))),
        other => other.clone(),
    };
    f.clone().with_data_type(dt).with_nullable(true)
}

/// A reader that counts the bytes read through it (and passes seeks through).
#[derive(Debug)]
pub(crate) struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> Counting<R> {
    /// Wraps `inner`, adding to `count`.
    pub(crate) fn new(inner: R, count: Arc<AtomicU64>) -> Self {
        Self { inner, count }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}
