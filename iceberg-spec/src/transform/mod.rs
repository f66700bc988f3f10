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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// A transform this library does not know, kept by its name (`zorder`, `bucket[x]`).
    ///
    /// The spec requires readers to load tables that use one and forbids writers to commit
    /// data with it: metadata holding one loads and is written back unchanged, manifests of
    /// its spec are read (their values take the manifest's own Avro types) and carried, and
    /// anything that would compute, order by or write values of it is refused.
    Unknown(String),
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
            // Java assumes an unknown transform takes any type (`UnknownTransform`).
            Self::Void | Self::Unknown(_) => true,
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
    /// [`Error::InvalidTransform`] for a bucket count or width outside `1..=i32::MAX` and
    /// for an unknown transform, whose type no one can tell.
    pub fn result_type(&self, source: &PrimitiveType) -> Result<PrimitiveType> {
        if let Self::Unknown(name) = self {
            return Err(Self::unknown_error(name));
        }
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
            Self::Unknown(name) => return Err(Self::unknown_error(name)),
        })
    }

    /// True for a transform this library does not know ([`Transform::Unknown`]).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }

    /// The error for using an unknown transform where its values or type are needed.
    fn unknown_error(name: &str) -> Error {
        Error::InvalidTransform {
            text: name.to_string(),
            reason: "a transform this library does not know: tables using it load, but no data \
                     can be written, ordered or committed with it (the spec forbids writers to)"
                .into(),
        }
    }

    /// The result type when it does not depend on the source type (bucket, year, month, hour:
    /// int; day: date).
    pub fn fixed_result_type(&self) -> Option<PrimitiveType> {
        match self {
            Self::Bucket(_) | Self::Year | Self::Month | Self::Hour => Some(PrimitiveType::Int),
            Self::Day => Some(PrimitiveType::Date),
            Self::Identity | Self::Truncate(_) | Self::Void | Self::Unknown(_) => None,
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
            Self::Unknown(name) => return Err(Self::unknown_error(name)),
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

    /// True when values that sort in order also transform in order (all but bucket, void
    /// and unknown ones).
    pub fn preserves_order(&self) -> bool {
        !matches!(self, Self::Bucket(_) | Self::Void | Self::Unknown(_))
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
            Self::Unknown(_) => None,
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
            Self::Unknown(name) => f.write_str(name),
        }
    }
}

impl FromStr for Transform {
    type Err = Error;

    /// Parses a transform as Java's `Transforms.fromString` does: names ignore case, a
    /// `bucket[N]` or `truncate[W]` needs `N`, `W` in `1..=2147483647`, and any other text is
    /// an [`Transform::Unknown`] transform (readers must load tables that use one).
    ///
    /// # Errors
    /// [`Error::InvalidTransform`] for empty text or a bucket count or width of digits
    /// outside `1..=2147483647`.
    fn from_str(text: &str) -> Result<Self> {
        let lower = text.trim().to_ascii_lowercase();
        let s = lower.as_str();
        // Java's `(\w+)\[(\d+)\]`: only digits make a parameter; `bucket[x]` is unknown.
        let param = |name: &str| -> Option<Result<u32>> {
            let inner = s.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')?;
            if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // Java reads the parameter as an int and refuses 0: 1..=2147483647.
            Some(match inner.parse::<u32>() {
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
        Ok(match s {
            "identity" => Self::Identity,
            "year" => Self::Year,
            "month" => Self::Month,
            "day" => Self::Day,
            "hour" => Self::Hour,
            "void" => Self::Void,
            "" => {
                return Err(Error::InvalidTransform {
                    text: text.to_string(),
                    reason: "empty".into(),
                });
            }
            _ => Self::Unknown(text.to_string()),
        })
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
