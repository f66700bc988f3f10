//! Data file names, unique across workers of one operation.
//!
//! Java's `OutputFileFactory`: `<partitionId %05d>-<taskId>-<operationId>-<fileCount %05d>[-suffix].parquet`,
//! placed by [`DataLocations`] (`location`). The operation id is shared by the workers of a
//! commit, the task id differs per worker, and the count per file.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

use crate::location::DataLocations;

/// The running file count of one task, shared by every clone (Java's `OutputFileFactory`
/// counter), so writers made from the same [`crate::WriteOptions`] never reuse a name.
#[derive(Debug, Clone, Default)]
pub struct FileCounter(Arc<AtomicU64>);

impl FileCounter {
    /// A counter starting at zero (the first file is number 1).
    pub fn new() -> Self {
        Self::default()
    }

    /// Files named so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl PartialEq for FileCounter {
    /// Two counters are equal when they are the same shared counter.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Hands out the path of each new data file of one writer.
#[derive(Debug, Clone)]
pub(crate) struct FileNamer {
    locations: DataLocations,
    partition_id: u32,
    task_id: u64,
    operation_id: Uuid,
    suffix: Option<String>,
    counter: FileCounter,
}

impl FileNamer {
    /// A namer placing files with `locations`.
    pub(crate) fn new(
        locations: DataLocations,
        partition_id: u32,
        task_id: u64,
        operation_id: Uuid,
        suffix: Option<String>,
        counter: FileCounter,
    ) -> Self {
        Self {
            locations,
            partition_id,
            task_id,
            operation_id,
            suffix,
            counter,
        }
    }

    /// The path of the next file in the partition directory `partition_path` ("" when unpartitioned).
    pub(crate) fn next_path(&mut self, partition_path: &str) -> String {
        let count = self.counter.next();
        let suffix = self
            .suffix
            .as_deref()
            .map(|s| format!("-{s}"))
            .unwrap_or_default();
        let name = format!(
            "{:05}-{}-{}-{:05}{suffix}.parquet",
            self.partition_id, self.task_id, self.operation_id, count
        );
        self.locations.data_file(partition_path, &name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default(location: &str, data: Option<&str>) -> DataLocations {
        DataLocations::new(location, data, false, true)
    }

    #[test]
    fn java_style_names() {
        let op = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let mut n = FileNamer::new(
            default("memory://wh/t/", None),
            3,
            7,
            op,
            None,
            FileCounter::new(),
        );
        assert_eq!(
            n.next_path(""),
            "memory://wh/t/data/00003-7-01234567-89ab-cdef-0123-456789abcdef-00001.parquet"
        );
        assert_eq!(
            n.next_path("d=2017-11-16"),
            "memory://wh/t/data/d=2017-11-16/00003-7-01234567-89ab-cdef-0123-456789abcdef-00002.parquet"
        );
        let mut n = FileNamer::new(
            default("memory://wh/t", Some("file:///other/")),
            0,
            0,
            op,
            Some("x".into()),
            FileCounter::new(),
        );
        assert!(n.next_path("").starts_with("file:///other/00000-0-"));
        assert!(n.next_path("").ends_with("-00002-x.parquet"));
    }

    #[test]
    fn clones_share_the_count() {
        let counter = FileCounter::new();
        let mut a = FileNamer::new(
            default("memory://t", None),
            0,
            0,
            Uuid::nil(),
            None,
            counter.clone(),
        );
        let mut b = FileNamer::new(
            default("memory://t", None),
            0,
            0,
            Uuid::nil(),
            None,
            counter.clone(),
        );
        assert!(a.next_path("").ends_with("-00001.parquet"));
        assert!(b.next_path("").ends_with("-00002.parquet"));
        assert_eq!(counter.count(), 2);
        assert_ne!(counter, FileCounter::new());
    }
}
