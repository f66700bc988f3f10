//! Per-column Parquet settings: bloom filters and column statistics, read as Java's
//! `Parquet.WriteBuilder` reads them (keys end in a column's full name, `a.b`, `tags.element`,
//! `props.value`; a name the schema lacks is skipped when writing).

use std::collections::{BTreeMap, BTreeSet};

use super::Props;
use crate::error::{Error, Result};

/// Prefix of the flags that give a column a bloom filter in every data file.
pub const PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX: &str =
    "write.parquet.bloom-filter-enabled.column.";
/// Prefix of a bloom-filtered column's false-positive probability.
pub const PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX: &str = "write.parquet.bloom-filter-fpp.column.";
/// Default false-positive probability (Java's).
pub const DEFAULT_PARQUET_BLOOM_FILTER_FPP: f64 = 0.01;
/// Most bytes of one column chunk's bloom filter.
pub const PARQUET_BLOOM_FILTER_MAX_BYTES: &str = "write.parquet.bloom-filter-max-bytes";
/// Default bloom filter cap: 1 MiB (Java's).
pub const DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES: usize = 1024 * 1024;
/// Prefix of the flags that turn a column's Parquet statistics off (or on).
pub const PARQUET_COLUMN_STATS_ENABLED_PREFIX: &str = "write.parquet.stats-enabled.column.";

/// A bloom filter's false-positive probability, strictly between 0 and 1.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct BloomFilterFpp(f64);

// Never NaN: only made from values strictly between 0 and 1.
impl Eq for BloomFilterFpp {}

impl BloomFilterFpp {
    /// The probability, if strictly between 0 and 1.
    pub fn new(fpp: f64) -> Option<Self> {
        (fpp > 0.0 && fpp < 1.0).then_some(Self(fpp))
    }

    /// The probability.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Default for BloomFilterFpp {
    fn default() -> Self {
        Self(DEFAULT_PARQUET_BLOOM_FILTER_FPP)
    }
}

/// Bloom filters and statistics per column, by full column name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetColumnProperties {
    /// Columns written with a bloom filter, with the probability each is sized for.
    pub bloom_filters: BTreeMap<String, BloomFilterFpp>,
    /// Most bytes of one column chunk's bloom filter.
    pub bloom_filter_max_bytes: usize,
    /// Columns written without Parquet statistics (their Iceberg metrics are unaffected).
    pub stats_disabled: BTreeSet<String>,
}

impl Default for ParquetColumnProperties {
    fn default() -> Self {
        Self {
            bloom_filters: BTreeMap::new(),
            bloom_filter_max_bytes: DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES,
            stats_disabled: BTreeSet::new(),
        }
    }
}

/// Prefixes of the writer-only keys here (see `WRITER_ONLY`).
pub(super) const WRITER_ONLY_PREFIXES: &[&str] = &[
    PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX,
    PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX,
    PARQUET_COLUMN_STATS_ENABLED_PREFIX,
];

/// The per-column settings of `p`. A probability is read only for a column whose filter is
/// on (Java reads no other).
pub(super) fn parse(p: &Props<'_>) -> Result<ParquetColumnProperties> {
    let mut bloom_filters = BTreeMap::new();
    let mut stats_disabled = BTreeSet::new();
    for key in p.0.keys() {
        if let Some(column) = key.strip_prefix(PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX)
            && p.flag(key, false)?
        {
            let fpp_key = format!("{PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX}{column}");
            let raw = p.parse(&fpp_key, DEFAULT_PARQUET_BLOOM_FILTER_FPP, "a probability")?;
            let fpp = BloomFilterFpp::new(raw).ok_or_else(|| Error::InvalidProperty {
                key: fpp_key.clone(),
                value: p.0.get(&fpp_key).cloned().unwrap_or_default(),
                reason: "expected a probability strictly between 0 and 1".into(),
            })?;
            bloom_filters.insert(column.to_string(), fpp);
        }
        if let Some(column) = key.strip_prefix(PARQUET_COLUMN_STATS_ENABLED_PREFIX)
            && !p.flag(key, true)?
        {
            stats_disabled.insert(column.to_string());
        }
    }
    Ok(ParquetColumnProperties {
        bloom_filters,
        bloom_filter_max_bytes: p.positive(
            PARQUET_BLOOM_FILTER_MAX_BYTES,
            DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES,
        )?,
        stats_disabled,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::properties::TableProperties;

    fn parsed(pairs: &[(&str, &str)]) -> Result<ParquetColumnProperties> {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TableProperties::parse(&map).map(|p| (*p.parquet.columns).clone())
    }

    /// Filters on the columns whose flag is true (any case), with their probability or
    /// Java's 0.01; statistics off where their flag is false; the cap Java's 1 MiB.
    #[test]
    fn columns_are_read_as_java_reads_them() {
        let p = parsed(&[
            ("write.parquet.bloom-filter-enabled.column.id", "TRUE"),
            ("write.parquet.bloom-filter-enabled.column.s.x", "true"),
            ("write.parquet.bloom-filter-fpp.column.s.x", "0.05"),
            ("write.parquet.bloom-filter-enabled.column.off", "false"),
            // A probability of a column without a filter is not read.
            ("write.parquet.bloom-filter-fpp.column.off", "lots"),
            ("write.parquet.stats-enabled.column.payload", "false"),
            ("write.parquet.stats-enabled.column.id", "true"),
        ])
        .unwrap();
        let fpps: Vec<(&str, f64)> = p
            .bloom_filters
            .iter()
            .map(|(k, v)| (k.as_str(), v.get()))
            .collect();
        assert_eq!(fpps, vec![("id", 0.01), ("s.x", 0.05)]);
        assert_eq!(p.bloom_filter_max_bytes, 1024 * 1024);
        assert_eq!(p.stats_disabled, BTreeSet::from(["payload".to_string()]));
        assert_eq!(parsed(&[]).unwrap(), ParquetColumnProperties::default());
    }

    /// A value the writer cannot use is an error naming its key; a commit leaves it at
    /// its default (a writer-only key).
    #[test]
    fn bad_values_name_their_key_and_do_not_stop_a_commit() {
        let enabled = ("write.parquet.bloom-filter-enabled.column.id", "true");
        for (key, value) in [
            ("write.parquet.bloom-filter-fpp.column.id", "1.0"),
            ("write.parquet.bloom-filter-fpp.column.id", "0"),
            ("write.parquet.bloom-filter-fpp.column.id", "NaN"),
            ("write.parquet.bloom-filter-fpp.column.id", "often"),
            ("write.parquet.bloom-filter-max-bytes", "0"),
            ("write.parquet.bloom-filter-enabled.column.id", "yes"),
            ("write.parquet.stats-enabled.column.id", "no"),
        ] {
            let pairs = [enabled, (key, value)];
            let err = parsed(&pairs).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidProperty { key: k, .. } if k == key),
                "{key}={value}: {err}"
            );
            let map = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert!(TableProperties::parse_for_commit(&map).is_ok(), "{key}");
        }
    }
}
