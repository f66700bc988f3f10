//! Per-column sums and min/max read from the footer the Parquet writer returned.

use std::collections::BTreeMap;

use iceberg_spec::{Datum, Schema};
use parquet::file::metadata::ParquetMetaData;

use super::bounds::{decode_min_max, merge_max, merge_min};

/// What the footer says about one leaf column (a field id), summed over row groups.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ColumnFooter {
    /// Sum of the column chunks' compressed sizes.
    pub(crate) size: i64,
    /// Sum of the column chunks' value counts (nulls included).
    pub(crate) values: i64,
    /// Sum of null counts.
    pub(crate) nulls: i64,
    /// Smallest min over row groups.
    pub(crate) min: Option<Datum>,
    /// Largest max over row groups.
    pub(crate) max: Option<Datum>,
    /// False when some row group had no statistics (or no null count) for the column.
    pub(crate) stats_complete: bool,
}

/// Column metrics by field id, for every leaf column that carries a field id.
pub(crate) fn footer_metrics(
    meta: &ParquetMetaData,
    schema: &Schema,
) -> BTreeMap<i32, ColumnFooter> {
    let descr = meta.file_metadata().schema_descr();
    let mut out: BTreeMap<i32, ColumnFooter> = BTreeMap::new();
    for rg in meta.row_groups() {
        for (i, chunk) in rg.columns().iter().enumerate() {
            let info = descr.column(i).self_type().get_basic_info().clone();
            if !info.has_id() {
                continue;
            }
            let id = info.id();
            let entry = out.entry(id).or_insert_with(|| ColumnFooter {
                stats_complete: true,
                ..ColumnFooter::default()
            });
            entry.size += chunk.compressed_size();
            entry.values += chunk.num_values();
            let Some(stats) = chunk.statistics() else {
                entry.stats_complete = false;
                continue;
            };
            match stats.null_count_opt() {
                Some(n) => entry.nulls += i64::try_from(n).unwrap_or(i64::MAX),
                None => entry.stats_complete = false,
            }
            if let Ok(ty) = schema.primitive_type(id) {
                let (lo, hi) = decode_min_max(stats, ty);
                if let Some(lo) = lo {
                    entry.min = merge_min(entry.min.take(), lo);
                }
                if let Some(hi) = hi {
                    entry.max = merge_max(entry.max.take(), hi);
                }
            }
        }
    }
    out
}

/// Row-group start offsets: the dictionary page of the first column chunk if it has one,
/// else its first data page.
pub(crate) fn split_offsets(meta: &ParquetMetaData) -> Vec<i64> {
    let mut offsets: Vec<i64> = meta
        .row_groups()
        .iter()
        .filter_map(|rg| {
            let first = rg.columns().first()?;
            Some(
                first
                    .dictionary_page_offset()
                    .unwrap_or_else(|| first.data_page_offset()),
            )
        })
        .collect();
    offsets.sort_unstable();
    offsets
}
