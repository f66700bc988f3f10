//! Law: any valid table metadata survives `to_json` then `from_json` unchanged, for every
//! format version, and writing it again gives the same bytes; the snapshots' memoized
//! text is laid out exactly as the pretty printer lays out the rest of the document.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeMap;

use iceberg_spec::snapshot::{MetadataLogEntry, SnapshotLogEntry};
use iceberg_spec::{
    FormatVersion, NestedField, NullOrder, Operation, PartitionSpec, PrimitiveType, Schema,
    SharedSnapshot, Snapshot, SnapshotRef, SortDirection, SortField, SortOrder, StructType,
    Summary, TableMetadata, Transform, Type,
};
use proptest::prelude::*;

fn primitive(v3: bool) -> impl Strategy<Value = PrimitiveType> {
    let mut choices = vec![
        PrimitiveType::Boolean,
        PrimitiveType::Int,
        PrimitiveType::Long,
        PrimitiveType::Float,
        PrimitiveType::Double,
        PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        },
        PrimitiveType::Decimal {
            precision: 38,
            scale: 0,
        },
        PrimitiveType::Date,
        PrimitiveType::Time,
        PrimitiveType::Timestamp,
        PrimitiveType::Timestamptz,
        PrimitiveType::String,
        PrimitiveType::Uuid,
        PrimitiveType::Fixed(7),
        PrimitiveType::Binary,
    ];
    if v3 {
        choices.extend([
            PrimitiveType::TimestampNs,
            PrimitiveType::TimestamptzNs,
            PrimitiveType::Variant,
            PrimitiveType::Geometry { crs: None },
            PrimitiveType::Geography {
                crs: Some("srid:4326".into()),
                algorithm: None,
            },
        ]);
    }
    proptest::sample::select(choices)
}

const TRANSFORMS: [Transform; 8] = [
    Transform::Identity,
    Transform::Bucket(16),
    Transform::Truncate(4),
    Transform::Year,
    Transform::Month,
    Transform::Day,
    Transform::Hour,
    Transform::Void,
];

prop_compose! {
    fn metadata()(
        version in 1u8..=3,
        seed in any::<u64>(),
    )(
        version in Just(version),
        types in prop::collection::vec(primitive(version == 3), 1..8),
        required in prop::collection::vec(any::<bool>(), 8),
        transform_picks in prop::collection::vec((0usize..8, 0usize..8), 0..4),
        sort_picks in prop::collection::vec((0usize..8, any::<bool>(), any::<bool>()), 0..3),
        props in prop::collection::btree_map("[a-z.]{1,12}", "[ -~]{0,12}", 0..4),
        snapshots in 0usize..4,
        extra in prop::collection::btree_map("[a-z-]{1,10}", "[0-9]{1,4}", 0..3),
        nested in any::<bool>(),
        seed in Just(seed),
    ) -> TableMetadata {
        let v = FormatVersion::from_number(i64::from(version)).unwrap();
        let mut fields: Vec<NestedField> = types
            .iter()
            .enumerate()
            .map(|(i, t)| NestedField::new(i as i32 + 1, format!("c{i}"), t.clone(), required[i] && *t != PrimitiveType::Variant))
            .collect();
        let mut next_id = fields.len() as i32 + 1;
        if nested {
            fields.push(NestedField::optional(
                next_id,
                "st",
                Type::Struct(StructType::new(vec![NestedField::required(next_id + 1, "x", PrimitiveType::Long).with_doc("x doc")])),
            ));
            next_id += 2;
        }
        let schema = Schema::new(0, fields).unwrap();
        let mut builder = PartitionSpec::builder(&schema);
        let mut used = std::collections::HashSet::new();
        for (col, t) in transform_picks {
            let col = col % types.len();
            let transform = TRANSFORMS[t].clone();
            // One field per transform, and one time transform per column (Java's builder).
            let class = match transform {
                Transform::Year | Transform::Month | Transform::Day | Transform::Hour => usize::MAX,
                _ => t,
            };
            if transform.can_transform(&types[col]) && used.insert((col, class)) {
                builder = builder.add(&format!("c{col}"), transform).unwrap();
            }
        }
        let spec = builder.build().unwrap();
        let sort_fields: Vec<SortField> = sort_picks
            .iter()
            .filter(|(c, _, _)| Transform::Identity.can_transform(&types[c % types.len()]))
            .map(|(c, desc, nulls_first)| SortField {
                transform: Transform::Identity,
                source_id: (c % types.len()) as i32 + 1,
                direction: if *desc { SortDirection::Desc } else { SortDirection::Asc },
                null_order: if *nulls_first { NullOrder::NullsFirst } else { NullOrder::NullsLast },
            })
            .collect();
        let order = if sort_fields.is_empty() { SortOrder::unsorted() } else { SortOrder { order_id: 1, fields: sort_fields } };
        let props: BTreeMap<String, String> = props
            .into_iter()
            .filter(|(k, _)| !iceberg_spec::table_metadata::RESERVED_PROPERTIES.contains(&k.as_str()))
            .collect();
        let uuid = uuid::Uuid::from_u64_pair(seed, seed.rotate_left(17));
        let mut m = TableMetadata::new_table(v, uuid, "s3://bucket/db/t", schema, spec, order, props, 1_700_000_000_000).unwrap();
        let v3 = v == FormatVersion::V3;
        let mut parent = None;
        for i in 0..snapshots as i64 {
            let id = (seed as i64 & 0xFFFF) * 100 + i + 1;
            let mut summary = Summary::new(Operation::Append);
            summary.properties = extra.clone();
            let seq = if v == FormatVersion::V1 { 0 } else { i + 1 };
            m.snapshots.push(SharedSnapshot::new(Snapshot {
                snapshot_id: id,
                parent_snapshot_id: parent,
                sequence_number: seq,
                timestamp_ms: 1_700_000_000_000 + i,
                manifest_list: Some(format!("s3://bucket/db/t/metadata/snap-{id}-1-x.avro")),
                manifests: None,
                summary: Some(summary),
                schema_id: Some(0),
                first_row_id: v3.then_some(i * 10),
                added_rows: v3.then_some(10),
                key_id: None,
            }));
            m.last_sequence_number = seq;
            m.snapshot_log.push(SnapshotLogEntry { timestamp_ms: 1_700_000_000_000 + i, snapshot_id: id });
            m.metadata_log.push(MetadataLogEntry {
                timestamp_ms: 1_700_000_000_000 + i,
                metadata_file: format!("s3://bucket/db/t/metadata/{i:05}-x.metadata.json"),
            });
            if v3 {
                m.next_row_id = Some((i + 1) * 10);
            }
            m.current_snapshot_id = Some(id);
            m.refs.insert("main".into(), SnapshotRef::branch(id));
            parent = Some(id);
        }
        m.last_column_id = next_id - 1;
        m
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn metadata_json_round_trips(m in metadata()) {
        let text = m.to_json().unwrap();
        let back = TableMetadata::from_json(&text).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(back.to_json().unwrap(), text.clone());
        // A clone shares the rendered snapshots and writes the same bytes.
        prop_assert_eq!(back.clone().to_json().unwrap(), text.clone());
        let reprinted = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        )
        .unwrap();
        prop_assert_eq!(reprinted, text);
    }
}
