//! Data file locations and names, unique across workers of one operation.
//!
//! Java's `OutputFileFactory`: `<partitionId %05d>-<taskId>-<operationId>-<fileCount %05d>[-suffix].parquet`
//! under `<location>/data/<partition path>/` (or `write.data.path`). The operation id is
//! shared by the workers of a commit, the task id differs per worker, and the count per file.

use uuid::Uuid;

/// Hands out the path of each new data file of one writer.
#[derive(Debug, Clone)]
pub(crate) struct FileNamer {
    data_location: String,
    partition_id: u32,
    task_id: u64,
    operation_id: Uuid,
    suffix: Option<String>,
    count: u64,
}

impl FileNamer {
    /// A namer for a table at `location`, with an optional data location override.
    pub(crate) fn new(
        location: &str,
        data_location: Option<&str>,
        partition_id: u32,
        task_id: u64,
        operation_id: Uuid,
        suffix: Option<String>,
    ) -> Self {
        let data_location = match data_location {
            Some(d) => d.trim_end_matches('/').to_string(),
            None => format!("{}/data", location.trim_end_matches('/')),
        };
        Self {
            data_location,
            partition_id,
            task_id,
            operation_id,
            suffix,
            count: 0,
        }
    }

    /// The path of the next file in the partition directory `partition_path` ("" when unpartitioned).
    pub(crate) fn next_path(&mut self, partition_path: &str) -> String {
        self.count += 1;
        let suffix = self.suffix.as_deref().map(|s| format!("-{s}")).unwrap_or_default();
        let name = format!(
            "{:05}-{}-{}-{:05}{suffix}.parquet",
            self.partition_id, self.task_id, self.operation_id, self.count
        );
        if partition_path.is_empty() {
            format!("{}/{name}", self.data_location)
        } else {
            format!("{}/{partition_path}/{name}", self.data_location)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_style_names() {
        let op = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let mut n = FileNamer::new("memory://wh/t/", None, 3, 7, op, None);
        assert_eq!(
            n.next_path(""),
            "memory://wh/t/data/00003-7-01234567-89ab-cdef-0123-456789abcdef-00001.parquet"
        );
        assert_eq!(
            n.next_path("d=2017-11-16"),
            "memory://wh/t/data/d=2017-11-16/00003-7-01234567-89ab-cdef-0123-456789abcdef-00002.parquet"
        );
        let mut n = FileNamer::new("memory://wh/t", Some("file:///other/"), 0, 0, op, Some("x".into()));
        assert!(n.next_path("").starts_with("file:///other/00000-0-"));
        assert!(n.next_path("").ends_with("-00002-x.parquet"));
    }
}
