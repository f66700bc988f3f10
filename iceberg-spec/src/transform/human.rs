//! Human-readable partition values and the `name=value` segments of data-file paths.
//!
//! Follows Java `Transform.toHumanString` / `TransformUtil` and `PartitionSpec.partitionToPath`
//! (checklist section 4.4). Paths are cosmetic, no reader parses them, but matching Java keeps
//! layouts familiar.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::Transform;
use crate::datum::civil::{self, DateTimeParts, TimeOfDay, days_to_ymd};
use crate::datum::{Datum, plain_decimal};
use crate::error::{Error, Result};
use crate::types::PrimitiveType;

impl Transform {
    /// The human string of a partition value produced by this transform from `source_type`.
    ///
    /// `null` for no value; `year` → `2017`, `month` → `2017-11`, `day` → `2017-11-16`,
    /// `hour` → `2017-11-16-22`; identity/truncate values print by type: dates `yyyy-MM-dd`,
    /// times like Java `LocalTime.toString()`, timestamps like `ISO_LOCAL_DATE_TIME` (plus
    /// `+00:00` for the `tz` types), decimals like `BigDecimal.toString()`, floats like Java
    /// `Float.toString()`, uuids lower-case, fixed and binary as padded standard Base64.
    pub fn to_human_string(&self, source_type: &PrimitiveType, value: Option<&Datum>) -> String {
        let Some(value) = value else {
            return "null".to_string();
        };
        match (self, value) {
            (Self::Year, Datum::Int(v)) => format!("{:04}", 1970 + i64::from(*v)),
            (Self::Month, Datum::Int(v)) => {
                let v = i64::from(*v);
                format!("{:04}-{:02}", 1970 + v.div_euclid(12), 1 + v.rem_euclid(12))
            }
            (Self::Day, Datum::Date(v) | Datum::Int(v)) => human_day(*v),
            (Self::Hour, Datum::Int(v)) => {
                let v = i64::from(*v);
                // |v / 24| < 2^27, so the day count fits an int.
                let (y, m, d) = days_to_ymd(v.div_euclid(24) as i32);
                format!("{y:04}-{m:02}-{d:02}-{:02}", v.rem_euclid(24))
            }
            (Self::Identity | Self::Truncate(_) | Self::Void, _) => human_value(source_type, value),
            _ => human_datum(value),
        }
    }
}

impl Transform {
    /// The partition value a human string of [`Transform::to_human_string`] stands for: the
    /// inverse, used to read `name=value` path segments (Hive-style folders included).
    ///
    /// `year` takes `2017`, `month` `2017-11`, `day` `2017-11-16`, `hour` `2017-11-16-22`,
    /// bucket an int; identity and truncate values parse by the source type (numbers,
    /// `true`/`false`, ISO dates, times and timestamps, decimals with at most the type's scale,
    /// uuids, Base64 for fixed and binary). The caller decides what text means null.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] naming the type when the text is not such a value.
    pub fn from_human_string(&self, source_type: &PrimitiveType, text: &str) -> Result<Datum> {
        let result = self.result_type(source_type)?;
        let bad = || Error::invalid_value(&result, format!("`{text}` is not a {self} value"));
        let int = |v: i64| i32::try_from(v).map(Datum::Int).map_err(|_| bad());
        let ymd = parse_human_day;
        match self {
            Self::Year => int(text.parse::<i64>().map_err(|_| bad())? - 1970),
            Self::Month => {
                let (y, m) = text.rsplit_once('-').ok_or_else(bad)?;
                let (y, m) = (y.parse::<i64>(), m.parse::<i64>());
                match (y, m) {
                    (Ok(y), Ok(m)) if (1..=12).contains(&m) && text.len() >= 7 => {
                        int((y - 1970) * 12 + m - 1)
                    }
                    _ => Err(bad()),
                }
            }
            Self::Day => {
                let days = ymd(text).ok_or_else(bad)?;
                i32::try_from(days).map(Datum::Date).map_err(|_| bad())
            }
            Self::Hour => {
                let (day, hour) = text.rsplit_once('-').ok_or_else(bad)?;
                let days = ymd(day).ok_or_else(bad)?;
                match hour.parse::<i64>() {
                    Ok(h) if (0..24).contains(&h) && hour.len() == 2 => int(days * 24 + h),
                    _ => Err(bad()),
                }
            }
            Self::Bucket(_) => int(text.parse::<i64>().map_err(|_| bad())?),
            Self::Identity | Self::Truncate(_) | Self::Void => parse_value(source_type, text),
            Self::Unknown(name) => Err(Self::unknown_error(name)),
        }
    }
}

/// Days since the epoch of Java's `%04d-%02d-%02d` day (`2017-11-16`, `-001-05-02`,
/// `10000-01-01`).
fn parse_human_day(text: &str) -> Option<i64> {
    let mut parts = text.rsplitn(3, '-');
    let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
    if d.len() != 2 || m.len() != 2 || y.trim_start_matches('-').len() < 3 {
        return None;
    }
    let (year, month, day) = (
        y.parse::<i32>().ok()?,
        m.parse::<u32>().ok()?,
        d.parse::<u32>().ok()?,
    );
    if !(1..=12).contains(&month) || day == 0 || day > civil::days_in_month(year, month) {
        return None;
    }
    Some(civil::ymd_to_days(year, month, day))
}

/// A value of type `ty` from its human string.
fn parse_value(ty: &PrimitiveType, text: &str) -> Result<Datum> {
    use PrimitiveType as P;
    let bad = || Error::invalid_value(ty, format!("`{text}` is not a {ty} value"));
    Ok(match ty {
        P::Boolean => match text {
            "true" => Datum::Boolean(true),
            "false" => Datum::Boolean(false),
            _ => return Err(bad()),
        },
        P::Int => Datum::Int(text.parse().map_err(|_| bad())?),
        P::Long => Datum::Long(text.parse().map_err(|_| bad())?),
        P::Float => Datum::Float(parse_java_float(text).ok_or_else(bad)? as f32),
        P::Double => Datum::Double(parse_java_float(text).ok_or_else(bad)?),
        P::Decimal { precision, scale } => {
            let (unscaled, found) = crate::datum::parse_big_decimal(text).ok_or_else(bad)?;
            let pad = i64::from(*scale) - found;
            let factor = u32::try_from(pad)
                .ok()
                .and_then(|p| 10i128.checked_pow(p))
                .ok_or_else(bad)?;
            let unscaled = unscaled.checked_mul(factor).ok_or_else(bad)?;
            Datum::decimal(unscaled, *precision, *scale).map_err(|_| bad())?
        }
        P::String => Datum::String(text.to_string()),
        P::Date => Datum::Date(
            parse_human_day(text)
                .and_then(|d| i32::try_from(d).ok())
                .ok_or_else(bad)?,
        ),
        P::Fixed(_) | P::Binary => {
            let bytes = BASE64.decode(text).map_err(|_| bad())?;
            if matches!(ty, P::Fixed(n) if usize::try_from(*n).ok() != Some(bytes.len())) {
                return Err(bad());
            }
            if matches!(ty, P::Binary) {
                Datum::Binary(bytes)
            } else {
                Datum::Fixed(bytes)
            }
        }
        _ => {
            Datum::from_json(ty, &serde_json::Value::String(text.to_string())).map_err(|_| bad())?
        }
    })
}

/// A number as Java prints floats (`1.5`, `1.0E10`, `NaN`, `Infinity`, `-Infinity`).
fn parse_java_float(text: &str) -> Option<f64> {
    match text {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        t if t
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'E' && c != 'e') =>
        {
            None
        }
        t => t.parse().ok(),
    }
}

/// A value printed as the given type, so that a plain int or long holding a date, time or
/// timestamp prints as one.
fn human_value(ty: &PrimitiveType, d: &Datum) -> String {
    use PrimitiveType as P;
    match (ty, d) {
        (P::Date, Datum::Int(v)) => human_day(*v),
        (P::Time, Datum::Long(v)) => human_time(*v),
        (P::Timestamp, Datum::Long(v)) => human_datum(&Datum::Timestamp(*v)),
        (P::Timestamptz, Datum::Long(v)) => human_datum(&Datum::Timestamptz(*v)),
        (P::TimestampNs, Datum::Long(v)) => human_datum(&Datum::TimestampNs(*v)),
        (P::TimestamptzNs, Datum::Long(v)) => human_datum(&Datum::TimestamptzNs(*v)),
        _ => human_datum(d),
    }
}

/// A value printed by its own type.
fn human_datum(d: &Datum) -> String {
    match d {
        Datum::Boolean(v) => v.to_string(),
        Datum::Int(v) => v.to_string(),
        Datum::Long(v) => v.to_string(),
        Datum::Float(v) => java_float_string(*v),
        Datum::Double(v) => java_double_string(*v),
        Datum::Decimal {
            unscaled, scale, ..
        } => java_decimal_string(*unscaled, *scale),
        Datum::Date(v) => human_day(*v),
        Datum::Time(v) => human_time(*v),
        Datum::Timestamp(us) => iso_local_date_time(&DateTimeParts::from_micros(*us)),
        Datum::Timestamptz(us) => iso_local_date_time(&DateTimeParts::from_micros(*us)) + "+00:00",
        Datum::TimestampNs(ns) => iso_local_date_time(&DateTimeParts::from_nanos(*ns)),
        Datum::TimestamptzNs(ns) => iso_local_date_time(&DateTimeParts::from_nanos(*ns)) + "+00:00",
        Datum::String(v) => v.clone(),
        Datum::Uuid(v) => v.hyphenated().to_string(),
        Datum::Fixed(v) | Datum::Binary(v) => BASE64.encode(v),
    }
}

/// Java `humanDay`: `%04d-%02d-%02d` (so year 10000 prints `10000`, year −1 prints `-001`).
fn human_day(days: i32) -> String {
    let (y, m, d) = days_to_ymd(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Java `LocalTime.toString()`: `HH:mm`, then `:ss` unless seconds and fraction are zero, then
/// the fraction in 3, 6 or 9 digits. A value outside one day (invalid) prints as its number.
fn human_time(micros: i64) -> String {
    let Some(t) = TimeOfDay::from_micros_of_day(micros) else {
        return micros.to_string();
    };
    let mut s = format!("{:02}:{:02}", t.hour, t.minute);
    if t.second > 0 || t.nanosecond > 0 {
        s.push_str(&format!(":{:02}", t.second));
        let n = t.nanosecond;
        if n % 1_000_000 == 0 && n > 0 {
            s.push_str(&format!(".{:03}", n / 1_000_000));
        } else if n % 1_000 == 0 && n > 0 {
            s.push_str(&format!(".{:06}", n / 1_000));
        } else if n > 0 {
            s.push_str(&format!(".{n:09}"));
        }
    }
    s
}

/// Java `ISO_LOCAL_DATE_TIME`: seconds always, the fraction only as long as needed.
fn iso_local_date_time(p: &DateTimeParts) -> String {
    let t = &p.time;
    let mut s = format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}",
        civil::iso_year(p.year),
        p.month,
        p.day,
        t.hour,
        t.minute,
        t.second
    );
    if t.nanosecond > 0 {
        let frac = format!("{:09}", t.nanosecond);
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s
}

/// Java `BigDecimal.toString()`: plain unless the adjusted exponent is below −6, then
/// scientific (`1E-10`, `1.23E-8`).
pub fn java_decimal_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let adjusted = (digits.len() as i64 - 1) - i64::from(scale);
    if scale == 0 || adjusted >= -6 {
        return plain_decimal(unscaled, scale);
    }
    let sign = if unscaled < 0 { "-" } else { "" };
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{point}{rest}E{adjusted}")
}

/// Java `Float.toString()` (shortest digits, as JDK 19 and later print them).
pub fn java_float_string(v: f32) -> String {
    if !v.is_finite() || v == 0.0 {
        return java_special(f64::from(v));
    }
    let a = v.abs();
    let sci = format!("{a:e}");
    // Java prints at least two significant digits and then picks the closest ones.
    let sci = if sci.contains('.') {
        sci
    } else {
        format!("{a:.1e}")
    };
    java_from_exp(&sci, v < 0.0)
}

/// Java `Double.toString()` (shortest digits, as JDK 19 and later print them).
pub fn java_double_string(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return java_special(v);
    }
    let a = v.abs();
    let sci = format!("{a:e}");
    let sci = if sci.contains('.') {
        sci
    } else {
        format!("{a:.1e}")
    };
    java_from_exp(&sci, v < 0.0)
}

fn java_special(v: f64) -> String {
    let s = if v.is_nan() {
        "NaN"
    } else if v == f64::INFINITY {
        "Infinity"
    } else if v == f64::NEG_INFINITY {
        "-Infinity"
    } else if v.is_sign_negative() {
        "-0.0"
    } else {
        "0.0"
    };
    s.to_string()
}

/// Rewrites Rust's `d.ddde±x` text (shortest digits, at least two) in Java's layout: plain for 10^-3 <= |v| < 10^7
/// with at least one fraction digit, else `d.dddE±x` with at least one fraction digit.
fn java_from_exp(sci: &str, negative: bool) -> String {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = match digits.trim_end_matches('0') {
        "" => "0",
        d => d,
    };
    let sign = if negative { "-" } else { "" };
    if (-3..7).contains(&exp) {
        if exp < 0 {
            let zeros = "0".repeat((-exp - 1) as usize);
            return format!("{sign}0.{zeros}{digits}");
        }
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            let zeros = "0".repeat(int_len - digits.len());
            return format!("{sign}{digits}{zeros}.0");
        }
        let (int, frac) = digits.split_at(int_len);
        return format!("{sign}{int}.{frac}");
    }
    let (first, rest) = digits.split_at(1.min(digits.len()));
    let rest = if rest.is_empty() { "0" } else { rest };
    format!("{sign}{first}.{rest}E{exp}")
}

/// Java `URLEncoder.encode(s, UTF_8)`: letters, digits and `.-*_` kept, space as `+`, every
/// other UTF-8 byte as upper-case `%XX`.
pub fn escape_path_component(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0x0F)]));
            }
        }
    }
    out
}

/// One `name=value` directory of a partition path, both sides URL-encoded like Java.
pub fn partition_path_segment(name: &str, human: &str) -> String {
    format!(
        "{}={}",
        escape_path_component(name),
        escape_path_component(human)
    )
}
