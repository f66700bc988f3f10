//! `year`, `month`, `day` and `hour`: whole calendar units since 1970-01-01T00:00, floored.
//!
//! Spec: "Partition Transforms". Years and months are calendar units of the civil date (not
//! fixed-length divisions); days and hours are floor divisions. Values before 1970 floor
//! towards the past: `1969-12-31T23:59:59.999999` is year, month, day and hour −1. (Java's
//! `DateTimeUtil` at the reviewed commit returns floor − 1 for pre-1970 values exactly
//! 0.999999 s after a unit boundary; we write the floor, as the spec, PyIceberg and
//! iceberg-rust do.)

use super::Transform;
use crate::datum::Datum;
use crate::datum::civil::{self, days_to_ymd};

/// Years since 1970 of a date (days since 1970-01-01).
#[inline]
pub fn date_to_year(days: i32) -> i32 {
    days_to_ymd(days).0 - 1970
}

/// Months since 1970-01 of a date (days since 1970-01-01).
#[inline]
pub fn date_to_month(days: i32) -> i32 {
    let (year, month, _) = days_to_ymd(days);
    // |year| < 6 million, so the product fits.
    (year - 1970) * 12 + month as i32 - 1
}

/// Days since 1970-01-01 of a µs timestamp (the `day` transform's date value).
#[inline]
pub fn micros_to_day(micros: i64) -> i32 {
    // At most 1.07e8 days either way for any i64 µs count.
    micros.div_euclid(civil::MICROS_PER_DAY) as i32
}

/// Years since 1970 of a µs timestamp.
#[inline]
pub fn micros_to_year(micros: i64) -> i32 {
    date_to_year(micros_to_day(micros))
}

/// Months since 1970-01 of a µs timestamp.
#[inline]
pub fn micros_to_month(micros: i64) -> i32 {
    date_to_month(micros_to_day(micros))
}

/// Hours since 1970-01-01T00:00 of a µs timestamp.
///
/// Saturates at the `int` limits, which only timestamps beyond ±245 000 years reach (Java's
/// cast wraps there).
#[inline]
pub fn micros_to_hour(micros: i64) -> i32 {
    let hours = micros.div_euclid(civil::MICROS_PER_HOUR);
    hours.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// Years since 1970 of a ns timestamp.
#[inline]
pub fn nanos_to_year(nanos: i64) -> i32 {
    micros_to_year(nanos.div_euclid(civil::NANOS_PER_MICRO))
}

/// Months since 1970-01 of a ns timestamp.
#[inline]
pub fn nanos_to_month(nanos: i64) -> i32 {
    micros_to_month(nanos.div_euclid(civil::NANOS_PER_MICRO))
}

/// Days since 1970-01-01 of a ns timestamp.
#[inline]
pub fn nanos_to_day(nanos: i64) -> i32 {
    micros_to_day(nanos.div_euclid(civil::NANOS_PER_MICRO))
}

/// Hours since 1970-01-01T00:00 of a ns timestamp.
#[inline]
pub fn nanos_to_hour(nanos: i64) -> i32 {
    micros_to_hour(nanos.div_euclid(civil::NANOS_PER_MICRO))
}

/// A time transform of a date or timestamp; `None` for a pair the spec does not allow.
pub(super) fn temporal_datum(t: &Transform, d: &Datum) -> Option<Datum> {
    type Fns = [fn(i64) -> i32; 4];
    const MICROS: Fns = [
        micros_to_year,
        micros_to_month,
        micros_to_day,
        micros_to_hour,
    ];
    const NANOS: Fns = [nanos_to_year, nanos_to_month, nanos_to_day, nanos_to_hour];
    let unit = match t {
        Transform::Year => 0,
        Transform::Month => 1,
        Transform::Day => 2,
        Transform::Hour => 3,
        _ => return None,
    };
    let value = match d {
        Datum::Date(days) => match t {
            Transform::Year => date_to_year(*days),
            Transform::Month => date_to_month(*days),
            Transform::Day => *days,
            _ => return None,
        },
        Datum::Timestamp(us) | Datum::Timestamptz(us) => MICROS[unit](*us),
        Datum::TimestampNs(ns) | Datum::TimestamptzNs(ns) => NANOS[unit](*ns),
        _ => return None,
    };
    Some(if unit == 2 {
        Datum::Date(value)
    } else {
        Datum::Int(value)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use proptest::prelude::*;

    /// Section 4.2: (timestamp µs, year, month, day, hour), floor semantics.
    const TABLE: [(i64, i32, i32, i32, i32); 6] = [
        (1_510_871_468_000_000, 47, 574, 17_486, 419_686), // 2017-11-16T22:31:08
        (0, 0, 0, 0, 0),                                   // 1970-01-01T00:00:00
        (-1, -1, -1, -1, -1),                              // 1969-12-31T23:59:59.999999
        (-31_536_000_000_000, -1, -12, -365, -8_760),      // 1969-01-01T00:00:00
        (-2_203_848_000_000_000, -70, -838, -25_508, -612_180), // 1900-03-01T12:00:00
        (-3_599_000_001, -1, -1, -1, -1),                  // 1969-12-31T23:00:00.999999
    ];

    #[test]
    fn spec_table_micros_and_nanos() {
        for (us, y, m, d, h) in TABLE {
            assert_eq!(
                (
                    micros_to_year(us),
                    micros_to_month(us),
                    micros_to_day(us),
                    micros_to_hour(us)
                ),
                (y, m, d, h),
                "µs {us}"
            );
            let ns = us * 1_000;
            assert_eq!(
                (
                    nanos_to_year(ns),
                    nanos_to_month(ns),
                    nanos_to_day(ns),
                    nanos_to_hour(ns)
                ),
                (y, m, d, h),
                "ns {ns}"
            );
        }
        // The nanosecond version of the last row: 0.999999999 s after 23:00.
        let ns = -3_599_000_000_001;
        assert_eq!(nanos_to_hour(ns), -1);
        assert_eq!(nanos_to_day(-1), -1);
    }

    #[test]
    fn java_off_by_one_rows_floor() {
        // Rows where Java at the reviewed commit gives floor - 1; we give the floor.
        let day_start = -86_400_000_000i64 + 999_999; // 1969-12-31T00:00:00.999999
        assert_eq!(
            (micros_to_day(day_start), micros_to_hour(day_start)),
            (-1, -24)
        );
        let month_start = -31 * 86_400_000_000i64 + 999_999; // 1969-12-01T00:00:00.999999
        assert_eq!(micros_to_month(month_start), -1);
        let year_start = -31_536_000_000_000i64 + 999_999; // 1969-01-01T00:00:00.999999
        assert_eq!(micros_to_year(year_start), -1);
    }

    #[test]
    fn dates_and_extremes() {
        assert_eq!((date_to_year(17_486), date_to_month(17_486)), (47, 574));
        assert_eq!((date_to_year(-1), date_to_month(-1)), (-1, -1));
        assert_eq!((date_to_year(-25_508), date_to_month(-25_508)), (-70, -838));
        assert_eq!(micros_to_hour(i64::MAX), i32::MAX);
        assert_eq!(micros_to_hour(i64::MIN), i32::MIN);
        assert_eq!(micros_to_year(i64::MAX), 294_247 - 1970);
        assert_eq!(nanos_to_year(i64::MIN), 1677 - 1970);
    }

    proptest! {
        #[test]
        fn monotonic_micros(a in -(1i64 << 60)..(1i64 << 60), b in -(1i64 << 60)..(1i64 << 60)) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(micros_to_year(lo) <= micros_to_year(hi));
            prop_assert!(micros_to_month(lo) <= micros_to_month(hi));
            prop_assert!(micros_to_day(lo) <= micros_to_day(hi));
            prop_assert!(micros_to_hour(lo) <= micros_to_hour(hi));
        }

        #[test]
        fn monotonic_nanos(a in any::<i64>(), b in any::<i64>()) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(nanos_to_year(lo) <= nanos_to_year(hi));
            prop_assert!(nanos_to_month(lo) <= nanos_to_month(hi));
            prop_assert!(nanos_to_day(lo) <= nanos_to_day(hi));
            prop_assert!(nanos_to_hour(lo) <= nanos_to_hour(hi));
        }

        #[test]
        fn units_nest(us in -(1i64 << 60)..(1i64 << 60)) {
            // The day contains the hour, the month contains the day, the year the month.
            prop_assert_eq!(micros_to_hour(us).div_euclid(24), micros_to_day(us));
            prop_assert_eq!(micros_to_month(us).div_euclid(12), micros_to_year(us));
            prop_assert_eq!(date_to_month(micros_to_day(us)), micros_to_month(us));
        }
    }
}
