//! A single typed value ([`Datum`]) with the spec's ordering, Appendix-D bytes and JSON form.
//!
//! Spec: Appendix D (single-value binary serialization) and "JSON single-value serialization".
//! Submodules: `bytes` (Appendix D), `json` (JSON single values) and [`civil`] (calendar
//! arithmetic shared with the time transforms and partition paths); [`uuid_order`] says where
//! Java's uuid order differs from the spec's.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use uuid::Uuid;

use crate::error::{Error, Result};
use crate::types::{MAX_DECIMAL_PRECISION, PrimitiveType};

mod bytes;
pub mod civil;
mod json;
#[cfg(test)]
mod tests;
pub mod uuid_order;

pub(crate) use bytes::decimal_be_bytes;
pub use json::parse_big_decimal;

/// One non-null value of a primitive Iceberg type, in the spec's physical units.
///
/// Equality, hashing and ordering follow the spec's ordering ([`Datum::compare`]): floats
/// compare like Java's `Float.compare` (so `-0.0 != 0.0` and `NaN == NaN`), and two decimals
/// with the same scale and unscaled value are equal whatever their precision.
#[derive(Debug, Clone)]
pub enum Datum {
    /// `boolean`.
    Boolean(bool),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `decimal(P,S)`: the unscaled value with its precision and scale.
    Decimal {
        /// Unscaled integer value.
        unscaled: i128,
        /// Precision of the type.
        precision: u32,
        /// Scale of the type.
        scale: u32,
    },
    /// `date`: days since 1970-01-01.
    Date(i32),
    /// `time`: microseconds since midnight.
    Time(i64),
    /// `timestamp`: microseconds since the epoch.
    Timestamp(i64),
    /// `timestamptz`: microseconds since the epoch, UTC.
    Timestamptz(i64),
    /// `timestamp_ns`: nanoseconds since the epoch.
    TimestampNs(i64),
    /// `timestamptz_ns`: nanoseconds since the epoch, UTC.
    TimestamptzNs(i64),
    /// `string`.
    String(String),
    /// `uuid`.
    Uuid(Uuid),
    /// `fixed[L]`.
    Fixed(Vec<u8>),
    /// `binary`.
    Binary(Vec<u8>),
}

/// `10^p` for `p` in `0..=38`: the exclusive bound of a `p`-digit unscaled decimal.
pub(crate) fn pow10(p: u32) -> i128 {
    10i128.pow(p.min(MAX_DECIMAL_PRECISION))
}

/// True when `unscaled` has at most `precision` decimal digits.
pub(crate) fn fits_precision(unscaled: i128, precision: u32) -> bool {
    precision <= MAX_DECIMAL_PRECISION && unscaled.unsigned_abs() < pow10(precision).unsigned_abs()
}

impl Datum {
    /// A `boolean` value.
    pub fn bool(v: bool) -> Self {
        Self::Boolean(v)
    }

    /// An `int` value.
    pub fn int(v: i32) -> Self {
        Self::Int(v)
    }

    /// A `long` value.
    pub fn long(v: i64) -> Self {
        Self::Long(v)
    }

    /// A `float` value.
    pub fn float(v: f32) -> Self {
        Self::Float(v)
    }

    /// A `double` value.
    pub fn double(v: f64) -> Self {
        Self::Double(v)
    }

    /// A `decimal(precision, scale)` value from its unscaled integer (`14.20` = `1420`, scale 2).
    ///
    /// # Errors
    /// [`Error::InvalidValue`] when precision is not 1..=38, scale exceeds precision, or the
    /// unscaled value has more than `precision` digits.
    pub fn decimal(unscaled: i128, precision: u32, scale: u32) -> Result<Self> {
        let ty = PrimitiveType::Decimal { precision, scale };
        if precision == 0 || precision > MAX_DECIMAL_PRECISION || scale > precision {
            return Err(Error::invalid_value(
                ty,
                "precision must be 1..=38 and scale <= precision",
            ));
        }
        if !fits_precision(unscaled, precision) {
            return Err(Error::invalid_value(
                ty,
                format!("unscaled value {unscaled} has more than {precision} digits"),
            ));
        }
        Ok(Self::Decimal {
            unscaled,
            precision,
            scale,
        })
    }

    /// A `date` value from a proleptic Gregorian year, month (1-12) and day.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for a day that does not exist or lies outside the `i32` range.
    pub fn date_from_ymd(year: i32, month: u32, day: u32) -> Result<Self> {
        if day == 0 || day > civil::days_in_month(year, month) {
            return Err(Error::invalid_value(
                PrimitiveType::Date,
                format!("{year}-{month}-{day} is not a calendar date"),
            ));
        }
        i32::try_from(civil::ymd_to_days(year, month, day))
            .map(Self::Date)
            .map_err(|_| Error::invalid_value(PrimitiveType::Date, "day count overflows int"))
    }

    /// A `time` value from hour, minute, second and microsecond.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] when a field is out of range.
    pub fn time_from_hms_micro(hour: u32, minute: u32, second: u32, micro: u32) -> Result<Self> {
        if hour > 23 || minute > 59 || second > 59 || micro > 999_999 {
            return Err(Error::invalid_value(
                PrimitiveType::Time,
                format!("{hour}:{minute}:{second}.{micro:06} is not a time of day"),
            ));
        }
        let secs = i64::from(hour) * 3_600 + i64::from(minute) * 60 + i64::from(second);
        Ok(Self::Time(
            secs * civil::MICROS_PER_SECOND + i64::from(micro),
        ))
    }

    /// A `string` value.
    pub fn string(v: impl Into<String>) -> Self {
        Self::String(v.into())
    }

    /// A `uuid` value.
    pub fn uuid(v: Uuid) -> Self {
        Self::Uuid(v)
    }

    /// A `fixed[L]` value, L being the length of `v`.
    pub fn fixed(v: impl Into<Vec<u8>>) -> Self {
        Self::Fixed(v.into())
    }

    /// A `binary` value.
    pub fn binary(v: impl Into<Vec<u8>>) -> Self {
        Self::Binary(v.into())
    }

    /// The Iceberg type of this value (`Fixed` reports its own length).
    pub fn primitive_type(&self) -> PrimitiveType {
        match self {
            Self::Boolean(_) => PrimitiveType::Boolean,
            Self::Int(_) => PrimitiveType::Int,
            Self::Long(_) => PrimitiveType::Long,
            Self::Float(_) => PrimitiveType::Float,
            Self::Double(_) => PrimitiveType::Double,
            Self::Decimal {
                precision, scale, ..
            } => PrimitiveType::Decimal {
                precision: *precision,
                scale: *scale,
            },
            Self::Date(_) => PrimitiveType::Date,
            Self::Time(_) => PrimitiveType::Time,
            Self::Timestamp(_) => PrimitiveType::Timestamp,
            Self::Timestamptz(_) => PrimitiveType::Timestamptz,
            Self::TimestampNs(_) => PrimitiveType::TimestampNs,
            Self::TimestamptzNs(_) => PrimitiveType::TimestamptzNs,
            Self::String(_) => PrimitiveType::String,
            Self::Uuid(_) => PrimitiveType::Uuid,
            Self::Fixed(b) => PrimitiveType::Fixed(b.len() as u64),
            Self::Binary(_) => PrimitiveType::Binary,
        }
    }

    /// True for a float or double NaN (never a bound; counted in `nan_value_counts`).
    pub fn is_nan(&self) -> bool {
        match self {
            Self::Float(v) => v.is_nan(),
            Self::Double(v) => v.is_nan(),
            _ => false,
        }
    }

    /// This value in the widest type a schema evolution can promote its column to (an int
    /// as a long, a float as a double, a decimal at precision 38): a value written before
    /// its column was widened then compares and hashes as the ones written after.
    pub fn widest(&self) -> Datum {
        match self {
            Self::Int(v) => Self::Long(i64::from(*v)),
            Self::Float(v) => Self::Double(f64::from(*v)),
            Self::Decimal {
                unscaled, scale, ..
            } => Self::Decimal {
                unscaled: *unscaled,
                precision: 38,
                scale: *scale,
            },
            other => other.clone(),
        }
    }

    /// This value read as `ty` when `ty` is a wider type its column may have been promoted to
    /// (an int as a long, a float as a double); `None` when no such promotion applies.
    pub fn promoted_to(&self, ty: &PrimitiveType) -> Option<Datum> {
        match (self, ty) {
            (Self::Int(v), PrimitiveType::Long) => Some(Self::Long(i64::from(*v))),
            (Self::Float(v), PrimitiveType::Double) => Some(Self::Double(f64::from(*v))),
            _ => None,
        }
    }

    /// The spec's ordering of two values of the same type; `None` across types.
    ///
    /// Floats and doubles use Java's `Float.compare`/`Double.compare` total order
    /// (`-0.0 < 0.0`, every NaN equal and greater than `+inf`); strings compare by UTF-8 bytes
    /// (= code points); binary, fixed and uuid by unsigned bytes; decimals numerically when
    /// their scales match (`None` otherwise).
    pub fn compare(&self, other: &Datum) -> Option<Ordering> {
        use Datum as D;
        Some(match (self, other) {
            (D::Boolean(a), D::Boolean(b)) => a.cmp(b),
            (D::Int(a), D::Int(b)) | (D::Date(a), D::Date(b)) => a.cmp(b),
            (D::Long(a), D::Long(b))
            | (D::Time(a), D::Time(b))
            | (D::Timestamp(a), D::Timestamp(b))
            | (D::Timestamptz(a), D::Timestamptz(b))
            | (D::TimestampNs(a), D::TimestampNs(b))
            | (D::TimestamptzNs(a), D::TimestamptzNs(b)) => a.cmp(b),
            (D::Float(a), D::Float(b)) => java_compare_f64(f64::from(*a), f64::from(*b)),
            (D::Double(a), D::Double(b)) => java_compare_f64(*a, *b),
            (
                D::Decimal {
                    unscaled: a,
                    scale: sa,
                    ..
                },
                D::Decimal {
                    unscaled: b,
                    scale: sb,
                    ..
                },
            ) if sa == sb => a.cmp(b),
            (D::String(a), D::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (D::Uuid(a), D::Uuid(b)) => a.as_bytes().cmp(b.as_bytes()),
            (D::Fixed(a), D::Fixed(b)) | (D::Binary(a), D::Binary(b)) => a.cmp(b),
            _ => return None,
        })
    }
}

/// Java `Double.compare`: numeric order, then `-0.0 < 0.0`, and all NaNs equal and greatest.
///
/// Widening a float to f64 keeps its order and NaN-ness, so floats use it too.
fn java_compare_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // Without NaNs, IEEE total order is numeric order with -0.0 before +0.0.
        (false, false) => a.total_cmp(&b),
    }
}

/// Bits of a float with every NaN folded into one, so that hashing agrees with equality.
fn canonical_bits(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

impl PartialEq for Datum {
    fn eq(&self, other: &Self) -> bool {
        self.compare(other) == Some(Ordering::Equal)
    }
}

// `compare` is reflexive for every value (NaN equals NaN), so equality is an equivalence.
impl Eq for Datum {}

impl PartialOrd for Datum {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.compare(other)
    }
}

impl Hash for Datum {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Self::Boolean(v) => v.hash(state),
            Self::Int(v) | Self::Date(v) => v.hash(state),
            Self::Long(v)
            | Self::Time(v)
            | Self::Timestamp(v)
            | Self::Timestamptz(v)
            | Self::TimestampNs(v)
            | Self::TimestamptzNs(v) => v.hash(state),
            Self::Float(v) => canonical_bits(f64::from(*v)).hash(state),
            Self::Double(v) => canonical_bits(*v).hash(state),
            // Precision is left out: equal decimals may differ in precision.
            Self::Decimal {
                unscaled, scale, ..
            } => (unscaled, scale).hash(state),
            Self::String(v) => v.hash(state),
            Self::Uuid(v) => v.hash(state),
            Self::Fixed(v) | Self::Binary(v) => v.hash(state),
        }
    }
}

/// The plain decimal text of `unscaled × 10^-scale`, keeping the scale (`1420`, 2 → `14.20`).
pub(crate) fn plain_decimal(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Upper-case hex, as Java's Guava `base16()` writes fixed and binary JSON values.
pub(crate) fn hex_upper(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0x0F)]));
    }
    s
}

/// A readable form: the JSON single-value text without quotes (`14.20`, `2017-11-16`,
/// `2017-11-16T22:31:08.000000+00:00`, upper-case hex for fixed and binary).
impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean(v) => write!(f, "{v}"),
            Self::Int(v) => write!(f, "{v}"),
            Self::Long(v) => write!(f, "{v}"),
            Self::Float(v) => f.write_str(&crate::transform::java_float_string(*v)),
            Self::Double(v) => f.write_str(&crate::transform::java_double_string(*v)),
            Self::String(v) => f.write_str(v),
            Self::Uuid(v) => write!(f, "{}", v.hyphenated()),
            Self::Fixed(v) | Self::Binary(v) => f.write_str(&hex_upper(v)),
            Self::Decimal {
                unscaled, scale, ..
            } => f.write_str(&plain_decimal(*unscaled, *scale)),
            Self::Date(_)
            | Self::Time(_)
            | Self::Timestamp(_)
            | Self::Timestamptz(_)
            | Self::TimestampNs(_)
            | Self::TimestamptzNs(_) => f.write_str(&self.temporal_text()),
        }
    }
}
