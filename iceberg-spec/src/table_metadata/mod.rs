//! Table metadata: the `metadata.json` document that is the root of a table's tree.
//!
//! Spec: "Table Metadata" and "Table Metadata Fields". [`TableMetadata::from_json`] parses
//! and validates format versions 1, 2 and 3; [`TableMetadata::to_json`] writes what Java writes
//! for the table's version.

mod json;
mod statistics;
mod validate;

use std::collections::BTreeMap;
use std::fmt;

use uuid::Uuid;

pub use statistics::{BlobMetadata, EncryptionKey, PartitionStatisticsFile, StatisticsFile};
pub use validate::RESERVED_PROPERTIES;

use crate::error::{Error, Result};
use crate::partition::{PartitionSpec, UNPARTITIONED_LAST_ASSIGNED_ID};
use crate::schema::Schema;
use crate::snapshot::{
    MAIN_BRANCH, MetadataLogEntry, SharedSnapshot, Snapshot, SnapshotLogEntry, SnapshotRef,
};
use crate::sort_order::SortOrder;
use crate::transform::Transform;

/// A table format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FormatVersion {
    /// Version 1: analytic tables.
    V1,
    /// Version 2: row-level deletes, sequence numbers.
    V2,
    /// Version 3: row lineage, new types, default values.
    V3,
}

impl FormatVersion {
    /// The version number.
    pub fn number(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
            Self::V3 => 3,
        }
    }

    /// The version for a number.
    ///
    /// # Errors
    /// [`Error::UnsupportedFormatVersion`] outside 1..=3.
    pub fn from_number(n: i64) -> Result<Self> {
        match n {
            1 => Ok(Self::V1),
            2 => Ok(Self::V2),
            3 => Ok(Self::V3),
            other => Err(Error::UnsupportedFormatVersion { version: other }),
        }
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// The whole table metadata document.
///
/// Fields are public so commit code can derive the next version; [`TableMetadata::validate`]
/// (run by both `from_json` and `to_json`) keeps every cross-reference honest.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMetadata {
    /// Format version.
    pub format_version: FormatVersion,
    /// Table UUID (optional only in old v1 files).
    pub table_uuid: Option<Uuid>,
    /// Base location, with scheme, without a trailing slash.
    pub location: String,
    /// Highest assigned sequence number (0 for v1).
    pub last_sequence_number: i64,
    /// Time of the last update, ms since the epoch.
    pub last_updated_ms: i64,
    /// Highest field id ever assigned.
    pub last_column_id: i32,
    /// Every schema of the table.
    pub schemas: Vec<Schema>,
    /// Id of the current schema.
    pub current_schema_id: i32,
    /// Every partition spec of the table.
    pub partition_specs: Vec<PartitionSpec>,
    /// Id of the spec new data is written with.
    pub default_spec_id: i32,
    /// Highest partition field id ever assigned.
    pub last_partition_id: i32,
    /// Table properties.
    pub properties: BTreeMap<String, String>,
    /// Id of the current snapshot (the head of `main`).
    pub current_snapshot_id: Option<i64>,
    /// Every valid snapshot, shared: a commit copies the list, not the snapshots.
    pub snapshots: Vec<SharedSnapshot>,
    /// History of the current snapshot.
    pub snapshot_log: Vec<SnapshotLogEntry>,
    /// Previous metadata files.
    pub metadata_log: Vec<MetadataLogEntry>,
    /// Every sort order of the table.
    pub sort_orders: Vec<SortOrder>,
    /// Id of the order new data is written in.
    pub default_sort_order_id: i64,
    /// Branches and tags.
    pub refs: BTreeMap<String, SnapshotRef>,
    /// Statistics files.
    pub statistics: Vec<StatisticsFile>,
    /// Partition statistics files.
    pub partition_statistics: Vec<PartitionStatisticsFile>,
    /// v3: the next row id to assign.
    pub next_row_id: Option<i64>,
    /// v3: encryption keys.
    pub encryption_keys: Vec<EncryptionKey>,
}

impl TableMetadata {
    /// Metadata of a new, empty table.
    ///
    /// # Errors
    /// When the spec or sort order does not fit the schema, or the schema uses types or
    /// defaults the format version does not allow.
    #[allow(clippy::too_many_arguments)]
    pub fn new_table(
        format_version: FormatVersion,
        table_uuid: Uuid,
        location: &str,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        properties: BTreeMap<String, String>,
        timestamp_ms: i64,
    ) -> Result<Self> {
        let sort_order = if sort_order.is_unsorted() {
            SortOrder::unsorted()
        } else {
            sort_order
        };
        // Strictly, as for writing: a loaded table may hold a transform this library does
        // not know, a new one may not (nothing could be written to it).
        spec.validate(&schema)?;
        sort_order.validate(&schema)?;
        let meta = Self {
            format_version,
            table_uuid: Some(table_uuid),
            location: location.trim_end_matches('/').to_string(),
            last_sequence_number: 0,
            last_updated_ms: timestamp_ms,
            last_column_id: schema.highest_field_id(),
            current_schema_id: schema.schema_id(),
            schemas: vec![schema],
            default_spec_id: spec.spec_id(),
            last_partition_id: spec
                .highest_field_id()
                .unwrap_or(UNPARTITIONED_LAST_ASSIGNED_ID),
            partition_specs: vec![spec],
            properties,
            current_snapshot_id: None,
            snapshots: Vec::new(),
            snapshot_log: Vec::new(),
            metadata_log: Vec::new(),
            default_sort_order_id: sort_order.order_id,
            sort_orders: vec![sort_order],
            refs: BTreeMap::new(),
            statistics: Vec::new(),
            partition_statistics: Vec::new(),
            next_row_id: (format_version >= FormatVersion::V3).then_some(0),
            encryption_keys: Vec::new(),
        };
        meta.validate()?;
        meta.check_reserved_properties()?;
        Ok(meta)
    }

    /// Parses and validates a `metadata.json` document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] naming the field at fault, or [`Error::Json`].
    pub fn from_json(text: &str) -> Result<Self> {
        let meta = json::parse(text)?;
        meta.validate()?;
        Ok(meta)
    }

    /// The `metadata.json` document as Java writes it for this format version.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when the metadata fails validation.
    pub fn to_json(&self) -> Result<String> {
        self.validate()?;
        json::write(self)
    }

    /// The current schema.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when `current-schema-id` names no schema.
    pub fn current_schema(&self) -> Result<&Schema> {
        self.schema_by_id(self.current_schema_id).ok_or_else(|| {
            Error::invalid_metadata(
                "current-schema-id",
                format!("no schema with id {}", self.current_schema_id),
            )
        })
    }

    /// The schema to write manifests of `spec` with: the current one when it holds every
    /// source column of the spec, else the newest schema that does (an old spec whose source
    /// was dropped since), so each manifest's header schema binds its own spec, as readers
    /// that read the header (iceberg-rust, DuckDB) need.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when `current-schema-id` names no schema.
    pub fn schema_for_spec(&self, spec: &PartitionSpec) -> Result<&Schema> {
        let current = self.current_schema()?;
        // Not void fields: always null, typed `unknown` without their source (as Java types
        // them), so a v1 spec's void field whose column was dropped needs no older schema.
        let binds = |s: &Schema| {
            spec.fields()
                .iter()
                .filter(|f| f.transform != Transform::Void)
                .all(|f| s.field_by_id(f.source_id).is_some())
        };
        if binds(current) {
            return Ok(current);
        }
        Ok(self
            .schemas
            .iter()
            .filter(|s| binds(s))
            .max_by_key(|s| s.schema_id())
            .unwrap_or(current))
    }

    /// The schema with this id.
    pub fn schema_by_id(&self, id: i32) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id() == id)
    }

    /// The default partition spec.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when `default-spec-id` names no spec.
    pub fn default_spec(&self) -> Result<&PartitionSpec> {
        self.spec_by_id(self.default_spec_id).ok_or_else(|| {
            Error::invalid_metadata(
                "default-spec-id",
                format!("no partition spec with id {}", self.default_spec_id),
            )
        })
    }

    /// The partition spec with this id.
    pub fn spec_by_id(&self, id: i32) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id() == id)
    }

    /// The default sort order.
    pub fn default_sort_order(&self) -> Option<&SortOrder> {
        self.sort_orders
            .iter()
            .find(|o| o.order_id == self.default_sort_order_id)
    }

    /// The snapshot with this id.
    pub fn snapshot_by_id(&self, id: i64) -> Option<&Snapshot> {
        self.snapshots
            .iter()
            .find(|s| s.snapshot_id == id)
            .map(SharedSnapshot::snapshot)
    }

    /// Snapshot `id` and its ancestors, newest first, as far as the metadata holds them (an
    /// expired parent ends the walk).
    pub fn ancestors(&self, id: i64) -> impl Iterator<Item = &Snapshot> {
        let mut next = self.snapshot_by_id(id);
        // Bounded: a parent cycle (corrupt metadata) cannot walk forever.
        let mut left = self.snapshots.len();
        std::iter::from_fn(move || {
            let s = next.filter(|_| left > 0)?;
            left -= 1;
            next = s.parent_snapshot_id.and_then(|p| self.snapshot_by_id(p));
            Some(s)
        })
    }

    /// The current snapshot (head of `main`).
    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        self.current_snapshot_id
            .and_then(|id| self.snapshot_by_id(id))
    }

    /// The head snapshot of a branch (`main` falls back to `current-snapshot-id`).
    pub fn branch_head(&self, branch: &str) -> Option<&Snapshot> {
        match self.refs.get(branch) {
            Some(r) => self.snapshot_by_id(r.snapshot_id),
            None if branch == MAIN_BRANCH => self.current_snapshot(),
            None => None,
        }
    }

    /// A table property, if set.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests;
