//! A partition field's value as a DataFusion expression: the table's transform (our
//! vectorized one, equal to the spec's) of its source column. The write node asks for its
//! input hash-partitioned by these, so all rows of one table partition reach one writer,
//! which writes them as one file (up to the target size) instead of one per writer.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::common::Result as DfResult;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use iceberg_spec::{PrimitiveType, TableMetadata, Transform};

use crate::error::{Error, Result};

/// `transform(source)` of one partition field, over batches of the table's columns.
#[derive(Debug, Clone)]
pub struct PartitionKeyExpr {
    transform: Transform,
    source_type: PrimitiveType,
    source: Arc<dyn PhysicalExpr>,
    column: String,
}

impl PartitionKeyExpr {
    /// The partition fields of `meta`'s default spec as expressions over `input` (whose
    /// columns are named as the table's); empty for an unpartitioned table, or when a
    /// source column is not in `input` or not primitive.
    ///
    /// # Errors
    /// When the default spec or the current schema is missing from the metadata.
    pub fn of_table(
        meta: &TableMetadata,
        input: &ArrowSchema,
    ) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
        let schema = meta.current_schema()?;
        let mut keys: Vec<Arc<dyn PhysicalExpr>> = Vec::new();
        for field in meta.default_spec()?.fields() {
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
            keys.push(Arc::new(Self {
                transform: field.transform,
                source_type: ty.clone(),
                source: Arc::new(Column::new(&source.name, index)),
                column: source.name.clone(),
            }));
        }
        Ok(keys)
    }
}

impl fmt::Display for PartitionKeyExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.transform, self.source)
    }
}

impl PartialEq for PartitionKeyExpr {
    fn eq(&self, other: &Self) -> bool {
        self.transform == other.transform
            && self.source_type == other.source_type
            && self.source.as_ref() == other.source.as_ref()
    }
}

impl Eq for PartitionKeyExpr {}

impl Hash for PartitionKeyExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.transform.hash(state);
        self.source_type.hash(state);
        self.source.hash(state);
    }
}

impl PhysicalExpr for PartitionKeyExpr {
    fn data_type(&self, input_schema: &ArrowSchema) -> DfResult<DataType> {
        let _ = input_schema;
        let result = self
            .transform
            .result_type(&self.source_type)
            .map_err(Error::from)?;
        let ty = iceberg_spec::Type::Primitive(result);
        Ok(iceberg_write::arrow_type(&ty, &self.column).map_err(Error::from)?)
    }

    fn nullable(&self, input_schema: &ArrowSchema) -> DfResult<bool> {
        self.source.nullable(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> DfResult<ColumnarValue> {
        let source = self.source.evaluate(batch)?.into_array(batch.num_rows())?;
        let key = iceberg_write::transform_array(
            &self.transform,
            &self.source_type,
            &source,
            &self.column,
        )
        .map_err(Error::from)?;
        Ok(ColumnarValue::Array(key))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.source]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DfResult<Arc<dyn PhysicalExpr>> {
        let source = children
            .into_iter()
            .next()
            .ok_or_else(|| DataFusionError::Internal("a partition key has one child".into()))?;
        Ok(Arc::new(Self {
            source,
            ..self.as_ref().clone()
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.transform)?;
        self.source.fmt_sql(f)?;
        write!(f, ")")
    }
}
