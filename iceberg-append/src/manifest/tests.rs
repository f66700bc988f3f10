#![allow(clippy::unwrap_used, clippy::panic)]

use iceberg_spec::{DataFile, Datum, NestedField, PrimitiveType, Transform};
use serde_json::Value;

use super::*;

/// A table whose partition field names are not Avro names, one per kind the issue names.
fn odd_table() -> (Schema, PartitionSpec) {
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "event-time", PrimitiveType::Timestamptz),
            NestedField::optional(2, "user id", PrimitiveType::Long),
            NestedField::optional(3, "1col", PrimitiveType::Int),
            NestedField::optional(4, "café", PrimitiveType::String),
        ],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema)
        .add("event-time", Transform::Day)
        .unwrap()
        .add("user id", Transform::Identity)
        .unwrap()
        .add("1col", Transform::Identity)
        .unwrap()
        .add("café", Transform::Identity)
        .unwrap()
        .build()
        .unwrap();
    (schema, spec)
}

fn entry() -> ManifestEntry {
    ManifestEntry::added(
        7,
        DataFile {
            file_path: "f.parquet".into(),
            record_count: 1,
            file_size_in_bytes: 10,
            partition: vec![
                Some(Datum::Date(19_000)),
                Some(Datum::Long(-4)),
                Some(Datum::Int(9)),
                Some(Datum::String("é".into())),
            ],
            ..Default::default()
        },
    )
}

/// A v2 data manifest context of `schema` and `spec`, deflated, in one file.
fn v2_context<'a>(schema: &'a Schema, spec: &'a PartitionSpec) -> ManifestContext<'a> {
    ManifestContext {
        version: FormatVersion::V2,
        schema,
        spec,
        codec: iceberg_spec::AvroCodec::Deflate,
        marker: [1; 16],
        target_size_bytes: u64::MAX,
        content: ManifestContent::Data,
    }
}

fn partition_fields(schema_json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(schema_json).unwrap();
    let data_file = &v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "data_file")
        .unwrap()["type"];
    let partition = data_file["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "partition")
        .unwrap();
    partition["type"]["fields"].as_array().unwrap().clone()
}

/// Partition names are written as Java's `AvroSchemaUtil.makeCompatibleName` writes them,
/// the Iceberg name kept in `iceberg-field-name`, and read back.
#[test]
fn partition_names_are_sanitized_as_java_and_read_back() {
    let (schema, spec) = odd_table();
    let ctx = v2_context(&schema, &spec);
    let encoded = encode_manifests(&ctx, 7, &[entry()], |_| "m.avro".into()).unwrap();
    let bytes = &encoded[0].bytes;
    let raw = raw_schema(bytes);
    let fields = partition_fields(&raw);
    let got: Vec<(&str, Option<&str>)> = fields
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap(),
                f["iceberg-field-name"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("event_x2Dtime_day", Some("event-time_day")),
            ("user_x20id", Some("user id")),
            ("_1col", Some("1col")),
            // Java would keep `café` (not an Avro name); escaped as Java escapes.
            ("caf_xE9", Some("café")),
        ]
    );
    apache_avro::Reader::new(&bytes[..]).unwrap();
    let back = decode_manifest("m.avro", bytes).unwrap();
    assert_eq!(
        back.entries[0].data_file.partition,
        entry().data_file.partition
    );
}

/// Manifests other writers wrote with raw names that apache-avro refuses (a dash, a space, a
/// non-ASCII letter) are read: the header is re-read under names it accepts.
#[test]
fn raw_partition_names_of_other_writers_are_read() {
    let (schema, spec) = odd_table();
    let pt = spec.partition_type(&schema).unwrap();
    let mut schema_json = crate::avro::schema::manifest_entry_schema(FormatVersion::V2, &pt);
    rename_partition_fields(&mut schema_json, &pt);
    let text = schema_json.to_string();
    assert!(text.contains("\"event-time_day\""));
    assert!(
        apache_avro::Schema::parse_str(&text).is_err(),
        "apache-avro refuses it"
    );
    let meta = vec![
        ("schema", schema.to_json().to_string()),
        ("partition-spec", spec.fields_json().to_string()),
        ("partition-spec-id", "0".to_string()),
        ("format-version", "2".to_string()),
        ("content", "data".to_string()),
    ];
    let mut w = crate::avro::ContainerWriter::new(
        "raw.avro",
        &text,
        &meta,
        crate::avro::codec(iceberg_spec::AvroCodec::Zstd),
        [2; 16],
    );
    let types = encode::partition_types(&pt);
    w.append(|buf| encode::put_entry(buf, &entry(), FormatVersion::V2, &pt, &types))
        .unwrap();
    let bytes = w.finish().unwrap();
    let back = decode_manifest("raw.avro", &bytes).unwrap();
    assert_eq!(
        back.entries[0].data_file.partition,
        entry().data_file.partition
    );
}

/// Sets every partition field's Avro name to its raw Iceberg name, as a writer that does not
/// sanitize would.
fn rename_partition_fields(schema: &mut Value, pt: &StructType) {
    let fields = schema["fields"].as_array_mut().unwrap();
    let data_file = fields
        .iter_mut()
        .find(|f| f["name"] == "data_file")
        .unwrap();
    let df_fields = data_file["type"]["fields"].as_array_mut().unwrap();
    let partition = df_fields
        .iter_mut()
        .find(|f| f["name"] == "partition")
        .unwrap();
    for (f, field) in partition["type"]["fields"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(&pt.fields)
    {
        f["name"] = Value::String(field.name.clone());
        f.as_object_mut().unwrap().remove("iceberg-field-name");
        if field.name == "1col" {
            // A name unrelated to the Iceberg name: only its field id finds it.
            f["name"] = Value::String("p2".into());
        }
    }
}

/// The `avro.schema` text of a container file's header, as written.
fn raw_schema(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.find("{\"type\":\"record\"").unwrap();
    let mut depth = 0;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return text[start..start + i + 1].to_string();
                }
            }
            _ => {}
        }
    }
    panic!("no schema in header")
}

/// Manifests read [`MANIFEST_READS`] at a time come back in the order asked for (more of
/// them than are read at once, the larger ones first so that later ones finish first), and
/// a missing one fails the read naming its path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_read_at_once_come_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}", dir.path().display());
    let io = iceberg_io::FileIo::from_location(&location, &Default::default()).unwrap();
    let (schema, spec) = odd_table();
    let ctx = v2_context(&schema, &spec);
    let mut paths = Vec::new();
    for i in 0..100usize {
        let entries: Vec<ManifestEntry> = (0..(100 - i) * 8)
            .map(|n| {
                let mut e = entry();
                e.data_file.file_path = format!("m{i}-f{n}.parquet");
                e
            })
            .collect();
        let path = format!("{location}/metadata/m{i}.avro");
        let encoded = encode_manifests(&ctx, 7, &entries, |_| path.clone()).unwrap();
        io.put(&path, encoded[0].bytes.clone().into())
            .await
            .unwrap();
        paths.push(path);
    }
    assert!(paths.len() > MANIFEST_READS);
    let read = read_manifests(&io, paths.iter().map(String::as_str))
        .await
        .unwrap();
    assert_eq!(read.len(), paths.len());
    for (i, manifest) in read.iter().enumerate() {
        assert_eq!(manifest.entries.len(), (100 - i) * 8);
        assert_eq!(
            manifest.entries[0].data_file.file_path,
            format!("m{i}-f0.parquet")
        );
    }
    let missing = format!("{location}/metadata/missing.avro");
    let with_missing = [paths[0].as_str(), missing.as_str(), paths[1].as_str()];
    let err = read_manifests(&io, with_missing).await.unwrap_err();
    assert!(err.to_string().contains("missing.avro"), "{err}");
}

/// A second spec of [`odd_table`]'s schema: another header for the same table.
fn bucket_spec(schema: &Schema) -> PartitionSpec {
    PartitionSpec::builder(schema)
        .with_spec_id(1)
        .add("user id", Transform::Bucket(8))
        .unwrap()
        .build()
        .unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// One decoder shared by manifests of several headers (specs, format versions, codecs;
    /// manifests of several blocks among them) decodes each exactly as apache-avro's reader
    /// does the whole file, and parses each distinct header once.
    #[test]
    fn manifests_decoded_under_shared_headers_equal_whole_decoding(
        manifests in proptest::collection::vec(
            (proptest::bool::ANY, 0usize..3, 0usize..4, proptest::sample::select(vec![0usize, 1, 3, 900]), proptest::num::i64::ANY),
            1..12,
        ),
    ) {
        use iceberg_spec::AvroCodec;
        let (schema, odd) = odd_table();
        let bucket = bucket_spec(&schema);
        let decoder = ManifestDecoder::default();
        let mut headers = std::collections::BTreeSet::new();
        for (i, (bucketed, version, codec, count, seed)) in manifests.into_iter().enumerate() {
            let version = [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3][version];
            let codec = [AvroCodec::Deflate, AvroCodec::Snappy, AvroCodec::Zstd, AvroCodec::Uncompressed][codec];
            let spec = if bucketed { &bucket } else { &odd };
            let ctx = ManifestContext { version, codec, marker: [i as u8; 16], ..v2_context(&schema, spec) };
            let entries: Vec<ManifestEntry> = (0..count as i64)
                .map(|n| {
                    let mut e = entry();
                    e.data_file.file_path = format!("f{seed}-{n}.parquet");
                    e.data_file.record_count = seed.wrapping_add(n).rem_euclid(1 << 40);
                    e.data_file.spec_id = spec.spec_id();
                    if bucketed {
                        e.data_file.partition = vec![Some(Datum::Int(n as i32 % 8))];
                    } else if n % 2 == 1 {
                        e.data_file.partition[1] = Some(Datum::Long(seed ^ n));
                        e.data_file.partition[3] = None;
                    }
                    e
                })
                .collect();
            let path = format!("m{i}.avro");
            for m in encode_manifests(&ctx, 7, &entries, |_| path.clone()).unwrap() {
                // Decoded under the header, not by the whole-file fallback.
                let shared = decoder.decode_by_header(&path, &m.bytes).unwrap();
                let whole = read::decode_whole(&path, &m.bytes).unwrap();
                proptest::prop_assert_eq!(&shared.metadata, &whole.metadata);
                proptest::prop_assert_eq!(&shared.entries, &whole.entries);
                proptest::prop_assert_eq!(&shared.entries, &entries);
                headers.insert((bucketed, version, format!("{codec:?}")));
            }
        }
        proptest::prop_assert_eq!(decoder.headers_parsed(), headers.len());
    }
}

/// A manifest whose blocks do not decode under its header (a payload cut short) is an
/// error naming it, from the shared decoder as from a whole read.
#[test]
fn a_broken_manifest_is_an_error_naming_it() {
    let (schema, spec) = odd_table();
    let ctx = ManifestContext {
        codec: iceberg_spec::AvroCodec::Uncompressed,
        ..v2_context(&schema, &spec)
    };
    let good = encode_manifests(&ctx, 7, &[entry()], |_| "good.avro".into()).unwrap();
    let bytes = good[0].bytes.clone();
    let decoder = ManifestDecoder::default();
    decoder.decode("good.avro", &bytes).unwrap();
    // The same header, the first block's row count doubled: its payload runs out.
    let (_, header_end) = crate::avro::blocks::header_entries(&bytes).unwrap();
    let mut broken = bytes.clone();
    let count_at = header_end + 16;
    assert_eq!(broken[count_at], 2, "one row, zig-zag encoded");
    broken[count_at] = 4;
    let err = decoder.decode("broken.avro", &broken).unwrap_err();
    assert!(err.to_string().contains("broken.avro"), "{err}");
    assert_eq!(decoder.headers_parsed(), 1);
}
