#![allow(clippy::unwrap_used, clippy::panic)]

use proptest::prelude::*;

use super::*;
use crate::error::Error;
use crate::table_metadata::FormatVersion;
use crate::types::{ListType, MapType, NestedField, PrimitiveType as P, StructType, Type};

fn schema(fields: Vec<NestedField>) -> Schema {
    Schema::new(0, fields).unwrap()
}

fn opt(id: i32, name: &str, ty: impl Into<Type>) -> NestedField {
    NestedField::optional(id, name, ty)
}

fn req(id: i32, name: &str, ty: impl Into<Type>) -> NestedField {
    NestedField::required(id, name, ty)
}

fn dec(precision: u32, scale: u32) -> P {
    P::Decimal { precision, scale }
}

fn names(s: &Schema) -> Vec<&str> {
    s.fields().iter().map(|f| f.name.as_str()).collect()
}

fn refused(result: Result<EvolvedSchema>) -> (String, String) {
    match result {
        Err(Error::SchemaEvolution { column, reason }) => (column, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn new_columns_are_optional_with_new_ids_where_the_input_has_them() {
    let base = schema(vec![req(1, "id", P::Long), opt(2, "name", P::String)]);
    // The input's ids mean nothing: only names match.
    let input = vec![
        opt(0, "first", P::Int),
        req(0, "id", P::Long),
        req(0, "score", P::Double),
        opt(0, "name", P::String),
        opt(0, "last", P::Date),
    ];
    let out = union_by_name(&base, 5, &input, UnionOptions::default()).unwrap();
    assert_eq!(names(&out.schema), ["first", "id", "score", "name", "last"]);
    let field = |n: &str| out.schema.field_by_name(n).unwrap().clone();
    assert_eq!(
        (field("first").id, field("score").id, field("last").id),
        (6, 7, 8)
    );
    assert!(!field("score").required, "added columns are optional");
    assert!(
        field("id").required,
        "an input that has it required keeps it"
    );
    assert_eq!(out.last_column_id, 8);
    assert_eq!(
        out.changes,
        vec![
            SchemaChange::Added {
                column: "first".into(),
                id: 6
            },
            SchemaChange::Added {
                column: "score".into(),
                id: 7
            },
            SchemaChange::Added {
                column: "last".into(),
                id: 8
            },
        ]
    );
}

#[test]
fn promotions_widen_and_narrower_inputs_change_nothing() {
    let base = schema(vec![
        opt(1, "i", P::Int),
        opt(2, "f", P::Float),
        opt(3, "d", dec(9, 2)),
        opt(4, "l", P::Long),
        opt(5, "dd", P::Double),
        opt(6, "wide", dec(20, 2)),
    ]);
    let input = vec![
        opt(0, "i", P::Long),
        opt(0, "f", P::Double),
        opt(0, "d", dec(18, 2)),
        opt(0, "l", P::Int),
        opt(0, "dd", P::Float),
        opt(0, "wide", dec(10, 2)),
    ];
    let out = union_by_name(&base, 6, &input, UnionOptions::default()).unwrap();
    let ty = |id| out.schema.field_by_id(id).unwrap().field_type.clone();
    assert_eq!(ty(1), Type::Primitive(P::Long));
    assert_eq!(ty(2), Type::Primitive(P::Double));
    assert_eq!(ty(3), Type::Primitive(dec(18, 2)));
    assert_eq!(
        ty(4),
        Type::Primitive(P::Long),
        "int input into long: unchanged"
    );
    assert_eq!(ty(5), Type::Primitive(P::Double));
    assert_eq!(ty(6), Type::Primitive(dec(20, 2)));
    assert_eq!(out.changes.len(), 3);
    assert_eq!(out.last_column_id, 6, "no ids are used by promotions");
}

#[test]
fn invalid_changes_are_refused_naming_the_column() {
    let base = schema(vec![
        opt(1, "n", P::Int),
        opt(2, "s", P::String),
        opt(3, "d", dec(10, 2)),
        opt(4, "day", P::Date),
        opt(5, "st", StructType::new(vec![opt(6, "x", P::Int)])),
        opt(
            7,
            "m",
            MapType::new(
                8,
                StructType::new(vec![req(9, "k", P::Int)]),
                10,
                P::Int,
                false,
            ),
        ),
    ]);
    let cases: Vec<(NestedField, &str, &str)> = vec![
        (opt(0, "n", P::String), "n", "not a valid promotion"),
        (opt(0, "s", P::Int), "s", "not a valid promotion"),
        (opt(0, "d", dec(12, 3)), "d", "not a valid promotion"),
        (opt(0, "n", P::Double), "n", "not a valid promotion"),
        // Spec v3 allows it; Java 1.10 does not read it.
        (opt(0, "day", P::Timestamp), "day", "not a valid promotion"),
        (opt(0, "st", P::String), "st", "cannot change kind"),
        (
            opt(0, "n", StructType::new(vec![opt(0, "x", P::Int)])),
            "n",
            "cannot change kind",
        ),
        (
            opt(0, "st", StructType::new(vec![opt(0, "x", P::String)])),
            "st.x",
            "not a valid promotion",
        ),
        (
            opt(
                0,
                "m",
                MapType::new(
                    0,
                    StructType::new(vec![req(0, "k", P::Int), req(0, "k2", P::Int)]),
                    0,
                    P::Int,
                    false,
                ),
            ),
            "m.key.k2",
            "map key",
        ),
        (
            opt(
                0,
                "m",
                MapType::new(
                    0,
                    StructType::new(vec![req(0, "k", P::Long)]),
                    0,
                    P::Int,
                    false,
                ),
            ),
            "m.key.k",
            "map keys cannot change",
        ),
    ];
    for (field, column, why) in cases {
        let (got, reason) = refused(union_by_name(&base, 10, &[field], UnionOptions::default()));
        assert_eq!(got, column);
        assert!(reason.contains(why), "{column}: {reason}");
    }
}

#[test]
fn nested_structs_lists_and_maps_evolve_inside() {
    let base = schema(vec![
        opt(1, "point", StructType::new(vec![req(2, "x", P::Int)])),
        opt(
            3,
            "tags",
            ListType::new(4, StructType::new(vec![opt(5, "k", P::String)]), true),
        ),
        opt(6, "attrs", MapType::new(7, P::String, 8, P::Float, true)),
    ]);
    let input = vec![
        opt(
            0,
            "point",
            StructType::new(vec![req(0, "x", P::Long), opt(0, "y", P::Int)]),
        ),
        opt(
            0,
            "tags",
            ListType::new(
                0,
                StructType::new(vec![opt(0, "k", P::String), opt(0, "v", P::Int)]),
                false,
            ),
        ),
        opt(0, "attrs", MapType::new(0, P::String, 0, P::Double, false)),
    ];
    let out = union_by_name(&base, 8, &input, UnionOptions::default()).unwrap();
    let s = &out.schema;
    assert_eq!(s.field_by_name("point.y").unwrap().id, 9);
    assert_eq!(
        s.field_by_id(2).unwrap().field_type,
        Type::Primitive(P::Long)
    );
    assert_eq!(s.field_by_name("tags.element.v").unwrap().id, 10);
    assert!(!s.field_by_id(4).unwrap().required, "element made optional");
    assert_eq!(
        s.field_by_id(8).unwrap().field_type,
        Type::Primitive(P::Double)
    );
    assert!(!s.field_by_id(8).unwrap().required);
    assert_eq!(out.last_column_id, 10);
}

#[test]
fn a_new_nested_column_gets_ids_in_javas_order() {
    // Java's assignFreshIds: the column, then a struct's fields, then their children.
    let base = schema(vec![opt(1, "id", P::Long)]);
    let input = vec![opt(
        0,
        "s",
        StructType::new(vec![
            opt(0, "a", ListType::new(0, P::Int, true)),
            req(0, "b", MapType::new(0, P::String, 0, P::Int, false)),
            opt(0, "c", P::String),
        ]),
    )];
    let out = union_by_name(&base, 1, &input, UnionOptions::default()).unwrap();
    let s = &out.schema;
    let id = |n: &str| s.field_id_by_name(n).unwrap();
    assert_eq!(
        [
            id("s"),
            id("s.a"),
            id("s.b"),
            id("s.c"),
            id("s.a.element"),
            id("s.b.key"),
            id("s.b.value")
        ],
        [2, 3, 4, 5, 6, 7, 8]
    );
    assert!(
        s.field_by_name("s.b").unwrap().required,
        "nested fields keep the input's"
    );
    assert!(!s.field_by_name("s").unwrap().required);
}

#[test]
fn fields_added_inside_existing_columns_get_ids_before_their_level() {
    // Java's UnionByNameVisitor visits the input after its children: `point.z` (inside an
    // existing struct) and `tags.element.w` get ids before the top level's `a` and `b`, even
    // though `a` comes first in the input.
    let base = schema(vec![
        opt(1, "point", StructType::new(vec![opt(2, "x", P::Int)])),
        opt(
            3,
            "tags",
            ListType::new(4, StructType::new(vec![opt(5, "k", P::String)]), true),
        ),
    ]);
    let input = vec![
        opt(0, "a", P::Int),
        opt(
            0,
            "point",
            StructType::new(vec![opt(0, "x", P::Int), opt(0, "z", P::Int)]),
        ),
        opt(0, "b", P::Int),
        opt(
            0,
            "tags",
            ListType::new(
                0,
                StructType::new(vec![opt(0, "k", P::String), opt(0, "w", P::Int)]),
                true,
            ),
        ),
    ];
    let out = union_by_name(&base, 5, &input, UnionOptions::default()).unwrap();
    let id = |n: &str| out.schema.field_id_by_name(n).unwrap();
    assert_eq!(
        [id("point.z"), id("tags.element.w"), id("a"), id("b")],
        [6, 7, 8, 9]
    );
    // Placement still follows the input.
    assert_eq!(names(&out.schema), ["a", "point", "b", "tags"]);
}

#[test]
fn two_new_input_columns_of_one_name_are_refused() {
    let base = schema(vec![opt(1, "id", P::Long)]);
    let ci = UnionOptions {
        case_insensitive: true,
        ..UnionOptions::default()
    };
    let input = vec![opt(0, "extra", P::Int), opt(0, "EXTRA", P::Int)];
    let (column, reason) = refused(union_by_name(&base, 1, &input, ci));
    assert_eq!(column, "EXTRA");
    assert!(reason.contains("`extra`"), "{reason}");
    // Case-sensitive, they are two columns.
    let out = union_by_name(&base, 1, &input, UnionOptions::default()).unwrap();
    assert_eq!(names(&out.schema), ["extra", "EXTRA", "id"]);
    let twice = vec![opt(0, "extra", P::Int), opt(0, "extra", P::Int)];
    let (column, _) = refused(union_by_name(&base, 1, &twice, UnionOptions::default()));
    assert_eq!(column, "extra");
}

#[test]
fn a_map_key_stays_required_and_is_not_reported_relaxed() {
    let base = schema(vec![opt(
        1,
        "m",
        MapType::new(2, P::String, 3, P::Int, true),
    )]);
    // An input whose map key says optional (Arrow's are not nullable, others may say so).
    let mut map = MapType::new(0, P::String, 0, P::Int, true);
    map.key_field.required = false;
    let out = union_by_name(&base, 3, &[opt(0, "m", map)], UnionOptions::default()).unwrap();
    assert!(out.is_unchanged(), "{:?}", out.changes);
    assert!(out.schema.field_by_id(2).unwrap().required);
    // Nor does a field inside a struct key (Java refuses any change to a map key).
    let key = || StructType::new(vec![req(4, "k", P::Int)]);
    let base = schema(vec![opt(1, "m", MapType::new(2, key(), 3, P::Int, true))]);
    let given = StructType::new(vec![opt(0, "k", P::Int)]);
    let input = [opt(0, "m", MapType::new(0, given, 0, P::Int, true))];
    let out = union_by_name(&base, 4, &input, UnionOptions::default()).unwrap();
    assert!(out.is_unchanged(), "{:?}", out.changes);
    assert!(out.schema.field_by_id(4).unwrap().required);
}

#[test]
fn requiredness_relaxes_unless_kept_and_identifier_fields_are_refused() {
    let base = Schema::with_identifier_fields(
        0,
        vec![req(1, "id", P::Long), req(2, "v", P::Int)],
        vec![1],
    )
    .unwrap();
    let input = vec![req(0, "id", P::Long), opt(0, "v", P::Int)];
    let out = union_by_name(&base, 2, &input, UnionOptions::default()).unwrap();
    assert!(!out.schema.field_by_id(2).unwrap().required);
    assert_eq!(
        out.changes,
        vec![SchemaChange::MadeOptional { column: "v".into() }]
    );
    let kept = UnionOptions {
        keep_required: true,
        ..UnionOptions::default()
    };
    let out = union_by_name(&base, 2, &input, kept).unwrap();
    assert!(out.is_unchanged());
    // An identifier field cannot become optional.
    let input = vec![opt(0, "id", P::Long)];
    let (column, reason) = refused(union_by_name(&base, 2, &input, UnionOptions::default()));
    assert_eq!(column, "id");
    assert!(reason.contains("identifier"), "{reason}");
}

#[test]
fn case_insensitive_matching_and_its_ambiguities() {
    let base = schema(vec![opt(1, "Name", P::String), opt(2, "city", P::String)]);
    let ci = UnionOptions {
        case_insensitive: true,
        ..UnionOptions::default()
    };
    let input = vec![opt(0, "NAME", P::String), opt(0, "City", P::String)];
    assert!(union_by_name(&base, 2, &input, ci).unwrap().is_unchanged());
    // Case-sensitive (the default), the same input adds two columns.
    let out = union_by_name(&base, 2, &input, UnionOptions::default()).unwrap();
    assert_eq!(out.changes.len(), 2);
    // Two input columns for one table column.
    let input = vec![opt(0, "name", P::String), opt(0, "NAME", P::String)];
    let (column, reason) = refused(union_by_name(&base, 2, &input, ci));
    assert_eq!(column, "NAME");
    assert!(reason.contains("same column"), "{reason}");
    // A table with columns that differ only by case.
    let base = schema(vec![opt(1, "a", P::Int), opt(2, "A", P::Int)]);
    let (column, _) = refused(union_by_name(&base, 2, &[opt(0, "a", P::Int)], ci));
    assert_eq!(column, "a");
}

#[test]
fn ids_continue_from_last_column_id_not_the_highest_present() {
    // A dropped column's id 9 is never reused.
    let base = schema(vec![opt(1, "a", P::Int)]);
    let out = union_by_name(&base, 9, &[opt(0, "b", P::Int)], UnionOptions::default()).unwrap();
    assert_eq!(out.schema.field_id_by_name("b"), Some(10));
}

#[test]
fn add_current_schema_reuses_an_equal_schema_and_checks_the_version() {
    let base = schema(vec![opt(1, "a", P::Int)]);
    let mut meta = TableMetadata::new_table(
        FormatVersion::V2,
        uuid::Uuid::nil(),
        "memory://t",
        base.clone(),
        crate::PartitionSpec::unpartitioned(),
        crate::SortOrder::unsorted(),
        Default::default(),
        1,
    )
    .unwrap();
    let out = union_by_name(
        &base,
        meta.last_column_id,
        &[opt(0, "b", P::Long)],
        UnionOptions::default(),
    )
    .unwrap();
    let id = add_current_schema(&mut meta, &out.schema, out.last_column_id).unwrap();
    assert_eq!((id, meta.current_schema_id, meta.last_column_id), (1, 1, 2));
    assert_eq!(meta.schemas.len(), 2);
    // The same evolution again (another writer's, or a retry) reuses id 1.
    let again = add_current_schema(&mut meta, &out.schema, out.last_column_id).unwrap();
    assert_eq!((again, meta.schemas.len()), (1, 2));
    // Back to the first schema: reused, and last-column-id never goes down.
    assert_eq!(add_current_schema(&mut meta, &base, 1).unwrap(), 0);
    assert_eq!(meta.last_column_id, 2);
    // A v3 type into a v2 table.
    let ns = union_by_name(
        &base,
        2,
        &[opt(0, "t", P::TimestampNs)],
        UnionOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        add_current_schema(&mut meta, &ns.schema, ns.last_column_id),
        Err(Error::FormatVersionTooLow { .. })
    ));
}

/// Column-keyed properties follow a rename (nested ones with their struct) and go with a
/// deleted column, as Java's `SchemaUpdate` keeps them; others stay as they are.
#[test]
fn column_properties_follow_renames_and_go_with_deletes() {
    let base = schema(vec![
        opt(1, "a", P::Int),
        opt(2, "gone", P::Int),
        opt(3, "s", StructType::new(vec![opt(4, "x", P::Int)])),
    ]);
    let props: std::collections::BTreeMap<String, String> = [
        ("write.metadata.metrics.column.a", "none"),
        ("write.parquet.bloom-filter-enabled.column.gone", "true"),
        ("write.parquet.stats-enabled.column.s.x", "false"),
        ("write.metadata.metrics.column.unknown", "counts"),
        ("owner", "me"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut meta = TableMetadata::new_table(
        FormatVersion::V2,
        uuid::Uuid::nil(),
        "memory://t",
        base.clone(),
        crate::PartitionSpec::unpartitioned(),
        crate::SortOrder::unsorted(),
        props,
        1,
    )
    .unwrap();
    let mut u = crate::evolution::UpdateSchema::new(&base, 4);
    u.rename_column("a", "b").unwrap();
    u.rename_column("s", "t").unwrap();
    u.delete_column("gone").unwrap();
    let out = u.apply().unwrap();
    add_current_schema(&mut meta, &out.schema, out.last_column_id).unwrap();
    let keys: Vec<&str> = meta.properties.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "owner",
            "write.metadata.metrics.column.b",
            "write.metadata.metrics.column.unknown",
            "write.parquet.stats-enabled.column.t.x",
        ]
    );
    assert_eq!(meta.properties["write.metadata.metrics.column.b"], "none");
}

// Properties: random table schemas and inputs made of kept (some narrower or wider),
// dropped and new columns.

fn arb_primitive() -> impl Strategy<Value = P> {
    prop_oneof![
        Just(P::Boolean),
        Just(P::Int),
        Just(P::Long),
        Just(P::Float),
        Just(P::Double),
        (1u32..=30).prop_map(|p| dec(p, 2)),
        Just(P::Date),
        Just(P::String),
    ]
}

/// A type an input may carry for a table type: the same, a narrower or a wider one.
fn variant_of(ty: &P, pick: u8) -> P {
    match (ty, pick % 3) {
        (P::Int, 1) => P::Long,
        (P::Long, 1) => P::Int,
        (P::Float, 1) => P::Double,
        (P::Double, 1) => P::Float,
        (P::Decimal { precision, scale }, 1) => dec((precision + 5).min(38), *scale),
        (P::Decimal { precision, scale }, 2) => dec(precision.saturating_sub(1).max(1), *scale),
        _ => ty.clone(),
    }
}

#[derive(Debug, Clone)]
struct Case {
    base: Schema,
    last_column_id: i32,
    input: Vec<NestedField>,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((arb_primitive(), any::<bool>()), 1..8),
        prop::collection::vec((any::<u8>(), any::<u8>()), 8),
        prop::collection::vec(arb_primitive(), 0..4),
        0i32..5,
        any::<u64>(),
        prop::collection::vec(arb_primitive(), 0..3),
    )
        .prop_map(|(cols, picks, new, gap, seed, nested_new)| {
            let mut fields: Vec<NestedField> = cols
                .iter()
                .enumerate()
                .map(|(i, (ty, required))| {
                    NestedField::new(i as i32 + 1, format!("c{i}"), ty.clone(), *required)
                })
                .collect();
            let struct_id = cols.len() as i32 + 1;
            fields.push(opt(
                struct_id,
                "s",
                StructType::new(vec![opt(struct_id + 1, "x", P::Int)]),
            ));
            let base = schema(fields.clone());
            let mut input: Vec<NestedField> = Vec::new();
            for (f, (keep, pick)) in fields.iter().zip(&picks) {
                if keep % 4 == 0 {
                    continue;
                }
                let mut f = f.clone();
                f.id = 0;
                if let Type::Primitive(p) = &f.field_type {
                    f.field_type = Type::Primitive(variant_of(p, *pick));
                    f.required = f.required && pick % 2 == 0;
                } else {
                    let mut inner = vec![opt(0, "x", P::Long)];
                    inner.extend(
                        nested_new
                            .iter()
                            .enumerate()
                            .map(|(i, t)| opt(0, &format!("sn{i}"), t.clone())),
                    );
                    f.field_type = Type::Struct(StructType::new(inner));
                }
                input.push(f);
            }
            for (i, ty) in new.iter().enumerate() {
                let at = (seed as usize >> (i * 8)) % (input.len() + 1);
                input.insert(at, opt(0, &format!("n{i}"), ty.clone()));
            }
            Case {
                base,
                last_column_id: struct_id + 1 + gap,
                input,
            }
        })
}

proptest! {
    #[test]
    fn union_keeps_every_column_takes_every_input_and_is_idempotent(case in arb_case()) {
        let out = union_by_name(&case.base, case.last_column_id, &case.input, UnionOptions::default())
            .unwrap();
        let s = &out.schema;
        // Every table column keeps its id and name; its type is the same or wider.
        for info in case.base.fields_breadth_first() {
            let now = s.field_info(info.field.id).unwrap();
            prop_assert_eq!(&now.full_name, &info.full_name);
            if let (Type::Primitive(a), Type::Primitive(b)) = (&info.field.field_type, &now.field.field_type) {
                prop_assert!(is_promotion_allowed(a, b), "{a} -> {b}");
            }
        }
        // Every input column has a place whose type reads the input's.
        for f in &case.input {
            let now = s.field_by_name(&f.name).unwrap();
            if let (Type::Primitive(a), Type::Primitive(b)) = (&f.field_type, &now.field_type) {
                prop_assert!(is_promotion_allowed(a, b), "{}: {a} into {b}", f.name);
            }
        }
        // New ids are new, above last-column-id, and last-column-id covers them.
        let added: Vec<i32> = s
            .fields_breadth_first()
            .iter()
            .map(|i| i.field.id)
            .filter(|id| case.base.field_by_id(*id).is_none())
            .collect();
        for id in &added {
            prop_assert!(*id > case.last_column_id && *id <= out.last_column_id);
        }
        prop_assert_eq!(out.last_column_id, case.last_column_id + added.len() as i32);
        // A new column sits right after the column the input has before it (first when
        // it is the input's first).
        let position = |n: &str| s.fields().iter().position(|f| f.name == n).unwrap();
        for (k, f) in case.input.iter().enumerate() {
            if f.name.starts_with('n') {
                let expected = match k {
                    0 => 0,
                    _ => position(&case.input[k - 1].name) + 1,
                };
                prop_assert_eq!(position(&f.name), expected, "{}", f.name);
            }
        }
        // Once evolved, the same input and the old schema fit as they are.
        let again = union_by_name(s, out.last_column_id, &case.input, UnionOptions::default()).unwrap();
        prop_assert!(again.is_unchanged(), "{:?}", again.changes);
        prop_assert_eq!(again.schema.as_struct(), s.as_struct());
        let old = union_by_name(s, out.last_column_id, case.base.fields(), UnionOptions::default()).unwrap();
        prop_assert!(old.is_unchanged(), "{:?}", old.changes);
    }
}
