//! What a text value means, for CSV fields and NDJSON strings alike: the type a column of
//! text is inferred as, and the strict conversion of text into a table column's type.
//!
//! Inference, narrowest first: `true`/`false` → boolean; an integer that fits 64 bits and
//! has no leading zero (`007` is a code, not a number) → long (past 64 bits, string); a
//! number with a digit → double; `YYYY-MM-DD` → date; a date and a time (`T` or a space between, seconds and up
//! to nine fraction digits optional) → timestamp when it has no zone, timestamptz when it
//! ends in `Z` or an offset (`+02:00`, `+0200`, `+02`), nanosecond precision when a value
//! has digits past the sixth; anything else, or a mix (zoned and unzoned timestamps, dates
//! and numbers), → string. A column of nulls only is a string.
//!
//! Conversion refuses what would lose information, naming the value: an offset written into
//! a `timestamp` column (it has no zone to keep it in), digits past a column's precision (a
//! decimal's scale, a microsecond timestamp's sixth fraction digit) unless rounding is
//! allowed, and anything out of range. A `time` is `HH:MM[:SS[.f]]` within one day. Text
//! without a zone written into a `timestamptz` column is read as UTC (Spark would take its
//! session zone, by default the machine's).

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, FixedSizeBinaryArray, StringArray,
    Time64MicrosecondArray, Time64NanosecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow_cast::CastOptions;
use arrow_schema::{DataType, TimeUnit};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use iceberg_spec::datum::parse_big_decimal;

/// A timezone for timestamptz columns inferred from text.
pub(crate) const UTC: &str = "+00:00";

/// What one column's text values, seen so far, can all be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Kind {
    /// No value seen (only nulls).
    #[default]
    Nothing,
    /// `true` / `false`.
    Boolean,
    /// An integer fitting 64 bits.
    Long,
    /// A number.
    Double,
    /// A date.
    Date,
    /// A timestamp without zone; `true` when a value needs nanoseconds.
    Timestamp(bool),
    /// A timestamp with a zone or offset; `true` when a value needs nanoseconds.
    Timestamptz(bool),
    /// Anything else.
    String,
}

impl Kind {
    /// The kind of one value on its own; `temporal_only` leaves numbers and booleans text
    /// (JSON has its own types for those).
    pub(crate) fn of(text: &str, temporal_only: bool) -> Self {
        if let Some(ts) = parse_timestamp(text) {
            let nanos = ts.nanos_in_second % 1000 != 0;
            return match (ts.date_only, ts.offset_secs) {
                (true, _) => Self::Date,
                (false, None) => Self::Timestamp(nanos),
                (false, Some(_)) => Self::Timestamptz(nanos),
            };
        }
        if temporal_only {
            return Self::String;
        }
        if text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false") {
            return Self::Boolean;
        }
        if is_integer(text) {
            // A whole number past 64 bits would lose digits as a double: it stays text.
            return if text.parse::<i64>().is_ok() {
                Self::Long
            } else {
                Self::String
            };
        }
        let digits = text.trim_start_matches(['+', '-']);
        let leading_zero = digits.len() > 1
            && digits.starts_with('0')
            && digits.as_bytes().get(1).is_some_and(u8::is_ascii_digit);
        if text.bytes().any(|b| b.is_ascii_digit())
            && !leading_zero
            && text.bytes().all(|b| b"+-.eE0123456789".contains(&b))
            && text.parse::<f64>().is_ok_and(f64::is_finite)
        {
            return Self::Double;
        }
        Self::String
    }

    /// The narrowest kind holding both.
    pub(crate) fn merge(self, other: Self) -> Self {
        use Kind as K;
        match (self, other) {
            (K::Nothing, k) | (k, K::Nothing) => k,
            (a, b) if a == b => a,
            (K::Long, K::Double) | (K::Double, K::Long) => K::Double,
            (K::Timestamp(a), K::Timestamp(b)) => K::Timestamp(a || b),
            (K::Timestamptz(a), K::Timestamptz(b)) => K::Timestamptz(a || b),
            _ => K::String,
        }
    }

    /// The Arrow type a column of this kind is read as.
    pub(crate) fn data_type(self) -> DataType {
        let unit = |nanos: bool| {
            if nanos {
                TimeUnit::Nanosecond
            } else {
                TimeUnit::Microsecond
            }
        };
        match self {
            Self::Nothing | Self::String => DataType::Utf8,
            Self::Boolean => DataType::Boolean,
            Self::Long => DataType::Int64,
            Self::Double => DataType::Float64,
            Self::Date => DataType::Date32,
            Self::Timestamp(n) => DataType::Timestamp(unit(n), None),
            Self::Timestamptz(n) => DataType::Timestamp(unit(n), Some(UTC.into())),
        }
    }
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'))
}

/// A parsed date or timestamp text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// The local date and time (to the second).
    pub(crate) local: NaiveDateTime,
    /// Nanoseconds past the second, as written.
    pub(crate) nanos_in_second: u32,
    /// The offset from UTC, when written.
    pub(crate) offset_secs: Option<i32>,
    /// Only a date was written.
    pub(crate) date_only: bool,
}

impl Parsed {
    /// Nanoseconds since the epoch of the instant (the local time as UTC without offset).
    fn epoch_nanos(&self) -> Option<i128> {
        let secs = self.local.and_utc().timestamp() - i64::from(self.offset_secs.unwrap_or(0));
        Some(i128::from(secs) * 1_000_000_000 + i128::from(self.nanos_in_second))
    }
}

/// The value of 1 to 9 ASCII digits.
fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 {
        return None;
    }
    s.iter().try_fold(0u32, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// `YYYY-MM-DD`, optionally `[T ]HH:MM[:SS[.fffffffff]]` and `Z` / `±HH[:MM]` / `±HHMM`.
pub(crate) fn parse_timestamp(text: &str) -> Option<Parsed> {
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(digits(&b[0..4])?).ok()?,
        digits(&b[5..7])?,
        digits(&b[8..10])?,
    )?;
    if b.len() == 10 {
        return Some(Parsed {
            local: date.and_hms_opt(0, 0, 0)?,
            nanos_in_second: 0,
            offset_secs: None,
            date_only: true,
        });
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (time, nanos, rest) = time_of_day(&b[11..])?;
    let offset_secs = match rest {
        [] => None,
        [b'Z' | b'z'] => Some(0),
        [sign @ (b'+' | b'-'), tail @ ..] => {
            let (h, m) = match tail {
                [h1, h2] => (digits(&[*h1, *h2])?, 0),
                [h1, h2, b':', m1, m2] | [h1, h2, m1, m2] => {
                    (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?)
                }
                _ => return None,
            };
            if h > 18 || m > 59 {
                return None;
            }
            let secs = i32::try_from(h * 3600 + m * 60).ok()?;
            Some(if *sign == b'-' { -secs } else { secs })
        }
        _ => return None,
    };
    Some(Parsed {
        local: date.and_time(time),
        nanos_in_second: nanos,
        offset_secs,
        date_only: false,
    })
}

/// `HH:MM[:SS[.fffffffff]]` at the start of `b` (00:00 to 23:59:59.999999999): the time to
/// the second, the nanoseconds past it as written, and what follows.
fn time_of_day(b: &[u8]) -> Option<(NaiveTime, u32, &[u8])> {
    if b.len() < 5 || b[2] != b':' {
        return None;
    }
    let (hour, minute) = (digits(&b[0..2])?, digits(&b[3..5])?);
    let mut rest = &b[5..];
    let mut second = 0;
    let mut nanos = 0;
    if let [b':', s1, s2, tail @ ..] = rest {
        second = digits(&[*s1, *s2])?;
        rest = tail;
        if let [b'.', tail @ ..] = rest {
            let n = tail.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 || n > 9 {
                return None;
            }
            nanos = digits(&tail[..n])? * 10u32.pow(9 - u32::try_from(n).ok()?);
            rest = &tail[n..];
        }
    }
    Some((NaiveTime::from_hms_opt(hour, minute, second)?, nanos, rest))
}

/// How conversion treats values a column cannot hold exactly.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rules {
    /// Round digits past a column's precision (half up for decimals, down for timestamps)
    /// instead of refusing them.
    pub(crate) allow_rounding: bool,
}

/// Why a value was refused: row index in the column and the message.
pub(crate) type Refusal = (usize, String);

const ROUNDING_HINT: &str = "pass --allow-rounding to round";

/// `column` (text) as `to`, refusing what it cannot hold exactly (see the module docs).
///
/// # Errors
/// The first value refused, with its row index; a type text cannot become has row 0.
pub(crate) fn convert(
    column: &StringArray,
    to: &DataType,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    match to {
        DataType::Timestamp(unit, tz) => timestamps(column, *unit, tz.is_some(), expected, rules),
        DataType::Date32 => {
            let out = each(column, expected, |text| match parse_timestamp(text) {
                Some(p) if p.date_only => Ok(epoch_days(p.local.date())),
                _ => Err("not a date (YYYY-MM-DD)".into()),
            })?;
            Ok(Arc::new(Date32Array::from(out)))
        }
        DataType::Decimal128(p, s) => decimals(column, *p, *s, expected, rules),
        DataType::Time64(unit) => times(column, *unit, expected, rules),
        DataType::FixedSizeBinary(16) => uuids(column, expected),
        _ => {
            let strict = CastOptions {
                safe: false,
                ..Default::default()
            };
            let column: &dyn Array = column;
            arrow_cast::cast_with_options(column, to, &strict).map_err(|e| {
                // Find the first value that does not convert, to show it.
                let lenient = arrow_cast::cast(column, to).ok();
                let text = column.as_any().downcast_ref::<StringArray>();
                let bad = lenient
                    .as_ref()
                    .and_then(|l| (0..column.len()).find(|&i| column.is_valid(i) && l.is_null(i)));
                match (bad, text) {
                    (Some(i), Some(text)) => {
                        (i, format!("expected {expected}, found {:?}", text.value(i)))
                    }
                    _ => (0, format!("expected {expected}, cannot convert text: {e}")),
                }
            })
        }
    }
}

fn epoch_days(date: NaiveDate) -> i32 {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    // A four-digit year is always within i32 days of 1970.
    i32::try_from(date.signed_duration_since(epoch).num_days()).unwrap_or(i32::MAX)
}

/// Each value of `column` through `f` (nulls stay null); the first refusal, with its row
/// and the value, ends it.
fn each<T>(
    column: &StringArray,
    expected: &str,
    mut f: impl FnMut(&str) -> Result<T, String>,
) -> Result<Vec<Option<T>>, Refusal> {
    column
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.map(|text| f(text).map_err(|why| (i, found(expected, text, &why))))
                .transpose()
        })
        .collect()
}

fn found(expected: &str, text: &str, why: &str) -> String {
    format!("expected {expected}, found {text:?}: {why}")
}

/// `nanos` in `unit`, floored; digits past the unit are refused unless rounding is allowed.
fn in_unit(nanos: i128, unit: TimeUnit, rules: Rules) -> Result<i64, String> {
    let per_unit: i128 = match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    };
    if nanos % per_unit != 0 && !rules.allow_rounding {
        return Err(format!(
            "more fraction digits than the column keeps; {ROUNDING_HINT}"
        ));
    }
    i64::try_from(nanos.div_euclid(per_unit)).map_err(|_| "out of range".into())
}

fn timestamps(
    column: &StringArray,
    unit: TimeUnit,
    zoned: bool,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    let out = each(column, expected, |text| {
        let p = parse_timestamp(text)
            .ok_or("not a timestamp (YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM])")?;
        if p.offset_secs.is_some() && !zoned {
            return Err(
                "it has a zone, which a timestamp without zone cannot keep (the column \
                        would need to be timestamptz)"
                    .into(),
            );
        }
        in_unit(p.epoch_nanos().ok_or("out of range")?, unit, rules)
    })?;
    let tz = zoned.then(|| Arc::<str>::from(UTC));
    let array: ArrayRef = match unit {
        TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::from(out).with_timezone_opt(tz)),
        TimeUnit::Microsecond => {
            Arc::new(TimestampMicrosecondArray::from(out).with_timezone_opt(tz))
        }
        other => {
            return Err((
                0,
                format!("expected {expected}: {other:?} timestamps are not read from text"),
            ));
        }
    };
    Ok(array)
}

/// `HH:MM[:SS[.fffffffff]]` only (Arrow's own cast takes `1200` as 1,200 us past midnight),
/// refusing digits past the column's unit unless rounding (down) is allowed.
fn times(
    column: &StringArray,
    unit: TimeUnit,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    if !matches!(unit, TimeUnit::Microsecond | TimeUnit::Nanosecond) {
        return Err((
            0,
            format!("expected {expected}: {unit:?} times are not read from text"),
        ));
    }
    let out = each(column, expected, |text| {
        let (time, nanos, _) = time_of_day(text.as_bytes())
            .filter(|(_, _, rest)| rest.is_empty())
            .ok_or("not a time of day (HH:MM[:SS[.ffffff]], 00:00 to 23:59:59.999999)")?;
        let secs = i128::from(time.num_seconds_from_midnight());
        in_unit(secs * 1_000_000_000 + i128::from(nanos), unit, rules)
    })?;
    Ok(match unit {
        TimeUnit::Nanosecond => Arc::new(Time64NanosecondArray::from(out)),
        _ => Arc::new(Time64MicrosecondArray::from(out)),
    })
}

/// 16 bytes written as a uuid (`550e8400-e29b-41d4-a716-446655440000` in any case, braced,
/// `urn:uuid:`, or 32 hex digits), for uuid and `fixed[16]` columns: Arrow has no cast from
/// text (every CSV uuid was refused) and arrow-json took only the 32 bare digits.
fn uuids(column: &StringArray, expected: &str) -> Result<ArrayRef, Refusal> {
    let out = each(column, expected, |text| {
        uuid::Uuid::parse_str(text.trim())
            .map(|u| *u.as_bytes())
            .map_err(|_| "not a uuid (8-4-4-4-12 hex digits)".to_string())
    })?;
    let array = FixedSizeBinaryArray::try_from_sparse_iter_with_size(out.into_iter(), 16)
        .map_err(|e| (0, format!("expected {expected}: {e}")))?;
    Ok(Arc::new(array))
}

fn decimals(
    column: &StringArray,
    precision: u8,
    scale: i8,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    let limit = 10i128.pow(u32::from(precision));
    let out = each(column, expected, |text| {
        let (mut unscaled, have) = parse_big_decimal(text).ok_or("not a decimal")?;
        let want = i64::from(scale);
        if unscaled == 0 {
            // Any exponent: zero (`0e9223372036854775807` would scale forever).
        } else if have < want {
            let up = want
                .checked_sub(have)
                .and_then(|n| u32::try_from(n).ok())
                .and_then(|n| 10i128.checked_pow(n))
                .ok_or("out of range")?;
            unscaled = unscaled.checked_mul(up).ok_or("out of range")?;
        } else if have > want {
            // Past 10^38 the divisor overflows, and every i128 is under half of it: 0 rest
            // the value.
            let div = have
                .checked_sub(want)
                .and_then(|n| u32::try_from(n).ok())
                .and_then(|n| 10i128.checked_pow(n));
            let (q, r, half) = match div {
                // `div` is a power of ten (even): `|r| >= div / 2` is `2|r| >= div` without
                // overflowing.
                Some(div) => (
                    unscaled / div,
                    unscaled % div,
                    (unscaled % div).abs() >= div / 2,
                ),
                None => (0, unscaled, false),
            };
            if r != 0 && !rules.allow_rounding {
                return Err(format!(
                    "more digits after the point than the scale {scale} keeps; {ROUNDING_HINT}"
                ));
            }
            // Half up, away from zero, as Java's BigDecimal.ROUND_HALF_UP and Spark do.
            unscaled = q + if half { r.signum() } else { 0 };
        }
        if unscaled.abs() >= limit {
            return Err(format!("more digits than precision {precision} holds"));
        }
        Ok(unscaled)
    })?;
    let array = Decimal128Array::from(out)
        .with_precision_and_scale(precision, scale)
        .map_err(|e| (0, format!("expected {expected}: {e}")))?;
    Ok(Arc::new(array))
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
