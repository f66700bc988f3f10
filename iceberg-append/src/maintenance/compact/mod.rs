//! [`RewriteDataFiles`]: compaction. Per partition, data files below three quarters of
//! `write.target-file-size-bytes` (those of older specs in the current spec's all-null
//! partition, as Java groups them) are read back and written again by this crate's writer
//! (the table's current schema, default spec, sort order and write properties) into files
//! near the target size, committed as one `replace` snapshot with Java's rules:
//!
//! - the new files get the starting snapshot's data sequence number, so a delete file
//!   committed meanwhile still applies to their rows as it did to the old files';
//! - a file a delete file may apply to is left alone and counted (any delete file of its
//!   partition, and any of an unpartitioned or void-only spec; applying deletes while
//!   compacting is a later step), as is a file whose columns are not exactly the current
//!   schema's (other field ids or names: written before a schema change, or without ids),
//!   found from the footer as the group is read (no request per file to plan);
//! - a group is rewritten when it has `min_input_files` (5) such files, or two or more that
//!   together exceed the target size (what was written for a group that falls short once
//!   files of another schema are left out is deleted again);
//! - the commit fails as a typed [`Error::RewriteConflict`] (its new files deleted) when a
//!   concurrent commit removed a rewritten file or added a position delete file that may
//!   apply to one (one naming its data file applies to that file only, others to their
//!   partition); equality deletes committed meanwhile apply to the new files as they did to
//!   the old (Java ignores them too), and any other concurrent commit (an append) is
//!   committed over, as a retry.
//!
//! Reading streams each file through parquet's async Arrow reader (`iceberg_write::read`), so
//! memory stays within the writer's budgets however large the partition; the rows of small
//! files reach the writer gathered into batches of 64K rows (`batches.rs`), as a fresh
//! write's would. v3 tables are refused for now: their rewritten rows must keep their row
//! ids, which the writer does not yet carry over.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use futures::TryStreamExt;
use iceberg_io::FileIo;
use iceberg_spec::{
    DataContentType, DataFile, Datum, FormatVersion, ManifestEntry, ManifestFile, ManifestStatus,
    PartitionSpec, TableMetadata,
};
use iceberg_write::DataFileWriter;
use iceberg_write::read::FileIoReader;

mod batches;
mod commit;
mod read_ahead;

use self::batches::{Gathered, READ_BATCH_ROWS};
use self::commit::{Rewritten, commit_rewrite};
use self::read_ahead::ReadAhead;
use crate::append::read_snapshot_manifests;
use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::handle::write_options;
use crate::manifest::read_manifests;
use crate::merge::inherit;

/// Default files a partition needs to be compacted (Java's `min-input-files`).
pub const DEFAULT_MIN_INPUT_FILES: usize = 5;

/// Files up to this size are read whole in one request (many ahead, `read_ahead.rs`);
/// larger ones are streamed.
const WHOLE_FILE_BYTES: u64 = 8 << 20;

/// A compaction (see the module docs).
#[derive(Debug, Clone)]
pub struct RewriteDataFiles {
    target_file_size_bytes: Option<u64>,
    min_input_files: usize,
}

impl Default for RewriteDataFiles {
    fn default() -> Self {
        Self {
            target_file_size_bytes: None,
            min_input_files: DEFAULT_MIN_INPUT_FILES,
        }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// The metadata file committed (`None`: nothing to compact).
    pub metadata_location: Option<String>,
    /// The `replace` snapshot.
    pub snapshot_id: Option<i64>,
    /// Partitions compacted.
    pub groups: usize,
    /// Data files read and replaced.
    pub files_rewritten: usize,
    /// Their bytes.
    pub bytes_rewritten: u64,
    /// Data files written.
    pub files_written: usize,
    /// Their bytes.
    pub bytes_written: u64,
    /// Rows rewritten.
    pub rows: u64,
    /// Small files left alone because a delete file applies to them.
    pub skipped_with_deletes: usize,
    /// Small files left alone because their columns are not the current schema's.
    pub skipped_other_schema: usize,
    /// Small files left alone because their spec uses a transform this library does not
    /// know (their manifests cannot be written again).
    pub skipped_unknown_transform: usize,
    /// Commit attempts.
    pub attempts: u32,
}

/// A live data file of the starting snapshot.
#[derive(Debug, Clone)]
struct Live {
    file: DataFile,
}

impl RewriteDataFiles {
    /// A compaction toward the table's `write.target-file-size-bytes`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aims at files of `bytes` instead of the table's target size.
    pub fn target_file_size_bytes(mut self, bytes: u64) -> Self {
        self.target_file_size_bytes = Some(bytes.max(1));
        self
    }

    /// Compacts a partition only from `count` small files on (at least 2).
    pub fn min_input_files(mut self, count: usize) -> Self {
        self.min_input_files = count.max(2);
        self
    }

    /// Compacts `ident`'s current snapshot in one `replace` commit; `on_group` hears of each
    /// partition as it starts (its index, the group count, its files).
    ///
    /// # Errors
    /// [`Error::NotSupportedForTable`] for a v3 table; read, write and IO errors (the files
    /// written so far are deleted); [`Error::RewriteConflict`] and the commit's errors.
    pub async fn commit(
        &self,
        catalog: &dyn Catalog,
        ident: &TableIdent,
        env: &dyn Environment,
        mut on_group: impl FnMut(usize, usize, usize),
    ) -> Result<CompactionReport> {
        let table = catalog.load_table(ident).await?;
        let meta = &table.metadata;
        refuse_v3(meta, ident)?;
        let Some(head) = meta.current_snapshot() else {
            return Ok(CompactionReport::default());
        };
        let start = (head.snapshot_id, head.sequence_number);
        let io = catalog.table_io(&table);
        let mut cache = Manifests::new();
        let (data, deletes) = live_files(&io, meta, &mut cache).await?;
        // What is read back is the table's data already: nanoseconds (INT96 columns of
        // migrated Hive tables read as such) are floored as readers see them, not refused.
        let options = write_options(meta)?.with_floor_nanoseconds(true);
        let target = self
            .target_file_size_bytes
            .unwrap_or(options.target_file_size_bytes);
        let mut report = CompactionReport::default();
        let groups = self.plan_groups(meta, &data, &deletes, target, &mut report);
        let options = options.with_target_file_size_bytes(target);
        let mut written: Vec<DataFile> = Vec::new();
        let mut removed: Vec<&Live> = Vec::new();
        let total = groups.len();
        for (i, group) in groups.iter().enumerate() {
            on_group(i, total, group.len());
            let done = match Box::pin(rewrite_group(&io, meta, &options, group)).await {
                Ok(done) => done,
                Err(e) => {
                    discard(&io, &written).await;
                    return Err(e);
                }
            };
            report.skipped_other_schema += group.len() - done.rewritten.len();
            if !self.worth(&done.rewritten, target) {
                // Too few files were of the current schema after all: not a compaction.
                discard(&io, &done.written).await;
                continue;
            }
            written.extend(done.written);
            report.groups += 1;
            report.files_rewritten += done.rewritten.len();
            report.bytes_rewritten += done.rewritten.iter().map(|l| size(&l.file)).sum::<u64>();
            report.rows += done
                .rewritten
                .iter()
                .map(|l| u64::try_from(l.file.record_count).unwrap_or(0))
                .sum::<u64>();
            removed.extend(done.rewritten);
        }
        if removed.is_empty() {
            return Ok(report);
        }
        report.files_written = written.len();
        report.bytes_written = written.iter().map(size).sum();
        let inputs = Rewritten {
            removed: &removed,
            written: &written,
            start,
        };
        let result = commit_rewrite(catalog, ident, env, &inputs, &mut report, &mut cache).await;
        if let Err(e) = &result
            && !e.is_commit_state_unknown()
        {
            discard(&io, &written).await;
        }
        result.map(|()| report)
    }

    /// Whether rewriting `files` (of one partition) is worth a commit: `min_input_files`
    /// of them, or two or more that together exceed the target size (Java's
    /// `enoughContent`).
    fn worth(&self, files: &[&Live], target: u64) -> bool {
        files.len() >= self.min_input_files
            || (files.len() >= 2 && files.iter().map(|l| size(&l.file)).sum::<u64>() > target)
    }

    /// The groups to rewrite: small files of one partition of the default spec (those of
    /// older specs in its all-null partition), without deletes. Whether
    /// their columns are the current schema's is checked as they are read (from the footer
    /// the read decodes anyway: no request per file here).
    fn plan_groups<'a>(
        &self,
        meta: &TableMetadata,
        data: &'a [Live],
        deletes: &[DataFile],
        target: u64,
        report: &mut CompactionReport,
    ) -> Vec<Vec<&'a Live>> {
        let small = target.saturating_mul(3) / 4;
        let deleted_partitions = delete_partitions(meta, deletes);
        let width = meta.default_spec().map_or(0, |s| s.fields().len());
        let all_null = partition_key(&vec![None; width]);
        // Neither the manifests nor the files of a spec with a transform this library does
        // not know can be written (the spec forbids writers to).
        let unknown = |id| {
            meta.spec_by_id(id)
                .is_none_or(|s| s.has_unknown_transform())
        };
        let default_unknown = unknown(meta.default_spec_id);
        let mut by_partition: BTreeMap<(i32, String), Vec<&Live>> = BTreeMap::new();
        for live in data.iter().filter(|l| size(&l.file) < small) {
            if deleted_partitions.applies_to(&live.file) {
                report.skipped_with_deletes += 1;
                continue;
            }
            if default_unknown || unknown(live.file.spec_id) {
                report.skipped_unknown_transform += 1;
                continue;
            }
            // Files of an older spec may hold rows of many partitions of the current one:
            // they join the current spec's all-null partition, written out in the current
            // spec (Java's bin-pack planner).
            let key = if live.file.spec_id == meta.default_spec_id {
                (live.file.spec_id, partition_key(&live.file.partition))
            } else {
                (meta.default_spec_id, all_null.clone())
            };
            by_partition.entry(key).or_default().push(live);
        }
        by_partition
            .into_values()
            .filter(|files| self.worth(files, target))
            .collect()
    }
}

/// What the rewrite of one group did.
struct GroupRewrite<'a> {
    /// The data files written.
    written: Vec<DataFile>,
    /// The group's files whose rows they hold (those of the current schema).
    rewritten: Vec<&'a Live>,
}

/// Reads the files of `group` and writes their rows as new data files of the table. Small
/// files are read whole, many ahead of the writer (their requests and decoding overlap the
/// encoding); larger ones are streamed with ranged reads.
async fn rewrite_group<'a>(
    io: &FileIo,
    meta: &TableMetadata,
    options: &iceberg_write::WriteOptions,
    group: &[&'a Live],
) -> Result<GroupRewrite<'a>> {
    let schema = meta.current_schema()?;
    let mut writer = DataFileWriter::new(
        io,
        &meta.location,
        schema,
        meta.default_spec()?,
        None,
        options,
    )?;
    match write_group(io, &mut writer, schema, group).await {
        Ok(taken) => Ok(GroupRewrite {
            written: writer.close().await?,
            rewritten: group
                .iter()
                .zip(taken)
                .filter_map(|(l, t)| t.then_some(*l))
                .collect(),
        }),
        Err(e) => {
            let _ = writer.abort().await;
            Err(e)
        }
    }
}

/// Writes the rows of `group`'s files of `schema`'s columns; whether each file was taken.
async fn write_group(
    io: &FileIo,
    writer: &mut DataFileWriter,
    schema: &iceberg_spec::Schema,
    group: &[&Live],
) -> Result<Vec<bool>> {
    let mut out = Gathered::new(writer);
    let mut taken = Vec::with_capacity(group.len());
    let mut i = 0;
    while i < group.len() {
        if size(&group[i].file) > WHOLE_FILE_BYTES {
            let path = &group[i].file.file_path;
            let mut reader = FileIoReader::new(io, path);
            let same = reader.has_columns_of(schema).await?;
            taken.push(same);
            i += 1;
            if !same {
                continue;
            }
            // The footer just read serves the stream too.
            let mut stream = Box::pin(reader.into_stream(READ_BATCH_ROWS).await?);
            while let Some(batch) =
                stream
                    .try_next()
                    .await
                    .map_err(|e| iceberg_write::Error::ParquetRead {
                        path: path.clone(),
                        source: e,
                    })?
            {
                out.write(batch).await?;
            }
            continue;
        }
        // The run of small files from here, read whole and in order, many ahead.
        let end = group[i..]
            .iter()
            .position(|l| size(&l.file) > WHOLE_FILE_BYTES)
            .map_or(group.len(), |p| i + p);
        let run = group[i..end]
            .iter()
            .map(|l| (l.file.file_path.clone(), size(&l.file)))
            .collect();
        let mut reads = ReadAhead::new(io, schema, run);
        while let Some(batches) = reads.next().await {
            let batches = batches?;
            taken.push(batches.is_some());
            for batch in batches.into_iter().flatten() {
                out.write(batch).await?;
            }
        }
        i = end;
    }
    out.flush().await?;
    Ok(taken)
}

/// Decoded manifests by path, read once per compaction (a manifest never changes).
type Manifests = HashMap<String, Arc<Vec<ManifestEntry>>>;

/// The entries of `manifests`, in order, from `cache` or read a few at a time.
async fn cached_entries(
    io: &FileIo,
    manifests: &[ManifestFile],
    cache: &mut Manifests,
) -> Result<Vec<Arc<Vec<ManifestEntry>>>> {
    let missing: Vec<&ManifestFile> = manifests
        .iter()
        .filter(|m| !cache.contains_key(&m.manifest_path))
        .collect();
    let read = read_manifests(io, missing.iter().map(|m| m.manifest_path.as_str())).await?;
    for (m, decoded) in missing.iter().zip(read) {
        cache.insert(m.manifest_path.clone(), Arc::new(decoded.entries));
    }
    manifests
        .iter()
        .map(|m| {
            cache
                .get(&m.manifest_path)
                .cloned()
                .ok_or_else(|| Error::invalid_manifest(&m.manifest_path, "was not read"))
        })
        .collect()
}

/// The live data files and delete files of `meta`'s current snapshot.
async fn live_files(
    io: &FileIo,
    meta: &TableMetadata,
    cache: &mut Manifests,
) -> Result<(Vec<Live>, Vec<DataFile>)> {
    let Some(head) = meta.current_snapshot() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (mut data, mut deletes) = (Vec::new(), Vec::new());
    let listed = read_snapshot_manifests(io, head).await?;
    let decoded = cached_entries(io, &listed, cache).await?;
    for (m, entries) in listed.iter().zip(decoded) {
        for e in inherit(m, entries.to_vec()) {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            match e.data_file.content {
                DataContentType::Data => data.push(Live { file: e.data_file }),
                _ => deletes.push(e.data_file),
            }
        }
    }
    Ok((data, deletes))
}

/// Where delete files may apply: (spec, partition) pairs, or everywhere.
struct DeletePartitions {
    everywhere: bool,
    partitions: BTreeSet<(i32, String)>,
}

impl DeletePartitions {
    /// Whether a delete file may apply to `file` (conservatively: any delete file of its
    /// partition, and any of an unpartitioned spec).
    fn applies_to(&self, file: &DataFile) -> bool {
        self.everywhere
            || self
                .partitions
                .contains(&(file.spec_id, partition_key(&file.partition)))
    }
}

fn delete_partitions(meta: &TableMetadata, deletes: &[DataFile]) -> DeletePartitions {
    let mut out = DeletePartitions {
        everywhere: false,
        partitions: BTreeSet::new(),
    };
    for d in deletes {
        let unpartitioned = meta
            .spec_by_id(d.spec_id)
            .is_none_or(PartitionSpec::is_unpartitioned);
        if unpartitioned {
            out.everywhere = true;
        }
        out.partitions
            .insert((d.spec_id, partition_key(&d.partition)));
    }
    out
}

/// A partition tuple as a comparable key, of its values' widest promotions: a file written
/// before a partition source column was widened (its value an int, now a long) shares its
/// partition, and its delete files, with the files written after.
fn partition_key(partition: &[Option<Datum>]) -> String {
    let widest: Vec<Option<Datum>> = partition
        .iter()
        .map(|d| d.as_ref().map(Datum::widest))
        .collect();
    format!("{widest:?}")
}

fn size(f: &DataFile) -> u64 {
    u64::try_from(f.file_size_in_bytes).unwrap_or(0)
}

/// Deletes data files written by a compaction that will not be committed.
async fn discard(io: &FileIo, written: &[DataFile]) {
    let paths: Vec<String> = written.iter().map(|f| f.file_path.clone()).collect();
    if !paths.is_empty() {
        let _ = io.delete_many(paths).await;
    }
}

/// Refuses a v3 table: its rewritten rows must keep their row ids, which this writer does
/// not carry over yet. Checked on every attempt's base too: a table upgraded while a
/// compaction runs must not take the rewrite.
fn refuse_v3(meta: &TableMetadata, ident: &TableIdent) -> Result<()> {
    if meta.format_version >= FormatVersion::V3 {
        return Err(Error::NotSupportedForTable {
            table: ident.to_string(),
            operation: "compaction".into(),
            reason: "a v3 table's rewritten rows must keep their row ids, which this writer \
                     does not carry over yet"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use iceberg_spec::{NestedField, PartitionField, PrimitiveType, Schema, Transform};

    /// A delete file of a spec whose only field is void (a v1 table's removed partition
    /// field) is unpartitioned, so an equality delete in it applies to every data file
    /// (the spec's global deletes): compaction must leave them all alone, or rewritten rows
    /// would take the delete's sequence number and come back.
    #[test]
    fn a_delete_of_a_spec_of_void_fields_applies_everywhere() {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(1, "cat", PrimitiveType::String)],
        )
        .unwrap();
        let mut meta = TableMetadata::new_table(
            FormatVersion::V2,
            uuid::Uuid::nil(),
            "memory://wh/t",
            schema,
            PartitionSpec::unpartitioned(),
            iceberg_spec::SortOrder::unsorted(),
            BTreeMap::new(),
            0,
        )
        .unwrap();
        let field = |transform| PartitionField {
            name: "cat".into(),
            transform,
            source_id: 1,
            field_id: 1000,
        };
        meta.partition_specs = vec![
            PartitionSpec::new_unchecked(0, vec![field(Transform::Identity)]),
            PartitionSpec::new_unchecked(1, vec![field(Transform::Void)]),
        ];
        let file = |spec_id, value: Option<Datum>| DataFile {
            spec_id,
            partition: vec![value],
            ..Default::default()
        };
        let void_delete = file(1, None);
        let deletes = delete_partitions(&meta, &[void_delete]);
        assert!(deletes.applies_to(&file(0, Some(Datum::string("a")))));
        let partitioned_delete = file(0, Some(Datum::string("b")));
        let deletes = delete_partitions(&meta, &[partitioned_delete]);
        assert!(!deletes.applies_to(&file(0, Some(Datum::string("a")))));
        assert!(deletes.applies_to(&file(0, Some(Datum::string("b")))));
    }

    /// A delete file written after its partition source was widened (its value a long)
    /// applies to the data files written before (their value an int): compaction leaves
    /// them alone rather than rewrite rows a delete removed.
    #[test]
    fn deletes_of_a_widened_partition_apply_to_the_files_written_before() {
        let deletes = DeletePartitions {
            everywhere: false,
            partitions: BTreeSet::from([(0, partition_key(&[Some(Datum::long(1))]))]),
        };
        let old = |value: Datum| DataFile {
            partition: vec![Some(value)],
            ..Default::default()
        };
        assert!(deletes.applies_to(&old(Datum::int(1))));
        assert!(!deletes.applies_to(&old(Datum::int(2))));
        let decimal = |precision| Datum::Decimal {
            unscaled: 5,
            precision,
            scale: 2,
        };
        assert_eq!(
            partition_key(&[Some(decimal(9))]),
            partition_key(&[Some(decimal(12))])
        );
        assert_eq!(
            partition_key(&[Some(Datum::float(1.5))]),
            partition_key(&[Some(Datum::double(1.5))])
        );
    }
}
