//! A partition field's value as a DataFusion function: `iceberg_partition_key(source,
//! transform, source_type)` applies the table's transform (our vectorized one, equal to the
//! spec's) to its source column. The write node asks for its input hash-partitioned by
//! these, so all rows of one table partition reach one writer, which writes them as one
//! file (up to the target size) instead of one per writer.
//!
//! A function rather than a custom expression because functions travel by name: a plan
//! with a hash repartition on it ships to other processes (Ballista's shuffle writers
//! encode their partitioning with DataFusion's default codec), which find it in their
//! function registry ([`partition_key_udf`]).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use iceberg_spec::{PrimitiveType, TableMetadata, Transform, Type};

use crate::error::Error;

/// The function's name, as plans and registries know it.
pub const PARTITION_KEY_FUNCTION: &str = "iceberg_partition_key";

/// `iceberg_partition_key(source, transform, source_type)`: the partition value of
/// `source` (an Iceberg `source_type`, e.g. `'timestamptz'`) under `transform` (e.g.
/// `'day'`, `'bucket[16]'`). Register it on every process that decodes plans.
pub fn partition_key_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(PartitionKeyFunction::new()))
}

/// The partition fields of `meta`'s default spec as expressions over `input` (whose
/// columns are named as the table's); empty for an unpartitioned table, or when a source
/// column is not in `input` or not primitive.
///
/// # Errors
/// When the default spec or the current schema is missing from the metadata.
pub fn partition_keys(
    meta: &TableMetadata,
    input: &ArrowSchema,
) -> DfResult<Vec<Arc<dyn PhysicalExpr>>> {
    let schema = meta.current_schema().map_err(Error::from)?;
    let udf = partition_key_udf();
    let config = Arc::new(ConfigOptions::default());
    let mut keys: Vec<Arc<dyn PhysicalExpr>> = Vec::new();
    for field in meta.default_spec().map_err(Error::from)?.fields() {
        if field.transform == Transform::Void {
            continue;
        }
        let source = schema.field_by_id(field.source_id);
        let Some((source, ty)) = source.and_then(|f| Some((f, f.field_type.as_primitive()?)))
        else {
            return Ok(Vec::new());
        };
        let Ok(index) = input.index_of(&source.name) else {
            return Ok(Vec::new());
        };
        let args: Vec<Arc<dyn PhysicalExpr>> = vec![
            Arc::new(Column::new(&source.name, index)),
            Arc::new(Literal::new(ScalarValue::Utf8(Some(
                field.transform.to_string(),
            )))),
            Arc::new(Literal::new(ScalarValue::Utf8(Some(ty.to_string())))),
        ];
        let key = ScalarFunctionExpr::try_new(udf.clone(), args, input, config.clone())?;
        keys.push(Arc::new(key));
    }
    Ok(keys)
}

/// The implementation behind [`partition_key_udf`].
#[derive(Debug, PartialEq, Eq, Hash)]
struct PartitionKeyFunction {
    signature: Signature,
}

impl PartitionKeyFunction {
    fn new() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

/// The transform and source type a call names in its constant arguments.
fn transform_of(args: &[Option<&ScalarValue>]) -> DfResult<(Transform, PrimitiveType)> {
    let text = |i: usize| match args.get(i) {
        Some(Some(ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)))) => Ok(s.clone()),
        _ => Err(DataFusionError::Plan(format!(
            "{PARTITION_KEY_FUNCTION}: argument {} must be a string literal",
            i + 1
        ))),
    };
    let transform: Transform = text(1)?.parse().map_err(Error::from)?;
    let source: PrimitiveType = text(2)?.parse().map_err(Error::from)?;
    Ok((transform, source))
}

impl ScalarUDFImpl for PartitionKeyFunction {
    fn name(&self) -> &str {
        PARTITION_KEY_FUNCTION
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Err(DataFusionError::Internal(format!(
            "{PARTITION_KEY_FUNCTION}: the type comes from the arguments"
        )))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let (transform, source) = transform_of(args.scalar_arguments)?;
        let result = transform.result_type(&source).map_err(Error::from)?;
        let ty = iceberg_write::arrow_type(&Type::Primitive(result), PARTITION_KEY_FUNCTION)
            .map_err(Error::from)?;
        let nullable = args.arg_fields.first().is_none_or(|f| f.is_nullable());
        Ok(Arc::new(Field::new(PARTITION_KEY_FUNCTION, ty, nullable)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let constants: Vec<Option<&ScalarValue>> = args
            .args
            .iter()
            .map(|a| match a {
                ColumnarValue::Scalar(s) => Some(s),
                ColumnarValue::Array(_) => None,
            })
            .collect();
        let (transform, source_type) = transform_of(&constants)?;
        let Some(source) = args.args.first() else {
            return Err(DataFusionError::Internal(format!(
                "{PARTITION_KEY_FUNCTION} has three arguments"
            )));
        };
        let column = args
            .arg_fields
            .first()
            .map_or(PARTITION_KEY_FUNCTION, |f| f.name().as_str());
        let source = source.to_array(args.number_rows)?;
        let key = iceberg_write::transform_array(&transform, &source_type, &source, column)
            .map_err(Error::from)?;
        Ok(ColumnarValue::Array(key))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use datafusion::arrow::array::{Array, Int32Array, RecordBatch, TimestampMicrosecondArray};
    use iceberg_spec::{FormatVersion, NestedField, PartitionSpec, Schema, SortOrder};

    use super::*;

    #[test]
    fn keys_are_the_spec_transforms_of_the_source_columns() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Int),
                NestedField::required(2, "ts", PrimitiveType::Timestamp),
            ],
        )
        .expect("schema");
        let spec = PartitionSpec::builder(&schema)
            .add("id", Transform::Bucket(4))
            .and_then(|b| b.add("ts", Transform::Day))
            .and_then(|b| b.build())
            .expect("spec");
        let meta = TableMetadata::new_table(
            FormatVersion::V2,
            uuid::Uuid::nil(),
            "file:///t",
            schema.clone(),
            spec,
            SortOrder::unsorted(),
            Default::default(),
            0,
        )
        .expect("metadata");
        let arrow = iceberg_write::arrow_schema(&schema).expect("arrow");
        let keys = partition_keys(&meta, &arrow).expect("keys");
        assert_eq!(keys.len(), 2);
        let day = 86_400_000_000_i64;
        let batch = RecordBatch::try_new(
            Arc::new(arrow.clone()),
            vec![
                Arc::new(Int32Array::from(vec![34, 34])),
                Arc::new(TimestampMicrosecondArray::from(vec![-1, 3 * day + 5])),
            ],
        )
        .expect("batch");
        let value = |k: &Arc<dyn PhysicalExpr>| {
            k.evaluate(&batch)
                .and_then(|v| v.into_array(2))
                .expect("evaluates")
        };
        let bucket = value(&keys[0]);
        let bucket = bucket.as_any().downcast_ref::<Int32Array>().expect("int");
        // The spec's vector: bucket(34) hashes to 2017239379, mod 4 = 3.
        assert_eq!(bucket.values(), &[3, 3]);
        let days = value(&keys[1]);
        let days = days
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Date32Array>()
            .expect("date");
        assert_eq!(days.values(), &[-1, 3]);
        assert!(days.is_valid(0));
    }
}
