//! A snapshot shared between metadata versions, rendered to JSON once.
//!
//! Every commit writes a `metadata.json` that repeats every earlier snapshot unchanged. A
//! snapshot is immutable once committed, so its JSON text is too: rendering it once and
//! reusing the text keeps a commit's serialization cost from growing with the history.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::Snapshot;

/// Indentation of a snapshot inside `metadata.json`: the root object, then the `snapshots`
/// array, two spaces each (serde_json's pretty printer).
const SNAPSHOT_INDENT: &str = "    ";

/// An immutable, cheaply cloned [`Snapshot`] whose `metadata.json` text is memoized.
#[derive(Clone)]
pub struct SharedSnapshot(Arc<Inner>);

struct Inner {
    snapshot: Snapshot,
    /// The snapshot as it appears in `metadata.json` (pretty, indented for its depth).
    json: OnceLock<Box<RawValue>>,
}

impl SharedSnapshot {
    /// Shares `snapshot`.
    pub fn new(snapshot: Snapshot) -> Self {
        Self(Arc::new(Inner {
            snapshot,
            json: OnceLock::new(),
        }))
    }

    /// The snapshot itself.
    pub fn snapshot(&self) -> &Snapshot {
        &self.0.snapshot
    }

    /// Whether two handles share one snapshot (not merely equal ones).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The pretty JSON of the snapshot at its depth in `metadata.json`, rendered on first use.
    pub(crate) fn metadata_json(&self) -> serde_json::Result<&RawValue> {
        if let Some(text) = self.0.json.get() {
            return Ok(text);
        }
        let text = serde_json::to_string_pretty(&self.0.snapshot)?;
        // JSON strings hold no raw newlines, so every newline is a line break to indent.
        let rendered = RawValue::from_string(text.replace('\n', &format!("\n{SNAPSHOT_INDENT}")))?;
        // Another thread may have rendered it meanwhile: both texts are the same.
        Ok(self.0.json.get_or_init(|| rendered))
    }
}

impl Deref for SharedSnapshot {
    type Target = Snapshot;

    fn deref(&self) -> &Snapshot {
        &self.0.snapshot
    }
}

impl From<Snapshot> for SharedSnapshot {
    fn from(snapshot: Snapshot) -> Self {
        Self::new(snapshot)
    }
}

impl PartialEq for SharedSnapshot {
    fn eq(&self, other: &Self) -> bool {
        Self::ptr_eq(self, other) || self.0.snapshot == other.0.snapshot
    }
}

impl Eq for SharedSnapshot {}

impl fmt::Debug for SharedSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.snapshot.fmt(f)
    }
}

/// Serializes as the plain snapshot (its memoized text is for `metadata.json` only, whose
/// writer asks for it by depth).
impl Serialize for SharedSnapshot {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.snapshot.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::snapshot::{Operation, Summary};

    fn snapshot() -> Snapshot {
        let mut summary = Summary::new(Operation::Append);
        summary
            .properties
            .insert("note".into(), "a \"quoted\"\nline".into());
        Snapshot {
            snapshot_id: 7,
            parent_snapshot_id: Some(3),
            sequence_number: 2,
            timestamp_ms: 1_700_000_000_000,
            manifest_list: Some("s3://b/t/metadata/snap-7.avro".into()),
            manifests: None,
            summary: Some(summary),
            schema_id: Some(0),
            first_row_id: Some(10),
            added_rows: Some(5),
            key_id: None,
        }
    }

    #[test]
    fn memoized_text_is_the_pretty_rendering_at_depth_two() {
        let shared = SharedSnapshot::new(snapshot());
        let doc = serde_json::json!({ "snapshots": [snapshot()] });
        let expected = serde_json::to_string_pretty(&doc).unwrap();
        let by_hand = format!(
            "{{\n  \"snapshots\": [\n    {}\n  ]\n}}",
            shared.metadata_json().unwrap().get()
        );
        assert_eq!(by_hand, expected);
        // Parsing the text gives the snapshot back, escapes included.
        let back: Snapshot = serde_json::from_str(shared.metadata_json().unwrap().get()).unwrap();
        assert_eq!(back, snapshot());
    }

    #[test]
    fn clones_share_and_compare_equal() {
        let a = SharedSnapshot::new(snapshot());
        let b = a.clone();
        assert!(SharedSnapshot::ptr_eq(&a, &b));
        let c = SharedSnapshot::new(snapshot());
        assert!(!SharedSnapshot::ptr_eq(&a, &c));
        assert_eq!(a, c);
        assert_eq!(a.snapshot_id, 7);
    }
}
