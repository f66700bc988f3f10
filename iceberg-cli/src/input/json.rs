//! Newline-delimited JSON inputs, decoded into the table's Arrow types (fields nullable, so
//! a missing required value is reported by the writer against its column); a key the table
//! does not have is refused.
//!
//! Top-level integer, date, timestamp and decimal columns are decoded as text first and
//! converted by [`super::text`], as CSV fields are, so a fraction in an integer, an offset, a
//! sub-microsecond digit or a digit past a decimal's scale is kept or refused by one rule for
//! both formats. Inference likewise
//! turns a column of JSON strings that are all dates or timestamps into that type.

use std::io::BufRead;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use super::text::{self, Kind, Rules};
use super::{Batches, Target, all_nullable};

/// The schema inferred from the first `rows` records (all when `None`): JSON's own types,
/// with string columns whose every value is a date or timestamp typed as one. `reopen`
/// gives the input again for the second look at the strings.
pub(crate) fn infer_schema<R: BufRead>(
    src: R,
    reopen: impl FnOnce() -> Result<R, String>,
    rows: Option<usize>,
) -> Result<ArrowSchema, String> {
    let (schema, _) = arrow_json::reader::infer_json_schema(src, rows)
        .map_err(|e| format!("not newline-delimited JSON: {e}"))?;
    let strings: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| schema.field(i).data_type() == &DataType::Utf8)
        .collect();
    if strings.is_empty() {
        return Ok(schema);
    }
    let reader = ReaderBuilder::new(Arc::new(schema.clone()))
        .with_batch_size(8192)
        .build(reopen()?)
        .map_err(|e| format!("cannot read JSON: {e}"))?;
    let mut kinds = vec![Kind::Nothing; strings.len()];
    let mut seen = 0usize;
    for batch in reader {
        if rows.is_some_and(|r| seen >= r) {
            break;
        }
        let batch = batch.map_err(|e| format!("cannot read JSON: {e}"))?;
        let take = rows.map_or(batch.num_rows(), |r| (r - seen).min(batch.num_rows()));
        for (kind, &i) in kinds.iter_mut().zip(&strings) {
            if let Some(text) = batch.column(i).as_any().downcast_ref::<StringArray>() {
                for v in text.iter().take(take).flatten() {
                    *kind = kind.merge(Kind::of(v, true));
                }
            }
        }
        seen += take;
    }
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for (kind, &i) in kinds.iter().zip(&strings) {
        fields[i] = fields[i].clone().with_data_type(kind.data_type());
    }
    Ok(ArrowSchema::new(fields))
}

/// Whether a top-level column of this type is read as text and converted. Integers too:
/// arrow-json would take `1.5` for an int column as a float cast to 1.
fn via_text(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Timestamp(..)
            | DataType::Date32
            | DataType::Decimal128(..)
            | DataType::Int32
            | DataType::Int64
    )
}

/// The batches of `src` in the table's types.
pub(crate) fn open(
    src: impl BufRead + Send + 'static,
    target: &Target,
    batch_size: usize,
    rules: Rules,
) -> Result<Batches, String> {
    let typed = all_nullable(&target.arrow);
    let as_read = Arc::new(ArrowSchema::new(
        typed
            .fields()
            .iter()
            .map(|f| {
                let f = f.as_ref().clone();
                if via_text(f.data_type()) {
                    f.with_data_type(DataType::Utf8)
                } else {
                    f
                }
            })
            .collect::<Vec<_>>(),
    ));
    let reader = ReaderBuilder::new(as_read)
        .with_batch_size(batch_size)
        .with_strict_mode(true)
        .with_coerce_primitive(true)
        .build(src)
        .map_err(|e| format!("cannot read JSON: {e}"))?;
    let (target, mut rows_before) = (target.clone(), 0usize);
    Ok(Box::new(reader.map(move |b| {
        let batch = b.map_err(|e| {
            let text = e.to_string();
            if text.contains("missing from schema") {
                format!("{text} (the table has no such column)")
            } else {
                format!("cannot read JSON: {text}")
            }
        })?;
        let out = convert(&batch, &typed, &target, rows_before, rules);
        rows_before += batch.num_rows();
        out
    })))
}

fn convert(
    batch: &RecordBatch,
    typed: &Arc<ArrowSchema>,
    target: &Target,
    rows_before: usize,
    rules: Rules,
) -> Result<RecordBatch, String> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (field, column) in typed.fields().iter().zip(batch.columns()) {
        if !via_text(field.data_type()) {
            columns.push(column.clone());
            continue;
        }
        let name = field.name();
        let expected = target.schema.field_by_name(name).map_or_else(
            || field.data_type().to_string(),
            |f| f.field_type.to_string(),
        );
        let text = column
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| format!("column `{name}`: not read as text"))?;
        let integral;
        let text = if matches!(field.data_type(), DataType::Int32 | DataType::Int64) {
            integral = integral_text(text);
            integral.as_ref().unwrap_or(text)
        } else {
            text
        };
        columns.push(
            text::convert(text, field.data_type(), &expected, rules).map_err(|(i, e)| {
                format!("column `{name}` (record {}): {e}", rows_before + i + 1)
            })?,
        );
    }
    RecordBatch::try_new(typed.clone(), columns)
        .map_err(|e| format!("cannot assemble a batch: {e}"))
}

/// The JSON numbers of an integer column with each integral float (`1.0`, `2e3`, as pandas
/// and Python's `json.dumps` write integer columns holding NaN) as its integer text; `None`
/// when every value already is one. A real fraction (`1.5`) is left for the strict
/// conversion to refuse.
fn integral_text(text: &StringArray) -> Option<StringArray> {
    let rewrite = |v: &str| -> Option<String> {
        if v.parse::<i64>().is_ok() {
            return None;
        }
        if let Some((whole, fraction)) = v.split_once('.')
            && !fraction.is_empty()
            && fraction.bytes().all(|b| b == b'0')
            && whole.parse::<i128>().is_ok()
        {
            return Some(whole.to_string());
        }
        // Exponent forms, exact only within f64's integers.
        let f: f64 = v.parse().ok()?;
        (f.is_finite() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0)
            .then(|| format!("{}", f as i64))
    };
    if text.iter().flatten().all(|v| rewrite(v).is_none()) {
        return None;
    }
    Some(
        text.iter()
            .map(|v| v.map(|v| rewrite(v).unwrap_or_else(|| v.to_string())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Integral floats become integers; fractions, non-numbers and integers stay as given.
    #[test]
    fn integral_floats_are_integers_and_fractions_stay() {
        let text = StringArray::from(vec![
            Some("1.0"),
            Some("-0.0"),
            Some("2e3"),
            Some("1.5"),
            None,
            Some("7"),
            Some("true"),
            Some("1e400"),
        ]);
        let out = integral_text(&text).unwrap();
        let got: Vec<Option<&str>> = out.iter().collect();
        assert_eq!(
            got,
            vec![
                Some("1"),
                Some("-0"),
                Some("2000"),
                Some("1.5"),
                None,
                Some("7"),
                Some("true"),
                Some("1e400")
            ]
        );
        assert!(integral_text(&StringArray::from(vec!["1", "-2"])).is_none());
    }
}
