#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::error::Error;
use crate::types::{ListType, MapType, NestedField, PrimitiveType as P, StructType, Type};

fn schema(fields: Vec<NestedField>) -> Schema {
    Schema::new(0, fields).unwrap()
}

fn names(s: &Schema) -> Vec<&str> {
    s.fields().iter().map(|f| f.name.as_str()).collect()
}

fn refused<T: std::fmt::Debug>(result: Result<T>) -> (String, String) {
    match result {
        Err(Error::SchemaEvolution { column, reason }) => (column, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn base() -> Schema {
    Schema::with_identifier_fields(
        0,
        vec![
            NestedField::required(1, "id", P::Int),
            NestedField::optional(2, "name", P::String),
            NestedField::optional(
                3,
                "point",
                StructType::new(vec![NestedField::required(4, "x", P::Float)]),
            ),
            NestedField::optional(
                5,
                "tags",
                ListType::new(
                    6,
                    StructType::new(vec![NestedField::optional(7, "k", P::String)]),
                    true,
                ),
            ),
            NestedField::optional(
                8,
                "attrs",
                MapType::new(
                    9,
                    P::String,
                    10,
                    StructType::new(vec![NestedField::optional(11, "v", P::Int)]),
                    true,
                ),
            ),
        ],
        vec![1],
    )
    .unwrap()
}

#[test]
fn names_refer_to_the_base_and_ids_stay() {
    let mut u = UpdateSchema::new(&base(), 11);
    u.rename_column("name", "label").unwrap();
    // Still found by its old name, as in Java.
    u.update_column_doc("name", Some("who")).unwrap();
    u.widen_column("point.x", P::Double).unwrap();
    u.rename_column("point.x", "east").unwrap();
    let out = u.apply().unwrap();
    let s = &out.schema;
    assert_eq!(s.field_id_by_name("label"), Some(2));
    assert_eq!(s.field_by_id(2).unwrap().doc.as_deref(), Some("who"));
    assert_eq!(s.field_id_by_name("point.east"), Some(4));
    assert_eq!(
        s.field_by_id(4).unwrap().field_type,
        Type::Primitive(P::Double)
    );
    assert_eq!(out.last_column_id, 11, "nothing added, no id taken");
    assert_eq!(s.identifier_field_ids(), [1]);
}

/// Java's short names (`tags.k` for `tags.element.k`, `attrs.v` for `attrs.value.v`) name
/// base columns and columns added here in every change, as Java's `UpdateSchema` takes
/// them: a column added into a list's struct moves by the name it was added with.
#[test]
fn short_names_name_columns_in_lists_and_maps_as_in_java() {
    let mut u = UpdateSchema::new(&base(), 11);
    u.add_column(Some("tags"), "w", P::Int.into(), None)
        .unwrap()
        .move_column("tags.w", Position::First)
        .unwrap()
        .add_column(Some("attrs"), "u", P::Int.into(), None)
        .unwrap()
        .move_column("attrs.u", Position::Before("attrs.v".into()))
        .unwrap()
        .rename_column("tags.k", "key")
        .unwrap()
        .update_column_doc("attrs.v", Some("value"))
        .unwrap();
    let out = u.apply().unwrap();
    let s = &out.schema;
    let Type::List(tags) = &s.field_by_id(5).unwrap().field_type else {
        panic!()
    };
    let Type::Struct(element) = &tags.element_field.field_type else {
        panic!()
    };
    let element: Vec<&str> = element.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(element, ["w", "key"]);
    assert_eq!(s.field_id_by_name("attrs.value.u"), Some(13));
    assert_eq!(s.field_by_id(11).unwrap().doc.as_deref(), Some("value"));
    let Type::Map(attrs) = &s.field_by_id(8).unwrap().field_type else {
        panic!()
    };
    let Type::Struct(value) = &attrs.value_field.field_type else {
        panic!()
    };
    let value: Vec<i32> = value.fields.iter().map(|f| f.id).collect();
    assert_eq!(value, [13, 11]);
    // Ignoring case too, and a short name that names nothing is still refused.
    let mut u = UpdateSchema::new(&base(), 11);
    u.case_insensitive(true);
    u.delete_column("TAGS.K").unwrap();
    let (column, _) = refused(
        UpdateSchema::new(&base(), 11)
            .delete_column("tags.z")
            .map(|_| ()),
    );
    assert_eq!(column, "tags.z");
    // A field named `value` added to the map's value struct: its short name would be the
    // value's own full name, which keeps naming the value.
    let mut u = UpdateSchema::new(&base(), 11);
    u.add_column(Some("attrs"), "value", P::Int.into(), None)
        .unwrap();
    let (column, _) = refused(u.move_column("attrs.value", Position::First).map(|_| ()));
    assert_eq!(column, "attrs.value");
    u.move_column("attrs.value.value", Position::First).unwrap();
}

#[test]
fn columns_are_added_at_the_end_of_their_struct_with_fresh_ids() {
    let mut u = UpdateSchema::new(&base(), 20);
    u.add_column(None, "score", P::Double.into(), Some("points"))
        .unwrap()
        .add_column(Some("point"), "y", P::Float.into(), None)
        .unwrap()
        .add_column(Some("tags"), "w", P::Int.into(), None)
        .unwrap()
        .add_column(
            Some("attrs"),
            "u",
            ListType::new(0, P::Long, false).into(),
            None,
        )
        .unwrap();
    let out = u.apply().unwrap();
    let s = &out.schema;
    let id = |n: &str| s.field_id_by_name(n).unwrap();
    assert_eq!(
        [
            id("score"),
            id("point.y"),
            id("tags.element.w"),
            id("attrs.value.u"),
            id("attrs.value.u.element")
        ],
        [21, 22, 23, 24, 25]
    );
    assert_eq!(out.last_column_id, 25);
    assert_eq!(names(s).last(), Some(&"score"));
    assert!(!s.field_by_id(21).unwrap().required);
    assert_eq!(s.field_by_id(21).unwrap().doc.as_deref(), Some("points"));
}

#[test]
fn bad_additions_are_refused_naming_the_column() {
    let mut u = UpdateSchema::new(&base(), 11);
    let (c, r) = refused(u.add_column(None, "name", P::Int.into(), None));
    assert_eq!((c.as_str(), r.contains("exists")), ("name", true), "{r}");
    let (c, _) = refused(u.add_column(Some("nope"), "a", P::Int.into(), None));
    assert_eq!(c, "nope");
    let (c, r) = refused(u.add_column(Some("name"), "a", P::Int.into(), None));
    assert_eq!(c, "name");
    assert!(r.contains("cannot be added to string"), "{r}");
    let (_, r) = refused(u.add_column(None, "a.b", P::Int.into(), None));
    assert!(r.contains("dot"), "{r}");
    u.add_column(None, "a", P::Int.into(), None).unwrap();
    let (c, _) = refused(u.add_column(None, "a", P::Int.into(), None));
    assert_eq!(c, "a");
    // A deleted column's name can be taken again, by a new column with a new id.
    u.delete_column("name").unwrap();
    u.add_column(None, "name", P::Long.into(), None).unwrap();
    let s = u.apply().unwrap().schema;
    assert_eq!(s.field_id_by_name("name"), Some(13));
    assert!(s.field_by_id(2).is_none());
}

#[test]
fn a_required_column_needs_a_default_of_its_type() {
    let mut u = UpdateSchema::new(&base(), 11);
    let (c, _) = refused(u.add_required_column(None, "n", P::Int, json!("x"), None));
    assert_eq!(c, "n");
    u.add_required_column(None, "n", P::Int, json!(7), None)
        .unwrap();
    let s = u.apply().unwrap().schema;
    let n = s.field_by_name("n").unwrap();
    assert!(n.required);
    assert_eq!(n.initial_default, Some(json!(7)));
    assert_eq!(n.write_default, Some(json!(7)));
    assert_eq!(s.min_format_version(), 3, "defaults are v3 only");
}

/// A default is stored in the spec's JSON form, which Java's `SingleValueParser` reads: `1`
/// for a double becomes `1.0` (Java refuses an integer there, and with it the table), and
/// NaN or an infinity, which Java cannot read back, is refused.
#[test]
fn defaults_are_stored_in_the_form_java_reads() {
    let mut u = UpdateSchema::new(&base(), 11);
    u.add_required_column(None, "d", P::Double, json!(1), None)
        .unwrap();
    for bad in [json!("NaN"), json!("Infinity")] {
        let (c, r) = refused(u.add_required_column(None, "f", P::Float, bad, None));
        assert_eq!(c, "f");
        assert!(r.contains("finite"), "{r}");
    }
    let s = u.apply().unwrap().schema;
    let d = s.field_by_name("d").unwrap();
    assert!(
        d.initial_default.as_ref().unwrap().is_f64(),
        "{:?}",
        d.initial_default
    );
    assert_eq!(d.write_default, d.initial_default);
}

#[test]
fn deletes_are_checked() {
    let mut u = UpdateSchema::new(&base(), 11);
    let (c, r) = refused(u.delete_column("id"));
    assert_eq!(c, "id");
    assert!(r.contains("identifier"), "{r}");
    let (c, _) = refused(u.delete_column("missing"));
    assert_eq!(c, "missing");
    u.add_column(Some("tags"), "w", P::Int.into(), None)
        .unwrap();
    let (c, r) = refused(u.delete_column("tags"));
    assert_eq!(c, "tags");
    assert!(r.contains("additions"), "{r}");
    u.rename_column("name", "label").unwrap();
    let (_, r) = refused(u.delete_column("name"));
    assert!(r.contains("changes"), "{r}");
    u.delete_column("point").unwrap();
    let (_, r) = refused(u.rename_column("point.x", "y"));
    assert!(r.contains("deleted"), "{r}");
    let s = u.apply().unwrap().schema;
    assert!(s.field_by_id(3).is_none() && s.field_by_id(4).is_none());
}

/// Map keys never change and a list's element or a map's value is never deleted alone, as
/// Java's and PyIceberg's `UpdateSchema` refuse (a table changed so loads differently there).
#[test]
fn map_keys_stay_and_elements_are_not_deleted_alone() {
    let keyed = schema(vec![NestedField::optional(
        1,
        "m",
        MapType::new(
            2,
            StructType::new(vec![NestedField::required(3, "k", P::Int)]),
            4,
            P::String,
            true,
        ),
    )]);
    let mut u = UpdateSchema::new(&keyed, 4);
    for (column, result) in [
        ("m.key", u.rename_column("m.key", "kk").map(|_| ())),
        ("m.key.k", u.widen_column("m.key.k", P::Long).map(|_| ())),
        ("m.key.k", u.rename_column("m.key.k", "j").map(|_| ())),
        (
            "m.key.k",
            u.update_column_doc("m.key.k", Some("d")).map(|_| ()),
        ),
        ("m.key.k", u.delete_column("m.key.k").map(|_| ())),
        (
            "m.key",
            u.add_column(Some("m.key"), "k2", P::Int.into(), None)
                .map(|_| ()),
        ),
    ] {
        let (c, r) = refused(result);
        assert_eq!(c, column);
        assert!(r.contains("map keys"), "{column}: {r}");
    }
    let mut u = UpdateSchema::new(&base(), 11);
    for column in ["tags.element", "attrs.value"] {
        let (c, r) = refused(u.delete_column(column));
        assert_eq!(c, column);
        assert!(r.contains("cannot be deleted"), "{r}");
    }
}

#[test]
fn widening_and_optional_follow_the_rules() {
    let mut u = UpdateSchema::new(&base(), 11);
    let (c, r) = refused(u.widen_column("name", P::Binary));
    assert_eq!(c, "name");
    assert!(r.contains("not a valid promotion"), "{r}");
    let (_, r) = refused(u.widen_column("point", P::Long));
    assert!(r.contains("not a primitive"), "{r}");
    let (_, r) = refused(u.make_column_optional("id"));
    assert!(r.contains("identifier"), "{r}");
    let (c, _) = refused(u.make_column_optional("attrs.key"));
    assert_eq!(c, "attrs.key");
    u.widen_column("id", P::Long).unwrap();
    u.widen_column("attrs.value.v", P::Long).unwrap();
    u.make_column_optional("point.x").unwrap();
    let out = u.apply().unwrap();
    let s = &out.schema;
    assert_eq!(
        s.field_by_id(1).unwrap().field_type,
        Type::Primitive(P::Long)
    );
    assert_eq!(
        s.field_by_id(11).unwrap().field_type,
        Type::Primitive(P::Long)
    );
    assert!(!s.field_by_id(4).unwrap().required);
    assert_eq!(out.changes.len(), 3);
}

#[test]
fn moves_within_a_struct() {
    let mut u = UpdateSchema::new(&base(), 11);
    u.add_column(None, "new", P::Int.into(), None).unwrap();
    u.move_column("new", Position::After("id".into())).unwrap();
    u.move_column("tags", Position::First).unwrap();
    u.move_column("attrs", Position::Before("name".into()))
        .unwrap();
    let s = u.apply().unwrap().schema;
    assert_eq!(names(&s), ["tags", "id", "new", "attrs", "name", "point"]);
    let (_, r) = refused(u.move_column("point.x", Position::After("id".into())));
    assert!(r.contains("another struct"), "{r}");
    let (_, r) = refused(u.move_column("id", Position::Before("id".into())));
    assert!(r.contains("itself"), "{r}");
    let (_, r) = refused(u.move_column("tags.element", Position::First));
    assert!(r.contains("struct's fields"), "{r}");
}

#[test]
fn a_name_taken_twice_is_refused_at_apply() {
    let mut u = UpdateSchema::new(&base(), 11);
    u.rename_column("name", "label").unwrap();
    u.add_column(None, "label", P::Int.into(), None).unwrap();
    let (c, r) = refused(u.apply());
    assert_eq!(c, "label");
    assert!(r.contains("same name") || r.contains("this name"), "{r}");
}

#[test]
fn case_insensitive_names() {
    let mut u = UpdateSchema::new(&base(), 11);
    let (c, _) = refused(u.rename_column("NAME", "x"));
    assert_eq!(c, "NAME");
    u.case_insensitive(true);
    u.rename_column("NAME", "x").unwrap();
    u.widen_column("Point.X", P::Double).unwrap();
    let s = u.apply().unwrap().schema;
    assert_eq!(s.field_id_by_name("x"), Some(2));
}

/// One random operation on a schema of columns `c0..cN`.
#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Delete(usize),
    Rename(usize, u8),
    Widen(usize),
    Optional(usize),
    Move(usize, Option<usize>),
}

fn arb_op(n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<u8>().prop_map(Op::Add),
        (0..n).prop_map(Op::Delete),
        (0..n, any::<u8>()).prop_map(|(i, k)| Op::Rename(i, k)),
        (0..n).prop_map(Op::Widen),
        (0..n).prop_map(Op::Optional),
        (0..n, proptest::option::of(0..n)).prop_map(|(i, j)| Op::Move(i, j)),
    ]
}

proptest! {
    /// Whatever sequence of changes is accepted applies, keeps every surviving column's id
    /// (so its data), gives new columns ids above the last, and never reuses a deleted id.
    #[test]
    fn accepted_changes_keep_ids_and_never_reuse_them(
        types in proptest::collection::vec(0u8..3, 1..8),
        ops in proptest::collection::vec(arb_op(8), 0..24),
    ) {
        let fields: Vec<NestedField> = types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let ty = [P::Int, P::Float, P::String][usize::from(*t)].clone();
                NestedField::optional(i as i32 + 1, format!("c{i}"), ty)
            })
            .collect();
        let n = fields.len();
        let last = n as i32 + 3;
        let base = schema(fields);
        let mut u = UpdateSchema::new(&base, last);
        // Expected: base id -> (name, deleted); new names.
        let mut expected: BTreeMap<i32, (String, bool)> =
            (1..=n as i32).map(|id| (id, (format!("c{}", id - 1), false))).collect();
        for op in ops {
            match op {
                Op::Add(k) => { let _ = u.add_column(None, &format!("a{k}"), P::Long.into(), None); }
                Op::Delete(i) if i < n && u.delete_column(&format!("c{i}")).is_ok() => {
                    expected.get_mut(&(i as i32 + 1)).unwrap().1 = true;
                }
                Op::Rename(i, k)
                    if i < n && u.rename_column(&format!("c{i}"), &format!("r{k}")).is_ok() =>
                {
                    expected.get_mut(&(i as i32 + 1)).unwrap().0 = format!("r{k}");
                }
                Op::Widen(i) if i < n => {
                    let to = match base.fields()[i].field_type {
                        Type::Primitive(P::Int) => P::Long,
                        Type::Primitive(P::Float) => P::Double,
                        _ => P::String,
                    };
                    let _ = u.widen_column(&format!("c{i}"), to);
                }
                Op::Optional(i) if i < n => { let _ = u.make_column_optional(&format!("c{i}")); }
                Op::Move(i, j) if i < n => {
                    let to = match j {
                        Some(j) if j < n => Position::After(format!("c{j}")),
                        _ => Position::First,
                    };
                    let _ = u.move_column(&format!("c{i}"), to);
                }
                _ => {}
            }
        }
        let Ok(out) = u.apply() else {
            // Only a name clash from renames or adds may fail at apply.
            return Ok(());
        };
        let s = &out.schema;
        for (id, (name, deleted)) in &expected {
            match s.field_by_id(*id) {
                Some(f) => {
                    prop_assert!(!deleted);
                    prop_assert_eq!(&f.name, name);
                }
                None => prop_assert!(*deleted),
            }
        }
        for f in s.fields() {
            if f.id > n as i32 {
                prop_assert!(f.id > last, "new id {} above the last {}", f.id, last);
                prop_assert!(f.name.starts_with('a'));
            }
        }
        prop_assert!(out.last_column_id >= s.highest_field_id());
    }
}
