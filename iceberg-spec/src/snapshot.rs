//! Snapshots, their summaries, refs, and the snapshot and metadata logs.
//!
//! Spec: "Snapshots", "Snapshot References", "Table Metadata Fields" (logs).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

mod shared;

pub use shared::SharedSnapshot;

/// The name of the main branch.
pub const MAIN_BRANCH: &str = "main";

/// What a snapshot did.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Only data files were added.
    Append,
    /// Files were rewritten; data is unchanged.
    Replace,
    /// Data was logically overwritten.
    Overwrite,
    /// Data was removed or delete files added.
    Delete,
    /// An operation the spec does not name, kept as written: Java's `SnapshotParser` loads
    /// any string, and a table another engine wrote must still load and keep its history.
    Other(String),
}

impl Operation {
    /// The summary string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Append => "append",
            Self::Replace => "replace",
            Self::Overwrite => "overwrite",
            Self::Delete => "delete",
            Self::Other(other) => other,
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Operation {
    fn from(s: &str) -> Self {
        match s {
            "append" => Self::Append,
            "replace" => Self::Replace,
            "overwrite" => Self::Overwrite,
            "delete" => Self::Delete,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl FromStr for Operation {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Self::from(s))
    }
}

/// A snapshot summary: the operation plus string properties (counts, totals, engine info).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// What the snapshot did.
    pub operation: Operation,
    /// Every other key, all values strings (Java rejects numbers).
    pub properties: BTreeMap<String, String>,
}

impl Summary {
    /// A summary of `operation` with no other keys.
    pub fn new(operation: Operation) -> Self {
        Self {
            operation,
            properties: BTreeMap::new(),
        }
    }

    /// A property parsed as a long, when present and valid.
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.properties.get(key).and_then(|v| v.parse().ok())
    }
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.properties.len() + 1))?;
        m.serialize_entry("operation", self.operation.as_str())?;
        for (k, v) in &self.properties {
            if k != "operation" {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut raw: BTreeMap<String, serde_json::Value> = BTreeMap::deserialize(d)?;
        // Out of spec, but Java loads it: a summary without an operation is an overwrite
        // (`SnapshotParser`).
        let op = match raw.remove("operation") {
            None => Operation::Overwrite,
            Some(op) => op
                .as_str()
                .map(Operation::from)
                .ok_or_else(|| serde::de::Error::custom("summary `operation` must be a string"))?,
        };
        let properties = raw
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => Ok((k, s)),
                // Lenient on read: other writers have stored numbers; keep their text.
                other => Ok((k, other.to_string())),
            })
            .collect::<std::result::Result<_, D::Error>>()?;
        Ok(Summary {
            operation: op,
            properties,
        })
    }
}

/// A snapshot: the table's state after one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Snapshot {
    /// Unique positive id.
    pub snapshot_id: i64,
    /// The previous snapshot on the branch it was committed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_snapshot_id: Option<i64>,
    /// Sequence number (v2+; 0 and omitted in v1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sequence_number: i64,
    /// Creation time, ms since the epoch.
    pub timestamp_ms: i64,
    /// Location of the manifest list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_list: Option<String>,
    /// Legacy v1 inline manifest locations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifests: Option<Vec<String>>,
    /// The summary (required in v2+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// Current schema id at commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_id: Option<i32>,
    /// v3: first row id assigned by this snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_row_id: Option<i64>,
    /// v3: size of the row-id range this snapshot assigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_rows: Option<i64>,
    /// Encryption key id of the manifest list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

impl Snapshot {
    /// The summary's operation, if the snapshot has a summary.
    pub fn operation(&self) -> Option<&Operation> {
        self.summary.as_ref().map(|s| &s.operation)
    }
}

/// A branch or a tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotRef {
    /// The snapshot the ref points at.
    pub snapshot_id: i64,
    /// Branch or tag, with retention.
    #[serde(flatten)]
    pub retention: SnapshotRetention,
}

impl SnapshotRef {
    /// A branch ref with default retention.
    pub fn branch(snapshot_id: i64) -> Self {
        Self {
            snapshot_id,
            retention: SnapshotRetention::Branch {
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        }
    }

    /// True for branches.
    pub fn is_branch(&self) -> bool {
        matches!(self.retention, SnapshotRetention::Branch { .. })
    }
}

/// Kind of a ref and its retention settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SnapshotRetention {
    /// A branch.
    #[serde(rename_all = "kebab-case")]
    Branch {
        /// Snapshots to keep at least.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_snapshots_to_keep: Option<i32>,
        /// Oldest snapshot age to keep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_snapshot_age_ms: Option<i64>,
        /// Oldest ref age to keep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_ref_age_ms: Option<i64>,
    },
    /// A tag.
    #[serde(rename_all = "kebab-case")]
    Tag {
        /// Oldest ref age to keep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_ref_age_ms: Option<i64>,
    },
}

/// A row of the snapshot log: when the current snapshot changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotLogEntry {
    /// When it became current.
    pub timestamp_ms: i64,
    /// Which snapshot became current.
    pub snapshot_id: i64,
}

/// A row of the metadata log: a previous metadata file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MetadataLogEntry {
    /// The previous file's `last-updated-ms`.
    pub timestamp_ms: i64,
    /// The previous file's location.
    pub metadata_file: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn snapshot_omits_absent_optional_keys() {
        let s = Snapshot {
            snapshot_id: 1,
            parent_snapshot_id: None,
            sequence_number: 0,
            timestamp_ms: 5,
            manifest_list: Some("s3://b/m.avro".into()),
            manifests: None,
            summary: Some(Summary::new(Operation::Append)),
            schema_id: Some(0),
            first_row_id: None,
            added_rows: None,
            key_id: None,
        };
        let json = serde_json::to_value(&s).unwrap();
        assert!(json.get("parent-snapshot-id").is_none());
        assert!(json.get("sequence-number").is_none());
        assert_eq!(json["summary"]["operation"], "append");
        assert_eq!(serde_json::from_value::<Snapshot>(json).unwrap(), s);
    }

    #[test]
    fn refs_json() {
        let json = serde_json::json!({"snapshot-id": 3, "type": "tag", "max-ref-age-ms": 10});
        let r: SnapshotRef = serde_json::from_value(json.clone()).unwrap();
        assert!(!r.is_branch());
        assert_eq!(serde_json::to_value(&r).unwrap(), json);
        let b = serde_json::to_value(SnapshotRef::branch(7)).unwrap();
        assert_eq!(b, serde_json::json!({"snapshot-id": 7, "type": "branch"}));
    }

    #[test]
    /// Java's `SnapshotParser` reads a summary without an operation as an overwrite ("out
    /// of spec, but we don't want to fail on it"); a wrong type is still refused.
    fn a_summary_without_an_operation_is_an_overwrite() {
        let s =
            serde_json::from_value::<Summary>(serde_json::json!({"added-records": "3"})).unwrap();
        assert_eq!(s.operation, Operation::Overwrite);
        assert_eq!(s.get_i64("added-records"), Some(3));
        let err = serde_json::from_value::<Summary>(serde_json::json!({"operation": 3}));
        assert!(err.is_err());
    }

    #[test]
    /// Java's `SnapshotParser` takes any operation string; a table whose history holds one
    /// the spec does not name loads, and writes it back unchanged.
    fn an_operation_the_spec_does_not_name_is_kept_as_written() {
        let json = serde_json::json!({"operation": "rewrite", "added-records": "3"});
        let s = serde_json::from_value::<Summary>(json.clone()).unwrap();
        assert_eq!(s.operation, Operation::Other("rewrite".into()));
        assert_eq!(s.operation.as_str(), "rewrite");
        assert_eq!(serde_json::to_value(&s).unwrap(), json);
        for known in ["append", "replace", "overwrite", "delete"] {
            assert_eq!(Operation::from(known).as_str(), known);
            assert!(!matches!(Operation::from(known), Operation::Other(_)));
        }
    }
}
