//! Java's short column names (`IndexByName`): a full name without the `element` of a list
//! or the `value` of a map whose element or value is a struct, so that `points.x` names
//! `points.element.x` and `m.a` names `m.value.a` (a map's key keeps `key`). Java's
//! `UpdateSchema` takes either for the table's columns.

use std::collections::BTreeMap;

use crate::schema::Schema;
use crate::types::{NestedField, Type};

/// The short names of a schema's fields.
#[derive(Debug, Clone, Default)]
pub(super) struct ShortNames {
    /// Every field's short name by id (a struct element or value has its container's).
    by_id: BTreeMap<i32, String>,
    /// The short names that are not also a full name, to their field.
    ids: BTreeMap<String, i32>,
}

impl ShortNames {
    /// The short names of `schema`.
    pub(super) fn of(schema: &Schema) -> Self {
        let mut by_id = BTreeMap::new();
        index_struct(schema.fields(), "", &mut by_id);
        let mut ids = BTreeMap::new();
        for (id, short) in &by_id {
            let full = schema.field_name(*id).unwrap_or_default();
            if short != full && schema.field_id_by_name(short).is_none() {
                ids.entry(short.clone()).or_insert(*id);
            }
        }
        Self { by_id, ids }
    }

    /// The field a short name names, unless a full name already does.
    pub(super) fn id(&self, name: &str, ignore_case: bool) -> Option<i32> {
        if !ignore_case {
            return self.ids.get(name).copied();
        }
        self.ids
            .iter()
            .find(|(short, _)| short.eq_ignore_ascii_case(name))
            .map(|(_, id)| *id)
    }

    /// The short name of field `id` (new fields of the struct `id` are named under it).
    pub(super) fn of_id(&self, id: i32) -> Option<&str> {
        self.by_id.get(&id).map(String::as_str)
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn index_struct(fields: &[NestedField], prefix: &str, out: &mut BTreeMap<i32, String>) {
    for f in fields {
        let name = join(prefix, &f.name);
        out.insert(f.id, name.clone());
        index_nested(&f.field_type, &name, out);
    }
}

fn index_nested(t: &Type, name: &str, out: &mut BTreeMap<i32, String>) {
    match t {
        Type::Primitive(_) => {}
        Type::Struct(s) => index_struct(&s.fields, name, out),
        Type::List(l) => index_inner(&l.element_field, name, false, out),
        Type::Map(m) => {
            // A key keeps its segment whatever its type (Java's `beforeMapKey`).
            index_inner(&m.key_field, name, true, out);
            index_inner(&m.value_field, name, false, out);
        }
    }
}

/// A list's element or a map's key or value: a struct element or value adds no segment;
/// anything else (and every key) keeps its own.
fn index_inner(f: &NestedField, container: &str, keep: bool, out: &mut BTreeMap<i32, String>) {
    let short = if !keep && matches!(f.field_type, Type::Struct(_)) {
        container.to_string()
    } else {
        join(container, &f.name)
    };
    out.insert(f.id, short.clone());
    index_nested(&f.field_type, &short, out);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::{ListType, MapType, PrimitiveType, StructType};

    /// Java's `IndexByName` short names: struct elements and values drop their segment,
    /// lists of lists and primitive values keep it, a full name always wins.
    #[test]
    fn short_names_are_javas() {
        let point = || {
            Type::Struct(StructType::new(vec![NestedField::optional(
                4,
                "x",
                PrimitiveType::Int,
            )]))
        };
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "points", Type::List(ListType::new(3, point(), false))),
                NestedField::optional(
                    5,
                    "m",
                    Type::Map(MapType::new(
                        6,
                        PrimitiveType::String,
                        7,
                        point_with(8),
                        false,
                    )),
                ),
                NestedField::optional(
                    9,
                    "nested",
                    Type::List(ListType::new(
                        10,
                        Type::List(ListType::new(11, point_with(12), false)),
                        false,
                    )),
                ),
                NestedField::optional(
                    13,
                    "tags",
                    Type::Map(MapType::new(
                        14,
                        PrimitiveType::String,
                        15,
                        PrimitiveType::Int,
                        false,
                    )),
                ),
            ],
        )
        .unwrap();
        let short = ShortNames::of(&schema);
        assert_eq!(short.id("points.x", false), Some(4));
        assert_eq!(short.id("POINTS.X", true), Some(4));
        assert_eq!(short.id("POINTS.X", false), None);
        assert_eq!(short.id("m.x", false), Some(8));
        assert_eq!(short.id("nested.element.x", false), Some(12));
        assert_eq!(short.id("nested.x", false), None);
        // Primitive values keep their segment: nothing shorter to name.
        assert_eq!(short.of_id(15), Some("tags.value"));
        assert_eq!(short.id("tags.value", false), None);
        // A full name is no short alias.
        assert_eq!(short.id("points", false), None);
        assert_eq!(short.of_id(3), Some("points"));
        assert_eq!(short.of_id(7), Some("m"));
        assert_eq!(short.of_id(11), Some("nested.element"));

        // A struct key keeps `key`: `k.a` is the value's `a`, `k.key.a` the key's.
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "k",
                Type::Map(MapType::new(2, point_with(3), 4, point_with(5), false)),
            )],
        )
        .unwrap();
        let short = ShortNames::of(&schema);
        assert_eq!(short.id("k.x", false), Some(5));
        assert_eq!(short.of_id(3), Some("k.key.x"));
        assert_eq!(short.id("k.key.x", false), None, "a full name");

        fn point_with(id: i32) -> Type {
            Type::Struct(StructType::new(vec![NestedField::optional(
                id,
                "x",
                PrimitiveType::Int,
            )]))
        }
    }
}
