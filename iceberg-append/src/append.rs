//! The append itself: write the manifests once, then plan and write a manifest list per
//! attempt. Nothing here swaps a pointer; [`crate::commit`] does that through a catalog.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::snapshot::MAIN_BRANCH;
use iceberg_spec::{
    DataContentType, DataFile, FormatVersion, ManifestContent, ManifestEntry, ManifestFile,
    Snapshot, TableMetadata, TableProperties,
};
use uuid::Uuid;

use crate::cache::MetadataCache;
use crate::catalog::TableIdent;
use crate::env::{Environment, fresh_snapshot_id};
use crate::error::{Error, Result};
use crate::evolve::SchemaEvolution;
use crate::manifest::{
    ManifestContext, StatusCounts, encode_manifests, read_manifests, read_manifests_as, row_of,
};
use crate::manifest_list::{ManifestList, encode_manifest_list_onto};
use crate::merge::{
    MergeClass, MergeKey, MergeStep, Merger, manifest_class, partition_class, plan_merge,
    uuid_partition_fields,
};
use crate::plan::{AttemptInputs, plan_fast_append};
use crate::summary::AddedCounts;
use crate::table::{Table, metadata_dir};
use crate::update::UpdateStep;

/// The `operation` of an append snapshot.
pub const OP_APPEND: &str = "append";

/// A prepared commit: the new metadata and where its files went. Nothing is committed yet.
#[derive(Debug, Clone)]
pub struct AppendResult {
    /// The table metadata after the commit.
    pub metadata: TableMetadata,
    /// The new snapshot's id.
    pub snapshot_id: i64,
    /// The manifest list of this attempt.
    pub manifest_list: String,
    /// The manifests this attempt wrote and lists (new data manifests and merged ones).
    pub manifest_paths: Vec<String>,
    /// The data files it adds.
    pub data_files: Vec<DataFile>,
    /// The manifest-list rows of the manifests it wrote (reused on retry).
    pub new_manifests: Vec<ManifestFile>,
    /// The manifest list as written (new manifests first), with its encoded blocks.
    pub listed_manifests: Arc<ManifestList>,
    /// The commit's UUID (in manifest and manifest-list names).
    pub commit_uuid: Uuid,
    /// The attempt number, from 1.
    pub attempt: u32,
}

impl AppendResult {
    /// Rows added by this append.
    pub fn added_records(&self) -> i64 {
        self.data_files.iter().map(|f| f.record_count).sum()
    }
}

fn check_files(meta: &TableMetadata, files: &[DataFile]) -> Result<()> {
    let mut seen = HashSet::new();
    for f in files {
        let bad = |reason: String| Error::InvalidDataFile {
            path: f.file_path.clone(),
            reason,
        };
        if f.content != DataContentType::Data {
            return Err(bad(
                "an append adds data files only, not delete files".into()
            ));
        }
        let spec = meta
            .spec_by_id(f.spec_id)
            .ok_or_else(|| bad(format!("partition spec {} is not in the table", f.spec_id)))?;
        if f.partition.len() != spec.fields().len() {
            return Err(bad(format!(
                "partition tuple has {} values, spec {} has {} fields",
                f.partition.len(),
                f.spec_id,
                spec.fields().len()
            )));
        }
        if f.record_count < 0 || f.file_size_in_bytes < 0 {
            return Err(bad("negative record count or file size".into()));
        }
        if !seen.insert(f.file_path.as_str()) {
            return Err(bad("the same file is added twice".into()));
        }
    }
    Ok(())
}

/// The manifests of a snapshot's manifest list (empty for no snapshot).
///
/// # Errors
/// When the manifest list cannot be read or decoded.
pub async fn read_manifest_list(
    io: &FileIo,
    manifest_list: Option<&str>,
) -> Result<Vec<ManifestFile>> {
    match manifest_list {
        None => Ok(Vec::new()),
        Some(path) => {
            let bytes = io.read(path).await?;
            crate::manifest_list::decode_manifest_list(path, &bytes)
        }
    }
}

/// The manifests of `snapshot`: its manifest list, or, for a snapshot of an early v1 writer
/// that names its manifests inline (`manifests`, no list), rows made from those files as
/// Java's `BaseSnapshot` makes them (added by the snapshot, sequence numbers 0, counts from
/// the entries), so that a commit on it carries them.
///
/// # Errors
/// When the list or an inline manifest cannot be read or decoded.
pub async fn read_snapshot_manifests(
    io: &FileIo,
    snapshot: &Snapshot,
) -> Result<Vec<ManifestFile>> {
    let (None, Some(paths)) = (&snapshot.manifest_list, &snapshot.manifests) else {
        return read_manifest_list(io, snapshot.manifest_list.as_deref()).await;
    };
    let decoded = read_manifests(io, paths.iter().map(String::as_str)).await?;
    let mut rows = Vec::with_capacity(paths.len());
    for (path, manifest) in paths.iter().zip(decoded) {
        let spec_id = manifest
            .metadata
            .get("partition-spec-id")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let length = i64::try_from(io.len(path).await?).unwrap_or(i64::MAX);
        rows.push(row_of(
            path,
            length,
            spec_id,
            ManifestContent::Data,
            snapshot.snapshot_id,
            &manifest.entries,
        ));
    }
    Ok(rows)
}

/// The manifests of `snapshot` (none: empty), its manifest list through `cache` when there
/// is one.
async fn read_manifest_list_cached(
    io: &FileIo,
    snapshot: Option<&Snapshot>,
    cache: Option<&MetadataCache>,
) -> Result<Arc<ManifestList>> {
    let list = snapshot.and_then(|s| s.manifest_list.as_deref());
    match (snapshot, list, cache) {
        (_, Some(path), Some(cache)) => cache.manifest_list(io, path).await,
        (_, Some(path), None) => Ok(Arc::new(ManifestList::decode(path, io.read(path).await?)?)),
        (Some(s), None, _) => Ok(Arc::new(ManifestList::from_rows(
            read_snapshot_manifests(io, s).await?,
        ))),
        (None, None, _) => Ok(Arc::new(ManifestList::from_rows(Vec::new()))),
    }
}

/// Whether a listed manifest lacks a file or row count (an old v1 writer's list).
fn counts_unknown(m: &ManifestFile) -> bool {
    m.added_files_count.is_none()
        || m.existing_files_count.is_none()
        || m.deleted_files_count.is_none()
        || m.added_rows_count.is_none()
        || m.existing_rows_count.is_none()
        || m.deleted_rows_count.is_none()
}

/// The counts of `rows`' manifests whose counts are unknown, in order, read together: on an
/// object store each is a request, and an old list may name many.
async fn unknown_counts<'a>(
    io: &FileIo,
    rows: impl Iterator<Item = &'a ManifestFile>,
) -> Result<std::vec::IntoIter<StatusCounts>> {
    let missing = rows
        .filter(|m| counts_unknown(m))
        .map(|m| m.manifest_path.as_str());
    Ok(
        read_manifests_as(io, missing, |m| StatusCounts::of(&m.entries))
            .await?
            .into_iter(),
    )
}

/// `rows` with every unknown file or row count (a manifest listed by an old v1 writer) counted
/// from the manifest's entries, as a v2 list must give them: writing 0 instead would tell
/// readers that the manifest holds no files, and they would skip it.
async fn with_known_counts<'a>(
    io: &FileIo,
    rows: Cow<'a, [Arc<ManifestFile>]>,
) -> Result<Cow<'a, [Arc<ManifestFile>]>> {
    if !rows.iter().any(|m| counts_unknown(m)) {
        return Ok(rows);
    }
    let mut counted = unknown_counts(io, rows.iter().map(|m| m.as_ref())).await?;
    let mut out = Vec::with_capacity(rows.len());
    for m in rows.iter() {
        if !counts_unknown(m) {
            out.push(m.clone());
            continue;
        }
        let counts = counted.next().ok_or_else(|| {
            Error::invalid_manifest(&m.manifest_path, "it was not read with the others")
        })?;
        let mut filled = ManifestFile::clone(m);
        counts.fill(&mut filled);
        out.push(Arc::new(filled));
    }
    Ok(Cow::Owned(out))
}

/// [`with_known_counts`] in place, for the manifests of a table's head that a maintenance
/// commit lists again (from v2 on; a v1 list may leave counts out).
pub(crate) async fn fill_unknown_counts(
    io: &FileIo,
    version: FormatVersion,
    listed: &mut [ManifestFile],
) -> Result<()> {
    if version < FormatVersion::V2 || !listed.iter().any(counts_unknown) {
        return Ok(());
    }
    let mut counted = unknown_counts(io, listed.iter()).await?;
    for m in listed.iter_mut().filter(|m| counts_unknown(m)) {
        let counts = counted.next().ok_or_else(|| {
            Error::invalid_manifest(&m.manifest_path, "it was not read with the others")
        })?;
        counts.fill(m);
    }
    Ok(())
}

/// The uuid partition fields of every spec (`None` where the spec binds to no schema of the
/// table, so its manifests' classes cannot be told).
pub(crate) fn uuid_fields_by_spec(meta: &TableMetadata) -> HashMap<i32, Option<Vec<usize>>> {
    meta.partition_specs
        .iter()
        .map(|spec| {
            let fields = meta
                .schema_for_spec(spec)
                .ok()
                .and_then(|s| spec.partition_type(s).ok())
                .map(|pt| uuid_partition_fields(&pt));
            (spec.spec_id(), fields)
        })
        .collect()
}

/// Writes the manifests of `data_files` (ADDED entries, grouped by spec), once per append.
async fn write_manifests(
    io: &FileIo,
    meta: &TableMetadata,
    props: &TableProperties,
    snapshot_id: i64,
    commit_uuid: Uuid,
    data_files: &[DataFile],
    env: &dyn Environment,
) -> Result<Vec<ManifestFile>> {
    let schema = meta.current_schema()?;
    let dir = metadata_dir(meta);
    let uuid_fields = uuid_fields_by_spec(meta);
    // One manifest group per spec and uuid sign class, so that every manifest's partition
    // summary bounds hold in Java's uuid order as in the spec's (see `merge::MergeClass`).
    let mut by_spec: BTreeMap<(i32, MergeClass), Vec<ManifestEntry>> = BTreeMap::new();
    for f in data_files {
        let class = match uuid_fields.get(&f.spec_id) {
            Some(Some(fields)) => partition_class(&f.partition, fields),
            _ => MergeClass::new(),
        };
        by_spec
            .entry((f.spec_id, class))
            .or_default()
            .push(ManifestEntry::added(snapshot_id, f.clone()));
    }
    let mut written = Vec::new();
    let mut n = 0usize;
    for ((spec_id, _), entries) in by_spec {
        let Some(spec) = meta.spec_by_id(spec_id) else {
            continue;
        };
        let ctx = ManifestContext {
            version: meta.format_version,
            schema,
            spec,
            codec: props.manifest.compression_codec,
            marker: env.sync_marker(),
            target_size_bytes: props.manifest.target_size_bytes,
            content: iceberg_spec::ManifestContent::Data,
        };
        let encoded = encode_manifests(&ctx, snapshot_id, &entries, |_| {
            let path = format!("{dir}/{commit_uuid}-m{n}.avro");
            n += 1;
            path
        })?;
        for m in encoded {
            io.put(&m.file.manifest_path, Bytes::from(m.bytes)).await?;
            written.push(m.file);
        }
    }
    Ok(written)
}

/// Writes the manifest(s) and the manifest list of a fast append of `data_files` onto `table`,
/// and returns the metadata to commit. Nothing is committed.
///
/// # Errors
/// When a data file does not belong to the table, or IO fails.
pub async fn prepare_append(
    io: &FileIo,
    table: &Table,
    data_files: Vec<DataFile>,
    extra_summary: BTreeMap<String, String>,
    env: &dyn Environment,
) -> Result<AppendResult> {
    prepare_append_with_mode(io, table, data_files, extra_summary, AppendMode::Fast, env).await
}

/// As [`prepare_append`], fast or merging.
///
/// # Errors
/// When a data file does not belong to the table, or IO fails.
pub async fn prepare_append_with_mode(
    io: &FileIo,
    table: &Table,
    data_files: Vec<DataFile>,
    extra_summary: BTreeMap<String, String>,
    mode: AppendMode,
    env: &dyn Environment,
) -> Result<AppendResult> {
    let input = AppendInput::new(data_files, extra_summary, Some(mode), None);
    Ok(start_append(io, table, input, env, None).await?.1)
}

/// What an append adds, besides the table it goes to.
#[derive(Debug)]
pub(crate) struct AppendInput {
    pub(crate) data_files: Vec<DataFile>,
    pub(crate) extra_summary: BTreeMap<String, String>,
    pub(crate) mode: AppendMode,
    /// The schema change made with it, if any.
    pub(crate) evolution: Option<SchemaEvolution>,
    /// A transaction's metadata changes made with it.
    pub(crate) updates: StagedUpdates,
}

/// A transaction's metadata changes, made on every attempt's base (in order) before the
/// snapshot is planned.
#[derive(Debug, Clone, Default)]
pub(crate) struct StagedUpdates {
    /// The table's name, for conflicts.
    table: String,
    steps: Vec<UpdateStep>,
}

/// The metadata an append plans on: `base` with `updates` and then `evolution` made.
fn staged<'m>(
    base: &'m Table,
    updates: &StagedUpdates,
    evolution: Option<&SchemaEvolution>,
) -> Result<Cow<'m, TableMetadata>> {
    if updates.steps.is_empty() && evolution.is_none() {
        return Ok(Cow::Borrowed(&base.metadata));
    }
    let mut meta = base.metadata.clone();
    for step in &updates.steps {
        meta = step.edit(&updates.table, &meta)?;
    }
    if let Some(evolution) = evolution {
        evolution.apply(&base.metadata.location, &mut meta)?;
    }
    Ok(Cow::Owned(meta))
}

impl AppendInput {
    /// The input of an append of `data_files`; `mode` `None`: a fast append until the
    /// table's properties say otherwise.
    pub(crate) fn new(
        data_files: Vec<DataFile>,
        extra_summary: BTreeMap<String, String>,
        mode: Option<AppendMode>,
        evolution: Option<SchemaEvolution>,
    ) -> Self {
        Self {
            data_files,
            extra_summary,
            mode: mode.unwrap_or(AppendMode::Fast),
            evolution,
            updates: StagedUpdates::default(),
        }
    }

    /// The same append with a transaction's `steps` on `table` made in its commit.
    pub(crate) fn with_updates(mut self, table: &TableIdent, steps: Vec<UpdateStep>) -> Self {
        self.updates = StagedUpdates {
            table: table.to_string(),
            steps,
        };
        self
    }
}

/// Writes the manifests once and plans attempt 1; the pending append serves the retries.
pub(crate) async fn start_append(
    io: &FileIo,
    table: &Table,
    input: AppendInput,
    env: &dyn Environment,
    cache: Option<&MetadataCache>,
) -> Result<(PendingAppend, AppendResult)> {
    let AppendInput {
        data_files,
        extra_summary,
        mode,
        evolution,
        updates,
    } = input;
    // The manifests' header names the schema the files were written with.
    let meta = staged(table, &updates, evolution.as_ref())?;
    let meta = meta.as_ref();
    check_files(meta, &data_files)?;
    let props = TableProperties::parse_for_commit(&meta.properties)?;
    let snapshot_id = fresh_snapshot_id(meta, env)?;
    let commit_uuid = env.new_uuid();
    let new_manifests =
        write_manifests(io, meta, &props, snapshot_id, commit_uuid, &data_files, env).await?;
    let mut pending = PendingAppend {
        snapshot_id,
        commit_uuid,
        data_files,
        new_manifests,
        extra_summary,
        branch: MAIN_BRANCH.to_string(),
        mode,
        merged: HashMap::new(),
        evolution,
        updates,
    };
    let result = pending.attempt(io, table, 1, env, cache).await?;
    Ok((pending, result))
}

/// How an append treats the manifests it inherits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendMode {
    /// Add a manifest and carry every parent manifest by reference.
    Fast,
    /// Also fold small manifests (`commit.manifest-merge.*`), as Java's default append does.
    Merge,
}

impl AppendMode {
    /// `Merge` when the table enables `commit.manifest-merge.enabled` (the default), else `Fast`.
    pub fn from_properties(props: &TableProperties) -> Self {
        if props.manifest.merge_enabled {
            Self::Merge
        } else {
            Self::Fast
        }
    }
}

/// An append whose manifests are written; each attempt plans it onto a base.
#[derive(Debug, Clone)]
pub(crate) struct PendingAppend {
    pub(crate) snapshot_id: i64,
    pub(crate) commit_uuid: Uuid,
    pub(crate) data_files: Vec<DataFile>,
    pub(crate) new_manifests: Vec<ManifestFile>,
    pub(crate) extra_summary: BTreeMap<String, String>,
    pub(crate) branch: String,
    pub(crate) mode: AppendMode,
    /// Merged manifests written so far, by what they replace (reused across attempts).
    pub(crate) merged: HashMap<MergeKey, ManifestFile>,
    /// Made current on every attempt's base before the snapshot is planned.
    pub(crate) evolution: Option<SchemaEvolution>,
    /// Made on every attempt's base before `evolution`.
    pub(crate) updates: StagedUpdates,
}

impl PendingAppend {
    /// Plans attempt `attempt` onto `base` and writes its manifest list.
    pub(crate) async fn attempt(
        &mut self,
        io: &FileIo,
        base: &Table,
        attempt: u32,
        env: &dyn Environment,
        cache: Option<&MetadataCache>,
    ) -> Result<AppendResult> {
        let meta = staged(base, &self.updates, self.evolution.as_ref())?;
        let meta = meta.as_ref();
        let parent = read_manifest_list_cached(io, meta.branch_head(&self.branch), cache).await?;
        let schema = meta.current_schema()?;
        let added = AddedCounts::of(meta, schema, &self.data_files)?;
        let manifest_list_path = format!(
            "{}/snap-{}-{attempt}-{}.avro",
            metadata_dir(meta),
            self.snapshot_id,
            self.commit_uuid
        );
        let props = TableProperties::parse_for_commit(&meta.properties)?;
        let (new_manifests, kept, replaced) = match self.mode {
            AppendMode::Fast => (self.new_manifests.clone(), Cow::from(parent.rows()), 0),
            AppendMode::Merge => {
                let (written, kept, replaced) =
                    self.merge(io, meta, &props, parent.rows(), env).await?;
                (written, Cow::from(kept), replaced)
            }
        };
        let kept = if meta.format_version >= FormatVersion::V2 {
            with_known_counts(io, kept).await?
        } else {
            kept
        };
        let plan = plan_fast_append(
            meta,
            &AttemptInputs {
                snapshot_id: self.snapshot_id,
                branch: &self.branch,
                new_manifests: &new_manifests,
                parent_manifests: &kept,
                manifests_replaced: replaced,
                added: &added,
                extra_summary: &self.extra_summary,
                manifest_list_path: manifest_list_path.clone(),
                base_location: base.metadata_location.as_deref(),
                now_ms: env.now_ms(),
            },
        )?;
        // The parent's blocks that this list repeats are copied, not encoded again.
        let (bytes, list) = encode_manifest_list_onto(
            &manifest_list_path,
            &plan.header,
            plan.manifests,
            props.manifest.compression_codec,
            env.sync_marker(),
            Some(&parent),
        )?;
        io.put(&manifest_list_path, bytes).await?;
        Ok(AppendResult {
            metadata: plan.metadata,
            snapshot_id: self.snapshot_id,
            manifest_list: manifest_list_path,
            manifest_paths: new_manifests
                .iter()
                .map(|m| m.manifest_path.clone())
                .collect(),
            data_files: self.data_files.clone(),
            new_manifests: self.new_manifests.clone(),
            listed_manifests: Arc::new(list),
            commit_uuid: self.commit_uuid,
            attempt,
        })
    }

    /// Splits the manifests of this attempt into (written by this commit, kept, replaced count).
    async fn merge(
        &mut self,
        io: &FileIo,
        meta: &TableMetadata,
        props: &TableProperties,
        parents: &[Arc<ManifestFile>],
        env: &dyn Environment,
    ) -> Result<(Vec<ManifestFile>, Vec<Arc<ManifestFile>>, usize)> {
        let uuid_fields = uuid_fields_by_spec(meta);
        let steps = plan_merge(
            &self.new_manifests,
            parents,
            props.manifest.target_size_bytes,
            props.manifest.min_count_to_merge,
            |m| manifest_class(m, uuid_fields.get(&m.partition_spec_id)?.as_deref()?),
        );
        let new_paths: Vec<String> = self
            .new_manifests
            .iter()
            .map(|m| m.manifest_path.clone())
            .collect();
        let dir = metadata_dir(meta);
        let mut merger = Merger {
            io,
            meta,
            props,
            snapshot_id: self.snapshot_id,
            dir: &dir,
            commit_uuid: self.commit_uuid,
            next_index: self.new_manifests.len() + self.merged.len(),
            marker: env.sync_marker(),
        };
        let (mut written, mut kept, mut replaced) = (Vec::new(), Vec::new(), 0);
        for step in steps {
            match step {
                MergeStep::Keep(ms) => {
                    for m in ms {
                        if new_paths.contains(&m.manifest_path) {
                            written.push(ManifestFile::clone(&m));
                        } else {
                            kept.push(m);
                        }
                    }
                }
                MergeStep::Merge(ms) => {
                    replaced += ms
                        .iter()
                        .filter(|m| !new_paths.contains(&m.manifest_path))
                        .count();
                    written.push(merger.merge(&ms, &new_paths, &mut self.merged).await?);
                }
            }
        }
        Ok((written, kept, replaced))
    }
}
