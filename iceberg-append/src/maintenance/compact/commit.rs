//! The `replace` commit of a compaction: checks that the rewritten files are still live and
//! that no position delete file committed meanwhile may apply to them, then writes the new files'
//! manifest, the touched manifests with those files DELETED, and the manifest list.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::snapshot::MAIN_BRANCH;
use iceberg_spec::{
    DELETE_FILE_PATH_FIELD_ID, DataContentType, DataFile, FormatVersion, ManifestContent,
    ManifestEntry, ManifestFile, ManifestStatus, Operation, TableMetadata, TableProperties,
};
use uuid::Uuid;

use super::{CompactionReport, Live, Manifests, cached_entries, delete_partitions};
use crate::append::{fill_unknown_counts, read_snapshot_manifests, uuid_fields_by_spec};
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::env::fresh_snapshot_id;
use crate::error::{Error, Result};
use crate::maintenance::replace::{Planned, commit_planned};
use crate::manifest::{ManifestContext, encode_manifests};
use crate::manifest_list::encode_manifest_list;
use crate::merge::{MergeClass, inherit, partition_class};
use crate::plan::{AttemptInputs, plan_fast_append};
use crate::summary::{AddedCounts, set_partition_summaries};
use crate::table::{Table, metadata_dir};

/// What a compaction replaces with what, since which snapshot.
pub(super) struct Rewritten<'a> {
    /// The files read and replaced.
    pub(super) removed: &'a [&'a Live],
    /// The files written.
    pub(super) written: &'a [DataFile],
    /// The snapshot the compaction started from: its id and sequence number.
    pub(super) start: (i64, i64),
}

/// Commits `inputs` as a `replace` snapshot, retried over concurrent commits that leave the
/// inputs as they were.
pub(super) async fn commit_rewrite(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    env: &dyn Environment,
    inputs: &Rewritten<'_>,
    report: &mut CompactionReport,
    cache: &mut Manifests,
) -> Result<()> {
    let base = catalog.load_table(ident).await?;
    let snapshot_id = fresh_snapshot_id(&base.metadata, env)?;
    let commit_uuid = env.new_uuid();
    let committed = commit_planned(
        catalog,
        ident,
        env,
        snapshot_id,
        async |base: &Table, io: &FileIo, attempt: u32| {
            let (metadata, written) = attempt_rewrite(
                io,
                base,
                ident,
                inputs,
                (snapshot_id, commit_uuid, attempt),
                env,
                cache,
            )
            .await?;
            Ok(Some(Planned {
                metadata,
                written,
                value: (),
            }))
        },
    )
    .await?;
    if let Some(c) = committed {
        report.metadata_location = Some(c.metadata_location);
        report.snapshot_id = Some(snapshot_id);
        report.attempts = c.attempts;
    }
    Ok(())
}

/// Plans one attempt on `base` (after checking that the inputs are still as they were):
/// writes the new files' manifest, the rewritten manifests and the manifest list; returns
/// the metadata to commit and the paths written.
async fn attempt_rewrite(
    io: &FileIo,
    base: &Table,
    ident: &TableIdent,
    inputs: &Rewritten<'_>,
    (snapshot_id, commit_uuid, attempt): (i64, Uuid, u32),
    env: &dyn Environment,
    cache: &mut Manifests,
) -> Result<(TableMetadata, Vec<String>)> {
    let Rewritten {
        removed,
        written,
        start,
    } = *inputs;
    let meta = &base.metadata;
    super::refuse_v3(meta, ident)?;
    let conflict = |path: &str, reason: &str| Error::RewriteConflict {
        table: ident.to_string(),
        path: path.to_string(),
        reason: reason.to_string(),
    };
    let head = meta
        .current_snapshot()
        .ok_or_else(|| conflict("", "is gone: the table has no current snapshot"))?;
    // Only commits made on top of the starting snapshot were checked below: a head on
    // another lineage (a branch swapped in, a rollback) may carry deletes older than the
    // start (Java's `validationHistory`: "Cannot determine history").
    // v1 has no delete files: Java checks the history from v2 on (`addedDeleteFiles`).
    let (start_id, start_sequence) = start;
    if meta.format_version >= FormatVersion::V2
        && head.snapshot_id != start_id
        && !meta
            .ancestors(head.snapshot_id)
            .any(|s| s.parent_snapshot_id == Some(start_id))
    {
        return Err(conflict(
            "",
            &format!(
                "cannot be checked: the current snapshot {} does not descend from the \
                 snapshot {start_id} the compaction started from",
                head.snapshot_id
            ),
        ));
    }
    let props = TableProperties::parse_for_commit(&meta.properties)?;
    let mut listed = read_snapshot_manifests(io, head).await?;
    // Manifests the rewrite leaves as they are are listed again.
    fill_unknown_counts(io, meta.format_version, &mut listed).await?;
    let gone: HashSet<&str> = removed.iter().map(|l| l.file.file_path.as_str()).collect();
    let all = cached_entries(io, &listed, cache).await?;
    let (mut live, mut new_deletes) = (HashSet::new(), Vec::new());
    for (m, entries) in listed.iter().zip(&all) {
        for e in inherit(m, entries.to_vec()) {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            if m.content == ManifestContent::Data {
                live.insert(e.data_file.file_path);
            } else if e.sequence_number.unwrap_or(0) > start_sequence
                && e.data_file.content == DataContentType::PositionDeletes
            {
                // Equality deletes committed meanwhile apply to the rewritten rows too: the
                // new files take the starting sequence number, below theirs (Java ignores
                // them here as well).
                new_deletes.push(e.data_file);
            }
        }
    }
    if let Some(path) = gone.iter().find(|p| !live.contains(**p)) {
        return Err(conflict(path, "was removed by a concurrent commit"));
    }
    // A position delete that names its data file conflicts only with that file (Java's
    // `DeleteFileIndex` by path); one that does not, with its partition.
    let (scoped, partition_wide): (Vec<DataFile>, Vec<DataFile>) = new_deletes
        .into_iter()
        .partition(|d| referenced_data_file(d).is_some());
    if let Some(path) = scoped
        .iter()
        .filter_map(referenced_data_file)
        .find(|p| gone.contains(p))
    {
        return Err(conflict(
            path,
            "has a position delete committed meanwhile that applies to it",
        ));
    }
    let touched = delete_partitions(meta, &partition_wide);
    if let Some(l) = removed.iter().find(|l| touched.applies_to(&l.file)) {
        return Err(conflict(
            &l.file.file_path,
            "has a delete file committed meanwhile that may apply to it",
        ));
    }
    let version = meta.format_version;
    let dir = metadata_dir(meta);
    let mut paths = Vec::new();
    let mut new_manifests: Vec<ManifestFile> = Vec::new();
    let mut carried: Vec<Arc<ManifestFile>> = Vec::new();
    let mut replaced = 0;
    let marker = env.sync_marker();
    let schema = meta.current_schema()?;
    let uuid_fields = uuid_fields_by_spec(meta);
    // The new files, ADDED with the starting snapshot's data sequence number, one manifest
    // group per spec and uuid sign class as appends write them: a manifest whose uuid
    // partition bounds span both classes is skipped by Java's signed order for values it
    // holds (`merge::MergeClass`).
    let mut by_spec: BTreeMap<(i32, MergeClass), Vec<&DataFile>> = BTreeMap::new();
    for f in written {
        let class = match uuid_fields.get(&f.spec_id) {
            Some(Some(fields)) => partition_class(&f.partition, fields),
            _ => MergeClass::new(),
        };
        by_spec.entry((f.spec_id, class)).or_default().push(f);
    }
    for ((spec_id, _), files) in by_spec {
        let spec = meta
            .spec_by_id(spec_id)
            .ok_or_else(|| Error::invalid_manifest(&dir, format!("no partition spec {spec_id}")))?;
        let entries: Vec<ManifestEntry> = files
            .into_iter()
            .map(|f| {
                let mut e = ManifestEntry::added(snapshot_id, f.clone());
                if version >= FormatVersion::V2 {
                    e.sequence_number = Some(start_sequence);
                }
                e
            })
            .collect();
        let ctx = manifest_context(meta, &props, spec, marker)?;
        let first = new_manifests.len();
        for m in encode_manifests(&ctx, snapshot_id, &entries, |n| {
            format!("{dir}/{commit_uuid}-c{attempt}-m{}.avro", first + n)
        })? {
            io.put(&m.file.manifest_path, Bytes::from(m.bytes)).await?;
            paths.push(m.file.manifest_path.clone());
            new_manifests.push(m.file);
        }
    }
    // Manifests holding a rewritten file: their entries rewritten together per spec (and
    // uuid sign class, as merges keep them), that file DELETED, the rest EXISTING.
    let data_manifests: Vec<ManifestFile> = listed
        .iter()
        .filter(|m| m.content == ManifestContent::Data)
        .cloned()
        .collect();
    carried.extend(
        listed
            .into_iter()
            .filter(|m| m.content != ManifestContent::Data)
            .map(Arc::new),
    );
    let decoded = cached_entries(io, &data_manifests, cache).await?;
    let mut rewritten: BTreeMap<(i32, MergeClass), Vec<ManifestEntry>> = BTreeMap::new();
    for (m, entries) in data_manifests.into_iter().zip(decoded) {
        let touched = entries.iter().any(|e| {
            e.status != ManifestStatus::Deleted && gone.contains(e.data_file.file_path.as_str())
        });
        if !touched {
            carried.push(Arc::new(m));
            continue;
        }
        replaced += 1;
        let fields = uuid_fields
            .get(&m.partition_spec_id)
            .and_then(|f| f.as_deref());
        for mut e in inherit(&m, entries.to_vec()) {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            if e.sequence_number.is_none() && e.file_sequence_number == Some(0) {
                e.sequence_number = Some(0);
            }
            if gone.contains(e.data_file.file_path.as_str()) {
                e.status = ManifestStatus::Deleted;
                e.snapshot_id = Some(snapshot_id);
            } else {
                e.status = ManifestStatus::Existing;
            }
            let class = fields
                .map(|f| partition_class(&e.data_file.partition, f))
                .unwrap_or_default();
            rewritten
                .entry((m.partition_spec_id, class))
                .or_default()
                .push(e);
        }
    }
    for ((spec_id, _), entries) in rewritten {
        let spec = meta
            .spec_by_id(spec_id)
            .ok_or_else(|| Error::invalid_manifest(&dir, format!("no partition spec {spec_id}")))?;
        let ctx = manifest_context(meta, &props, spec, marker)?;
        let first = new_manifests.len();
        for out in encode_manifests(&ctx, snapshot_id, &entries, |n| {
            format!("{dir}/{commit_uuid}-c{attempt}-m{}.avro", first + n)
        })? {
            io.put(&out.file.manifest_path, Bytes::from(out.bytes))
                .await?;
            paths.push(out.file.manifest_path.clone());
            new_manifests.push(out.file);
        }
    }
    let manifest_list_path = format!("{dir}/snap-{snapshot_id}-{attempt}-{commit_uuid}.avro");
    let added = AddedCounts::of(meta, schema, written)?;
    let removed_files: Vec<DataFile> = removed.iter().map(|l| l.file.clone()).collect();
    let removed_counts = AddedCounts::of(meta, schema, &removed_files)?;
    let mut plan = plan_fast_append(
        meta,
        &AttemptInputs {
            snapshot_id,
            branch: MAIN_BRANCH,
            new_manifests: &new_manifests,
            parent_manifests: &carried,
            manifests_replaced: replaced,
            added: &added,
            extra_summary: &BTreeMap::new(),
            manifest_list_path: manifest_list_path.clone(),
            base_location: base.metadata_location.as_deref(),
            now_ms: env.now_ms(),
        },
    )?;
    replace_summary(
        &mut plan.snapshot,
        head,
        &added,
        &removed_counts,
        props.partition_summary_limit,
    );
    if let Some(last) = plan.metadata.snapshots.last_mut() {
        *last = plan.snapshot.clone().into();
    }
    let bytes = encode_manifest_list(
        &manifest_list_path,
        &plan.header,
        &plan.manifests,
        props.manifest.compression_codec,
        marker,
    )?;
    io.put(&manifest_list_path, Bytes::from(bytes)).await?;
    paths.push(manifest_list_path);
    Ok((plan.metadata, paths))
}

/// The summary of a rewrite: Java's `replace` keys, totals moved by what left and came,
/// the partitions of both as changed.
fn replace_summary(
    snapshot: &mut iceberg_spec::Snapshot,
    parent: &iceberg_spec::Snapshot,
    added: &AddedCounts,
    removed: &AddedCounts,
    partition_limit: usize,
) {
    let Some(summary) = snapshot.summary.as_mut() else {
        return;
    };
    summary.operation = Operation::Replace;
    let p = &mut summary.properties;
    for (key, v) in [
        ("deleted-data-files", removed.files),
        ("deleted-records", removed.records),
        ("removed-files-size", removed.bytes),
    ] {
        if v > 0 {
            p.insert(key.into(), v.to_string());
        }
    }
    set_partition_summaries(p, &added.partitions, &removed.partitions, partition_limit);
    let before = |k: &str| parent.summary.as_ref().and_then(|s| s.get_i64(k));
    let mut set = |k: &str, v: Option<i64>| match v {
        Some(v) => {
            p.insert(k.into(), v.to_string());
        }
        None => {
            p.remove(k);
        }
    };
    set(
        "total-data-files",
        before("total-data-files").map(|t| t - removed.files + added.files),
    );
    set(
        "total-records",
        before("total-records").map(|t| t - removed.records + added.records),
    );
    set(
        "total-files-size",
        before("total-files-size").map(|t| t - removed.bytes + added.bytes),
    );
}

fn manifest_context<'a>(
    meta: &'a TableMetadata,
    props: &TableProperties,
    spec: &'a iceberg_spec::PartitionSpec,
    marker: [u8; 16],
) -> Result<ManifestContext<'a>> {
    Ok(ManifestContext {
        version: meta.format_version,
        schema: meta.schema_for_spec(spec)?,
        spec,
        codec: props.manifest.compression_codec,
        marker,
        target_size_bytes: props.manifest.target_size_bytes,
        content: ManifestContent::Data,
    })
}

/// The one data file a position delete file applies to, when it says so: its
/// `referenced_data_file`, or equal `file_path` bounds (Java's
/// `ContentFileUtil.referencedDataFileLocation`).
fn referenced_data_file(d: &DataFile) -> Option<&str> {
    if let Some(path) = d.referenced_data_file.as_deref() {
        return Some(path);
    }
    let lower = d.lower_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    let upper = d.upper_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    if lower != upper {
        return None;
    }
    std::str::from_utf8(lower).ok()
}
