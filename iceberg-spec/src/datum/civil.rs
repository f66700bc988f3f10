//! Proleptic Gregorian calendar arithmetic on the spec's epoch-based units.
//!
//! Dates are days since 1970-01-01; timestamps are micro- or nanoseconds since
//! 1970-01-01T00:00:00. Every split floors, so a value before 1970 lands in the day, hour
//! and second that contain it (`-1 µs` is 1969-12-31T23:59:59.999999).

/// Microseconds in one second.
pub const MICROS_PER_SECOND: i64 = 1_000_000;
/// Microseconds in one hour.
pub const MICROS_PER_HOUR: i64 = 3_600_000_000;
/// Microseconds in one day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// Nanoseconds in one microsecond.
pub const NANOS_PER_MICRO: i64 = 1_000;
/// Nanoseconds in one day.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Days from 0000-03-01 to 1970-01-01 in the proleptic Gregorian calendar.
const DAYS_0000_03_01_TO_EPOCH: i64 = 719_468;
/// Days in one 400-year Gregorian cycle.
const DAYS_PER_ERA: i64 = 146_097;

/// Year, month (1-12) and day of month (1-31) of `days` since 1970-01-01.
///
/// Howard Hinnant's `civil_from_days`, computed in `i64` so every `i32` input is exact.
pub fn days_to_ymd(days: i32) -> (i32, u32, u32) {
    let z = i64::from(days) + DAYS_0000_03_01_TO_EPOCH;
    let era = z.div_euclid(DAYS_PER_ERA);
    let doe = z.rem_euclid(DAYS_PER_ERA); // day of era, [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of March-based year, [0, 365]
    let mp = (5 * doy + 2) / 153; // March = 0, [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + i64::from(month <= 2);
    // |year| <= 5.9 million for any i32 day count, and month/day are small and positive.
    (year as i32, month as u32, day as u32)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
///
/// Does not validate: month 13 or day 32 roll over like `mktime`. Use
/// [`days_in_month`] to check a date first.
pub fn ymd_to_days(year: i32, month: u32, day: u32) -> i64 {
    let m = i64::from(month);
    let y = i64::from(year) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * DAYS_PER_ERA + doe - DAYS_0000_03_01_TO_EPOCH
}

/// True for Gregorian leap years (divisible by 4, except centuries not divisible by 400).
pub fn is_leap_year(year: i32) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// Number of days in `month` (1-12) of `year`; 0 for a month outside 1-12.
pub fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// A wall-clock time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay {
    /// Hour, 0-23.
    pub hour: u32,
    /// Minute, 0-59.
    pub minute: u32,
    /// Second, 0-59.
    pub second: u32,
    /// Nanoseconds within the second, 0-999 999 999.
    pub nanosecond: u32,
}

impl TimeOfDay {
    /// Splits nanoseconds since midnight; `None` outside `0..86_400_000_000_000`.
    pub fn from_nanos_of_day(nanos: i64) -> Option<Self> {
        if !(0..NANOS_PER_DAY).contains(&nanos) {
            return None;
        }
        let secs = nanos / 1_000_000_000;
        Some(Self {
            hour: (secs / 3_600) as u32,
            minute: (secs / 60 % 60) as u32,
            second: (secs % 60) as u32,
            nanosecond: (nanos % 1_000_000_000) as u32,
        })
    }

    /// Splits microseconds since midnight (the `time` type); `None` outside one day.
    pub fn from_micros_of_day(micros: i64) -> Option<Self> {
        Self::from_nanos_of_day(micros.checked_mul(NANOS_PER_MICRO)?)
    }

    /// Nanoseconds since midnight.
    pub fn nanos_of_day(&self) -> i64 {
        (i64::from(self.hour) * 3_600 + i64::from(self.minute) * 60 + i64::from(self.second))
            * 1_000_000_000
            + i64::from(self.nanosecond)
    }
}

/// A timestamp split into its civil date and time of day (UTC for the `tz` types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTimeParts {
    /// Proleptic Gregorian year (0 is 1 BC, negative before that).
    pub year: i32,
    /// Month, 1-12.
    pub month: u32,
    /// Day of month, 1-31.
    pub day: u32,
    /// Time of day.
    pub time: TimeOfDay,
}

impl DateTimeParts {
    /// Splits microseconds since the epoch (floor semantics before 1970).
    pub fn from_micros(micros: i64) -> Self {
        let days = micros.div_euclid(MICROS_PER_DAY);
        let micros_of_day = micros.rem_euclid(MICROS_PER_DAY);
        Self::from_days_and_nanos(days, micros_of_day * NANOS_PER_MICRO)
    }

    /// Splits nanoseconds since the epoch (floor semantics before 1970).
    pub fn from_nanos(nanos: i64) -> Self {
        Self::from_days_and_nanos(
            nanos.div_euclid(NANOS_PER_DAY),
            nanos.rem_euclid(NANOS_PER_DAY),
        )
    }

    fn from_days_and_nanos(days: i64, nanos_of_day: i64) -> Self {
        // |days| <= 1.07e8 for any i64 microsecond count, so it fits an i32.
        let (year, month, day) = days_to_ymd(days as i32);
        let time = TimeOfDay::from_nanos_of_day(nanos_of_day).unwrap_or(TimeOfDay {
            hour: 0,
            minute: 0,
            second: 0,
            nanosecond: 0,
        });
        Self {
            year,
            month,
            day,
            time,
        }
    }

    /// Days since 1970-01-01 of the date part.
    pub fn epoch_days(&self) -> i64 {
        ymd_to_days(self.year, self.month, self.day)
    }
}

/// Java `ISO_LOCAL_DATE` year: 4 digits at least, `+` above 9999, `-` before year 0.
pub(crate) fn iso_year(year: i32) -> String {
    if year > 9_999 {
        format!("+{year}")
    } else if year < 0 {
        format!("-{:04}", year.unsigned_abs())
    } else {
        format!("{year:04}")
    }
}

/// `yyyy-MM-dd` in Java's `ISO_LOCAL_DATE` form (see [`iso_year`]).
pub(crate) fn iso_date(days: i32) -> String {
    let (y, m, d) = days_to_ymd(days);
    format!("{}-{m:02}-{d:02}", iso_year(y))
}

/// `HH:mm:ss` followed by exactly `digits` fraction digits (none when `digits` is 0).
pub(crate) fn fixed_time(t: &TimeOfDay, digits: u32) -> String {
    let mut s = format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second);
    if digits > 0 {
        let frac = t.nanosecond / 10u32.pow(9 - digits.min(9));
        s.push_str(&format!(".{frac:0width$}", width = digits as usize));
    }
    s
}

/// `yyyy-MM-ddTHH:mm:ss.fff…` with exactly `digits` fraction digits.
pub(crate) fn fixed_date_time(p: &DateTimeParts, digits: u32) -> String {
    format!(
        "{}-{:02}-{:02}T{}",
        iso_year(p.year),
        p.month,
        p.day,
        fixed_time(&p.time, digits)
    )
}

/// Parses Java `ISO_LOCAL_DATE` text (`2017-11-16`, `+10000-01-01`, `-0001-12-31`) to days.
pub(crate) fn parse_iso_date(s: &str) -> Option<i64> {
    let (sign, body) = match s.as_bytes().first()? {
        b'+' => (1i64, &s[1..]),
        b'-' => (-1i64, &s[1..]),
        _ => (1i64, s),
    };
    let mut parts = body.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() < 4 || y.len() > 9 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let year = i32::try_from(sign * digits(y)?).ok()?;
    let month = u32::try_from(digits(m)?).ok()?;
    let day = u32::try_from(digits(d)?).ok()?;
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(ymd_to_days(year, month, day))
}

/// Parses Java `ISO_LOCAL_TIME` text (`HH:mm`, `HH:mm:ss`, `HH:mm:ss.f` with 1-9 digits).
pub(crate) fn parse_iso_time(s: &str) -> Option<TimeOfDay> {
    let (hms, frac) = match s.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (s, None),
    };
    let mut parts = hms.split(':');
    let hour = two_digits(parts.next()?)?;
    let minute = two_digits(parts.next()?)?;
    let second = match parts.next() {
        Some(sec) => two_digits(sec)?,
        None if frac.is_none() => 0,
        None => return None,
    };
    if parts.next().is_some() || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let nanosecond = match frac {
        Some(f) if !f.is_empty() && f.len() <= 9 => {
            let v = u32::try_from(digits(f)?).ok()?;
            v * 10u32.pow(9 - f.len() as u32)
        }
        Some(_) => return None,
        None => 0,
    };
    Some(TimeOfDay {
        hour,
        minute,
        second,
        nanosecond,
    })
}

/// Parses `date 'T' time` (Java `ISO_LOCAL_DATE_TIME`) to (days, nanos of day).
pub(crate) fn parse_iso_date_time(s: &str) -> Option<(i64, i64)> {
    let (date, time) = s.split_once(['T', 't'])?;
    Some((parse_iso_date(date)?, parse_iso_time(time)?.nanos_of_day()))
}

/// ASCII digits to a number; `None` for an empty string, a non-digit or more than 18 digits.
fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn two_digits(s: &str) -> Option<u32> {
    if s.len() != 2 {
        return None;
    }
    u32::try_from(digits(s)?).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use chrono::{Datelike, NaiveDate};
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        let cases = [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (17_486, (2017, 11, 16)),
            (-365, (1969, 1, 1)),
            (-25_508, (1900, 3, 1)),
            (11_016, (2000, 2, 29)),
            (-719_528, (0, 1, 1)),
            (-719_529, (-1, 12, 31)),
            (2_932_896, (9_999, 12, 31)),
            (2_932_897, (10_000, 1, 1)),
        ];
        for (days, ymd) in cases {
            assert_eq!(days_to_ymd(days), ymd, "days {days}");
            assert_eq!(ymd_to_days(ymd.0, ymd.1, ymd.2), i64::from(days), "{ymd:?}");
        }
    }

    #[test]
    fn extreme_days_do_not_overflow() {
        for days in [i32::MIN, i32::MAX] {
            let (y, m, d) = days_to_ymd(days);
            assert_eq!(ymd_to_days(y, m, d), i64::from(days));
        }
    }

    #[test]
    fn timestamp_parts_floor_before_epoch() {
        let p = DateTimeParts::from_micros(-1);
        assert_eq!((p.year, p.month, p.day), (1969, 12, 31));
        assert_eq!(
            p.time,
            TimeOfDay {
                hour: 23,
                minute: 59,
                second: 59,
                nanosecond: 999_999_000
            }
        );
        let p = DateTimeParts::from_nanos(1_510_871_468_000_001_001);
        assert_eq!((p.year, p.month, p.day, p.time.hour), (2017, 11, 16, 22));
        assert_eq!(p.time.nanosecond, 1_001);
        let p = DateTimeParts::from_micros(i64::MIN);
        assert_eq!(p.epoch_days(), i64::MIN.div_euclid(MICROS_PER_DAY));
    }

    #[test]
    fn iso_text_round_trips() {
        assert_eq!(iso_date(17_486), "2017-11-16");
        assert_eq!(iso_date(2_932_897), "+10000-01-01");
        assert_eq!(iso_date(-719_529), "-0001-12-31");
        for days in [0, 17_486, 2_932_897, -719_529, -1] {
            assert_eq!(parse_iso_date(&iso_date(days)), Some(i64::from(days)));
        }
        assert_eq!(parse_iso_date("2017-02-29"), None);
        assert_eq!(parse_iso_date("2017-13-01"), None);
        assert_eq!(parse_iso_date("17-11-16"), None);
        let t = parse_iso_time("22:31").unwrap();
        assert_eq!(fixed_time(&t, 0), "22:31:00");
        let t = parse_iso_time("22:31:08.5").unwrap();
        assert_eq!(fixed_time(&t, 6), "22:31:08.500000");
        assert_eq!(fixed_time(&t, 9), "22:31:08.500000000");
        assert_eq!(parse_iso_time("24:00"), None);
        assert_eq!(parse_iso_time("22:31:08."), None);
        assert_eq!(parse_iso_time("22:31:08.1234567890"), None);
        assert_eq!(parse_iso_time("22:31.5"), None);
    }

    proptest! {
        #[test]
        fn agrees_with_chrono(days in -3_000_000i32..3_000_000) {
            let date = NaiveDate::from_num_days_from_ce_opt(days + 719_163).unwrap();
            prop_assert_eq!(days_to_ymd(days), (date.year(), date.month(), date.day()));
            prop_assert_eq!(ymd_to_days(date.year(), date.month(), date.day()), i64::from(days));
        }

        #[test]
        fn days_round_trip(days in any::<i32>()) {
            let (y, m, d) = days_to_ymd(days);
            prop_assert!(d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(ymd_to_days(y, m, d), i64::from(days));
        }
    }
}
