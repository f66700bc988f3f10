//! The snapshot summary of an append, with Java's keys.

use std::collections::{BTreeMap, BTreeSet};

use iceberg_spec::{DataFile, Operation, Schema, Snapshot, Summary, TableMetadata};

use crate::error::Result;

/// Summary key naming the library that wrote a snapshot.
pub const ICEBERG_VERSION_KEY: &str = "iceberg-version";
/// What this library writes under [`ICEBERG_VERSION_KEY`].
pub const LIBRARY_VERSION: &str = concat!("iceberg-writer-rs ", env!("CARGO_PKG_VERSION"));

/// Running totals carried from the parent: (total key, added key, removed key).
const TOTALS: [(&str, &str, &str); 6] = [
    ("total-records", "added-records", "deleted-records"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    ("total-data-files", "added-data-files", "deleted-data-files"),
    (
        "total-delete-files",
        "added-delete-files",
        "removed-delete-files",
    ),
    (
        "total-position-deletes",
        "added-position-deletes",
        "removed-position-deletes",
    ),
    (
        "total-equality-deletes",
        "added-equality-deletes",
        "removed-equality-deletes",
    ),
];

/// Counts of an append that do not depend on the base it lands on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddedCounts {
    /// Data files added.
    pub files: i64,
    /// Rows added.
    pub records: i64,
    /// Bytes added.
    pub bytes: i64,
    /// Per partition path: (files, records, bytes).
    pub partitions: BTreeMap<String, (i64, i64, i64)>,
}

impl AddedCounts {
    /// Counts `files`, naming partitions by their path under their spec.
    ///
    /// # Errors
    /// When a partition tuple does not fit its spec.
    pub fn of(meta: &TableMetadata, schema: &Schema, files: &[DataFile]) -> Result<Self> {
        let mut c = Self::default();
        for f in files {
            c.files += 1;
            c.records += f.record_count;
            c.bytes += f.file_size_in_bytes;
            let path = match meta.spec_by_id(f.spec_id) {
                // An older spec's source may be only in an older schema.
                Some(spec) => {
                    let bound = meta.schema_for_spec(spec).unwrap_or(schema);
                    spec.partition_to_path(bound, &f.partition)?
                }
                None => String::new(),
            };
            let p = c.partitions.entry(path).or_default();
            p.0 += 1;
            p.1 += f.record_count;
            p.2 += f.file_size_in_bytes;
        }
        Ok(c)
    }
}

/// The summary of an append onto `parent`.
///
/// Computed keys win over `extra`. A parent total that is missing or unparsable stays
/// missing, as Java does, rather than restarting from zero.
pub(crate) fn append_summary(
    added: &AddedCounts,
    parent: Option<&Snapshot>,
    manifests_created: usize,
    manifests_kept: usize,
    manifests_replaced: usize,
    partition_limit: usize,
    extra: &BTreeMap<String, String>,
) -> Summary {
    let mut props: BTreeMap<String, String> = extra.clone();
    props.remove("operation");
    // Java's `setIf(count > 0)`: a count of zero is no key (a caller's value for it neither).
    for (key, v) in [
        ("added-data-files", added.files),
        ("added-records", added.records),
        ("added-files-size", added.bytes),
    ] {
        props.remove(key);
        if v > 0 {
            props.insert(key.to_string(), v.to_string());
        }
    }
    set_partition_summaries(
        &mut props,
        &added.partitions,
        &BTreeMap::new(),
        partition_limit,
    );
    let mut set = |k: &str, v: i64| {
        props.insert(k.to_string(), v.to_string());
    };
    let added_value = |key: &str| -> i64 {
        match key {
            "added-records" => added.records,
            "added-files-size" => added.bytes,
            "added-data-files" => added.files,
            _ => 0,
        }
    };
    for (total, add, _removed) in TOTALS {
        let base = match parent {
            None => Some(0),
            Some(p) => p.summary.as_ref().and_then(|s| s.get_i64(total)),
        };
        if let Some(base) = base {
            let v = base + added_value(add);
            if v >= 0 {
                set(total, v);
            }
        }
    }
    set("manifests-created", manifests_created as i64);
    set("manifests-kept", manifests_kept as i64);
    set("manifests-replaced", manifests_replaced as i64);
    props.insert(ICEBERG_VERSION_KEY.into(), LIBRARY_VERSION.into());
    Summary {
        operation: Operation::Append,
        properties: props,
    }
}

/// Sets `changed-partition-count` and, when no more partitions changed than `limit`,
/// `partitions.<path>` and `partition-summaries-included` for the partitions files were
/// added to or removed from (Java's `SnapshotSummary.Builder`; an unpartitioned spec's empty
/// path counts but gets no key). Keys of an earlier call are replaced.
pub(crate) fn set_partition_summaries(
    props: &mut BTreeMap<String, String>,
    added: &BTreeMap<String, (i64, i64, i64)>,
    removed: &BTreeMap<String, (i64, i64, i64)>,
    limit: usize,
) {
    props.retain(|k, _| !k.starts_with("partitions.") && k != "partition-summaries-included");
    let changed: BTreeSet<&String> = added.keys().chain(removed.keys()).collect();
    props.insert("changed-partition-count".into(), changed.len().to_string());
    if limit == 0 || changed.len() > limit {
        return;
    }
    if !changed.is_empty() {
        props.insert("partition-summaries-included".into(), "true".into());
    }
    for path in changed.into_iter().filter(|p| !p.is_empty()) {
        let a = added.get(path).copied().unwrap_or_default();
        let r = removed.get(path).copied().unwrap_or_default();
        let parts = [
            ("added-data-files", a.0),
            ("deleted-data-files", r.0),
            ("added-records", a.1),
            ("deleted-records", r.1),
            ("added-files-size", a.2),
            ("removed-files-size", r.2),
        ];
        let text: Vec<String> = parts
            .iter()
            .filter(|(_, v)| *v > 0)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        props.insert(format!("partitions.{path}"), text.join(","));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_to_parent_and_computed_keys_win() {
        let added = AddedCounts {
            files: 2,
            records: 3,
            bytes: 2048,
            partitions: BTreeMap::from([("p=1".into(), (2, 3, 2048))]),
        };
        let extra = BTreeMap::from([
            ("added-records".to_string(), "999".to_string()),
            ("app".to_string(), "x".to_string()),
        ]);
        let first = append_summary(&added, None, 1, 0, 0, 0, &extra);
        assert_eq!(first.properties["added-records"], "3");
        assert_eq!(first.properties["app"], "x");
        assert_eq!(first.properties["total-records"], "3");
        assert_eq!(first.properties["total-delete-files"], "0");
        assert_eq!(first.properties["changed-partition-count"], "1");
        let parent = Snapshot {
            snapshot_id: 1,
            parent_snapshot_id: None,
            sequence_number: 1,
            timestamp_ms: 0,
            manifest_list: None,
            manifests: None,
            summary: Some(first),
            schema_id: None,
            first_row_id: None,
            added_rows: None,
            key_id: None,
        };
        let second = append_summary(&added, Some(&parent), 1, 1, 0, 10, &BTreeMap::new());
        assert_eq!(second.properties["total-records"], "6");
        assert_eq!(second.properties["total-files-size"], "4096");
        assert_eq!(second.properties["manifests-kept"], "1");
        assert_eq!(
            second.properties["partitions.p=1"],
            "added-data-files=2,added-records=3,added-files-size=2048"
        );
    }

    /// An unpartitioned append: Java counts its one (empty) partition path but writes no
    /// `partitions.` key for it.
    #[test]
    fn an_unpartitioned_append_writes_no_empty_partition_key() {
        let added = AddedCounts {
            files: 1,
            records: 3,
            bytes: 100,
            partitions: BTreeMap::from([(String::new(), (1, 3, 100))]),
        };
        let s = append_summary(&added, None, 1, 0, 0, 10, &BTreeMap::new());
        assert_eq!(s.properties["changed-partition-count"], "1");
        assert_eq!(s.properties["partition-summaries-included"], "true");
        assert!(
            !s.properties.keys().any(|k| k.starts_with("partitions.")),
            "{s:?}"
        );
    }

    /// Java's `setIf(count > 0)`: an append of an empty file has no `added-records` or
    /// partition `added-records` part; a rewrite's partition text names what left too, in
    /// Java's order.
    #[test]
    fn zero_counts_are_no_keys_and_partition_texts_name_what_left() {
        let empty = AddedCounts {
            files: 1,
            records: 0,
            bytes: 100,
            partitions: BTreeMap::from([("p=1".into(), (1, 0, 100))]),
        };
        let extra = BTreeMap::from([("added-records".to_string(), "7".to_string())]);
        let s = append_summary(&empty, None, 1, 0, 0, 10, &extra);
        assert!(!s.properties.contains_key("added-records"), "{s:?}");
        assert_eq!(s.properties["added-data-files"], "1");
        assert_eq!(
            s.properties["partitions.p=1"],
            "added-data-files=1,added-files-size=100"
        );

        let mut props = s.properties.clone();
        let added = BTreeMap::from([("p=1".to_string(), (1, 30, 900))]);
        let removed = BTreeMap::from([
            ("p=1".to_string(), (3, 30, 1200)),
            ("p=2".to_string(), (1, 5, 80)),
        ]);
        set_partition_summaries(&mut props, &added, &removed, 10);
        assert_eq!(props["changed-partition-count"], "2");
        assert_eq!(
            props["partitions.p=1"],
            "added-data-files=1,deleted-data-files=3,added-records=30,deleted-records=30,\
             added-files-size=900,removed-files-size=1200"
        );
        assert_eq!(
            props["partitions.p=2"],
            "deleted-data-files=1,deleted-records=5,removed-files-size=80"
        );
        // Past the limit: the count only.
        set_partition_summaries(&mut props, &added, &removed, 1);
        assert_eq!(props["changed-partition-count"], "2");
        assert!(!props.keys().any(|k| k.starts_with("partitions.")));
        assert!(!props.contains_key("partition-summaries-included"));
    }

    #[test]
    fn missing_parent_total_stays_missing() {
        let parent = Snapshot {
            snapshot_id: 1,
            parent_snapshot_id: None,
            sequence_number: 1,
            timestamp_ms: 0,
            manifest_list: None,
            manifests: None,
            summary: Some(Summary::new(Operation::Append)),
            schema_id: None,
            first_row_id: None,
            added_rows: None,
            key_id: None,
        };
        let s = append_summary(
            &AddedCounts::default(),
            Some(&parent),
            0,
            0,
            0,
            0,
            &BTreeMap::new(),
        );
        assert!(!s.properties.contains_key("total-records"));
    }
}
