//! Iceberg schema → Arrow schema, with `PARQUET:field_id` on every field.
//!
//! The Arrow types are the ones Parquet files are written with (checklist 1.1): decimals as
//! `Decimal128`, uuid as `FixedSizeBinary(16)` with the canonical `arrow.uuid` extension (so
//! the Parquet column gets the UUID logical type), timestamps in µs (ns for the `_ns` types),
//! strings as `Utf8`, binary as `LargeBinary`. Lists name their child `element`, maps their
//! entries `key_value` with `key` and `value`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::extension::Uuid as UuidExtension;
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};
use iceberg_spec::Schema;
use iceberg_spec::types::{NestedField, PrimitiveType, Type};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use crate::error::{Error, Result};

/// Time zone written on `timestamptz` Arrow fields.
pub const UTC_TIME_ZONE: &str = "+00:00";
/// Name of a list's child field.
pub const LIST_ELEMENT_NAME: &str = "element";
/// Name of a map's entries struct.
pub const MAP_ENTRIES_NAME: &str = "key_value";
/// Name of a map's key field.
pub const MAP_KEY_NAME: &str = "key";
/// Name of a map's value field.
pub const MAP_VALUE_NAME: &str = "value";

/// The Arrow schema data files of `schema` are written with.
///
/// Every field (list element, map key and value included) carries its Iceberg id as
/// `PARQUET:field_id` metadata. Columns of type `unknown` are left out: they are never
/// stored in data files.
///
/// # Errors
/// [`Error::UnsupportedType`] for `variant`, `geometry` and `geography` columns.
pub fn arrow_schema(schema: &Schema) -> Result<ArrowSchema> {
    Ok(ArrowSchema::new(struct_fields(
        &schema.as_struct().fields,
        "",
    )?))
}

fn struct_fields(fields: &[NestedField], prefix: &str) -> Result<Fields> {
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        if matches!(f.field_type, Type::Primitive(PrimitiveType::Unknown)) {
            continue;
        }
        let full = full_name(prefix, &f.name);
        out.push(Arc::new(arrow_field(f, &f.name, &full)?));
    }
    Ok(Fields::from(out))
}

pub(crate) fn full_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The Arrow field of one Iceberg field, named `name`.
pub(crate) fn arrow_field(f: &NestedField, name: &str, full: &str) -> Result<Field> {
    let metadata = HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), f.id.to_string())]);
    let field =
        Field::new(name, arrow_type(&f.field_type, full)?, !f.required).with_metadata(metadata);
    Ok(
        if matches!(f.field_type, Type::Primitive(PrimitiveType::Uuid)) {
            field.with_extension_type(UuidExtension)
        } else {
            field
        },
    )
}

/// The Arrow type of an Iceberg type; `full` names the column in errors.
pub fn arrow_type(t: &Type, full: &str) -> Result<DataType> {
    Ok(match t {
        Type::Primitive(p) => primitive_arrow_type(p, full)?,
        Type::Struct(s) => DataType::Struct(struct_fields(&s.fields, full)?),
        Type::List(l) => {
            let e = &l.element_field;
            DataType::List(Arc::new(arrow_field(
                e,
                LIST_ELEMENT_NAME,
                &full_name(full, &e.name),
            )?))
        }
        Type::Map(m) => {
            let key = arrow_field(&m.key_field, MAP_KEY_NAME, &full_name(full, "key"))?;
            let value = arrow_field(&m.value_field, MAP_VALUE_NAME, &full_name(full, "value"))?;
            let entries = Field::new(
                MAP_ENTRIES_NAME,
                DataType::Struct(Fields::from(vec![key, value])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        }
    })
}

fn primitive_arrow_type(p: &PrimitiveType, full: &str) -> Result<DataType> {
    use PrimitiveType as P;
    Ok(match p {
        P::Boolean => DataType::Boolean,
        P::Int => DataType::Int32,
        P::Long => DataType::Int64,
        P::Float => DataType::Float32,
        P::Double => DataType::Float64,
        P::Decimal { precision, scale } => DataType::Decimal128(
            u8::try_from(*precision).map_err(|_| unsupported(full, p))?,
            i8::try_from(*scale).map_err(|_| unsupported(full, p))?,
        ),
        P::Date => DataType::Date32,
        P::Time => DataType::Time64(TimeUnit::Microsecond),
        P::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        P::Timestamptz => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC_TIME_ZONE.into())),
        P::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        P::TimestamptzNs => DataType::Timestamp(TimeUnit::Nanosecond, Some(UTC_TIME_ZONE.into())),
        P::String => DataType::Utf8,
        P::Uuid => DataType::FixedSizeBinary(16),
        P::Fixed(len) => {
            DataType::FixedSizeBinary(i32::try_from(*len).map_err(|_| unsupported(full, p))?)
        }
        P::Binary => DataType::LargeBinary,
        P::Unknown => DataType::Null,
        P::Variant | P::Geometry { .. } | P::Geography { .. } => return Err(unsupported(full, p)),
    })
}

/// Refuses `unknown` where a data file would have to hold it: as a list's element or a map's
/// key or value. A struct field of type `unknown` is left out of the file; a list of them
/// cannot be (its length is data), and Java's writer refuses such a schema too ("Cannot
/// convert element Parquet"), so no reader expects one in Parquet.
///
/// # Errors
/// [`Error::UnsupportedType`] naming the element, key or value.
pub(crate) fn check_writable(schema: &Schema) -> Result<()> {
    fn nested(t: &Type, full: &str) -> Result<()> {
        let inner = |f: &NestedField, name: &str| -> Result<()> {
            let full = full_name(full, name);
            match &f.field_type {
                Type::Primitive(p @ PrimitiveType::Unknown) => Err(unsupported(&full, p)),
                other => nested(other, &full),
            }
        };
        match t {
            Type::Primitive(_) => Ok(()),
            Type::Struct(s) => s
                .fields
                .iter()
                .try_for_each(|f| nested(&f.field_type, &full_name(full, &f.name))),
            Type::List(l) => inner(&l.element_field, &l.element_field.name),
            Type::Map(m) => {
                inner(&m.key_field, "key")?;
                inner(&m.value_field, "value")
            }
        }
    }
    schema
        .as_struct()
        .fields
        .iter()
        .try_for_each(|f| nested(&f.field_type, &f.name))
}

fn unsupported(full: &str, p: &PrimitiveType) -> Error {
    Error::UnsupportedType {
        column: full.to_string(),
        type_name: p.to_string(),
    }
}

/// The field id stored on an Arrow field, if any.
pub(crate) fn field_id_of(field: &Field) -> Option<i32> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use iceberg_spec::types::{ListType, MapType, StructType};

    use super::*;

    #[test]
    fn ids_on_every_field() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(
                    2,
                    "tags",
                    Type::List(ListType::new(3, PrimitiveType::String, true)),
                ),
                NestedField::optional(
                    4,
                    "props",
                    Type::Map(MapType::new(
                        5,
                        PrimitiveType::String,
                        6,
                        PrimitiveType::Double,
                        false,
                    )),
                ),
                NestedField::optional(
                    7,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        8,
                        "u",
                        PrimitiveType::Uuid,
                    )])),
                ),
                NestedField::optional(9, "gone", PrimitiveType::Unknown),
            ],
        )
        .unwrap();
        let a = arrow_schema(&schema).unwrap();
        assert_eq!(a.fields().len(), 4);
        assert_eq!(field_id_of(a.field(0)), Some(1));
        assert!(!a.field(0).is_nullable());
        let DataType::List(elem) = a.field(1).data_type() else {
            panic!()
        };
        assert_eq!(
            (elem.name().as_str(), field_id_of(elem), elem.is_nullable()),
            ("element", Some(3), false)
        );
        let DataType::Map(entries, false) = a.field(2).data_type() else {
            panic!()
        };
        assert_eq!(entries.name(), "key_value");
        let DataType::Struct(kv) = entries.data_type() else {
            panic!()
        };
        assert_eq!(field_id_of(&kv[0]), Some(5));
        assert!(!kv[0].is_nullable());
        assert_eq!(field_id_of(&kv[1]), Some(6));
        let DataType::Struct(inner) = a.field(3).data_type() else {
            panic!()
        };
        assert_eq!(inner[0].extension_type_name(), Some("arrow.uuid"));
    }

    /// `unknown` as a struct field is left out of the file; as a list element or map value
    /// (anywhere in the schema) the writer refuses it naming it, as Java's writer does.
    #[test]
    fn unknown_elements_and_values_are_not_writable() {
        let of = |t: Type| {
            Schema::new(
                0,
                vec![
                    NestedField::optional(1, "gone", PrimitiveType::Unknown),
                    NestedField::optional(
                        2,
                        "s",
                        Type::Struct(StructType::new(vec![NestedField::optional(3, "c", t)])),
                    ),
                ],
            )
            .unwrap()
        };
        let list = |t: Type| Type::List(ListType::new(9, t, false));
        assert!(check_writable(&of(list(PrimitiveType::Int.into()))).is_ok());
        let map = |t: Type| Type::Map(MapType::new(10, PrimitiveType::String, 11, t, false));
        for (schema, column) in [
            (of(list(PrimitiveType::Unknown.into())), "s.c.element"),
            (of(map(PrimitiveType::Unknown.into())), "s.c.value"),
            (
                of(map(list(PrimitiveType::Unknown.into()))),
                "s.c.value.element",
            ),
        ] {
            let err = check_writable(&schema).unwrap_err();
            assert!(
                matches!(&err, Error::UnsupportedType { column: c, type_name } if c == column && type_name == "unknown"),
                "{err}"
            );
        }
    }

    #[test]
    fn variant_is_refused() {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(1, "v", PrimitiveType::Variant)],
        )
        .unwrap();
        assert!(matches!(
            arrow_schema(&schema),
            Err(Error::UnsupportedType { .. })
        ));
    }
}
