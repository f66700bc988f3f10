//! Cross-reference checks on table metadata, as Java runs them when it loads a table.

use std::collections::HashSet;

use super::{FormatVersion, TableMetadata};
use crate::error::{Error, Result};
use crate::snapshot::MAIN_BRANCH;

/// Reserved keys that must not be stored as table properties.
pub const RESERVED_PROPERTIES: &[&str] = &[
    "format-version",
    "uuid",
    "snapshot-count",
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
];

impl TableMetadata {
    /// Checks that every id refers to something that exists and that the version's rules hold.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        let v = self.format_version;
        if self.location.is_empty() {
            return Err(Error::invalid_metadata("location", "must not be empty"));
        }
        if v >= FormatVersion::V2 && self.table_uuid.is_none() {
            return Err(Error::invalid_metadata("table-uuid", "required in v2+"));
        }

        let mut schema_ids = HashSet::new();
        for s in &self.schemas {
            if !schema_ids.insert(s.schema_id()) {
                return Err(Error::invalid_metadata(
                    "schemas",
                    format!("duplicate schema id {}", s.schema_id()),
                ));
            }
            if s.highest_field_id() > self.last_column_id {
                return Err(Error::invalid_metadata(
                    "last-column-id",
                    format!(
                        "{} is below field id {} of schema {}",
                        self.last_column_id,
                        s.highest_field_id(),
                        s.schema_id()
                    ),
                ));
            }
            let needs = s.min_format_version();
            if needs > v.number() {
                return Err(Error::invalid_metadata(
                    "schemas",
                    format!(
                        "schema {} uses types or defaults of format version {needs}; table is v{v}",
                        s.schema_id()
                    ),
                ));
            }
        }
        let schema = self.current_schema()?;

        let mut spec_ids = HashSet::new();
        for spec in &self.partition_specs {
            if !spec_ids.insert(spec.spec_id()) {
                return Err(Error::invalid_metadata(
                    "partition-specs",
                    format!("duplicate spec id {}", spec.spec_id()),
                ));
            }
            if let Some(max) = spec.highest_field_id()
                && max > self.last_partition_id
            {
                return Err(Error::invalid_metadata(
                    "last-partition-id",
                    format!(
                        "{} is below partition field id {max} of spec {}",
                        self.last_partition_id,
                        spec.spec_id()
                    ),
                ));
            }
        }
        self.default_spec()?.validate_loaded(schema).map_err(|e| {
            Error::invalid_metadata("partition-specs", format!("default spec: {e}"))
        })?;

        let order = self.default_sort_order().ok_or_else(|| {
            Error::invalid_metadata(
                "default-sort-order-id",
                format!("no sort order with id {}", self.default_sort_order_id),
            )
        })?;
        order
            .validate_loaded(schema)
            .map_err(|e| Error::invalid_metadata("sort-orders", format!("default order: {e}")))?;

        // Sorted ids, not a hash set: this runs on every commit, over the whole history.
        let mut snapshot_ids: Vec<i64> = self.snapshots.iter().map(|s| s.snapshot_id).collect();
        snapshot_ids.sort_unstable();
        if let Some(w) = snapshot_ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::invalid_metadata(
                "snapshots",
                format!("duplicate snapshot id {}", w[0]),
            ));
        }
        let has_snapshot = |id: i64| snapshot_ids.binary_search(&id).is_ok();
        for s in &self.snapshots {
            // A v2 snapshot without a summary is out of spec, but Java's `SnapshotParser`
            // loads it (as no operation): so do we.
            if v >= FormatVersion::V2 {
                if s.manifest_list.is_none() {
                    return Err(Error::invalid_metadata(
                        format!("snapshots[{}].manifest-list", s.snapshot_id),
                        "required in v2+",
                    ));
                }
                if s.sequence_number > self.last_sequence_number {
                    return Err(Error::invalid_metadata(
                        format!("snapshots[{}].sequence-number", s.snapshot_id),
                        format!(
                            "{} is above last-sequence-number {}",
                            s.sequence_number, self.last_sequence_number
                        ),
                    ));
                }
            }
            if s.manifest_list.is_some() && s.manifests.is_some() {
                return Err(Error::invalid_metadata(
                    format!("snapshots[{}]", s.snapshot_id),
                    "has both manifest-list and manifests",
                ));
            }
            if let (Some(first), Some(next)) = (s.first_row_id, self.next_row_id) {
                let end = first + s.added_rows.unwrap_or(0);
                if end > next {
                    return Err(Error::invalid_metadata(
                        "next-row-id",
                        format!(
                            "{next} is below the row ids [{first}, {end}) of snapshot {}",
                            s.snapshot_id
                        ),
                    ));
                }
            }
        }

        if let Some(id) = self.current_snapshot_id
            && !has_snapshot(id)
        {
            return Err(Error::invalid_metadata(
                "current-snapshot-id",
                format!("no snapshot with id {id}"),
            ));
        }
        for (name, r) in &self.refs {
            if !has_snapshot(r.snapshot_id) {
                return Err(Error::invalid_metadata(
                    format!("refs.{name}"),
                    format!("points at missing snapshot {}", r.snapshot_id),
                ));
            }
        }
        match (self.refs.get(MAIN_BRANCH), self.current_snapshot_id) {
            (Some(r), Some(id)) if r.snapshot_id != id => {
                return Err(Error::invalid_metadata(
                    "refs.main",
                    format!(
                        "points at {} but current-snapshot-id is {id}",
                        r.snapshot_id
                    ),
                ));
            }
            (Some(r), _) if !r.is_branch() => {
                return Err(Error::invalid_metadata("refs.main", "must be a branch"));
            }
            (Some(r), None) => {
                return Err(Error::invalid_metadata(
                    "current-snapshot-id",
                    format!("is unset but refs.main points at {}", r.snapshot_id),
                ));
            }
            _ => {}
        }

        if v == FormatVersion::V3 && self.next_row_id.is_none() {
            return Err(Error::invalid_metadata("next-row-id", "required in v3"));
        }
        if v < FormatVersion::V3 && (self.next_row_id.is_some() || !self.encryption_keys.is_empty())
        {
            return Err(Error::invalid_metadata(
                "next-row-id",
                "row lineage and encryption keys need format version 3",
            ));
        }
        Ok(())
    }

    /// Refuses properties named as table metadata fields (`format-version`, ...): a new
    /// table must not store them. Loaded metadata may hold them (Java reads such files), so
    /// [`Self::validate`] does not check this.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] naming the first reserved key found.
    pub fn check_reserved_properties(&self) -> Result<()> {
        for key in RESERVED_PROPERTIES {
            if self.properties.contains_key(*key) {
                return Err(Error::invalid_metadata(
                    format!("properties.{key}"),
                    "is a reserved name and must not be stored as a property",
                ));
            }
        }
        Ok(())
    }
}
