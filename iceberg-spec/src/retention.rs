//! Snapshot expiry: which snapshots and refs a table keeps under its retention policy (the
//! spec's "Snapshot Retention Policy", decided as Java's `RemoveSnapshots` decides it), and the
//! metadata without the others.
//!
//! 1. Refs other than `main` whose snapshot is older than their `max-ref-age-ms` (else the
//!    table's `history.expire.max-ref-age-ms`) are removed, as are refs to missing snapshots.
//! 2. Every kept ref's snapshot is kept.
//! 3. Each kept branch keeps its ancestors, newest first, while fewer than its
//!    `min-snapshots-to-keep` are kept or the ancestor is not older than its
//!    `max-snapshot-age-ms` (else the table's `history.expire.*` defaults, or the cut-off and
//!    count the caller gives).
//! 4. Snapshots no kept ref reaches are kept while they are not older than the cut-off (a
//!    staged, not yet published snapshot survives, as in Java; the spec's step 5 would expire
//!    it).
//! 5. Every other snapshot expires, as does any snapshot the caller names, unless a kept ref
//!    points at it (refused).
//!
//! The new metadata drops the expired snapshots, their statistics files and the removed
//! refs, and keeps the snapshot log only after its last entry of an expired snapshot (so the
//! log never skips a state the table was in), as Java's `TableMetadata.Builder` does.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::error::{Error, Result};
use crate::properties::TableProperties;
use crate::snapshot::{MAIN_BRANCH, Snapshot, SnapshotRef, SnapshotRetention};
use crate::table_metadata::TableMetadata;

/// What an expiry is asked to do beyond the table's `history.expire.*` properties.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireOptions {
    /// Snapshots older than this (ms since the epoch) may expire; default: now minus
    /// `history.expire.max-snapshot-age-ms`. Refs' own `max-snapshot-age-ms` still win.
    pub older_than_ms: Option<i64>,
    /// Snapshots of each branch kept whatever their age, the head included; default:
    /// `history.expire.min-snapshots-to-keep`. Refs' own `min-snapshots-to-keep` still win.
    pub retain_last: Option<usize>,
    /// Snapshots to expire whatever their age (Java's `expireSnapshotId`).
    pub snapshot_ids: BTreeSet<i64>,
}

/// The snapshots and refs an expiry removes from one metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpiryPlan {
    /// Expired snapshot ids.
    pub expired: BTreeSet<i64>,
    /// Removed branches and tags.
    pub removed_refs: BTreeSet<String>,
}

impl ExpiryPlan {
    /// True when the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.expired.is_empty() && self.removed_refs.is_empty()
    }
}

/// The refs of `meta`, with `main` made from `current-snapshot-id` when an old document
/// has none.
pub fn effective_refs(meta: &TableMetadata) -> BTreeMap<String, SnapshotRef> {
    let mut refs = meta.refs.clone();
    if let Some(id) = meta.current_snapshot_id {
        refs.entry(MAIN_BRANCH.to_string())
            .or_insert_with(|| SnapshotRef::branch(id));
    }
    refs
}

/// Plans the expiry of `meta`'s snapshots at `now_ms` (see the module docs).
///
/// # Errors
/// [`Error::InvalidProperty`] for a bad `history.expire.*` property;
/// [`Error::InvalidOption`] for `retain_last` 0;
/// [`Error::SnapshotInUse`] when `options` names a snapshot a kept branch or tag points at.
pub fn plan_expiry(
    meta: &TableMetadata,
    now_ms: i64,
    options: &ExpireOptions,
) -> Result<ExpiryPlan> {
    if options.retain_last == Some(0) {
        // Java's `retainLast` refuses it too: a branch always keeps its head.
        return Err(Error::InvalidOption {
            option: "retain_last".into(),
            reason: "at least one snapshot of each branch is kept; give 1 or more".into(),
        });
    }
    let history = TableProperties::parse_for_commit(&meta.properties)?.history;
    let older_than = options
        .older_than_ms
        .unwrap_or_else(|| now_ms.saturating_sub(history.max_snapshot_age_ms));
    let min_keep = options.retain_last.unwrap_or(history.min_snapshots_to_keep);
    let by_id: HashMap<i64, &Snapshot> = meta
        .snapshots
        .iter()
        .map(|s| (s.snapshot_id, s.snapshot()))
        .collect();
    let refs = effective_refs(meta);
    let mut kept_refs = BTreeMap::new();
    let mut removed_refs = BTreeSet::new();
    for (name, r) in &refs {
        let keep = name == MAIN_BRANCH
            || by_id.get(&r.snapshot_id).is_some_and(|s| {
                let max_age = ref_max_age(r).unwrap_or(history.max_ref_age_ms);
                now_ms.saturating_sub(s.timestamp_ms) <= max_age
            });
        if keep {
            kept_refs.insert(name.clone(), r);
        } else {
            removed_refs.insert(name.clone());
        }
    }
    let mut keep: BTreeSet<i64> = kept_refs.values().map(|r| r.snapshot_id).collect();
    if let Some((name, r)) = kept_refs
        .iter()
        .find(|(_, r)| options.snapshot_ids.contains(&r.snapshot_id))
    {
        return Err(Error::SnapshotInUse {
            snapshot_id: r.snapshot_id,
            reference: name.clone(),
        });
    }
    let mut reached = BTreeSet::new();
    for r in kept_refs.values() {
        let SnapshotRetention::Branch {
            min_snapshots_to_keep,
            max_snapshot_age_ms,
            ..
        } = &r.retention
        else {
            reached.insert(r.snapshot_id);
            continue;
        };
        let branch_older_than =
            max_snapshot_age_ms.map_or(older_than, |age| now_ms.saturating_sub(age));
        let branch_min =
            min_snapshots_to_keep.map_or(min_keep, |n| usize::try_from(n).unwrap_or(0));
        let mut kept_here = 0usize;
        let mut retaining = true;
        for ancestor in ancestors(r.snapshot_id, &by_id) {
            reached.insert(ancestor.snapshot_id);
            if retaining && (kept_here < branch_min || ancestor.timestamp_ms >= branch_older_than) {
                keep.insert(ancestor.snapshot_id);
                kept_here += 1;
            } else {
                retaining = false;
            }
        }
    }
    keep.extend(
        meta.snapshots
            .iter()
            .filter(|s| !reached.contains(&s.snapshot_id) && s.timestamp_ms >= older_than)
            .map(|s| s.snapshot_id),
    );
    let expired = meta
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .filter(|id| !keep.contains(id) || options.snapshot_ids.contains(id))
        .collect();
    Ok(ExpiryPlan {
        expired,
        removed_refs,
    })
}

/// `meta` without the snapshots and refs of `plan` (see the module docs); every other field
/// is left to the commit (`last-updated-ms`, the metadata log).
pub fn apply_expiry(meta: &TableMetadata, plan: &ExpiryPlan) -> TableMetadata {
    let mut out = meta.clone();
    if plan.is_empty() {
        return out;
    }
    out.snapshots
        .retain(|s| !plan.expired.contains(&s.snapshot_id));
    out.statistics
        .retain(|s| !plan.expired.contains(&s.snapshot_id));
    out.partition_statistics
        .retain(|s| !plan.expired.contains(&s.snapshot_id));
    let kept: BTreeSet<i64> = out.snapshots.iter().map(|s| s.snapshot_id).collect();
    out.refs
        .retain(|name, r| !plan.removed_refs.contains(name) && kept.contains(&r.snapshot_id));
    if out
        .current_snapshot_id
        .is_some_and(|id| !kept.contains(&id))
    {
        out.current_snapshot_id = None;
    }
    if plan.expired.is_empty() {
        // Java's `updateSnapshotLog` leaves the log alone unless snapshots go.
        return out;
    }
    let mut log = Vec::with_capacity(out.snapshot_log.len());
    for entry in &out.snapshot_log {
        if kept.contains(&entry.snapshot_id) {
            log.push(entry.clone());
        } else {
            log.clear();
        }
    }
    out.snapshot_log = log;
    out
}

/// A ref's own `max-ref-age-ms`.
fn ref_max_age(r: &SnapshotRef) -> Option<i64> {
    match &r.retention {
        SnapshotRetention::Branch { max_ref_age_ms, .. }
        | SnapshotRetention::Tag { max_ref_age_ms } => *max_ref_age_ms,
    }
}

/// The snapshot `head` and its ancestors, newest first, as far as they exist.
fn ancestors<'a>(
    head: i64,
    by_id: &'a HashMap<i64, &'a Snapshot>,
) -> impl Iterator<Item = &'a Snapshot> + 'a {
    let mut next = by_id.get(&head).copied();
    let mut seen = BTreeSet::new();
    std::iter::from_fn(move || {
        let s = next.filter(|s| seen.insert(s.snapshot_id))?;
        next = s.parent_snapshot_id.and_then(|p| by_id.get(&p).copied());
        Some(s)
    })
}

#[cfg(test)]
mod tests;
