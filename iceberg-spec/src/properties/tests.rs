//! Tests of [`super::TableProperties`]: defaults, Java's spellings, refusals.

#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn defaults_are_javas() {
    let p = TableProperties::default();
    assert_eq!(p.parquet.compression_codec, ParquetCodec::Zstd);
    assert_eq!(p.target_file_size_bytes, 536_870_912);
    assert_eq!(p.commit_retry.num_retries, 4);
    assert_eq!(p.manifest.target_size_bytes, 8_388_608);
    assert_eq!(p.manifest.min_count_to_merge, 100);
    assert_eq!(p.manifest.compression_codec, AvroCodec::Deflate);
    assert_eq!(p.metrics.max_inferred_column_defaults, 100);
    assert_eq!(p.metadata_previous_versions_max, 100);
    assert!(!p.object_storage_enabled);
    assert!(p.object_storage_partitioned_paths);
}

#[test]
fn object_storage_flags_ignore_case() {
    let mut m = BTreeMap::new();
    m.insert(WRITE_OBJECT_STORAGE_ENABLED.to_string(), "True".to_string());
    m.insert(
        WRITE_OBJECT_STORAGE_PARTITIONED_PATHS.to_string(),
        "FALSE".to_string(),
    );
    let p = TableProperties::parse(&m).unwrap();
    assert!(p.object_storage_enabled);
    assert!(!p.object_storage_partitioned_paths);
    m.insert(WRITE_OBJECT_STORAGE_ENABLED.to_string(), "yes".to_string());
    let err = TableProperties::parse(&m).unwrap_err().to_string();
    assert!(err.contains(WRITE_OBJECT_STORAGE_ENABLED), "{err}");
}

#[test]
fn java_spellings_of_flags_and_negative_counts_are_read_as_java_reads_them() {
    let mut m = BTreeMap::new();
    m.insert(MANIFEST_MERGE_ENABLED.to_string(), "False".to_string());
    m.insert(
        METADATA_DELETE_AFTER_COMMIT_ENABLED.to_string(),
        "TRUE".to_string(),
    );
    m.insert(GC_ENABLED.to_string(), "FALSE".to_string());
    m.insert(WRITE_PARTITION_SUMMARY_LIMIT.to_string(), "-1".to_string());
    m.insert(MANIFEST_MIN_MERGE_COUNT.to_string(), "-1".to_string());
    m.insert(METADATA_PREVIOUS_VERSIONS_MAX.to_string(), "-3".to_string());
    let p = TableProperties::parse(&m).unwrap();
    assert!(!p.manifest.merge_enabled);
    assert!(p.metadata_delete_after_commit);
    assert!(!p.gc_enabled);
    assert_eq!(p.partition_summary_limit, 0);
    assert_eq!(p.manifest.min_count_to_merge, 0);
    assert_eq!(p.metadata_previous_versions_max, 0);
    assert!(TableProperties::default().gc_enabled);
    m.insert(MANIFEST_MIN_MERGE_COUNT.to_string(), "many".to_string());
    let err = TableProperties::parse(&m).unwrap_err().to_string();
    assert!(err.contains(MANIFEST_MIN_MERGE_COUNT), "{err}");
}

#[test]
fn parses_and_names_bad_values() {
    let mut m = BTreeMap::new();
    m.insert(METRICS_DEFAULT.to_string(), "truncate(8)".to_string());
    m.insert(format!("{METRICS_COLUMN_PREFIX}a.b"), "full".to_string());
    m.insert(PARQUET_COMPRESSION.to_string(), "SNAPPY".to_string());
    let p = TableProperties::parse(&m).unwrap();
    assert_eq!(p.metrics.default_mode, Some(MetricsMode::Truncate(8)));
    assert_eq!(p.metrics.column_modes["a.b"], MetricsMode::Full);
    assert_eq!(p.parquet.compression_codec, ParquetCodec::Snappy);

    m.insert(WRITE_TARGET_FILE_SIZE_BYTES.to_string(), "-5".to_string());
    let err = TableProperties::parse(&m).unwrap_err().to_string();
    assert!(err.contains(WRITE_TARGET_FILE_SIZE_BYTES), "{err}");
    m.remove(WRITE_TARGET_FILE_SIZE_BYTES);
    // Modes Java cannot parse fall back as Java's `MetricsConfig` falls back (with a
    // warning there): the default to truncate(16), a column to the default.
    m.insert(METRICS_DEFAULT.to_string(), "truncate(0)".to_string());
    m.insert(format!("{METRICS_COLUMN_PREFIX}a.b"), "most".to_string());
    m.insert(
        METRICS_MAX_INFERRED_COLUMN_DEFAULTS.to_string(),
        "-1".to_string(),
    );
    let p = TableProperties::parse(&m).unwrap();
    assert_eq!(p.metrics.default_mode, Some(MetricsMode::Truncate(16)));
    assert_eq!(p.metrics.column_modes["a.b"], MetricsMode::Truncate(16));
    assert_eq!(p.metrics.max_inferred_column_defaults, 100);
    m.insert(METRICS_DEFAULT.to_string(), "counts".to_string());
    let p = TableProperties::parse(&m).unwrap();
    assert_eq!(p.metrics.column_modes["a.b"], MetricsMode::Counts);
    m.remove(METRICS_DEFAULT);
    m.remove(METRICS_MAX_INFERRED_COLUMN_DEFAULTS);
    let p = TableProperties::parse(&m).unwrap();
    assert_eq!(p.metrics.column_modes["a.b"], MetricsMode::Truncate(16));
    m.insert(format!("{METRICS_COLUMN_PREFIX}a.b"), "full".to_string());
    // An Avro codec Parquet has but Avro does not: refused, never "no compression".
    m.insert(AVRO_COMPRESSION.to_string(), "lz4".to_string());
    let err = TableProperties::parse(&m).unwrap_err().to_string();
    assert!(
        err.contains(AVRO_COMPRESSION) && err.contains("lz4"),
        "{err}"
    );
}

#[test]
/// A Java table may name a codec Java accepts and we cannot write (`lzo`): commits,
/// schema changes and expiry still read it; writing data still refuses it.
fn writer_only_values_we_cannot_use_do_not_stop_a_commit() {
    let mut m = BTreeMap::new();
    m.insert(PARQUET_COMPRESSION.to_string(), "lzo".to_string());
    m.insert(WRITE_TARGET_FILE_SIZE_BYTES.to_string(), "0".to_string());
    m.insert(HISTORY_MIN_SNAPSHOTS_TO_KEEP.to_string(), "3".to_string());
    m.insert(COMMIT_NUM_RETRIES.to_string(), "7".to_string());
    let err = TableProperties::parse(&m).unwrap_err().to_string();
    assert!(
        err.contains(PARQUET_COMPRESSION) && err.contains("lzo"),
        "{err}"
    );
    let p = TableProperties::parse_for_commit(&m).unwrap();
    assert_eq!(p.history.min_snapshots_to_keep, 3);
    assert_eq!(p.commit_retry.num_retries, 7);
    assert_eq!(p.parquet.compression_codec, ParquetCodec::Zstd);
    assert_eq!(
        p.target_file_size_bytes,
        DEFAULT_WRITE_TARGET_FILE_SIZE_BYTES
    );
    // A property a commit reads is still refused, naming it.
    m.insert(COMMIT_NUM_RETRIES.to_string(), "many".to_string());
    let err = TableProperties::parse_for_commit(&m)
        .unwrap_err()
        .to_string();
    assert!(err.contains(COMMIT_NUM_RETRIES), "{err}");
    m.remove(COMMIT_NUM_RETRIES);
    m.insert(PARQUET_COMPRESSION.to_string(), "LZ4_RAW".to_string());
    m.remove(WRITE_TARGET_FILE_SIZE_BYTES);
    let p = TableProperties::parse(&m).unwrap();
    assert_eq!(p.parquet.compression_codec, ParquetCodec::Lz4);
}

#[test]
fn secret_keys_are_told_apart_from_settings() {
    for key in [
        "s3.secret-access-key",
        "s3.access-key-id",
        "s3.session-token",
        "token",
        "gcs.oauth2.token",
        "adls.sas-token.myaccount.dfs.core.windows.net",
        "adls.account-key",
        "credential",
        "jdbc.password",
        "S3.Secret-Access-Key",
    ] {
        assert!(is_secret_key(key), "{key}");
    }
    for key in [
        "write.parquet.compression-codec",
        "s3.endpoint",
        "s3.region",
        "token-count",
        "write.metadata.delete-after-commit.enabled",
    ] {
        assert!(!is_secret_key(key), "{key}");
    }
}

#[test]
fn metrics_mode_strings() {
    for s in ["none", "counts", "full", "truncate(16)"] {
        assert_eq!(s.parse::<MetricsMode>().unwrap().to_string(), s);
    }
    assert!("truncate".parse::<MetricsMode>().is_err());
}
