//! Schema evolution: the spec's rules for changing a table's schema without rewriting data.
//!
//! Spec: "Schema Evolution" (valid type promotions, struct evolution, new ids from
//! `last-column-id`). [`union_by_name`] evolves a table schema to take every column of an
//! input schema, as Java's `UpdateSchema.unionByNameWith` and PyIceberg's
//! `update_schema().union_by_name()` do; [`UpdateSchema`] makes explicit changes (add,
//! delete, rename, widen, make optional, document, move), as Java's `SchemaUpdate` does;
//! [`add_current_schema`] is the metadata edit that
//! makes the result current (reusing an equal schema's id, as Java does).
//!
//! Promotions follow Java 1.10's `TypeUtil.isPromotionAllowed`: `int` to `long`, `float` to
//! `double`, `decimal(P, S)` to `decimal(P', S)` with `P' > P`. The v3 spec also allows
//! `date` to `timestamp`/`timestamp_ns` and `unknown` to any type, but Java 1.10 reads neither
//! promotion, so a table evolved that way would read differently there: they are refused.

mod fresh;
mod short_names;
mod spec_update;
mod union;
mod update;

use crate::error::Result;
use crate::name_mapping::{DEFAULT_NAME_MAPPING, NameMapping};
use crate::schema::Schema;
use crate::table_metadata::TableMetadata;
use crate::types::PrimitiveType;

pub use spec_update::{EvolvedSpec, UpdatePartitionSpec, add_default_spec};
pub use union::union_by_name;
pub use update::{Position, UpdateSchema};

/// How [`union_by_name`] matches and relaxes columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnionOptions {
    /// Match input names to table names ignoring ASCII case (a name that then matches two
    /// table columns, or two input columns that match one, is refused).
    pub case_insensitive: bool,
    /// Keep required table columns required when the input has them optional (Java and
    /// PyIceberg make them optional; an ingest whose input types are inferred as nullable
    /// would otherwise relax every required column).
    pub keep_required: bool,
}

/// One change [`union_by_name`] made, by full column name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaChange {
    /// A column added with this id (its nested fields got the ids after it).
    Added {
        /// Full name of the new column.
        column: String,
        /// Its field id.
        id: i32,
    },
    /// A primitive column promoted to a wider type.
    Widened {
        /// Full name of the column.
        column: String,
        /// The type before.
        from: PrimitiveType,
        /// The type after.
        to: PrimitiveType,
    },
    /// A required column made optional.
    MadeOptional {
        /// Full name of the column.
        column: String,
    },
    /// A column's doc replaced.
    DocUpdated {
        /// Full name of the column.
        column: String,
    },
    /// A column deleted (its id is never reused).
    Deleted {
        /// Full name of the column.
        column: String,
    },
    /// A column renamed (its id, and so its data, stays).
    Renamed {
        /// Full name of the column before.
        column: String,
        /// Its new name (the last part of the full name).
        to: String,
    },
    /// A column moved within its struct.
    Moved {
        /// Full name of the column.
        column: String,
    },
}

impl std::fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Added { column, id } => write!(f, "added `{column}` (id {id})"),
            Self::Widened { column, from, to } => write!(f, "widened `{column}` {from} -> {to}"),
            Self::MadeOptional { column } => write!(f, "made `{column}` optional"),
            Self::DocUpdated { column } => write!(f, "updated the doc of `{column}`"),
            Self::Deleted { column } => write!(f, "deleted `{column}`"),
            Self::Renamed { column, to } => write!(f, "renamed `{column}` to `{to}`"),
            Self::Moved { column } => write!(f, "moved `{column}`"),
        }
    }
}

/// The result of an evolution: the new schema (with the base's schema id until
/// [`add_current_schema`] gives it one), the table's new `last-column-id`, and the changes.
#[derive(Debug, Clone)]
pub struct EvolvedSchema {
    /// The evolved schema.
    pub schema: Schema,
    /// The highest field id ever assigned, the new schema's included.
    pub last_column_id: i32,
    /// What changed; empty when the input already fit.
    pub changes: Vec<SchemaChange>,
}

impl EvolvedSchema {
    /// Whether the input already fit the base schema.
    pub fn is_unchanged(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Whether values of type `from` may be read as `to` after a schema change (equal types
/// included); see the module docs for the promotions allowed.
pub fn is_promotion_allowed(from: &PrimitiveType, to: &PrimitiveType) -> bool {
    if from == to {
        return true;
    }
    match (from, to) {
        (PrimitiveType::Int, PrimitiveType::Long)
        | (PrimitiveType::Float, PrimitiveType::Double) => true,
        (
            PrimitiveType::Decimal {
                precision: p,
                scale: s,
            },
            PrimitiveType::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => s == s2 && p2 >= p,
        _ => false,
    }
}

/// Makes `schema` the current schema of `metadata` (and updates its name mapping, if any):
/// an existing schema with the same fields
/// and identifier fields is reused (as Java's metadata builder does), otherwise `schema` is
/// added with the next schema id; `last-column-id` becomes at least `last_column_id`.
/// Returns the current schema id.
///
/// # Errors
/// When the metadata's format version cannot hold a type of the schema.
pub fn add_current_schema(
    metadata: &mut TableMetadata,
    schema: &Schema,
    last_column_id: i32,
) -> Result<i32> {
    let needed = schema.min_format_version();
    let found = metadata.format_version.number();
    if needed > found {
        // Name the column that needs the newer version.
        let feature = schema
            .fields_breadth_first()
            .into_iter()
            .find_map(|i| {
                let f = &i.field;
                if f.initial_default.is_some() || f.write_default.is_some() {
                    Some(format!("column `{}` with a default", i.full_name))
                } else if matches!(f.field_type, crate::types::Type::Primitive(_))
                    && f.field_type.min_format_version() > found
                {
                    Some(format!("column `{}` of type {}", i.full_name, f.field_type))
                } else {
                    None
                }
            })
            .unwrap_or_else(|| "a type of the evolved schema".into());
        return Err(crate::error::Error::FormatVersionTooLow {
            feature,
            required: needed,
            found,
        });
    }
    let existing = metadata.schemas.iter().find(|s| {
        s.as_struct() == schema.as_struct()
            && s.identifier_field_ids() == schema.identifier_field_ids()
    });
    let id = match existing {
        Some(s) => s.schema_id(),
        None => {
            let id = metadata
                .schemas
                .iter()
                .map(Schema::schema_id)
                .max()
                .map_or(0, |m| m + 1);
            metadata.schemas.push(schema.clone().with_schema_id(id));
            id
        }
    };
    if let Ok(before) = metadata.current_schema() {
        let before = before.clone();
        follow_columns(&mut metadata.properties, &before, schema);
    }
    metadata.current_schema_id = id;
    // Readers resolve files without field ids through the name mapping: it follows the
    // schema as Java's `SchemaUpdate` keeps it (one that does not parse is left as it is,
    // as Java leaves it, rather than refuse the change).
    let mapping = metadata.properties.get(DEFAULT_NAME_MAPPING);
    if let Some(mapping) = mapping.and_then(|m| NameMapping::from_json(m).ok()) {
        let updated = mapping.updated(schema, metadata.last_column_id);
        metadata
            .properties
            .insert(DEFAULT_NAME_MAPPING.into(), updated.to_json());
    }
    metadata.last_column_id = metadata
        .last_column_id
        .max(last_column_id)
        .max(schema.highest_field_id());
    Ok(id)
}

/// Prefixes of table properties keyed by a column's full name, which Java's `SchemaUpdate`
/// carries through a rename and drops with the column.
const COLUMN_PROPERTY_PREFIXES: [&str; 3] = [
    crate::properties::METRICS_COLUMN_PREFIX,
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
];

/// Moves column-keyed properties (see [`COLUMN_PROPERTY_PREFIXES`]) from `before`'s names to
/// `after`'s: renamed with their column (nested ones with their struct), removed with it.
/// Otherwise a metrics mode set on a column would leave it at a rename, and fall to a
/// column added later under the old name.
fn follow_columns(
    properties: &mut std::collections::BTreeMap<String, String>,
    before: &Schema,
    after: &Schema,
) {
    let moved: Vec<(String, Option<String>)> = properties
        .keys()
        .filter_map(|key| {
            let (prefix, name) = COLUMN_PROPERTY_PREFIXES
                .iter()
                .find_map(|p| key.strip_prefix(p).map(|name| (*p, name)))?;
            let id = before.field_id_by_name(name)?;
            let now = after.field_name(id);
            (now != Some(name)).then(|| (key.clone(), now.map(|n| format!("{prefix}{n}"))))
        })
        .collect();
    for (old, new) in moved {
        if let Some(value) = properties.remove(&old)
            && let Some(new) = new
        {
            properties.insert(new, value);
        }
    }
}

#[cfg(test)]
mod spec_update_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod update_tests;

/// Makes `order` (its id ignored) the default sort order of `metadata`, as Java's
/// `ReplaceSortOrder` does: the unsorted order is id 0, an existing order with the same
/// fields is reused, otherwise it is added with the next id. Returns the default order id.
///
/// # Errors
/// A sort field whose source is not a primitive column of the current schema, or whose
/// transform does not take it.
pub fn add_default_sort_order(
    metadata: &mut TableMetadata,
    order: &crate::sort_order::SortOrder,
) -> Result<i64> {
    order.validate(metadata.current_schema()?)?;
    let id = if order.is_unsorted() {
        0
    } else if let Some(existing) = metadata
        .sort_orders
        .iter()
        .find(|o| o.fields == order.fields)
    {
        existing.order_id
    } else {
        let id = metadata
            .sort_orders
            .iter()
            .map(|o| o.order_id)
            .max()
            .unwrap_or(0)
            + 1;
        metadata.sort_orders.push(crate::sort_order::SortOrder {
            order_id: id,
            fields: order.fields.clone(),
        });
        id
    };
    if id == 0 && !metadata.sort_orders.iter().any(|o| o.order_id == 0) {
        metadata
            .sort_orders
            .push(crate::sort_order::SortOrder::unsorted());
    }
    metadata.default_sort_order_id = id;
    Ok(id)
}
