//! The Avro schemas of manifests and manifest lists, per format version, as Java writes them.
//!
//! Every field carries `field-id`, arrays `element-id`, int-keyed maps are arrays of
//! `k<id>_v<id>` records with `logicalType: map`, optional fields are `["null", T]` unions
//! with a null default, and named types are defined once.

use std::collections::HashSet;

use iceberg_spec::{FormatVersion, PrimitiveType, StructType, Type};
use serde_json::{Value, json};

fn optional(name: &str, id: i32, ty: Value) -> Value {
    json!({"name": name, "type": ["null", ty], "default": null, "field-id": id})
}

fn required(name: &str, id: i32, ty: Value) -> Value {
    json!({"name": name, "type": ty, "field-id": id})
}

fn int_map(name: &str, id: i32, key_id: i32, value_id: i32, value_type: &str) -> Value {
    optional(
        name,
        id,
        json!({
            "type": "array",
            "logicalType": "map",
            "items": {
                "type": "record",
                "name": format!("k{key_id}_v{value_id}"),
                "fields": [
                    {"name": "key", "type": "int", "field-id": key_id},
                    {"name": "value", "type": value_type, "field-id": value_id},
                ],
            },
        }),
    )
}

fn list(name: &str, id: i32, element_id: i32, element: &str) -> Value {
    optional(
        name,
        id,
        json!({"type": "array", "items": element, "element-id": element_id}),
    )
}

/// The Avro type of a partition value, defining named types once.
fn primitive_avro(ty: &PrimitiveType, defined: &mut HashSet<String>) -> Value {
    let mut named = |name: String, def: Value| {
        if defined.insert(name.clone()) {
            def
        } else {
            Value::String(name)
        }
    };
    match ty {
        PrimitiveType::Boolean => json!("boolean"),
        PrimitiveType::Int => json!("int"),
        PrimitiveType::Long => json!("long"),
        PrimitiveType::Float => json!("float"),
        PrimitiveType::Double => json!("double"),
        PrimitiveType::Decimal { precision, scale } => {
            let name = format!("decimal_{precision}_{scale}");
            named(
                name.clone(),
                json!({"type": "fixed", "name": name,
                       "size": PrimitiveType::decimal_required_bytes(*precision),
                       "logicalType": "decimal", "precision": precision, "scale": scale}),
            )
        }
        PrimitiveType::Date => json!({"type": "int", "logicalType": "date"}),
        PrimitiveType::Time => json!({"type": "long", "logicalType": "time-micros"}),
        PrimitiveType::Timestamp => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
        }
        PrimitiveType::Timestamptz => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})
        }
        PrimitiveType::TimestampNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": false})
        }
        PrimitiveType::TimestamptzNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": true})
        }
        PrimitiveType::String => json!("string"),
        PrimitiveType::Uuid => named(
            "uuid_fixed".into(),
            json!({"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}),
        ),
        PrimitiveType::Fixed(len) => {
            let name = format!("fixed_{len}");
            named(
                name.clone(),
                json!({"type": "fixed", "name": name, "size": len}),
            )
        }
        PrimitiveType::Binary
        | PrimitiveType::Unknown
        | PrimitiveType::Variant
        | PrimitiveType::Geometry { .. }
        | PrimitiveType::Geography { .. } => json!("bytes"),
    }
}

/// The `r102` partition record for a partition struct type.
fn partition_record(partition_type: &StructType) -> Value {
    let mut defined = HashSet::new();
    let fields: Vec<Value> = partition_type
        .fields
        .iter()
        .map(|f| {
            let ty = match &f.field_type {
                Type::Primitive(p) => primitive_avro(p, &mut defined),
                // Partition result types are always primitive.
                _ => json!("bytes"),
            };
            // Java's AvroSchemaUtil.makeCompatibleName, keeping the Iceberg name beside it.
            let name = super::names::sanitize(&f.name);
            let mut field = match &f.field_type {
                // Always null (a v1 void field whose source was dropped): Java writes the
                // Avro `null` type itself, not an option of it.
                Type::Primitive(PrimitiveType::Unknown) => {
                    json!({"name": name, "type": "null", "default": null, "field-id": f.id})
                }
                _ => optional(&name, f.id, ty),
            };
            if name != f.name.as_str() {
                field[super::names::ICEBERG_FIELD_NAME_PROP] = Value::String(f.name.clone());
            }
            field
        })
        .collect();
    json!({"type": "record", "name": "r102", "fields": fields})
}

/// The `manifest_entry` schema of a data or delete manifest.
pub(crate) fn manifest_entry_schema(version: FormatVersion, partition_type: &StructType) -> Value {
    let v1 = version == FormatVersion::V1;
    let v3 = version == FormatVersion::V3;
    let mut df = Vec::new();
    if !v1 {
        df.push(required("content", 134, json!("int")));
    }
    df.push(required("file_path", 100, json!("string")));
    df.push(required("file_format", 101, json!("string")));
    df.push(
        json!({"name": "partition", "type": partition_record(partition_type), "field-id": 102}),
    );
    df.push(required("record_count", 103, json!("long")));
    df.push(required("file_size_in_bytes", 104, json!("long")));
    if v1 {
        df.push(required("block_size_in_bytes", 105, json!("long")));
    }
    df.push(int_map("column_sizes", 108, 117, 118, "long"));
    df.push(int_map("value_counts", 109, 119, 120, "long"));
    df.push(int_map("null_value_counts", 110, 121, 122, "long"));
    df.push(int_map("nan_value_counts", 137, 138, 139, "long"));
    df.push(int_map("lower_bounds", 125, 126, 127, "bytes"));
    df.push(int_map("upper_bounds", 128, 129, 130, "bytes"));
    df.push(optional("key_metadata", 131, json!("bytes")));
    df.push(list("split_offsets", 132, 133, "long"));
    if !v1 {
        df.push(list("equality_ids", 135, 136, "int"));
    }
    df.push(optional("sort_order_id", 140, json!("int")));
    if v3 {
        df.push(optional("first_row_id", 142, json!("long")));
    }
    if !v1 {
        df.push(optional("referenced_data_file", 143, json!("string")));
    }
    if v3 {
        df.push(optional("content_offset", 144, json!("long")));
        df.push(optional("content_size_in_bytes", 145, json!("long")));
    }
    let mut fields = vec![
        required("status", 0, json!("int")),
        optional("snapshot_id", 1, json!("long")),
    ];
    if !v1 {
        fields.push(optional("sequence_number", 3, json!("long")));
        fields.push(optional("file_sequence_number", 4, json!("long")));
    }
    fields.push(json!({"name": "data_file", "type": {"type": "record", "name": "r2", "fields": df}, "field-id": 2}));
    json!({"type": "record", "name": "manifest_entry", "fields": fields})
}

/// The `manifest_file` schema of a manifest list.
pub(crate) fn manifest_list_schema(version: FormatVersion) -> Value {
    let summary = json!({"type": "array", "element-id": 508, "items": {
    "type": "record", "name": "r508", "fields": [
        required("contains_null", 509, json!("boolean")),
        optional("contains_nan", 518, json!("boolean")),
        optional("lower_bound", 510, json!("bytes")),
        optional("upper_bound", 511, json!("bytes")),
    ]}});
    let mut fields = vec![
        required("manifest_path", 500, json!("string")),
        required("manifest_length", 501, json!("long")),
        required("partition_spec_id", 502, json!("int")),
    ];
    if version == FormatVersion::V1 {
        fields.extend([
            required("added_snapshot_id", 503, json!("long")),
            optional("added_files_count", 504, json!("int")),
            optional("existing_files_count", 505, json!("int")),
            optional("deleted_files_count", 506, json!("int")),
            optional("partitions", 507, summary),
            optional("added_rows_count", 512, json!("long")),
            optional("existing_rows_count", 513, json!("long")),
            optional("deleted_rows_count", 514, json!("long")),
            optional("key_metadata", 519, json!("bytes")),
        ]);
    } else {
        fields.extend([
            required("content", 517, json!("int")),
            required("sequence_number", 515, json!("long")),
            required("min_sequence_number", 516, json!("long")),
            required("added_snapshot_id", 503, json!("long")),
            required("added_files_count", 504, json!("int")),
            required("existing_files_count", 505, json!("int")),
            required("deleted_files_count", 506, json!("int")),
            required("added_rows_count", 512, json!("long")),
            required("existing_rows_count", 513, json!("long")),
            required("deleted_rows_count", 514, json!("long")),
            optional("partitions", 507, summary),
            optional("key_metadata", 519, json!("bytes")),
        ]);
        if version == FormatVersion::V3 {
            fields.push(optional("first_row_id", 520, json!("long")));
        }
    }
    json!({"type": "record", "name": "manifest_file", "fields": fields})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use iceberg_spec::NestedField;

    #[test]
    fn schemas_parse_for_every_version() {
        let pt = StructType::new(vec![
            NestedField::optional(
                1000,
                "a",
                PrimitiveType::Decimal {
                    precision: 9,
                    scale: 2,
                },
            ),
            NestedField::optional(
                1001,
                "b",
                PrimitiveType::Decimal {
                    precision: 9,
                    scale: 2,
                },
            ),
            NestedField::optional(1002, "u", PrimitiveType::Uuid),
            NestedField::optional(1003, "d", PrimitiveType::Date),
        ]);
        for v in [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3] {
            let s = manifest_entry_schema(v, &pt);
            apache_avro::Schema::parse(&s).unwrap();
            apache_avro::Schema::parse(&manifest_list_schema(v)).unwrap();
        }
    }

    #[test]
    fn v2_data_file_has_no_v3_fields() {
        let s = manifest_entry_schema(FormatVersion::V2, &StructType::default()).to_string();
        assert!(!s.contains("first_row_id") && !s.contains("block_size_in_bytes"));
        let s1 = manifest_entry_schema(FormatVersion::V1, &StructType::default()).to_string();
        assert!(s1.contains("block_size_in_bytes") && !s1.contains("\"content\""));
    }
}
