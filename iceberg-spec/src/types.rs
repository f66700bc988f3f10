//! Iceberg data types: primitives, structs, lists and maps, with their JSON form.
//!
//! Spec: "Schemas and Data Types" and Appendix C (JSON serialization).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The largest decimal precision Iceberg allows.
pub const MAX_DECIMAL_PRECISION: u32 = 38;

/// A type written as a single JSON string: the spec's primitives plus `variant`,
/// `geometry` and `geography`, which have no children in the schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// `boolean`.
    Boolean,
    /// `int`: 32-bit signed.
    Int,
    /// `long`: 64-bit signed.
    Long,
    /// `float`: IEEE-754 binary32.
    Float,
    /// `double`: IEEE-754 binary64.
    Double,
    /// `decimal(P,S)`: fixed-point with precision P (at most 38) and scale S.
    Decimal {
        /// Total number of digits.
        precision: u32,
        /// Digits after the point.
        scale: u32,
    },
    /// `date`: days since 1970-01-01.
    Date,
    /// `time`: microseconds since midnight.
    Time,
    /// `timestamp`: microseconds since the epoch, wall clock without zone.
    Timestamp,
    /// `timestamptz`: microseconds since the epoch, UTC instant.
    Timestamptz,
    /// `timestamp_ns` (v3): nanoseconds, wall clock without zone.
    TimestampNs,
    /// `timestamptz_ns` (v3): nanoseconds, UTC instant.
    TimestamptzNs,
    /// `string`: UTF-8 text.
    String,
    /// `uuid`: 16 bytes.
    Uuid,
    /// `fixed[L]`: exactly L bytes.
    Fixed(u64),
    /// `binary`: bytes of any length.
    Binary,
    /// `unknown` (v3): always null, never stored in data files.
    Unknown,
    /// `variant` (v3): semi-structured value.
    Variant,
    /// `geometry(C)` (v3): WKB geometry; `crs` is `None` when the JSON omitted it.
    Geometry {
        /// Coordinate reference system as written, if any.
        crs: Option<String>,
    },
    /// `geography(C, A)` (v3): WKB geography.
    Geography {
        /// Coordinate reference system as written, if any.
        crs: Option<String>,
        /// Edge-interpolation algorithm as written, if any.
        algorithm: Option<String>,
    },
}

impl PrimitiveType {
    /// The lowest format version that allows this type.
    pub fn min_format_version(&self) -> u8 {
        match self {
            Self::TimestampNs
            | Self::TimestamptzNs
            | Self::Unknown
            | Self::Variant
            | Self::Geometry { .. }
            | Self::Geography { .. } => 3,
            _ => 1,
        }
    }

    /// True for float and double, the types that count NaNs.
    pub fn is_floating(&self) -> bool {
        matches!(self, Self::Float | Self::Double)
    }

    /// Bytes needed for a decimal of `precision` digits as a signed fixed (the spec's minBytes(P)).
    pub fn decimal_required_bytes(precision: u32) -> usize {
        // Smallest n with 2^(8n-1) > 10^P - 1, i.e. n = ceil((P*log2(10) + 1) / 8).
        let mut n = 1usize;
        loop {
            let bits = (8 * n - 1) as f64;
            if bits >= (precision as f64) * std::f64::consts::LOG2_10 {
                return n;
            }
            n += 1;
        }
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean => f.write_str("boolean"),
            Self::Int => f.write_str("int"),
            Self::Long => f.write_str("long"),
            Self::Float => f.write_str("float"),
            Self::Double => f.write_str("double"),
            // Java and PyIceberg print a space after the comma; readers accept both.
            Self::Decimal { precision, scale } => write!(f, "decimal({precision}, {scale})"),
            Self::Date => f.write_str("date"),
            Self::Time => f.write_str("time"),
            Self::Timestamp => f.write_str("timestamp"),
            Self::Timestamptz => f.write_str("timestamptz"),
            Self::TimestampNs => f.write_str("timestamp_ns"),
            Self::TimestamptzNs => f.write_str("timestamptz_ns"),
            Self::String => f.write_str("string"),
            Self::Uuid => f.write_str("uuid"),
            Self::Fixed(len) => write!(f, "fixed[{len}]"),
            Self::Binary => f.write_str("binary"),
            Self::Unknown => f.write_str("unknown"),
            Self::Variant => f.write_str("variant"),
            Self::Geometry { crs: None } => f.write_str("geometry"),
            Self::Geometry { crs: Some(crs) } => write!(f, "geometry({crs})"),
            Self::Geography {
                crs: None,
                algorithm: None,
            } => f.write_str("geography"),
            Self::Geography {
                crs: Some(crs),
                algorithm: None,
            } => write!(f, "geography({crs})"),
            Self::Geography {
                crs,
                algorithm: Some(alg),
            } => write!(
                f,
                "geography({}, {alg})",
                crs.as_deref().unwrap_or("OGC:CRS84")
            ),
        }
    }
}

/// Splits `name(args)` into `args` when `s` has that form.
fn args_of<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    s.strip_prefix(name)?
        .trim_start()
        .strip_prefix('(')?
        .strip_suffix(')')
}

impl FromStr for PrimitiveType {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let s = text.trim();
        let simple = match s {
            "boolean" => Some(Self::Boolean),
            "int" => Some(Self::Int),
            "long" => Some(Self::Long),
            "float" => Some(Self::Float),
            "double" => Some(Self::Double),
            "date" => Some(Self::Date),
            "time" => Some(Self::Time),
            "timestamp" => Some(Self::Timestamp),
            "timestamptz" => Some(Self::Timestamptz),
            "timestamp_ns" => Some(Self::TimestampNs),
            "timestamptz_ns" => Some(Self::TimestamptzNs),
            "string" => Some(Self::String),
            "uuid" => Some(Self::Uuid),
            "binary" => Some(Self::Binary),
            "unknown" => Some(Self::Unknown),
            "variant" => Some(Self::Variant),
            "geometry" => Some(Self::Geometry { crs: None }),
            "geography" => Some(Self::Geography {
                crs: None,
                algorithm: None,
            }),
            _ => None,
        };
        if let Some(t) = simple {
            return Ok(t);
        }
        if let Some(args) = args_of(s, "decimal") {
            let (p, sc) = args
                .split_once(',')
                .ok_or_else(|| Error::invalid_type(text, "decimal needs (precision, scale)"))?;
            let precision: u32 = p
                .trim()
                .parse()
                .map_err(|_| Error::invalid_type(text, "decimal precision is not a number"))?;
            let scale: u32 = sc
                .trim()
                .parse()
                .map_err(|_| Error::invalid_type(text, "decimal scale is not a number"))?;
            if precision == 0 || precision > MAX_DECIMAL_PRECISION {
                return Err(Error::invalid_type(
                    text,
                    "decimal precision must be 1..=38",
                ));
            }
            if scale > precision {
                return Err(Error::invalid_type(
                    text,
                    "decimal scale exceeds its precision",
                ));
            }
            return Ok(Self::Decimal { precision, scale });
        }
        if let Some(len) = s.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
            let len: u64 = len
                .trim()
                .parse()
                .map_err(|_| Error::invalid_type(text, "fixed length is not a number"))?;
            if len == 0 {
                return Err(Error::invalid_type(text, "fixed length must be positive"));
            }
            return Ok(Self::Fixed(len));
        }
        if let Some(crs) = args_of(s, "geometry") {
            return Ok(Self::Geometry {
                crs: Some(crs.trim().to_string()),
            });
        }
        if let Some(args) = args_of(s, "geography") {
            let (crs, algorithm) = match args.rsplit_once(',') {
                Some((c, a)) => (c.trim().to_string(), Some(a.trim().to_string())),
                None => (args.trim().to_string(), None),
            };
            return Ok(Self::Geography {
                crs: Some(crs),
                algorithm,
            });
        }
        Err(Error::invalid_type(text, "not an Iceberg type"))
    }
}

/// Any Iceberg type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// A type written as a single string.
    Primitive(PrimitiveType),
    /// A struct of named, id'd fields.
    Struct(StructType),
    /// A list of one element type.
    List(ListType),
    /// A map from keys to values.
    Map(MapType),
}

impl Type {
    /// The primitive inside, if this is one.
    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            Self::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// The struct inside, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            Self::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// True for struct, list and map.
    pub fn is_nested(&self) -> bool {
        !matches!(self, Self::Primitive(_))
    }

    /// The lowest format version that allows this type and everything inside it.
    pub fn min_format_version(&self) -> u8 {
        match self {
            Self::Primitive(p) => p.min_format_version(),
            Self::Struct(s) => s
                .fields
                .iter()
                .map(|f| f.field_type.min_format_version())
                .max()
                .unwrap_or(1),
            Self::List(l) => l.element_field.field_type.min_format_version(),
            Self::Map(m) => m
                .key_field
                .field_type
                .min_format_version()
                .max(m.value_field.field_type.min_format_version()),
        }
    }

    /// Parses the spec's JSON form of a type.
    ///
    /// # Errors
    /// [`Error::InvalidType`] naming the offending JSON.
    pub fn from_json(value: &Value) -> Result<Self> {
        match value {
            Value::String(s) => Ok(Self::Primitive(s.parse()?)),
            Value::Object(obj) => {
                let kind = obj
                    .get("type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::invalid_type(value.to_string(), "missing `type`"))?;
                match kind {
                    "struct" => {
                        let fields =
                            obj.get("fields").and_then(Value::as_array).ok_or_else(|| {
                                Error::invalid_type(value.to_string(), "struct needs `fields`")
                            })?;
                        let fields = fields
                            .iter()
                            .map(NestedField::from_json)
                            .collect::<Result<Vec<_>>>()?;
                        Ok(Self::Struct(StructType::new(fields)))
                    }
                    "list" => {
                        let id = get_i32(obj, "element-id", value)?;
                        let required = get_bool(obj, "element-required", value)?;
                        let element = obj.get("element").ok_or_else(|| {
                            Error::invalid_type(value.to_string(), "list needs `element`")
                        })?;
                        Ok(Self::List(ListType {
                            element_field: Box::new(NestedField::new(
                                id,
                                "element",
                                Type::from_json(element)?,
                                required,
                            )),
                        }))
                    }
                    "map" => {
                        let key_id = get_i32(obj, "key-id", value)?;
                        let value_id = get_i32(obj, "value-id", value)?;
                        let value_required = get_bool(obj, "value-required", value)?;
                        let key = obj.get("key").ok_or_else(|| {
                            Error::invalid_type(value.to_string(), "map needs `key`")
                        })?;
                        let val = obj.get("value").ok_or_else(|| {
                            Error::invalid_type(value.to_string(), "map needs `value`")
                        })?;
                        Ok(Self::Map(MapType {
                            key_field: Box::new(NestedField::new(
                                key_id,
                                "key",
                                Type::from_json(key)?,
                                true,
                            )),
                            value_field: Box::new(NestedField::new(
                                value_id,
                                "value",
                                Type::from_json(val)?,
                                value_required,
                            )),
                        }))
                    }
                    other => Err(Error::invalid_type(
                        value.to_string(),
                        format!("unknown nested type `{other}`"),
                    )),
                }
            }
            other => Err(Error::invalid_type(
                other.to_string(),
                "a type is a string or an object",
            )),
        }
    }

    /// The spec's JSON form of this type.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Primitive(p) => Value::String(p.to_string()),
            Self::Struct(s) => s.to_json(),
            Self::List(l) => {
                let mut m = Map::new();
                m.insert("type".into(), "list".into());
                m.insert("element-id".into(), l.element_field.id.into());
                m.insert("element".into(), l.element_field.field_type.to_json());
                m.insert("element-required".into(), l.element_field.required.into());
                Value::Object(m)
            }
            Self::Map(mt) => {
                let mut m = Map::new();
                m.insert("type".into(), "map".into());
                m.insert("key-id".into(), mt.key_field.id.into());
                m.insert("key".into(), mt.key_field.field_type.to_json());
                m.insert("value-id".into(), mt.value_field.id.into());
                m.insert("value".into(), mt.value_field.field_type.to_json());
                m.insert("value-required".into(), mt.value_field.required.into());
                Value::Object(m)
            }
        }
    }
}

impl From<PrimitiveType> for Type {
    fn from(p: PrimitiveType) -> Self {
        Self::Primitive(p)
    }
}

impl From<StructType> for Type {
    fn from(s: StructType) -> Self {
        Self::Struct(s)
    }
}

impl From<ListType> for Type {
    fn from(l: ListType) -> Self {
        Self::List(l)
    }
}

impl From<MapType> for Type {
    fn from(m: MapType) -> Self {
        Self::Map(m)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Primitive(p) => p.fmt(f),
            Self::Struct(s) => {
                f.write_str("struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", field.name, field.field_type)?;
                }
                f.write_str(">")
            }
            Self::List(l) => write!(f, "list<{}>", l.element_field.field_type),
            Self::Map(m) => write!(
                f,
                "map<{}, {}>",
                m.key_field.field_type, m.value_field.field_type
            ),
        }
    }
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Type::from_json(&v).map_err(serde::de::Error::custom)
    }
}

fn get_i32(obj: &Map<String, Value>, key: &str, whole: &Value) -> Result<i32> {
    obj.get(key)
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| Error::invalid_type(whole.to_string(), format!("`{key}` must be an int")))
}

fn get_bool(obj: &Map<String, Value>, key: &str, whole: &Value) -> Result<bool> {
    obj.get(key)
        .and_then(Value::as_bool)
        .ok_or_else(|| Error::invalid_type(whole.to_string(), format!("`{key}` must be a boolean")))
}

/// A named, id'd field of a struct (also the element of a list and the key/value of a map).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedField {
    /// Field id, unique in the schema.
    pub id: i32,
    /// Field name, unique among its siblings.
    pub name: String,
    /// True when the field may not be null.
    pub required: bool,
    /// The field's type.
    pub field_type: Type,
    /// Optional documentation.
    pub doc: Option<String>,
    /// v3: value for rows written before the field existed, in JSON single-value form.
    pub initial_default: Option<Value>,
    /// v3: value a writer uses when it does not supply one, in JSON single-value form.
    pub write_default: Option<Value>,
}

impl NestedField {
    /// A field with no doc and no defaults.
    pub fn new(
        id: i32,
        name: impl Into<String>,
        field_type: impl Into<Type>,
        required: bool,
    ) -> Self {
        Self {
            id,
            name: name.into(),
            required,
            field_type: field_type.into(),
            doc: None,
            initial_default: None,
            write_default: None,
        }
    }

    /// A required field.
    pub fn required(id: i32, name: impl Into<String>, field_type: impl Into<Type>) -> Self {
        Self::new(id, name, field_type, true)
    }

    /// An optional field.
    pub fn optional(id: i32, name: impl Into<String>, field_type: impl Into<Type>) -> Self {
        Self::new(id, name, field_type, false)
    }

    /// The same field with a doc string.
    pub fn with_doc(mut self, doc: impl Into<String>) -> Self {
        self.doc = Some(doc.into());
        self
    }

    /// Parses a struct field object `{"id", "name", "required", "type", ...}`.
    ///
    /// # Errors
    /// [`Error::InvalidType`] naming the offending JSON.
    pub fn from_json(value: &Value) -> Result<Self> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::invalid_type(value.to_string(), "a field is an object"))?;
        let id = get_i32(obj, "id", value)?;
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid_type(value.to_string(), "field needs a `name`"))?;
        let required = get_bool(obj, "required", value)?;
        let ty = obj
            .get("type")
            .ok_or_else(|| Error::invalid_type(value.to_string(), "field needs a `type`"))?;
        let doc = match obj.get("doc") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(Error::invalid_type(
                    value.to_string(),
                    "`doc` must be a string",
                ));
            }
        };
        Ok(Self {
            id,
            name: name.to_string(),
            required,
            field_type: Type::from_json(ty)?,
            doc,
            // JSON null is no default (Java's `SingleValueParser` reads it as absent).
            initial_default: obj.get("initial-default").filter(|v| !v.is_null()).cloned(),
            write_default: obj.get("write-default").filter(|v| !v.is_null()).cloned(),
        })
    }

    /// The spec's JSON object for this field.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.into());
        m.insert("name".into(), self.name.clone().into());
        m.insert("required".into(), self.required.into());
        m.insert("type".into(), self.field_type.to_json());
        if let Some(doc) = &self.doc {
            m.insert("doc".into(), doc.clone().into());
        }
        if let Some(v) = &self.initial_default {
            m.insert("initial-default".into(), v.clone());
        }
        if let Some(v) = &self.write_default {
            m.insert("write-default".into(), v.clone());
        }
        Value::Object(m)
    }
}

/// A struct: an ordered list of fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StructType {
    /// The fields, in order.
    pub fields: Vec<NestedField>,
}

impl StructType {
    /// A struct of these fields.
    pub fn new(fields: Vec<NestedField>) -> Self {
        Self { fields }
    }

    /// The direct child with this id.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.id == id)
    }

    /// The direct child with this name.
    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The JSON object `{"type": "struct", "fields": [...]}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "struct".into());
        m.insert(
            "fields".into(),
            Value::Array(self.fields.iter().map(NestedField::to_json).collect()),
        );
        Value::Object(m)
    }
}

/// A list type; its element is a field named `element` with the element id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListType {
    /// The element field (id = element-id, required = element-required).
    pub element_field: Box<NestedField>,
}

impl ListType {
    /// A list whose element has this id, type and requiredness.
    pub fn new(element_id: i32, element_type: impl Into<Type>, element_required: bool) -> Self {
        Self {
            element_field: Box::new(NestedField::new(
                element_id,
                "element",
                element_type,
                element_required,
            )),
        }
    }
}

/// A map type; keys are always required.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapType {
    /// The key field (id = key-id, always required).
    pub key_field: Box<NestedField>,
    /// The value field (id = value-id, required = value-required).
    pub value_field: Box<NestedField>,
}

impl MapType {
    /// A map with these key and value ids and types.
    pub fn new(
        key_id: i32,
        key_type: impl Into<Type>,
        value_id: i32,
        value_type: impl Into<Type>,
        value_required: bool,
    ) -> Self {
        Self {
            key_field: Box::new(NestedField::new(key_id, "key", key_type, true)),
            value_field: Box::new(NestedField::new(
                value_id,
                "value",
                value_type,
                value_required,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn primitive_strings_round_trip() {
        for s in [
            "boolean",
            "int",
            "long",
            "float",
            "double",
            "decimal(9, 2)",
            "date",
            "time",
            "timestamp",
            "timestamptz",
            "timestamp_ns",
            "timestamptz_ns",
            "string",
            "uuid",
            "fixed[16]",
            "binary",
            "unknown",
            "variant",
            "geometry",
            "geometry(srid:4326)",
            "geography",
            "geography(srid:4269)",
            "geography(srid:4269, karney)",
        ] {
            let t: PrimitiveType = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
    }

    #[test]
    fn only_struct_list_and_map_are_nested() {
        let long = || Type::Primitive(PrimitiveType::Long);
        assert!(!long().is_nested());
        assert!(Type::Struct(StructType::new(vec![])).is_nested());
        assert!(Type::List(ListType::new(1, long(), true)).is_nested());
        assert!(Type::Map(MapType::new(1, PrimitiveType::String, 2, long(), false)).is_nested());
    }

    #[test]
    fn decimal_without_space_parses() {
        let t: PrimitiveType = "decimal(38,10)".parse().unwrap();
        assert_eq!(
            t,
            PrimitiveType::Decimal {
                precision: 38,
                scale: 10
            }
        );
        assert!("decimal(39,1)".parse::<PrimitiveType>().is_err());
        assert!("decimal(4,5)".parse::<PrimitiveType>().is_err());
        assert!("fixed[0]".parse::<PrimitiveType>().is_err());
        assert!("varchar".parse::<PrimitiveType>().is_err());
    }

    #[test]
    fn decimal_required_bytes_matches_spec_table() {
        let table = [
            (1, 1),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (6, 3),
            (7, 4),
            (9, 4),
            (10, 5),
            (11, 5),
            (12, 6),
            (14, 6),
            (15, 7),
            (16, 7),
            (17, 8),
            (18, 8),
            (19, 9),
            (21, 9),
            (22, 10),
            (23, 10),
            (24, 11),
            (26, 11),
            (27, 12),
            (28, 12),
            (29, 13),
            (31, 13),
            (32, 14),
            (33, 14),
            (34, 15),
            (35, 15),
            (36, 16),
            (38, 16),
        ];
        for (p, bytes) in table {
            assert_eq!(
                PrimitiveType::decimal_required_bytes(p),
                bytes,
                "precision {p}"
            );
        }
    }

    #[test]
    fn nested_json_round_trips() {
        let json = serde_json::json!({
            "type": "struct",
            "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long", "doc": "the id"},
                {"id": 2, "name": "tags", "required": false, "type":
                    {"type": "list", "element-id": 4, "element": "string", "element-required": false}},
                {"id": 3, "name": "props", "required": false, "type":
                    {"type": "map", "key-id": 5, "key": "string", "value-id": 6,
                     "value": {"type": "struct", "fields": [
                        {"id": 7, "name": "x", "required": true, "type": "decimal(10, 2)",
                         "initial-default": "1.00", "write-default": "2.00"}]},
                     "value-required": true}}
            ]
        });
        let t = Type::from_json(&json).unwrap();
        assert_eq!(t.to_json(), json);
        assert_eq!(t.min_format_version(), 1);
    }

    #[test]
    fn bad_json_names_the_problem() {
        let err = Type::from_json(&serde_json::json!({"type": "list", "element": "int"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("element-id"), "{err}");
    }
}
