//! Parquet footer min/max decoded as Iceberg [`Datum`]s, and the ordering used to merge them.

use std::cmp::Ordering;

use iceberg_spec::Datum;
use iceberg_spec::types::PrimitiveType;
use parquet::file::statistics::Statistics;
use uuid::Uuid;

/// The (min, max) of a column chunk's statistics as datums of type `ty`.
///
/// `None` for either side when the statistics have none (an all-null chunk) or their
/// physical type does not match what this writer produces for `ty`.
pub(crate) fn decode_min_max(
    stats: &Statistics,
    ty: &PrimitiveType,
) -> (Option<Datum>, Option<Datum>) {
    use PrimitiveType as P;
    use Statistics as S;
    macro_rules! pair {
        ($s:expr, $f:expr) => {
            ($s.min_opt().and_then($f), $s.max_opt().and_then($f))
        };
    }
    // NaN bounds nothing; a zero min is -0.0 and a zero max 0.0.
    macro_rules! zero_widened {
        ($s:expr, $datum:path) => {
            (
                $s.min_opt()
                    .filter(|v| !v.is_nan())
                    .map(|v| $datum(if *v == 0.0 { -0.0 } else { *v })),
                $s.max_opt()
                    .filter(|v| !v.is_nan())
                    .map(|v| $datum(if *v == 0.0 { 0.0 } else { *v })),
            )
        };
    }
    match (stats, ty) {
        (S::Boolean(s), P::Boolean) => pair!(s, |v: &bool| Some(Datum::Boolean(*v))),
        (S::Int32(s), P::Int) => pair!(s, |v: &i32| Some(Datum::Int(*v))),
        (S::Int32(s), P::Date) => pair!(s, |v: &i32| Some(Datum::Date(*v))),
        (S::Int64(s), P::Long) => pair!(s, |v: &i64| Some(Datum::Long(*v))),
        (S::Int64(s), P::Time) => pair!(s, |v: &i64| Some(Datum::Time(*v))),
        (S::Int64(s), P::Timestamp) => pair!(s, |v: &i64| Some(Datum::Timestamp(*v))),
        (S::Int64(s), P::Timestamptz) => pair!(s, |v: &i64| Some(Datum::Timestamptz(*v))),
        (S::Int64(s), P::TimestampNs) => pair!(s, |v: &i64| Some(Datum::TimestampNs(*v))),
        (S::Int64(s), P::TimestamptzNs) => pair!(s, |v: &i64| Some(Datum::TimestamptzNs(*v))),
        // A zero bound is widened to cover both zeros, as parquet-mr's reader does
        // (`Statistics.FloatBuilder`): an older writer may have kept the first zero it saw,
        // and Java orders -0.0 below 0.0.
        (S::Float(s), P::Float) => zero_widened!(s, Datum::Float),
        (S::Double(s), P::Double) => zero_widened!(s, Datum::Double),
        (S::Int32(s), P::Decimal { precision, scale }) => {
            pair!(s, |v: &i32| Some(decimal(
                i128::from(*v),
                *precision,
                *scale
            )))
        }
        (S::Int64(s), P::Decimal { precision, scale }) => {
            pair!(s, |v: &i64| Some(decimal(
                i128::from(*v),
                *precision,
                *scale
            )))
        }
        (S::FixedLenByteArray(s), P::Decimal { precision, scale }) => {
            pair!(s, |v: &parquet::data_type::FixedLenByteArray| {
                be_i128(v.data()).map(|u| decimal(u, *precision, *scale))
            })
        }
        (S::ByteArray(s), P::Decimal { precision, scale }) => {
            pair!(s, |v: &parquet::data_type::ByteArray| {
                be_i128(v.data()).map(|u| decimal(u, *precision, *scale))
            })
        }
        (S::ByteArray(s), P::String) => pair!(s, |v: &parquet::data_type::ByteArray| {
            std::str::from_utf8(v.data())
                .ok()
                .map(|t| Datum::String(t.to_string()))
        }),
        (S::ByteArray(s), P::Binary) => pair!(s, |v: &parquet::data_type::ByteArray| Some(
            Datum::Binary(v.data().to_vec())
        )),
        (S::FixedLenByteArray(s), P::Fixed(_)) => {
            pair!(s, |v: &parquet::data_type::FixedLenByteArray| Some(
                Datum::Fixed(v.data().to_vec())
            ))
        }
        (S::FixedLenByteArray(s), P::Uuid) => {
            pair!(s, |v: &parquet::data_type::FixedLenByteArray| {
                Uuid::from_slice(v.data()).ok().map(Datum::Uuid)
            })
        }
        _ => (None, None),
    }
}

fn decimal(unscaled: i128, precision: u32, scale: u32) -> Datum {
    Datum::Decimal {
        unscaled,
        precision,
        scale,
    }
}

/// A big-endian two's-complement integer of at most 16 bytes.
fn be_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0x00 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(buf))
}

/// The smaller of a running minimum and a new value.
pub(crate) fn merge_min(acc: Option<Datum>, v: Datum) -> Option<Datum> {
    match acc {
        Some(a) if a.compare(&v) != Some(Ordering::Greater) => Some(a),
        _ => Some(v),
    }
}

/// The larger of a running maximum and a new value.
pub(crate) fn merge_max(acc: Option<Datum>, v: Datum) -> Option<Datum> {
    match acc {
        Some(a) if a.compare(&v) != Some(Ordering::Less) => Some(a),
        _ => Some(v),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use parquet::data_type::FixedLenByteArray;
    use parquet::file::statistics::ValueStatistics;

    use super::*;

    #[test]
    fn decodes_fixed_decimals_signed() {
        let min = FixedLenByteArray::from(vec![0xFF, 0x7F]);
        let max = FixedLenByteArray::from(vec![0x05, 0x8C]);
        let stats = Statistics::FixedLenByteArray(ValueStatistics::new(
            Some(min),
            Some(max),
            None,
            Some(0),
            false,
        ));
        let ty = PrimitiveType::Decimal {
            precision: 4,
            scale: 2,
        };
        let (lo, hi) = decode_min_max(&stats, &ty);
        assert_eq!(lo, Some(decimal(-129, 4, 2)));
        assert_eq!(hi, Some(decimal(1420, 4, 2)));
    }

    #[test]
    fn orders_and_merges() {
        let m = merge_min(merge_min(None, Datum::Int(3)), Datum::Int(-2));
        assert_eq!(m, Some(Datum::Int(-2)));
        let m = merge_max(merge_max(None, Datum::Int(3)), Datum::Int(-2));
        assert_eq!(m, Some(Datum::Int(3)));
    }
}
