//! Partition transforms: identity, bucket, truncate, year, month, day, hour and void.
//!
//! Spec: "Partition Transforms", Appendix B (bucket hashing).
//!
//! [`Transform::apply`] transforms one [`Datum`]; the free functions re-exported here
//! ([`bucket_i64`], [`truncate_str`], [`micros_to_day`], ...) are the same computations on
//! plain values, for the vectorized writer. [`Transform::to_human_string`] and
//! [`partition_path_segment`] build the partition directories of data-file paths.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::types::PrimitiveType;

mod bucket;
mod human;
mod temporal;
#[cfg(test)]
mod tests;
mod truncate;

pub use bucket::{
    bucket_bytes, bucket_decimal, bucket_i32, bucket_i64, bucket_index, bucket_nanos, bucket_str,
    bucket_uuid, hash_decimal, hash_i64, murmur3_32,
};
pub use human::{
    escape_path_component, java_decimal_string, java_double_string, java_float_string,
    partition_path_segment,
};
pub use temporal::{
    date_to_month, date_to_year, micros_to_day, micros_to_hour, micros_to_month, micros_to_year,
    nanos_to_day, nanos_to_hour, nanos_to_month, nanos_to_year,
};
pub use truncate::{truncate_bytes, truncate_decimal, truncate_i32, truncate_i64, truncate_str};

/// A partition (or sort) transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transform {
    /// The source value, unmodified.
    Identity,
    /// Murmur3 hash mod N.
    Bucket(u32),
    /// The value truncated to width W.
    Truncate(u32),
    /// Years since 1970.
    Year,
    /// Months since 1970-01.
    Month,
    /// Days since 1970-01-01.
    Day,
    /// Hours since 1970-01-01T00:00.
    Hour,
    /// Always null.
    Void,
}

impl Transform {
    /// True when this transform accepts `source` as its input type.
    pub fn can_transform(&self, source: &PrimitiveType) -> bool {
        use PrimitiveType as P;
        match self {
            Self::Identity => !matches!(
                source,
                P::Geometry { .. } | P::Geography { .. } | P::Variant | P::Unknown
            ),
            Self::Void => true,
            Self::Bucket(_) => matches!(
                source,
                P::Int
                    | P::Long
                    | P::Decimal { .. }
                    | P::Date
                    | P::Time
                    | P::Timestamp
                    | P::Timestamptz
                    | P::TimestampNs
                    | P::TimestamptzNs
                    | P::String
                    | P::Uuid
                    | P::Fixed(_)
                    | P::Binary
            ),
            Self::Truncate(_) => matches!(
                source,
                P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary
            ),
            Self::Year | Self::Month | Self::Day => matches!(
                source,
                P::Date | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
            Self::Hour => matches!(
                source,
                P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
        }
    }

    /// The type of the transform's output for a source of type `source`.
    ///
    /// # Errors
    /// [`Error::TransformSourceType`] when the transform does not accept `source`;
    /// [`Error::InvalidTransform`] for a bucket count or width outside `1..=i32::MAX`.
    pub fn result_type(&self, source: &PrimitiveType) -> Result<PrimitiveType> {
        if let Self::Bucket(n) | Self::Truncate(n) = self
            && (*n == 0 || *n > i32::MAX as u32)
        {
            // Java reads the parameter as an int: no reader could load a larger one.
            return Err(Error::InvalidTransform {
                text: self.to_string(),
                reason: "the parameter must be in 1..=2147483647".into(),
            });
        }
        if !self.can_transform(source) {
            return Err(Error::TransformSourceType {
                transform: self.to_string(),
                source_type: source.to_string(),
            });
        }
        Ok(match self {
            Self::Identity | Self::Truncate(_) | Self::Void => source.clone(),
            Self::Bucket(_) | Self::Year | Self::Month | Self::Hour => PrimitiveType::Int,
            Self::Day => PrimitiveType::Date,
        })
    }

    /// The result type when it does not depend on the source type (bucket, year, month, hour:
    /// int; day: date).
    pub fn fixed_result_type(&self) -> Option<PrimitiveType> {
        match self {
            Self::Bucket(_) | Self::Year | Self::Month | Self::Hour => Some(PrimitiveType::Int),
            Self::Day => Some(PrimitiveType::Date),
            Self::Identity | Self::Truncate(_) | Self::Void => None,
        }
    }

    /// Transforms one value: null stays null for every transform, `void` always gives null.
    ///
    /// Results: identity and truncate keep the source type, bucket/year/month/hour give
    /// [`Datum::Int`], day gives [`Datum::Date`].
    ///
    /// # Errors
    /// [`Error::TransformSourceType`] when the transform does not accept the value's type;
    /// [`Error::InvalidTransform`] for `bucket[0]` or `truncate[0]`.
    ///
    /// ```
    /// use iceberg_spec::transform::partition_path_segment;
    /// use iceberg_spec::{Datum, PrimitiveType, Transform};
    ///
    /// let bucket = Transform::Bucket(16).apply(Some(&Datum::Long(34)))?;
    /// assert_eq!(bucket, Some(Datum::Int(3)));
    /// let ts = Datum::Timestamp(1_510_871_468_000_000); // 2017-11-16T22:31:08
    /// let day = Transform::Day.apply(Some(&ts))?;
    /// let human = Transform::Day.to_human_string(&PrimitiveType::Timestamp, day.as_ref());
    /// assert_eq!(partition_path_segment("ts_day", &human), "ts_day=2017-11-16");
    /// # Ok::<(), iceberg_spec::Error>(())
    /// ```
    pub fn apply(&self, value: Option<&Datum>) -> Result<Option<Datum>> {
        let Some(value) = value else {
            return Ok(None);
        };
        let source = value.primitive_type();
        let wrong_type = || Error::TransformSourceType {
            transform: self.to_string(),
            source_type: source.to_string(),
        };
        if !self.can_transform(&source) {
            return Err(wrong_type());
        }
        let result = match self {
            Self::Identity => Some(value.clone()),
            Self::Void => return Ok(None),
            Self::Bucket(n) => {
                let n = self.positive(*n)?;
                bucket::hash_datum(value).map(|h| Datum::Int(bucket::bucket_index(h, n)))
            }
            Self::Truncate(w) => truncate::truncate_datum(value, self.positive(*w)?),
            Self::Year | Self::Month | Self::Day | Self::Hour => {
                temporal::temporal_datum(self, value)
            }
        };
        result.map(Some).ok_or_else(wrong_type)
    }

    fn positive(&self, param: u32) -> Result<u32> {
        if param == 0 {
            return Err(Error::InvalidTransform {
                text: self.to_string(),
                reason: "the parameter must be positive".into(),
            });
        }
        Ok(param)
    }

    /// True when values that sort in order also transform in order (all but bucket and void).
    pub fn preserves_order(&self) -> bool {
        !matches!(self, Self::Bucket(_) | Self::Void)
    }

    /// Suffix of the default partition field name at table creation (`id_bucket`, `ts_day`).
    pub fn default_name_suffix(&self) -> Option<&'static str> {
        match self {
            Self::Identity => None,
            Self::Bucket(_) => Some("bucket"),
            Self::Truncate(_) => Some("trunc"),
            Self::Year => Some("year"),
            Self::Month => Some("month"),
            Self::Day => Some("day"),
            Self::Hour => Some("hour"),
            Self::Void => Some("null"),
        }
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Identity => f.write_str("identity"),
            Self::Bucket(n) => write!(f, "bucket[{n}]"),
            Self::Truncate(w) => write!(f, "truncate[{w}]"),
            Self::Year => f.write_str("year"),
            Self::Month => f.write_str("month"),
            Self::Day => f.write_str("day"),
            Self::Hour => f.write_str("hour"),
            Self::Void => f.write_str("void"),
        }
    }
}

impl FromStr for Transform {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        // Java matches names ignoring case (`Bucket[16]` is `bucket[16]`).
        let lower = text.trim().to_ascii_lowercase();
        let s = lower.as_str();
        let param = |name: &str| -> Option<Result<u32>> {
            let inner = s.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')?;
            // Java reads the parameter as an int: 1..=2147483647.
            Some(match inner.trim().parse::<u32>() {
                Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(n),
                _ => Err(Error::InvalidTransform {
                    text: text.to_string(),
                    reason: format!("{name} needs an integer parameter in 1..=2147483647"),
                }),
            })
        };
        if let Some(n) = param("bucket") {
            return Ok(Self::Bucket(n?));
        }
        if let Some(w) = param("truncate") {
            return Ok(Self::Truncate(w?));
        }
        match s {
            "identity" => Ok(Self::Identity),
            "year" => Ok(Self::Year),
            "month" => Ok(Self::Month),
            "day" => Ok(Self::Day),
            "hour" => Ok(Self::Hour),
            "void" => Ok(Self::Void),
            _ => Err(Error::InvalidTransform {
                text: text.to_string(),
                reason: "not a transform this library knows; writers must not commit with an unknown transform".into(),
            }),
        }
    }
}

impl Serialize for Transform {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Transform {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
