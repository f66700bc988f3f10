//! A table schema: a struct with an id, identifier fields, and lookup indexes built once.
//!
//! Spec: "Schemas", "Schema Evolution" (identifier fields), Appendix C (JSON).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::types::{NestedField, PrimitiveType, StructType, Type};

/// Where a field sits in the schema, kept in the id index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    /// The field itself (with its children).
    pub field: NestedField,
    /// Dotted full name, as Java names it (`a.b`, `tags.element`, `m.key`, `m.value`).
    pub full_name: String,
    /// Id of the enclosing field, if any.
    pub parent_id: Option<i32>,
    /// True when some ancestor is a list or a map.
    pub in_list_or_map: bool,
}

/// A schema: an id'd struct with identifier fields and indexes by id and name.
#[derive(Debug, Clone)]
pub struct Schema {
    schema_id: i32,
    root: StructType,
    identifier_field_ids: Vec<i32>,
    by_id: HashMap<i32, FieldInfo>,
    by_name: HashMap<String, i32>,
    highest_field_id: i32,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.schema_id == other.schema_id
            && self.root == other.root
            && self.identifier_field_ids == other.identifier_field_ids
    }
}

impl Eq for Schema {}

impl Schema {
    /// A validated schema of these top-level fields.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] on duplicate ids or duplicate sibling names.
    pub fn new(schema_id: i32, fields: Vec<NestedField>) -> Result<Self> {
        Self::with_identifier_fields(schema_id, fields, Vec::new())
    }

    /// A validated schema with identifier fields.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] on duplicate ids, duplicate sibling names, or an identifier
    /// field that is missing, optional, not primitive, floating point, or inside a list/map.
    pub fn with_identifier_fields(
        schema_id: i32,
        fields: Vec<NestedField>,
        identifier_field_ids: Vec<i32>,
    ) -> Result<Self> {
        let root = StructType::new(fields);
        let mut by_id = HashMap::new();
        let mut by_name = HashMap::new();
        index_struct(&root, "", None, false, &mut by_id, &mut by_name)?;
        let highest_field_id = by_id.keys().copied().max().unwrap_or(0);
        let schema = Self {
            schema_id,
            root,
            identifier_field_ids,
            by_id,
            by_name,
            highest_field_id,
        };
        schema.validate_identifier_fields()?;
        Ok(schema)
    }

    fn validate_identifier_fields(&self) -> Result<()> {
        for &id in &self.identifier_field_ids {
            let info = self.by_id.get(&id).ok_or_else(|| {
                Error::invalid_schema(format!("identifier field id {id} is not in the schema"))
            })?;
            let name = &info.full_name;
            let prim = info.field.field_type.as_primitive().ok_or_else(|| {
                Error::invalid_schema(format!("identifier field `{name}` is not primitive"))
            })?;
            if prim.is_floating() {
                return Err(Error::invalid_schema(format!(
                    "identifier field `{name}` cannot be float or double"
                )));
            }
            if !info.field.required {
                return Err(Error::invalid_schema(format!(
                    "identifier field `{name}` must be required"
                )));
            }
            if info.in_list_or_map {
                return Err(Error::invalid_schema(format!(
                    "identifier field `{name}` cannot be nested in a list or map"
                )));
            }
            let mut parent = info.parent_id;
            while let Some(pid) = parent {
                let p = &self.by_id[&pid];
                if !p.field.required {
                    return Err(Error::invalid_schema(format!(
                        "identifier field `{name}` is inside optional struct `{}`",
                        p.full_name
                    )));
                }
                parent = p.parent_id;
            }
        }
        Ok(())
    }

    /// The schema id.
    pub fn schema_id(&self) -> i32 {
        self.schema_id
    }

    /// The same schema under another id.
    pub fn with_schema_id(mut self, schema_id: i32) -> Self {
        self.schema_id = schema_id;
        self
    }

    /// The top-level fields.
    pub fn fields(&self) -> &[NestedField] {
        &self.root.fields
    }

    /// The schema as a struct type.
    pub fn as_struct(&self) -> &StructType {
        &self.root
    }

    /// Ids of the identifier (row key) fields.
    pub fn identifier_field_ids(&self) -> &[i32] {
        &self.identifier_field_ids
    }

    /// The highest field id anywhere in the schema (0 when empty).
    pub fn highest_field_id(&self) -> i32 {
        self.highest_field_id
    }

    /// The field with this id, at any depth.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.by_id.get(&id).map(|i| &i.field)
    }

    /// Index entry of the field with this id.
    pub fn field_info(&self, id: i32) -> Option<&FieldInfo> {
        self.by_id.get(&id)
    }

    /// The field with this dotted full name (`a.b`, `tags.element`).
    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.by_name.get(name).and_then(|id| self.field_by_id(*id))
    }

    /// The id of the field with this dotted full name.
    pub fn field_id_by_name(&self, name: &str) -> Option<i32> {
        self.by_name.get(name).copied()
    }

    /// The dotted full name of the field with this id.
    pub fn field_name(&self, id: i32) -> Option<&str> {
        self.by_id.get(&id).map(|i| i.full_name.as_str())
    }

    /// The primitive type of the field with this id.
    ///
    /// # Errors
    /// [`Error::FieldNotFound`], or [`Error::InvalidSchema`] when the field is nested.
    pub fn primitive_type(&self, id: i32) -> Result<&PrimitiveType> {
        let f = self.field_by_id(id).ok_or(Error::FieldNotFound { id })?;
        f.field_type.as_primitive().ok_or_else(|| {
            Error::invalid_schema(format!("field `{}` (id {id}) is not primitive", f.name))
        })
    }

    /// Every field id with its info, breadth first (top-level fields first), as Java walks them.
    pub fn fields_breadth_first(&self) -> Vec<&FieldInfo> {
        let mut out = Vec::with_capacity(self.by_id.len());
        let mut queue: std::collections::VecDeque<&NestedField> = self.root.fields.iter().collect();
        while let Some(f) = queue.pop_front() {
            if let Some(info) = self.by_id.get(&f.id) {
                out.push(info);
            }
            match &f.field_type {
                Type::Struct(s) => queue.extend(s.fields.iter()),
                Type::List(l) => queue.push_back(&l.element_field),
                Type::Map(m) => {
                    queue.push_back(&m.key_field);
                    queue.push_back(&m.value_field);
                }
                Type::Primitive(_) => {}
            }
        }
        out
    }

    /// The lowest format version that allows every type and default in this schema: an
    /// `initial-default` needs v3 (older readers would not fill it in); a `write-default`
    /// alone does not (the spec calls it forward-compatible, and Java writes it on v2).
    pub fn min_format_version(&self) -> u8 {
        let types = Type::Struct(self.root.clone()).min_format_version();
        let defaults = self
            .by_id
            .values()
            .any(|i| i.field.initial_default.is_some());
        if defaults { 3 } else { types }
    }

    /// Parses the spec's schema JSON object.
    ///
    /// # Errors
    /// [`Error::InvalidType`] / [`Error::InvalidSchema`] naming the problem.
    pub fn from_json(value: &Value) -> Result<Self> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::invalid_schema("a schema is a JSON object"))?;
        let schema_id = match obj.get("schema-id") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| Error::invalid_schema("`schema-id` must be an int"))?,
        };
        let ids = match obj.get("identifier-field-ids") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_i64()
                        .and_then(|v| i32::try_from(v).ok())
                        .ok_or_else(|| Error::invalid_schema("`identifier-field-ids` must be ints"))
                })
                .collect::<Result<Vec<_>>>()?,
            Some(_) => {
                return Err(Error::invalid_schema(
                    "`identifier-field-ids` must be a list",
                ));
            }
        };
        let root = match Type::from_json(value)? {
            Type::Struct(s) => s,
            _ => return Err(Error::invalid_schema("a schema must be a struct")),
        };
        Self::with_identifier_fields(schema_id, root.fields, ids)
    }

    /// The spec's schema JSON object (Java's key order).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "struct".into());
        m.insert("schema-id".into(), self.schema_id.into());
        if !self.identifier_field_ids.is_empty() {
            m.insert(
                "identifier-field-ids".into(),
                Value::Array(
                    self.identifier_field_ids
                        .iter()
                        .map(|i| (*i).into())
                        .collect(),
                ),
            );
        }
        m.insert(
            "fields".into(),
            Value::Array(self.root.fields.iter().map(NestedField::to_json).collect()),
        );
        Value::Object(m)
    }
}

fn index_struct(
    s: &StructType,
    prefix: &str,
    parent_id: Option<i32>,
    in_list_or_map: bool,
    by_id: &mut HashMap<i32, FieldInfo>,
    by_name: &mut HashMap<String, i32>,
) -> Result<()> {
    let mut names = HashSet::new();
    for f in &s.fields {
        if !names.insert(f.name.as_str()) {
            return Err(Error::invalid_schema(format!(
                "duplicate field name `{}{}`",
                prefix, f.name
            )));
        }
        index_field(f, prefix, parent_id, in_list_or_map, by_id, by_name)?;
    }
    Ok(())
}

fn index_field(
    f: &NestedField,
    prefix: &str,
    parent_id: Option<i32>,
    in_list_or_map: bool,
    by_id: &mut HashMap<i32, FieldInfo>,
    by_name: &mut HashMap<String, i32>,
) -> Result<()> {
    let full_name = format!("{prefix}{}", f.name);
    if let Some(prev) = by_id.get(&f.id) {
        return Err(Error::invalid_schema(format!(
            "field id {} is used by both `{}` and `{full_name}`",
            f.id, prev.full_name
        )));
    }
    if f.field_type == Type::Primitive(PrimitiveType::Unknown) && f.required {
        return Err(Error::invalid_schema(format!(
            "field `{full_name}` of type unknown must be optional"
        )));
    }
    by_id.insert(
        f.id,
        FieldInfo {
            field: f.clone(),
            full_name: full_name.clone(),
            parent_id,
            in_list_or_map,
        },
    );
    // As Java's `IndexByName`: two fields of one full name (a column `a.b` beside struct
    // `a`'s field `b`) make a schema Java and PyIceberg refuse to load.
    if let Some(prev) = by_name.insert(full_name.clone(), f.id) {
        return Err(Error::invalid_schema(format!(
            "multiple fields for name `{full_name}`: {prev} and {}",
            f.id
        )));
    }
    let child_prefix = format!("{full_name}.");
    match &f.field_type {
        Type::Primitive(_) => {}
        Type::Struct(s) => {
            index_struct(s, &child_prefix, Some(f.id), in_list_or_map, by_id, by_name)?
        }
        Type::List(l) => {
            index_field(
                &l.element_field,
                &child_prefix,
                Some(f.id),
                true,
                by_id,
                by_name,
            )?;
        }
        Type::Map(m) => {
            if !m.key_field.required {
                return Err(Error::invalid_schema(format!(
                    "map `{full_name}` has an optional key"
                )));
            }
            index_field(
                &m.key_field,
                &child_prefix,
                Some(f.id),
                true,
                by_id,
                by_name,
            )?;
            index_field(
                &m.value_field,
                &child_prefix,
                Some(f.id),
                true,
                by_id,
                by_name,
            )?;
        }
    }
    Ok(())
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Schema::from_json(&v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::{ListType, MapType};

    fn sample() -> Schema {
        Schema::with_identifier_fields(
            3,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(
                    2,
                    "point",
                    Type::Struct(StructType::new(vec![
                        NestedField::required(3, "x", PrimitiveType::Double),
                        NestedField::optional(4, "y", PrimitiveType::Double),
                    ])),
                ),
                NestedField::optional(
                    5,
                    "tags",
                    Type::List(ListType::new(6, PrimitiveType::String, false)),
                ),
                NestedField::optional(
                    7,
                    "props",
                    Type::Map(MapType::new(
                        8,
                        PrimitiveType::String,
                        9,
                        PrimitiveType::Int,
                        true,
                    )),
                ),
            ],
            vec![1],
        )
        .unwrap()
    }

    #[test]
    fn indexes_by_id_and_full_name() {
        let s = sample();
        assert_eq!(s.highest_field_id(), 9);
        assert_eq!(s.field_name(4), Some("point.y"));
        assert_eq!(s.field_id_by_name("tags.element"), Some(6));
        assert_eq!(s.field_id_by_name("props.value"), Some(9));
        assert!(s.field_info(6).unwrap().in_list_or_map);
        assert!(!s.field_info(3).unwrap().in_list_or_map);
        let order: Vec<i32> = s
            .fields_breadth_first()
            .iter()
            .map(|i| i.field.id)
            .collect();
        assert_eq!(order, vec![1, 2, 5, 7, 3, 4, 6, 8, 9]);
    }

    #[test]
    fn json_round_trip() {
        let s = sample();
        let json = s.to_json();
        assert_eq!(json["identifier-field-ids"], serde_json::json!([1]));
        assert_eq!(Schema::from_json(&json).unwrap(), s);
    }

    #[test]
    fn duplicate_ids_are_refused_with_both_names() {
        let err = Schema::new(
            0,
            vec![
                NestedField::required(1, "a", PrimitiveType::Int),
                NestedField::required(1, "b", PrimitiveType::Int),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`a`") && err.contains("`b`"), "{err}");
    }

    /// A top-level `a.b` beside struct `a`'s field `b` is refused, as Java's and
    /// PyIceberg's schemas refuse it (a table with it would load nowhere else).
    #[test]
    fn two_fields_of_one_full_name_are_refused() {
        let err = Schema::new(
            0,
            vec![
                NestedField::optional(
                    1,
                    "a",
                    crate::types::StructType::new(vec![NestedField::optional(
                        2,
                        "b",
                        PrimitiveType::Int,
                    )]),
                ),
                NestedField::optional(3, "a.b", PrimitiveType::Int),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`a.b`") && err.contains('2') && err.contains('3'),
            "{err}"
        );
    }

    #[test]
    fn identifier_rules() {
        let optional = Schema::with_identifier_fields(
            0,
            vec![NestedField::optional(1, "a", PrimitiveType::Int)],
            vec![1],
        );
        assert!(optional.is_err());
        let floating = Schema::with_identifier_fields(
            0,
            vec![NestedField::required(1, "a", PrimitiveType::Float)],
            vec![1],
        );
        assert!(floating.is_err());
        let missing = Schema::with_identifier_fields(0, vec![], vec![1]);
        assert!(missing.is_err());
    }
}
