//! Newline-delimited JSON inputs, decoded into the table's Arrow types (fields nullable, so
//! a missing required value is reported by the writer against its column); a key the table
//! does not have is refused.
//!
//! Integer, date, timestamp and decimal columns, at any depth (struct fields, list elements,
//! map keys and values), are decoded as text first and converted by [`super::text`], as CSV
//! fields are, so a fraction in an integer, an offset, a sub-microsecond digit or a digit past
//! a decimal's scale is kept or refused by one rule for both formats. Inference likewise
//! turns a column of JSON strings that are all dates or timestamps into that type.

use std::io::BufRead;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, FieldRef, Schema as ArrowSchema};

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

/// Whether a column of this type is read as text and converted. Integers too: arrow-json
/// would take `1.5` for an int column as a float cast to 1.
fn via_text(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Timestamp(..)
            | DataType::Time64(_)
            | DataType::FixedSizeBinary(16)
            | DataType::Date32
            | DataType::Decimal128(..)
            | DataType::Int32
            | DataType::Int64
    )
}

/// `dt` as arrow-json reads it: every column [`via_text`] says, at any depth, as text.
fn as_read(dt: &DataType) -> DataType {
    let field = |f: &FieldRef| -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(as_read(f.data_type())))
    };
    match dt {
        d if via_text(d) => DataType::Utf8,
        DataType::Struct(children) => DataType::Struct(children.iter().map(field).collect()),
        DataType::List(element) => DataType::List(field(element)),
        DataType::Map(entries, sorted) => DataType::Map(field(entries), *sorted),
        other => other.clone(),
    }
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
            .map(|f| f.as_ref().clone().with_data_type(as_read(f.data_type())))
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
    let columns = typed
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, column)| {
            let at = Place {
                name: field.name().clone(),
                lists: Vec::new(),
                rows_before,
            };
            convert_array(column, field.data_type(), &at, target, rules)
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(typed.clone(), columns)
        .map_err(|e| format!("cannot assemble a batch: {e}"))
}

/// Where a column being converted sits: its full name, the offsets of the lists and maps
/// above it (innermost last), and the records of earlier batches.
struct Place {
    name: String,
    lists: Vec<OffsetBuffer<i32>>,
    rows_before: usize,
}

impl Place {
    /// The child column `child` of this one, inside one more list or map when `offsets`.
    fn child(&self, child: &str, offsets: Option<&OffsetBuffer<i32>>) -> Place {
        let mut lists = self.lists.clone();
        lists.extend(offsets.cloned());
        Place {
            name: format!("{}.{child}", self.name),
            lists,
            rows_before: self.rows_before,
        }
    }

    /// The input record (1-based) that value `index` of this column belongs to.
    fn record(&self, index: usize) -> usize {
        let row = self.lists.iter().rev().fold(index, |i, offsets| {
            offsets
                .partition_point(|o| usize::try_from(*o).unwrap_or(0) <= i)
                .saturating_sub(1)
        });
        self.rows_before + row + 1
    }
}

/// `read` (decoded in the type [`as_read`] gives) in the table's type `to`: text converted by
/// [`super::text`]'s rules at every depth, the rest as decoded.
fn convert_array(
    read: &ArrayRef,
    to: &DataType,
    at: &Place,
    target: &Target,
    rules: Rules,
) -> Result<ArrayRef, String> {
    if read.data_type() == to {
        return Ok(read.clone());
    }
    let assemble = |e: arrow_schema::ArrowError| format!("column `{}`: {e}", at.name);
    match to {
        DataType::Struct(fields) => {
            let s = read.as_struct();
            let children = fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| {
                    convert_array(c, f.data_type(), &at.child(f.name(), None), target, rules)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let out = StructArray::try_new(fields.clone(), children, s.nulls().cloned())
                .map_err(assemble)?;
            Ok(Arc::new(out))
        }
        DataType::List(element) => {
            let l = read.as_list::<i32>();
            let inner = at.child(element.name(), Some(l.offsets()));
            let values = convert_array(l.values(), element.data_type(), &inner, target, rules)?;
            let out = ListArray::try_new(
                element.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )
            .map_err(assemble)?;
            Ok(Arc::new(out))
        }
        DataType::Map(entries, sorted) => {
            let m = read.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(format!("column `{}`: a map without entries", at.name));
            };
            let convert_entry = |i: usize, field: &FieldRef| {
                let inner = at.child(field.name(), Some(m.offsets()));
                convert_array(
                    m.entries().column(i),
                    field.data_type(),
                    &inner,
                    target,
                    rules,
                )
            };
            let keys = convert_entry(0, &kv[0])?;
            let values = convert_entry(1, &kv[1])?;
            let entries_array =
                StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(assemble)?;
            let out = MapArray::try_new(
                entries.clone(),
                m.offsets().clone(),
                entries_array,
                m.nulls().cloned(),
                *sorted,
            )
            .map_err(assemble)?;
            Ok(Arc::new(out))
        }
        _ => {
            let name = &at.name;
            let text = read
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| format!("column `{name}`: not read as text"))?;
            let expected = target
                .schema
                .field_by_name(name)
                .map_or_else(|| to.to_string(), |f| f.field_type.to_string());
            let integral;
            let text = if matches!(to, DataType::Int32 | DataType::Int64) {
                integral = integral_text(text);
                integral.as_ref().unwrap_or(text)
            } else {
                text
            };
            text::convert(text, to, &expected, rules)
                .map_err(|(i, e)| format!("column `{name}` (record {}): {e}", at.record(i)))
        }
    }
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
        // Exponent forms, exactly (through f64, `2.0000000000000001` would pass as 2): an
        // integer when its digits past the point are zeros; the range is checked later.
        let (unscaled, scale) = iceberg_spec::datum::parse_big_decimal(v)?;
        let whole = if unscaled == 0 {
            0
        } else if scale <= 0 {
            let up = 10i128.checked_pow(u32::try_from(-scale).ok()?)?;
            unscaled.checked_mul(up)?
        } else {
            let div = 10i128.checked_pow(u32::try_from(scale).ok()?)?;
            if unscaled % div != 0 {
                return None;
            }
            unscaled / div
        };
        Some(whole.to_string())
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
            // Exactly, never through f64.
            Some("2.0000000000000001e0"),
            Some("9007199254740993e0"),
            Some("1e-400"),
            Some("12.5e1"),
            Some("0e999999"),
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
                Some("1e400"),
                Some("2.0000000000000001e0"),
                Some("9007199254740993"),
                Some("1e-400"),
                Some("125"),
                Some("0"),
            ]
        );
        assert!(integral_text(&StringArray::from(vec!["1", "-2"])).is_none());
    }
}
