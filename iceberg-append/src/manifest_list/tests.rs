//! Laws of manifest lists written onto their parents: whatever the history, a list decodes
//! to exactly its rows; the parent's blocks a fast append repeats are copied byte for byte;
//! over a long history of fast appends, blocks grow rather than multiply.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::*;
use iceberg_spec::{FieldSummary, ManifestContent};

/// What one commit does to its parent's rows.
#[derive(Debug, Clone)]
enum Step {
    /// A fast append: new rows, then every parent row.
    Append(usize),
    /// A merge: new rows, then the parent's rows but for `drop` taken from `at`.
    Merge { new: usize, at: usize, drop: usize },
    /// New rows, then the parent's rows with one changed (as v3 assigns a missing row id).
    Touch { new: usize, at: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1usize..4).prop_map(Step::Append),
        1 => (1usize..3, 0usize..400, 1usize..40).prop_map(|(new, at, drop)| Step::Merge { new, at, drop }),
        1 => (1usize..3, 0usize..400).prop_map(|(new, at)| Step::Touch { new, at }),
    ]
}

fn row(version: FormatVersion, n: usize) -> ManifestFile {
    let v1 = version == FormatVersion::V1;
    ManifestFile {
        manifest_path: format!("s3://bucket/wh/db/t/metadata/{n:08x}-2b1c5e7a-m0.avro"),
        manifest_length: 4_000 + n as i64,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: if v1 { 0 } else { n as i64 },
        min_sequence_number: if v1 { 0 } else { n as i64 },
        added_snapshot_id: 1_000_000 + n as i64,
        added_files_count: Some(1),
        existing_files_count: Some(0),
        deleted_files_count: Some(0),
        added_rows_count: Some(100 + n as i64),
        existing_rows_count: Some(0),
        deleted_rows_count: Some(0),
        partitions: Some(vec![FieldSummary {
            contains_null: false,
            contains_nan: None,
            lower_bound: Some((n as i32).to_le_bytes().to_vec()),
            upper_bound: Some((n as i32 + 1).to_le_bytes().to_vec()),
        }]),
        key_metadata: None,
        first_row_id: (version == FormatVersion::V3).then_some(n as i64 * 1000),
    }
}

fn header(version: FormatVersion, snapshot_id: i64) -> ManifestListHeader {
    ManifestListHeader {
        version,
        snapshot_id,
        parent_snapshot_id: Some(snapshot_id - 1),
        sequence_number: snapshot_id,
        first_row_id: Some(0),
    }
}

fn block_rows(list: &ManifestList) -> Vec<usize> {
    list.block_rows()
}

fn payloads(list: &ManifestList) -> Vec<&[u8]> {
    let e = list.encoded.as_ref().unwrap();
    e.blocks.iter().map(|b| e.payload(b)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn lists_written_onto_parents_decode_to_their_rows(
        version in prop_oneof![Just(FormatVersion::V1), Just(FormatVersion::V2), Just(FormatVersion::V3)],
        codec in prop_oneof![Just(iceberg_spec::AvroCodec::Deflate), Just(iceberg_spec::AvroCodec::Snappy), Just(iceberg_spec::AvroCodec::Zstd), Just(iceberg_spec::AvroCodec::Uncompressed)],
        steps in proptest::collection::vec(step(), 1..200),
        reread_every in 1usize..8,
    ) {
        let mut next = 0usize;
        let mut fresh = |k: usize| -> Vec<ManifestFile> {
            (0..k).map(|_| { next += 1; row(version, next) }).collect()
        };
        let mut parent: Option<ManifestList> = None;
        for (i, step) in steps.iter().enumerate() {
            let old: Vec<ManifestFile> = parent
                .as_ref()
                .map(|p| p.rows().iter().map(|r| ManifestFile::clone(r)).collect())
                .unwrap_or_default();
            let (mut rows, pure) = match *step {
                Step::Append(k) => (fresh(k), true),
                Step::Merge { new, .. } | Step::Touch { new, .. } => (fresh(new), false),
            };
            let mut carried = old.clone();
            match *step {
                Step::Append(_) => {}
                Step::Merge { at, drop, .. } => {
                    let at = at.min(carried.len());
                    let end = (at + drop).min(carried.len());
                    carried.drain(at..end);
                }
                Step::Touch { at, .. } => {
                    if let Some(r) = carried.get_mut(at.min(old.len().saturating_sub(1))) {
                        r.existing_rows_count = Some(r.existing_rows_count.unwrap_or(0) + 1);
                    }
                }
            }
            rows.extend(carried);
            let path = format!("l{i}.avro");
            // Rows carried unchanged stay shared with the parent, as the plan leaves them.
            let by_path: std::collections::HashMap<&str, &Arc<ManifestFile>> = parent
                .iter()
                .flat_map(|p| p.rows())
                .map(|r| (r.manifest_path.as_str(), r))
                .collect();
            let shared: Vec<Arc<ManifestFile>> = rows
                .iter()
                .map(|r| match by_path.get(r.manifest_path.as_str()) {
                    Some(p) if ***p == *r => Arc::clone(p),
                    _ => Arc::new(r.clone()),
                })
                .collect();
            let (bytes, list) = encode_manifest_list_onto(
                &path, &header(version, i as i64 + 2), shared, codec, [i as u8; 16], parent.as_ref(),
            ).unwrap();
            // apache-avro, reading the file by its own header, sees exactly the rows.
            prop_assert_eq!(&decode_manifest_list(&path, &bytes).unwrap(), &rows);
            prop_assert!(list.rows().iter().map(|r| &**r).eq(rows.iter()));
            if pure && let Some(p) = &parent {
                // Every block of the parent but a small first one is copied, in order, at the end.
                let theirs = payloads(p);
                let ours = payloads(&list);
                let skip = usize::from(block_rows(p).first().is_some_and(|&n| n < REENCODE_BELOW_ROWS));
                let tail = &theirs[skip..];
                prop_assert!(ours.len() > tail.len() || tail.is_empty() && !ours.is_empty());
                prop_assert_eq!(&ours[ours.len() - tail.len()..], tail);
            }
            // Every few commits the parent comes back from its bytes, as another process reads it.
            parent = Some(if i % reread_every == 0 {
                ManifestList::decode(&path, bytes).unwrap()
            } else {
                list
            });
        }
    }
}

#[test]
fn blocks_grow_rather_than_multiply_over_many_fast_appends() {
    let v = FormatVersion::V2;
    let mut parent: Option<ManifestList> = None;
    let mut reencoded_max = 0;
    for i in 0..3000usize {
        let mut rows = vec![Arc::new(row(v, i))];
        rows.extend(parent.iter().flat_map(|p| p.rows().iter().cloned()));
        let (bytes, list) = encode_manifest_list_onto(
            "l.avro",
            &header(v, i as i64 + 2),
            rows,
            iceberg_spec::AvroCodec::Deflate,
            [5; 16],
            parent.as_ref(),
        )
        .unwrap();
        let copied: usize = list.block_rows().iter().skip(1).sum();
        reencoded_max = reencoded_max.max(list.rows().len() - copied);
        if i == 2999 {
            let sizes = block_rows(&list);
            // All blocks but the growing first one hold at least the re-encoding threshold,
            // and the file is within 10% of one encoded in a single pass.
            assert!(
                sizes[1..].iter().all(|&n| n >= REENCODE_BELOW_ROWS),
                "{sizes:?}"
            );
            let whole = encode_manifest_list(
                "w.avro",
                &header(v, 2),
                list.rows(),
                iceberg_spec::AvroCodec::Deflate,
                [5; 16],
            )
            .unwrap();
            eprintln!(
                "{} vs {} bytes, {} blocks",
                bytes.len(),
                whole.len(),
                sizes.len()
            );
            assert!(
                bytes.len() * 100 <= whole.len() * 110,
                "{} vs {}",
                bytes.len(),
                whole.len()
            );
        }
        parent = Some(list);
    }
    // Each commit re-encodes its new row and a small first block, never the history.
    assert!(
        reencoded_max <= REENCODE_BELOW_ROWS,
        "{reencoded_max} rows re-encoded in one commit"
    );
}

#[test]
fn a_list_from_another_writer_is_encoded_whole() {
    let v = FormatVersion::V2;
    let rows: Vec<Arc<ManifestFile>> = (0..300).map(|n| Arc::new(row(v, n))).collect();
    let (bytes, _) = encode_manifest_list_onto(
        "p.avro",
        &header(v, 2),
        rows.clone(),
        iceberg_spec::AvroCodec::Deflate,
        [1; 16],
        None,
    )
    .unwrap();
    let mut parent = ManifestList::decode("p.avro", bytes).unwrap();
    // A schema written differently (another writer) must not be copied from.
    if let Some(e) = parent.encoded.as_mut() {
        e.schema.push(' ');
    }
    let mut next = vec![Arc::new(row(v, 1000))];
    next.extend(rows);
    let (_, list) = encode_manifest_list_onto(
        "n.avro",
        &header(v, 3),
        next,
        iceberg_spec::AvroCodec::Deflate,
        [2; 16],
        Some(&parent),
    )
    .unwrap();
    let parent_payloads = payloads(&parent);
    assert!(
        payloads(&list).iter().all(|b| !parent_payloads.contains(b)),
        "no block copied across schemas"
    );
    // And with a different codec neither.
    let parent = ManifestList::decode(
        "p.avro",
        encode_manifest_list_onto(
            "p.avro",
            &header(v, 2),
            list.rows()[1..].to_vec(),
            iceberg_spec::AvroCodec::Snappy,
            [1; 16],
            None,
        )
        .unwrap()
        .0,
    )
    .unwrap();
    let (_, again) = encode_manifest_list_onto(
        "m.avro",
        &header(v, 3),
        list.rows().to_vec(),
        iceberg_spec::AvroCodec::Deflate,
        [3; 16],
        Some(&parent),
    )
    .unwrap();
    let snappy = payloads(&parent);
    assert!(payloads(&again).iter().all(|b| !snappy.contains(b)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Reading a history's lists block by block (each distinct block once) finds exactly the
    /// rows that reading every list whole finds: lists written onto their parents, lists
    /// written in one pass (as other writers do), any codec and format version.
    #[test]
    fn a_history_read_by_distinct_blocks_has_every_lists_rows(
        version in prop_oneof![Just(FormatVersion::V1), Just(FormatVersion::V2), Just(FormatVersion::V3)],
        codec in prop_oneof![Just(iceberg_spec::AvroCodec::Deflate), Just(iceberg_spec::AvroCodec::Snappy), Just(iceberg_spec::AvroCodec::Zstd), Just(iceberg_spec::AvroCodec::Uncompressed)],
        steps in proptest::collection::vec((step(), any::<bool>()), 1..150),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let location = format!("file://{}", dir.path().display());
        let io = iceberg_io::FileIo::from_location(&location, &Default::default()).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut next = 0usize;
        let mut parent: Option<ManifestList> = None;
        let (mut paths, mut expected) = (Vec::new(), std::collections::BTreeSet::new());
        for (i, (step, one_pass)) in steps.iter().enumerate() {
            let new = match *step {
                Step::Append(k) | Step::Merge { new: k, .. } | Step::Touch { new: k, .. } => k,
            };
            let mut rows: Vec<Arc<ManifestFile>> = (0..new)
                .map(|_| {
                    next += 1;
                    Arc::new(row(version, next))
                })
                .collect();
            let mut carried: Vec<Arc<ManifestFile>> =
                parent.iter().flat_map(|p| p.rows().iter().cloned()).collect();
            if let Step::Merge { at, drop, .. } = *step {
                let at = at.min(carried.len());
                let end = (at + drop).min(carried.len());
                carried.drain(at..end);
            }
            rows.extend(carried);
            let path = format!("{location}/metadata/l{i}.avro");
            let header = header(version, i as i64 + 2);
            let bytes = if *one_pass {
                Bytes::from(encode_manifest_list(&path, &header, &rows, codec, [i as u8; 16]).unwrap())
            } else {
                encode_manifest_list_onto(&path, &header, rows, codec, [i as u8; 16], parent.as_ref())
                    .unwrap()
                    .0
            };
            runtime.block_on(io.put(&path, bytes.clone())).unwrap();
            for r in decode_manifest_list(&path, &bytes).unwrap() {
                expected.insert(format!("{r:?}"));
            }
            parent = Some(ManifestList::decode(&path, bytes).unwrap());
            paths.push(path);
        }
        let found: std::collections::BTreeSet<String> = runtime
            .block_on(rows_of_lists(&io, &paths))
            .unwrap()
            .iter()
            .map(|r| format!("{r:?}"))
            .collect();
        prop_assert_eq!(found, expected);
    }
}

/// A list that is not a container file fails the read, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_list_in_a_history_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let location = format!("file://{}", dir.path().display());
    let io = iceberg_io::FileIo::from_location(&location, &Default::default()).unwrap();
    let good = format!("{location}/metadata/good.avro");
    let bytes = encode_manifest_list(
        &good,
        &header(FormatVersion::V2, 2),
        &[row(FormatVersion::V2, 1)],
        iceberg_spec::AvroCodec::Deflate,
        [3; 16],
    )
    .unwrap();
    io.put(&good, Bytes::from(bytes.clone())).await.unwrap();
    let broken = format!("{location}/metadata/broken.avro");
    io.put(&broken, Bytes::from(bytes[..bytes.len() - 7].to_vec()))
        .await
        .unwrap();
    let err = rows_of_lists(&io, &[good, broken]).await.unwrap_err();
    assert!(err.to_string().contains("broken.avro"), "{err}");
}

/// Java before 1.5 (and the PyIceberg of its time) named fields 504-506
/// `added_data_files_count`, `existing_data_files_count` and `deleted_data_files_count`; Java
/// reads them by id, so their counts are known, and compaction and manifest rewrites need
/// them.
#[test]
fn counts_under_the_names_of_java_before_1_5_are_read() {
    use apache_avro::types::Value;
    for v in [FormatVersion::V1, FormatVersion::V2] {
        let rows: Vec<Arc<ManifestFile>> = (0..3).map(|n| Arc::new(row(v, n))).collect();
        let (bytes, _) = encode_manifest_list_onto(
            "p.avro",
            &header(v, 2),
            rows.clone(),
            iceberg_spec::AvroCodec::Uncompressed,
            [1; 16],
            None,
        )
        .unwrap();
        let reader = apache_avro::Reader::new(&bytes[..]).unwrap();
        let old = |name: &str| name.replace("_files_count", "_data_files_count");
        let schema_json = reader.writer_schema().canonical_form();
        let schema_json = ["added", "existing", "deleted"]
            .iter()
            .fold(schema_json, |s, k| {
                s.replace(
                    &format!("\"{k}_files_count\""),
                    &format!("\"{}\"", old(&format!("{k}_files_count"))),
                )
            });
        assert!(
            schema_json.contains("added_data_files_count"),
            "{schema_json}"
        );
        let schema = apache_avro::Schema::parse_str(&schema_json).unwrap();
        let mut writer = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
        for value in reader {
            let renamed = match value.unwrap() {
                Value::Record(fields) => Value::Record(
                    fields
                        .into_iter()
                        .map(|(name, value)| {
                            let name = if name.ends_with("_files_count") {
                                old(&name)
                            } else {
                                name
                            };
                            (name, value)
                        })
                        .collect(),
                ),
                other => other,
            };
            writer.append_value(renamed).unwrap();
        }
        let legacy = writer.into_inner().unwrap();
        let read = decode_manifest_list("old.avro", &legacy).unwrap();
        let want: Vec<ManifestFile> = rows.iter().map(|r| (**r).clone()).collect();
        assert_eq!(read, want, "{v:?}");
    }
}
