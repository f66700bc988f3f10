//! Iceberg names as Avro names: sanitized on write, found by field id on read.
//!
//! An Iceberg name may hold any character (`event-time`, `user id`, `1col`, `café`); an Avro
//! name may not (Avro 1.11 "Names": `[A-Za-z_][A-Za-z0-9_]*`). Java writes partition fields
//! through `AvroSchemaUtil.makeCompatibleName`: a name that is not a valid Avro name becomes
//! `AvroSchemaUtil.sanitize(name)` (a leading digit `d` becomes `_d`, any other character
//! `_x` and its UTF-16 code unit in upper-case hex) and the original is kept in the field's
//! `iceberg-field-name` property. [`sanitize`] does the same, with one difference: Java takes
//! any Unicode letter or digit (`Character.isLetterOrDigit`) as valid and leaves `café` as it
//! is, which is not an Avro name and which apache-avro (iceberg-rust's reader) refuses; here
//! only ASCII letters and digits are kept, so `café` becomes `caf_xE9`. Every ASCII name comes
//! out exactly as Java writes it, and readers that resolve fields by id (Java, PyIceberg) read
//! either form.
//!
//! On read, partition values are found by field id, as Java reads them
//! ([`partition_field_names`]), so Java's names, ours and other writers' raw names all work.
//! apache-avro refuses a whole file whose schema has a name it does not accept (Java's own
//! manifests with non-ASCII letters, other writers' raw names): [`with_readable_names`]
//! rewrites such a file's header so apache-avro reads it.

use std::borrow::Cow;

use apache_avro::Schema as AvroSchema;
use apache_avro::schema::RecordField;
use iceberg_spec::{PrimitiveType, StructType};
use serde_json::Value;

/// The Avro field property that keeps an Iceberg name the Avro name had to change.
pub(crate) const ICEBERG_FIELD_NAME_PROP: &str = "iceberg-field-name";

/// The Avro name of an Iceberg name: itself when it is an Avro name, else escaped as Java's
/// `AvroSchemaUtil.sanitize` escapes (see the module docs for non-ASCII letters).
pub(crate) fn sanitize(name: &str) -> Cow<'_, str> {
    let letter = |u: u16| u8::try_from(u).is_ok_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let digit = |u: u16| u8::try_from(u).is_ok_and(|b| b.is_ascii_digit());
    let units: Vec<u16> = name.encode_utf16().collect();
    let valid = units.split_first().is_some_and(|(first, rest)| {
        letter(*first) && rest.iter().all(|u| letter(*u) || digit(*u))
    });
    if valid {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(units.len() + 8);
    for (i, unit) in units.iter().enumerate() {
        if letter(*unit) || (i > 0 && digit(*unit)) {
            out.push(char::from(*unit as u8));
        } else if digit(*unit) {
            out.push('_');
            out.push(char::from(*unit as u8));
        } else {
            out.push_str(&format!("_x{unit:X}"));
        }
    }
    Cow::Owned(out)
}

/// The schema of the record field `name` of a record schema.
fn record_field<'a>(schema: &'a AvroSchema, name: &str) -> Option<&'a AvroSchema> {
    match schema {
        AvroSchema::Record(r) => r.fields.iter().find(|f| f.name == name).map(|f| &f.schema),
        _ => None,
    }
}

/// The Avro name of each partition field in a manifest's writer schema: found by its
/// `field-id` as Java reads it, else by the Iceberg name, raw or sanitized; `None` when the
/// schema has no such field.
pub(crate) fn partition_field_names(writer: &AvroSchema, pt: &StructType) -> Vec<Option<String>> {
    pt.fields
        .iter()
        .map(|f| partition_field(writer, f.id, &f.name).map(|a| a.name.clone()))
        .collect()
}

/// The Iceberg type of the partition field `id` (named `name`) as a manifest's writer schema
/// declares it: how the values of a transform this library does not know are read.
pub(crate) fn partition_field_type(
    writer: &AvroSchema,
    id: i32,
    name: &str,
) -> Option<PrimitiveType> {
    primitive_of(&partition_field(writer, id, name)?.schema)
}

/// The partition record field `id` of a manifest's writer schema, by `field-id`, else by
/// `name` raw or sanitized.
fn partition_field<'a>(writer: &'a AvroSchema, id: i32, name: &str) -> Option<&'a RecordField> {
    let fields = record_field(writer, "data_file")
        .and_then(|df| record_field(df, "partition"))
        .and_then(|p| match p {
            AvroSchema::Record(r) => Some(&r.fields),
            _ => None,
        })?;
    let by_id = |a: &&RecordField| {
        a.custom_attributes.get("field-id").and_then(Value::as_i64) == Some(i64::from(id))
    };
    let named = |a: &&RecordField| a.name == name || a.name == sanitize(name);
    fields
        .iter()
        .find(by_id)
        .or_else(|| fields.iter().find(named))
}

/// The Iceberg primitive type an Avro schema holds (the non-null branch of an optional).
fn primitive_of(schema: &AvroSchema) -> Option<PrimitiveType> {
    use PrimitiveType as P;
    Some(match schema {
        AvroSchema::Union(u) => {
            let mut branches = u.variants().iter().filter(|v| **v != AvroSchema::Null);
            let only = branches.next()?;
            return branches
                .next()
                .is_none()
                .then(|| primitive_of(only))
                .flatten();
        }
        AvroSchema::Boolean => P::Boolean,
        AvroSchema::Int => P::Int,
        AvroSchema::Long => P::Long,
        AvroSchema::Float => P::Float,
        AvroSchema::Double => P::Double,
        AvroSchema::Bytes => P::Binary,
        AvroSchema::String => P::String,
        AvroSchema::Fixed(f) => P::Fixed(u64::try_from(f.size).ok()?),
        AvroSchema::Decimal(d) => P::Decimal {
            precision: u32::try_from(d.precision).ok()?,
            scale: u32::try_from(d.scale).ok()?,
        },
        AvroSchema::Uuid(_) => P::Uuid,
        AvroSchema::Date => P::Date,
        AvroSchema::TimeMicros => P::Time,
        AvroSchema::TimestampMicros => P::Timestamptz,
        AvroSchema::LocalTimestampMicros => P::Timestamp,
        AvroSchema::TimestampNanos => P::TimestamptzNs,
        AvroSchema::LocalTimestampNanos => P::TimestampNs,
        _ => return None,
    })
}

/// Renames every record field whose name apache-avro refuses; true when one was renamed.
fn rename_fields(schema: &mut Value) -> bool {
    let mut changed = false;
    match schema {
        Value::Array(items) => {
            for item in items {
                changed |= rename_fields(item);
            }
        }
        Value::Object(obj) => {
            if let Some(Value::Array(fields)) = obj.get_mut("fields") {
                for field in fields {
                    let Value::Object(f) = field else { continue };
                    if let Some(Value::String(name)) = f.get("name")
                        && let Cow::Owned(safe) = sanitize(name)
                    {
                        let original = name.clone();
                        f.insert("name".into(), Value::String(safe));
                        f.entry(ICEBERG_FIELD_NAME_PROP)
                            .or_insert(Value::String(original));
                        changed = true;
                    }
                    if let Some(ty) = f.get_mut("type") {
                        changed |= rename_fields(ty);
                    }
                }
            }
            for key in ["items", "values"] {
                if let Some(ty) = obj.get_mut(key) {
                    changed |= rename_fields(ty);
                }
            }
        }
        _ => {}
    }
    changed
}

/// The container file `bytes` with its header's schema rewritten so that apache-avro accepts
/// every field name, or `None` when no name needed it (or the header cannot be parsed: the
/// caller then reports apache-avro's own error). The data blocks are unchanged: Avro binary
/// data does not depend on field names.
pub(crate) fn with_readable_names(bytes: &[u8]) -> Option<Vec<u8>> {
    let (header, end) = super::blocks::header_entries(bytes)?;
    let mut entries: Vec<(&[u8], Cow<'_, [u8]>)> = Vec::with_capacity(header.len());
    let mut changed = false;
    for (key, value) in header {
        let (key, value) = (&bytes[key], &bytes[value]);
        if key == b"avro.schema" {
            let mut schema: Value = serde_json::from_slice(value).ok()?;
            if rename_fields(&mut schema) {
                changed = true;
                entries.push((key, Cow::Owned(schema.to_string().into_bytes())));
                continue;
            }
        }
        entries.push((key, Cow::Borrowed(value)));
    }
    if !changed {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() + 256);
    out.extend_from_slice(b"Obj\x01");
    super::container::put_long(&mut out, entries.len() as i64);
    for (k, v) in &entries {
        super::container::put_bytes(&mut out, k);
        super::container::put_bytes(&mut out, v);
    }
    super::container::put_long(&mut out, 0);
    out.extend_from_slice(bytes.get(end..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn java_vectors() {
        // AvroSchemaUtil.sanitize as Java 1.10 computes it for ASCII names.
        let cases = [
            ("9x", "_9x"),
            ("x_", "x_"),
            ("a.b", "a_x2Eb"),
            ("a#b", "a_x23b"),
            ("event-time_day", "event_x2Dtime_day"),
            ("user id", "user_x20id"),
            ("1col", "_1col"),
            ("s.a_bucket", "s_x2Ea_bucket"),
            ("", ""),
        ];
        for (name, want) in cases {
            assert_eq!(sanitize(name), want, "{name}");
        }
    }

    #[test]
    fn non_ascii_is_escaped_by_utf16_unit() {
        // Java keeps Unicode letters (not Avro names); the same escaping makes them Avro names.
        assert_eq!(sanitize("café"), "caf_xE9");
        assert_eq!(sanitize("☃"), "_x2603");
        assert_eq!(sanitize("a😀"), "a_xD83D_xDE00", "two UTF-16 units");
    }

    proptest! {
        #[test]
        fn sanitized_names_are_avro_names_and_fixed_points(name in "\\PC{1,12}") {
            let safe = sanitize(&name).into_owned();
            prop_assert_eq!(sanitize(&safe).into_owned(), safe.clone(), "idempotent");
            let schema = format!(
                r#"{{"type":"record","name":"r","fields":[{{"name":{},"type":"int"}}]}}"#,
                Value::String(safe.clone())
            );
            prop_assert!(AvroSchema::parse_str(&schema).is_ok(), "apache-avro accepts {}", safe);
        }

        #[test]
        fn avro_names_are_kept(name in "[A-Za-z_][A-Za-z0-9_]{0,10}") {
            prop_assert_eq!(sanitize(&name).into_owned(), name.clone());
        }
    }
}
