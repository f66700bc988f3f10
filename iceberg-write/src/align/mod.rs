//! Aligning a batch to the table schema: columns matched by name (falling back to the
//! `PARQUET:field_id` a batch field may carry), reordered, cast along Iceberg's promotions,
//! missing columns filled with their `write-default` or nulls, nulls in required columns
//! refused, and values their column's type cannot hold exactly (a decimal with more digits
//! than its precision, which Parquet's writer would cut to its low bytes; a nanosecond
//! timestamp or time with digits past the microsecond, unless [`Rules::floor_nanoseconds`])
//! refused.
//!
//! Nested columns are aligned child by child the same way. The result is a batch with
//! exactly the Arrow schema of [`crate::arrow_schema`], ready for the Parquet writer.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, ListArray, MapArray, PrimitiveArray, RecordBatch, RecordBatchOptions,
    StructArray, new_null_array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, FieldRef, Fields, SchemaRef, TimeUnit};
use iceberg_spec::types::{NestedField, PrimitiveType, Type};

use crate::defaults::default_array;
use crate::error::{Error, Result};
use crate::partition::with_parent_nulls;
use crate::to_arrow::{field_id_of, full_name};

/// What alignment may change of a value instead of refusing it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rules {
    /// Floor nanosecond timestamps and times with digits past the microsecond into
    /// microsecond columns (PyIceberg's `downcast-ns-timestamp-to-us-on-write`).
    pub(crate) floor_nanoseconds: bool,
}

/// `batch` at the table's schema: `target` must be `arrow_schema(schema)` of the same schema
/// as `fields` (the table's top-level fields).
///
/// # Errors
/// [`Error::MissingColumn`], [`Error::UnexpectedColumn`], [`Error::TypeMismatch`],
/// [`Error::NullInRequiredColumn`], [`Error::ValueOutOfRange`], naming the column.
pub(crate) fn align_batch(
    batch: &RecordBatch,
    fields: &[NestedField],
    target: &SchemaRef,
    rules: Rules,
) -> Result<RecordBatch> {
    let columns = align_struct(
        (batch.schema().fields(), batch.columns()),
        fields,
        target.fields(),
        "",
        None,
        batch.num_rows(),
        rules,
    )?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(target.clone(), columns, &options)
        .map_err(|e| Error::arrow("<batch>", e))
}

/// Aligns the children of one struct level. `parent_valid` is where the enclosing struct
/// (and its ancestors) are non-null; `None` means everywhere.
fn align_struct(
    (src_fields, src_cols): (&Fields, &[ArrayRef]),
    fields: &[NestedField],
    target: &Fields,
    prefix: &str,
    parent_valid: Option<&NullBuffer>,
    len: usize,
    rules: Rules,
) -> Result<Vec<ArrayRef>> {
    // Which source column feeds each Iceberg field: by name first, then by field id.
    let mut source_of: Vec<Option<usize>> = vec![None; fields.len()];
    for (si, sf) in src_fields.iter().enumerate() {
        let by_name = fields.iter().position(|f| f.name == *sf.name());
        // By name first: a batch of another table's schema (its own field ids, the same
        // names: `INSERT INTO a SELECT * FROM b`) matches by what it says.
        let id = field_id_of(sf);
        let pos = by_name.or_else(|| id.and_then(|id| fields.iter().position(|f| f.id == id)));
        match pos {
            Some(p) if source_of[p].is_none() => source_of[p] = Some(si),
            _ => {
                return Err(Error::UnexpectedColumn {
                    name: full_name(prefix, sf.name()),
                });
            }
        }
    }
    let mut out = Vec::with_capacity(target.len());
    let mut target_iter = target.iter();
    for (f, src) in fields.iter().zip(source_of) {
        if matches!(f.field_type, Type::Primitive(PrimitiveType::Unknown)) {
            // Never written (always null): values given for it would be lost, so refused.
            if let Some(si) = src
                && src_cols[si].null_count() < src_cols[si].len()
                && !matches!(src_cols[si].data_type(), DataType::Null)
            {
                return Err(Error::TypeMismatch {
                    column: full_name(prefix, &f.name),
                    expected: f.field_type.to_string(),
                    found: src_cols[si].data_type().to_string(),
                });
            }
            continue;
        }
        let Some(tf) = target_iter.next() else {
            return Err(Error::MissingColumn {
                name: full_name(prefix, &f.name),
            });
        };
        let full = full_name(prefix, &f.name);
        let default = match (src, &f.write_default, &f.field_type) {
            (None, Some(value), Type::Primitive(p)) => {
                default_array(value, p, tf.data_type(), len, &full)?
            }
            _ => None,
        };
        let array = match (src, default) {
            (Some(si), _) => align_array(&src_cols[si], f, tf, &full, parent_valid, rules)?,
            (None, Some(filled)) => filled,
            (None, None) if f.required => return Err(Error::MissingColumn { name: full }),
            (None, None) => new_null_array(tf.data_type(), len),
        };
        out.push(array);
    }
    Ok(out)
}

/// One column at its Iceberg type, with the required check.
fn align_array(
    src: &ArrayRef,
    field: &NestedField,
    target: &FieldRef,
    full: &str,
    parent_valid: Option<&NullBuffer>,
    rules: Rules,
) -> Result<ArrayRef> {
    if field.required {
        check_required(src, full, parent_valid)?;
    }
    let mismatch = || Error::TypeMismatch {
        column: full.to_string(),
        expected: field.field_type.to_string(),
        found: src.data_type().to_string(),
    };
    if matches!(src.data_type(), DataType::Null) {
        return Ok(new_null_array(target.data_type(), src.len()));
    }
    match (&field.field_type, target.data_type()) {
        (Type::Primitive(p), to) => {
            let array =
                cast_primitive(src, p, to, full, rules, parent_valid)?.ok_or_else(mismatch)?;
            if matches!(p, PrimitiveType::Time) {
                check_time_of_day(&array, parent_valid, full)?;
            }
            Ok(array)
        }
        (Type::Struct(s), DataType::Struct(target_children)) => {
            let DataType::Struct(src_children) = src.data_type() else {
                return Err(mismatch());
            };
            let st = src.as_struct();
            let valid = NullBuffer::union(parent_valid, st.nulls());
            let children = align_struct(
                (src_children, st.columns()),
                &s.fields,
                target_children,
                full,
                valid.as_ref(),
                st.len(),
                rules,
            )?;
            let array =
                StructArray::try_new(target_children.clone(), children, st.nulls().cloned())
                    .map_err(|e| Error::arrow(full, e))?;
            Ok(Arc::new(array))
        }
        (Type::List(l), DataType::List(target_elem)) => {
            let list: ListArray = match src.data_type() {
                DataType::List(_) => src.as_list::<i32>().clone(),
                DataType::LargeList(f)
                | DataType::FixedSizeList(f, _)
                | DataType::ListView(f)
                | DataType::LargeListView(f) => {
                    let to = DataType::List(f.clone());
                    arrow_cast::cast(src, &to)
                        .map_err(|e| Error::arrow(full, e))?
                        .as_list::<i32>()
                        .clone()
                }
                _ => return Err(mismatch()),
            };
            let (_, offsets, values, nulls) = list.into_parts();
            let elem_name = full_name(full, &l.element_field.name);
            let values = visible_slice(&values, &offsets);
            let hidden = NullBuffer::union(parent_valid, nulls.as_ref());
            let (offsets, values) =
                drop_under_null_slots(rebase(offsets), values, hidden.as_ref(), full)?;
            let values = align_array(
                &values,
                &l.element_field,
                target_elem,
                &elem_name,
                None,
                rules,
            )?;
            let array = ListArray::try_new(target_elem.clone(), offsets, values, nulls)
                .map_err(|e| Error::arrow(full, e))?;
            Ok(Arc::new(array))
        }
        (Type::Map(m), DataType::Map(target_entries, sorted)) => {
            let DataType::Map(_, _) = src.data_type() else {
                return Err(mismatch());
            };
            let DataType::Struct(target_kv) = target_entries.data_type() else {
                return Err(mismatch());
            };
            let map = src.as_map().clone();
            let (_, offsets, entries, nulls, _) = map.into_parts();
            let entries = visible_slice(&(Arc::new(entries) as ArrayRef), &offsets);
            let hidden = NullBuffer::union(parent_valid, nulls.as_ref());
            let (offsets, entries) =
                drop_under_null_slots(rebase(offsets), entries, hidden.as_ref(), full)?;
            let entries = entries.as_struct();
            let key = align_array(
                entries.column(0),
                &m.key_field,
                &target_kv[0],
                &full_name(full, "key"),
                None,
                rules,
            )?;
            let value = align_array(
                entries.column(1),
                &m.value_field,
                &target_kv[1],
                &full_name(full, "value"),
                None,
                rules,
            )?;
            let entries = StructArray::try_new(target_kv.clone(), vec![key, value], None)
                .map_err(|e| Error::arrow(full, e))?;
            let array = MapArray::try_new(target_entries.clone(), offsets, entries, nulls, *sorted)
                .map_err(|e| Error::arrow(full, e))?;
            Ok(Arc::new(array))
        }
        _ => Err(mismatch()),
    }
}

/// The first and last of `offsets` (an offset buffer always holds at least one).
fn offset_range(offsets: &arrow_buffer::OffsetBuffer<i32>) -> (i32, i32) {
    let first = offsets.iter().next().copied().unwrap_or(0);
    let last = offsets.iter().next_back().copied().unwrap_or(first);
    (first, last)
}

/// The part of a list's values its offsets reach.
fn visible_slice(values: &ArrayRef, offsets: &arrow_buffer::OffsetBuffer<i32>) -> ArrayRef {
    let (first, last) = offset_range(offsets);
    let first = first.max(0) as usize;
    let last = last.max(0) as usize;
    values.slice(first, last.saturating_sub(first))
}

/// Offsets shifted to start at zero, matching [`visible_slice`].
fn rebase(offsets: arrow_buffer::OffsetBuffer<i32>) -> arrow_buffer::OffsetBuffer<i32> {
    let (first, _) = offset_range(&offsets);
    if first == 0 {
        return offsets;
    }
    let shifted: Vec<i32> = offsets.iter().map(|o| o - first).collect();
    arrow_buffer::OffsetBuffer::new(shifted.into())
}

/// Rebased `offsets` and their `values` without the values under null slots: Arrow lets a
/// null list or map slot cover values (a `FixedSizeList`'s null slots always do), which are
/// no part of the data but would be checked (nulls of a required element) and written.
/// `nulls` also holds the rows of a null enclosing struct, whose lists Parquet never writes
/// however Arrow fills them; their slots keep their own validity, emptied.
fn drop_under_null_slots(
    offsets: arrow_buffer::OffsetBuffer<i32>,
    values: ArrayRef,
    nulls: Option<&NullBuffer>,
    full: &str,
) -> Result<(arrow_buffer::OffsetBuffer<i32>, ArrayRef)> {
    let Some(nulls) = nulls.filter(|n| n.null_count() > 0) else {
        return Ok((offsets, values));
    };
    let slots = || nulls.iter().zip(offsets.windows(2));
    if !slots().any(|(valid, w)| !valid && w[1] > w[0]) {
        return Ok((offsets, values));
    }
    let mut keep = arrow_buffer::BooleanBufferBuilder::new(values.len());
    let mut lengths = Vec::with_capacity(nulls.len());
    for (valid, w) in slots() {
        let len = usize::try_from(w[1] - w[0]).unwrap_or(0);
        keep.append_n(len, valid);
        lengths.push(if valid { len } else { 0 });
    }
    let mask = arrow_array::BooleanArray::new(keep.finish(), None);
    let values = arrow_select::filter::filter(&values, &mask).map_err(|e| Error::arrow(full, e))?;
    Ok((arrow_buffer::OffsetBuffer::from_lengths(lengths), values))
}

/// Refuses nulls in a required column where its parent is non-null.
fn check_required(src: &ArrayRef, full: &str, parent_valid: Option<&NullBuffer>) -> Result<()> {
    let Some(nulls) = src.logical_nulls() else {
        return Ok(());
    };
    let count = match parent_valid {
        None => nulls.null_count(),
        Some(parent) => (parent.inner() & &!nulls.inner()).count_set_bits(),
    };
    if count > 0 {
        return Err(Error::NullInRequiredColumn {
            column: full.to_string(),
            nulls: count,
        });
    }
    Ok(())
}

/// `src` cast to `to`, or `None` when Iceberg does not allow writing that Arrow type as `p`.
fn cast_primitive(
    src: &ArrayRef,
    p: &PrimitiveType,
    to: &DataType,
    full: &str,
    rules: Rules,
    parent_valid: Option<&NullBuffer>,
) -> Result<Option<ArrayRef>> {
    let from = match src.data_type() {
        DataType::Dictionary(_, v) => v.as_ref(),
        other => other,
    };
    if !allowed(from, p) {
        return Ok(None);
    }
    let src = if let DataType::Dictionary(_, v) = src.data_type() {
        arrow_cast::cast(src, v).map_err(|e| Error::arrow(full, e))?
    } else {
        src.clone()
    };
    // The values checked: those a null parent struct hides are never written, so their
    // range does not matter (Arrow lets a null struct row's children hold anything).
    // Made only for the types checked: rebuilding an array validates it (UTF-8 and all).
    let checked = || with_parent_nulls(&src, parent_valid.filter(|p| p.null_count() > 0));
    if let PrimitiveType::Decimal { precision, .. } = p {
        // Arrow does not hold values to their type's precision, and Parquet's writer keeps
        // only the low bytes of one that is too wide: checked here, as Java's writer does.
        check_decimal_precision(&checked(), *precision, full)?;
    }
    if src.data_type() == to {
        return Ok(Some(src));
    }
    if let DataType::Date64 = src.data_type() {
        return date64_to_days(&src, &checked(), full).map(Some);
    }
    // Nanoseconds into microseconds: refused where digits would be lost, unless allowed,
    // then floored (as the time transforms do) instead of truncated toward zero.
    let floored = match (src.data_type(), to) {
        (
            DataType::Timestamp(TimeUnit::Nanosecond, _),
            DataType::Timestamp(TimeUnit::Microsecond, tz),
        ) => {
            check_whole_microseconds(
                checked().as_primitive::<TimestampNanosecondType>(),
                rules,
                full,
            )?;
            let v = src.as_primitive::<TimestampNanosecondType>();
            let out: PrimitiveArray<TimestampMicrosecondType> = v.unary(|x| x.div_euclid(1000));
            Some(Arc::new(out.with_timezone_opt(tz.clone())) as ArrayRef)
        }
        (DataType::Time64(TimeUnit::Nanosecond), DataType::Time64(TimeUnit::Microsecond)) => {
            check_whole_microseconds(
                checked().as_primitive::<Time64NanosecondType>(),
                rules,
                full,
            )?;
            let v = src.as_primitive::<Time64NanosecondType>();
            let out: PrimitiveArray<Time64MicrosecondType> = v.unary(|x| x.div_euclid(1000));
            Some(Arc::new(out) as ArrayRef)
        }
        _ => None,
    };
    if let Some(a) = floored {
        return Ok(Some(a));
    }
    // Not `safe`: a value that does not fit (a microsecond timestamp past 2262 as
    // nanoseconds) is an error naming the column, never a null written in its place.
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow_cast::cast_with_options(&src, to, &options)
        .map(Some)
        .map_err(|e| Error::arrow(full, e))
}

/// Refuses a nanosecond value with digits past the microsecond (nulls aside) unless `rules`
/// floor them.
fn check_whole_microseconds<T>(values: &PrimitiveArray<T>, rules: Rules, full: &str) -> Result<()>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    if rules.floor_nanoseconds {
        return Ok(());
    }
    match values.iter().flatten().find(|v| v % 1000 != 0) {
        Some(v) => Err(Error::ValueOutOfRange {
            column: full.to_string(),
            reason: format!(
                "the value {v} ns has digits past the microsecond, which the column's \
                 microsecond type would drop (a format v3 `timestamp_ns` column keeps them; \
                 `WriteOptions::with_floor_nanoseconds` floors them)"
            ),
        }),
        None => Ok(()),
    }
}

/// Refuses a `time` value (microseconds) outside one day, nulls and values a null parent
/// hides aside: Arrow's time types hold any integer, Iceberg's `time` is a time of day, and
/// Java reads one past midnight as an error (`LocalTime.ofNanoOfDay`).
fn check_time_of_day(
    array: &ArrayRef,
    parent_valid: Option<&NullBuffer>,
    full: &str,
) -> Result<()> {
    const MICROS_PER_DAY: i64 = 86_400_000_000;
    let visible = with_parent_nulls(array, parent_valid.filter(|p| p.null_count() > 0));
    let Some(values) = visible.as_primitive_opt::<Time64MicrosecondType>() else {
        return Ok(());
    };
    match values
        .iter()
        .flatten()
        .find(|v| !(0..MICROS_PER_DAY).contains(v))
    {
        Some(v) => Err(Error::ValueOutOfRange {
            column: full.to_string(),
            reason: format!("the time value {v} us is not a time of day (0 to 86399999999 us)"),
        }),
        None => Ok(()),
    }
}

/// Refuses a decimal value with more digits than `precision` (nulls aside).
fn check_decimal_precision(src: &ArrayRef, precision: u32, full: &str) -> Result<()> {
    use arrow_array::types::DecimalType;
    use arrow_array::types::{Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type};
    fn check<T: DecimalType>(src: &ArrayRef, precision: u32) -> std::result::Result<(), String> {
        // Every value of a narrower Arrow type fits a precision above its maximum (at the
        // maximum, an i128 still holds 10^38, one digit too many for decimal(38, s)).
        let p = u8::try_from(precision).unwrap_or(u8::MAX);
        if p > T::MAX_PRECISION {
            return Ok(());
        }
        let array = src.as_primitive::<T>();
        match array
            .iter()
            .flatten()
            .find(|v| !T::is_valid_decimal_precision(*v, p))
        {
            Some(v) => Err(format!(
                "the value {} does not fit decimal({precision}, {})",
                T::format_decimal(v, T::MAX_PRECISION, array.scale()),
                array.scale()
            )),
            None => Ok(()),
        }
    }
    let result = match src.data_type() {
        DataType::Decimal32(..) => check::<Decimal32Type>(src, precision),
        DataType::Decimal64(..) => check::<Decimal64Type>(src, precision),
        DataType::Decimal128(..) => check::<Decimal128Type>(src, precision),
        DataType::Decimal256(..) => check::<Decimal256Type>(src, precision),
        _ => Ok(()),
    };
    result.map_err(|reason| Error::ValueOutOfRange {
        column: full.to_string(),
        reason,
    })
}

/// `Date64` milliseconds as `Date32` days, refusing a value of `checked` (`src` with what is
/// not written masked) that is not a whole day (Arrow's own cast would truncate it) or out
/// of the date range.
fn date64_to_days(src: &ArrayRef, checked: &ArrayRef, full: &str) -> Result<ArrayRef> {
    const MS_PER_DAY: i64 = 86_400_000;
    let ms = src.as_primitive::<arrow_array::types::Date64Type>();
    let visible = checked.as_primitive::<arrow_array::types::Date64Type>();
    let bad = visible.iter().flatten().find(|v| {
        v.rem_euclid(MS_PER_DAY) != 0 || i32::try_from(v.div_euclid(MS_PER_DAY)).is_err()
    });
    if let Some(v) = bad {
        return Err(Error::ValueOutOfRange {
            column: full.to_string(),
            reason: format!("the Date64 value {v} ms is not a whole day of the date range"),
        });
    }
    let days: PrimitiveArray<arrow_array::types::Date32Type> =
        ms.unary(|v| v.div_euclid(MS_PER_DAY) as i32);
    Ok(Arc::new(days))
}

/// Whether Arrow values of type `from` may be written to an Iceberg `p` column.
fn allowed(from: &DataType, p: &PrimitiveType) -> bool {
    use DataType as D;
    use PrimitiveType as P;
    match p {
        P::Boolean => matches!(from, D::Boolean),
        P::Int => matches!(from, D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16),
        P::Long => matches!(
            from,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32
        ),
        P::Float => matches!(from, D::Float16 | D::Float32),
        P::Double => matches!(from, D::Float16 | D::Float32 | D::Float64),
        P::Decimal { precision, scale } => match from {
            D::Decimal32(fp, fs)
            | D::Decimal64(fp, fs)
            | D::Decimal128(fp, fs)
            | D::Decimal256(fp, fs) => {
                u32::from(*fp) <= *precision && i64::from(*fs) == i64::from(*scale)
            }
            _ => false,
        },
        P::Date => matches!(from, D::Date32 | D::Date64),
        P::Time => matches!(from, D::Time32(_) | D::Time64(_)),
        P::Timestamp | P::TimestampNs => matches!(from, D::Timestamp(_, None)),
        P::Timestamptz | P::TimestamptzNs => matches!(from, D::Timestamp(_, Some(_))),
        P::String => matches!(from, D::Utf8 | D::LargeUtf8 | D::Utf8View),
        P::Uuid => matches!(from, D::FixedSizeBinary(16)),
        P::Fixed(len) => {
            matches!(from, D::FixedSizeBinary(l) if i64::from(*l) == i64::try_from(*len).unwrap_or(-1))
        }
        P::Binary => matches!(from, D::Binary | D::LargeBinary | D::BinaryView),
        P::Unknown => matches!(from, D::Null),
        P::Variant | P::Geometry { .. } | P::Geography { .. } => false,
    }
}

#[cfg(test)]
mod tests;
