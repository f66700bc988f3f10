//! Per-column Parquet settings: bloom filters and column statistics, read as Java's
//! `Parquet.WriteBuilder` reads them (keys end in a column's full name, `a.b`, `tags.element`,
//! `props.value`; a name the schema lacks is skipped when writing).

use std::collections::{BTreeMap, BTreeSet};

use super::Props;
use crate::error::Result;

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
    /// Columns written without Parquet statistics (their Iceberg metrics, taken from the
    /// footer, keep only sizes).
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

/// Java's `Boolean.valueOf`: `true` in any case, anything else false.
fn java_flag(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("true")
}

/// The per-column settings of `p`, read as Java's writer reads them, which never refuses
/// them: a flag is on only when `true`; a probability that is not one strictly between 0
/// and 1 is Java's 0.01 (parquet-mr sizes its filters by the byte cap and never uses it).
/// Only the cap is refused when it is not a positive int (Java's `propertyAsInt`).
pub(super) fn parse(p: &Props<'_>) -> Result<ParquetColumnProperties> {
    let mut bloom_filters = BTreeMap::new();
    let mut stats_disabled = BTreeSet::new();
    for (key, value) in p.0 {
        if let Some(column) = key.strip_prefix(PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX)
            && java_flag(value)
        {
            let fpp_key = format!("{PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX}{column}");
            let fpp =
                p.0.get(&fpp_key)
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .and_then(BloomFilterFpp::new)
                    .unwrap_or_default();
            bloom_filters.insert(column.to_string(), fpp);
        }
        if let Some(column) = key.strip_prefix(PARQUET_COLUMN_STATS_ENABLED_PREFIX)
            && !java_flag(value)
        {
            stats_disabled.insert(column.to_string());
        }
    }
    let max_bytes = p.positive(
        PARQUET_BLOOM_FILTER_MAX_BYTES,
        i32::try_from(DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES).unwrap_or(i32::MAX),
    )?;
    Ok(ParquetColumnProperties {
        bloom_filters,
        bloom_filter_max_bytes: usize::try_from(max_bytes)
            .unwrap_or(DEFAULT_PARQUET_BLOOM_FILTER_MAX_BYTES),
        stats_disabled,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::Error;
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

    /// Java's writer refuses none of the per-column values: a flag other than `true` is off
    /// (so `no` turns statistics off), a probability it cannot use is 0.01.
    #[test]
    fn odd_values_are_read_as_java_reads_them() {
        let enabled = ("write.parquet.bloom-filter-enabled.column.id", "true");
        for fpp in ["1.0", "0", "-0.5", "NaN", "often"] {
            let p = parsed(&[enabled, ("write.parquet.bloom-filter-fpp.column.id", fpp)]).unwrap();
            assert_eq!(p.bloom_filters["id"].get(), 0.01, "{fpp}");
        }
        let p = parsed(&[
            ("write.parquet.bloom-filter-enabled.column.id", "yes"),
            ("write.parquet.stats-enabled.column.id", "no"),
        ])
        .unwrap();
        assert!(p.bloom_filters.is_empty());
        assert_eq!(p.stats_disabled, BTreeSet::from(["id".to_string()]));
    }

    /// The cap is Java's int: not positive or past `i32::MAX`, an error naming it, which
    /// does not stop a commit (a writer-only key).
    #[test]
    fn a_bad_cap_names_its_key_and_does_not_stop_a_commit() {
        let key = "write.parquet.bloom-filter-max-bytes";
        for value in ["0", "-1", "2147483648", "18446744073709551615", "lots"] {
            let err = parsed(&[(key, value)]).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidProperty { key: k, .. } if k == key),
                "{value}: {err}"
            );
            let map = [(key.to_string(), value.to_string())].into();
            assert!(TableProperties::parse_for_commit(&map).is_ok(), "{value}");
        }
        assert_eq!(
            parsed(&[(key, "2147483647")])
                .unwrap()
                .bloom_filter_max_bytes,
            2_147_483_647
        );
    }
}
