//! Splitting aligned batches by partition: transforms computed over whole columns, rows
//! grouped by their partition tuple (Arrow row format as the key), one sub-batch per tuple.
//!
//! - `transform`: vectorized partition transforms.
//! - `values`: single values between Arrow arrays and [`Datum`]s.

pub(crate) mod transform;
pub(crate) mod values;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array, make_array, new_null_array};
use arrow_buffer::NullBuffer;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::DataType;
use foldhash::fast::FixedState;
use iceberg_spec::types::{PrimitiveType, Type};
use iceberg_spec::{Datum, PartitionSpec, Schema, Transform};

use crate::error::{Error, Result};
use crate::to_arrow::{arrow_type, field_id_of};

pub(crate) use transform::transform_array;

/// The rows of one partition within a batch.
#[derive(Debug)]
pub(crate) struct PartitionGroup {
    /// Canonical key of the partition tuple (Arrow row format), equal for equal tuples.
    pub(crate) key: Vec<u8>,
    /// The partition tuple, one value per spec field, in spec order.
    pub(crate) values: Vec<Option<Datum>>,
    /// The rows of the batch that belong to it (a slice of the batch's rows in group
    /// order, sharing their buffers with the other groups of the batch).
    pub(crate) batch: RecordBatch,
}

/// One partition field ready to evaluate.
#[derive(Debug)]
struct FieldPlan {
    name: String,
    transform: Transform,
    source_id: i32,
    source_type: PrimitiveType,
    result_type: PrimitiveType,
}

/// Computes partition tuples of aligned batches for one spec.
#[derive(Debug)]
pub(crate) struct Partitioner {
    fields: Vec<FieldPlan>,
    converter: Option<RowConverter>,
}

impl Partitioner {
    /// A partitioner for `spec` over `schema`.
    ///
    /// # Errors
    /// When the spec does not fit the schema.
    pub(crate) fn new(spec: &PartitionSpec, schema: &Schema) -> Result<Self> {
        spec.validate(schema)?;
        let mut fields = Vec::with_capacity(spec.fields().len());
        let mut sort_fields = Vec::with_capacity(spec.fields().len());
        for f in spec.fields() {
            let source_type = spec.input_type(f, schema)?;
            let result_type = f.transform.result_type(&source_type)?;
            sort_fields.push(SortField::new(arrow_type(
                &Type::Primitive(result_type.clone()),
                &f.name,
            )?));
            fields.push(FieldPlan {
                name: f.name.clone(),
                transform: f.transform.clone(),
                source_id: f.source_id,
                source_type,
                result_type,
            });
        }
        let converter = if fields.is_empty() {
            None
        } else {
            Some(RowConverter::new(sort_fields).map_err(|e| Error::arrow("<partition>", e))?)
        };
        Ok(Self { fields, converter })
    }

    /// The rows of `batch` grouped by partition tuple, groups in order of first appearance.
    ///
    /// # Errors
    /// When a source column is missing from the batch or a transform fails.
    pub(crate) fn split(&self, batch: &RecordBatch) -> Result<Vec<PartitionGroup>> {
        let Some(converter) = &self.converter else {
            return Ok(vec![PartitionGroup {
                key: Vec::new(),
                values: Vec::new(),
                batch: batch.clone(),
            }]);
        };
        let transformed = self.partition_columns(batch)?;
        let rows = Self::rows(converter, &transformed)?;
        // foldhash, not SipHash: the keys are ours, and hashing one per row was a tenth of
        // the split at 1,000 partitions.
        let mut index: HashMap<&[u8], usize, FixedState> =
            HashMap::with_hasher(FixedState::default());
        let mut groups: Vec<(Vec<u8>, Vec<u32>)> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let key = row.data();
            let g = *index.entry(key).or_insert_with(|| {
                groups.push((key.to_vec(), Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        let whole = groups.len() == 1;
        // One take puts the rows in group order; each group is then a slice of it (a take
        // per group costs an allocation per column and group, which dominates at hundreds
        // of partitions per batch).
        let taken = if whole {
            batch.clone()
        } else {
            let order: Vec<u32> = groups
                .iter()
                .flat_map(|(_, rows)| rows.iter().copied())
                .collect();
            arrow_select::take::take_record_batch(batch, &UInt32Array::from(order))
                .map_err(|e| Error::arrow("<batch>", e))?
        };
        let mut start = 0;
        groups
            .into_iter()
            .map(|(key, rows)| {
                let first = rows.first().copied().unwrap_or(0) as usize;
                let values = self
                    .fields
                    .iter()
                    .zip(&transformed)
                    .map(|(f, a)| values::datum_at(a.as_ref(), first, &f.result_type))
                    .collect();
                let batch = taken.slice(start, rows.len());
                start += rows.len();
                Ok(PartitionGroup { key, values, batch })
            })
            .collect()
    }

    /// The partition key of every row of `batch` (equal bytes for equal tuples, and ordered
    /// by the tuple); `None` when the spec is unpartitioned.
    ///
    /// # Errors
    /// When a source column is missing from the batch or a transform fails.
    pub(crate) fn keys(&self, batch: &RecordBatch) -> Result<Option<Rows>> {
        match &self.converter {
            None => Ok(None),
            Some(converter) => Self::rows(converter, &self.partition_columns(batch)?).map(Some),
        }
    }

    fn rows(converter: &RowConverter, columns: &[ArrayRef]) -> Result<Rows> {
        converter
            .convert_columns(columns)
            .map_err(|e| Error::arrow("<partition>", e))
    }

    /// The transformed partition columns of `batch`, one per spec field.
    pub(crate) fn partition_columns(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        self.fields
            .iter()
            .map(|f| {
                if f.transform == Transform::Void {
                    // Null whatever the source (which may have been dropped since).
                    let ty = arrow_type(&Type::Primitive(f.result_type.clone()), &f.name)?;
                    return Ok(new_null_array(&ty, batch.num_rows()));
                }
                let source =
                    find_column(batch, f.source_id).ok_or_else(|| Error::MissingColumn {
                        name: f.name.clone(),
                    })?;
                transform_array(&f.transform, &f.source_type, &source, &f.name)
            })
            .collect()
    }
}

/// The column with field id `id`, at top level or inside structs, with ancestors' nulls applied.
pub(crate) fn find_column(batch: &RecordBatch, id: i32) -> Option<ArrayRef> {
    fn search(
        fields: &arrow_schema::Fields,
        cols: &[ArrayRef],
        id: i32,
        parent: Option<&NullBuffer>,
    ) -> Option<ArrayRef> {
        for (f, c) in fields.iter().zip(cols) {
            if field_id_of(f) == Some(id) {
                return Some(with_parent_nulls(c, parent));
            }
            if let DataType::Struct(children) = f.data_type() {
                let s = c.as_struct();
                let valid = NullBuffer::union(parent, s.nulls());
                if let Some(found) = search(children, s.columns(), id, valid.as_ref()) {
                    return Some(found);
                }
            }
        }
        None
    }
    let schema = batch.schema();
    search(schema.fields(), batch.columns(), id, None)
}

pub(crate) fn with_parent_nulls(c: &ArrayRef, parent: Option<&NullBuffer>) -> ArrayRef {
    let Some(parent) = parent else {
        return c.clone();
    };
    let nulls = NullBuffer::union(Some(parent), c.nulls());
    let data = c.to_data().into_builder().nulls(nulls).build();
    match data {
        Ok(d) => make_array(d),
        Err(_) => Arc::clone(c),
    }
}
