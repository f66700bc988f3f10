//! Table properties: each key a constant, parsed once into typed settings with Java's defaults.
//!
//! Spec: "Table Properties" in the Iceberg configuration docs; defaults from Java's
//! `TableProperties`. Keys marked "ours" are this library's additions.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::codec::{AvroCodec, ParquetCodec};
use crate::error::{Error, Result};

mod parquet_columns;

pub use parquet_columns::{
    BloomFilterFpp, DEFAULT_PARQUET_BLOOM_FILTER_FPP, DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES,
    PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX, PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX,
    PARQUET_BLOOM_FILTER_MAX_BYTES, PARQUET_COLUMN_STATS_ENABLED_PREFIX, ParquetColumnProperties,
};

/// The key that makes Java encrypt a table's data files and manifests.
pub const ENCRYPTION_KEY_ID: &str = "encryption.key-id";

/// Whether expiry, orphan removal and purges may delete the table's data files (Java:
/// `gc.enabled`); a table made by Spark's `snapshot` procedure shares another's files.
pub const GC_ENABLED: &str = "gc.enabled";
/// Default: files may be deleted.
pub const DEFAULT_GC_ENABLED: bool = true;

/// Whether `properties` let maintenance delete the table's files, read alone as Java reads it
/// (`Boolean.parseBoolean`: any value but `true`, in any case, is false), so that no other
/// property can stop a purge or decide it.
pub fn gc_enabled(properties: &BTreeMap<String, String>) -> bool {
    properties.get(GC_ENABLED).map_or(DEFAULT_GC_ENABLED, |v| {
        v.trim().eq_ignore_ascii_case("true")
    })
}

/// Parquet compression codec.
pub const PARQUET_COMPRESSION: &str = "write.parquet.compression-codec";
/// Default Parquet codec (Java's default since 1.4).
pub const DEFAULT_PARQUET_COMPRESSION: &str = "zstd";
/// Parquet compression level.
pub const PARQUET_COMPRESSION_LEVEL: &str = "write.parquet.compression-level";
/// Parquet row-group target size in bytes.
pub const PARQUET_ROW_GROUP_SIZE_BYTES: &str = "write.parquet.row-group-size-bytes";
/// Default row-group size: 128 MiB.
pub const DEFAULT_PARQUET_ROW_GROUP_SIZE_BYTES: u64 = 128 * 1024 * 1024;
/// Ours: row-group target in rows, which parquet-rs splits on.
pub const PARQUET_ROW_GROUP_SIZE_ROWS: &str = "write.parquet.row-group-size-rows";
/// Default rows per row group (parquet-rs's default).
pub const DEFAULT_PARQUET_ROW_GROUP_SIZE_ROWS: usize = 1024 * 1024;
/// Parquet page size in bytes.
pub const PARQUET_PAGE_SIZE_BYTES: &str = "write.parquet.page-size-bytes";
/// Default page size: 1 MiB.
pub const DEFAULT_PARQUET_PAGE_SIZE_BYTES: usize = 1024 * 1024;
/// Parquet page row limit.
pub const PARQUET_PAGE_ROW_LIMIT: &str = "write.parquet.page-row-limit";
/// Default page row limit.
pub const DEFAULT_PARQUET_PAGE_ROW_LIMIT: usize = 20_000;
/// Parquet dictionary page size in bytes.
pub const PARQUET_DICT_SIZE_BYTES: &str = "write.parquet.dict-size-bytes";
/// Default dictionary page size: 2 MiB.
pub const DEFAULT_PARQUET_DICT_SIZE_BYTES: usize = 2 * 1024 * 1024;
/// Target data file size in bytes.
pub const WRITE_TARGET_FILE_SIZE_BYTES: &str = "write.target-file-size-bytes";
/// Default target file size: 512 MiB.
pub const DEFAULT_WRITE_TARGET_FILE_SIZE_BYTES: u64 = 512 * 1024 * 1024;
/// Ours: most data files a writer keeps open at once.
pub const WRITE_MAX_OPEN_FILES: &str = "write.max-open-files";
/// Default open-file cap.
pub const DEFAULT_WRITE_MAX_OPEN_FILES: usize = 64;
/// Ours: input bytes a streaming writer buffers before it sorts them into runs, when the
/// table has a sort order.
pub const WRITE_SORT_BUFFER_BYTES: &str = "write.sort.buffer-size-bytes";
/// Default sort buffer: 256 MiB.
pub const DEFAULT_WRITE_SORT_BUFFER_BYTES: u64 = 256 * 1024 * 1024;
/// Ours: bytes of row groups that all the files a writer has open may buffer together;
/// past it the largest buffered row group is written out early, so memory stays bounded
/// however many partitions are open (each file still caps its own row groups at
/// `write.parquet.row-group-size-bytes`).
pub const WRITE_BUFFER_SIZE_BYTES: &str = "write.buffer-size-bytes";
/// Default shared buffer: 128 MiB, one Java-sized row group.
pub const DEFAULT_WRITE_BUFFER_SIZE_BYTES: u64 = 128 * 1024 * 1024;
/// Ours: when a write spans more partitions than `write.max-open-files`, the rows of the
/// partitions that find no open file are kept (in memory up to
/// `write.spill.buffer-size-bytes`, then in local temporary Arrow IPC files) and each such
/// partition is written once at the end: one file per partition, not one per visit.
pub const WRITE_SPILL_ENABLED: &str = "write.spill.enabled";
/// Ours: input bytes the spill keeps in memory before it writes them to a local run file,
/// and reads back at a time when it writes the spilled partitions.
pub const WRITE_SPILL_BUFFER_BYTES: &str = "write.spill.buffer-size-bytes";
/// Default spill buffer: 128 MiB.
pub const DEFAULT_WRITE_SPILL_BUFFER_BYTES: u64 = 128 * 1024 * 1024;
/// Where data files go (default `<location>/data`).
pub const WRITE_DATA_PATH: &str = "write.data.path";
/// Where metadata files go (default `<location>/metadata`).
pub const WRITE_METADATA_PATH: &str = "write.metadata.path";
/// Object-storage layout of data file paths.
pub const WRITE_OBJECT_STORAGE_ENABLED: &str = "write.object-storage.enabled";
/// In the object-storage layout, keep the partition path after the hash directories.
pub const WRITE_OBJECT_STORAGE_PARTITIONED_PATHS: &str = "write.object-storage.partitioned-paths";
/// Default: partition paths are kept (Java's default).
pub const DEFAULT_WRITE_OBJECT_STORAGE_PARTITIONED_PATHS: bool = true;
/// Default metrics mode for every column.
pub const METRICS_DEFAULT: &str = "write.metadata.metrics.default";
/// Prefix of per-column metrics modes.
pub const METRICS_COLUMN_PREFIX: &str = "write.metadata.metrics.column.";
/// Columns beyond which inferred metrics default to `none`.
pub const METRICS_MAX_INFERRED_COLUMN_DEFAULTS: &str =
    "write.metadata.metrics.max-inferred-column-defaults";
/// Default for the 100-column rule.
pub const DEFAULT_METRICS_MAX_INFERRED_COLUMN_DEFAULTS: usize = 100;
/// Default string/binary bound truncation length.
pub const DEFAULT_METRICS_TRUNCATE_LENGTH: usize = 16;
/// Commit retries.
pub const COMMIT_NUM_RETRIES: &str = "commit.retry.num-retries";
/// Default commit retries.
pub const DEFAULT_COMMIT_NUM_RETRIES: u32 = 4;
/// Least wait between commit retries.
pub const COMMIT_MIN_RETRY_WAIT_MS: &str = "commit.retry.min-wait-ms";
/// Default least wait: 100 ms.
pub const DEFAULT_COMMIT_MIN_RETRY_WAIT_MS: u64 = 100;
/// Most wait between commit retries.
pub const COMMIT_MAX_RETRY_WAIT_MS: &str = "commit.retry.max-wait-ms";
/// Default most wait: 60 s.
pub const DEFAULT_COMMIT_MAX_RETRY_WAIT_MS: u64 = 60_000;
/// Total time allowed for commit retries.
pub const COMMIT_TOTAL_RETRY_TIME_MS: &str = "commit.retry.total-timeout-ms";
/// Default total retry time: 30 min.
pub const DEFAULT_COMMIT_TOTAL_RETRY_TIME_MS: u64 = 30 * 60 * 1000;
/// Whether a (merge) append folds small manifests.
pub const MANIFEST_MERGE_ENABLED: &str = "commit.manifest-merge.enabled";
/// Default: merging on.
pub const DEFAULT_MANIFEST_MERGE_ENABLED: bool = true;
/// Target manifest size in bytes.
pub const MANIFEST_TARGET_SIZE_BYTES: &str = "commit.manifest.target-size-bytes";
/// Default target manifest size: 8 MiB.
pub const DEFAULT_MANIFEST_TARGET_SIZE_BYTES: u64 = 8 * 1024 * 1024;
/// Fewest manifests in a bin before it is merged.
pub const MANIFEST_MIN_MERGE_COUNT: &str = "commit.manifest.min-count-to-merge";
/// Default minimum merge count.
pub const DEFAULT_MANIFEST_MIN_MERGE_COUNT: usize = 100;
/// Previous metadata files kept in the metadata log.
pub const METADATA_PREVIOUS_VERSIONS_MAX: &str = "write.metadata.previous-versions-max";
/// Default previous versions kept.
pub const DEFAULT_METADATA_PREVIOUS_VERSIONS_MAX: usize = 100;
/// Delete metadata files that fall off the log after a commit.
pub const METADATA_DELETE_AFTER_COMMIT_ENABLED: &str = "write.metadata.delete-after-commit.enabled";
/// Default: keep them.
pub const DEFAULT_METADATA_DELETE_AFTER_COMMIT_ENABLED: bool = false;
/// Snapshots older than this are expired by default (ms).
pub const HISTORY_MAX_SNAPSHOT_AGE_MS: &str = "history.expire.max-snapshot-age-ms";
/// Default: 5 days, as Java.
pub const DEFAULT_HISTORY_MAX_SNAPSHOT_AGE_MS: i64 = 5 * 24 * 60 * 60 * 1000;
/// Snapshots of each branch kept by default whatever their age.
pub const HISTORY_MIN_SNAPSHOTS_TO_KEEP: &str = "history.expire.min-snapshots-to-keep";
/// Default: the branch head alone.
pub const DEFAULT_HISTORY_MIN_SNAPSHOTS_TO_KEEP: usize = 1;
/// Branches and tags (other than `main`) whose snapshot is older than this are removed (ms).
pub const HISTORY_MAX_REF_AGE_MS: &str = "history.expire.max-ref-age-ms";
/// Default: refs never age out.
pub const DEFAULT_HISTORY_MAX_REF_AGE_MS: i64 = i64::MAX;
/// Avro codec (Java also uses it for manifests).
pub const AVRO_COMPRESSION: &str = "write.avro.compression-codec";
/// Manifest codec, when set it wins over the Avro codec.
pub const MANIFEST_COMPRESSION: &str = "write.manifest.compression-codec";
/// Default Avro codec.
pub const DEFAULT_AVRO_COMPRESSION: &str = "gzip";
/// Partitions summarised per snapshot.
pub const WRITE_PARTITION_SUMMARY_LIMIT: &str = "write.summary.partition-limit";
/// Default: no per-partition summaries.
pub const DEFAULT_WRITE_PARTITION_SUMMARY_LIMIT: usize = 0;

/// How much of a column's metrics a data file records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricsMode {
    /// No metrics at all, not even sizes.
    None,
    /// Sizes and counts, no bounds.
    Counts,
    /// Counts and bounds, strings and binary cut to N.
    Truncate(usize),
    /// Counts and exact bounds.
    Full,
}

impl Default for MetricsMode {
    fn default() -> Self {
        Self::Truncate(DEFAULT_METRICS_TRUNCATE_LENGTH)
    }
}

impl FromStr for MetricsMode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "none" => Ok(Self::None),
            "counts" => Ok(Self::Counts),
            "full" => Ok(Self::Full),
            _ => {
                let n = t
                    .strip_prefix("truncate(")
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or("expected none, counts, full or truncate(N)")?;
                match n.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(Self::Truncate(n)),
                    _ => Err("truncate length must be a positive integer".into()),
                }
            }
        }
    }
}

impl fmt::Display for MetricsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Counts => f.write_str("counts"),
            Self::Truncate(n) => write!(f, "truncate({n})"),
            Self::Full => f.write_str("full"),
        }
    }
}

/// Metrics settings: the default mode, per-column overrides and the inferred-defaults cap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetricsProperties {
    /// Explicit `write.metadata.metrics.default`, if set.
    pub default_mode: Option<MetricsMode>,
    /// Per-column modes by full column name.
    pub column_modes: BTreeMap<String, MetricsMode>,
    /// The 100-column rule's limit.
    pub max_inferred_column_defaults: usize,
}

/// Key segments that name a credential (`s3.secret-access-key`, `adls.sas-token.<account>`,
/// `gcs.oauth2.token`, `*.password`, ...): file IO and catalog settings, never table
/// properties, which every reader of the table can see in `metadata.json`.
pub const SECRET_KEY_SEGMENTS: &[&str] = &[
    "secret-access-key",
    "access-key-id",
    "session-token",
    "secret",
    "password",
    "token",
    "sas-token",
    "account-key",
    "client-secret",
    "credential",
    "private-key",
];

/// Whether `key` names a credential (see [`SECRET_KEY_SEGMENTS`]), by its dot-separated
/// segments, case-insensitively.
pub fn is_secret_key(key: &str) -> bool {
    key.split('.').any(|segment| {
        let segment = segment.trim().to_ascii_lowercase();
        SECRET_KEY_SEGMENTS.contains(&segment.as_str())
    })
}

/// Parquet writer settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetProperties {
    /// Codec of data files.
    pub compression_codec: ParquetCodec,
    /// Codec level, when set.
    pub compression_level: Option<i32>,
    /// Row-group target in bytes.
    pub row_group_size_bytes: u64,
    /// Row-group target in rows.
    pub row_group_size_rows: usize,
    /// Page size in bytes.
    pub page_size_bytes: usize,
    /// Page row limit.
    pub page_row_limit: usize,
    /// Dictionary page size in bytes.
    pub dict_size_bytes: usize,
    /// Bloom filters and statistics per column (shared: most tables have none, and every
    /// writer task holds a copy).
    pub columns: Arc<ParquetColumnProperties>,
}

/// Commit retry settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitRetryProperties {
    /// Retries after the first attempt.
    pub num_retries: u32,
    /// Least wait between attempts, ms.
    pub min_wait_ms: u64,
    /// Most wait between attempts, ms.
    pub max_wait_ms: u64,
    /// Total time allowed, ms.
    pub total_timeout_ms: u64,
}

/// Snapshot retention defaults (`history.expire.*`), which refs may override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryProperties {
    /// Age past which a snapshot expires (ms).
    pub max_snapshot_age_ms: i64,
    /// Snapshots of each branch kept whatever their age.
    pub min_snapshots_to_keep: usize,
    /// Age past which a branch or tag other than `main` is removed (ms).
    pub max_ref_age_ms: i64,
}

/// Manifest settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProperties {
    /// Merge small manifests on append.
    pub merge_enabled: bool,
    /// Target manifest size.
    pub target_size_bytes: u64,
    /// Fewest manifests in a bin before it is merged.
    pub min_count_to_merge: usize,
    /// Avro codec for manifests and manifest lists.
    pub compression_codec: AvroCodec,
}

/// Every table property this library acts on, parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableProperties {
    /// Parquet writer settings.
    pub parquet: ParquetProperties,
    /// Target data file size.
    pub target_file_size_bytes: u64,
    /// Open-file cap of the partitioned writer.
    pub max_open_files: usize,
    /// Input buffered per sorted run by the streaming writer.
    pub sort_buffer_bytes: u64,
    /// Row-group bytes all open files may buffer together.
    pub buffer_size_bytes: u64,
    /// Rows of partitions past the open-file cap are spilled and written once at the end.
    pub spill_enabled: bool,
    /// Input bytes the spill keeps in memory.
    pub spill_buffer_bytes: u64,
    /// Data file location override.
    pub data_path: Option<String>,
    /// Metadata file location override.
    pub metadata_path: Option<String>,
    /// Object-storage path layout.
    pub object_storage_enabled: bool,
    /// Partition paths kept in the object-storage layout.
    pub object_storage_partitioned_paths: bool,
    /// Metrics settings.
    pub metrics: MetricsProperties,
    /// Commit retries.
    pub commit_retry: CommitRetryProperties,
    /// Manifest settings.
    pub manifest: ManifestProperties,
    /// Previous metadata files kept in the log.
    pub metadata_previous_versions_max: usize,
    /// Delete metadata files that fall off the log.
    pub metadata_delete_after_commit: bool,
    /// Per-partition summaries limit.
    pub partition_summary_limit: usize,
    /// Whether maintenance may delete the table's files (`gc.enabled`): false when they may
    /// belong to another table, as after Spark's `snapshot` procedure.
    pub gc_enabled: bool,
    /// Snapshot retention defaults.
    pub history: HistoryProperties,
}

impl Default for TableProperties {
    fn default() -> Self {
        match Self::parse(&BTreeMap::new()) {
            Ok(p) => p,
            // An empty map holds no value that could fail to parse.
            Err(_) => unreachable!("defaults always parse"),
        }
    }
}

struct Props<'a>(&'a BTreeMap<String, String>);

impl Props<'_> {
    fn parse<T: FromStr>(&self, key: &str, default: T, expected: &str) -> Result<T> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| Error::InvalidProperty {
                key: key.into(),
                value: v.clone(),
                reason: format!("expected {expected}"),
            }),
        }
    }

    /// A boolean, `true`/`false` in any case (Java's `Boolean.parseBoolean` ignores case).
    fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(Error::InvalidProperty {
                key: key.into(),
                value: v.clone(),
                reason: "expected true or false".into(),
            }),
        }
    }

    /// A count Java reads as any int, where a negative value acts as zero (no partition
    /// summaries, merge at any count, the fewest metadata files kept).
    fn count(&self, key: &str, default: usize) -> Result<usize> {
        match self.0.get(key) {
            None => Ok(default),
            Some(_) => {
                let v = self.parse::<i64>(key, 0, "an integer")?.max(0);
                Ok(usize::try_from(v).unwrap_or(usize::MAX))
            }
        }
    }

    fn positive<T: FromStr + PartialOrd + Default>(&self, key: &str, default: T) -> Result<T> {
        let v = self.parse(key, default, "a positive integer")?;
        if v <= T::default() {
            return Err(Error::InvalidProperty {
                key: key.into(),
                value: self.0.get(key).cloned().unwrap_or_default(),
                reason: "expected a positive integer".into(),
            });
        }
        Ok(v)
    }

    /// A codec by its name, defaulting to `default`; an unknown name is an error naming it.
    fn codec<C: FromStr<Err = String>>(&self, key: &str, default: C) -> Result<C> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|reason| Error::InvalidProperty {
                key: key.into(),
                value: v.clone(),
                reason,
            }),
        }
    }
}

/// Properties only the Parquet writer reads: a commit, a schema change or an expiry never
/// needs them, so a value this library cannot write with does not stop those.
const WRITER_ONLY: &[&str] = &[
    PARQUET_COMPRESSION,
    PARQUET_COMPRESSION_LEVEL,
    PARQUET_ROW_GROUP_SIZE_BYTES,
    PARQUET_ROW_GROUP_SIZE_ROWS,
    PARQUET_PAGE_SIZE_BYTES,
    PARQUET_PAGE_ROW_LIMIT,
    PARQUET_DICT_SIZE_BYTES,
    PARQUET_BLOOM_FILTER_MAX_BYTES,
    WRITE_TARGET_FILE_SIZE_BYTES,
    WRITE_MAX_OPEN_FILES,
    WRITE_SORT_BUFFER_BYTES,
    WRITE_BUFFER_SIZE_BYTES,
    WRITE_SPILL_ENABLED,
    WRITE_SPILL_BUFFER_BYTES,
    WRITE_OBJECT_STORAGE_ENABLED,
    WRITE_OBJECT_STORAGE_PARTITIONED_PATHS,
    METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
];

impl TableProperties {
    /// Parses the properties a commit acts on: like [`parse`](Self::parse), but a
    /// writer-only property whose value does not parse (another engine's
    /// `write.parquet.compression-codec=lzo`) is left at its default, since Java's commits,
    /// schema changes and expiry read only the properties they use. Writing data still
    /// refuses it, through [`parse`](Self::parse).
    ///
    /// # Errors
    /// [`Error::InvalidProperty`] for a property a commit reads.
    pub fn parse_for_commit(props: &BTreeMap<String, String>) -> Result<Self> {
        let mut usable = std::borrow::Cow::Borrowed(props);
        loop {
            match Self::parse(&usable) {
                Err(Error::InvalidProperty { key, .. })
                    if WRITER_ONLY.contains(&key.as_str()) && usable.contains_key(&key) =>
                {
                    usable.to_mut().remove(&key);
                }
                parsed => return parsed,
            }
        }
    }

    /// Parses every property this library acts on; unknown keys are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidProperty`] naming the key, the value and what was expected.
    pub fn parse(props: &BTreeMap<String, String>) -> Result<Self> {
        let p = Props(props);
        // Java's `MetricsConfig` ignores a mode it cannot parse (it logs a warning): the
        // default falls back to truncate(16), still counting as set; a column to the
        // default (truncate(16) when the default is inferred, as it is up to 100 columns).
        let default_mode = props.get(METRICS_DEFAULT).map(|v| {
            v.parse()
                .unwrap_or(MetricsMode::Truncate(DEFAULT_METRICS_TRUNCATE_LENGTH))
        });
        let column_fallback =
            default_mode.unwrap_or(MetricsMode::Truncate(DEFAULT_METRICS_TRUNCATE_LENGTH));
        let mut column_modes = BTreeMap::new();
        for (k, v) in props {
            if let Some(col) = k.strip_prefix(METRICS_COLUMN_PREFIX) {
                column_modes.insert(col.to_string(), v.parse().unwrap_or(column_fallback));
            }
        }
        let manifest_codec_key = if props.contains_key(MANIFEST_COMPRESSION) {
            MANIFEST_COMPRESSION
        } else {
            AVRO_COMPRESSION
        };
        Ok(Self {
            parquet: ParquetProperties {
                compression_codec: p.codec(PARQUET_COMPRESSION, ParquetCodec::Zstd)?,
                compression_level: match props.get(PARQUET_COMPRESSION_LEVEL) {
                    None => None,
                    Some(_) => Some(p.parse(PARQUET_COMPRESSION_LEVEL, 0, "an integer")?),
                },
                row_group_size_bytes: p.positive(
                    PARQUET_ROW_GROUP_SIZE_BYTES,
                    DEFAULT_PARQUET_ROW_GROUP_SIZE_BYTES,
                )?,
                row_group_size_rows: p.positive(
                    PARQUET_ROW_GROUP_SIZE_ROWS,
                    DEFAULT_PARQUET_ROW_GROUP_SIZE_ROWS,
                )?,
                page_size_bytes: p
                    .positive(PARQUET_PAGE_SIZE_BYTES, DEFAULT_PARQUET_PAGE_SIZE_BYTES)?,
                page_row_limit: p
                    .positive(PARQUET_PAGE_ROW_LIMIT, DEFAULT_PARQUET_PAGE_ROW_LIMIT)?,
                dict_size_bytes: p
                    .positive(PARQUET_DICT_SIZE_BYTES, DEFAULT_PARQUET_DICT_SIZE_BYTES)?,
                columns: Arc::new(parquet_columns::parse(&p)?),
            },
            target_file_size_bytes: p.positive(
                WRITE_TARGET_FILE_SIZE_BYTES,
                DEFAULT_WRITE_TARGET_FILE_SIZE_BYTES,
            )?,
            max_open_files: p.positive(WRITE_MAX_OPEN_FILES, DEFAULT_WRITE_MAX_OPEN_FILES)?,
            sort_buffer_bytes: p
                .positive(WRITE_SORT_BUFFER_BYTES, DEFAULT_WRITE_SORT_BUFFER_BYTES)?,
            buffer_size_bytes: p
                .positive(WRITE_BUFFER_SIZE_BYTES, DEFAULT_WRITE_BUFFER_SIZE_BYTES)?,
            spill_enabled: p.flag(WRITE_SPILL_ENABLED, true)?,
            spill_buffer_bytes: p
                .positive(WRITE_SPILL_BUFFER_BYTES, DEFAULT_WRITE_SPILL_BUFFER_BYTES)?,
            data_path: props.get(WRITE_DATA_PATH).cloned(),
            metadata_path: props.get(WRITE_METADATA_PATH).cloned(),
            object_storage_enabled: p.flag(WRITE_OBJECT_STORAGE_ENABLED, false)?,
            object_storage_partitioned_paths: p.flag(
                WRITE_OBJECT_STORAGE_PARTITIONED_PATHS,
                DEFAULT_WRITE_OBJECT_STORAGE_PARTITIONED_PATHS,
            )?,
            metrics: MetricsProperties {
                default_mode,
                column_modes,
                // Java: a negative limit falls back to the default.
                max_inferred_column_defaults: usize::try_from(p.parse::<i64>(
                    METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
                    DEFAULT_METRICS_MAX_INFERRED_COLUMN_DEFAULTS as i64,
                    "an integer",
                )?)
                .unwrap_or(DEFAULT_METRICS_MAX_INFERRED_COLUMN_DEFAULTS),
            },
            commit_retry: CommitRetryProperties {
                num_retries: p.parse(
                    COMMIT_NUM_RETRIES,
                    DEFAULT_COMMIT_NUM_RETRIES,
                    "a non-negative integer",
                )?,
                min_wait_ms: p.parse(
                    COMMIT_MIN_RETRY_WAIT_MS,
                    DEFAULT_COMMIT_MIN_RETRY_WAIT_MS,
                    "milliseconds",
                )?,
                max_wait_ms: p.parse(
                    COMMIT_MAX_RETRY_WAIT_MS,
                    DEFAULT_COMMIT_MAX_RETRY_WAIT_MS,
                    "milliseconds",
                )?,
                total_timeout_ms: p.parse(
                    COMMIT_TOTAL_RETRY_TIME_MS,
                    DEFAULT_COMMIT_TOTAL_RETRY_TIME_MS,
                    "milliseconds",
                )?,
            },
            manifest: ManifestProperties {
                merge_enabled: p.flag(MANIFEST_MERGE_ENABLED, DEFAULT_MANIFEST_MERGE_ENABLED)?,
                target_size_bytes: p.positive(
                    MANIFEST_TARGET_SIZE_BYTES,
                    DEFAULT_MANIFEST_TARGET_SIZE_BYTES,
                )?,
                min_count_to_merge: p
                    .count(MANIFEST_MIN_MERGE_COUNT, DEFAULT_MANIFEST_MIN_MERGE_COUNT)?,
                compression_codec: p.codec(manifest_codec_key, AvroCodec::Deflate)?,
            },
            metadata_previous_versions_max: p.count(
                METADATA_PREVIOUS_VERSIONS_MAX,
                DEFAULT_METADATA_PREVIOUS_VERSIONS_MAX,
            )?,
            metadata_delete_after_commit: p.flag(
                METADATA_DELETE_AFTER_COMMIT_ENABLED,
                DEFAULT_METADATA_DELETE_AFTER_COMMIT_ENABLED,
            )?,
            gc_enabled: p.flag(GC_ENABLED, DEFAULT_GC_ENABLED)?,
            partition_summary_limit: p.count(
                WRITE_PARTITION_SUMMARY_LIMIT,
                DEFAULT_WRITE_PARTITION_SUMMARY_LIMIT,
            )?,
            history: HistoryProperties {
                max_snapshot_age_ms: p.parse(
                    HISTORY_MAX_SNAPSHOT_AGE_MS,
                    DEFAULT_HISTORY_MAX_SNAPSHOT_AGE_MS,
                    "milliseconds",
                )?,
                min_snapshots_to_keep: p.parse(
                    HISTORY_MIN_SNAPSHOTS_TO_KEEP,
                    DEFAULT_HISTORY_MIN_SNAPSHOTS_TO_KEEP,
                    "a non-negative integer",
                )?,
                max_ref_age_ms: p.parse(
                    HISTORY_MAX_REF_AGE_MS,
                    DEFAULT_HISTORY_MAX_REF_AGE_MS,
                    "milliseconds",
                )?,
            },
        })
    }
}

#[cfg(test)]
mod tests;
