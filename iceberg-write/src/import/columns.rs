//! Which table column each leaf of an existing Parquet file is, and whether its values read as
//! that column's type: by the file's field ids when it has them (as every reader does), else
//! by name through the table's name mapping (the spec's "Column Projection").
//!
//! Lists and maps follow Parquet's backward-compatibility rules for their repeated levels
//! (two- and three-level lists, `MAP` and `MAP_KEY_VALUE`); a mapping names their children
//! `element`, `key` and `value` whatever the file calls them, as Java's `ApplyNameMapping`.

use std::collections::HashSet;

use iceberg_spec::Schema;
use iceberg_spec::name_mapping::{MappedField, NameMapping};
use iceberg_spec::types::{NestedField, PrimitiveType, StructType, Type};
use parquet::basic::{ConvertedType, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use crate::error::{Error, Result};
use crate::metrics::{Convert, LeafColumn};

/// The file's columns resolved against the table.
#[derive(Debug)]
pub(super) struct Resolved {
    /// One entry per leaf column of the file, in the file's order.
    pub(super) leaves: Vec<Option<LeafColumn>>,
    /// Table field ids the file holds (at any level).
    pub(super) present: HashSet<i32>,
    /// Leaf field ids whose column and every enclosing one are required in the table (outside
    /// lists and maps): the file must hold no null in them.
    pub(super) required_leaves: Vec<i32>,
    /// True when the file's columns carry field ids.
    pub(super) uses_ids: bool,
}

/// Resolves every column of `descr` to a column of `schema`.
///
/// # Errors
/// [`Error::UnknownColumn`] for a column no table column reads, [`Error::FieldIdMismatch`]
/// for an id the table does not have at that place, [`Error::IncompatibleColumn`] for a
/// type that does not read as the table's, [`Error::RequiredColumn`] for a required table
/// column the file lacks.
pub(super) fn resolve(
    path: &str,
    descr: &SchemaDescriptor,
    schema: &Schema,
    mapping: &NameMapping,
) -> Result<Resolved> {
    let root = descr.root_schema();
    let uses_ids = has_ids(root);
    let mut walk = Walk {
        path,
        schema,
        uses_ids,
        leaves: Vec::with_capacity(descr.num_columns()),
        present: HashSet::new(),
        required_leaves: Vec::new(),
    };
    walk.fields(
        root.get_fields(),
        schema.as_struct(),
        &mapping.fields,
        "",
        true,
    )?;
    Ok(Resolved {
        leaves: walk.leaves,
        present: walk.present,
        required_leaves: walk.required_leaves,
        uses_ids,
    })
}

/// True when some column of the file has a field id.
fn has_ids(node: &ParquetType) -> bool {
    node.get_fields()
        .iter()
        .any(|f| f.get_basic_info().has_id() || (f.is_group() && has_ids(f)))
}

struct Walk<'a> {
    path: &'a str,
    schema: &'a Schema,
    uses_ids: bool,
    leaves: Vec<Option<LeafColumn>>,
    present: HashSet<i32>,
    required_leaves: Vec<i32>,
}

impl Walk<'_> {
    /// The children of a struct: each file column found among the table struct's fields,
    /// then every required table field checked for presence.
    fn fields(
        &mut self,
        nodes: &[std::sync::Arc<ParquetType>],
        table: &StructType,
        mapped: &[MappedField],
        prefix: &str,
        all_required: bool,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        for node in nodes {
            let name = join(prefix, node.name());
            let field = self.lookup(node, table, mapped, &name)?;
            if !seen.insert(field.id) {
                return Err(Error::FieldIdMismatch {
                    path: self.path.into(),
                    column: name,
                    field_id: field.id,
                    reason: "which another column of the file also resolves to".into(),
                });
            }
            let children = mapped_children(mapped, node.name(), field.id);
            self.field(node, field, children, &name, all_required && field.required)?;
        }
        for f in &table.fields {
            if f.required && !seen.contains(&f.id) && f.initial_default.is_none() {
                return Err(Error::RequiredColumn {
                    path: self.path.into(),
                    column: join(prefix, &f.name),
                    reason: "is not in the file".into(),
                });
            }
        }
        Ok(())
    }

    /// The table field a file column of a struct is.
    fn lookup<'t>(
        &self,
        node: &ParquetType,
        table: &'t StructType,
        mapped: &[MappedField],
        name: &str,
    ) -> Result<&'t NestedField> {
        let info = node.get_basic_info();
        let id = if self.uses_ids {
            if !info.has_id() {
                return Err(self.unknown(name, " (the file has field ids, this column none)"));
            }
            info.id()
        } else {
            mapped
                .iter()
                .find(|m| m.names.iter().any(|n| n == node.name()))
                .and_then(|m| m.field_id)
                .ok_or_else(|| self.unknown(name, " (looked up by name in the name mapping)"))?
        };
        if let Some(f) = table.fields.iter().find(|f| f.id == id) {
            return Ok(f);
        }
        if self.uses_ids {
            let reason = match self.schema.field_info(id) {
                Some(info) => format!(
                    "which is the table's `{}`, not a column here",
                    info.full_name
                ),
                None => "which the table's schema does not have".into(),
            };
            return Err(Error::FieldIdMismatch {
                path: self.path.into(),
                column: name.into(),
                field_id: id,
                reason,
            });
        }
        Err(self.unknown(name, " (its name maps to a field the schema no longer has)"))
    }

    /// Checks a file column against the table field it is, and records its leaves.
    fn field(
        &mut self,
        node: &ParquetType,
        field: &NestedField,
        mapped: &[MappedField],
        name: &str,
        required: bool,
    ) -> Result<()> {
        self.present.insert(field.id);
        let info = node.get_basic_info();
        let annotation = (info.logical_type_ref(), info.converted_type());
        match &field.field_type {
            Type::Primitive(ty) => {
                if node.is_group() {
                    return Err(self.incompatible(name, field, "a group"));
                }
                let Some((stats_type, convert)) = primitive_reads_as(node, ty) else {
                    return Err(self.incompatible(name, field, &describe(node)));
                };
                if required {
                    self.required_leaves.push(field.id);
                }
                self.leaves.push(Some(LeafColumn {
                    id: field.id,
                    stats_type,
                    convert,
                }));
                Ok(())
            }
            Type::Struct(s) => {
                if !node.is_group() || is_list(annotation) || is_map(annotation) {
                    return Err(self.incompatible(name, field, &describe(node)));
                }
                self.fields(node.get_fields(), s, mapped, name, required)
            }
            Type::List(l) => {
                let element = (node.is_group() && is_list(annotation))
                    .then(|| list_element(node))
                    .flatten()
                    .ok_or_else(|| self.incompatible(name, field, &describe(node)))?;
                let e = &l.element_field;
                self.nested(element, e, mapped, &join(name, "element"))
            }
            Type::Map(m) => {
                let kv = (node.is_group() && is_map(annotation))
                    .then(|| node.get_fields().first())
                    .flatten()
                    .filter(|kv| kv.is_group() && kv.get_fields().len() == 2)
                    .ok_or_else(|| self.incompatible(name, field, &describe(node)))?;
                let (key, value) = (&kv.get_fields()[0], &kv.get_fields()[1]);
                self.nested(key, &m.key_field, mapped, &join(name, "key"))?;
                self.nested(value, &m.value_field, mapped, &join(name, "value"))
            }
        }
    }

    /// A list element, map key or map value: known by place, its id checked when the file
    /// has ids. Nothing inside a list or map is checked for nulls.
    fn nested(
        &mut self,
        node: &ParquetType,
        field: &NestedField,
        mapped: &[MappedField],
        name: &str,
    ) -> Result<()> {
        let info = node.get_basic_info();
        if self.uses_ids {
            if !info.has_id() {
                return Err(self.unknown(name, " (the file has field ids, this column none)"));
            }
            if info.id() != field.id {
                return Err(Error::FieldIdMismatch {
                    path: self.path.into(),
                    column: name.into(),
                    field_id: info.id(),
                    reason: format!("where the table has field id {}", field.id),
                });
            }
        }
        let last = name.rsplit('.').next().unwrap_or(name);
        let children = mapped_children(mapped, last, field.id);
        self.field(node, field, children, name, false)
    }

    fn unknown(&self, column: &str, hint: &str) -> Error {
        Error::UnknownColumn {
            path: self.path.into(),
            column: column.into(),
            hint: hint.into(),
        }
    }

    fn incompatible(&self, column: &str, field: &NestedField, found: &str) -> Error {
        Error::IncompatibleColumn {
            path: self.path.into(),
            column: column.into(),
            reason: format!(
                "is {found} in the file, which does not read as the table's {}{}",
                field.field_type,
                refusal_note(found)
            ),
        }
    }
}

/// The mapped children of the mapped field named `name` (or with id `id`).
fn mapped_children<'m>(mapped: &'m [MappedField], name: &str, id: i32) -> &'m [MappedField] {
    mapped
        .iter()
        .find(|m| m.field_id == Some(id) || m.names.iter().any(|n| n == name))
        .map_or(&[], |m| m.fields.as_slice())
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

type Annotation<'a> = (Option<&'a LogicalType>, ConvertedType);

fn is_list((logical, converted): Annotation<'_>) -> bool {
    matches!(logical, Some(LogicalType::List)) || converted == ConvertedType::LIST
}

fn is_map((logical, converted): Annotation<'_>) -> bool {
    matches!(logical, Some(LogicalType::Map))
        || matches!(converted, ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE)
}

/// The element of a `LIST` group by Parquet's backward-compatibility rules: the repeated
/// child itself when it is a primitive, a group of several fields, or named `array` or
/// `<list>_tuple` (two-level lists); else that child's only field (three-level).
fn list_element(list: &ParquetType) -> Option<&ParquetType> {
    let [repeated] = list.get_fields() else {
        return None;
    };
    if repeated.get_basic_info().repetition() != Repetition::REPEATED {
        return None;
    }
    if repeated.is_primitive()
        || repeated.get_fields().len() > 1
        || repeated.name() == "array"
        || repeated.name() == format!("{}_tuple", list.name())
    {
        return Some(repeated);
    }
    repeated.get_fields().first().map(|e| e.as_ref())
}

/// Why a readable-looking type is refused: types other readers misread in place.
fn refusal_note(found: &str) -> &'static str {
    if found.contains("MILLIS") {
        // Measured in the interop matrix: Java 1.10's row-group filters compare microsecond
        // literals with the millisecond statistics, and iceberg-rust refuses the column.
        "; millisecond timestamps are misread by Java's filters and iceberg-rust: write \
         microseconds (pyarrow: coerce_timestamps=\"us\")"
    } else if found.starts_with("INT96") {
        "; INT96 timestamps are not read alike by every reader: write INT64 microseconds \
         (Spark: spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS)"
    } else {
        ""
    }
}

/// A Parquet primitive's physical and logical type, for messages.
fn describe(node: &ParquetType) -> String {
    if node.is_group() {
        let info = node.get_basic_info();
        return match info.logical_type_ref() {
            Some(l) => format!("a group ({l:?})"),
            None if info.converted_type() != ConvertedType::NONE => {
                format!("a group ({})", info.converted_type())
            }
            None => "a group".into(),
        };
    }
    let info = node.get_basic_info();
    let physical = node.get_physical_type();
    match (info.logical_type_ref(), info.converted_type()) {
        (Some(l), _) => format!("{physical} ({l:?})"),
        (None, ConvertedType::NONE) => physical.to_string(),
        (None, c) => format!("{physical} ({c})"),
    }
}

/// How the values of a Parquet primitive read as `ty`: the type its statistics decode as and
/// the conversion to `ty`. `None` when they do not read as `ty` (or would change meaning:
/// unsigned 32- and 64-bit integers, a UTC-adjusted timestamp into `timestamp`).
fn primitive_reads_as(node: &ParquetType, ty: &PrimitiveType) -> Option<(PrimitiveType, Convert)> {
    use PrimitiveType as P;
    let physical = node.get_physical_type();
    let logical = logical_of(node);
    let same = |t: &PrimitiveType| Some((t.clone(), Convert::AsIs));
    match (physical, logical.as_ref(), ty) {
        (Physical::BOOLEAN, None, P::Boolean) => same(ty),
        (Physical::INT32, None, P::Int) => same(ty),
        (Physical::INT32, None, P::Long) => Some((P::Int, Convert::Promote)),
        (Physical::INT32, Some(LogicalType::Integer(i)), P::Int | P::Long)
            if i.is_signed || i.bit_width < 32 =>
        {
            if *ty == P::Int {
                same(ty)
            } else {
                Some((P::Int, Convert::Promote))
            }
        }
        (Physical::INT64, None, P::Long) => same(ty),
        (Physical::INT64, Some(LogicalType::Integer(i)), P::Long) if i.is_signed => same(ty),
        (Physical::INT32, Some(LogicalType::Date), P::Date) => same(ty),
        (Physical::INT64, Some(LogicalType::Time(t)), P::Time) if t.unit == TimeUnit::MICROS => {
            same(ty)
        }
        // Millisecond timestamps and INT96 are refused (see `refusal_note`).
        (Physical::INT64, Some(LogicalType::Timestamp(t)), _) => {
            let wanted = match (t.unit, t.is_adjusted_to_u_t_c) {
                (TimeUnit::MICROS, false) => P::Timestamp,
                (TimeUnit::MICROS, true) => P::Timestamptz,
                (TimeUnit::NANOS, false) => P::TimestampNs,
                (TimeUnit::NANOS, true) => P::TimestamptzNs,
                (TimeUnit::MILLIS, _) => return None,
            };
            (wanted == *ty).then(|| (ty.clone(), Convert::AsIs))
        }
        (Physical::FLOAT, None, P::Float) => same(ty),
        (Physical::FLOAT, None, P::Double) => Some((P::Float, Convert::Promote)),
        (Physical::DOUBLE, None, P::Double) => same(ty),
        (
            Physical::INT32
            | Physical::INT64
            | Physical::FIXED_LEN_BYTE_ARRAY
            | Physical::BYTE_ARRAY,
            Some(LogicalType::Decimal(d)),
            P::Decimal { precision, scale },
        ) if u32::try_from(d.scale).ok() == Some(*scale)
            && u32::try_from(d.precision).is_ok_and(|p| p <= *precision) =>
        {
            same(ty)
        }
        (
            Physical::BYTE_ARRAY,
            Some(LogicalType::String | LogicalType::Enum | LogicalType::Json),
            P::String,
        ) => same(ty),
        (Physical::BYTE_ARRAY, None, P::Binary) => same(ty),
        (Physical::FIXED_LEN_BYTE_ARRAY, None, P::Fixed(n))
            if u64::try_from(info_length(node)).ok() == Some(*n) =>
        {
            same(ty)
        }
        (Physical::FIXED_LEN_BYTE_ARRAY, None | Some(LogicalType::Uuid), P::Uuid)
            if info_length(node) == 16 =>
        {
            same(ty)
        }
        _ => None,
    }
}

fn info_length(node: &ParquetType) -> i32 {
    match node {
        ParquetType::PrimitiveType { type_length, .. } => *type_length,
        ParquetType::GroupType { .. } => -1,
    }
}

/// The logical type of a primitive, from its converted type when the file predates logical
/// types (legacy timestamps and times are UTC-adjusted, as the format says).
fn logical_of(node: &ParquetType) -> Option<LogicalType> {
    let info = node.get_basic_info();
    if let Some(l) = info.logical_type_ref() {
        return Some(l.clone());
    }
    let int = |bit_width: i8, is_signed: bool| LogicalType::integer(bit_width, is_signed);
    Some(match info.converted_type() {
        ConvertedType::NONE => return None,
        ConvertedType::UTF8 => LogicalType::String,
        ConvertedType::ENUM => LogicalType::Enum,
        ConvertedType::JSON => LogicalType::Json,
        ConvertedType::DATE => LogicalType::Date,
        ConvertedType::TIME_MILLIS => LogicalType::time(true, TimeUnit::MILLIS),
        ConvertedType::TIME_MICROS => LogicalType::time(true, TimeUnit::MICROS),
        ConvertedType::TIMESTAMP_MILLIS => LogicalType::timestamp(true, TimeUnit::MILLIS),
        ConvertedType::TIMESTAMP_MICROS => LogicalType::timestamp(true, TimeUnit::MICROS),
        ConvertedType::INT_8 => int(8, true),
        ConvertedType::INT_16 => int(16, true),
        ConvertedType::INT_32 => int(32, true),
        ConvertedType::INT_64 => int(64, true),
        ConvertedType::UINT_8 => int(8, false),
        ConvertedType::UINT_16 => int(16, false),
        ConvertedType::UINT_32 => int(32, false),
        ConvertedType::UINT_64 => int(64, false),
        ConvertedType::DECIMAL => LogicalType::decimal(node.get_scale(), node.get_precision()),
        // BSON, INTERVAL and the group annotations have no Iceberg primitive.
        other => return Some(LogicalType::Unknown).filter(|_| other != ConvertedType::NONE),
    })
}
