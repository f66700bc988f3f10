//! Partition transforms over whole Arrow arrays.
//!
//! Identity and void need no per-value work. The other transforms currently go value by
//! value through iceberg-spec's scalar [`Transform::apply`], so results are identical to it
//! by construction.

use arrow_array::{Array, ArrayRef, new_null_array};
use iceberg_spec::types::{PrimitiveType, Type};
use iceberg_spec::Transform;

use super::values::{array_of, datum_at};
use crate::to_arrow::arrow_type;
use crate::error::Result;

/// `transform` applied to every value of `source` (of Iceberg type `source_type`), as an
/// array of the transform's result type; nulls stay null.
///
/// # Errors
/// When the transform does not accept the source type, or the scalar transform fails.
pub(crate) fn transform_array(
    transform: &Transform,
    source_type: &PrimitiveType,
    source: &ArrayRef,
    column: &str,
) -> Result<ArrayRef> {
    let result_type = transform.result_type(source_type)?;
    match transform {
        Transform::Identity => Ok(source.clone()),
        Transform::Void => Ok(new_null_array(&arrow_type(&Type::Primitive(result_type), column)?, source.len())),
        _ => scalar(transform, source_type, &result_type, source, column),
    }
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
