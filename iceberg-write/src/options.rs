//! [`WriteOptions`]: how data files are encoded, sized, named and measured.
//!
//! Parsed once from table properties (see [`iceberg_spec::properties`] for the keys and
//! Java's defaults); the naming ids are injected, and the sort order comes from the table
//! metadata ([`WriteOptions::with_sort_order`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use iceberg_spec::properties::{
    PARQUET_COMPRESSION_LEVEL, ParquetColumnProperties, TableProperties,
};
use iceberg_spec::{ParquetCodec, SortOrder};
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::metrics::MetricsConfig;
use crate::naming::FileCounter;

/// Zstd level used when `write.parquet.compression-level` is unset (Java's default).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// Gzip level used when `write.parquet.compression-level` is unset.
pub const DEFAULT_GZIP_LEVEL: u32 = 6;
/// Brotli level used when `write.parquet.compression-level` is unset.
pub const DEFAULT_BROTLI_LEVEL: u32 = 1;

/// How to write data files: Parquet settings, file sizing, metrics and file naming.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    /// Parquet compression codec with its level.
    pub compression: Compression,
    /// Most rows per row group.
    pub row_group_size_rows: usize,
    /// Row-group target in (estimated encoded) bytes.
    pub row_group_size_bytes: u64,
    /// Target data page size in bytes.
    pub page_size_bytes: usize,
    /// Most rows per data page.
    pub page_row_limit: usize,
    /// Dictionary page size limit in bytes.
    pub dict_size_bytes: usize,
    /// Bloom filters and Parquet statistics per column (`write.parquet.bloom-filter-*`,
    /// `write.parquet.stats-enabled.column.*`).
    pub parquet_columns: Arc<ParquetColumnProperties>,
    /// A file is closed and a new one started once it reaches this many bytes.
    pub target_file_size_bytes: u64,
    /// Most files the partitioned writer keeps open at once.
    pub max_open_files: usize,
    /// With a sort order, input bytes the streaming writer gathers before sorting them into
    /// one run per partition (`write.sort.buffer-size-bytes`).
    pub sort_buffer_bytes: u64,
    /// Row-group bytes all open files may buffer together before the largest buffered row
    /// group is written out early (`write.buffer-size-bytes`).
    pub buffer_size_bytes: u64,
    /// Spill the rows of partitions past the open-file cap and write each once at the end
    /// (`write.spill.enabled`); off, the least recently used file is closed instead.
    pub spill_enabled: bool,
    /// Input bytes the spill keeps in memory (`write.spill.buffer-size-bytes`).
    pub spill_buffer_bytes: u64,
    /// Local folder for spill files (a fresh folder is made in it, and removed when the
    /// writer is done or dropped); `None`: the system's temporary folder (`TMPDIR`).
    pub spill_dir: Option<PathBuf>,
    /// Metrics modes per column.
    pub metrics: MetricsConfig,
    /// Where data files go instead of `<location>/data` (`write.data.path`).
    pub data_location: Option<String>,
    /// Hash directories in data file paths (`write.object-storage.enabled`).
    pub object_storage_enabled: bool,
    /// Keep partition paths after the hash (`write.object-storage.partitioned-paths`).
    pub object_storage_partitioned_paths: bool,
    /// Rows are sorted by this order within each data file (unsorted: written as given).
    pub sort_order: SortOrder,
    /// Operation (query/job) id shared by every worker of one commit; part of each file name.
    pub operation_id: Uuid,
    /// Id of this worker's task within the operation; part of each file name.
    pub task_id: u64,
    /// Id of this worker's input partition (Java's `partitionId`); part of each file name.
    pub partition_id: u32,
    /// Suffix appended to each file name before `.parquet` (Java's optional suffix).
    pub file_suffix: Option<String>,
    /// File count of this task, shared by clones of these options.
    pub file_counter: FileCounter,
    /// Floor nanosecond timestamps and times with digits past the microsecond into
    /// microsecond columns; off (the default), such a value is refused, naming its column
    /// (PyIceberg's `downcast-ns-timestamp-to-us-on-write`).
    pub floor_nanoseconds: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        match Self::from_properties(&TableProperties::default()) {
            Ok(o) => o,
            // The default properties hold a valid codec and no level.
            Err(_) => unreachable!("default table properties are valid write options"),
        }
    }
}

impl WriteOptions {
    /// Options from already-parsed table properties, with a fresh random operation id.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for a compression level the codec does not accept.
    pub fn from_properties(props: &TableProperties) -> Result<Self> {
        let p = &props.parquet;
        Ok(Self {
            compression: compression(p.compression_codec, p.compression_level)?,
            row_group_size_rows: p.row_group_size_rows,
            row_group_size_bytes: p.row_group_size_bytes,
            page_size_bytes: p.page_size_bytes,
            page_row_limit: p.page_row_limit,
            dict_size_bytes: p.dict_size_bytes,
            parquet_columns: p.columns.clone(),
            target_file_size_bytes: props.target_file_size_bytes,
            max_open_files: props.max_open_files,
            sort_buffer_bytes: props.sort_buffer_bytes,
            buffer_size_bytes: props.buffer_size_bytes,
            spill_enabled: props.spill_enabled,
            spill_buffer_bytes: props.spill_buffer_bytes,
            spill_dir: None,
            metrics: MetricsConfig::from_properties(&props.metrics),
            data_location: props.data_path.clone(),
            object_storage_enabled: props.object_storage_enabled,
            object_storage_partitioned_paths: props.object_storage_partitioned_paths,
            sort_order: SortOrder::unsorted(),
            operation_id: Uuid::new_v4(),
            task_id: 0,
            partition_id: 0,
            file_suffix: None,
            file_counter: FileCounter::new(),
            floor_nanoseconds: false,
        })
    }

    /// Options from a table's raw property map.
    ///
    /// # Errors
    /// [`Error::Spec`] for a property that does not parse, [`Error::InvalidOption`] for a bad
    /// compression level.
    pub fn from_table_properties(map: &BTreeMap<String, String>) -> Result<Self> {
        Self::from_properties(&TableProperties::parse(map)?)
    }

    /// The same options with another operation id (deterministic names in tests, shared jobs).
    pub fn with_operation_id(mut self, operation_id: Uuid) -> Self {
        self.operation_id = operation_id;
        self
    }

    /// The same options with another task id.
    pub fn with_task_id(mut self, task_id: u64) -> Self {
        self.task_id = task_id;
        self
    }

    /// The same options with another partition id.
    pub fn with_partition_id(mut self, partition_id: u32) -> Self {
        self.partition_id = partition_id;
        self
    }

    /// The same options with the table's sort order: the writer sorts the rows of each data
    /// file by it and records its id, and its columns get at least `truncate(16)` metrics.
    pub fn with_sort_order(mut self, order: &SortOrder) -> Self {
        self.sort_order = order.clone();
        self.metrics.sorted_field_ids = order
            .fields
            .iter()
            .filter(|f| f.transform.preserves_order())
            .map(|f| f.source_id)
            .collect();
        self
    }

    /// The same options with another target file size.
    pub fn with_target_file_size_bytes(mut self, bytes: u64) -> Self {
        self.target_file_size_bytes = bytes;
        self
    }

    /// The same options with another open-file cap.
    pub fn with_max_open_files(mut self, n: usize) -> Self {
        self.max_open_files = n;
        self
    }

    /// The same options with another shared row-group buffer.
    pub fn with_buffer_size_bytes(mut self, bytes: u64) -> Self {
        self.buffer_size_bytes = bytes;
        self
    }

    /// The same options with spilling on or off.
    pub fn with_spill_enabled(mut self, enabled: bool) -> Self {
        self.spill_enabled = enabled;
        self
    }

    /// The same options with another spill memory budget.
    pub fn with_spill_buffer_bytes(mut self, bytes: u64) -> Self {
        self.spill_buffer_bytes = bytes;
        self
    }

    /// The same options spilling into a folder made in `dir`.
    pub fn with_spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// The same options with another sort buffer.
    pub fn with_sort_buffer_bytes(mut self, bytes: u64) -> Self {
        self.sort_buffer_bytes = bytes;
        self
    }

    /// The same options flooring (`true`) or refusing (`false`, the default) nanosecond
    /// values with digits past the microsecond written to microsecond columns.
    pub fn with_floor_nanoseconds(mut self, floor: bool) -> Self {
        self.floor_nanoseconds = floor;
        self
    }

    /// Checks the values the writer relies on being positive.
    pub(crate) fn validate(&self) -> Result<()> {
        let positive = |name: &str, v: u64| {
            if v == 0 {
                Err(Error::InvalidOption {
                    option: name.into(),
                    value: "0".into(),
                    reason: "must be positive".into(),
                })
            } else {
                Ok(())
            }
        };
        positive("row_group_size_rows", self.row_group_size_rows as u64)?;
        positive("row_group_size_bytes", self.row_group_size_bytes)?;
        positive("page_size_bytes", self.page_size_bytes as u64)?;
        positive("page_row_limit", self.page_row_limit as u64)?;
        positive("dict_size_bytes", self.dict_size_bytes as u64)?;
        positive("target_file_size_bytes", self.target_file_size_bytes)?;
        positive("max_open_files", self.max_open_files as u64)?;
        positive("sort_buffer_bytes", self.sort_buffer_bytes)?;
        positive("buffer_size_bytes", self.buffer_size_bytes)?;
        positive("spill_buffer_bytes", self.spill_buffer_bytes)
    }
}

/// The Parquet codec for a table's codec and optional level.
fn compression(codec: ParquetCodec, level: Option<i32>) -> Result<Compression> {
    let bad_level = |reason: String| Error::InvalidOption {
        option: PARQUET_COMPRESSION_LEVEL.into(),
        value: level.map(|l| l.to_string()).unwrap_or_default(),
        reason,
    };
    let unsigned = |default: u32| -> Result<u32> {
        match level {
            None => Ok(default),
            Some(l) => u32::try_from(l)
                .map_err(|_| bad_level(format!("{codec} needs a non-negative level"))),
        }
    };
    Ok(match codec {
        ParquetCodec::Zstd => Compression::ZSTD(
            ZstdLevel::try_new(level.unwrap_or(DEFAULT_ZSTD_LEVEL))
                .map_err(|e| bad_level(e.to_string()))?,
        ),
        ParquetCodec::Gzip => Compression::GZIP(
            GzipLevel::try_new(unsigned(DEFAULT_GZIP_LEVEL)?)
                .map_err(|e| bad_level(e.to_string()))?,
        ),
        ParquetCodec::Brotli => Compression::BROTLI(
            BrotliLevel::try_new(unsigned(DEFAULT_BROTLI_LEVEL)?)
                .map_err(|e| bad_level(e.to_string()))?,
        ),
        ParquetCodec::Snappy => Compression::SNAPPY,
        ParquetCodec::Lz4 => Compression::LZ4_RAW,
        ParquetCodec::Uncompressed => Compression::UNCOMPRESSED,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use iceberg_spec::properties::PARQUET_COMPRESSION;

    use super::*;

    #[test]
    fn defaults_follow_java() {
        let o = WriteOptions::default();
        assert_eq!(
            o.compression,
            Compression::ZSTD(ZstdLevel::try_new(3).unwrap())
        );
        assert_eq!(o.target_file_size_bytes, 512 * 1024 * 1024);
        assert_eq!(o.max_open_files, 64);
        assert!(o.validate().is_ok());
    }

    #[test]
    fn parses_codec_and_level() {
        let mut m = BTreeMap::new();
        m.insert(PARQUET_COMPRESSION.to_string(), "gzip".to_string());
        m.insert(PARQUET_COMPRESSION_LEVEL.to_string(), "9".to_string());
        m.insert(
            "write.data.path".to_string(),
            "memory://x/elsewhere".to_string(),
        );
        let o = WriteOptions::from_table_properties(&m).unwrap();
        assert_eq!(
            o.compression,
            Compression::GZIP(GzipLevel::try_new(9).unwrap())
        );
        assert_eq!(o.data_location.as_deref(), Some("memory://x/elsewhere"));
        assert!(!o.object_storage_enabled);

        m.insert(
            "write.object-storage.enabled".to_string(),
            "true".to_string(),
        );
        m.insert(
            "write.object-storage.partitioned-paths".to_string(),
            "false".to_string(),
        );
        let o = WriteOptions::from_table_properties(&m).unwrap();
        assert!(o.object_storage_enabled);
        assert!(!o.object_storage_partitioned_paths);

        m.insert(PARQUET_COMPRESSION_LEVEL.to_string(), "99".to_string());
        let err = WriteOptions::from_table_properties(&m)
            .unwrap_err()
            .to_string();
        assert!(err.contains(PARQUET_COMPRESSION_LEVEL), "{err}");
    }

    #[test]
    fn sort_order_columns_recorded_for_metrics() {
        use iceberg_spec::{NullOrder, SortDirection, SortField, Transform};
        let key = |source_id, transform| SortField {
            transform,
            source_id,
            direction: SortDirection::Asc,
            null_order: NullOrder::NullsFirst,
        };
        let order = SortOrder {
            order_id: 1,
            fields: vec![
                key(2, Transform::Identity),
                key(3, Transform::Bucket(4)),
                key(4, Transform::Day),
            ],
        };
        let o = WriteOptions::default().with_sort_order(&order);
        assert_eq!(o.sort_order, order);
        assert_eq!(
            o.metrics.sorted_field_ids,
            vec![2, 4],
            "bucket does not preserve order"
        );
    }

    #[test]
    fn operation_ids_differ_unless_injected() {
        assert_ne!(
            WriteOptions::default().operation_id,
            WriteOptions::default().operation_id
        );
        let id = Uuid::nil();
        assert_eq!(
            WriteOptions::default().with_operation_id(id).operation_id,
            id
        );
    }
}
