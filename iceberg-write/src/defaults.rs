//! A column's `write-default` (format v3) as Arrow values: what a write fills in where the
//! input leaves the column out, as the spec requires ("the write default for a field must
//! be written if a field is not supplied to a write").

use std::sync::Arc;

use arrow_array::types::{TimestampMicrosecondType, TimestampNanosecondType};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, PrimitiveArray, StringArray,
    Time64MicrosecondArray, UInt32Array,
};
use arrow_schema::DataType;
use iceberg_spec::Datum;
use iceberg_spec::types::PrimitiveType;
use serde_json::Value;

use crate::error::{Error, Result};

/// `len` copies of the default `value` (its JSON single-value form) of a `ty` column, at
/// the Arrow type `to`; `None` for a null default.
///
/// # Errors
/// [`Error::TypeMismatch`] naming `column` when the default does not parse as `ty` or does
/// not convert to `to`.
pub fn default_array(
    value: &Value,
    ty: &PrimitiveType,
    to: &DataType,
    len: usize,
    column: &str,
) -> Result<Option<ArrayRef>> {
    if value.is_null() {
        return Ok(None);
    }
    let bad = |found: String| Error::TypeMismatch {
        column: column.to_string(),
        expected: ty.to_string(),
        found,
    };
    let datum =
        Datum::from_json(ty, value).map_err(|e| bad(format!("write-default {value}: {e}")))?;
    let one = single(&datum).ok_or_else(|| bad(format!("write-default {value}")))?;
    let one = arrow_cast::cast(&one, to).map_err(|e| Error::arrow(column, e))?;
    let take = UInt32Array::from(vec![0u32; len]);
    arrow_select::take::take(&one, &take, None)
        .map(Some)
        .map_err(|e| Error::arrow(column, e))
}

/// One value as a one-row Arrow array of its natural type.
fn single(d: &Datum) -> Option<ArrayRef> {
    let utc = || Some(Arc::<str>::from("+00:00"));
    Some(match d {
        Datum::Boolean(v) => Arc::new(BooleanArray::from(vec![*v])),
        Datum::Int(v) => Arc::new(Int32Array::from(vec![*v])),
        Datum::Long(v) => Arc::new(Int64Array::from(vec![*v])),
        Datum::Float(v) => Arc::new(Float32Array::from(vec![*v])),
        Datum::Double(v) => Arc::new(Float64Array::from(vec![*v])),
        Datum::Decimal {
            unscaled,
            precision,
            scale,
        } => Arc::new(
            Decimal128Array::from(vec![*unscaled])
                .with_precision_and_scale(
                    u8::try_from(*precision).ok()?,
                    i8::try_from(*scale).ok()?,
                )
                .ok()?,
        ),
        Datum::Date(v) => Arc::new(Date32Array::from(vec![*v])),
        Datum::Time(v) => Arc::new(Time64MicrosecondArray::from(vec![*v])),
        Datum::Timestamp(v) => Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(vec![*v])),
        Datum::Timestamptz(v) => Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::from(vec![*v]).with_timezone_opt(utc()),
        ),
        Datum::TimestampNs(v) => {
            Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(vec![*v]))
        }
        Datum::TimestamptzNs(v) => Arc::new(
            PrimitiveArray::<TimestampNanosecondType>::from(vec![*v]).with_timezone_opt(utc()),
        ),
        Datum::String(v) => Arc::new(StringArray::from(vec![v.as_str()])),
        Datum::Uuid(v) => Arc::new(
            FixedSizeBinaryArray::try_from_iter(std::iter::once(v.as_bytes().to_vec())).ok()?,
        ),
        Datum::Fixed(v) => {
            Arc::new(FixedSizeBinaryArray::try_from_iter(std::iter::once(v.clone())).ok()?)
        }
        Datum::Binary(v) => Arc::new(BinaryArray::from(vec![v.as_slice()])),
    })
}
