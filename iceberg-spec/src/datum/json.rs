//! The spec's JSON single-value serialization (`initial-default`, `write-default`).
//!
//! Writing follows Java `SingleValueParser` except that times and timestamps always carry the
//! type's full fraction (6 digits, or 9 for the `_ns` types) as the spec's examples do; Java
//! trims the fraction. Readers (Java, PyIceberg, iceberg-rust) accept both.

use serde_json::Value;

use super::civil::{self, DateTimeParts, TimeOfDay};
use super::{Datum, fits_precision, hex_upper, plain_decimal};
use crate::error::{Error, Result};
use crate::types::PrimitiveType;

/// Offsets accepted for the `tz` types: only UTC, spelled as Java's parser allows.
const UTC_OFFSETS: [&str; 3] = ["+00:00", "-00:00", "Z"];

impl Datum {
    /// The spec's JSON single-value form: booleans and numbers as JSON values (NaN and
    /// infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`, as Jackson writes them),
    /// decimal as a string keeping its scale (`"14.20"`), ISO date/time text (`"+00:00"` for
    /// the `tz` types), lower-case uuid, and upper-case hex for fixed and binary.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Boolean(v) => Value::Bool(*v),
            Self::Int(v) => Value::from(*v),
            Self::Long(v) => Value::from(*v),
            // The shortest f32 text, read back as f64, writes `0.1` rather than the widened
            // `0.10000000149011612`; it converts back to the same f32.
            Self::Float(v) => float_json(v.to_string().parse().unwrap_or(f64::from(*v))),
            Self::Double(v) => float_json(*v),
            Self::Decimal {
                unscaled, scale, ..
            } => Value::String(plain_decimal(*unscaled, *scale)),
            Self::String(v) => Value::String(v.clone()),
            Self::Uuid(v) => Value::String(v.hyphenated().to_string()),
            Self::Fixed(v) | Self::Binary(v) => Value::String(hex_upper(v)),
            Self::Date(_)
            | Self::Time(_)
            | Self::Timestamp(_)
            | Self::Timestamptz(_)
            | Self::TimestampNs(_)
            | Self::TimestamptzNs(_) => Value::String(self.temporal_text()),
        }
    }

    /// ISO text of a date, time or timestamp value; empty for other types.
    ///
    /// A `time` outside one day (not a valid value) is wrapped into the day.
    pub(crate) fn temporal_text(&self) -> String {
        match self {
            Self::Date(d) => civil::iso_date(*d),
            Self::Time(us) => {
                let ns = us.rem_euclid(civil::MICROS_PER_DAY) * civil::NANOS_PER_MICRO;
                let t = TimeOfDay::from_nanos_of_day(ns).unwrap_or(TimeOfDay {
                    hour: 0,
                    minute: 0,
                    second: 0,
                    nanosecond: 0,
                });
                civil::fixed_time(&t, 6)
            }
            Self::Timestamp(us) => civil::fixed_date_time(&DateTimeParts::from_micros(*us), 6),
            Self::Timestamptz(us) => {
                civil::fixed_date_time(&DateTimeParts::from_micros(*us), 6) + "+00:00"
            }
            Self::TimestampNs(ns) => civil::fixed_date_time(&DateTimeParts::from_nanos(*ns), 9),
            Self::TimestamptzNs(ns) => {
                civil::fixed_date_time(&DateTimeParts::from_nanos(*ns), 9) + "+00:00"
            }
            _ => String::new(),
        }
    }

    /// Parses the spec's JSON single-value form of a value of type `ty`.
    ///
    /// Accepts what Java's `SingleValueParser` accepts: integral numbers in range for int and
    /// long, any number for float and double (plus `"NaN"`, `"Infinity"`, `"-Infinity"`), a
    /// decimal string whose scale equals the type's, ISO dates/times with 0-9 fraction digits,
    /// a UTC offset (`+00:00`, `Z`) on exactly the `tz` types, a 36-character uuid, and hex in
    /// either case (exactly 2·L digits for `fixed[L]`).
    ///
    /// # Errors
    /// [`Error::InvalidValue`] naming the type and the offending JSON; also for JSON `null`
    /// (absence is the caller's business) and for sub-microsecond digits on a µs type.
    pub fn from_json(ty: &PrimitiveType, v: &Value) -> Result<Datum> {
        let bad = |why: &str| Error::invalid_value(ty, format!("cannot parse JSON {v}: {why}"));
        let text = || v.as_str().ok_or_else(|| bad("expected a string"));
        use PrimitiveType as P;
        Ok(match ty {
            P::Boolean => Self::Boolean(v.as_bool().ok_or_else(|| bad("expected a boolean"))?),
            P::Int => Self::Int(
                v.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| bad("expected an integer in int range"))?,
            ),
            P::Long => Self::Long(v.as_i64().ok_or_else(|| bad("expected a long integer"))?),
            P::Float => Self::Float(json_float(v).ok_or_else(|| bad("expected a number"))? as f32),
            P::Double => Self::Double(json_float(v).ok_or_else(|| bad("expected a number"))?),
            P::Decimal { precision, scale } => {
                let (unscaled, found) =
                    parse_big_decimal(text()?).ok_or_else(|| bad("not a decimal"))?;
                if found != i64::from(*scale) {
                    return Err(bad(&format!(
                        "scale {found} does not match the type's {scale}"
                    )));
                }
                if !fits_precision(unscaled, *precision) {
                    return Err(bad("more digits than the precision"));
                }
                Self::Decimal {
                    unscaled,
                    precision: *precision,
                    scale: *scale,
                }
            }
            P::Date => {
                let days = civil::parse_iso_date(text()?).ok_or_else(|| bad("not an ISO date"))?;
                Self::Date(i32::try_from(days).map_err(|_| bad("date out of range"))?)
            }
            P::Time => {
                let t = civil::parse_iso_time(text()?).ok_or_else(|| bad("not an ISO time"))?;
                Self::Time(
                    to_micros(t.nanos_of_day()).ok_or_else(|| bad("sub-microsecond digits"))?,
                )
            }
            P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs => {
                let tz = matches!(ty, P::Timestamptz | P::TimestamptzNs);
                let s = strip_offset(text()?, tz).ok_or_else(|| {
                    bad(if tz {
                        "offset must be +00:00"
                    } else {
                        "must not carry an offset"
                    })
                })?;
                let (days, nanos) =
                    civil::parse_iso_date_time(s).ok_or_else(|| bad("not an ISO timestamp"))?;
                let total = i128::from(days) * i128::from(civil::NANOS_PER_DAY) + i128::from(nanos);
                let ns = i64::try_from(total).ok();
                match ty {
                    P::TimestampNs => Self::TimestampNs(ns.ok_or_else(|| bad("out of range"))?),
                    P::TimestamptzNs => Self::TimestamptzNs(ns.ok_or_else(|| bad("out of range"))?),
                    _ => {
                        let us = i128_to_micros(total)
                            .ok_or_else(|| bad("out of range or sub-microsecond digits"))?;
                        if tz {
                            Self::Timestamptz(us)
                        } else {
                            Self::Timestamp(us)
                        }
                    }
                }
            }
            P::String => Self::String(text()?.to_string()),
            P::Uuid => {
                let s = text()?;
                if s.len() != 36 {
                    return Err(bad("expected 36 characters"));
                }
                Self::Uuid(uuid::Uuid::parse_str(s).map_err(|e| bad(&e.to_string()))?)
            }
            P::Fixed(len) => {
                let bytes = parse_hex(text()?).ok_or_else(|| bad("not hex"))?;
                if bytes.len() as u64 != *len {
                    return Err(bad(&format!("expected {len} bytes, found {}", bytes.len())));
                }
                Self::Fixed(bytes)
            }
            P::Binary => Self::Binary(parse_hex(text()?).ok_or_else(|| bad("not hex"))?),
            P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => {
                return Err(bad("no single-value form as a Datum"));
            }
        })
    }
}

fn float_json(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

fn json_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn to_micros(nanos: i64) -> Option<i64> {
    (nanos % civil::NANOS_PER_MICRO == 0).then_some(nanos / civil::NANOS_PER_MICRO)
}

fn i128_to_micros(nanos: i128) -> Option<i64> {
    let per = i128::from(civil::NANOS_PER_MICRO);
    if nanos % per != 0 {
        return None;
    }
    i64::try_from(nanos / per).ok()
}

/// The text without its offset; `None` when the offset is missing for a `tz` type, not UTC,
/// or present on a type without zone.
fn strip_offset(s: &str, tz: bool) -> Option<&str> {
    let found = UTC_OFFSETS.iter().find_map(|o| s.strip_suffix(o));
    match (tz, found) {
        (true, found) => found,
        (false, None) if !s.ends_with(['z', 'Z']) && !has_numeric_offset(s) => Some(s),
        (false, _) => None,
    }
}

/// True when the time part ends with `+hh:mm` or `-hh:mm`.
fn has_numeric_offset(s: &str) -> bool {
    s.rsplit_once(['T', 't'])
        .is_some_and(|(_, time)| time.contains(['+', '-']))
}

/// Java `new BigDecimal(text)`: `[+-]digits[.digits][E[+-]digits]` to (unscaled, scale);
/// `None` for other text or more digits than an `i128` holds.
pub fn parse_big_decimal(s: &str) -> Option<(i128, i64)> {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (negative, mantissa) = match mantissa.as_bytes().first()? {
        b'-' => (true, &mantissa[1..]),
        b'+' => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut unscaled: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        if !b.is_ascii_digit() {
            return None;
        }
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    let scale = (frac.len() as i64).checked_sub(exp)?;
    Some((if negative { -unscaled } else { unscaled }, scale))
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let nibble = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks_exact(2)
        .map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}
