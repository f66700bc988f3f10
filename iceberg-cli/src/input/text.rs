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
//! allowed, and anything out of range. Text without a zone written into a `timestamptz`
//! column is read as UTC, as Spark does with its default UTC session zone.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow_cast::CastOptions;
use arrow_schema::{DataType, TimeUnit};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
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
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (hour, minute) = (digits(&b[11..13])?, digits(&b[14..16])?);
    let mut rest = &b[16..];
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
    let time = NaiveTime::from_hms_opt(hour, minute, second)?;
    Some(Parsed {
        local: date.and_time(time),
        nanos_in_second: nanos,
        offset_secs,
        date_only: false,
    })
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

fn timestamps(
    column: &StringArray,
    unit: TimeUnit,
    zoned: bool,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    let per_unit: i128 = match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    };
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
        let nanos = p.epoch_nanos().ok_or("out of range")?;
        if nanos % per_unit != 0 && !rules.allow_rounding {
            return Err(format!(
                "more fraction digits than the column keeps; {ROUNDING_HINT}"
            ));
        }
        Ok(i64::try_from(nanos.div_euclid(per_unit)).map_err(|_| "out of range")?)
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

fn decimals(
    column: &StringArray,
    precision: u8,
    scale: i8,
    expected: &str,
    rules: Rules,
) -> Result<ArrayRef, Refusal> {
    let limit = 10i128.pow(u32::from(precision));
    let out = each(column, expected, |text| {
        let (mut unscaled, mut have) = parse_big_decimal(text).ok_or("not a decimal")?;
        let want = i64::from(scale);
        while have < want {
            unscaled = unscaled.checked_mul(10).ok_or("out of range")?;
            have += 1;
        }
        if have > want {
            let drop = u32::try_from(have - want).map_err(|_| "out of range")?;
            let div = 10i128.checked_pow(drop).ok_or("out of range")?;
            let (q, r) = (unscaled / div, unscaled % div);
            if r != 0 && !rules.allow_rounding {
                return Err(format!(
                    "more digits after the point than the scale {scale} keeps; {ROUNDING_HINT}"
                ));
            }
            // Half up, away from zero, as Java's BigDecimal.ROUND_HALF_UP and Spark do.
            unscaled = q + if r.abs() * 2 >= div { r.signum() } else { 0 };
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
mod tests {
    #![allow(clippy::unwrap_used)]
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, TimestampMicrosecondType};
    use proptest::prelude::*;

    use super::*;

    fn infer(values: &[&str]) -> Kind {
        values
            .iter()
            .fold(Kind::Nothing, |k, v| k.merge(Kind::of(v, false)))
    }

    #[test]
    fn inference_keeps_zones_codes_and_precision() {
        assert_eq!(infer(&["1", "-2", "+3"]), Kind::Long);
        assert_eq!(infer(&["1", "2.5", "1e3"]), Kind::Double);
        assert_eq!(
            infer(&["007", "12"]),
            Kind::String,
            "a code keeps its zeros"
        );
        assert_eq!(infer(&["99999999999999999999"]), Kind::String);
        assert_eq!(infer(&["NaN", "inf"]), Kind::String);
        assert_eq!(infer(&["true", "FALSE"]), Kind::Boolean);
        assert_eq!(infer(&["2024-01-01", "2024-02-29"]), Kind::Date);
        assert_eq!(infer(&["2023-02-29"]), Kind::String, "no such day");
        assert_eq!(
            infer(&["2024-01-01T10:00:00", "2024-01-01 10:00"]),
            Kind::Timestamp(false)
        );
        assert_eq!(
            infer(&["2024-01-01T10:00:00Z", "2024-01-01T10:00:00+02:00"]),
            Kind::Timestamptz(false)
        );
        assert_eq!(
            infer(&["2024-01-01T10:00:00.123456789-0130"]),
            Kind::Timestamptz(true)
        );
        assert_eq!(
            infer(&["2024-01-01T10:00:00.123456000"]),
            Kind::Timestamp(false)
        );
        assert_eq!(
            infer(&["2024-01-01T10:00:00Z", "2024-01-01T10:00:00"]),
            Kind::String,
            "a mix of instants and local times is neither"
        );
        assert_eq!(infer(&["2024-01-01", "2024-01-01T10:00:00"]), Kind::String);
        assert_eq!(infer(&[]), Kind::Nothing);
        assert_eq!(Kind::Nothing.data_type(), DataType::Utf8);
        assert_eq!(Kind::of("12", true), Kind::String, "JSON strings stay text");
    }

    fn column(values: &[Option<&str>]) -> StringArray {
        StringArray::from(values.to_vec())
    }

    #[test]
    fn timestamps_keep_the_instant_or_are_refused() {
        let tz = DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()));
        let c = column(&[
            Some("2024-01-01T12:00:00+02:00"),
            None,
            Some("2024-01-01T10:00:00Z"),
            Some("2024-01-01T10:00:00"),
        ]);
        let a = convert(&c, &tz, "timestamptz", Rules::default()).unwrap();
        let a = a.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(a.value(0), 1_704_103_200_000_000);
        assert_eq!(a.value(0), a.value(2), "same instant");
        assert_eq!(a.value(3), a.value(0), "no zone is UTC");
        assert!(a.is_null(1));

        let local = DataType::Timestamp(TimeUnit::Microsecond, None);
        let e = convert(
            &column(&[Some("2024-01-01T10:00:00"), Some("2024-01-01T10:00:00Z")]),
            &local,
            "timestamp",
            Rules::default(),
        )
        .unwrap_err();
        assert_eq!(e.0, 1);
        assert!(e.1.contains("zone"), "{}", e.1);

        let ns = column(&[Some("1969-12-31T23:59:59.999999999")]);
        let e = convert(&ns, &local, "timestamp", Rules::default()).unwrap_err();
        assert!(e.1.contains("--allow-rounding"), "{}", e.1);
        let a = convert(
            &ns,
            &local,
            "timestamp",
            Rules {
                allow_rounding: true,
            },
        )
        .unwrap();
        assert_eq!(
            a.as_primitive::<TimestampMicrosecondType>().value(0),
            -1,
            "floored"
        );
        let nano = DataType::Timestamp(TimeUnit::Nanosecond, None);
        let a = convert(&ns, &nano, "timestamp_ns", Rules::default()).unwrap();
        assert_eq!(
            a.as_primitive::<arrow_array::types::TimestampNanosecondType>()
                .value(0),
            -1
        );
        assert!(
            convert(
                &column(&[Some("yesterday")]),
                &local,
                "timestamp",
                Rules::default()
            )
            .is_err()
        );
    }

    #[test]
    fn decimals_are_exact_unless_rounding_is_allowed() {
        let to = DataType::Decimal128(10, 2);
        let ok = column(&[
            Some("12.3"),
            Some("-0.05"),
            Some("1.2e1"),
            Some("12.340"),
            Some("99999999.99"),
        ]);
        let a = convert(&ok, &to, "decimal(10, 2)", Rules::default()).unwrap();
        let a = a.as_primitive::<Decimal128Type>();
        assert_eq!(
            a.values().to_vec(),
            vec![1230, -5, 1200, 1234, 9_999_999_999]
        );
        let e = convert(
            &column(&[Some("12.345")]),
            &to,
            "decimal(10, 2)",
            Rules::default(),
        )
        .unwrap_err();
        assert!(
            e.1.contains("12.345") && e.1.contains("--allow-rounding"),
            "{}",
            e.1
        );
        let a = convert(
            &column(&[Some("12.345"), Some("-12.345"), Some("12.344")]),
            &to,
            "d",
            Rules {
                allow_rounding: true,
            },
        )
        .unwrap();
        assert_eq!(
            a.as_primitive::<Decimal128Type>().values().to_vec(),
            vec![1235, -1235, 1234]
        );
        let e = convert(
            &column(&[Some("100000000")]),
            &to,
            "d",
            Rules {
                allow_rounding: true,
            },
        )
        .unwrap_err();
        assert!(e.1.contains("precision"), "{}", e.1);
        assert!(convert(&column(&[Some("1.2.3")]), &to, "d", Rules::default()).is_err());
    }

    proptest! {
        /// A timestamp written as text (any offset) converts back to the instant it names.
        #[test]
        fn timestamp_text_round_trips(micros in -62_135_596_800_000_000i64..253_402_300_799_000_000, offset_min in -1080i32..=1080) {
            let utc = chrono::DateTime::from_timestamp_micros(micros).unwrap();
            let off = chrono::FixedOffset::east_opt(offset_min * 60).unwrap();
            let text = utc.with_timezone(&off).format("%Y-%m-%dT%H:%M:%S%.6f%:z").to_string();
            let to = DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()));
            let a = convert(&column(&[Some(&text)]), &to, "timestamptz", Rules::default()).unwrap();
            prop_assert_eq!(a.as_primitive::<TimestampMicrosecondType>().value(0), micros);
            prop_assert_eq!(Kind::of(&text, false), Kind::Timestamptz(false));
        }

        /// A decimal with at most the column's scale converts to exactly its digits.
        #[test]
        fn decimal_text_round_trips(unscaled in -9_999_999_999i64..=9_999_999_999, scale in 0i8..=4) {
            let to = DataType::Decimal128(10, scale);
            let text = arrow_array::Decimal128Array::from(vec![i128::from(unscaled)])
                .with_precision_and_scale(10, scale).unwrap().value_as_string(0);
            let a = convert(&column(&[Some(&text)]), &to, "d", Rules::default()).unwrap();
            prop_assert_eq!(a.as_primitive::<Decimal128Type>().value(0), i128::from(unscaled));
        }
    }
}
