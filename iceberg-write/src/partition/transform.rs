//! Partition transforms over whole Arrow arrays.
//!
//! Each transform runs as an Arrow kernel (`unary` over primitive arrays, one pass over
//! string/binary arrays) calling iceberg-spec's scalar helpers (`bucket_i64`,
//! `truncate_str`, `micros_to_day`, ...), so every value equals the scalar
//! [`Transform::apply`]. Nulls stay null. Inputs have the writer's Arrow types
//! ([`crate::arrow_schema()`]); anything else goes value by value through `apply`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Int32Array, LargeBinaryArray, PrimitiveArray,
    StringArray, new_null_array,
};
use arrow_schema::DataType;
use iceberg_spec::Transform;
use iceberg_spec::transform as t;
use iceberg_spec::types::{PrimitiveType, Type};

use super::values::{array_of, datum_at};
use crate::error::{Error, Result};
use crate::to_arrow::arrow_type;

/// `transform` applied to every value of `source` (of Iceberg type `source_type`), as an
/// array of the transform's result type.
///
/// # Errors
/// When the transform does not accept the source type or its parameter is 0.
pub fn transform_array(
    transform: &Transform,
    source_type: &PrimitiveType,
    source: &ArrayRef,
    column: &str,
) -> Result<ArrayRef> {
    let result_type = transform.result_type(source_type)?;
    let vectorized = match *transform {
        Transform::Identity => Some(source.clone()),
        Transform::Void => Some(new_null_array(
            &arrow_type(&Type::Primitive(result_type.clone()), column)?,
            source.len(),
        )),
        Transform::Bucket(n) if n > 0 => bucket(source, source_type, n),
        Transform::Truncate(w) if w > 0 => truncate(source, source_type, w, column)?,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            temporal(source, source_type, transform)
        }
        // Unknown: refused by `result_type` above.
        Transform::Bucket(_) | Transform::Truncate(_) | Transform::Unknown(_) => None,
    };
    match vectorized {
        Some(a) => Ok(a),
        None => scalar(transform, source_type, &result_type, source, column),
    }
}

fn ints<T: arrow_array::ArrowPrimitiveType>(
    source: &ArrayRef,
    f: impl Fn(T::Native) -> i32,
) -> Option<ArrayRef> {
    let a = source.as_primitive_opt::<T>()?;
    let out: Int32Array = a.unary(f);
    Some(Arc::new(out))
}

fn bucket(source: &ArrayRef, ty: &PrimitiveType, n: u32) -> Option<ArrayRef> {
    use PrimitiveType as P;
    match ty {
        P::Int => ints::<Int32Type>(source, |v| t::bucket_i32(v, n)),
        P::Date => ints::<Date32Type>(source, |v| t::bucket_i32(v, n)),
        P::Long => ints::<Int64Type>(source, |v| t::bucket_i64(v, n)),
        P::Time => ints::<Time64MicrosecondType>(source, |v| t::bucket_i64(v, n)),
        P::Timestamp | P::Timestamptz => {
            ints::<TimestampMicrosecondType>(source, |v| t::bucket_i64(v, n))
        }
        P::TimestampNs | P::TimestamptzNs => {
            ints::<TimestampNanosecondType>(source, |v| t::bucket_nanos(v, n))
        }
        P::Decimal { .. } => ints::<Decimal128Type>(source, |v| t::bucket_decimal(v, n)),
        P::String => {
            let a = source.as_string_opt::<i32>()?;
            Some(Arc::new(
                a.iter()
                    .map(|v| v.map(|s| t::bucket_str(s, n)))
                    .collect::<Int32Array>(),
            ))
        }
        P::Binary => {
            let a = source.as_binary_opt::<i64>()?;
            Some(Arc::new(
                a.iter()
                    .map(|v| v.map(|b| t::bucket_bytes(b, n)))
                    .collect::<Int32Array>(),
            ))
        }
        P::Uuid | P::Fixed(_) => {
            let a = source.as_fixed_size_binary_opt()?;
            Some(Arc::new(
                a.iter()
                    .map(|v| v.map(|b| t::bucket_bytes(b, n)))
                    .collect::<Int32Array>(),
            ))
        }
        _ => None,
    }
}

fn truncate(
    source: &ArrayRef,
    ty: &PrimitiveType,
    w: u32,
    column: &str,
) -> Result<Option<ArrayRef>> {
    use PrimitiveType as P;
    Ok(match ty {
        P::Int => source.as_primitive_opt::<Int32Type>().map(|a| {
            let out: Int32Array = a.unary(|v| t::truncate_i32(v, w));
            Arc::new(out) as ArrayRef
        }),
        P::Long => source.as_primitive_opt::<Int64Type>().map(|a| {
            let out: PrimitiveArray<Int64Type> = a.unary(|v| t::truncate_i64(v, w));
            Arc::new(out) as ArrayRef
        }),
        P::Decimal { .. } => match (
            source.as_primitive_opt::<Decimal128Type>(),
            source.data_type(),
        ) {
            (Some(a), DataType::Decimal128(p, s)) => {
                let out: Decimal128Array = a.unary(|v| t::truncate_decimal(v, w));
                let out = out
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| Error::arrow(column, e))?;
                Some(Arc::new(out) as ArrayRef)
            }
            _ => None,
        },
        P::String => source.as_string_opt::<i32>().map(|a| {
            Arc::new(
                a.iter()
                    .map(|v| v.map(|s| t::truncate_str(s, w)))
                    .collect::<StringArray>(),
            ) as ArrayRef
        }),
        P::Binary => source.as_binary_opt::<i64>().map(|a| {
            Arc::new(
                a.iter()
                    .map(|v| v.map(|b| t::truncate_bytes(b, w)))
                    .collect::<LargeBinaryArray>(),
            ) as ArrayRef
        }),
        _ => None,
    })
}

/// A scalar time transform of an i64 timestamp.
type TimeFn = fn(i64) -> i32;

fn temporal(source: &ArrayRef, ty: &PrimitiveType, transform: &Transform) -> Option<ArrayRef> {
    use PrimitiveType as P;
    let (micros, nanos): (TimeFn, TimeFn) = match transform {
        Transform::Year => (t::micros_to_year, t::nanos_to_year),
        Transform::Month => (t::micros_to_month, t::nanos_to_month),
        Transform::Day => (t::micros_to_day, t::nanos_to_day),
        _ => (t::micros_to_hour, t::nanos_to_hour),
    };
    let ints = match ty {
        P::Date => {
            let f: fn(i32) -> i32 = match transform {
                Transform::Year => t::date_to_year,
                Transform::Month => t::date_to_month,
                Transform::Day => |d| d,
                _ => return None,
            };
            ints::<Date32Type>(source, f)?
        }
        P::Timestamp | P::Timestamptz => ints::<TimestampMicrosecondType>(source, micros)?,
        P::TimestampNs | P::TimestamptzNs => ints::<TimestampNanosecondType>(source, nanos)?,
        _ => return None,
    };
    if *transform == Transform::Day {
        // `day` results are dates: same values, Date32 type.
        let days = ints.as_primitive_opt::<Int32Type>()?;
        let out: Date32Array = days.reinterpret_cast();
        return Some(Arc::new(out));
    }
    Some(ints)
}

/// The value-by-value path through the spec's scalar transform.
fn scalar(
    transform: &Transform,
    source_type: &PrimitiveType,
    result_type: &PrimitiveType,
    source: &ArrayRef,
    column: &str,
) -> Result<ArrayRef> {
    let mut out = Vec::with_capacity(source.len());
    for i in 0..source.len() {
        let d = datum_at(source.as_ref(), i, source_type);
        out.push(transform.apply(d.as_ref())?);
    }
    array_of(result_type, &out, column)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use iceberg_spec::Datum;

    use super::*;

    fn check(
        transform: impl std::borrow::Borrow<Transform>,
        ty: PrimitiveType,
        values: Vec<Option<Datum>>,
    ) {
        let transform = transform.borrow();
        let source = array_of(&ty, &values, "c").unwrap();
        let out = transform_array(transform, &ty, &source, "c").unwrap();
        let rt = transform.result_type(&ty).unwrap();
        assert_eq!(
            out.data_type(),
            &arrow_type(&Type::Primitive(rt.clone()), "c").unwrap()
        );
        for (i, v) in values.iter().enumerate() {
            let expected = transform.apply(v.as_ref()).unwrap();
            assert_eq!(
                datum_at(out.as_ref(), i, &rt),
                expected,
                "{transform} {ty} {v:?}"
            );
        }
    }

    #[test]
    fn spec_vectors() {
        let b16 = Transform::Bucket(16);
        let out = transform_array(
            &b16,
            &PrimitiveType::Long,
            &array_of(&PrimitiveType::Long, &[Some(Datum::Long(34))], "c").unwrap(),
            "c",
        )
        .unwrap();
        assert_eq!(out.as_primitive::<Int32Type>().value(0), 3);
        let s = array_of(
            &PrimitiveType::String,
            &[Some(Datum::String("iceberg".into()))],
            "c",
        )
        .unwrap();
        let out = transform_array(&b16, &PrimitiveType::String, &s, "c").unwrap();
        assert_eq!(out.as_primitive::<Int32Type>().value(0), 9);
    }

    #[test]
    fn agree_with_scalar_apply() {
        let ts = vec![
            Some(Datum::Timestamp(1_510_871_468_000_000)),
            None,
            Some(Datum::Timestamp(-1)),
            Some(Datum::Timestamp(0)),
        ];
        for tr in [
            Transform::Year,
            Transform::Month,
            Transform::Day,
            Transform::Hour,
            Transform::Bucket(10),
            Transform::Void,
            Transform::Identity,
        ] {
            check(&tr, PrimitiveType::Timestamp, ts.clone());
            let ns = ts
                .iter()
                .map(|d| {
                    d.as_ref().map(|d| match d {
                        Datum::Timestamp(v) => Datum::TimestamptzNs(v * 1000 - 1),
                        o => o.clone(),
                    })
                })
                .collect();
            check(&tr, PrimitiveType::TimestamptzNs, ns);
        }
        let dates = vec![Some(Datum::Date(17486)), Some(Datum::Date(-1)), None];
        for tr in [
            Transform::Year,
            Transform::Month,
            Transform::Day,
            Transform::Bucket(16),
        ] {
            check(&tr, PrimitiveType::Date, dates.clone());
        }
        for tr in [Transform::Truncate(3), Transform::Bucket(7)] {
            check(
                &tr,
                PrimitiveType::Int,
                vec![Some(Datum::Int(-1)), Some(Datum::Int(10)), None],
            );
            check(&tr, PrimitiveType::Long, vec![Some(Datum::Long(-11)), None]);
            check(
                &tr,
                PrimitiveType::String,
                vec![
                    Some(Datum::String("😀😀😀😀".into())),
                    None,
                    Some(Datum::String("ab".into())),
                ],
            );
            check(
                &tr,
                PrimitiveType::Binary,
                vec![Some(Datum::Binary(vec![1, 2, 3, 4])), None],
            );
            check(
                &tr,
                PrimitiveType::Decimal {
                    precision: 9,
                    scale: 2,
                },
                vec![
                    Some(Datum::Decimal {
                        unscaled: -1065,
                        precision: 9,
                        scale: 2,
                    }),
                    None,
                ],
            );
        }
        check(
            Transform::Bucket(16),
            PrimitiveType::Uuid,
            vec![Some(Datum::Uuid(uuid::Uuid::from_u128(5))), None],
        );
        check(
            Transform::Bucket(16),
            PrimitiveType::Fixed(2),
            vec![Some(Datum::Fixed(vec![0, 1])), None],
        );
        check(
            Transform::Bucket(16),
            PrimitiveType::Time,
            vec![Some(Datum::Time(81_068_000_000)), None],
        );
    }

    use proptest::prelude::*;

    fn transforms() -> impl Strategy<Value = Transform> {
        prop_oneof![
            (1u32..40).prop_map(Transform::Bucket),
            (1u32..40).prop_map(Transform::Truncate),
            Just(Transform::Year),
            Just(Transform::Month),
            Just(Transform::Day),
            Just(Transform::Hour),
            Just(Transform::Identity),
            Just(Transform::Void),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn vectorized_equals_scalar_apply(
            tr in transforms(),
            longs in prop::collection::vec(prop::option::of(any::<i64>()), 0..20),
            strings in prop::collection::vec(prop::option::of(".{0,12}"), 0..20),
            dates in prop::collection::vec(prop::option::of(-1_000_000i32..1_000_000), 0..20),
        ) {
            let typed: Vec<(PrimitiveType, Vec<Option<Datum>>)> = vec![
                (PrimitiveType::Long, longs.iter().map(|v| v.map(Datum::Long)).collect()),
                (PrimitiveType::Int, longs.iter().map(|v| v.map(|v| Datum::Int(v as i32))).collect()),
                (PrimitiveType::Timestamp, longs.iter().map(|v| v.map(|v| Datum::Timestamp(v / 7))).collect()),
                (PrimitiveType::Timestamptz, longs.iter().map(|v| v.map(|v| Datum::Timestamptz(v / 7))).collect()),
                (PrimitiveType::TimestampNs, longs.iter().map(|v| v.map(Datum::TimestampNs)).collect()),
                (PrimitiveType::Time, longs.iter().map(|v| v.map(|v| Datum::Time(v.rem_euclid(86_400_000_000)))).collect()),
                (PrimitiveType::Date, dates.iter().map(|v| v.map(Datum::Date)).collect()),
                (
                    PrimitiveType::Decimal { precision: 38, scale: 3 },
                    longs.iter().map(|v| v.map(|v| Datum::Decimal { unscaled: i128::from(v) * 1000, precision: 38, scale: 3 })).collect(),
                ),
                (PrimitiveType::String, strings.iter().map(|v| v.clone().map(Datum::String)).collect()),
                (PrimitiveType::Binary, strings.iter().map(|v| v.clone().map(|s| Datum::Binary(s.into_bytes()))).collect()),
                (PrimitiveType::Uuid, longs.iter().map(|v| v.map(|v| Datum::Uuid(uuid::Uuid::from_u128(v as u128)))).collect()),
            ];
            for (ty, values) in typed {
                if tr.can_transform(&ty) {
                    check(&tr, ty, values);
                }
            }
        }
    }
}
