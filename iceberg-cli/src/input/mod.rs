//! Input files: expanding globs and folders, telling formats and compressions apart, and
//! reading each one as a stream of Arrow batches (never the whole file in memory).
//!
//! - [`parquet`]: Parquet through the parquet crate's Arrow reader, one batch at a time.
//! - [`csv`]: CSV with a header, read as text (quoting kept) and converted column by column
//!   to the table's types, so a bad value is reported with its column, line and text.
//! - [`json`]: newline-delimited JSON decoded into the table's types.
//! - [`ipc`]: Arrow IPC files (`.arrow`, `.feather`) and streams (`.arrows`), with LZ4 or
//!   zstd buffers.
//! - [`text`]: what a text value means (inference and exact conversion), for CSV and JSON.
//! - [`source`]: the bytes of an input: a file, gzip or zstd, or standard input.

pub(crate) mod csv;
pub(crate) mod ipc;
pub(crate) mod json;
pub(crate) mod parquet;
pub(crate) mod source;
pub(crate) mod text;

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{Time64NanosecondType, TimestampNanosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit};
use iceberg_spec::Schema;

pub(crate) use self::source::{Input, expand};
use crate::cli::InputFormat;
use crate::error::{Error, Result};

/// A stream of batches of one file; errors are messages without the file name.
pub(crate) type Batches = Box<dyn Iterator<Item = Result<RecordBatch, String>> + Send>;

/// How to read inputs.
#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    /// Rows per batch.
    pub(crate) batch_size: usize,
    /// CSV delimiter as given (`.tsv` files default to tab, see [`delimiter_for`]).
    pub(crate) delimiter: String,
    /// Unquoted CSV values that mean null.
    pub(crate) nulls: Vec<String>,
    /// What a value the column cannot hold exactly becomes.
    pub(crate) rules: text::Rules,
}

impl ReadOptions {
    fn csv(&self, input: &Input) -> Result<csv::CsvOptions> {
        Ok(csv::CsvOptions {
            delimiter: delimiter_for(&input.path, &self.delimiter)?,
            nulls: self.nulls.clone(),
            batch_size: self.batch_size,
        })
    }
}

/// What a batch reader needs to know about the table it feeds.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The table's schema.
    pub(crate) schema: Schema,
    /// Its Arrow form (`iceberg_write::arrow_schema`).
    pub(crate) arrow: SchemaRef,
}

/// The Arrow schema of a data file; for CSV and JSON inferred from the first `rows` records
/// (all when `None`).
///
/// # Errors
/// When the file cannot be read or parsed, naming it.
pub(crate) fn file_schema(
    input: &Input,
    options: &ReadOptions,
    rows: Option<usize>,
) -> Result<ArrowSchema> {
    let quiet = || Arc::new(AtomicU64::new(0));
    let r = match input.format {
        InputFormat::Parquet => parquet::schema(&input.path),
        InputFormat::Csv => {
            let csv = options.csv(input)?;
            source::bytes(input, quiet()).and_then(|src| csv::infer_schema(src, &csv, rows))
        }
        InputFormat::Json => source::bytes(input, quiet())
            .and_then(|src| json::infer_schema(src, || source::bytes(input, quiet()), rows)),
        InputFormat::Ipc => ipc::schema(&input.path),
    };
    r.map_err(|e| Error::input(input.name(), e))
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
    let rules = options.rules;
    let checked = |batches: Batches| -> Batches {
        let (target, mut before) = (target.clone(), 0usize);
        Box::new(batches.map(move |b| {
            let b = check_precision(b?, &target, rules, before)?;
            before += b.num_rows();
            Ok(b)
        }))
    };
    match input.format {
        InputFormat::Parquet => {
            parquet::open(&input.path, options.batch_size, progress).map(checked)
        }
        InputFormat::Csv => {
            let csv = options.csv(input).map_err(|e| e.to_string())?;
            csv::open(source::bytes(input, progress)?, target, &csv, rules)
        }
        InputFormat::Json => json::open(
            source::bytes(input, progress)?,
            target,
            options.batch_size,
            rules,
        ),
        InputFormat::Ipc => ipc::open(&input.path, progress).map(checked),
    }
}

/// `batch` unchanged, unless a nanosecond column of it (at any depth) holds sub-microsecond
/// digits that the table's microsecond column would drop (refused unless rounding is
/// allowed: the writer floors them).
fn check_precision(
    batch: RecordBatch,
    target: &Target,
    rules: text::Rules,
    rows_before: usize,
) -> Result<RecordBatch, String> {
    if rules.allow_rounding {
        return Ok(batch);
    }
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let Ok(to) = target.arrow.field_with_name(field.name()) else {
            continue;
        };
        if let Some(found) = sub_microsecond(column.as_ref(), to.data_type(), field.name()) {
            let at = match found.row {
                Some(row) => format!("column `{}` (row {})", found.column, rows_before + row + 1),
                None => format!("column `{}`", found.column),
            };
            return Err(format!(
                "{at}: value {} has nanoseconds, and the table's column keeps microseconds \
                 (a format v3 table keeps nanoseconds); pass --allow-rounding to floor them",
                found.value
            ));
        }
    }
    Ok(batch)
}

/// A value with digits past the microsecond: its column's full name, its row when the
/// column is top-level, the value.
struct SubMicrosecond {
    column: String,
    row: Option<usize>,
    value: i64,
}

/// The first value of `column`, or of a column nested in it, whose nanoseconds the table's
/// microsecond type `to` would drop.
fn sub_microsecond(column: &dyn Array, to: &DataType, name: &str) -> Option<SubMicrosecond> {
    let lossy = |values: &[i64], valid: &dyn Fn(usize) -> bool| {
        (0..values.len())
            .find(|&i| valid(i) && values[i] % 1000 != 0)
            .map(|i| SubMicrosecond {
                column: name.to_string(),
                row: Some(i),
                value: values[i],
            })
    };
    let nested = |child: &dyn Array, to: &DataType, child_name: &str| {
        sub_microsecond(child, to, &format!("{name}.{child_name}"))
            .map(|f| SubMicrosecond { row: None, ..f })
    };
    match (column.data_type(), to) {
        (
            DataType::Timestamp(TimeUnit::Nanosecond, _),
            DataType::Timestamp(TimeUnit::Microsecond, _),
        ) => {
            let a = column.as_primitive::<TimestampNanosecondType>();
            lossy(a.values(), &|i| a.is_valid(i))
        }
        (DataType::Time64(TimeUnit::Nanosecond), DataType::Time64(TimeUnit::Microsecond)) => {
            let a = column.as_primitive::<Time64NanosecondType>();
            lossy(a.values(), &|i| a.is_valid(i))
        }
        (DataType::Struct(fields), DataType::Struct(targets)) => {
            let s = column.as_struct();
            fields.iter().zip(s.columns()).find_map(|(f, child)| {
                let t = targets.iter().find(|t| t.name() == f.name())?;
                nested(child.as_ref(), t.data_type(), f.name())
            })
        }
        (DataType::List(_), DataType::List(t)) => nested(
            column.as_list::<i32>().values().as_ref(),
            t.data_type(),
            "element",
        ),
        (DataType::LargeList(_), DataType::List(t)) => nested(
            column.as_list::<i64>().values().as_ref(),
            t.data_type(),
            "element",
        ),
        (DataType::FixedSizeList(..), DataType::List(t)) => nested(
            column.as_fixed_size_list().values().as_ref(),
            t.data_type(),
            "element",
        ),
        (DataType::Map(..), DataType::Map(t, _)) => {
            let entries = column.as_map().entries();
            let DataType::Struct(targets) = t.data_type() else {
                return None;
            };
            ["key", "value"].iter().enumerate().find_map(|(i, part)| {
                let t = targets.get(i)?;
                nested(entries.column(i).as_ref(), t.data_type(), part)
            })
        }
        _ => None,
    }
}

/// The CSV delimiter of a file: `--delimiter`, except that `.tsv` files default to tab.
///
/// # Errors
/// A delimiter that is not one byte ([`Error::Usage`]).
pub(crate) fn delimiter_for(path: &Path, given: &str) -> Result<u8> {
    let is_tsv = source::stem_extension(path).is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
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
