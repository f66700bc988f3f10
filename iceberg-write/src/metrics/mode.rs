//! Which metrics each column gets: Java's `MetricsConfig` rules.
//!
//! Order of precedence, as Java applies it: the default mode (explicit, or `truncate(16)`,
//! or — for schemas with more than 100 primitive columns and no explicit default — `none`
//! except for the first 100 columns); then columns of the sort order get at least
//! `truncate(16)`; then per-column properties win over everything.

use std::collections::{BTreeMap, HashMap};

use iceberg_spec::properties::{DEFAULT_METRICS_MAX_INFERRED_COLUMN_DEFAULTS, MetricsProperties};
use iceberg_spec::types::{NestedField, StructType, Type};
use iceberg_spec::{MetricsMode, Schema};

/// Metrics settings before they are resolved against a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsConfig {
    /// Explicit `write.metadata.metrics.default`, if set.
    pub default_mode: Option<MetricsMode>,
    /// Per-column modes by full column name (`write.metadata.metrics.column.<name>`).
    pub column_modes: BTreeMap<String, MetricsMode>,
    /// Primitive columns beyond which inferred defaults become `none`.
    pub max_inferred_column_defaults: usize,
    /// Source ids of the order-preserving keys of the table's sort order.
    pub sorted_field_ids: Vec<i32>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            default_mode: None,
            column_modes: BTreeMap::new(),
            max_inferred_column_defaults: DEFAULT_METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
            sorted_field_ids: Vec::new(),
        }
    }
}

impl MetricsConfig {
    /// The settings of parsed table properties.
    pub fn from_properties(props: &MetricsProperties) -> Self {
        Self {
            default_mode: props.default_mode,
            column_modes: props.column_modes.clone(),
            max_inferred_column_defaults: props.max_inferred_column_defaults,
            sorted_field_ids: Vec::new(),
        }
    }

    /// The mode of every primitive field of `schema`, keyed by field id.
    pub fn resolve(&self, schema: &Schema) -> HashMap<i32, MetricsMode> {
        let primitives = primitive_ids_in_java_order(schema.as_struct(), usize::MAX);
        let mut by_name: HashMap<String, MetricsMode> = HashMap::new();
        let counted = java_projected_id_count(schema.as_struct());
        let default_mode = match self.default_mode {
            Some(m) => m,
            None if counted <= self.max_inferred_column_defaults => MetricsMode::default(),
            None => {
                let first = primitive_ids_in_java_order(
                    schema.as_struct(),
                    self.max_inferred_column_defaults,
                );
                for id in first {
                    if let Some(name) = schema.field_name(id) {
                        by_name.insert(name.to_string(), MetricsMode::default());
                    }
                }
                MetricsMode::None
            }
        };
        let sorted_mode = match default_mode {
            MetricsMode::None | MetricsMode::Counts => MetricsMode::default(),
            other => other,
        };
        for id in &self.sorted_field_ids {
            if let Some(name) = schema.field_name(*id) {
                by_name.insert(name.to_string(), sorted_mode);
            }
        }
        for (name, mode) in &self.column_modes {
            by_name.insert(name.clone(), *mode);
        }
        primitives
            .into_iter()
            .map(|id| {
                let mode = schema
                    .field_name(id)
                    .and_then(|n| by_name.get(n).copied())
                    .unwrap_or(default_mode);
                (id, mode)
            })
            .collect()
    }
}

/// How many ids Java's `TypeUtil.getProjectedIds(schema)` holds, which its `MetricsConfig`
/// compares with `max-inferred-column-defaults`: every struct field that is a primitive or a
/// struct, a list's element and a map's key and value only when the element or value is a
/// primitive (so a map of lists counts no key), and everything nested.
fn java_projected_id_count(root: &StructType) -> usize {
    fn of_struct(s: &StructType) -> usize {
        s.fields
            .iter()
            .map(|f| {
                let own = matches!(f.field_type, Type::Primitive(_) | Type::Struct(_));
                usize::from(own) + nested(&f.field_type)
            })
            .sum()
    }
    fn nested(t: &Type) -> usize {
        let primitive = |f: &NestedField| matches!(f.field_type, Type::Primitive(_));
        match t {
            Type::Primitive(_) => 0,
            Type::Struct(s) => of_struct(s),
            Type::List(l) => {
                usize::from(primitive(&l.element_field)) + nested(&l.element_field.field_type)
            }
            Type::Map(m) => {
                2 * usize::from(primitive(&m.value_field))
                    + nested(&m.key_field.field_type)
                    + nested(&m.value_field.field_type)
            }
        }
    }
    of_struct(root)
}

/// Primitive field ids in the order Java's `MetricsConfig.limitFieldIds` visits them: a
/// struct's own primitive fields first, then its nested fields depth first; at most `limit`.
fn primitive_ids_in_java_order(root: &StructType, limit: usize) -> Vec<i32> {
    fn visit_struct(s: &StructType, out: &mut Vec<i32>, limit: usize) {
        for f in &s.fields {
            if out.len() < limit && matches!(f.field_type, Type::Primitive(_)) {
                out.push(f.id);
            }
        }
        for f in &s.fields {
            if out.len() >= limit {
                return;
            }
            visit_type(&f.field_type, out, limit);
        }
    }
    fn visit_type(t: &Type, out: &mut Vec<i32>, limit: usize) {
        match t {
            Type::Primitive(_) => {}
            Type::Struct(s) => visit_struct(s, out, limit),
            Type::List(l) => {
                let e = &l.element_field;
                if out.len() < limit && matches!(e.field_type, Type::Primitive(_)) {
                    out.push(e.id);
                }
                visit_type(&e.field_type, out, limit);
            }
            Type::Map(m) => {
                for f in [&m.key_field, &m.value_field] {
                    if out.len() < limit && matches!(f.field_type, Type::Primitive(_)) {
                        out.push(f.id);
                    }
                }
                visit_type(&m.key_field.field_type, out, limit);
                visit_type(&m.value_field.field_type, out, limit);
            }
        }
    }
    let mut out = Vec::new();
    visit_struct(root, &mut out, limit);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use iceberg_spec::types::{ListType, MapType, PrimitiveType};

    use super::*;

    fn wide_schema(n: i32) -> Schema {
        let fields = (1..=n)
            .map(|i| NestedField::optional(i, format!("c{i}"), PrimitiveType::Long))
            .collect();
        Schema::new(0, fields).unwrap()
    }

    #[test]
    fn default_is_truncate_16() {
        let s = wide_schema(3);
        let modes = MetricsConfig::default().resolve(&s);
        assert_eq!(modes.len(), 3);
        assert!(modes.values().all(|m| *m == MetricsMode::Truncate(16)));
    }

    #[test]
    fn hundred_column_rule() {
        let s = wide_schema(101);
        let modes = MetricsConfig::default().resolve(&s);
        assert_eq!(modes[&100], MetricsMode::Truncate(16));
        assert_eq!(modes[&101], MetricsMode::None);
        // An explicit default switches the rule off.
        let cfg = MetricsConfig {
            default_mode: Some(MetricsMode::Counts),
            ..MetricsConfig::default()
        };
        assert_eq!(cfg.resolve(&s)[&101], MetricsMode::Counts);
        // Exactly 100 columns keep the default.
        assert!(
            MetricsConfig::default()
                .resolve(&wide_schema(100))
                .values()
                .all(|m| *m == MetricsMode::Truncate(16))
        );
    }

    /// Java counts the schema's projected ids, not its primitives: a struct counts itself,
    /// a map whose value is a list counts no key.
    #[test]
    fn hundred_column_rule_counts_as_java_does() {
        let list_map = |id: i32, name: &str| {
            let list = Type::List(ListType::new(id + 2, PrimitiveType::Int, false));
            NestedField::optional(
                id,
                name,
                Type::Map(MapType::new(
                    id + 1,
                    PrimitiveType::String,
                    id + 3,
                    list,
                    false,
                )),
            )
        };
        let mut fields: Vec<NestedField> = (1..=96)
            .map(|i| NestedField::optional(i, format!("c{i}"), PrimitiveType::Int))
            .collect();
        fields.push(list_map(200, "m1"));
        fields.push(list_map(210, "m2"));
        fields.push(NestedField::optional(
            220,
            "s",
            Type::Struct(StructType::new(vec![NestedField::optional(
                221,
                "x",
                PrimitiveType::Int,
            )])),
        ));
        let s = Schema::new(0, fields.clone()).unwrap();
        // 96 columns, two list elements, `s` and `s.x`: 100 ids, 102 primitives.
        assert_eq!(java_projected_id_count(s.as_struct()), 100);
        let modes = MetricsConfig::default().resolve(&s);
        assert!(
            modes.values().all(|m| *m == MetricsMode::Truncate(16)),
            "{modes:?}"
        );
        // One more struct field is 102 ids: past the limit, the last nested ones get none.
        fields.push(NestedField::optional(
            230,
            "t",
            Type::Struct(StructType::new(vec![NestedField::optional(
                231,
                "y",
                PrimitiveType::Int,
            )])),
        ));
        let s = Schema::new(0, fields).unwrap();
        let modes = MetricsConfig::default().resolve(&s);
        assert_eq!(modes[&96], MetricsMode::Truncate(16));
        assert_eq!(modes[&231], MetricsMode::None);
    }

    #[test]
    fn sort_columns_promoted_and_overrides_win() {
        let s = wide_schema(3);
        let mut cfg = MetricsConfig {
            default_mode: Some(MetricsMode::None),
            sorted_field_ids: vec![2, 3],
            ..MetricsConfig::default()
        };
        cfg.column_modes.insert("c3".into(), MetricsMode::Counts);
        let modes = cfg.resolve(&s);
        assert_eq!(modes[&1], MetricsMode::None);
        assert_eq!(modes[&2], MetricsMode::Truncate(16));
        assert_eq!(modes[&3], MetricsMode::Counts);
        // A full default stays full for sorted columns.
        cfg.default_mode = Some(MetricsMode::Full);
        assert_eq!(cfg.resolve(&s)[&2], MetricsMode::Full);
    }

    #[test]
    fn nested_names_and_java_order() {
        let s = Schema::new(
            0,
            vec![
                NestedField::optional(
                    1,
                    "a",
                    Type::Struct(StructType::new(vec![
                        NestedField::optional(2, "x", PrimitiveType::Int),
                        NestedField::optional(
                            3,
                            "y",
                            Type::Struct(StructType::new(vec![NestedField::optional(
                                4,
                                "z",
                                PrimitiveType::Int,
                            )])),
                        ),
                    ])),
                ),
                NestedField::optional(
                    5,
                    "tags",
                    Type::List(ListType::new(6, PrimitiveType::String, false)),
                ),
                NestedField::optional(7, "w", PrimitiveType::Int),
            ],
        )
        .unwrap();
        assert_eq!(
            primitive_ids_in_java_order(s.as_struct(), usize::MAX),
            vec![7, 2, 4, 6]
        );
        let mut cfg = MetricsConfig::default();
        cfg.column_modes
            .insert("tags.element".into(), MetricsMode::Full);
        cfg.column_modes.insert("a.y.z".into(), MetricsMode::None);
        let modes = cfg.resolve(&s);
        assert_eq!(modes[&6], MetricsMode::Full);
        assert_eq!(modes[&4], MetricsMode::None);
        assert_eq!(modes[&2], MetricsMode::Truncate(16));
    }
}
