//! The pure plan of one append attempt: given a base table and the manifests this append
//! wrote, decide the manifest list, the snapshot and the new metadata. No IO, no clock:
//! everything comes in as arguments, so the same inputs give the same bytes.

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_spec::properties::ENCRYPTION_KEY_ID;
use iceberg_spec::snapshot::{MAIN_BRANCH, MetadataLogEntry, SnapshotLogEntry};
use iceberg_spec::{
    FormatVersion, ManifestContent, ManifestFile, Snapshot, SnapshotRef, TableMetadata,
    TableProperties,
};

use crate::error::{Error, Result};
use crate::manifest_list::ManifestListHeader;
use crate::summary::{AddedCounts, append_summary};

/// The inputs of one attempt that the base does not decide.
#[derive(Debug, Clone)]
pub struct AttemptInputs<'a> {
    /// The snapshot id, kept across attempts.
    pub snapshot_id: i64,
    /// Branch to commit to.
    pub branch: &'a str,
    /// Manifests written by this append (sequence numbers and row ids unassigned).
    pub new_manifests: &'a [ManifestFile],
    /// Manifests of the base's branch head, carried by reference (shared, not copied).
    pub parent_manifests: &'a [Arc<ManifestFile>],
    /// Parent manifests that a merge replaced.
    pub manifests_replaced: usize,
    /// Counts of the files this append adds.
    pub added: &'a AddedCounts,
    /// Caller's summary keys.
    pub extra_summary: &'a BTreeMap<String, String>,
    /// Where the manifest list of this attempt goes.
    pub manifest_list_path: String,
    /// Location of the base metadata file, for the metadata log.
    pub base_location: Option<&'a str>,
    /// Commit time, ms since the epoch.
    pub now_ms: i64,
}

/// What one attempt writes and commits.
#[derive(Debug, Clone)]
pub struct AttemptPlan {
    /// Rows of the manifest list, new manifests first; carried rows are shared with the
    /// parent's list unless the plan changed them.
    pub manifests: Vec<Arc<ManifestFile>>,
    /// Key-value metadata of the manifest list.
    pub header: ManifestListHeader,
    /// The new snapshot.
    pub snapshot: Snapshot,
    /// The table metadata after the commit.
    pub metadata: TableMetadata,
}

/// Plans an attempt of a fast append onto `base`.
///
/// # Errors
/// When the base's properties do not parse or the new metadata fails validation.
pub fn plan_fast_append(base: &TableMetadata, inputs: &AttemptInputs<'_>) -> Result<AttemptPlan> {
    if let Some(key) = base.property(ENCRYPTION_KEY_ID) {
        // Java would encrypt the new files and manifests; plaintext ones would slip into a
        // table its owner made encrypted, with no error anywhere.
        return Err(Error::NotSupportedForTable {
            table: base.location.clone(),
            operation: "committing new files".into(),
            reason: format!("the table is encrypted ({ENCRYPTION_KEY_ID} = {key})"),
        });
    }
    let props = TableProperties::parse_for_commit(&base.properties)?;
    let version = base.format_version;
    let parent = base.branch_head(inputs.branch);
    let sequence_number = if version == FormatVersion::V1 {
        0
    } else {
        base.last_sequence_number + 1
    };

    let mut manifests: Vec<Arc<ManifestFile>> = inputs
        .new_manifests
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.sequence_number = sequence_number;
            if version == FormatVersion::V1 || m.min_sequence_number < 0 {
                m.min_sequence_number = sequence_number;
            }
            m.first_row_id = None;
            Arc::new(m)
        })
        .collect();
    manifests.extend(inputs.parent_manifests.iter().cloned());

    // v3 row lineage: data manifests without a first row id get one from the table's counter.
    let (first_row_id, added_rows) = match base.next_row_id {
        Some(start) if version == FormatVersion::V3 => {
            let mut next = start;
            for m in manifests.iter_mut() {
                if m.content != ManifestContent::Data {
                    // The spec: "always null" for delete manifests (Java's list writer
                    // writes null whatever a foreign row held).
                    if m.first_row_id.is_some() {
                        Arc::make_mut(m).first_row_id = None;
                    }
                } else if m.first_row_id.is_none() {
                    // Only a row that gets an id is copied; the rest stay shared.
                    let m = Arc::make_mut(m);
                    m.first_row_id = Some(next);
                    next += m.assignable_rows();
                }
            }
            (Some(start), Some(next - start))
        }
        _ => (None, None),
    };

    let summary = append_summary(
        inputs.added,
        parent,
        inputs.new_manifests.len(),
        inputs.parent_manifests.len(),
        inputs.manifests_replaced,
        props.partition_summary_limit,
        inputs.extra_summary,
    );
    let snapshot = Snapshot {
        snapshot_id: inputs.snapshot_id,
        parent_snapshot_id: parent.map(|p| p.snapshot_id),
        sequence_number,
        timestamp_ms: inputs.now_ms,
        manifest_list: Some(inputs.manifest_list_path.clone()),
        manifests: None,
        summary: Some(summary),
        schema_id: Some(base.current_schema_id),
        first_row_id,
        added_rows,
        key_id: None,
    };

    let mut meta = base.clone();
    // A clock that stepped back must not make the log go backwards.
    let now = inputs.now_ms.max(base.last_updated_ms);
    meta.last_updated_ms = now;
    meta.last_sequence_number = sequence_number.max(base.last_sequence_number);
    meta.snapshots.push(snapshot.clone().into());
    let retention = base
        .refs
        .get(inputs.branch)
        .map(|r| r.retention.clone())
        .unwrap_or_else(|| SnapshotRef::branch(0).retention);
    meta.refs.insert(
        inputs.branch.to_string(),
        SnapshotRef {
            snapshot_id: inputs.snapshot_id,
            retention,
        },
    );
    if inputs.branch == MAIN_BRANCH {
        meta.current_snapshot_id = Some(inputs.snapshot_id);
        meta.snapshot_log.push(SnapshotLogEntry {
            timestamp_ms: now,
            snapshot_id: inputs.snapshot_id,
        });
    }
    log_previous_metadata(
        &mut meta,
        base,
        inputs.base_location,
        props.metadata_previous_versions_max,
    );
    if let (Some(first), Some(added)) = (first_row_id, added_rows) {
        meta.next_row_id = Some(first + added);
    }
    meta.validate()?;

    Ok(AttemptPlan {
        header: ManifestListHeader {
            version,
            snapshot_id: inputs.snapshot_id,
            parent_snapshot_id: snapshot.parent_snapshot_id,
            sequence_number,
            first_row_id,
        },
        manifests,
        snapshot,
        metadata: meta,
    })
}

/// Adds the base's metadata file (when it has one) to the new metadata's log, which keeps
/// the last `max` entries (`write.metadata.previous-versions-max`).
pub(crate) fn log_previous_metadata(
    meta: &mut TableMetadata,
    base: &TableMetadata,
    base_location: Option<&str>,
    max: usize,
) {
    if let Some(loc) = base_location {
        meta.metadata_log.push(MetadataLogEntry {
            timestamp_ms: base.last_updated_ms,
            metadata_file: loc.to_string(),
        });
        let max = max.max(1);
        if meta.metadata_log.len() > max {
            let drop = meta.metadata_log.len() - max;
            meta.metadata_log.drain(..drop);
        }
    }
}
