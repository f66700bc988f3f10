//! Moving single values between aligned Arrow arrays and Iceberg [`Datum`]s.
//!
//! Arrays here have exactly the Arrow types of [`crate::arrow_schema`] for their Iceberg type.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, LargeBinaryArray, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use iceberg_spec::Datum;
use iceberg_spec::types::{PrimitiveType, Type};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::to_arrow::{UTC_TIME_ZONE, arrow_type};

/// The value at row `i` of `array` as a datum of type `ty`; `None` for null (or a type mismatch).
pub(crate) fn datum_at(array: &dyn Array, i: usize, ty: &PrimitiveType) -> Option<Datum> {
    use PrimitiveType as P;
    if i >= array.len() || array.is_null(i) {
        return None;
    }
    Some(match ty {
        P::Boolean => Datum::Boolean(array.as_boolean_opt()?.value(i)),
        P::Int => Datum::Int(array.as_primitive_opt::<Int32Type>()?.value(i)),
        P::Date => Datum::Date(array.as_primitive_opt::<Date32Type>()?.value(i)),
        P::Long => Datum::Long(array.as_primitive_opt::<Int64Type>()?.value(i)),
        P::Time => Datum::Time(array.as_primitive_opt::<Time64MicrosecondType>()?.value(i)),
        P::Timestamp => Datum::Timestamp(
            array
                .as_primitive_opt::<TimestampMicrosecondType>()?
                .value(i),
        ),
        P::Timestamptz => Datum::Timestamptz(
            array
                .as_primitive_opt::<TimestampMicrosecondType>()?
                .value(i),
        ),
        P::TimestampNs => Datum::TimestampNs(
            array
                .as_primitive_opt::<TimestampNanosecondType>()?
                .value(i),
        ),
        P::TimestamptzNs => Datum::TimestamptzNs(
            array
                .as_primitive_opt::<TimestampNanosecondType>()?
                .value(i),
        ),
        P::Float => Datum::Float(array.as_primitive_opt::<Float32Type>()?.value(i)),
        P::Double => Datum::Double(array.as_primitive_opt::<Float64Type>()?.value(i)),
        P::Decimal { precision, scale } => Datum::Decimal {
            unscaled: array.as_primitive_opt::<Decimal128Type>()?.value(i),
            precision: *precision,
            scale: *scale,
        },
        P::String => Datum::String(array.as_string_opt::<i32>()?.value(i).to_string()),
        P::Uuid => Datum::Uuid(Uuid::from_slice(array.as_fixed_size_binary_opt()?.value(i)).ok()?),
        P::Fixed(_) => Datum::Fixed(array.as_fixed_size_binary_opt()?.value(i).to_vec()),
        P::Binary => Datum::Binary(array.as_binary_opt::<i64>()?.value(i).to_vec()),
        P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => return None,
    })
}

/// An array of type `ty` (at its writer Arrow type) holding `values`.
///
/// # Errors
/// [`Error::TypeMismatch`] when a datum is not of type `ty`; [`Error::UnsupportedType`] for
/// types without an Arrow form.
pub(crate) fn array_of(
    ty: &PrimitiveType,
    values: &[Option<Datum>],
    column: &str,
) -> Result<ArrayRef> {
    use PrimitiveType as P;
    let mismatch = |d: &Datum| Error::TypeMismatch {
        column: column.to_string(),
        expected: ty.to_string(),
        found: format!("{d:?}"),
    };
    macro_rules! collect {
        ($arr:ty, $pat:pat => $v:expr) => {{
            let mut out = Vec::with_capacity(values.len());
            for d in values {
                out.push(match d {
                    None => None,
                    Some($pat) => Some($v),
                    Some(other) => return Err(mismatch(other)),
                });
            }
            Arc::new(<$arr>::from(out)) as ArrayRef
        }};
    }
    Ok(match ty {
        P::Boolean => collect!(BooleanArray, Datum::Boolean(v) => *v),
        P::Int => collect!(Int32Array, Datum::Int(v) => *v),
        P::Date => collect!(Date32Array, Datum::Date(v) => *v),
        P::Long => collect!(Int64Array, Datum::Long(v) => *v),
        P::Time => collect!(Time64MicrosecondArray, Datum::Time(v) => *v),
        P::Timestamp => collect!(TimestampMicrosecondArray, Datum::Timestamp(v) => *v),
        P::Timestamptz => {
            let a = values
                .iter()
                .map(|d| match d {
                    None => Ok(None),
                    Some(Datum::Timestamptz(v)) => Ok(Some(*v)),
                    Some(other) => Err(mismatch(other)),
                })
                .collect::<Result<TimestampMicrosecondArray>>()?;
            Arc::new(a.with_timezone(UTC_TIME_ZONE))
        }
        P::TimestampNs => collect!(TimestampNanosecondArray, Datum::TimestampNs(v) => *v),
        P::TimestamptzNs => {
            let a = values
                .iter()
                .map(|d| match d {
                    None => Ok(None),
                    Some(Datum::TimestamptzNs(v)) => Ok(Some(*v)),
                    Some(other) => Err(mismatch(other)),
                })
                .collect::<Result<TimestampNanosecondArray>>()?;
            Arc::new(a.with_timezone(UTC_TIME_ZONE))
        }
        P::Float => collect!(Float32Array, Datum::Float(v) => *v),
        P::Double => collect!(Float64Array, Datum::Double(v) => *v),
        P::Decimal { .. } => {
            let a = values
                .iter()
                .map(|d| match d {
                    None => Ok(None),
                    Some(Datum::Decimal { unscaled, .. }) => Ok(Some(*unscaled)),
                    Some(other) => Err(mismatch(other)),
                })
                .collect::<Result<Decimal128Array>>()?;
            let dt = arrow_type(&Type::Primitive(ty.clone()), column)?;
            let arrow_schema::DataType::Decimal128(p, s) = dt else {
                return Err(mismatch(&Datum::Int(0)));
            };
            Arc::new(
                a.with_precision_and_scale(p, s)
                    .map_err(|e| Error::arrow(column, e))?,
            )
        }
        P::String => collect!(StringArray, Datum::String(v) => v.as_str()),
        P::Binary => collect!(LargeBinaryArray, Datum::Binary(v) => v.as_slice()),
        P::Uuid | P::Fixed(_) => {
            let size = match ty {
                P::Fixed(l) => i32::try_from(*l).unwrap_or(i32::MAX),
                _ => 16,
            };
            let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(values.len());
            for d in values {
                out.push(match d {
                    None => None,
                    Some(Datum::Uuid(u)) if matches!(ty, P::Uuid) => Some(u.as_bytes().to_vec()),
                    Some(Datum::Fixed(b)) if matches!(ty, P::Fixed(_)) => Some(b.clone()),
                    Some(other) => return Err(mismatch(other)),
                });
            }
            let a = FixedSizeBinaryArray::try_from_sparse_iter_with_size(out.into_iter(), size)
                .map_err(|e| Error::arrow(column, e))?;
            Arc::new(a)
        }
        P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => {
            return Err(Error::UnsupportedType {
                column: column.to_string(),
                type_name: ty.to_string(),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trips_every_writable_type() {
        let cases: Vec<(PrimitiveType, Datum)> = vec![
            (PrimitiveType::Boolean, Datum::Boolean(true)),
            (PrimitiveType::Int, Datum::Int(-3)),
            (PrimitiveType::Long, Datum::Long(1 << 40)),
            (PrimitiveType::Float, Datum::Float(-0.0)),
            (PrimitiveType::Double, Datum::Double(2.5)),
            (
                PrimitiveType::Decimal {
                    precision: 9,
                    scale: 2,
                },
                Datum::Decimal {
                    unscaled: 1420,
                    precision: 9,
                    scale: 2,
                },
            ),
            (PrimitiveType::Date, Datum::Date(17486)),
            (PrimitiveType::Time, Datum::Time(81_068_000_000)),
            (PrimitiveType::Timestamp, Datum::Timestamp(1)),
            (PrimitiveType::Timestamptz, Datum::Timestamptz(2)),
            (PrimitiveType::TimestampNs, Datum::TimestampNs(3)),
            (PrimitiveType::TimestamptzNs, Datum::TimestamptzNs(4)),
            (PrimitiveType::String, Datum::String("é".into())),
            (PrimitiveType::Uuid, Datum::Uuid(Uuid::from_u128(7))),
            (PrimitiveType::Fixed(3), Datum::Fixed(vec![1, 2, 3])),
            (PrimitiveType::Binary, Datum::Binary(vec![0, 255])),
        ];
        for (ty, d) in cases {
            let a = array_of(&ty, &[None, Some(d.clone())], "c").unwrap();
            let expected = arrow_type(&Type::Primitive(ty.clone()), "c").unwrap();
            assert_eq!(a.data_type(), &expected, "{ty}");
            assert_eq!(datum_at(a.as_ref(), 0, &ty), None);
            assert_eq!(datum_at(a.as_ref(), 1, &ty), Some(d), "{ty}");
        }
    }
}
