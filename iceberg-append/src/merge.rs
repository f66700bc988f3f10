//! Merge append: fold small manifests as Java's `ManifestMergeManager` does.
//!
//! Manifests are grouped by partition spec (highest spec id first), each group is bin-packed
//! from its end with a lookback of one (so the under-filled bin is the newest and is merged
//! next time), and every bin of two or more manifests is rewritten as one, unless it holds
//! this commit's new manifest and has fewer than `commit.manifest.min-count-to-merge`
//! manifests. Rewritten entries keep what they inherited, made explicit: EXISTING status,
//! the original snapshot id, data and file sequence numbers, and (v3) first row id.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::{ManifestEntry, ManifestFile, ManifestStatus, TableMetadata, TableProperties};

use crate::error::{Error, Result};
use crate::manifest::{ManifestContext, decode_manifest, encode_manifests};

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

/// Decides which manifests to merge. `new_manifests` are this commit's (listed first).
pub fn plan_merge(
    new_manifests: &[ManifestFile],
    parent_manifests: &[Arc<ManifestFile>],
    target_size_bytes: u64,
    min_count_to_merge: usize,
) -> Vec<MergeStep> {
    let first = new_manifests.first().map(|m| m.manifest_path.as_str());
    let mut groups: BTreeMap<std::cmp::Reverse<i32>, Vec<Arc<ManifestFile>>> = BTreeMap::new();
    let new = new_manifests.iter().map(|m| Arc::new(m.clone()));
    for m in new.chain(parent_manifests.iter().cloned()) {
        groups
            .entry(std::cmp::Reverse(m.partition_spec_id))
            .or_default()
            .push(m);
    }
    let mut steps = Vec::new();
    for group in groups.into_values() {
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
    steps
}

/// The entries of a listed manifest with everything it inherits made explicit.
pub fn inherit(manifest: &ManifestFile, entries: Vec<ManifestEntry>) -> Vec<ManifestEntry> {
    let mut next_row_id = manifest.first_row_id;
    entries
        .into_iter()
        .map(|mut e| {
            e.snapshot_id.get_or_insert(manifest.added_snapshot_id);
            if e.status == ManifestStatus::Added {
                e.sequence_number.get_or_insert(manifest.sequence_number);
            }
            e.file_sequence_number
                .get_or_insert(manifest.sequence_number);
            if e.data_file.first_row_id.is_none()
                && e.status != ManifestStatus::Deleted
                && let Some(next) = next_row_id.as_mut()
            {
                e.data_file.first_row_id = Some(*next);
                *next += e.data_file.record_count;
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

impl Merger<'_> {
    /// The merged manifest of `bin`, written now or taken from `cache`.
    pub(crate) async fn merge(
        &mut self,
        bin: &[Arc<ManifestFile>],
        new_paths: &[String],
        cache: &mut HashMap<Vec<String>, ManifestFile>,
    ) -> Result<ManifestFile> {
        let key: Vec<String> = bin.iter().map(|m| m.manifest_path.clone()).collect();
        if let Some(m) = cache.get(&key) {
            return Ok(m.clone());
        }
        let spec_id = bin.first().map(|m| m.partition_spec_id).unwrap_or_default();
        let spec = self.meta.spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_manifest(
                &key[0],
                format!("partition spec {spec_id} is not in the table"),
            )
        })?;
        let mut entries = Vec::new();
        for m in bin {
            let bytes = self.io.read(&m.manifest_path).await?;
            let decoded = decode_manifest(&m.manifest_path, &bytes)?;
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
                entries.push(e);
            }
        }
        let ctx = ManifestContext {
            version: self.meta.format_version,
            schema: self.meta.current_schema()?,
            spec,
            codec: &self.props.manifest.compression_codec,
            marker: self.marker,
            // One bin becomes one manifest, whatever its size.
            target_size_bytes: u64::MAX,
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
        let steps = plan_merge(&new, &parents, 1000, 100);
        assert_eq!(steps.len(), 1);
        assert!(matches!(&steps[0], MergeStep::Keep(v) if v.len() == 4));
        let steps = plan_merge(&new, &parents, 1000, 4);
        assert!(matches!(&steps[0], MergeStep::Merge(v) if v.len() == 4));
    }

    #[test]
    fn full_old_bins_merge_without_the_new_one() {
        let new = [mf("new", 10, 0)];
        let parents: Vec<Arc<ManifestFile>> = (0..6)
            .map(|i| Arc::new(mf(&format!("p{i}"), 10, 0)))
            .collect();
        // Target 30 from the end: [p3 p4 p5], [p0 p1 p2], [new] (lookback 1 keeps order).
        let steps = plan_merge(&new, &parents, 30, 100);
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
        let steps = plan_merge(&[], &parents, 100, 2);
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
    }
}
