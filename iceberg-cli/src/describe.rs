//! Readable renderings of a table's schema, partition spec and sort order, as text lines
//! and as JSON, shared by `create` and `inspect`.

use iceberg_spec::types::NestedField;
use iceberg_spec::{NullOrder, PartitionSpec, Schema, SortDirection, SortOrder, Transform, Type};
use serde_json::{Value, json};

/// The schema as an indented tree: `  1 id: long (required)`.
pub(crate) fn schema_lines(schema: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for f in schema.fields() {
        field_lines(f, 1, &mut out);
    }
    out
}

fn field_lines(f: &NestedField, depth: usize, out: &mut Vec<String>) {
    let kind = match &f.field_type {
        Type::Primitive(p) => p.to_string(),
        Type::Struct(_) => "struct".into(),
        Type::List(_) => "list".into(),
        Type::Map(_) => "map".into(),
    };
    out.push(format!(
        "{:indent$}{:>4} {}: {kind}{}",
        "",
        f.id,
        f.name,
        if f.required { " (required)" } else { "" },
        indent = (depth - 1) * 4
    ));
    match &f.field_type {
        Type::Struct(s) => s.fields.iter().for_each(|c| field_lines(c, depth + 1, out)),
        Type::List(l) => field_lines(&l.element_field, depth + 1, out),
        Type::Map(m) => {
            field_lines(&m.key_field, depth + 1, out);
            field_lines(&m.value_field, depth + 1, out);
        }
        Type::Primitive(_) => {}
    }
}

/// A transform of a column as Spark writes it: `day(ts)`, `bucket(16, id)`, `id`.
pub(crate) fn term(transform: &Transform, column: &str) -> String {
    match transform {
        Transform::Identity => column.to_string(),
        Transform::Bucket(n) => format!("bucket({n}, {column})"),
        Transform::Truncate(w) => format!("truncate({w}, {column})"),
        other => format!("{other}({column})"),
    }
}

/// `day(ts) as ts_day [1000], bucket(16, id) as id_bucket [1001]`, or `unpartitioned`.
pub(crate) fn spec_text(spec: &PartitionSpec, schema: &Schema) -> String {
    if spec.is_unpartitioned() {
        return "unpartitioned".into();
    }
    spec.fields()
        .iter()
        .map(|f| {
            let col = schema.field_name(f.source_id).unwrap_or("?");
            format!("{} as {} [{}]", term(&f.transform, col), f.name, f.field_id)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `ts desc nulls last, id asc nulls first`, or `unsorted`.
pub(crate) fn sort_text(order: Option<&SortOrder>, schema: &Schema) -> String {
    let Some(order) = order.filter(|o| !o.is_unsorted()) else {
        return "unsorted".into();
    };
    order
        .fields
        .iter()
        .map(|f| {
            let col = schema.field_name(f.source_id).unwrap_or("?");
            format!(
                "{} {} {}",
                term(&f.transform, col),
                match f.direction {
                    SortDirection::Asc => "asc",
                    SortDirection::Desc => "desc",
                },
                match f.null_order {
                    NullOrder::NullsFirst => "nulls first",
                    NullOrder::NullsLast => "nulls last",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The spec as JSON, with source column names.
pub(crate) fn spec_json(spec: &PartitionSpec, schema: &Schema) -> Value {
    json!({
        "spec-id": spec.spec_id(),
        "fields": spec.fields().iter().map(|f| json!({
            "name": f.name,
            "transform": f.transform.to_string(),
            "source-id": f.source_id,
            "source": schema.field_name(f.source_id),
            "field-id": f.field_id,
        })).collect::<Vec<_>>(),
    })
}

/// The sort order as the spec's JSON (`null` when there is none).
pub(crate) fn sort_json(order: Option<&SortOrder>) -> Value {
    order.map_or(Value::Null, |o| {
        serde_json::to_value(o).unwrap_or(Value::Null)
    })
}
