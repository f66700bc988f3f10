//! Appendix D: single-value binary serialization, used for column bounds and partition
//! summaries. No length prefix and no type tag; the reader supplies the type.

use super::{Datum, civil};
use crate::error::{Error, Result};
use crate::types::PrimitiveType;

/// The unscaled value as minimal big-endian two's complement (Java `BigInteger.toByteArray`).
///
/// Returns a 16-byte buffer and the offset where the minimal encoding starts, so hashing can
/// use it without allocating.
pub(crate) fn decimal_be_bytes(unscaled: i128) -> ([u8; 16], usize) {
    let buf = unscaled.to_be_bytes();
    let mut start = 0;
    // Drop a leading byte while it only repeats the sign carried by the next byte.
    while start < 15 {
        let (b, next_high) = (buf[start], buf[start + 1] & 0x80);
        if (b == 0x00 && next_high == 0) || (b == 0xFF && next_high != 0) {
            start += 1;
        } else {
            break;
        }
    }
    (buf, start)
}

/// Sign-extends a big-endian two's complement integer of any length into an `i128`.
fn decimal_from_be(ty: &PrimitiveType, bytes: &[u8]) -> Result<i128> {
    let Some(&first) = bytes.first() else {
        return Err(Error::invalid_value(
            ty,
            "Appendix D decimal needs at least 1 byte",
        ));
    };
    let fill = if first & 0x80 != 0 { 0xFF } else { 0x00 };
    let (extra, rest) = bytes.split_at(bytes.len().saturating_sub(16));
    // Longer than 16 bytes is accepted only as padding that repeats the sign.
    if extra.iter().any(|&b| b != fill) || rest.first().is_some_and(|b| b & 0x80 != first & 0x80) {
        return Err(Error::invalid_value(
            ty,
            format!(
                "Appendix D decimal of {} bytes does not fit 128 bits",
                bytes.len()
            ),
        ));
    }
    let mut buf = [fill; 16];
    buf[16 - rest.len()..].copy_from_slice(rest);
    Ok(i128::from_be_bytes(buf))
}

fn wrong_length(ty: &PrimitiveType, expected: &str, found: usize) -> Error {
    Error::invalid_value(
        ty,
        format!("Appendix D value must be {expected} bytes, found {found}"),
    )
}

fn array<const N: usize>(ty: &PrimitiveType, bytes: &[u8], expected: &str) -> Result<[u8; N]> {
    bytes
        .try_into()
        .map_err(|_| wrong_length(ty, expected, bytes.len()))
}

/// An 8-byte long, or a 4-byte int written before the column was promoted to long.
fn long_or_promoted_int(ty: &PrimitiveType, bytes: &[u8]) -> Result<i64> {
    match bytes.len() {
        4 => Ok(i64::from(i32::from_le_bytes(array(ty, bytes, "4 or 8")?))),
        _ => Ok(i64::from_le_bytes(array(ty, bytes, "4 or 8")?)),
    }
}

/// A timestamp in `unit_per_day` units, or a 4-byte date written before promotion.
fn timestamp_or_promoted_date(ty: &PrimitiveType, bytes: &[u8], unit_per_day: i64) -> Result<i64> {
    if bytes.len() != 4 {
        return long_or_promoted_int(ty, bytes);
    }
    let days = i64::from(i32::from_le_bytes(array(ty, bytes, "4 or 8")?));
    days.checked_mul(unit_per_day).ok_or_else(|| {
        Error::invalid_value(
            ty,
            format!("promoted date {days} overflows the timestamp range"),
        )
    })
}

impl Datum {
    /// The Appendix-D bytes of this value (little-endian numbers, minimal big-endian decimal,
    /// big-endian uuid, raw UTF-8 and bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Self::Boolean(v) => vec![u8::from(*v)],
            Self::Int(v) | Self::Date(v) => v.to_le_bytes().to_vec(),
            Self::Long(v)
            | Self::Time(v)
            | Self::Timestamp(v)
            | Self::Timestamptz(v)
            | Self::TimestampNs(v)
            | Self::TimestamptzNs(v) => v.to_le_bytes().to_vec(),
            Self::Float(v) => v.to_le_bytes().to_vec(),
            Self::Double(v) => v.to_le_bytes().to_vec(),
            Self::Decimal { unscaled, .. } => {
                let (buf, start) = decimal_be_bytes(*unscaled);
                buf[start..].to_vec()
            }
            Self::String(v) => v.as_bytes().to_vec(),
            Self::Uuid(v) => v.as_bytes().to_vec(),
            Self::Fixed(v) | Self::Binary(v) => v.clone(),
        }
    }

    /// Decodes Appendix-D bytes as a value of type `ty`.
    ///
    /// Also accepts the widths that type promotion leaves behind: 4 bytes for a `long`
    /// (old `int`), 4 bytes for a `double` (old `float`), and 4 bytes for a timestamp type
    /// (old `date`, converted from days to µs or ns). Decimals may have any length that fits
    /// 128 bits (the digits are not checked against the precision: a truncated decimal may
    /// legitimately carry one digit more).
    ///
    /// # Errors
    /// [`Error::InvalidValue`] naming the type for a wrong length, invalid UTF-8, an out of
    /// range promoted date, or a type with no single-value form (unknown, variant, geometry,
    /// geography).
    pub fn from_bytes(ty: &PrimitiveType, bytes: &[u8]) -> Result<Datum> {
        use PrimitiveType as P;
        Ok(match ty {
            P::Boolean => Self::Boolean(array::<1>(ty, bytes, "1")?[0] != 0),
            P::Int => Self::Int(i32::from_le_bytes(array(ty, bytes, "4")?)),
            P::Date => Self::Date(i32::from_le_bytes(array(ty, bytes, "4")?)),
            P::Long => Self::Long(long_or_promoted_int(ty, bytes)?),
            P::Time => Self::Time(i64::from_le_bytes(array(ty, bytes, "8")?)),
            P::Timestamp => Self::Timestamp(timestamp_or_promoted_date(
                ty,
                bytes,
                civil::MICROS_PER_DAY,
            )?),
            P::Timestamptz => Self::Timestamptz(timestamp_or_promoted_date(
                ty,
                bytes,
                civil::MICROS_PER_DAY,
            )?),
            P::TimestampNs => {
                Self::TimestampNs(timestamp_or_promoted_date(ty, bytes, civil::NANOS_PER_DAY)?)
            }
            P::TimestamptzNs => {
                Self::TimestamptzNs(timestamp_or_promoted_date(ty, bytes, civil::NANOS_PER_DAY)?)
            }
            P::Float => Self::Float(f32::from_le_bytes(array(ty, bytes, "4")?)),
            P::Double if bytes.len() == 4 => {
                Self::Double(f64::from(f32::from_le_bytes(array(ty, bytes, "4 or 8")?)))
            }
            P::Double => Self::Double(f64::from_le_bytes(array(ty, bytes, "4 or 8")?)),
            P::Decimal { precision, scale } => Self::Decimal {
                unscaled: decimal_from_be(ty, bytes)?,
                precision: *precision,
                scale: *scale,
            },
            P::String => Self::String(
                String::from_utf8(bytes.to_vec())
                    .map_err(|e| Error::invalid_value(ty, format!("not UTF-8: {e}")))?,
            ),
            P::Uuid => Self::Uuid(uuid::Uuid::from_bytes(array(ty, bytes, "16")?)),
            P::Fixed(len) => {
                if bytes.len() as u64 != *len {
                    return Err(wrong_length(ty, &len.to_string(), bytes.len()));
                }
                Self::Fixed(bytes.to_vec())
            }
            P::Binary => Self::Binary(bytes.to_vec()),
            P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => {
                return Err(Error::invalid_value(
                    ty,
                    "has no Appendix D single-value form as a Datum",
                ));
            }
        })
    }
}
