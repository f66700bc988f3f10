//! Per-column sums and min/max read from the footer the Parquet writer returned.

use std::collections::BTreeMap;

use iceberg_spec::types::PrimitiveType;
use iceberg_spec::{Datum, Schema};
use parquet::basic::SortOrder;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

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
    /// False when some row group's min/max cannot bound the column: a NaN min or max
    /// (writers before PARQUET-1222), none while the chunk holds values, or old
    /// signed-order statistics of a column Iceberg orders unsigned (strings, binary, fixed).
    pub(crate) bounds_usable: bool,
}

/// How one Parquet leaf column's statistics become those of a table column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeafColumn {
    /// The table column's field id.
    pub(crate) id: i32,
    /// The type the file's statistics decode as.
    pub(crate) stats_type: PrimitiveType,
    /// What turns a decoded value into one of the table column's type.
    pub(crate) convert: Convert,
}

/// A conversion of statistics from the file's type to the table's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Convert {
    /// The file stores the table's type.
    AsIs,
    /// An allowed promotion: int to long, float to double.
    Promote,
}

impl LeafColumn {
    /// The leaves of a file this writer wrote: every leaf with a field id, at the schema's
    /// type.
    pub(crate) fn of_written(meta: &ParquetMetaData, schema: &Schema) -> Vec<Option<LeafColumn>> {
        meta.file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| {
                let info = c.self_type().get_basic_info();
                let id = info.has_id().then(|| info.id())?;
                let stats_type = schema.primitive_type(id).ok()?.clone();
                Some(LeafColumn {
                    id,
                    stats_type,
                    convert: Convert::AsIs,
                })
            })
            .collect()
    }

    /// A decoded statistic as a value of the table column's type.
    fn convert(&self, d: Datum) -> Option<Datum> {
        match (&self.convert, d) {
            (Convert::AsIs, d) => Some(d),
            (Convert::Promote, Datum::Int(v)) => Some(Datum::Long(i64::from(v))),
            (Convert::Promote, Datum::Float(v)) => Some(Datum::Double(f64::from(v))),
            _ => None,
        }
    }
}

/// Column metrics by field id for the file's `leaves` (one entry per leaf column, in the
/// file's order; `None` for a leaf no table column reads).
pub(crate) fn footer_metrics(
    meta: &ParquetMetaData,
    leaves: &[Option<LeafColumn>],
) -> BTreeMap<i32, ColumnFooter> {
    let descr = meta.file_metadata().schema_descr();
    let mut out: BTreeMap<i32, ColumnFooter> = BTreeMap::new();
    for rg in meta.row_groups() {
        for (i, chunk) in rg.columns().iter().enumerate() {
            let Some(Some(leaf)) = leaves.get(i) else {
                continue;
            };
            let entry = out.entry(leaf.id).or_insert_with(|| ColumnFooter {
                stats_complete: true,
                bounds_usable: true,
                ..ColumnFooter::default()
            });
            entry.size += chunk.compressed_size();
            entry.values += chunk.num_values();
            let Some(stats) = chunk.statistics() else {
                entry.stats_complete = false;
                continue;
            };
            let nulls = stats
                .null_count_opt()
                .map(|n| i64::try_from(n).unwrap_or(i64::MAX));
            match nulls {
                Some(n) => entry.nulls += n,
                None => entry.stats_complete = false,
            }
            // A chunk holding values but no min or max (parquet-rs leaves them out for a
            // page of only zeros) bounds nothing: the other chunks' bounds would miss it.
            let unbounded_values = (stats.min_bytes_opt().is_none()
                || stats.max_bytes_opt().is_none())
                && nulls.is_none_or(|n| chunk.num_values() > n);
            if unbounded_values
                || (stats.is_min_max_deprecated()
                    && stats.min_bytes_opt().is_some()
                    && !deprecated_order_holds(descr.column(i).sort_order(), stats, leaf))
                || has_nan(stats)
            {
                entry.bounds_usable = false;
                continue;
            }
            let (lo, hi) = decode_min_max(stats, &leaf.stats_type);
            let (lo, hi) = (
                lo.and_then(|d| leaf.convert(d)),
                hi.and_then(|d| leaf.convert(d)),
            );
            // A min or max that is there but does not decode (string bytes that are not
            // UTF-8, as Hive and Spark may write) leaves the chunk's values unbounded: the
            // other chunks' bounds alone would exclude them.
            if (stats.min_bytes_opt().is_some() && lo.is_none())
                || (stats.max_bytes_opt().is_some() && hi.is_none())
            {
                entry.bounds_usable = false;
                continue;
            }
            if let Some(lo) = lo {
                entry.min = merge_min(entry.min.take(), lo);
            }
            if let Some(hi) = hi {
                entry.max = merge_max(entry.max.take(), hi);
            }
        }
    }
    for entry in out.values_mut() {
        if !entry.bounds_usable {
            (entry.min, entry.max) = (None, None);
        }
    }
    out
}

/// Whether a chunk's deprecated `min`/`max` (written before Parquet defined column orders)
/// are in the order Iceberg compares: only for signed types, and not for decimals stored as
/// bytes, which writers before parquet-mr 1.10 (Hive, Spark 2) compared byte by byte as
/// signed, so 128 (`0x0080`) came out below 127 (`0x007F`). parquet-rs calls every decimal
/// signed; parquet-mr's reader drops these (`ParquetMetadataConverter.sortOrder`: decimal is
/// unknown). Decimals stored as INT32/INT64 were compared as the integers they are.
fn deprecated_order_holds(order: SortOrder, stats: &Statistics, leaf: &LeafColumn) -> bool {
    let decimal_bytes = matches!(leaf.stats_type, PrimitiveType::Decimal { .. })
        && matches!(
            stats,
            Statistics::FixedLenByteArray(_) | Statistics::ByteArray(_)
        );
    order == SortOrder::SIGNED && !decimal_bytes
}

/// True when a float or double chunk's min or max is NaN.
fn has_nan(stats: &Statistics) -> bool {
    match stats {
        Statistics::Float(s) => {
            s.min_opt().is_some_and(|v| v.is_nan()) || s.max_opt().is_some_and(|v| v.is_nan())
        }
        Statistics::Double(s) => {
            s.min_opt().is_some_and(|v| v.is_nan()) || s.max_opt().is_some_and(|v| v.is_nan())
        }
        _ => false,
    }
}

/// Row-group start offsets: the dictionary page of the first column chunk if it has one,
/// else its first data page (parquet-mr's `getStartingPos`: a dictionary offset of 0, which
/// some writers put for "none", or one past the data page is no start).
pub(crate) fn split_offsets(meta: &ParquetMetaData) -> Vec<i64> {
    let mut offsets: Vec<i64> = meta
        .row_groups()
        .iter()
        .filter_map(|rg| {
            let first = rg.columns().first()?;
            let data = first.data_page_offset();
            Some(
                first
                    .dictionary_page_offset()
                    .filter(|d| *d > 0 && *d < data)
                    .unwrap_or(data),
            )
        })
        .collect();
    offsets.sort_unstable();
    offsets
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use parquet::basic::Type as PhysicalType;
    use parquet::file::metadata::{ColumnChunkMetaData, FileMetaData, RowGroupMetaData};
    use parquet::schema::types::{SchemaDescriptor, Type};

    use super::*;

    /// Row groups whose first chunk has the given (dictionary, first data page) offsets.
    fn footer(chunks: &[(Option<i64>, i64)]) -> ParquetMetaData {
        let leaf = Type::primitive_type_builder("a", PhysicalType::INT32)
            .build()
            .unwrap();
        let root = Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(leaf)])
            .build()
            .unwrap();
        let schema = Arc::new(SchemaDescriptor::new(Arc::new(root)));
        let groups = chunks
            .iter()
            .map(|(dictionary, data)| {
                let chunk = ColumnChunkMetaData::builder(schema.column(0))
                    .set_dictionary_page_offset(*dictionary)
                    .set_data_page_offset(*data)
                    .build()
                    .unwrap();
                RowGroupMetaData::builder(schema.clone())
                    .set_num_rows(1)
                    .set_column_metadata(vec![chunk])
                    .build()
                    .unwrap()
            })
            .collect();
        let file = FileMetaData::new(1, chunks.len() as i64, None, None, schema, None);
        ParquetMetaData::new(file, groups)
    }

    /// A one-leaf footer of `leaf` with one row group of `stats` (two values, no nulls).
    fn with_stats(leaf: Type, stats: Statistics) -> ParquetMetaData {
        let root = Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(leaf)])
            .build()
            .unwrap();
        let schema = Arc::new(SchemaDescriptor::new(Arc::new(root)));
        let chunk = ColumnChunkMetaData::builder(schema.column(0))
            .set_num_values(2)
            .set_statistics(stats)
            .build()
            .unwrap();
        let group = RowGroupMetaData::builder(schema.clone())
            .set_num_rows(2)
            .set_column_metadata(vec![chunk])
            .build()
            .unwrap();
        ParquetMetaData::new(
            FileMetaData::new(1, 2, None, None, schema, None),
            vec![group],
        )
    }

    fn leaf_of(stats_type: PrimitiveType) -> Vec<Option<LeafColumn>> {
        vec![Some(LeafColumn {
            id: 1,
            stats_type,
            convert: Convert::AsIs,
        })]
    }

    /// A decimal stored as bytes whose statistics are the deprecated `min`/`max` (Hive and
    /// Spark 2 compared them byte by byte as signed: 128 below 127) gets counts, no bounds;
    /// the same values in the current fields, or stored as an INT32, keep them.
    #[test]
    fn deprecated_statistics_of_decimal_bytes_bound_nothing() {
        use parquet::basic::{ConvertedType, LogicalType};
        use parquet::data_type::FixedLenByteArray;
        use parquet::file::statistics::ValueStatistics;
        let decimal = PrimitiveType::Decimal {
            precision: 4,
            scale: 2,
        };
        let flba = || {
            Type::primitive_type_builder("d", PhysicalType::FIXED_LEN_BYTE_ARRAY)
                .with_length(2)
                .with_logical_type(Some(LogicalType::decimal(2, 4)))
                .with_converted_type(ConvertedType::DECIMAL)
                .with_precision(4)
                .with_scale(2)
                .build()
                .unwrap()
        };
        let stats = |deprecated| {
            Statistics::FixedLenByteArray(ValueStatistics::new(
                Some(FixedLenByteArray::from(vec![0x00, 0x80])),
                Some(FixedLenByteArray::from(vec![0x00, 0x7F])),
                None,
                Some(0),
                deprecated,
            ))
        };
        let old = footer_metrics(&with_stats(flba(), stats(true)), &leaf_of(decimal.clone()));
        assert_eq!((old[&1].values, old[&1].nulls), (2, 0));
        assert_eq!((&old[&1].min, &old[&1].max), (&None, &None));
        let current = footer_metrics(&with_stats(flba(), stats(false)), &leaf_of(decimal.clone()));
        assert!(current[&1].min.is_some() && current[&1].max.is_some());
        let int = Type::primitive_type_builder("d", PhysicalType::INT32)
            .with_logical_type(Some(LogicalType::decimal(2, 4)))
            .with_converted_type(ConvertedType::DECIMAL)
            .with_precision(4)
            .with_scale(2)
            .build()
            .unwrap();
        let ints = Statistics::Int32(ValueStatistics::new(
            Some(-5),
            Some(127),
            None,
            Some(0),
            true,
        ));
        let int = footer_metrics(&with_stats(int, ints), &leaf_of(decimal));
        assert!(int[&1].min.is_some() && int[&1].max.is_some());
    }

    /// Another writer's zero bounds are widened to both zeros (parquet-mr's reader does the
    /// same): Java orders -0.0 below 0.0, so a max of -0.0 would exclude 0.0.
    #[test]
    fn zero_float_bounds_cover_both_zeros() {
        use parquet::file::statistics::ValueStatistics;
        let leaf = || {
            Type::primitive_type_builder("x", PhysicalType::DOUBLE)
                .build()
                .unwrap()
        };
        let stats = |min: f64, max: f64| {
            Statistics::Double(ValueStatistics::new(
                Some(min),
                Some(max),
                None,
                Some(0),
                false,
            ))
        };
        let m = footer_metrics(
            &with_stats(leaf(), stats(-1.0, -0.0)),
            &leaf_of(PrimitiveType::Double),
        );
        let max = &m[&1].max;
        assert!(
            matches!(max, Some(Datum::Double(v)) if *v == 0.0 && v.is_sign_positive()),
            "{max:?}"
        );
        let m = footer_metrics(
            &with_stats(leaf(), stats(0.0, 2.0)),
            &leaf_of(PrimitiveType::Double),
        );
        let min = &m[&1].min;
        assert!(
            matches!(min, Some(Datum::Double(v)) if *v == 0.0 && v.is_sign_negative()),
            "{min:?}"
        );
    }

    /// A row group starts at its dictionary page only where that offset is one (parquet-mr's
    /// `getStartingPos`): some writers put 0 for "no dictionary".
    #[test]
    fn split_offsets_skip_dictionary_offsets_that_are_no_start() {
        let meta = footer(&[
            (Some(4), 40),
            (Some(0), 900),
            (None, 2_000),
            (Some(5_000), 3_000),
        ]);
        assert_eq!(split_offsets(&meta), vec![4, 900, 2_000, 3_000]);
    }
}
