//! [`RewriteManifests`]: the current snapshot's data manifests re-clustered into manifests of
//! `commit.manifest.target-size-bytes`, as a `replace` snapshot (Java's `RewriteManifests`):
//! after thousands of fast appends a scan plans over a few manifests instead of thousands.
//!
//! Per partition spec (and uuid sign class, as merges keep them apart: see
//! [`crate::merge`]), the live entries of every data manifest are sorted by partition and
//! written as EXISTING entries keeping everything they inherited: snapshot id, data and file
//! sequence numbers, v3 first row ids. Entries of earlier deletes (DELETED) are history and
//! dropped. A spec group of one manifest, or of a spec with a transform this library does
//! not know, is left as it is; delete manifests are carried by reference. No data file is
//! added or removed, so every total stays.
//!
//! A commit that loses to a concurrent one is planned anew on the new base (its manifests
//! written again, the lost attempt's deleted), so a concurrent append's manifests are kept
//! and a concurrent rewrite's result is taken as it is. A lost answer is recognised by the
//! snapshot id, and nothing of a commit that may have landed is deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::{
    ManifestContent, ManifestEntry, ManifestFile, ManifestStatus, Operation, TableMetadata,
    TableProperties,
};
use uuid::Uuid;

use super::replace::{Planned, commit_planned};
use crate::append::{fill_unknown_counts, read_snapshot_manifests, uuid_fields_by_spec};
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::env::fresh_snapshot_id;
use crate::error::{Error, Result};
use crate::manifest::{DecodedManifest, ManifestContext, encode_manifests, read_manifests};
use crate::manifest_list::encode_manifest_list;
use crate::merge::{MergeClass, inherit, partition_class};
use crate::plan::{AttemptInputs, plan_fast_append};
use crate::summary::AddedCounts;
use crate::table::{Table, metadata_dir};

/// A manifest rewrite (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct RewriteManifests {
    target_size_bytes: Option<u64>,
}

/// What a manifest rewrite did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteReport {
    /// The metadata file committed (`None`: nothing to rewrite).
    pub metadata_location: Option<String>,
    /// The `replace` snapshot.
    pub snapshot_id: Option<i64>,
    /// Data manifests replaced.
    pub manifests_replaced: usize,
    /// Manifests written.
    pub manifests_created: usize,
    /// Manifests carried as they were (delete manifests, single-manifest groups).
    pub manifests_kept: usize,
    /// Live entries rewritten.
    pub entries: usize,
    /// Commit attempts.
    pub attempts: u32,
}

/// One planned attempt: what it wrote and the metadata to commit.
struct Attempt {
    metadata: TableMetadata,
    written: Vec<String>,
    report: RewriteReport,
}

impl RewriteManifests {
    /// A rewrite into manifests of the table's `commit.manifest.target-size-bytes`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rolls to a new manifest past `bytes` instead of the table's target size.
    pub fn target_size_bytes(mut self, bytes: u64) -> Self {
        self.target_size_bytes = Some(bytes.max(1));
        self
    }

    /// Rewrites the data manifests of `ident`'s current snapshot in one `replace` commit,
    /// retried (planned anew) on conflicts.
    ///
    /// # Errors
    /// A manifest that cannot be read or an entry without the sequence number it must keep;
    /// [`Error::RetriesExhausted`] when every attempt lost; [`Error::CommitStateUnknown`]
    /// (nothing deleted); the catalog's error.
    pub async fn commit(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        env: &dyn Environment,
    ) -> Result<RewriteReport> {
        let base = catalog.load_table(ident).await?;
        let snapshot_id = fresh_snapshot_id(&base.metadata, env)?;
        let commit_uuid = env.new_uuid();
        let committed = commit_planned(
            catalog,
            ident,
            env,
            snapshot_id,
            async |base: &Table, io: &FileIo, attempt: u32| {
                let planned = self
                    .attempt(io, base, snapshot_id, commit_uuid, attempt, env)
                    .await?;
                Ok(planned.map(|a| Planned {
                    metadata: a.metadata,
                    written: a.written,
                    value: a.report,
                }))
            },
        )
        .await?;
        Ok(
            committed.map_or_else(RewriteReport::default, |c| RewriteReport {
                metadata_location: Some(c.metadata_location),
                attempts: c.attempts,
                ..c.value
            }),
        )
    }

    /// Plans the rewrite of `base`'s head and writes its manifests and list; `None` when no
    /// spec group has two data manifests.
    async fn attempt(
        &self,
        io: &FileIo,
        base: &Table,
        snapshot_id: i64,
        commit_uuid: Uuid,
        attempt: u32,
        env: &dyn Environment,
    ) -> Result<Option<Attempt>> {
        let meta = &base.metadata;
        let Some(head) = meta.current_snapshot() else {
            return Ok(None);
        };
        let props = TableProperties::parse_for_commit(&meta.properties)?;
        let mut listed = read_snapshot_manifests(io, head).await?;
        // A manifest kept as it is (a delete manifest, one alone in its spec) is listed again.
        fill_unknown_counts(io, meta.format_version, &mut listed).await?;
        let uuid_fields = uuid_fields_by_spec(meta);
        let mut groups: BTreeMap<i32, Vec<ManifestFile>> = BTreeMap::new();
        let mut kept = Vec::new();
        for m in listed {
            if m.content == ManifestContent::Data {
                groups.entry(m.partition_spec_id).or_default().push(m);
            } else {
                kept.push(Arc::new(m));
            }
        }
        let (mut written, mut created, mut replaced, mut entries_count) =
            (Vec::new(), Vec::new(), 0, 0);
        let target = self
            .target_size_bytes
            .unwrap_or(props.manifest.target_size_bytes);
        let dir = metadata_dir(meta);
        for (spec_id, manifests) in groups {
            // A spec with a transform this library does not know is never written again.
            let unknown = meta
                .spec_by_id(spec_id)
                .is_some_and(|s| s.has_unknown_transform());
            if manifests.len() < 2 || unknown {
                kept.extend(manifests.into_iter().map(Arc::new));
                continue;
            }
            let spec = meta.spec_by_id(spec_id).ok_or_else(|| {
                Error::invalid_manifest(
                    &manifests[0].manifest_path,
                    format!("partition spec {spec_id} is not in the table"),
                )
            })?;
            let mut by_class: BTreeMap<MergeClass, Vec<ManifestEntry>> = BTreeMap::new();
            let decoded =
                read_manifests(io, manifests.iter().map(|m| m.manifest_path.as_str())).await?;
            for (m, decoded) in manifests.iter().zip(decoded) {
                for e in existing_entries(meta, m, decoded)? {
                    let class = uuid_fields
                        .get(&spec_id)
                        .and_then(|f| f.as_deref())
                        .map(|f| partition_class(&e.data_file.partition, f))
                        .unwrap_or_default();
                    by_class.entry(class).or_default().push(e);
                }
            }
            replaced += manifests.len();
            let ctx = ManifestContext {
                version: meta.format_version,
                schema: meta.schema_for_spec(spec)?,
                spec,
                codec: props.manifest.compression_codec,
                marker: env.sync_marker(),
                target_size_bytes: target,
                content: ManifestContent::Data,
            };
            for (_, mut entries) in by_class {
                // Clustered by partition, so a scan's partition filter skips whole manifests.
                entries.sort_by(|a, b| {
                    compare_partitions(&a.data_file.partition, &b.data_file.partition)
                });
                entries_count += entries.len();
                let first = created.len();
                let encoded = encode_manifests(&ctx, snapshot_id, &entries, |n| {
                    format!("{dir}/{commit_uuid}-r{attempt}-m{}.avro", first + n)
                })?;
                for m in encoded {
                    io.put(&m.file.manifest_path, Bytes::from(m.bytes)).await?;
                    written.push(m.file.manifest_path.clone());
                    created.push(m.file);
                }
            }
        }
        if replaced == 0 {
            return Ok(None);
        }
        let manifest_list_path = format!("{dir}/snap-{snapshot_id}-{attempt}-{commit_uuid}.avro");
        let added = AddedCounts::default();
        let mut plan = plan_fast_append(
            meta,
            &AttemptInputs {
                snapshot_id,
                branch: iceberg_spec::snapshot::MAIN_BRANCH,
                new_manifests: &created,
                parent_manifests: &kept,
                manifests_replaced: replaced,
                added: &added,
                extra_summary: &BTreeMap::new(),
                manifest_list_path: manifest_list_path.clone(),
                base_location: base.metadata_location.as_deref(),
                now_ms: env.now_ms(),
            },
        )?;
        if let Some(summary) = plan.snapshot.summary.as_mut() {
            summary.operation = Operation::Replace;
            // No file added or removed: no partition changed (Java writes the zero).
            summary
                .properties
                .insert("changed-partition-count".into(), "0".into());
            summary
                .properties
                .insert("entries-processed".into(), entries_count.to_string());
        }
        if let Some(last) = plan.metadata.snapshots.last_mut() {
            *last = plan.snapshot.clone().into();
        }
        let bytes = encode_manifest_list(
            &manifest_list_path,
            &plan.header,
            &plan.manifests,
            props.manifest.compression_codec,
            env.sync_marker(),
        )?;
        io.put(&manifest_list_path, Bytes::from(bytes)).await?;
        written.push(manifest_list_path);
        Ok(Some(Attempt {
            metadata: plan.metadata,
            written,
            report: RewriteReport {
                metadata_location: None,
                snapshot_id: Some(snapshot_id),
                manifests_replaced: replaced,
                manifests_created: created.len(),
                manifests_kept: kept.len(),
                entries: entries_count,
                attempts: attempt,
            },
        }))
    }
}

/// The live entries of data manifest `m`, as EXISTING entries with everything they
/// inherited made explicit.
///
/// # Errors
/// An unreadable manifest; an entry of a v2+ table without a data sequence number.
fn existing_entries(
    meta: &TableMetadata,
    m: &ManifestFile,
    decoded: DecodedManifest,
) -> Result<Vec<ManifestEntry>> {
    let mut out = Vec::with_capacity(decoded.entries.len());
    for mut e in inherit(m, decoded.entries) {
        if e.status == ManifestStatus::Deleted {
            continue;
        }
        e.status = ManifestStatus::Existing;
        if e.sequence_number.is_none() && e.file_sequence_number == Some(0) {
            e.sequence_number = Some(0);
        }
        if meta.format_version >= iceberg_spec::FormatVersion::V2 && e.sequence_number.is_none() {
            return Err(Error::invalid_manifest(
                &m.manifest_path,
                format!(
                    "entry for {} has no data sequence number to keep",
                    e.data_file.file_path
                ),
            ));
        }
        out.push(e);
    }
    Ok(out)
}

/// Partition tuples in order, null first in each field; values compare as their widest
/// promotions (a total order also over values written before a source column was widened).
fn compare_partitions(
    a: &[Option<iceberg_spec::Datum>],
    b: &[Option<iceberg_spec::Datum>],
) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => x
                .widest()
                .partial_cmp(&y.widest())
                .unwrap_or(std::cmp::Ordering::Equal),
        };
        if o.is_ne() {
            return o;
        }
    }
    a.len().cmp(&b.len())
}
