//! Property tests of the manifest and manifest-list encoders: whatever we encode, apache-avro's
//! decoder (driven by the schema in the file's own header) reads back unchanged, for every
//! format version, every partition value type, and across rolled manifests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use iceberg_append::manifest::{ManifestContext, decode_manifest, encode_manifests};
use iceberg_append::manifest_list::{
    ManifestListHeader, decode_manifest_list, encode_manifest_list,
};
use iceberg_spec::transform::Transform;
use iceberg_spec::{
    DataFile, Datum, FieldSummary, FormatVersion, ManifestContent, ManifestEntry, ManifestFile,
    ManifestStatus, NestedField, PartitionSpec, PrimitiveType, Schema,
};
use proptest::prelude::*;

/// Every partition value type the Avro schema distinguishes.
fn partition_types() -> Vec<PrimitiveType> {
    vec![
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
            scale: 10,
        },
        PrimitiveType::Date,
        PrimitiveType::Time,
        PrimitiveType::Timestamp,
        PrimitiveType::Timestamptz,
        PrimitiveType::TimestampNs,
        PrimitiveType::TimestamptzNs,
        PrimitiveType::String,
        PrimitiveType::Uuid,
        PrimitiveType::Fixed(3),
        PrimitiveType::Binary,
    ]
}

fn table(version: FormatVersion) -> (Schema, PartitionSpec) {
    let fields = partition_types()
        .into_iter()
        .enumerate()
        .filter(|(_, t)| version == FormatVersion::V3 || t.min_format_version() < 3)
        .map(|(i, t)| NestedField::optional(i as i32 + 1, format!("c{i}"), t))
        .collect::<Vec<_>>();
    let schema = Schema::new(0, fields).unwrap();
    let mut builder = PartitionSpec::builder(&schema);
    for f in schema.fields() {
        builder = builder.add(&f.name, Transform::Identity).unwrap();
    }
    (schema.clone(), builder.build().unwrap())
}

fn datum(ty: &PrimitiveType) -> BoxedStrategy<Datum> {
    use PrimitiveType as P;
    match ty {
        P::Boolean => any::<bool>().prop_map(Datum::Boolean).boxed(),
        P::Int => any::<i32>().prop_map(Datum::Int).boxed(),
        P::Long => any::<i64>().prop_map(Datum::Long).boxed(),
        P::Float => any::<f32>().prop_map(Datum::Float).boxed(),
        P::Double => any::<f64>().prop_map(Datum::Double).boxed(),
        P::Decimal { precision, scale } => {
            let (p, s) = (*precision, *scale);
            let max = 10i128.pow(p) - 1;
            (-max..=max)
                .prop_map(move |unscaled| Datum::Decimal {
                    unscaled,
                    precision: p,
                    scale: s,
                })
                .boxed()
        }
        P::Date => any::<i32>().prop_map(Datum::Date).boxed(),
        P::Time => (0i64..86_400_000_000).prop_map(Datum::Time).boxed(),
        P::Timestamp => any::<i64>().prop_map(Datum::Timestamp).boxed(),
        P::Timestamptz => any::<i64>().prop_map(Datum::Timestamptz).boxed(),
        P::TimestampNs => any::<i64>().prop_map(Datum::TimestampNs).boxed(),
        P::TimestamptzNs => any::<i64>().prop_map(Datum::TimestamptzNs).boxed(),
        P::String => ".{0,12}".prop_map(Datum::String).boxed(),
        P::Uuid => any::<[u8; 16]>()
            .prop_map(|b| Datum::Uuid(uuid::Uuid::from_bytes(b)))
            .boxed(),
        P::Fixed(n) => proptest::collection::vec(any::<u8>(), *n as usize)
            .prop_map(Datum::Fixed)
            .boxed(),
        _ => proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(Datum::Binary)
            .boxed(),
    }
}

fn metric_map<T: std::fmt::Debug + Clone + 'static>(
    values: BoxedStrategy<T>,
) -> impl Strategy<Value = BTreeMap<i32, T>> {
    proptest::collection::btree_map(-3i32..40, values, 0..6)
}

fn entry(
    version: FormatVersion,
    types: Vec<PrimitiveType>,
    spec_id: i32,
) -> impl Strategy<Value = ManifestEntry> {
    let partition = types
        .iter()
        .map(|t| proptest::option::of(datum(t)))
        .collect::<Vec<_>>();
    let v1 = version == FormatVersion::V1;
    let v3 = version == FormatVersion::V3;
    let bytes = proptest::collection::vec(any::<u8>(), 0..20).boxed();
    (
        (
            partition,
            "[a-z0-9/]{1,30}",
            0i64..1 << 40,
            0i64..1 << 40,
            metric_map(any::<i64>().boxed()),
            metric_map(any::<i64>().boxed()),
            metric_map(bytes.clone()),
            metric_map(bytes),
        ),
        (
            proptest::option::of(proptest::collection::vec(any::<i64>(), 0..4)),
            proptest::option::of(proptest::collection::vec(any::<i32>(), 0..3)),
            proptest::option::of(any::<i32>()),
            proptest::option::of(any::<i64>()),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8)),
            0usize..3,
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
        ),
    )
        .prop_map(
            move |(
                (partition, name, records, size, counts, nulls, lower, upper),
                (splits, eq_ids, sort_id, first_row, key_meta, status, snap, seq),
            )| {
                let status = [
                    ManifestStatus::Existing,
                    ManifestStatus::Added,
                    ManifestStatus::Deleted,
                ][status];
                ManifestEntry {
                    status,
                    snapshot_id: snap,
                    sequence_number: if v1 { None } else { seq },
                    file_sequence_number: if v1 { None } else { seq.map(|s| s / 2) },
                    data_file: DataFile {
                        file_path: format!("s3://b/t/data/{name}.parquet"),
                        spec_id,
                        partition,
                        record_count: records,
                        file_size_in_bytes: size,
                        column_sizes: counts.clone(),
                        value_counts: counts,
                        null_value_counts: nulls.clone(),
                        nan_value_counts: nulls,
                        lower_bounds: lower,
                        upper_bounds: upper,
                        key_metadata: key_meta,
                        split_offsets: splits,
                        equality_ids: if v1 { None } else { eq_ids },
                        sort_order_id: sort_id,
                        first_row_id: if v3 { first_row } else { None },
                        ..Default::default()
                    },
                }
            },
        )
}

fn version() -> impl Strategy<Value = FormatVersion> {
    prop_oneof![
        Just(FormatVersion::V1),
        Just(FormatVersion::V2),
        Just(FormatVersion::V3)
    ]
}

fn entries() -> impl Strategy<Value = (FormatVersion, Vec<ManifestEntry>)> {
    version().prop_flat_map(|v| {
        let (schema, spec) = table(v);
        let types = spec
            .partition_type(&schema)
            .unwrap()
            .fields
            .iter()
            .map(|f| f.field_type.as_primitive().unwrap().clone())
            .collect::<Vec<_>>();
        (
            Just(v),
            proptest::collection::vec(entry(v, types, spec.spec_id()), 0..40),
        )
    })
}

/// Floats compare by bits so that NaN round-trips count as equal.
fn normalise(mut e: ManifestEntry) -> ManifestEntry {
    for d in e.data_file.partition.iter_mut().flatten() {
        match d {
            Datum::Float(f) if f.is_nan() => *d = Datum::Binary(f.to_bits().to_le_bytes().into()),
            Datum::Double(f) if f.is_nan() => *d = Datum::Binary(f.to_bits().to_le_bytes().into()),
            _ => {}
        }
    }
    e
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn manifests_decode_to_what_was_encoded(
        (v, entries) in entries(),
        codec in prop_oneof![Just(iceberg_spec::AvroCodec::Deflate), Just(iceberg_spec::AvroCodec::Snappy), Just(iceberg_spec::AvroCodec::Zstd), Just(iceberg_spec::AvroCodec::Uncompressed)],
        target in prop_oneof![Just(1u64), Just(2_000), Just(u64::MAX)],
    ) {
        let (schema, spec) = table(v);
        let ctx = ManifestContext {
            version: v,
            schema: &schema,
            spec: &spec,
            codec,
            marker: [7; 16],
            target_size_bytes: target,
            content: iceberg_spec::ManifestContent::Data,
        };
        let encoded = encode_manifests(&ctx, 99, &entries, |n| format!("m{n}.avro")).unwrap();
        let mut back = Vec::new();
        for (n, m) in encoded.iter().enumerate() {
            prop_assert_eq!(&m.file.manifest_path, &format!("m{n}.avro"));
            prop_assert_eq!(m.file.manifest_length, m.bytes.len() as i64);
            let decoded = decode_manifest(&m.file.manifest_path, &m.bytes).unwrap();
            prop_assert_eq!(decoded.metadata.get("format-version"), Some(&v.number().to_string()));
            let listed = m.file.added_files_count.unwrap_or(0)
                + m.file.existing_files_count.unwrap_or(0)
                + m.file.deleted_files_count.unwrap_or(0);
            prop_assert_eq!(listed as usize, decoded.entries.len());
            prop_assert!(!decoded.entries.is_empty());
            back.extend(decoded.entries);
        }
        // A target of one byte rolls after the first block; no target never rolls.
        if target == u64::MAX {
            prop_assert!(encoded.len() <= 1);
        }
        let expect: Vec<_> = entries.into_iter().map(normalise).collect();
        let got: Vec<_> = back.into_iter().map(normalise).collect();
        prop_assert_eq!(got, expect);
    }

    #[test]
    fn manifest_lists_decode_to_what_was_encoded(
        v in version(),
        rows in proptest::collection::vec(
            (
                "[a-z0-9]{1,20}",
                0i64..1 << 40,
                0i32..5,
                (0i64..1000, 0i64..1000, any::<i64>()),
                proptest::option::of(0i32..1000),
                proptest::option::of(0i64..1 << 40),
                proptest::option::of(proptest::collection::vec(
                    (
                        any::<bool>(),
                        proptest::option::of(any::<bool>()),
                        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..9)),
                    ),
                    0..4,
                )),
                proptest::option::of(0i64..1 << 40),
            ),
            0..30,
        ),
    ) {
        let files: Vec<ManifestFile> = rows
            .into_iter()
            .map(|(name, len, spec, (seq, min_seq, snap), count, rows, parts, first)| {
                let v1 = v == FormatVersion::V1;
                ManifestFile {
                    manifest_path: format!("s3://b/t/metadata/{name}.avro"),
                    manifest_length: len,
                    partition_spec_id: spec,
                    content: ManifestContent::Data,
                    sequence_number: if v1 { 0 } else { seq },
                    min_sequence_number: if v1 { 0 } else { min_seq },
                    added_snapshot_id: snap,
                    // v2+ lists carry the counts as required fields.
                    added_files_count: if v1 { count } else { Some(count.unwrap_or(0)) },
                    existing_files_count: Some(count.unwrap_or(3)),
                    deleted_files_count: Some(0),
                    added_rows_count: if v1 { rows } else { Some(rows.unwrap_or(0)) },
                    existing_rows_count: Some(7),
                    deleted_rows_count: Some(0),
                    partitions: parts.map(|ps| {
                        ps.into_iter()
                            .map(|(contains_null, contains_nan, bound)| FieldSummary {
                                contains_null,
                                contains_nan,
                                lower_bound: bound.clone(),
                                upper_bound: bound,
                            })
                            .collect()
                    }),
                    key_metadata: None,
                    first_row_id: if v == FormatVersion::V3 { first } else { None },
                }
            })
            .collect();
        let header = ManifestListHeader {
            version: v,
            snapshot_id: 5,
            parent_snapshot_id: Some(4),
            sequence_number: 3,
            first_row_id: Some(0),
        };
        let bytes = encode_manifest_list("l.avro", &header, &files, iceberg_spec::AvroCodec::Deflate, [1; 16]).unwrap();
        let back = decode_manifest_list("l.avro", &bytes).unwrap();
        prop_assert_eq!(back, files);
    }
}

#[test]
fn a_decimal_outside_its_precision_is_refused_with_the_file_named() {
    let (schema, spec) = table(FormatVersion::V2);
    let types = partition_types();
    let mut partition: Vec<Option<Datum>> = vec![None; types.len() - 2];
    // c5 is decimal(9, 2): 4 bytes hold at most 2^31 - 1 unscaled.
    partition[5] = Some(Datum::Decimal {
        unscaled: 1 << 40,
        precision: 9,
        scale: 2,
    });
    let e = ManifestEntry::added(
        1,
        DataFile {
            file_path: "s3://b/t/data/bad.parquet".into(),
            spec_id: spec.spec_id(),
            partition,
            ..Default::default()
        },
    );
    let ctx = ManifestContext {
        version: FormatVersion::V2,
        schema: &schema,
        spec: &spec,
        codec: iceberg_spec::AvroCodec::Deflate,
        marker: [0; 16],
        target_size_bytes: u64::MAX,
        content: iceberg_spec::ManifestContent::Data,
    };
    let err = encode_manifests(&ctx, 1, &[e], |_| "m.avro".into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.parquet") && err.contains("c5"), "{err}");
}
