//! Partition field summaries of a manifest (the manifest list's `partitions` column).

use iceberg_spec::{Datum, FieldSummary, ManifestEntry, StructType};

use crate::error::Result;

/// One summary per partition field over every entry (added, existing and deleted).
///
/// Bounds are the smallest and largest non-null, non-NaN partition values, Appendix-D
/// encoded in the partition result type, never truncated.
pub(crate) fn partition_summaries(
    pt: &StructType,
    entries: &[ManifestEntry],
) -> Result<Vec<FieldSummary>> {
    let mut out = Vec::with_capacity(pt.fields.len());
    for (i, _field) in pt.fields.iter().enumerate() {
        let mut contains_null = false;
        let mut contains_nan = false;
        let mut lower: Option<&Datum> = None;
        let mut upper: Option<&Datum> = None;
        for e in entries {
            match e.data_file.partition.get(i).and_then(Option::as_ref) {
                None => contains_null = true,
                Some(d) if is_nan(d) => contains_nan = true,
                Some(d) => {
                    if lower.is_none_or(|l| d.compare(l) == Some(std::cmp::Ordering::Less)) {
                        lower = Some(d);
                    }
                    if upper.is_none_or(|u| d.compare(u) == Some(std::cmp::Ordering::Greater)) {
                        upper = Some(d);
                    }
                }
            }
        }
        out.push(FieldSummary {
            contains_null,
            contains_nan: Some(contains_nan),
            lower_bound: lower.map(Datum::to_bytes),
            upper_bound: upper.map(Datum::to_bytes),
        });
    }
    Ok(out)
}

fn is_nan(d: &Datum) -> bool {
    match d {
        Datum::Float(f) => f.is_nan(),
        Datum::Double(f) => f.is_nan(),
        _ => false,
    }
}
