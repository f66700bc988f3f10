//! An Iceberg schema from an Arrow schema, with fresh field ids assigned as Java's
//! `AssignFreshIds` (and PyIceberg's `assign_fresh_schema_ids`) do.
//!
//! Id order: the fields of a struct get consecutive ids first, then each field's nested
//! type is numbered, in field order, by the same rule. So the top-level columns are
//! `1..=n`, then the children of the first nested column, then their own children, then the
//! children of the next nested column. A list's element gets one id before its type is
//! numbered; a map's key and value get two (key, value) before the key type, then the value
//! type. Names and nullability are kept; Arrow field-id metadata is ignored.
//!
//! Types: `Int8/16/32`, `UInt8/16` → int; `Int64`, `UInt32` → long; `Float16/32` → float;
//! `Float64` → double; decimals → decimal(p, s); `Date32/64` → date; `Time32/64` → time;
//! timestamps with a zone → timestamptz, without → timestamp (nanosecond timestamps become
//! the `_ns` types on format v3 and are floored to microseconds before v3); strings →
//! string; binaries → binary; `FixedSizeBinary(16)` with the `arrow.uuid` extension → uuid,
//! other fixed-size binaries → fixed(n); dictionaries → their value type; `Null` → unknown
//! (v3 only).

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};
use iceberg_spec::types::{ListType, MapType, StructType};
use iceberg_spec::{FormatVersion, NestedField, PrimitiveType, Schema, Type};

use crate::error::{Error, Result};

/// The Iceberg schema (id 0) of `arrow` for a table of `format_version`, with fresh ids
/// from 1 (the inverse of [`fn@crate::arrow_schema`] up to ids and Arrow-only types).
///
/// # Errors
/// [`Error::UnsupportedArrowType`] naming the column (by its path) whose Arrow type has no
/// Iceberg counterpart on that format version.
pub fn iceberg_schema(arrow: &ArrowSchema, format_version: FormatVersion) -> Result<Schema> {
    let mut next = 1;
    let fields = struct_fields(arrow.fields(), "", format_version.number(), &mut next)?;
    Ok(Schema::new(0, fields)?)
}

fn struct_fields(fields: &Fields, prefix: &str, v: u8, next: &mut i32) -> Result<Vec<NestedField>> {
    let ids: Vec<i32> = fields.iter().map(|_| take(next)).collect();
    let mut out = Vec::with_capacity(fields.len());
    for (field, id) in fields.iter().zip(ids) {
        let path = if prefix.is_empty() {
            field.name().clone()
        } else {
            format!("{prefix}.{}", field.name())
        };
        let ty = field_type(field, &path, v, next)?;
        out.push(NestedField::new(id, field.name(), ty, !field.is_nullable()));
    }
    Ok(out)
}

fn take(next: &mut i32) -> i32 {
    let id = *next;
    *next += 1;
    id
}

fn field_type(field: &Field, path: &str, v: u8, next: &mut i32) -> Result<Type> {
    if field.extension_type_name() == Some("arrow.uuid") {
        return Ok(PrimitiveType::Uuid.into());
    }
    data_type(field.data_type(), path, v, next)
}

fn data_type(dt: &DataType, path: &str, v: u8, next: &mut i32) -> Result<Type> {
    use DataType as D;
    use PrimitiveType as P;
    let p = match dt {
        D::Boolean => P::Boolean,
        D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => P::Int,
        D::Int64 | D::UInt32 => P::Long,
        D::Float16 | D::Float32 => P::Float,
        D::Float64 => P::Double,
        D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) | D::Decimal256(p, s) => {
            if *p > 38 || *s < 0 {
                return Err(unsupported(
                    path,
                    dt,
                    "decimal precision above 38 or negative scale",
                ));
            }
            P::Decimal {
                precision: u32::from(*p),
                scale: u32::try_from(*s).unwrap_or(0),
            }
        }
        D::Date32 | D::Date64 => P::Date,
        D::Time32(_) | D::Time64(_) => P::Time,
        D::Timestamp(TimeUnit::Nanosecond, tz) if v >= 3 => {
            if tz.is_some() {
                P::TimestamptzNs
            } else {
                P::TimestampNs
            }
        }
        D::Timestamp(_, Some(_)) => P::Timestamptz,
        D::Timestamp(_, None) => P::Timestamp,
        D::Utf8 | D::LargeUtf8 | D::Utf8View => P::String,
        D::Binary | D::LargeBinary | D::BinaryView => P::Binary,
        D::FixedSizeBinary(n) => P::Fixed(u64::try_from(*n).unwrap_or(0)),
        D::Null if v >= 3 => P::Unknown,
        D::Null => return Err(unsupported(path, dt, "an all-null column needs format v3")),
        D::Dictionary(_, value) => return data_type(value, path, v, next),
        D::Struct(fields) => {
            return Ok(Type::Struct(StructType::new(struct_fields(
                fields, path, v, next,
            )?)));
        }
        D::List(elem) | D::LargeList(elem) | D::ListView(elem) | D::FixedSizeList(elem, _) => {
            let id = take(next);
            let ty = field_type(elem, &format!("{path}.element"), v, next)?;
            return Ok(Type::List(ListType::new(id, ty, !elem.is_nullable())));
        }
        D::Map(entries, _) => {
            let D::Struct(kv) = entries.data_type() else {
                return Err(unsupported(path, dt, "map entries are not a struct"));
            };
            let [key, value] = kv.iter().collect::<Vec<_>>()[..] else {
                return Err(unsupported(path, dt, "map entries need a key and a value"));
            };
            let (kid, vid) = (take(next), take(next));
            let kt = field_type(key, &format!("{path}.key"), v, next)?;
            let vt = field_type(value, &format!("{path}.value"), v, next)?;
            return Ok(Type::Map(MapType::new(
                kid,
                kt,
                vid,
                vt,
                !value.is_nullable(),
            )));
        }
        other => return Err(unsupported(path, other, "no Iceberg type")),
    };
    Ok(p.into())
}

fn unsupported(path: &str, dt: &DataType, why: &str) -> Error {
    Error::UnsupportedArrowType {
        column: path.to_string(),
        arrow_type: dt.to_string(),
        reason: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;

    #[test]
    fn ids_as_java_assigns_them() {
        let point = DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Float64, false),
            Field::new("y", DataType::Float64, true),
        ]));
        let tags = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
        let props = DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", DataType::Int32, true),
                ])),
                false,
            )),
            false,
        );
        let arrow = ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("pt", point, true),
            Field::new("tags", tags, true),
            Field::new("props", props, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
        ]);
        let s = iceberg_schema(&arrow, FormatVersion::V2).unwrap();
        let id = |n: &str| s.field_id_by_name(n).unwrap();
        assert_eq!(
            [id("id"), id("pt"), id("tags"), id("props"), id("ts")],
            [1, 2, 3, 4, 5]
        );
        assert_eq!([id("pt.x"), id("pt.y"), id("tags.element")], [6, 7, 8]);
        assert_eq!([id("props.key"), id("props.value")], [9, 10]);
        assert!(s.field_by_id(1).unwrap().required);
        assert!(!s.field_by_id(7).unwrap().required);
        assert_eq!(s.primitive_type(5).unwrap(), &PrimitiveType::Timestamptz);
    }

    #[test]
    fn refuses_what_iceberg_cannot_hold() {
        let arrow = ArrowSchema::new(vec![Field::new("n", DataType::UInt64, true)]);
        let e = iceberg_schema(&arrow, FormatVersion::V2).unwrap_err();
        assert!(e.to_string().contains("column `n`"), "{e}");
        let nulls = ArrowSchema::new(vec![Field::new("z", DataType::Null, true)]);
        let e = iceberg_schema(&nulls, FormatVersion::V2).unwrap_err();
        assert!(
            matches!(&e, Error::UnsupportedArrowType { column, .. } if column == "z"),
            "{e}"
        );
        let s = iceberg_schema(&nulls, FormatVersion::V3).unwrap();
        assert_eq!(s.primitive_type(1).unwrap(), &PrimitiveType::Unknown);
    }
}
