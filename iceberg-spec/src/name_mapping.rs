//! [`NameMapping`]: the spec's "Column Projection" name mapping
//! (`schema.name-mapping.default`), by which readers find the columns of data files written
//! without field ids, and its update when the schema changes (Java's `MappingUtil.update`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::types::{NestedField, Type};

/// The table property holding the default name mapping (JSON).
pub const DEFAULT_NAME_MAPPING: &str = "schema.name-mapping.default";

/// One mapped field: the names a file may use for field `field_id`, and its children.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MappedField {
    /// The field id the names resolve to (absent: the names are ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_id: Option<i32>,
    /// The names, any of which a file's column may have.
    pub names: Vec<String>,
    /// Mappings of the field's children (a struct's fields, a list's element, a map's key
    /// and value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<MappedField>,
}

/// A name mapping: the top-level mapped fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NameMapping {
    /// The top-level mapped fields.
    pub fields: Vec<MappedField>,
}

impl NameMapping {
    /// The mapping of every field of `schema` to its current name (what Java's
    /// `MappingUtil.create` and PyIceberg's `create_mapping_from_schema` make).
    pub fn from_schema(schema: &Schema) -> Self {
        Self {
            fields: schema.fields().iter().map(mapping_of).collect(),
        }
    }

    /// Parses the spec's JSON form.
    ///
    /// # Errors
    /// [`Error::InvalidProperty`] when the text is not a name mapping.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::InvalidProperty {
            key: DEFAULT_NAME_MAPPING.into(),
            value: text.chars().take(200).collect(),
            reason: format!("not a name mapping: {e}"),
        })
    }

    /// The spec's JSON form.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.fields).unwrap_or_else(|_| "[]".into())
    }

    /// The mapping after a schema change to `schema`, as Java updates it: a renamed field
    /// keeps its old names and gains the new one (files written before still resolve), a
    /// field added after `last_column_id` (the base's) gets an entry under its parent, a
    /// name taken by another field of the same struct leaves the field that had it, and a
    /// deleted field's entry stays.
    pub fn updated(&self, schema: &Schema, last_column_id: i32) -> Self {
        Self {
            fields: update_level(&self.fields, schema.fields(), last_column_id),
        }
    }
}

fn update_level(mapped: &[MappedField], fields: &[NestedField], last_id: i32) -> Vec<MappedField> {
    let mut out: Vec<MappedField> = mapped
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(field) = m.field_id.and_then(|id| fields.iter().find(|f| f.id == id)) {
                if !m.names.contains(&field.name) {
                    m.names.push(field.name.clone());
                }
                m.fields = update_level(&m.fields, &children(&field.field_type), last_id);
            }
            m
        })
        .collect();
    let added: Vec<&NestedField> = fields
        .iter()
        .filter(|f| f.id > last_id && !mapped.iter().any(|m| m.field_id == Some(f.id)))
        .collect();
    // A name now another field's (a rename or an add that took it) leaves its old owner.
    for m in &mut out {
        m.names.retain(|name| {
            fields
                .iter()
                .find(|f| &f.name == name)
                .is_none_or(|f| Some(f.id) == m.field_id)
        });
    }
    out.extend(added.into_iter().map(mapping_of));
    out
}

/// The mapping of `field` and its children to their current names.
fn mapping_of(field: &NestedField) -> MappedField {
    MappedField {
        field_id: Some(field.id),
        names: vec![field.name.clone()],
        fields: children(&field.field_type).iter().map(mapping_of).collect(),
    }
}

/// The fields a mapping nests under a field of type `ty`.
fn children(ty: &Type) -> Vec<NestedField> {
    match ty {
        Type::Primitive(_) => Vec::new(),
        Type::Struct(s) => s.fields.clone(),
        Type::List(l) => vec![(*l.element_field).clone()],
        Type::Map(m) => vec![(*m.key_field).clone(), (*m.value_field).clone()],
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::evolution::UpdateSchema;
    use crate::types::{ListType, PrimitiveType as P, StructType};

    fn base() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", P::Long),
                NestedField::optional(2, "name", P::String),
                NestedField::optional(
                    3,
                    "point",
                    StructType::new(vec![NestedField::optional(4, "x", P::Int)]),
                ),
                NestedField::optional(5, "tags", ListType::new(6, P::String, true)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn the_json_is_the_specs_and_round_trips() {
        let mapping = NameMapping::from_schema(&base());
        let json: serde_json::Value = serde_json::from_str(&mapping.to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"field-id": 1, "names": ["id"]},
                {"field-id": 2, "names": ["name"]},
                {"field-id": 3, "names": ["point"], "fields": [{"field-id": 4, "names": ["x"]}]},
                {"field-id": 5, "names": ["tags"], "fields": [{"field-id": 6, "names": ["element"]}]},
            ])
        );
        assert_eq!(NameMapping::from_json(&mapping.to_json()).unwrap(), mapping);
        // PyIceberg's form without ids for some names parses too.
        let loose = NameMapping::from_json(r#"[{"names": ["a", "b"]}]"#).unwrap();
        assert_eq!(loose.fields[0].field_id, None);
        assert!(NameMapping::from_json("{}").is_err());
    }

    #[test]
    fn renames_keep_old_names_adds_get_entries_and_taken_names_move() {
        let mapping = NameMapping::from_schema(&base());
        let mut u = UpdateSchema::new(&base(), 6);
        u.rename_column("name", "label").unwrap();
        u.rename_column("point.x", "east").unwrap();
        u.add_column(Some("point"), "y", P::Int.into(), None)
            .unwrap();
        u.delete_column("tags").unwrap();
        let first = u.apply().unwrap();
        let updated = mapping.updated(&first.schema, 6);
        // A later change gives the old name to a new column.
        let mut u = UpdateSchema::new(&first.schema, first.last_column_id);
        u.add_column(None, "name", P::Long.into(), None).unwrap();
        let updated = updated.updated(&u.apply().unwrap().schema, first.last_column_id);
        let names = |id: i32, level: &[MappedField]| -> Vec<String> {
            level
                .iter()
                .find(|m| m.field_id == Some(id))
                .map(|m| m.names.clone())
                .unwrap_or_default()
        };
        // `name` now belongs to the new column 8, so the renamed column 2 keeps only `label`.
        assert_eq!(names(2, &updated.fields), ["label"]);
        assert_eq!(names(8, &updated.fields), ["name"]);
        let point = updated
            .fields
            .iter()
            .find(|m| m.field_id == Some(3))
            .unwrap();
        assert_eq!(names(4, &point.fields), ["x", "east"]);
        assert_eq!(names(7, &point.fields), ["y"]);
        // A deleted column's entry stays, for files that still have it.
        assert_eq!(names(5, &updated.fields), ["tags"]);
    }
}
