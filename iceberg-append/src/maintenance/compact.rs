//! [`RewriteDataFiles`]: compaction. Per partition, data files below three quarters of
//! `write.target-file-size-bytes` are read back and written again by this crate's writer
//! (the table's current schema, default spec, sort order and write properties) into files
//! near the target size, committed as one `replace` snapshot with Java's rules:
//!
//! - the new files get the starting snapshot's data sequence number, so a delete file
//!   committed meanwhile still applies to their rows as it did to the old files';
//! - a file a delete file applies to is left alone and counted (applying deletes while
//!   compacting is a later step), as is a file whose columns are not exactly the current
//!   schema's (other field ids or names: written before a schema change, or without ids);
//! - a group is rewritten when it has `min_input_files` (5) such files, or two or more that
//!   together reach the target size;
//! - the commit fails as a typed [`Error::RewriteConflict`] (its new files deleted) when a
//!   concurrent commit removed a rewritten file or added a delete file that may apply to
//!   one; any other concurrent commit (an append) is committed over, as a retry.
//!
//! Reading streams each file through parquet's async Arrow reader (`iceberg_write::read`), so
//! memory stays within the writer's budgets however large the partition. v3 tables are
//! refused for now: their rewritten rows must keep their row ids, which the writer does not
//! yet carry over.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use iceberg_io::FileIo;
use iceberg_spec::snapshot::MAIN_BRANCH;
use iceberg_spec::{
    DataContentType, DataFile, Datum, FormatVersion, ManifestContent, ManifestEntry, ManifestFile,
    ManifestStatus, Operation, TableMetadata, TableProperties,
};
use iceberg_write::DataFileWriter;
use iceberg_write::read::FileIoReader;
use uuid::Uuid;

use super::replace::{Planned, commit_planned, new_snapshot_id};
use crate::append::read_manifest_list;
use crate::append::uuid_fields_by_spec;
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::handle::write_options;
use crate::manifest::{ManifestContext, decode_manifest, encode_manifests};
use crate::manifest_list::encode_manifest_list;
use crate::merge::{MergeClass, inherit, partition_class};
use crate::plan::{AttemptInputs, plan_fast_append};
use crate::summary::AddedCounts;
use crate::table::{Table, metadata_dir};

/// Default files a partition needs to be compacted (Java's `min-input-files`).
pub const DEFAULT_MIN_INPUT_FILES: usize = 5;

/// Rows per batch when files are read back.
const READ_BATCH_ROWS: usize = 64 * 1024;

/// Files up to this size are read whole in one request (and a few ahead); larger ones are
/// streamed.
const WHOLE_FILE_BYTES: u64 = 8 << 20;

/// Small files read ahead of the writer.
const PREFETCH_FILES: usize = 8;

/// Footers read at once when checking files' columns.
const FOOTER_READS: usize = 16;

/// A compaction (see the module docs).
#[derive(Debug, Clone)]
pub struct RewriteDataFiles {
    target_file_size_bytes: Option<u64>,
    min_input_files: usize,
}

impl Default for RewriteDataFiles {
    fn default() -> Self {
        Self {
            target_file_size_bytes: None,
            min_input_files: DEFAULT_MIN_INPUT_FILES,
        }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// The metadata file committed (`None`: nothing to compact).
    pub metadata_location: Option<String>,
    /// The `replace` snapshot.
    pub snapshot_id: Option<i64>,
    /// Partitions compacted.
    pub groups: usize,
    /// Data files read and replaced.
    pub files_rewritten: usize,
    /// Their bytes.
    pub bytes_rewritten: u64,
    /// Data files written.
    pub files_written: usize,
    /// Their bytes.
    pub bytes_written: u64,
    /// Rows rewritten.
    pub rows: u64,
    /// Small files left alone because a delete file applies to them.
    pub skipped_with_deletes: usize,
    /// Small files left alone because their columns are not the current schema's.
    pub skipped_other_schema: usize,
    /// Commit attempts.
    pub attempts: u32,
}

/// A live data file of the starting snapshot.
#[derive(Debug, Clone)]
struct Live {
    file: DataFile,
}

impl RewriteDataFiles {
    /// A compaction toward the table's `write.target-file-size-bytes`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aims at files of `bytes` instead of the table's target size.
    pub fn target_file_size_bytes(mut self, bytes: u64) -> Self {
        self.target_file_size_bytes = Some(bytes.max(1));
        self
    }

    /// Compacts a partition only from `count` small files on (at least 2).
    pub fn min_input_files(mut self, count: usize) -> Self {
        self.min_input_files = count.max(2);
        self
    }

    /// Compacts `ident`'s current snapshot in one `replace` commit; `on_group` hears of each
    /// partition as it starts (its index, the group count, its files).
    ///
    /// # Errors
    /// [`Error::NotSupportedForTable`] for a v3 table; read, write and IO errors (the files
    /// written so far are deleted); [`Error::RewriteConflict`] and the commit's errors.
    pub async fn commit(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        env: &dyn Environment,
        mut on_group: impl FnMut(usize, usize, usize),
    ) -> Result<CompactionReport> {
        let start = catalog.load_table(ident).await?;
        let meta = &start.metadata;
        if meta.format_version >= FormatVersion::V3 {
            return Err(Error::NotSupportedForTable {
                table: ident.to_string(),
                operation: "compaction".into(),
                reason: "a v3 table's rewritten rows must keep their row ids, which this \
                         writer does not carry over yet"
                    .into(),
            });
        }
        let Some(head) = meta.current_snapshot() else {
            return Ok(CompactionReport::default());
        };
        let start_sequence = head.sequence_number;
        let io = catalog.table_io(&start);
        let mut cache = Manifests::new();
        let (data, deletes) = live_files(&io, meta, &mut cache).await?;
        let options = write_options(meta)?;
        let target = self
            .target_file_size_bytes
            .unwrap_or(options.target_file_size_bytes);
        let mut report = CompactionReport::default();
        let groups = self
            .plan_groups(&io, meta, &data, &deletes, target, &mut report)
            .await?;
        if groups.is_empty() {
            return Ok(report);
        }
        let options = options.with_target_file_size_bytes(target);
        let mut written: Vec<DataFile> = Vec::new();
        let total = groups.len();
        for (i, group) in groups.iter().enumerate() {
            on_group(i, total, group.len());
            match Box::pin(rewrite_group(&io, meta, &options, group)).await {
                Ok(files) => written.extend(files),
                Err(e) => {
                    discard(&io, &written).await;
                    return Err(e);
                }
            }
            report.groups += 1;
            report.files_rewritten += group.len();
            report.bytes_rewritten += group.iter().map(|l| size(&l.file)).sum::<u64>();
            report.rows += group
                .iter()
                .map(|l| u64::try_from(l.file.record_count).unwrap_or(0))
                .sum::<u64>();
        }
        report.files_written = written.len();
        report.bytes_written = written.iter().map(size).sum();
        let removed: Vec<&Live> = groups.iter().flatten().collect();
        let inputs = Rewritten {
            removed: &removed,
            written: &written,
            start_sequence,
        };
        let result = commit_rewrite(catalog, ident, env, &inputs, &mut report, &mut cache).await;
        if let Err(e) = &result
            && !e.is_commit_state_unknown()
        {
            discard(&io, &written).await;
        }
        result.map(|()| report)
    }

    /// The groups to rewrite: small files of one (spec, partition), without deletes, written
    /// with the current schema.
    async fn plan_groups(
        &self,
        io: &FileIo,
        meta: &TableMetadata,
        data: &[Live],
        deletes: &[DataFile],
        target: u64,
        report: &mut CompactionReport,
    ) -> Result<Vec<Vec<Live>>> {
        let small = target.saturating_mul(3) / 4;
        let schema = meta.current_schema()?;
        let deleted_partitions = delete_partitions(meta, deletes);
        let mut by_partition: BTreeMap<(i32, String), Vec<Live>> = BTreeMap::new();
        for live in data.iter().filter(|l| size(&l.file) < small) {
            if deleted_partitions.applies_to(&live.file) {
                report.skipped_with_deletes += 1;
                continue;
            }
            let key = (live.file.spec_id, partition_key(&live.file.partition));
            by_partition.entry(key).or_default().push(live.clone());
        }
        let mut groups = Vec::new();
        for (_, candidates) in by_partition {
            let worth = |files: &[Live]| {
                files.len() >= self.min_input_files
                    || (files.len() >= 2
                        && files.iter().map(|l| size(&l.file)).sum::<u64>() >= target)
            };
            if !worth(&candidates) {
                continue;
            }
            // Footers read a few at a time, in order.
            let checks: Vec<bool> = futures::stream::iter(candidates.iter().map(|live| async {
                FileIoReader::new(io, &live.file.file_path)
                    .has_columns_of(schema)
                    .await
            }))
            .buffered(FOOTER_READS)
            .try_collect()
            .await?;
            let mut same_schema = Vec::with_capacity(candidates.len());
            for (live, same) in candidates.into_iter().zip(checks) {
                if same {
                    same_schema.push(live);
                } else {
                    report.skipped_other_schema += 1;
                }
            }
            if worth(&same_schema) {
                groups.push(same_schema);
            }
        }
        Ok(groups)
    }
}

/// Reads the files of `group` and writes their rows as new data files of the table. Small
/// files are read whole, a few ahead of the writer (their requests and decoding overlap the
/// encoding); larger ones are streamed with ranged reads.
async fn rewrite_group(
    io: &FileIo,
    meta: &TableMetadata,
    options: &iceberg_write::WriteOptions,
    group: &[Live],
) -> Result<Vec<DataFile>> {
    let mut writer = DataFileWriter::new(
        io,
        &meta.location,
        meta.current_schema()?,
        meta.default_spec()?,
        None,
        options,
    )?;
    match write_group(io, &mut writer, group).await {
        Ok(()) => Ok(writer.close().await?),
        Err(e) => {
            let _ = writer.abort().await;
            Err(e)
        }
    }
}

async fn write_group(io: &FileIo, writer: &mut DataFileWriter, group: &[Live]) -> Result<()> {
    let mut i = 0;
    while i < group.len() {
        if size(&group[i].file) > WHOLE_FILE_BYTES {
            let stream = FileIoReader::new(io, &group[i].file.file_path)
                .into_stream(READ_BATCH_ROWS)
                .await?;
            let mut stream = Box::pin(stream);
            while let Some(batch) =
                stream
                    .try_next()
                    .await
                    .map_err(|e| iceberg_write::Error::ParquetRead {
                        path: group[i].file.file_path.clone(),
                        source: e,
                    })?
            {
                writer.write(&batch).await?;
            }
            i += 1;
            continue;
        }
        // The run of small files from here, read whole and in order, a few at a time.
        let end = group[i..]
            .iter()
            .position(|l| size(&l.file) > WHOLE_FILE_BYTES)
            .map_or(group.len(), |p| i + p);
        let mut reads =
            futures::stream::iter(group[i..end].iter().map(|l| {
                iceberg_write::read::read_whole_file(io, &l.file.file_path, READ_BATCH_ROWS)
            }))
            .buffered(PREFETCH_FILES);
        while let Some(batches) = reads.try_next().await? {
            for batch in &batches {
                writer.write(batch).await?;
            }
        }
        i = end;
    }
    Ok(())
}

/// What a compaction replaces with what, since which snapshot.
struct Rewritten<'a> {
    /// The files read and replaced.
    removed: &'a [&'a Live],
    /// The files written.
    written: &'a [DataFile],
    /// The sequence number of the snapshot the compaction started from.
    start_sequence: i64,
}

/// Commits `inputs` as a `replace` snapshot, retried over concurrent commits that leave the
/// inputs as they were.
async fn commit_rewrite(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    env: &dyn Environment,
    inputs: &Rewritten<'_>,
    report: &mut CompactionReport,
    cache: &mut Manifests,
) -> Result<()> {
    let base = catalog.load_table(ident).await?;
    let snapshot_id = new_snapshot_id(&base.metadata, env);
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
        start_sequence,
    } = *inputs;
    let meta = &base.metadata;
    let conflict = |path: &str, reason: &str| Error::RewriteConflict {
        table: ident.to_string(),
        path: path.to_string(),
        reason: reason.to_string(),
    };
    let head = meta
        .current_snapshot()
        .ok_or_else(|| conflict("", "is gone: the table has no current snapshot"))?;
    let props = TableProperties::parse(&meta.properties)?;
    let listed = read_manifest_list(io, head.manifest_list.as_deref()).await?;
    let gone: HashSet<&str> = removed.iter().map(|l| l.file.file_path.as_str()).collect();
    let all = read_manifests(io, &listed, cache).await?;
    let (mut live, mut new_deletes) = (HashSet::new(), Vec::new());
    for (m, entries) in listed.iter().zip(&all) {
        for e in inherit(m, entries.to_vec()) {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            if m.content == ManifestContent::Data {
                live.insert(e.data_file.file_path);
            } else if e.sequence_number.unwrap_or(0) > start_sequence {
                new_deletes.push(e.data_file);
            }
        }
    }
    if let Some(path) = gone.iter().find(|p| !live.contains(**p)) {
        return Err(conflict(path, "was removed by a concurrent commit"));
    }
    let touched = delete_partitions(meta, &new_deletes);
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
    // The new files, ADDED with the starting snapshot's data sequence number.
    let by_spec: BTreeMap<i32, Vec<&DataFile>> =
        written.iter().fold(BTreeMap::new(), |mut m, f| {
            m.entry(f.spec_id).or_insert_with(Vec::new).push(f);
            m
        });
    for (spec_id, files) in by_spec {
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
    let decoded = read_manifests(io, &data_manifests, cache).await?;
    let uuid_fields = uuid_fields_by_spec(meta);
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
    replace_summary(&mut plan.snapshot, head, removed, written);
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

/// The summary of a rewrite: Java's `replace` keys, totals moved by what left and came.
fn replace_summary(
    snapshot: &mut iceberg_spec::Snapshot,
    parent: &iceberg_spec::Snapshot,
    removed: &[&Live],
    written: &[DataFile],
) {
    let Some(summary) = snapshot.summary.as_mut() else {
        return;
    };
    summary.operation = Operation::Replace;
    let p = &mut summary.properties;
    let removed_rows: i64 = removed.iter().map(|l| l.file.record_count).sum();
    let removed_bytes: i64 = removed.iter().map(|l| l.file.file_size_in_bytes).sum();
    let added_bytes: i64 = written.iter().map(|f| f.file_size_in_bytes).sum();
    p.insert("deleted-data-files".into(), removed.len().to_string());
    p.insert("deleted-records".into(), removed_rows.to_string());
    p.insert("removed-files-size".into(), removed_bytes.to_string());
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
        before("total-data-files").map(|t| t - removed.len() as i64 + written.len() as i64),
    );
    set(
        "total-records",
        before("total-records")
            .map(|t| t - removed_rows + written.iter().map(|f| f.record_count).sum::<i64>()),
    );
    set(
        "total-files-size",
        before("total-files-size").map(|t| t - removed_bytes + added_bytes),
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
        schema: meta.current_schema()?,
        spec,
        codec: props.manifest.compression_codec,
        marker,
        target_size_bytes: props.manifest.target_size_bytes,
        content: ManifestContent::Data,
    })
}

/// Decoded manifests by path, read once per compaction (a manifest never changes).
type Manifests = HashMap<String, Arc<Vec<ManifestEntry>>>;

/// The entries of `manifests`, in order, from `cache` or read a few at a time.
async fn read_manifests(
    io: &FileIo,
    manifests: &[ManifestFile],
    cache: &mut Manifests,
) -> Result<Vec<Arc<Vec<ManifestEntry>>>> {
    let missing: Vec<&ManifestFile> = manifests
        .iter()
        .filter(|m| !cache.contains_key(&m.manifest_path))
        .collect();
    let read: Vec<(String, Vec<ManifestEntry>)> =
        futures::stream::iter(missing.into_iter().map(|m| async move {
            let bytes = io.read(&m.manifest_path).await?;
            let entries = decode_manifest(&m.manifest_path, &bytes)?.entries;
            Ok::<_, Error>((m.manifest_path.clone(), entries))
        }))
        .buffered(FOOTER_READS)
        .try_collect()
        .await?;
    for (path, entries) in read {
        cache.insert(path, Arc::new(entries));
    }
    manifests
        .iter()
        .map(|m| {
            cache
                .get(&m.manifest_path)
                .cloned()
                .ok_or_else(|| Error::invalid_manifest(&m.manifest_path, "was not read"))
        })
        .collect()
}

/// The live data files and delete files of `meta`'s current snapshot.
async fn live_files(
    io: &FileIo,
    meta: &TableMetadata,
    cache: &mut Manifests,
) -> Result<(Vec<Live>, Vec<DataFile>)> {
    let Some(head) = meta.current_snapshot() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (mut data, mut deletes) = (Vec::new(), Vec::new());
    let listed = read_manifest_list(io, head.manifest_list.as_deref()).await?;
    let decoded = read_manifests(io, &listed, cache).await?;
    for (m, entries) in listed.iter().zip(decoded) {
        for e in inherit(m, entries.to_vec()) {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            match e.data_file.content {
                DataContentType::Data => data.push(Live { file: e.data_file }),
                _ => deletes.push(e.data_file),
            }
        }
    }
    Ok((data, deletes))
}

/// Where delete files may apply: (spec, partition) pairs, or everywhere.
struct DeletePartitions {
    everywhere: bool,
    partitions: BTreeSet<(i32, String)>,
}

impl DeletePartitions {
    /// Whether a delete file may apply to `file` (conservatively: any delete file of its
    /// partition, and any of an unpartitioned spec).
    fn applies_to(&self, file: &DataFile) -> bool {
        self.everywhere
            || self
                .partitions
                .contains(&(file.spec_id, partition_key(&file.partition)))
    }
}

fn delete_partitions(meta: &TableMetadata, deletes: &[DataFile]) -> DeletePartitions {
    let mut out = DeletePartitions {
        everywhere: false,
        partitions: BTreeSet::new(),
    };
    for d in deletes {
        let unpartitioned = meta
            .spec_by_id(d.spec_id)
            .is_none_or(|s| s.fields().is_empty());
        if unpartitioned {
            out.everywhere = true;
        }
        out.partitions
            .insert((d.spec_id, partition_key(&d.partition)));
    }
    out
}

/// A partition tuple as a comparable key.
fn partition_key(partition: &[Option<Datum>]) -> String {
    format!("{partition:?}")
}

fn size(f: &DataFile) -> u64 {
    u64::try_from(f.file_size_in_bytes).unwrap_or(0)
}

/// Deletes data files written by a compaction that will not be committed.
async fn discard(io: &FileIo, written: &[DataFile]) {
    let paths: Vec<String> = written.iter().map(|f| f.file_path.clone()).collect();
    if !paths.is_empty() {
        let _ = io.delete_many(paths).await;
    }
}
