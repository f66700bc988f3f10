//! Merge append: fold small manifests as Java's `ManifestMergeManager` does.
//!
//! Manifests are grouped by partition spec (highest spec id first), each group is bin-packed
//! from its end with a lookback of one (so the under-filled bin is the newest and is merged
//! next time), and every bin of two or more manifests is rewritten as one, unless it holds
//! this commit's new manifest and has fewer than `commit.manifest.min-count-to-merge`
//! manifests. Rewritten entries keep what they inherited, made explicit: EXISTING status,
//! the original snapshot id, data and file sequence numbers, and (v3) first row id.
//!
//! Only data manifests are merged, and only with manifests of the same uuid sign classes
//! ([`MergeClass`]); delete manifests (position deletes, deletion vectors, equality deletes)
//! are carried as they are.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::datum::uuid_order::uuid_sign_class;
use iceberg_spec::{
    Datum, FormatVersion, ManifestContent, ManifestEntry, ManifestFile, ManifestStatus,
    PrimitiveType, StructType, TableMetadata, TableProperties, Type,
};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::manifest::{ManifestContext, encode_manifests, read_manifests};

/// What to do with one bin of manifests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeStep {
    /// List these manifests as they are.
    Keep(Vec<Arc<ManifestFile>>),
    /// Rewrite these manifests as one.
    Merge(Vec<Arc<ManifestFile>>),
}

/// Packs `weights` into bins of at most `target` (a bin always takes its first item), from
/// the end, with a lookback of one; returns index bins in the original order.
pub fn pack_end(weights: &[u64], target: u64) -> Vec<Vec<usize>> {
    let mut bins: Vec<Vec<usize>> = Vec::new();
    let mut open: Option<(Vec<usize>, u64)> = None;
    for i in (0..weights.len()).rev() {
        let w = weights[i];
        match &mut open {
            Some((items, total)) if *total + w <= target => {
                items.push(i);
                *total += w;
            }
            _ => {
                if let Some((items, _)) = open.take() {
                    bins.push(items);
                }
                open = Some((vec![i], w));
            }
        }
    }
    if let Some((items, _)) = open {
        bins.push(items);
    }
    bins.reverse();
    for b in &mut bins {
        b.reverse();
    }
    bins
}

/// The key that decides which manifests may be merged together, besides the spec: the sign
/// class of every uuid partition field (`None` for a field whose values are all null).
///
/// Java 1.10 orders uuids as signed longs, the spec as unsigned bytes; a manifest whose uuid
/// partition values are of one class has summary bounds that are right in both orders
/// ([`iceberg_spec::datum::uuid_order`]), and merging two manifests of one class keeps it so.
pub type MergeClass = Vec<Option<u8>>;

/// The positions of the uuid fields in a spec's partition tuple.
pub fn uuid_partition_fields(pt: &StructType) -> Vec<usize> {
    pt.fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.field_type == Type::Primitive(PrimitiveType::Uuid))
        .map(|(i, _)| i)
        .collect()
}

/// The merge class of one partition tuple.
pub fn partition_class(partition: &[Option<Datum>], uuid_fields: &[usize]) -> MergeClass {
    uuid_fields
        .iter()
        .map(|i| match partition.get(*i) {
            Some(Some(Datum::Uuid(u))) => Some(uuid_sign_class(u)),
            _ => None,
        })
        .collect()
}

/// The merge class of a listed manifest from its partition summaries, or `None` when the
/// summaries do not show one class per uuid field (another writer's manifest spanning classes,
/// or no summaries): such a manifest is never merged.
///
/// Bounds of one class are evidence, not proof, that every value is of that class (values
/// between them may differ in byte 8's top bit when bytes 0-7 of the bounds differ). Our own
/// manifests are pure (new manifests are split by the full class of every value, and merges
/// only join equal classes); a foreign manifest that is not pure already has bounds that are
/// wrong for one of the two orders, and merging it keeps exactly that.
pub fn manifest_class(m: &ManifestFile, uuid_fields: &[usize]) -> Option<MergeClass> {
    let class = |b: &[u8]| Uuid::from_slice(b).ok().map(|u| uuid_sign_class(&u));
    uuid_fields
        .iter()
        .map(|i| {
            let s = m.partitions.as_ref()?.get(*i)?;
            match (s.lower_bound.as_deref(), s.upper_bound.as_deref()) {
                (None, None) => Some(None),
                (Some(lo), Some(hi)) => {
                    let (lo, hi) = (class(lo)?, class(hi)?);
                    (lo == hi).then_some(Some(lo))
                }
                _ => None,
            }
        })
        .collect()
}

/// Decides which manifests to merge. `new_manifests` are this commit's (listed first);
/// `class_of` gives a data manifest's [`MergeClass`] (`None`: never merge it).
///
/// As Java's `MergingSnapshotProducer`, data and delete manifests are never merged with each
/// other: data manifests are packed and merged, delete manifests are carried unchanged after
/// them; a parent manifest with no added or existing files (only DELETED entries, as an
/// overwrite leaves) is dropped, so no bin is made of entries that are all gone.
pub fn plan_merge(
    new_manifests: &[ManifestFile],
    parent_manifests: &[Arc<ManifestFile>],
    target_size_bytes: u64,
    min_count_to_merge: usize,
    class_of: impl Fn(&ManifestFile) -> Option<MergeClass>,
) -> Vec<MergeStep> {
    let first = new_manifests.first().map(|m| m.manifest_path.as_str());
    type Key = (std::cmp::Reverse<i32>, Option<MergeClass>);
    let mut groups: BTreeMap<Key, Vec<Arc<ManifestFile>>> = BTreeMap::new();
    let mut deletes = Vec::new();
    let new = new_manifests.iter().map(|m| Arc::new(m.clone()));
    // Unknown counts (older writers) may hide live files: such manifests stay, as in Java.
    let has_live_files = |m: &ManifestFile| {
        m.added_files_count.is_none_or(|n| n > 0) || m.existing_files_count.is_none_or(|n| n > 0)
    };
    let parents = parent_manifests
        .iter()
        .filter(|m| has_live_files(m))
        .cloned();
    for m in new.chain(parents) {
        if m.content != ManifestContent::Data {
            deletes.push(m);
            continue;
        }
        let class = class_of(&m);
        groups
            .entry((std::cmp::Reverse(m.partition_spec_id), class))
            .or_default()
            .push(m);
    }
    let mut steps = Vec::new();
    for ((_, class), group) in groups {
        if class.is_none() {
            // Spans uuid sign classes: no merged summary could be right for every reader.
            steps.extend(group.into_iter().map(|m| MergeStep::Keep(vec![m])));
            continue;
        }
        let weights: Vec<u64> = group
            .iter()
            .map(|m| m.manifest_length.max(0) as u64)
            .collect();
        for bin in pack_end(&weights, target_size_bytes) {
            let manifests: Vec<Arc<ManifestFile>> = bin.iter().map(|i| group[*i].clone()).collect();
            let has_first = manifests
                .iter()
                .any(|m| Some(m.manifest_path.as_str()) == first);
            if manifests.len() == 1 || (has_first && manifests.len() < min_count_to_merge) {
                steps.push(MergeStep::Keep(manifests));
            } else {
                steps.push(MergeStep::Merge(manifests));
            }
        }
    }
    if !deletes.is_empty() {
        steps.push(MergeStep::Keep(deletes));
    }
    steps
}

/// The entries of a listed manifest with everything it inherits made explicit, as Java's
/// `InheritableMetadataFactory` does: the snapshot id always; the data and file sequence
/// numbers of an ADDED entry, or of any entry of a manifest listed with sequence number 0
/// (written before the table was v2); first row ids (v3) for live entries in order, none when
/// the manifest is listed without one.
pub fn inherit(manifest: &ManifestFile, entries: Vec<ManifestEntry>) -> Vec<ManifestEntry> {
    let mut next_row_id = manifest.first_row_id;
    let inherits_seq =
        |e: &ManifestEntry| manifest.sequence_number == 0 || e.status == ManifestStatus::Added;
    entries
        .into_iter()
        .map(|mut e| {
            e.snapshot_id.get_or_insert(manifest.added_snapshot_id);
            if inherits_seq(&e) {
                e.sequence_number.get_or_insert(manifest.sequence_number);
                e.file_sequence_number
                    .get_or_insert(manifest.sequence_number);
            }
            match next_row_id.as_mut() {
                Some(next)
                    if e.data_file.first_row_id.is_none()
                        && e.status != ManifestStatus::Deleted =>
                {
                    e.data_file.first_row_id = Some(*next);
                    *next += e.data_file.record_count;
                }
                Some(_) => {}
                // Java's `ManifestReader.idAssigner`: a manifest listed without a first row
                // id (a delete manifest, one written before v3) gives its files none, so a
                // foreign writer's stray ids are never carried into a rewrite.
                None => e.data_file.first_row_id = None,
            }
            e
        })
        .collect()
}

/// Rewrites merge bins into manifests, reusing results across attempts via `cache`.
pub(crate) struct Merger<'a> {
    pub(crate) io: &'a FileIo,
    pub(crate) meta: &'a TableMetadata,
    pub(crate) props: &'a TableProperties,
    pub(crate) snapshot_id: i64,
    /// Merged manifests are named `<dir>/<commit_uuid>-m<next_index>.avro`, counting up.
    pub(crate) dir: &'a str,
    pub(crate) commit_uuid: uuid::Uuid,
    pub(crate) next_index: usize,
    pub(crate) marker: [u8; 16],
}

/// What a merged manifest was made from, so a retry reuses it only when it would come out
/// the same: the same manifests with the same row ids, in a table of the same format version
/// (a table upgraded to v3 meanwhile, or manifests given row ids, need it written anew).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MergeKey {
    version: FormatVersion,
    manifests: Vec<(String, Option<i64>)>,
}

impl Merger<'_> {
    /// The merged manifest of `bin`, written now or taken from `cache`.
    pub(crate) async fn merge(
        &mut self,
        bin: &[Arc<ManifestFile>],
        new_paths: &[String],
        cache: &mut HashMap<MergeKey, ManifestFile>,
    ) -> Result<ManifestFile> {
        let key = MergeKey {
            version: self.meta.format_version,
            manifests: bin
                .iter()
                .map(|m| (m.manifest_path.clone(), m.first_row_id))
                .collect(),
        };
        if let Some(m) = cache.get(&key) {
            return Ok(m.clone());
        }
        let first_path = bin
            .first()
            .map(|m| m.manifest_path.as_str())
            .unwrap_or_default();
        let spec_id = bin.first().map(|m| m.partition_spec_id).unwrap_or_default();
        let spec = self.meta.spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_manifest(
                first_path,
                format!("partition spec {spec_id} is not in the table"),
            )
        })?;
        if let Some(m) = bin.iter().find(|m| m.content != ManifestContent::Data) {
            // plan_merge never bins delete manifests; a merged manifest is a data manifest.
            return Err(Error::invalid_manifest(
                &m.manifest_path,
                "a delete manifest cannot be merged into a data manifest",
            ));
        }
        let manifests =
            read_manifests(self.io, bin.iter().map(|m| m.manifest_path.as_str())).await?;
        let mut entries = Vec::new();
        for (m, decoded) in bin.iter().zip(manifests) {
            if decoded.metadata.get("content").is_some_and(|c| c != "data") {
                return Err(Error::invalid_manifest(
                    &m.manifest_path,
                    "listed as a data manifest but holds delete files",
                ));
            }
            if new_paths.contains(&m.manifest_path) {
                // This commit's own ADDED entries stay ADDED and keep inheriting.
                entries.extend(decoded.entries);
                continue;
            }
            for mut e in inherit(m, decoded.entries) {
                match e.status {
                    // Deletes of earlier snapshots are history, not state.
                    ManifestStatus::Deleted => continue,
                    _ => e.status = ManifestStatus::Existing,
                }
                if e.data_file.content != iceberg_spec::DataContentType::Data {
                    return Err(Error::invalid_manifest(
                        &m.manifest_path,
                        format!("data manifest holds delete file {}", e.data_file.file_path),
                    ));
                }
                if e.sequence_number.is_none() && e.file_sequence_number == Some(0) {
                    // Written by a v1 table (or by our merges before inheritance followed
                    // Java): a data sequence number is never above the file's, so it is 0.
                    e.sequence_number = Some(0);
                }
                if self.meta.format_version >= FormatVersion::V2 && e.sequence_number.is_none() {
                    // An EXISTING entry must say its data sequence number; guessing one would
                    // change which deletes apply to the file.
                    return Err(Error::invalid_manifest(
                        &m.manifest_path,
                        format!(
                            "entry for {} has no data sequence number to carry",
                            e.data_file.file_path
                        ),
                    ));
                }
                entries.push(e);
            }
        }
        let ctx = ManifestContext {
            version: self.meta.format_version,
            schema: self.meta.schema_for_spec(spec)?,
            spec,
            codec: self.props.manifest.compression_codec,
            marker: self.marker,
            // One bin becomes one manifest, whatever its size.
            target_size_bytes: u64::MAX,
            content: iceberg_spec::ManifestContent::Data,
        };
        let path = format!(
            "{}/{}-m{}.avro",
            self.dir, self.commit_uuid, self.next_index
        );
        self.next_index += 1;
        let mut encoded = encode_manifests(&ctx, self.snapshot_id, &entries, |_| path.clone())?;
        let merged = encoded
            .pop()
            .ok_or_else(|| Error::invalid_manifest(&path, "merge produced no manifest"))?;
        self.io
            .put(&merged.file.manifest_path, Bytes::from(merged.bytes))
            .await?;
        cache.insert(key, merged.file.clone());
        Ok(merged.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mf(path: &str, len: i64, spec: i32) -> ManifestFile {
        ManifestFile {
            manifest_path: path.into(),
            manifest_length: len,
            partition_spec_id: spec,
            content: iceberg_spec::ManifestContent::Data,
            sequence_number: 1,
            min_sequence_number: 1,
            added_snapshot_id: 1,
            added_files_count: Some(1),
            existing_files_count: Some(0),
            deleted_files_count: Some(0),
            added_rows_count: Some(1),
            existing_rows_count: Some(0),
            deleted_rows_count: Some(0),
            partitions: None,
            key_metadata: None,
            first_row_id: None,
        }
    }

    fn no_uuids(_: &ManifestFile) -> Option<MergeClass> {
        Some(Vec::new())
    }

    fn paths(steps: &[MergeStep]) -> Vec<(bool, Vec<&str>)> {
        steps
            .iter()
            .map(|s| match s {
                MergeStep::Keep(v) => (false, v.iter().map(|m| m.manifest_path.as_str()).collect()),
                MergeStep::Merge(v) => (true, v.iter().map(|m| m.manifest_path.as_str()).collect()),
            })
            .collect()
    }

    #[test]
    fn delete_manifests_are_carried_never_merged() {
        let new = [mf("new", 10, 0)];
        let mut parents: Vec<Arc<ManifestFile>> = Vec::new();
        for i in 0..3 {
            parents.push(Arc::new(mf(&format!("d{i}"), 10, 0)));
            let mut del = mf(&format!("x{i}"), 10, 0);
            del.content = ManifestContent::Deletes;
            parents.push(Arc::new(del));
        }
        let steps = plan_merge(&new, &parents, 1000, 2, no_uuids);
        assert_eq!(
            paths(&steps),
            vec![
                (true, vec!["new", "d0", "d1", "d2"]),
                (false, vec!["x0", "x1", "x2"]),
            ]
        );
    }

    /// Parent manifests left with only DELETED entries (an overwrite's) are dropped, data and
    /// delete manifests alike, as Java's merge append drops them: a bin of them alone would
    /// merge into nothing. Unknown counts keep a manifest.
    #[test]
    fn manifests_without_live_files_are_dropped() {
        let new = [mf("new", 50, 0)];
        let gone = |path: &str, content| {
            let mut m = mf(path, 50, 0);
            m.content = content;
            m.added_files_count = Some(0);
            m.deleted_files_count = Some(3);
            Arc::new(m)
        };
        let mut unknown = mf("unknown", 50, 0);
        unknown.added_files_count = None;
        unknown.existing_files_count = None;
        let parents = vec![
            Arc::new(mf("big", 700, 0)),
            gone("d1", ManifestContent::Data),
            gone("d2", ManifestContent::Data),
            gone("x1", ManifestContent::Deletes),
            Arc::new(unknown),
        ];
        let steps = plan_merge(&new, &parents, 100, 100, no_uuids);
        assert_eq!(
            paths(&steps),
            vec![
                (false, vec!["new"]),
                (false, vec!["big"]),
                (false, vec!["unknown"])
            ]
        );
    }

    #[test]
    fn uuid_classes_never_mix() {
        let new = [mf("new", 10, 0)];
        let parents: Vec<Arc<ManifestFile>> = ["a0", "b0", "a1", "mixed", "b1"]
            .iter()
            .map(|p| Arc::new(mf(p, 10, 0)))
            .collect();
        let class = |m: &ManifestFile| match m.manifest_path.as_bytes()[0] {
            b'm' => None,
            b'b' => Some(vec![Some(2)]),
            _ => Some(vec![Some(0)]),
        };
        let steps = plan_merge(&new, &parents, 1000, 2, class);
        assert_eq!(
            paths(&steps),
            vec![
                (false, vec!["mixed"]),
                (true, vec!["new", "a0", "a1"]),
                (true, vec!["b0", "b1"]),
            ]
        );
    }

    #[test]
    fn manifest_class_from_summaries() {
        let summary = |lo: Option<u128>, hi: Option<u128>| iceberg_spec::FieldSummary {
            contains_null: false,
            contains_nan: None,
            lower_bound: lo.map(|v| v.to_be_bytes().to_vec()),
            upper_bound: hi.map(|v| v.to_be_bytes().to_vec()),
        };
        let mut m = mf("m", 1, 0);
        assert_eq!(manifest_class(&m, &[0]), None, "no summaries: unknown");
        assert_eq!(manifest_class(&m, &[]), Some(vec![]));
        m.partitions = Some(vec![summary(Some(1), Some(2))]);
        assert_eq!(manifest_class(&m, &[0]), Some(vec![Some(0)]));
        m.partitions = Some(vec![summary(Some(1), Some(1 << 127))]);
        assert_eq!(manifest_class(&m, &[0]), None, "spans byte 0's sign");
        m.partitions = Some(vec![summary(Some(1), Some(1 << 63))]);
        assert_eq!(manifest_class(&m, &[0]), None, "spans byte 8's sign");
        m.partitions = Some(vec![summary(None, None)]);
        assert_eq!(manifest_class(&m, &[0]), Some(vec![None]));
    }

    #[test]
    fn sequence_numbers_inherited_as_java() {
        let file = |rows| iceberg_spec::DataFile {
            record_count: rows,
            ..Default::default()
        };
        let existing = ManifestEntry {
            status: ManifestStatus::Existing,
            snapshot_id: Some(1),
            sequence_number: None,
            file_sequence_number: None,
            data_file: file(1),
        };
        // A manifest written by a v1 table (listed with sequence number 0): every entry is 0.
        let mut v1 = mf("v1", 1, 0);
        v1.sequence_number = 0;
        let out = inherit(&v1, vec![existing.clone()]);
        assert_eq!(
            (out[0].sequence_number, out[0].file_sequence_number),
            (Some(0), Some(0))
        );
        // A v2 manifest: an EXISTING entry inherits nothing (Java leaves it null).
        let mut v2 = mf("v2", 1, 0);
        v2.sequence_number = 5;
        let out = inherit(&v2, vec![existing]);
        assert_eq!(
            (out[0].sequence_number, out[0].file_sequence_number),
            (None, None)
        );
    }

    #[test]
    fn packs_from_the_end_keeping_order() {
        // Target 10: from the end 4+3 fit, 5 starts a new bin, 6 another.
        assert_eq!(
            pack_end(&[6, 5, 3, 4], 10),
            vec![vec![0], vec![1], vec![2, 3]]
        );
        assert_eq!(
            pack_end(&[2, 2, 2, 2, 2], 4),
            vec![vec![0], vec![1, 2], vec![3, 4]]
        );
        assert_eq!(pack_end(&[20], 10), vec![vec![0]]);
        assert!(pack_end(&[], 10).is_empty());
    }

    #[test]
    fn new_manifest_bin_waits_for_min_count() {
        let new = [mf("new", 10, 0)];
        let parents: Vec<Arc<ManifestFile>> = (0..3)
            .map(|i| Arc::new(mf(&format!("p{i}"), 10, 0)))
            .collect();
        let steps = plan_merge(&new, &parents, 1000, 100, no_uuids);
        assert_eq!(steps.len(), 1);
        assert!(matches!(&steps[0], MergeStep::Keep(v) if v.len() == 4));
        let steps = plan_merge(&new, &parents, 1000, 4, no_uuids);
        assert!(matches!(&steps[0], MergeStep::Merge(v) if v.len() == 4));
    }

    #[test]
    fn full_old_bins_merge_without_the_new_one() {
        let new = [mf("new", 10, 0)];
        let parents: Vec<Arc<ManifestFile>> = (0..6)
            .map(|i| Arc::new(mf(&format!("p{i}"), 10, 0)))
            .collect();
        // Target 30 from the end: [p3 p4 p5], [p0 p1 p2], [new] (lookback 1 keeps order).
        let steps = plan_merge(&new, &parents, 30, 100, no_uuids);
        assert_eq!(steps.len(), 3);
        assert!(
            matches!(&steps[0], MergeStep::Keep(v) if v.len() == 1 && v[0].manifest_path == "new")
        );
        assert!(matches!(&steps[1], MergeStep::Merge(v) if v.len() == 3));
        assert!(matches!(&steps[2], MergeStep::Merge(v) if v.len() == 3));
    }

    #[test]
    fn groups_by_spec_highest_first() {
        let parents = [mf("a", 1, 0), mf("b", 1, 1), mf("c", 1, 0)].map(Arc::new);
        let steps = plan_merge(&[], &parents, 100, 2, no_uuids);
        let order: Vec<Vec<&str>> = steps
            .iter()
            .map(|s| match s {
                MergeStep::Keep(v) | MergeStep::Merge(v) => {
                    v.iter().map(|m| m.manifest_path.as_str()).collect()
                }
            })
            .collect();
        assert_eq!(order, vec![vec!["b"], vec!["a", "c"]]);
    }

    #[test]
    fn inheritance_made_explicit() {
        let mut m = mf("m", 1, 0);
        m.sequence_number = 7;
        m.added_snapshot_id = 42;
        m.first_row_id = Some(100);
        let file = |rows| iceberg_spec::DataFile {
            record_count: rows,
            ..Default::default()
        };
        let entries = vec![
            ManifestEntry::added(42, file(5)),
            ManifestEntry {
                status: ManifestStatus::Deleted,
                snapshot_id: None,
                sequence_number: Some(3),
                file_sequence_number: Some(3),
                data_file: file(9),
            },
            ManifestEntry {
                status: ManifestStatus::Added,
                snapshot_id: None,
                sequence_number: None,
                file_sequence_number: None,
                data_file: file(2),
            },
        ];
        let out = inherit(&m, entries);
        assert_eq!(out[0].sequence_number, Some(7));
        assert_eq!(out[0].data_file.first_row_id, Some(100));
        assert_eq!(
            out[1].data_file.first_row_id, None,
            "deleted entries take no row ids"
        );
        assert_eq!(out[1].sequence_number, Some(3));
        assert_eq!(out[2].snapshot_id, Some(42));
        assert_eq!(out[2].data_file.first_row_id, Some(105));
        // Listed without a first row id: no entry keeps one, whatever the manifest holds.
        m.first_row_id = None;
        let stray = ManifestEntry {
            status: ManifestStatus::Existing,
            snapshot_id: Some(1),
            sequence_number: Some(3),
            file_sequence_number: Some(3),
            data_file: iceberg_spec::DataFile {
                first_row_id: Some(7),
                ..file(4)
            },
        };
        let out = inherit(&m, vec![stray]);
        assert_eq!(out[0].data_file.first_row_id, None);
    }
}
