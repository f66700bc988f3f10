//! A single typed value ([`Datum`]) with the spec's ordering, Appendix-D bytes and JSON form.
//!
//! Spec: Appendix D (single-value binary serialization) and "JSON single-value serialization".

use uuid::Uuid;

/// One non-null value of a primitive Iceberg type, in the spec's physical units.
#[derive(Debug, Clone, PartialEq)]
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
