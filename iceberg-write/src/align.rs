//! Aligning a batch to the table schema: columns matched by name (falling back to the
//! `PARQUET:field_id` a batch field may carry), reordered, cast along Iceberg's promotions,
//! missing columns filled with their `write-default` (v3) or nulls, and nulls in required
//! columns refused.
//!
//! Nested columns are aligned child by child the same way. The result is a batch with
//! exactly the Arrow schema of [`crate::arrow_schema`], ready for the Parquet writer.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
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
use crate::to_arrow::{field_id_of, full_name};

/// `batch` at the table's schema: `target` must be `arrow_schema(schema)` of the same schema
/// as `fields` (the table's top-level fields).
///
/// # Errors
/// [`Error::MissingColumn`], [`Error::UnexpectedColumn`], [`Error::TypeMismatch`],
/// [`Error::NullInRequiredColumn`], naming the column.
pub(crate) fn align_batch(
    batch: &RecordBatch,
    fields: &[NestedField],
    target: &SchemaRef,
) -> Result<RecordBatch> {
    let columns = align_struct(
        batch.schema().fields(),
        batch.columns(),
        fields,
        target.fields(),
        "",
        None,
        batch.num_rows(),
    )?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(target.clone(), columns, &options)
        .map_err(|e| Error::arrow("<batch>", e))
}

/// Aligns the children of one struct level. `parent_valid` is where the enclosing struct
/// (and its ancestors) are non-null; `None` means everywhere.
fn align_struct(
    src_fields: &Fields,
    src_cols: &[ArrayRef],
    fields: &[NestedField],
    target: &Fields,
    prefix: &str,
    parent_valid: Option<&NullBuffer>,
    len: usize,
) -> Result<Vec<ArrayRef>> {
    // Which source column feeds each Iceberg field: by name first, then by field id.
    let mut source_of: Vec<Option<usize>> = vec![None; fields.len()];
    for (si, sf) in src_fields.iter().enumerate() {
        let by_name = fields.iter().position(|f| f.name == *sf.name());
        let pos = by_name
            .or_else(|| field_id_of(sf).and_then(|id| fields.iter().position(|f| f.id == id)));
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
            (Some(si), _) => align_array(&src_cols[si], f, tf, &full, parent_valid)?,
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
            cast_primitive(src, p, to, full).and_then(|a| a.ok_or_else(mismatch))
        }
        (Type::Struct(s), DataType::Struct(target_children)) => {
            let DataType::Struct(src_children) = src.data_type() else {
                return Err(mismatch());
            };
            let st = src.as_struct();
            let valid = NullBuffer::union(parent_valid, st.nulls());
            let children = align_struct(
                src_children,
                st.columns(),
                &s.fields,
                target_children,
                full,
                valid.as_ref(),
                st.len(),
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
            let values = align_array(&values, &l.element_field, target_elem, &elem_name, None)?;
            let offsets = rebase(offsets);
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
            let entries = entries.as_struct();
            let key = align_array(
                entries.column(0),
                &m.key_field,
                &target_kv[0],
                &full_name(full, "key"),
                None,
            )?;
            let value = align_array(
                entries.column(1),
                &m.value_field,
                &target_kv[1],
                &full_name(full, "value"),
                None,
            )?;
            let entries = StructArray::try_new(target_kv.clone(), vec![key, value], None)
                .map_err(|e| Error::arrow(full, e))?;
            let array = MapArray::try_new(
                target_entries.clone(),
                rebase(offsets),
                entries,
                nulls,
                *sorted,
            )
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
) -> Result<Option<ArrayRef>> {
    let from = match src.data_type() {
        DataType::Dictionary(_, v) => v.as_ref(),
        other => other,
    };
    if !allowed(from, p) {
        return Ok(None);
    }
    if src.data_type() == to {
        return Ok(Some(src.clone()));
    }
    let src = if let DataType::Dictionary(_, v) = src.data_type() {
        arrow_cast::cast(src, v).map_err(|e| Error::arrow(full, e))?
    } else {
        src.clone()
    };
    // Lossy unit reductions floor (as the time transforms do) instead of truncating to zero.
    let floored = match (src.data_type(), to) {
        (
            DataType::Timestamp(TimeUnit::Nanosecond, _),
            DataType::Timestamp(TimeUnit::Microsecond, tz),
        ) => {
            let v = src.as_primitive::<TimestampNanosecondType>();
            let out: PrimitiveArray<TimestampMicrosecondType> = v.unary(|x| x.div_euclid(1000));
            Some(Arc::new(out.with_timezone_opt(tz.clone())) as ArrayRef)
        }
        (DataType::Time64(TimeUnit::Nanosecond), DataType::Time64(TimeUnit::Microsecond)) => {
            let v = src.as_primitive::<arrow_array::types::Time64NanosecondType>();
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
        P::Date => matches!(from, D::Date32),
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use std::collections::HashMap;

    use arrow_array::{Float32Array, Int32Array, StringArray, TimestampNanosecondArray};
    use arrow_schema::{Field, Schema as ArrowSchema};
    use iceberg_spec::Schema;
    use iceberg_spec::types::StructType;

    use super::*;
    use crate::to_arrow::arrow_schema;

    fn table() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "name", PrimitiveType::String),
                NestedField::optional(3, "score", PrimitiveType::Double),
                NestedField::optional(4, "ts", PrimitiveType::Timestamp),
                NestedField::optional(
                    5,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::required(
                        6,
                        "x",
                        PrimitiveType::Int,
                    )])),
                ),
            ],
        )
        .unwrap()
    }

    fn align(batch: &RecordBatch) -> Result<RecordBatch> {
        let t = table();
        let target = Arc::new(arrow_schema(&t).unwrap());
        align_batch(batch, t.fields(), &target)
    }

    fn batch(fields: Vec<Field>, cols: Vec<ArrayRef>) -> RecordBatch {
        RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), cols).unwrap()
    }

    /// A column the input leaves out gets its `write-default` (v3), a required one too; one
    /// without a default stays null (optional) or is refused (required).
    #[test]
    fn missing_columns_get_their_write_default() {
        let with_default = |mut f: NestedField, v: serde_json::Value| {
            f.write_default = Some(v);
            f
        };
        let t = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                with_default(
                    NestedField::required(2, "flag", PrimitiveType::Boolean),
                    serde_json::json!(true),
                ),
                with_default(
                    NestedField::optional(3, "age", PrimitiveType::Int),
                    serde_json::json!(25),
                ),
                with_default(
                    NestedField::optional(4, "label", PrimitiveType::String),
                    serde_json::json!("x"),
                ),
                with_default(
                    NestedField::optional(
                        5,
                        "price",
                        PrimitiveType::Decimal {
                            precision: 9,
                            scale: 2,
                        },
                    ),
                    serde_json::json!("12.50"),
                ),
                NestedField::optional(6, "note", PrimitiveType::String),
            ],
        )
        .unwrap();
        let target = Arc::new(arrow_schema(&t).unwrap());
        let b = batch(
            vec![Field::new("id", DataType::Int64, false)],
            vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2, 3]))],
        );
        let out = align_batch(&b, t.fields(), &target).unwrap();
        let flags = out.column(1).as_boolean();
        assert!((0..3).all(|i| flags.value(i)) && flags.null_count() == 0);
        let ages = out
            .column(2)
            .as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!(ages.values().to_vec(), vec![25, 25, 25]);
        assert_eq!(out.column(3).as_string::<i32>().value(2), "x");
        let prices = out
            .column(4)
            .as_primitive::<arrow_array::types::Decimal128Type>();
        assert_eq!(prices.value(0), 1250);
        assert_eq!(out.column(5).null_count(), 3);
        // Required without a default: refused, naming it.
        let bare = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::required(2, "flag", PrimitiveType::Boolean),
            ],
        )
        .unwrap();
        let target = Arc::new(arrow_schema(&bare).unwrap());
        let err = align_batch(&b, bare.fields(), &target).unwrap_err();
        assert!(
            matches!(&err, Error::MissingColumn { name } if name == "flag"),
            "{err}"
        );
    }

    /// Values for an `unknown` column (always null) are refused, not dropped; nulls pass.
    #[test]
    fn values_for_an_unknown_column_are_refused() {
        let t = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "later", PrimitiveType::Unknown),
            ],
        )
        .unwrap();
        let target = Arc::new(arrow_schema(&t).unwrap());
        let with = |later: ArrayRef| {
            batch(
                vec![
                    Field::new("id", DataType::Int64, false),
                    Field::new("later", later.data_type().clone(), true),
                ],
                vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2])), later],
            )
        };
        let err = align_batch(
            &with(Arc::new(Int32Array::from(vec![Some(7), None]))),
            t.fields(),
            &target,
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::TypeMismatch { column, .. } if column == "later"),
            "{err}"
        );
        align_batch(
            &with(Arc::new(Int32Array::from(vec![None, None]))),
            t.fields(),
            &target,
        )
        .unwrap();
    }

    /// A timestamp that does not fit nanoseconds (past 2262) is an error naming the column,
    /// never a null written in its place.
    #[test]
    fn a_timestamp_past_the_nanosecond_range_is_refused() {
        let t = Schema::new(
            0,
            vec![NestedField::optional(1, "at", PrimitiveType::TimestampNs)],
        )
        .unwrap();
        let target = Arc::new(arrow_schema(&t).unwrap());
        let far = 253_402_214_400_000_000i64; // 9999-12-31 in microseconds
        let b = batch(
            vec![Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            )],
            vec![Arc::new(arrow_array::TimestampMicrosecondArray::from(
                vec![0, far],
            ))],
        );
        let err = align_batch(&b, t.fields(), &target).unwrap_err();
        assert!(err.to_string().contains("at"), "{err}");
    }

    #[test]
    fn reorders_casts_and_fills_missing() {
        let b = batch(
            vec![
                Field::new("score", DataType::Float32, true),
                Field::new("id", DataType::Int32, false),
                Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            ],
            vec![
                Arc::new(Float32Array::from(vec![1.5, 2.5])),
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(TimestampNanosecondArray::from(vec![-1, 1_999])),
            ],
        );
        let out = align(&b).unwrap();
        assert_eq!(out.num_columns(), 5);
        assert_eq!(out.column(0).data_type(), &DataType::Int64);
        assert_eq!(out.column(1).null_count(), 2);
        assert_eq!(
            out.column(2)
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(1),
            2.5
        );
        let ts = out.column(3).as_primitive::<TimestampMicrosecondType>();
        assert_eq!((ts.value(0), ts.value(1)), (-1, 1));
        assert_eq!(out.column(4).null_count(), 2);
    }

    #[test]
    fn falls_back_to_field_id() {
        let meta = HashMap::from([("PARQUET:field_id".to_string(), "2".to_string())]);
        let b = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("renamed", DataType::Utf8, true).with_metadata(meta),
            ],
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![1])),
                Arc::new(StringArray::from(vec!["a"])),
            ],
        );
        let out = align(&b).unwrap();
        assert_eq!(out.column(1).as_string::<i32>().value(0), "a");
    }

    #[test]
    fn refusals_name_the_column() {
        let b = batch(
            vec![Field::new("name", DataType::Utf8, true)],
            vec![Arc::new(StringArray::from(vec!["a"]))],
        );
        assert!(matches!(align(&b), Err(Error::MissingColumn { name }) if name == "id"));

        let b = batch(
            vec![Field::new("id", DataType::Utf8, true)],
            vec![Arc::new(StringArray::from(vec!["a"]))],
        );
        match align(&b) {
            Err(Error::TypeMismatch {
                column,
                expected,
                found,
            }) => {
                assert_eq!(
                    (column.as_str(), expected.as_str(), found.as_str()),
                    ("id", "long", "Utf8")
                );
            }
            other => panic!("{other:?}"),
        }

        let b = batch(
            vec![Field::new("id", DataType::Int64, true)],
            vec![Arc::new(arrow_array::Int64Array::from(vec![Some(1), None]))],
        );
        assert!(
            matches!(align(&b), Err(Error::NullInRequiredColumn { column, nulls: 1 }) if column == "id")
        );

        let b = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("extra", DataType::Int64, true),
            ],
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![1])),
                Arc::new(arrow_array::Int64Array::from(vec![1])),
            ],
        );
        assert!(matches!(align(&b), Err(Error::UnexpectedColumn { name }) if name == "extra"));
    }

    #[test]
    fn required_child_of_null_struct_is_fine() {
        let child = Field::new("x", DataType::Int32, true);
        let s = StructArray::try_new(
            Fields::from(vec![child.clone()]),
            vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
            Some(NullBuffer::from(vec![true, false])),
        )
        .unwrap();
        let ok = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("s", s.data_type().clone(), true),
            ],
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
                Arc::new(s),
            ],
        );
        assert!(align(&ok).is_ok());

        let s = StructArray::try_new(
            Fields::from(vec![child]),
            vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
            None,
        )
        .unwrap();
        let bad = batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("s", s.data_type().clone(), true),
            ],
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
                Arc::new(s),
            ],
        );
        assert!(
            matches!(align(&bad), Err(Error::NullInRequiredColumn { column, .. }) if column == "s.x")
        );
    }
}
