//! Small files read whole ahead of the writer, in order, as many at once as a byte budget
//! allows.
//!
//! On an object store each read is a request whose latency dwarfs decoding a tiny file: a
//! partition of thousands of 100 KB files read 8 at a time waits out every latency in turn.
//! So reads are started (as tasks of their own, which progress while the writer encodes)
//! until [`PREFETCH_BYTES`] of files or [`PREFETCH_FILES`] files are in flight, whichever
//! comes first: many tiny files at once, few large ones, and the same bound on memory as
//! eight files of the largest size read whole.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use iceberg_io::FileIo;
use iceberg_spec::Schema;
use tokio::task::JoinHandle;

use super::batches::READ_BATCH_ROWS;

/// Bytes of files read (and decoded) ahead of the writer at most; one file over it is read
/// alone.
const PREFETCH_BYTES: u64 = 64 << 20;

/// Files read ahead of the writer at most.
const PREFETCH_FILES: usize = 64;

/// A file's batches, or `None` when its columns are not the schema's.
type Read = iceberg_write::Result<Option<Vec<RecordBatch>>>;

/// The whole-file reads of a run of small files, yielded in the files' order.
pub(super) struct ReadAhead {
    io: FileIo,
    schema: Arc<Schema>,
    /// Files not started yet: path and size, in order.
    files: VecDeque<(String, u64)>,
    /// Reads started, in order, with their files' paths and sizes.
    pending: VecDeque<(String, u64, JoinHandle<Read>)>,
    /// Bytes of the files in `pending`.
    bytes: u64,
}

impl ReadAhead {
    /// Reads of `files` (path and size), checked against `schema`'s columns.
    pub(super) fn new(io: &FileIo, schema: &Schema, files: Vec<(String, u64)>) -> Self {
        Self {
            io: io.clone(),
            schema: Arc::new(schema.clone()),
            files: files.into(),
            pending: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The next file's batches (`None` inside: other columns), or `None` after the last.
    ///
    /// # Errors
    /// The file cannot be read or is not valid Parquet.
    pub(super) async fn next(&mut self) -> Option<Read> {
        self.start_reads();
        let (path, bytes, read) = self.pending.pop_front()?;
        self.bytes -= bytes;
        let result = read.await.unwrap_or_else(|e| {
            Err(iceberg_write::Error::WriterFailed {
                reason: format!("reading {path} to compact it failed: {e}"),
            })
        });
        // Top up at once, so the next reads wait on the store while the writer encodes.
        self.start_reads();
        Some(result)
    }

    /// Starts reads while the budget allows (always one when none is in flight).
    fn start_reads(&mut self) {
        while self.pending.len() < PREFETCH_FILES {
            let Some(&(_, size)) = self.files.front() else {
                return;
            };
            if !self.pending.is_empty() && self.bytes + size > PREFETCH_BYTES {
                return;
            }
            let Some((path, size)) = self.files.pop_front() else {
                return;
            };
            let (io, schema, file) = (self.io.clone(), self.schema.clone(), path.clone());
            let read = tokio::spawn(async move {
                iceberg_write::read::read_whole_file(&io, &file, READ_BATCH_ROWS, Some(&schema))
                    .await
            });
            self.bytes += size;
            self.pending.push_back((path, size, read));
        }
    }
}

impl Drop for ReadAhead {
    /// Reads no one will take (the compaction failed) stop, rather than finish for nothing.
    fn drop(&mut self) {
        for (_, _, read) in &self.pending {
            read.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use arrow_array::Int64Array;
    use iceberg_spec::PartitionSpec;
    use iceberg_write::{DataFileWriter, WriteOptions};

    use super::*;

    fn schema(id: i32) -> Schema {
        iceberg_testing::id_column_schema(id).unwrap()
    }

    /// One data file of `schema` holding `ids`; its path and size.
    async fn file(io: &FileIo, location: &str, schema: &Schema, ids: Vec<i64>) -> (String, u64) {
        let options = WriteOptions::default();
        let spec = PartitionSpec::unpartitioned();
        let mut writer = DataFileWriter::new(io, location, schema, &spec, None, &options).unwrap();
        let arrow = Arc::new(iceberg_write::arrow_schema(schema).unwrap());
        let batch = RecordBatch::try_new(arrow, vec![Arc::new(Int64Array::from(ids))]).unwrap();
        writer.write(&batch).await.unwrap();
        let f = writer.close().await.unwrap().remove(0);
        (f.file_path, u64::try_from(f.file_size_in_bytes).unwrap())
    }

    /// As many files start as the budget allows: many tiny ones, few large ones, always
    /// one, and the rest as earlier reads are taken.
    #[tokio::test]
    async fn reads_start_within_the_byte_and_file_budgets() {
        let io = FileIo::memory();
        let s = schema(1);
        let starts = |sizes: Vec<u64>| {
            let files = sizes
                .into_iter()
                .enumerate()
                .map(|(i, n)| (format!("memory://wh/missing-{i}.parquet"), n))
                .collect();
            let mut reads = ReadAhead::new(&io, &s, files);
            reads.start_reads();
            (reads.pending.len(), reads.bytes)
        };
        assert_eq!(starts(vec![1000; 200]), (PREFETCH_FILES, 64_000));
        assert_eq!(starts(vec![10 << 20; 10]), (6, 60 << 20));
        assert_eq!(starts(vec![100 << 20, 1]), (1, 100 << 20));
        assert_eq!(starts(vec![]), (0, 0));
    }

    /// Files come back in their order, whatever order their reads finish in; a file of
    /// other columns comes back as `None`; a missing file is an error at its place.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn files_come_back_in_order() {
        let io = FileIo::memory();
        let location = "memory://wh/t";
        let (ours, other) = (schema(1), schema(2));
        let mut files = Vec::new();
        for i in 0..100i64 {
            // Large files first, so later (smaller) reads tend to finish first.
            let n = (100 - i) * 50;
            let s = if i == 7 { &other } else { &ours };
            files.push(file(&io, location, s, (i * 10_000..i * 10_000 + n).collect()).await);
        }
        files.insert(50, ("memory://wh/t/missing.parquet".to_string(), 10));
        let mut reads = ReadAhead::new(&io, &ours, files);
        for i in 0..100i64 {
            if i == 50 {
                let err = reads.next().await.unwrap().unwrap_err();
                assert!(err.to_string().contains("missing.parquet"), "{err}");
            }
            let read = reads.next().await.unwrap().unwrap();
            if i == 7 {
                assert!(read.is_none());
                continue;
            }
            let ids = super::super::batches::first_column_longs(&read.unwrap());
            let n = (100 - i) * 50;
            assert_eq!(ids, (i * 10_000..i * 10_000 + n).collect::<Vec<_>>());
        }
        assert!(reads.next().await.is_none());
    }
}
