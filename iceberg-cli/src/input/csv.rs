//! CSV inputs with a header line, read with `csv-core` so that quoting is seen: a quoted
//! field is always text (`""` is the empty string, `"NA"` is `NA`), an unquoted field is
//! null when it is one of the null markers (by default only the empty field; `--null-value`
//! sets them). Every column is read as text and then converted to the table column of the
//! same name by [`super::text`], so a value that does not fit is reported with its column,
//! line, expected type and text. Columns the table does not have are passed on as text
//! (the writer refuses them by name).

use std::io::BufRead;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use super::text::{self, Kind, Rules};
use super::{Batches, Target};

/// How CSV text is split and what is null.
#[derive(Debug, Clone)]
pub(crate) struct CsvOptions {
    /// The field delimiter.
    pub(crate) delimiter: u8,
    /// Unquoted field values that mean null.
    pub(crate) nulls: Vec<String>,
    /// Rows per batch.
    pub(crate) batch_size: usize,
}

/// A record reader that keeps whether each field was quoted and where each record starts.
struct Records<R> {
    src: R,
    core: csv_core::Reader,
    /// The current record's field bytes, one after the other (`len` of them used).
    out: Vec<u8>,
    len: usize,
    /// Each field's end in `out` and whether it was quoted.
    ends: Vec<(usize, bool)>,
    /// Newlines consumed so far.
    newlines: u64,
    started: bool,
}

const QUOTE: u8 = b'"';

impl<R: BufRead> Records<R> {
    fn new(src: R, delimiter: u8) -> Self {
        Self {
            src,
            core: csv_core::ReaderBuilder::new()
                .delimiter(delimiter)
                .quote(QUOTE)
                .build(),
            out: vec![0; 4096],
            len: 0,
            ends: Vec::new(),
            newlines: 0,
            started: false,
        }
    }

    /// Reads the next record; `Some(line it starts on)`, `None` at the end.
    fn next(&mut self) -> Result<Option<u64>, String> {
        if !self.started {
            self.started = true;
            let head = self.src.fill_buf().map_err(read_error)?;
            if head.starts_with(b"\xEF\xBB\xBF") {
                self.src.consume(3); // a UTF-8 byte order mark, not part of the first name
            }
        }
        self.len = 0;
        self.ends.clear();
        let (mut at_field_start, mut quoted, mut line) = (true, false, None);
        loop {
            if self.out.len() - self.len < 256 {
                self.out.resize(self.out.len() * 2, 0);
            }
            let input = self.src.fill_buf().map_err(read_error)?;
            let (result, nin, nout) = self.core.read_field(input, &mut self.out[self.len..]);
            let consumed = &input[..nin];
            if at_field_start {
                // Line terminators before a record's first byte belong to the one before.
                if let Some(j) = consumed.iter().position(|b| !matches!(b, b'\r' | b'\n')) {
                    at_field_start = false;
                    quoted = consumed[j] == QUOTE;
                    if line.is_none() {
                        line = Some(self.newlines + count_newlines(&consumed[..j]) + 1);
                    }
                }
            }
            self.newlines += count_newlines(consumed);
            self.len += nout;
            self.src.consume(nin);
            match result {
                csv_core::ReadFieldResult::InputEmpty | csv_core::ReadFieldResult::OutputFull => {}
                csv_core::ReadFieldResult::Field { record_end } => {
                    self.ends.push((self.len, quoted));
                    (at_field_start, quoted) = (true, false);
                    if record_end {
                        return Ok(Some(line.unwrap_or(self.newlines + 1)));
                    }
                }
                csv_core::ReadFieldResult::End => return Ok(None),
            }
        }
    }

    /// As [`Records::next`], refusing a record that has not `n` fields.
    fn next_of(&mut self, n: usize) -> Result<Option<u64>, String> {
        let line = self.next()?;
        match line {
            Some(line) if self.ends.len() != n => Err(format!(
                "line {line} has {} fields, the header has {n}",
                self.ends.len()
            )),
            other => Ok(other),
        }
    }

    /// The current record's fields as text, and whether each was quoted; `None` when the
    /// record is not UTF-8 (checked once for the whole record).
    fn text_fields(&self) -> Option<impl Iterator<Item = (Option<&str>, bool)>> {
        let text = std::str::from_utf8(&self.out[..self.len]).ok()?;
        let mut start = 0;
        Some(self.ends.iter().map(move |&(end, quoted)| {
            // A field boundary inside a character: the field alone is not UTF-8.
            let field = text.get(start..end);
            start = end;
            (field, quoted)
        }))
    }

    /// The current record's fields: bytes and whether quoted.
    fn fields(&self) -> impl Iterator<Item = (&[u8], bool)> {
        let mut start = 0;
        self.ends.iter().map(move |&(end, quoted)| {
            let field = &self.out[start..end];
            start = end;
            (field, quoted)
        })
    }
}

fn read_error(e: std::io::Error) -> String {
    format!("cannot read: {e}")
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Batches of text (every column a nullable string) and the line each row starts on.
struct TextBatches<R> {
    records: Records<R>,
    names: Vec<String>,
    schema: Arc<ArrowSchema>,
    options: CsvOptions,
    done: bool,
}

impl<R: BufRead> TextBatches<R> {
    fn new(src: R, options: CsvOptions) -> Result<Self, String> {
        let mut records = Records::new(src, options.delimiter);
        if records.next()?.is_none() {
            return Err("no header line (an empty file)".into());
        }
        let mut names: Vec<String> = Vec::new();
        for (i, (bytes, _)) in records.fields().enumerate() {
            let name = std::str::from_utf8(bytes)
                .map_err(|_| format!("header field {} is not UTF-8", i + 1))?;
            if name.is_empty() {
                return Err(format!(
                    "header field {} is empty: every column needs a name",
                    i + 1
                ));
            }
            if names.iter().any(|n| n == name) {
                return Err(format!("the header names column `{name}` twice"));
            }
            names.push(name.to_string());
        }
        let schema = Arc::new(ArrowSchema::new(
            names
                .iter()
                .map(|n| Field::new(n, DataType::Utf8, true))
                .collect::<Vec<_>>(),
        ));
        Ok(Self {
            records,
            names,
            schema,
            options,
            done: false,
        })
    }

    fn next_batch(&mut self) -> Result<Option<(RecordBatch, Vec<u64>)>, String> {
        if self.done {
            return Ok(None);
        }
        let n = self.names.len();
        let mut columns: Vec<StringBuilder> = (0..n).map(|_| StringBuilder::new()).collect();
        let mut lines = Vec::new();
        while lines.len() < self.options.batch_size {
            let Some(line) = self.records.next_of(n)? else {
                self.done = true;
                break;
            };
            let not_utf8 = || format!("line {line}: not UTF-8 text");
            let fields = self.records.text_fields().ok_or_else(not_utf8)?;
            for ((text, quoted), column) in fields.zip(columns.iter_mut()) {
                let text = text.ok_or_else(not_utf8)?;
                if !quoted && self.options.nulls.iter().any(|m| m == text) {
                    column.append_null();
                } else {
                    column.append_value(text);
                }
            }
            lines.push(line);
        }
        if lines.is_empty() {
            return Ok(None);
        }
        let columns: Vec<ArrayRef> = columns
            .iter_mut()
            .map(|c| Arc::new(c.finish()) as ArrayRef)
            .collect();
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| format!("cannot assemble a batch: {e}"))?;
        Ok(Some((batch, lines)))
    }
}

/// The schema inferred from the header and the first `rows` records (all when `None`),
/// by the rules of [`super::text`].
pub(crate) fn infer_schema(
    src: impl BufRead,
    options: &CsvOptions,
    rows: Option<usize>,
) -> Result<ArrowSchema, String> {
    let mut batches = TextBatches::new(src, options.clone())?;
    let n = batches.names.len();
    let mut kinds = vec![Kind::Nothing; n];
    let mut seen = 0usize;
    // Straight from the records, no batches: a column found to be text is not looked at again.
    while rows.is_none_or(|r| seen < r) {
        let records = &mut batches.records;
        let Some(line) = records.next_of(n)? else {
            break;
        };
        let not_utf8 = || format!("line {line}: not UTF-8 text");
        for ((text, quoted), kind) in records.text_fields().ok_or_else(not_utf8)?.zip(&mut kinds) {
            let text = text.ok_or_else(not_utf8)?;
            if *kind == Kind::String || (!quoted && options.nulls.iter().any(|m| m == text)) {
                continue;
            }
            *kind = kind.merge(Kind::of(text, false));
        }
        seen += 1;
    }
    Ok(ArrowSchema::new(
        batches
            .names
            .iter()
            .zip(kinds)
            .map(|(name, kind)| Field::new(name, kind.data_type(), true))
            .collect::<Vec<_>>(),
    ))
}

/// The batches of `src`, converted to the table's types.
pub(crate) fn open(
    src: impl BufRead + Send + 'static,
    target: &Target,
    options: &CsvOptions,
    rules: Rules,
) -> Result<Batches, String> {
    let mut batches = TextBatches::new(src, options.clone())?;
    let target = target.clone();
    Ok(Box::new(std::iter::from_fn(move || {
        match batches.next_batch() {
            Ok(None) => None,
            Ok(Some((batch, lines))) => Some(typed(&batch, &lines, &target, rules)),
            Err(e) => Some(Err(e)),
        }
    })))
}

/// `batch` (all text) with each column converted to its table type.
fn typed(
    batch: &RecordBatch,
    lines: &[u64],
    target: &Target,
    rules: Rules,
) -> Result<RecordBatch, String> {
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
        if to.data_type().is_nested() {
            return Err(format!(
                "column `{name}`: expected {expected}, which CSV cannot hold (use JSON or Parquet)"
            ));
        }
        let text = column
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| format!("column `{name}`: not read as text"))?;
        let converted =
            text::convert(text, to.data_type(), &expected, rules).map_err(|(i, e)| {
                let line = lines.get(i).copied().unwrap_or_default();
                format!("column `{name}` (line {line}): {e}")
            })?;
        columns.push(converted);
        fields.push(
            Field::new(name, to.data_type().clone(), true).with_metadata(to.metadata().clone()),
        );
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)
        .map_err(|e| format!("cannot assemble a batch: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use arrow_array::Array;

    use super::*;

    fn options(nulls: &[&str]) -> CsvOptions {
        CsvOptions {
            delimiter: b',',
            nulls: nulls.iter().map(ToString::to_string).collect(),
            batch_size: 2,
        }
    }

    /// Rows as optional texts, each with its line.
    type Rows = Vec<(Vec<Option<String>>, u64)>;

    fn read(text: &[u8], nulls: &[&str]) -> Result<Rows, String> {
        let mut b = TextBatches::new(text, options(nulls))?;
        let mut rows = Vec::new();
        while let Some((batch, lines)) = b.next_batch()? {
            for (r, line) in lines.iter().enumerate() {
                let row = batch
                    .columns()
                    .iter()
                    .map(|c| {
                        let s = c.as_any().downcast_ref::<StringArray>().unwrap();
                        s.is_valid(r).then(|| s.value(r).to_string())
                    })
                    .collect();
                rows.push((row, *line));
            }
        }
        Ok(rows)
    }

    #[test]
    fn quoting_decides_what_is_null() {
        let rows = read(
            b"\xEF\xBB\xBFa,b\r\n\"\",\r\n NA,\"NA\"\r\nNA,x\r\n",
            &["", "NA"],
        )
        .unwrap();
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            rows[0],
            (vec![s(""), None], 2),
            "quoted empty is text, unquoted is null"
        );
        assert_eq!(
            rows[1],
            (vec![s(" NA"), s("NA")], 3),
            "quoted markers stay text"
        );
        assert_eq!(rows[2], (vec![None, s("x")], 4));
        let rows = read(b"a\n\n\"multi\nline\"\nlast", &[""]).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            vec![3, 5],
            "start lines"
        );
        assert_eq!(rows[0].0, vec![s("multi\nline")]);
    }

    #[test]
    fn bad_shapes_are_named() {
        let e = read(b"a,b\n1,2\n3\n", &[""]).unwrap_err();
        assert!(e.contains("line 3 has 1 fields, the header has 2"), "{e}");
        assert!(read(b"a,a\n", &[""]).unwrap_err().contains("`a` twice"));
        assert!(read(b"", &[""]).unwrap_err().contains("no header"));
        assert!(
            read(b"a,\n", &[""])
                .unwrap_err()
                .contains("header field 2 is empty")
        );
        let e = read(b"a\n\xff\n", &[""]).unwrap_err();
        assert!(e.contains("line 2") && e.contains("UTF-8"), "{e}");
        let e = read(b"a,b\n\xc3,\xa9\n", &[""]).unwrap_err();
        assert!(e.contains("line 2") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn inference_reads_every_row_unless_told() {
        let mut text = String::from("n,ts\n");
        for i in 0..5000 {
            text.push_str(&format!("{i},2024-01-01T00:00:00Z\n"));
        }
        text.push_str("1.5,\n");
        let all = infer_schema(text.as_bytes(), &options(&[""]), None).unwrap();
        assert_eq!(all.field(0).data_type(), &DataType::Float64);
        assert_eq!(
            all.field(1).data_type(),
            &Kind::Timestamptz(false).data_type()
        );
        let first = infer_schema(text.as_bytes(), &options(&[""]), Some(100)).unwrap();
        assert_eq!(first.field(0).data_type(), &DataType::Int64);
    }
}
