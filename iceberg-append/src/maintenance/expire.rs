//! [`ExpireSnapshots`]: removes the snapshots a table's retention policy no longer keeps, in
//! one commit, then deletes the files only they reached.
//!
//! ```text
//! plan_expiry (iceberg-spec, pure) --> one metadata commit (planned again on every retry's base)
//!     --> once it landed: files the expired snapshots reach and no kept one does
//!         (manifest lists, manifests, data and delete files, statistics files), deleted
//! ```
//! The kept side is what the table holds after the commit, reloaded (so a snapshot a
//! concurrent writer committed meanwhile counts as kept), plus the metadata the commit wrote.
//! Nothing is deleted before the commit landed, or when it may not have (an unknown commit
//! state is an error and deletes nothing); a deletion that fails afterwards leaves orphans,
//! never a dangling reference, and is reported in [`ExpiryReport::cleanup_error`].

use std::collections::{BTreeMap, BTreeSet};

use iceberg_io::FileIo;
use iceberg_spec::retention::{ExpireOptions, ExpiryPlan, apply_expiry, plan_expiry};
use iceberg_spec::{DataContentType, Snapshot, TableMetadata};

use super::orphans::checksum_file;
use super::reach::{LiveFile, live_files, manifests_of};
use super::refuse_without_gc;
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::handle::TableHandle;
use crate::update::{UpdateStep, commit_steps};

/// What [`ExpireSnapshots`] is called in its errors.
pub(crate) const EXPIRING: &str = "expiring snapshots";

impl TableHandle {
    /// Runs `expiry` on the table ([`ExpireSnapshots::commit`] with the handle's catalog and
    /// clock); reload the handle to see the result.
    ///
    /// # Errors
    /// As [`ExpireSnapshots::commit`].
    pub async fn expire_snapshots(&self, expiry: &ExpireSnapshots) -> Result<ExpiryReport> {
        expiry
            .commit(self.catalog().as_ref(), self.ident(), self.environment())
            .await
    }
}

/// A snapshot expiry (Java's `ExpireSnapshots`): by default the table's
/// `history.expire.max-snapshot-age-ms` (5 days), `history.expire.min-snapshots-to-keep` (1)
/// and `history.expire.max-ref-age-ms`, with each branch's and tag's own retention winning.
#[derive(Debug, Clone, Default)]
pub struct ExpireSnapshots {
    options: ExpireOptions,
    keep_files: bool,
}

/// Files of one kind that an expiry removed from the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileCount {
    /// How many.
    pub files: usize,
    /// Their bytes, where the table's metadata records them (not for manifest lists).
    pub bytes: u64,
}

impl FileCount {
    fn add(&mut self, bytes: u64) {
        self.files += 1;
        self.bytes += bytes;
    }
}

/// The files an expiry found reachable only from expired snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpiredFiles {
    /// Data files.
    pub data_files: FileCount,
    /// Position and equality delete files, deletion vectors' Puffin files.
    pub delete_files: FileCount,
    /// Manifests.
    pub manifests: FileCount,
    /// Manifest lists.
    pub manifest_lists: FileCount,
    /// Statistics and partition statistics files.
    pub statistics_files: FileCount,
    /// Every path above.
    pub paths: Vec<String>,
}

/// What an expiry did (or, planned only, would do).
#[derive(Debug)]
pub struct ExpiryReport {
    /// The metadata file the expiry committed (`None` when it changed nothing or was only
    /// planned).
    pub metadata_location: Option<String>,
    /// Expired snapshot ids.
    pub expired_snapshots: Vec<i64>,
    /// Removed branches and tags.
    pub removed_refs: Vec<String>,
    /// Snapshots the table keeps.
    pub kept_snapshots: usize,
    /// Files reachable only from the expired snapshots: deleted, unless the expiry keeps
    /// files or was only planned.
    pub files: ExpiredFiles,
    /// True when the files were deleted (not planned only, not kept).
    pub files_deleted: bool,
    /// Why finding or deleting the files failed after the commit landed; the files left are
    /// orphans (no metadata references them).
    pub cleanup_error: Option<Error>,
    /// Commit attempts.
    pub attempts: u32,
}

impl ExpireSnapshots {
    /// An expiry by the table's retention properties alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Expires snapshots older than `timestamp_ms` (ms since the epoch) instead of the
    /// table's `history.expire.max-snapshot-age-ms` ago.
    pub fn older_than_ms(mut self, timestamp_ms: i64) -> Self {
        self.options.older_than_ms = Some(timestamp_ms);
        self
    }

    /// Keeps at least `count` snapshots of each branch (its head and ancestors) whatever
    /// their age, instead of `history.expire.min-snapshots-to-keep`.
    pub fn retain_last(mut self, count: usize) -> Self {
        self.options.retain_last = Some(count);
        self
    }

    /// Also expires snapshot `id` whatever its age (refused when a kept branch or tag
    /// points at it).
    pub fn expire_snapshot_id(mut self, id: i64) -> Self {
        self.options.snapshot_ids.insert(id);
        self
    }

    /// Removes the snapshots from the metadata but deletes no file (Java's
    /// `cleanExpiredFiles(false)`).
    pub fn keep_files(mut self) -> Self {
        self.keep_files = true;
        self
    }

    /// What the expiry would do to `meta` at `now_ms`, reading its manifests through `io`;
    /// nothing is committed or deleted.
    ///
    /// # Errors
    /// A bad retention property, a named snapshot a ref holds, or a manifest that cannot be
    /// read.
    pub async fn plan(
        &self,
        io: &FileIo,
        meta: &TableMetadata,
        now_ms: i64,
    ) -> Result<ExpiryReport> {
        refuse_without_gc(meta, EXPIRING)?;
        let plan = plan_expiry(meta, now_ms, &self.options)?;
        let after = apply_expiry(meta, &plan);
        let files = expired_files(io, meta, &plan, &[&after]).await?;
        Ok(report(&plan, &after, None, files, false, None, 0))
    }

    /// Expires the snapshots of `ident` in one commit (retried on conflicts, planned again
    /// on each new base), then deletes the files only they reached.
    ///
    /// # Errors
    /// As [`ExpireSnapshots::plan`] before the commit, and the commit's errors
    /// ([`Error::CommitStateUnknown`]: nothing is deleted). Failures after the commit landed
    /// are in [`ExpiryReport::cleanup_error`].
    pub async fn commit(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        env: &dyn Environment,
    ) -> Result<ExpiryReport> {
        let now_ms = env.now_ms();
        let current = catalog.load_table(ident).await?;
        refuse_without_gc(&current.metadata, EXPIRING)?;
        let plan = plan_expiry(&current.metadata, now_ms, &self.options)?;
        if plan.is_empty() {
            return Ok(report(
                &plan,
                &current.metadata,
                None,
                ExpiredFiles::default(),
                false,
                None,
                0,
            ));
        }
        let step = UpdateStep::Expire {
            options: self.options.clone(),
            now_ms,
        };
        let landed = commit_steps(catalog, ident, std::slice::from_ref(&step), env).await?;
        // The same inputs plan the same expiry of the base the commit landed on.
        let plan = plan_expiry(&landed.base, now_ms, &self.options)?;
        let location = Some(landed.outcome.metadata_location.clone());
        let attempts = landed.outcome.attempts;
        if self.keep_files {
            let files = ExpiredFiles::default();
            return Ok(report(
                &plan,
                &landed.new,
                location,
                files,
                false,
                None,
                attempts,
            ));
        }
        let table = catalog.table_io(&current);
        let (files, error) = match self
            .cleanup(catalog, ident, &table, &landed.base, &plan, &landed.new)
            .await
        {
            Ok(files) => files,
            Err(e) => (ExpiredFiles::default(), Some(e)),
        };
        let deleted = error.is_none();
        Ok(report(
            &plan,
            &landed.new,
            location,
            files,
            deleted,
            error,
            attempts,
        ))
    }

    /// Finds the files only the expired snapshots of `base` reach, against what the table
    /// keeps now and what the commit wrote, and deletes them (batched per store); the
    /// files found are returned with the deletion's first error.
    async fn cleanup(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        io: &FileIo,
        base: &TableMetadata,
        plan: &ExpiryPlan,
        committed: &TableMetadata,
    ) -> Result<(ExpiredFiles, Option<Error>)> {
        let now = catalog.load_table(ident).await?;
        let files = expired_files(io, base, plan, &[committed, &now.metadata]).await?;
        // Java on local disk writes a checksum file beside each file; it goes too.
        let checksums = files.paths.iter().filter_map(|p| checksum_file(p));
        let paths = files.paths.iter().cloned().chain(checksums).collect();
        let error = io.delete_many(paths).await.err().map(Error::from);
        Ok((files, error))
    }
}

/// The files the snapshots `plan` expires from `base` reach and none of the snapshots of
/// `kept` does.
async fn expired_files(
    io: &FileIo,
    base: &TableMetadata,
    plan: &ExpiryPlan,
    kept: &[&TableMetadata],
) -> Result<ExpiredFiles> {
    let expired: Vec<&Snapshot> = base
        .snapshots
        .iter()
        .map(|s| s.snapshot())
        .filter(|s| plan.expired.contains(&s.snapshot_id))
        .collect();
    let mut kept_snapshots: BTreeMap<i64, &Snapshot> = BTreeMap::new();
    for meta in kept {
        for s in &meta.snapshots {
            kept_snapshots.insert(s.snapshot_id, s.snapshot());
        }
    }
    let kept_snapshots: Vec<&Snapshot> = kept_snapshots.into_values().collect();
    let gone = manifests_of(io, &expired).await?;
    let stay = manifests_of(io, &kept_snapshots).await?;
    let mut out = ExpiredFiles::default();
    let manifests: BTreeMap<&String, u64> = gone
        .manifests
        .iter()
        .filter(|(path, _)| !stay.manifests.contains_key(*path))
        .map(|(path, len)| (path, *len))
        .collect();
    let mut candidates: BTreeMap<String, LiveFile> =
        live_files(io, manifests.keys().copied()).await?;
    if !candidates.is_empty() {
        for path in live_files(io, stay.manifests.keys()).await?.keys() {
            candidates.remove(path);
        }
    }
    for (path, file) in candidates {
        match file.content {
            DataContentType::Data => out.data_files.add(file.size),
            _ => out.delete_files.add(file.size),
        }
        out.paths.push(path);
    }
    for (path, len) in manifests {
        out.manifests.add(len);
        out.paths.push(path.clone());
    }
    for list in gone.lists.difference(&stay.lists) {
        out.manifest_lists.add(0);
        out.paths.push(list.clone());
    }
    let kept_stats: BTreeSet<&String> = kept
        .iter()
        .flat_map(|m| {
            m.statistics
                .iter()
                .map(|s| &s.statistics_path)
                .chain(m.partition_statistics.iter().map(|s| &s.statistics_path))
        })
        .collect();
    let stats = base
        .statistics
        .iter()
        .map(|s| (&s.statistics_path, s.file_size_in_bytes))
        .chain(
            base.partition_statistics
                .iter()
                .map(|s| (&s.statistics_path, s.file_size_in_bytes)),
        );
    let mut seen = BTreeSet::new();
    for (path, size) in stats {
        if !kept_stats.contains(path) && seen.insert(path) {
            out.statistics_files.add(u64::try_from(size).unwrap_or(0));
            out.paths.push(path.clone());
        }
    }
    Ok(out)
}

fn report(
    plan: &ExpiryPlan,
    after: &TableMetadata,
    metadata_location: Option<String>,
    files: ExpiredFiles,
    files_deleted: bool,
    cleanup_error: Option<Error>,
    attempts: u32,
) -> ExpiryReport {
    ExpiryReport {
        metadata_location,
        expired_snapshots: plan.expired.iter().copied().collect(),
        removed_refs: plan.removed_refs.iter().cloned().collect(),
        kept_snapshots: after.snapshots.len(),
        files,
        files_deleted,
        cleanup_error,
        attempts,
    }
}
