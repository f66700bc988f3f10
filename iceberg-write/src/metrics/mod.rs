//! Column metrics of a data file: sizes, counts and Appendix-D bounds, as Java's
//! `ParquetMetrics` produces them (checklist section 5).
//!
//! - `mode`: which metrics each column gets ([`MetricsConfig`]).
//! - `footer`: sizes, value/null counts and min/max from the Parquet footer.
//! - `bounds`: footer statistics decoded per Iceberg type, and their ordering.
//! - `nan`: NaN counts, float bounds and uuid ordering checks from the Arrow arrays.
//! - [`truncate`]: `truncate(N)` bound cutting.

mod bounds;
mod footer;
pub(crate) mod mode;
mod nan;
pub mod truncate;

use std::collections::{BTreeMap, HashMap};

use iceberg_spec::types::PrimitiveType;
use iceberg_spec::{DataContentType, DataFile, Datum, FileFormat, MetricsMode, Schema};
use parquet::file::metadata::ParquetMetaData;

pub(crate) use footer::{ColumnFooter, Convert, LeafColumn, footer_metrics, split_offsets};
pub use mode::MetricsConfig;
pub(crate) use nan::ArrayMetrics;

/// The metric maps of one data file, keyed by field id.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FileMetrics {
    pub(crate) column_sizes: BTreeMap<i32, i64>,
    pub(crate) value_counts: BTreeMap<i32, i64>,
    pub(crate) null_value_counts: BTreeMap<i32, i64>,
    pub(crate) nan_value_counts: BTreeMap<i32, i64>,
    pub(crate) lower_bounds: BTreeMap<i32, Datum>,
    pub(crate) upper_bounds: BTreeMap<i32, Datum>,
}

impl FileMetrics {
    /// Bounds as Appendix-D bytes.
    pub(crate) fn encoded_bounds(&self) -> (BTreeMap<i32, Vec<u8>>, BTreeMap<i32, Vec<u8>>) {
        let enc = |m: &BTreeMap<i32, Datum>| m.iter().map(|(k, d)| (*k, d.to_bytes())).collect();
        (enc(&self.lower_bounds), enc(&self.upper_bounds))
    }

    /// The data file record of a Parquet file at `path` of `size` bytes with these metrics.
    pub(crate) fn into_data_file(
        self,
        path: String,
        size: u64,
        meta: &ParquetMetaData,
        spec_id: i32,
        partition: Vec<Option<Datum>>,
        sort_order_id: Option<i32>,
    ) -> DataFile {
        let (lower_bounds, upper_bounds) = self.encoded_bounds();
        DataFile {
            content: DataContentType::Data,
            file_path: path,
            file_format: FileFormat::Parquet,
            spec_id,
            partition,
            record_count: meta.file_metadata().num_rows(),
            file_size_in_bytes: i64::try_from(size).unwrap_or(i64::MAX),
            column_sizes: self.column_sizes,
            value_counts: self.value_counts,
            null_value_counts: self.null_value_counts,
            nan_value_counts: self.nan_value_counts,
            lower_bounds,
            upper_bounds,
            key_metadata: None,
            split_offsets: Some(split_offsets(meta)),
            equality_ids: None,
            sort_order_id,
            first_row_id: None,
            referenced_data_file: None,
            content_offset: None,
            content_size_in_bytes: None,
        }
    }
}

/// The metrics of a file from its footer and, for a file this writer wrote, the arrays
/// written into it.
///
/// Without the arrays (a file written elsewhere) there are no NaN counts, and float, double
/// and uuid bounds come from the footer, as Java's `ParquetUtil.footerMetrics` makes them.
pub(crate) fn file_metrics(
    meta: &ParquetMetaData,
    schema: &Schema,
    modes: &HashMap<i32, MetricsMode>,
    arrays: Option<&ArrayMetrics>,
    leaves: &[Option<LeafColumn>],
) -> FileMetrics {
    file_metrics_of(&footer::footer_metrics(meta, leaves), schema, modes, arrays)
}

/// Whether a uuid column's footer bounds (unsigned byte order) are also bounds in Java's
/// signed-long order: when they share their first 8 bytes and sign class, every value between
/// them does too, and both orders rank those values alike.
fn footer_uuid_bounds_agree(lower: Option<&Datum>, upper: Option<&Datum>) -> bool {
    use iceberg_spec::datum::uuid_order::uuid_sign_class;
    match (lower, upper) {
        (Some(Datum::Uuid(l)), Some(Datum::Uuid(u))) => {
            l.as_bytes()[..8] == u.as_bytes()[..8] && uuid_sign_class(l) == uuid_sign_class(u)
        }
        _ => false,
    }
}

/// [`file_metrics`] from footer sums already computed.
pub(crate) fn file_metrics_of(
    columns: &BTreeMap<i32, ColumnFooter>,
    schema: &Schema,
    modes: &HashMap<i32, MetricsMode>,
    arrays: Option<&ArrayMetrics>,
) -> FileMetrics {
    let mut out = FileMetrics::default();
    for (&id, col) in columns {
        let mode = modes.get(&id).copied().unwrap_or(MetricsMode::None);
        let (Some(info), Ok(ty)) = (schema.field_info(id), schema.primitive_type(id)) else {
            continue;
        };
        if mode == MetricsMode::None {
            continue;
        }
        out.column_sizes.insert(id, col.size);
        if info.in_list_or_map {
            continue;
        }
        if let (PrimitiveType::Uuid, Some(arrays)) = (ty, arrays) {
            // Parquet keeps no uuid statistics (writer::file::writer_properties).
            let Some(stats) = arrays.uuids.get(&id) else {
                continue;
            };
            out.value_counts.insert(id, col.values);
            out.null_value_counts.insert(id, stats.nulls);
            if matches!(mode, MetricsMode::Counts) || !stats.orders_agree() {
                continue;
            }
            // uuids are never truncated: Full and Truncate(n) keep them whole.
            let datum = |b: [u8; 16]| Datum::Uuid(uuid::Uuid::from_bytes(b));
            if let Some(l) = stats.min {
                out.lower_bounds.insert(id, datum(l));
            }
            if let Some(u) = stats.max {
                out.upper_bounds.insert(id, datum(u));
            }
            continue;
        }
        if !col.stats_complete {
            continue;
        }
        out.value_counts.insert(id, col.values);
        out.null_value_counts.insert(id, col.nulls);
        let (mut lower, mut upper) = (col.min.clone(), col.max.clone());
        if *ty == PrimitiveType::Uuid && !footer_uuid_bounds_agree(lower.as_ref(), upper.as_ref()) {
            // Footer bounds (another writer's file) are in the spec's unsigned byte order;
            // Java compares uuids as signed longs and would skip the file for a value
            // between them in its order. Kept only where the two orders agree.
            (lower, upper) = (None, None);
        }
        if let (true, Some(arrays)) = (ty.is_floating(), arrays) {
            let stats = arrays.floats.get(&id).copied().unwrap_or_default();
            out.nan_value_counts.insert(id, stats.nan_count);
            let as_datum = |v: f64| match ty {
                PrimitiveType::Float => Datum::Float(v as f32),
                _ => Datum::Double(v),
            };
            lower = stats.min.map(as_datum);
            upper = stats.max.map(as_datum);
        }
        let (lower, upper) = match mode {
            MetricsMode::None | MetricsMode::Counts => continue,
            MetricsMode::Full => (lower, upper),
            MetricsMode::Truncate(n) => (
                lower.map(|d| truncate::truncate_lower_datum(d, n)),
                upper.and_then(|d| truncate::truncate_upper_datum(d, n)),
            ),
        };
        if let Some(l) = lower {
            out.lower_bounds.insert(id, l);
        }
        if let Some(u) = upper {
            out.upper_bounds.insert(id, u);
        }
    }
    out
}
