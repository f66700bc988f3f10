#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::Schema;
use crate::error::Error;
use crate::partition::{PartitionField, PartitionSpec};
use crate::sort_order::SortOrder;
use crate::table_metadata::{FormatVersion, TableMetadata};
use crate::transform::Transform;
use crate::types::{NestedField, PrimitiveType as P};

fn meta(version: FormatVersion) -> TableMetadata {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long),
            NestedField::optional(2, "ts", P::Timestamptz),
            NestedField::optional(3, "name", P::String),
            NestedField::optional(4, "flag", P::Boolean),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)
        .unwrap()
        .build()
        .unwrap();
    TableMetadata::new_table(
        version,
        uuid::Uuid::nil(),
        "memory://t",
        schema,
        spec,
        SortOrder::unsorted(),
        Default::default(),
        1,
    )
    .unwrap()
}

fn refused<T: std::fmt::Debug>(result: Result<T>) -> (String, String) {
    match result {
        Err(Error::PartitionEvolution { field, reason }) => (field, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn field(f: &PartitionField) -> (i32, &str, Transform, i32) {
    (
        f.field_id,
        f.name.as_str(),
        f.transform.clone(),
        f.source_id,
    )
}

#[test]
fn added_fields_get_javas_names_and_the_next_ids() {
    let m = meta(FormatVersion::V2);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.add_field("id", Transform::Bucket(16), None).unwrap();
    u.add_field("name", Transform::Truncate(4), None).unwrap();
    u.add_field("flag", Transform::Identity, Some("f")).unwrap();
    let out = u.apply().unwrap();
    let got: Vec<_> = out.fields.iter().map(field).collect();
    assert_eq!(
        got,
        [
            (1000, "ts_day", Transform::Day, 2),
            (1001, "id_bucket_16", Transform::Bucket(16), 1),
            (1002, "name_trunc_4", Transform::Truncate(4), 3),
            (1003, "f", Transform::Identity, 4),
        ]
    );
    assert_eq!(out.last_partition_id, 1003);
    let mut m = m;
    assert_eq!(add_default_spec(&mut m, &out).unwrap(), 1);
    assert_eq!(m.default_spec_id, 1);
    assert_eq!(m.last_partition_id, 1003);
    assert_eq!(
        m.partition_specs.len(),
        2,
        "the old spec stays for the old files"
    );
}

#[test]
fn bad_additions_are_refused_naming_the_field() {
    let m = meta(FormatVersion::V2);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    let (f, r) = refused(u.add_field("ts", Transform::Day, None));
    assert_eq!(f, "day(ts)");
    assert!(r.contains("`ts_day`"), "{r}");
    let (_, r) = refused(u.add_field("nope", Transform::Identity, None));
    assert!(r.contains("`nope`"), "{r}");
    let (_, r) = refused(u.add_field("flag", Transform::Day, None));
    assert!(r.contains("boolean"), "{r}");
    let (f, r) = refused(u.add_field("name", Transform::Identity, Some("ts_day")));
    assert_eq!(f, "ts_day");
    assert!(r.contains("taken"), "{r}");
    u.add_field("id", Transform::Bucket(4), None).unwrap();
    let (_, r) = refused(u.add_field("id", Transform::Bucket(4), Some("b")));
    assert!(r.contains("already added"), "{r}");
    // A second time transform of one source, both added here.
    u.remove_field("ts_day").unwrap();
    u.add_field("ts", Transform::Hour, None).unwrap();
    let (_, r) = refused(u.add_field("ts", Transform::Month, None));
    assert!(r.contains("redundant"), "{r}");
    // A partition name that is another column's.
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.add_field("id", Transform::Bucket(2), Some("name"))
        .unwrap();
    let (_, r) = refused(u.apply());
    assert!(r.contains("collides"), "{r}");
    // An identity field too, unless the name is its own source's (Java refuses to bind it,
    // so the table would not load there).
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.add_field("id", Transform::Identity, Some("name"))
        .unwrap();
    let (_, r) = refused(u.apply());
    assert!(r.contains("collides"), "{r}");
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.add_field("id", Transform::Identity, Some("id")).unwrap();
    u.apply().unwrap();
}

#[test]
fn a_removed_field_goes_in_v2_and_turns_void_in_v1() {
    for (version, expected) in [
        (FormatVersion::V2, vec![]),
        (
            FormatVersion::V1,
            vec![(1000, "ts_day", Transform::Void, 2)],
        ),
    ] {
        let m = meta(version);
        let mut u = UpdatePartitionSpec::new(&m).unwrap();
        u.remove_field("ts_day").unwrap();
        let out = u.apply().unwrap();
        let got: Vec<_> = out.fields.iter().map(field).collect();
        assert_eq!(got, expected, "{version:?}");
    }
    let m = meta(FormatVersion::V2);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    let (f, _) = refused(u.remove_field("nope"));
    assert_eq!(f, "nope");
    u.rename_field("ts_day", "day").unwrap();
    let (_, r) = refused(u.remove_field("ts_day"));
    assert!(r.contains("renamed"), "{r}");
}

#[test]
fn v1_keeps_positions_and_renames_a_void_out_of_the_way() {
    let mut m = meta(FormatVersion::V1);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.remove_field("ts_day").unwrap();
    // The same name for a new field: the voided one is renamed `ts_day_1000`.
    u.add_field("ts", Transform::Hour, Some("ts_day")).unwrap();
    let out = u.apply().unwrap();
    let got: Vec<_> = out.fields.iter().map(field).collect();
    assert_eq!(
        got,
        [
            (1000, "ts_day_1000", Transform::Void, 2),
            (1001, "ts_day", Transform::Hour, 2)
        ]
    );
    add_default_spec(&mut m, &out).unwrap();
    m.validate().unwrap();
}

#[test]
fn v2_recycles_a_field_an_earlier_spec_had_and_reuses_an_equal_spec() {
    let mut m = meta(FormatVersion::V2);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.remove_field("ts_day").unwrap();
    let unpartitioned = u.apply().unwrap();
    assert_eq!(add_default_spec(&mut m, &unpartitioned).unwrap(), 1);
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.add_field("ts", Transform::Day, None).unwrap();
    let again = u.apply().unwrap();
    assert_eq!(
        again.fields.iter().map(field).collect::<Vec<_>>(),
        [(1000, "ts_day", Transform::Day, 2)]
    );
    assert_eq!(
        add_default_spec(&mut m, &again).unwrap(),
        0,
        "spec 0 is reused"
    );
    assert_eq!(m.partition_specs.len(), 2);
    // Removed and added back in one update: unchanged.
    let mut u = UpdatePartitionSpec::new(&m).unwrap();
    u.remove_field("ts_day").unwrap();
    u.add_field("ts", Transform::Day, Some("day")).unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        out.fields.iter().map(field).collect::<Vec<_>>(),
        [(1000, "day", Transform::Day, 2)]
    );
}
