//! A metadata change as a REST commit: the requirements the server checks against its
//! current metadata, and the updates it applies, derived from the base a change was planned
//! on and the metadata it produced. Java's `UpdateRequirements` decides which requirement
//! each update needs.
//!
//! Table-level fields the server derives itself (`last-sequence-number`, `last-updated-ms`,
//! the snapshot and metadata logs, `next-row-id`, the last assigned ids) are not sent; the
//! snapshot itself carries its sequence number and, on v3, `first-row-id` and `added-rows`,
//! which the server checks against its own.

use std::collections::{BTreeMap, BTreeSet};

use iceberg_spec::snapshot::{MAIN_BRANCH, SnapshotRef};
use iceberg_spec::{PartitionSpec, Schema, Snapshot, SortOrder, TableMetadata};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

/// A check the server makes before applying the updates; a failed one is a 409 conflict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Requirement {
    /// The table does not exist yet (a create in one commit).
    AssertCreate,
    /// The table is the one the change was planned on (not dropped and recreated).
    AssertTableUuid {
        /// The base's UUID.
        uuid: Uuid,
    },
    /// A ref still points where it did in the base (`None`: it did not exist).
    AssertRefSnapshotId {
        /// The branch or tag.
        #[serde(rename = "ref")]
        reference: String,
        /// The base's snapshot id for it.
        #[serde(rename = "snapshot-id")]
        snapshot_id: Option<i64>,
    },
    /// No column was added since the base.
    AssertLastAssignedFieldId {
        /// The base's `last-column-id`.
        #[serde(rename = "last-assigned-field-id")]
        last_assigned_field_id: i32,
    },
    /// The current schema is still the base's.
    AssertCurrentSchemaId {
        /// The base's current schema id.
        #[serde(rename = "current-schema-id")]
        current_schema_id: i32,
    },
    /// No partition field was added since the base.
    AssertLastAssignedPartitionId {
        /// The base's `last-partition-id`.
        #[serde(rename = "last-assigned-partition-id")]
        last_assigned_partition_id: i32,
    },
    /// The default partition spec is still the base's.
    AssertDefaultSpecId {
        /// The base's default spec id.
        #[serde(rename = "default-spec-id")]
        default_spec_id: i32,
    },
    /// The default sort order is still the base's.
    AssertDefaultSortOrderId {
        /// The base's default sort order id.
        #[serde(rename = "default-sort-order-id")]
        default_sort_order_id: i64,
    },
}

/// One change the server applies to the table's metadata.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Update {
    /// Gives a new table its UUID.
    AssignUuid {
        /// The UUID.
        uuid: Uuid,
    },
    /// Raises the format version.
    UpgradeFormatVersion {
        /// The new version number.
        #[serde(rename = "format-version")]
        format_version: u8,
    },
    /// Adds a schema.
    AddSchema {
        /// The schema as JSON.
        schema: Value,
        /// The table's highest column id with it (deprecated in the spec; older servers
        /// require it).
        #[serde(rename = "last-column-id")]
        last_column_id: i32,
    },
    /// Makes a schema current (`-1`: the one added last in this commit).
    SetCurrentSchema {
        /// The schema id.
        #[serde(rename = "schema-id")]
        schema_id: i32,
    },
    /// Adds a partition spec.
    AddSpec {
        /// The spec.
        spec: PartitionSpec,
    },
    /// Makes a spec the default (`-1`: the one added last).
    SetDefaultSpec {
        /// The spec id.
        #[serde(rename = "spec-id")]
        spec_id: i32,
    },
    /// Adds a sort order.
    AddSortOrder {
        /// The order.
        #[serde(rename = "sort-order")]
        sort_order: SortOrder,
    },
    /// Makes a sort order the default (`-1`: the one added last).
    SetDefaultSortOrder {
        /// The order id.
        #[serde(rename = "sort-order-id")]
        sort_order_id: i64,
    },
    /// Adds a snapshot (not yet referenced by any branch).
    AddSnapshot {
        /// The snapshot.
        snapshot: Snapshot,
    },
    /// Points a branch or tag at a snapshot.
    SetSnapshotRef {
        /// The ref's name.
        #[serde(rename = "ref-name")]
        ref_name: String,
        /// Where it points, and its kind and retention.
        #[serde(flatten)]
        reference: SnapshotRef,
    },
    /// Removes a branch or tag.
    RemoveSnapshotRef {
        /// The ref's name.
        #[serde(rename = "ref-name")]
        ref_name: String,
    },
    /// Removes snapshots.
    RemoveSnapshots {
        /// Their ids.
        #[serde(rename = "snapshot-ids")]
        snapshot_ids: Vec<i64>,
    },
    /// Removes the statistics file of a snapshot.
    RemoveStatistics {
        /// The snapshot.
        #[serde(rename = "snapshot-id")]
        snapshot_id: i64,
    },
    /// Removes the partition statistics file of a snapshot.
    RemovePartitionStatistics {
        /// The snapshot.
        #[serde(rename = "snapshot-id")]
        snapshot_id: i64,
    },
    /// Moves the table's base location.
    SetLocation {
        /// The new location.
        location: String,
    },
    /// Sets table properties.
    SetProperties {
        /// Keys and their new values.
        updates: BTreeMap<String, String>,
    },
    /// Removes table properties.
    RemoveProperties {
        /// The keys.
        removals: Vec<String>,
    },
}

/// The requirements and updates that take a table from one metadata to another.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableChange {
    /// Checked by the server on its current metadata first.
    pub requirements: Vec<Requirement>,
    /// Applied in order.
    pub updates: Vec<Update>,
}

/// Why a change cannot be sent as updates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot express the change as REST updates: {0}")]
pub struct UnsupportedChange(String);

/// The change from `base` to `new`.
///
/// # Errors
/// [`UnsupportedChange`] for what no update expresses: another table's UUID, a lower format
/// version, an existing schema, spec or sort order edited in place, a statistics file added,
/// or encryption keys (which this client never changes; statistics files are only removed,
/// with their expired snapshots).
pub fn diff(base: &TableMetadata, new: &TableMetadata) -> Result<TableChange, UnsupportedChange> {
    let unsupported = |what: &str| Err(UnsupportedChange(what.to_string()));
    if base.table_uuid.is_some() && base.table_uuid != new.table_uuid {
        return unsupported("the table UUID changed");
    }
    if new.format_version < base.format_version {
        return unsupported("the format version went down");
    }
    // Statistics files are only ever removed here (with their expired snapshots).
    if !statistics_removed_only(base, new) || new.encryption_keys != base.encryption_keys {
        return unsupported("statistics files were added or encryption keys changed");
    }
    let mut change = TableChange::default();
    if let Some(uuid) = base.table_uuid {
        change
            .requirements
            .push(Requirement::AssertTableUuid { uuid });
    }
    if new.format_version > base.format_version {
        change.updates.push(Update::UpgradeFormatVersion {
            format_version: new.format_version.number(),
        });
    }
    schemas(base, new, &mut change)?;
    specs(base, new, &mut change)?;
    sort_orders(base, new, &mut change)?;
    snapshots(base, new, &mut change)?;
    refs(base, new, &mut change);
    let kept = |m: &TableMetadata, id: i64| m.statistics.iter().any(|s| s.snapshot_id == id);
    for s in &base.statistics {
        if !kept(new, s.snapshot_id) {
            change.updates.push(Update::RemoveStatistics {
                snapshot_id: s.snapshot_id,
            });
        }
    }
    let kept =
        |m: &TableMetadata, id: i64| m.partition_statistics.iter().any(|s| s.snapshot_id == id);
    for s in &base.partition_statistics {
        if !kept(new, s.snapshot_id) {
            change.updates.push(Update::RemovePartitionStatistics {
                snapshot_id: s.snapshot_id,
            });
        }
    }
    if new.location != base.location {
        change.updates.push(Update::SetLocation {
            location: new.location.clone(),
        });
    }
    properties(base, new, &mut change);
    Ok(change)
}

/// A new table with everything `new` holds, as one commit (`assert-create`): the updates
/// Java's create transaction sends (UUID, format version, schemas, specs, sort orders, the
/// current ones, location, properties), then its snapshots and refs.
///
/// # Errors
/// [`UnsupportedChange`] for statistics files or encryption keys, which no create carries.
pub fn create(new: &TableMetadata) -> Result<TableChange, UnsupportedChange> {
    if !new.statistics.is_empty()
        || !new.partition_statistics.is_empty()
        || !new.encryption_keys.is_empty()
    {
        return Err(UnsupportedChange(
            "a new table with statistics files or encryption keys".into(),
        ));
    }
    let mut updates: Vec<Update> = new
        .table_uuid
        .map(|uuid| Update::AssignUuid { uuid })
        .into_iter()
        .collect();
    updates.push(Update::UpgradeFormatVersion {
        format_version: new.format_version.number(),
    });
    // Everything is added here, so "current" is the last added (-1) when it is.
    let last = |ids: Vec<i64>, current: i64| {
        if ids.last() == Some(&current) {
            -1
        } else {
            current
        }
    };
    for schema in &new.schemas {
        updates.push(Update::AddSchema {
            schema: schema.to_json(),
            last_column_id: new.last_column_id,
        });
    }
    let ids = new
        .schemas
        .iter()
        .map(|s| i64::from(s.schema_id()))
        .collect();
    updates.push(Update::SetCurrentSchema {
        schema_id: i32::try_from(last(ids, i64::from(new.current_schema_id))).unwrap_or(-1),
    });
    for spec in &new.partition_specs {
        updates.push(Update::AddSpec { spec: spec.clone() });
    }
    let ids = new
        .partition_specs
        .iter()
        .map(|s| i64::from(s.spec_id()))
        .collect();
    updates.push(Update::SetDefaultSpec {
        spec_id: i32::try_from(last(ids, i64::from(new.default_spec_id))).unwrap_or(-1),
    });
    for order in &new.sort_orders {
        updates.push(Update::AddSortOrder {
            sort_order: order.clone(),
        });
    }
    let ids = new.sort_orders.iter().map(|o| o.order_id).collect();
    updates.push(Update::SetDefaultSortOrder {
        sort_order_id: last(ids, new.default_sort_order_id),
    });
    updates.push(Update::SetLocation {
        location: new.location.clone(),
    });
    if !new.properties.is_empty() {
        updates.push(Update::SetProperties {
            updates: new.properties.clone(),
        });
    }
    for snapshot in &new.snapshots {
        updates.push(Update::AddSnapshot {
            snapshot: snapshot.snapshot().clone(),
        });
    }
    for (name, reference) in effective_refs(new) {
        updates.push(Update::SetSnapshotRef {
            ref_name: name,
            reference,
        });
    }
    Ok(TableChange {
        requirements: vec![Requirement::AssertCreate],
        updates,
    })
}

/// What `new` adds to `base`'s list of one kind (schemas, specs, sort orders), in order.
/// Refuses an object edited in place or removed, and a new current one that is added but
/// not last: the server renumbers added objects, so only `-1` ("the last added") names one
/// reliably. Also says whether the new current one is the last added (sent as `-1`).
fn added<'a, T: PartialEq, I: Copy + PartialEq + std::fmt::Display>(
    what: &str,
    base: &[T],
    new: &'a [T],
    id: impl Fn(&T) -> I,
    current: I,
) -> Result<(Vec<&'a T>, bool), UnsupportedChange> {
    let mut added = Vec::new();
    for item in new {
        match base.iter().find(|old| id(old) == id(item)) {
            Some(old) if old == item => {}
            Some(_) => {
                return Err(UnsupportedChange(format!(
                    "{what} {} was edited in place",
                    id(item)
                )));
            }
            None => added.push(item),
        }
    }
    if let Some(gone) = base
        .iter()
        .find(|old| !new.iter().any(|n| id(n) == id(old)))
    {
        return Err(UnsupportedChange(format!(
            "{what} {} was removed",
            id(gone)
        )));
    }
    let last = added.last().map(|t| id(t));
    if added.iter().any(|t| id(t) == current) && last != Some(current) {
        return Err(UnsupportedChange(format!(
            "{what} {current} is made current but is not the last one added"
        )));
    }
    Ok((added, last == Some(current)))
}

fn schemas(
    base: &TableMetadata,
    new: &TableMetadata,
    change: &mut TableChange,
) -> Result<(), UnsupportedChange> {
    let (added, current_is_last) = added(
        "schema",
        &base.schemas,
        &new.schemas,
        Schema::schema_id,
        new.current_schema_id,
    )?;
    for schema in &added {
        change.updates.push(Update::AddSchema {
            schema: schema.to_json(),
            last_column_id: new.last_column_id,
        });
    }
    if !added.is_empty() {
        change
            .requirements
            .push(Requirement::AssertLastAssignedFieldId {
                last_assigned_field_id: base.last_column_id,
            });
    }
    if new.current_schema_id != base.current_schema_id {
        let schema_id = if current_is_last {
            -1
        } else {
            new.current_schema_id
        };
        change.updates.push(Update::SetCurrentSchema { schema_id });
        change
            .requirements
            .push(Requirement::AssertCurrentSchemaId {
                current_schema_id: base.current_schema_id,
            });
    }
    Ok(())
}

fn specs(
    base: &TableMetadata,
    new: &TableMetadata,
    change: &mut TableChange,
) -> Result<(), UnsupportedChange> {
    let (added, current_is_last) = added(
        "partition spec",
        &base.partition_specs,
        &new.partition_specs,
        PartitionSpec::spec_id,
        new.default_spec_id,
    )?;
    for spec in &added {
        change.updates.push(Update::AddSpec {
            spec: (*spec).clone(),
        });
    }
    if !added.is_empty() {
        change
            .requirements
            .push(Requirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id: base.last_partition_id,
            });
    }
    if new.default_spec_id != base.default_spec_id {
        let spec_id = if current_is_last {
            -1
        } else {
            new.default_spec_id
        };
        change.updates.push(Update::SetDefaultSpec { spec_id });
        change.requirements.push(Requirement::AssertDefaultSpecId {
            default_spec_id: base.default_spec_id,
        });
    }
    Ok(())
}

fn sort_orders(
    base: &TableMetadata,
    new: &TableMetadata,
    change: &mut TableChange,
) -> Result<(), UnsupportedChange> {
    let (added, current_is_last) = added(
        "sort order",
        &base.sort_orders,
        &new.sort_orders,
        |o: &SortOrder| o.order_id,
        new.default_sort_order_id,
    )?;
    for order in &added {
        change.updates.push(Update::AddSortOrder {
            sort_order: (*order).clone(),
        });
    }
    if new.default_sort_order_id != base.default_sort_order_id {
        let sort_order_id = if current_is_last {
            -1
        } else {
            new.default_sort_order_id
        };
        change
            .updates
            .push(Update::SetDefaultSortOrder { sort_order_id });
        change
            .requirements
            .push(Requirement::AssertDefaultSortOrderId {
                default_sort_order_id: base.default_sort_order_id,
            });
    }
    Ok(())
}

fn snapshots(
    base: &TableMetadata,
    new: &TableMetadata,
    change: &mut TableChange,
) -> Result<(), UnsupportedChange> {
    let old: BTreeSet<i64> = base.snapshots.iter().map(|s| s.snapshot_id).collect();
    let kept: BTreeSet<i64> = new.snapshots.iter().map(|s| s.snapshot_id).collect();
    for snapshot in &new.snapshots {
        match base.snapshot_by_id(snapshot.snapshot_id) {
            None => change.updates.push(Update::AddSnapshot {
                snapshot: snapshot.snapshot().clone(),
            }),
            Some(was) if was != snapshot.snapshot() => {
                return Err(UnsupportedChange(format!(
                    "snapshot {} was edited in place",
                    snapshot.snapshot_id
                )));
            }
            Some(_) => {}
        }
    }
    let removed: Vec<i64> = old.difference(&kept).copied().collect();
    if !removed.is_empty() {
        change.updates.push(Update::RemoveSnapshots {
            snapshot_ids: removed,
        });
    }
    Ok(())
}

/// A metadata's refs, with `main` taken from `current-snapshot-id` when its refs lack it.
fn effective_refs(meta: &TableMetadata) -> BTreeMap<String, SnapshotRef> {
    let mut refs = meta.refs.clone();
    if let Some(id) = meta.current_snapshot_id {
        refs.entry(MAIN_BRANCH.to_string())
            .or_insert_with(|| SnapshotRef::branch(id));
    }
    refs
}

fn refs(base: &TableMetadata, new: &TableMetadata, change: &mut TableChange) {
    let (old, now) = (effective_refs(base), effective_refs(new));
    for (name, reference) in &now {
        if old.get(name) == Some(reference) {
            continue;
        }
        // What the server holds: a `main` taken from the current snapshot is not in its
        // refs, and Java's `AssertRefSnapshotID` expects null for it.
        change.requirements.push(Requirement::AssertRefSnapshotId {
            reference: name.clone(),
            snapshot_id: base.refs.get(name).map(|r| r.snapshot_id),
        });
        change.updates.push(Update::SetSnapshotRef {
            ref_name: name.clone(),
            reference: reference.clone(),
        });
    }
    for (name, reference) in &old {
        if !now.contains_key(name) {
            change.requirements.push(Requirement::AssertRefSnapshotId {
                reference: name.clone(),
                snapshot_id: Some(reference.snapshot_id),
            });
            change.updates.push(Update::RemoveSnapshotRef {
                ref_name: name.clone(),
            });
        }
    }
}

/// True when `new` has no statistics or partition statistics file `base` lacks (only
/// removals, which updates say).
fn statistics_removed_only(base: &TableMetadata, new: &TableMetadata) -> bool {
    let pairs = |files: &mut dyn Iterator<Item = (i64, &String)>| -> BTreeSet<(i64, String)> {
        files.map(|(id, path)| (id, path.clone())).collect()
    };
    let stats = |m: &TableMetadata| {
        pairs(
            &mut m
                .statistics
                .iter()
                .map(|s| (s.snapshot_id, &s.statistics_path)),
        )
    };
    let partition = |m: &TableMetadata| {
        pairs(
            &mut m
                .partition_statistics
                .iter()
                .map(|s| (s.snapshot_id, &s.statistics_path)),
        )
    };
    stats(new).is_subset(&stats(base)) && partition(new).is_subset(&partition(base))
}

fn properties(base: &TableMetadata, new: &TableMetadata, change: &mut TableChange) {
    let updates: BTreeMap<String, String> = new
        .properties
        .iter()
        .filter(|(k, v)| base.properties.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let removals: Vec<String> = base
        .properties
        .keys()
        .filter(|k| !new.properties.contains_key(*k))
        .cloned()
        .collect();
    if !updates.is_empty() {
        change.updates.push(Update::SetProperties { updates });
    }
    if !removals.is_empty() {
        change.updates.push(Update::RemoveProperties { removals });
    }
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
