//! Sorting rows by a table sort order before they are written.
//!
//! A [`Sorter`] evaluates the order's keys over a whole batch: each key is its source
//! column (top level or inside structs, ancestors' nulls applied) through the key's
//! transform, computed by the same vectorized kernels as partition values. The keys become
//! Arrow row-format [`Rows`] with one [`SortOptions`] per key (direction, and null placement
//! that does not flip with the direction, as in Iceberg), so comparing two rows' bytes is
//! comparing their keys in the order's sense. Sorting orders the rows by those bytes, and the
//! streaming writer compares the last key of a file with the first key of the next run to
//! decide whether the file is still sorted (see `writer::partitioned`).
//!
//! The order this gives, per key type (= Java's `Comparators` and `Datum::compare`):
//! numbers numerically; floats with `-0.0 < 0.0` and every NaN equal and after `+inf` (NaNs
//! are folded to one positive NaN first, as Java's `Double.compare` does); strings by UTF-8
//! bytes (= code points); binary and fixed by unsigned bytes; uuid as Java's `UUID.compareTo`
//! (two signed longs), which differs from the RFC/Parquet unsigned order when the top bit of
//! byte 0 or byte 8 differs (write-spec gotcha G16): Java is the reader that trusts a file's
//! `sort_order_id`, so the order it claims must hold in Java's sense.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{
    Array, ArrayRef, FixedSizeBinaryArray, Float32Array, Float64Array, RecordBatch, UInt32Array,
};
use arrow_row::{OwnedRow, Row, RowConverter, Rows, SortField};
use arrow_schema::{DataType, SortOptions};
use iceberg_spec::datum::uuid_order;
use iceberg_spec::types::{PrimitiveType, Type};
use iceberg_spec::{NullOrder, Schema, SortDirection, SortOrder, Transform};

use crate::error::{Error, Result};
use crate::partition::{find_column, transform_array};
use crate::to_arrow::arrow_type;

/// Name used for Arrow errors raised while sorting.
const SORT_CONTEXT: &str = "<sort key>";

/// One key of the order, ready to evaluate.
#[derive(Debug)]
struct KeyPlan {
    /// Full name of the source column (for errors).
    name: String,
    transform: Transform,
    source_id: i32,
    source_type: PrimitiveType,
    /// The key is a uuid, compared in Java's order.
    java_uuid: bool,
}

/// Sorts batches by one sort order and compares their keys across batches.
#[derive(Debug)]
pub(crate) struct Sorter {
    order_id: i32,
    keys: Vec<KeyPlan>,
    converter: RowConverter,
}

/// A batch in sort order, with the sort key of each of its rows.
#[derive(Debug)]
pub(crate) struct SortedBatch {
    /// The rows, sorted.
    pub(crate) batch: RecordBatch,
    /// Sort keys of the rows in their original order.
    keys: Rows,
    /// For each sorted row, its original position; `None` when the input was already sorted.
    order: Option<Vec<u32>>,
}

impl SortedBatch {
    /// The sort key of sorted row `i`.
    pub(crate) fn key(&self, i: usize) -> Row<'_> {
        match &self.order {
            Some(order) => self.keys.row(order[i] as usize),
            None => self.keys.row(i),
        }
    }

    /// The sort key of sorted row `i`, owned (to remember it across batches).
    pub(crate) fn owned_key(&self, i: usize) -> OwnedRow {
        self.key(i).owned()
    }
}

impl Sorter {
    /// A sorter for `order` over `schema`; `None` for the unsorted order.
    ///
    /// # Errors
    /// [`Error::Spec`] when the order does not fit the schema; [`Error::InvalidOption`] when
    /// the order id does not fit the manifest's `int` field.
    pub(crate) fn new(order: &SortOrder, schema: &Schema) -> Result<Option<Self>> {
        if order.is_unsorted() {
            return Ok(None);
        }
        order.validate(schema)?;
        let order_id = i32::try_from(order.order_id).map_err(|_| Error::InvalidOption {
            option: "sort_order".into(),
            value: order.order_id.to_string(),
            reason: "a data file records its sort order id as an int".into(),
        })?;
        let mut keys = Vec::with_capacity(order.fields.len());
        let mut fields = Vec::with_capacity(order.fields.len());
        for f in &order.fields {
            let source_type = schema.primitive_type(f.source_id)?.clone();
            let name = schema
                .field_name(f.source_id)
                .unwrap_or(SORT_CONTEXT)
                .to_string();
            let result_type = f.transform.result_type(&source_type)?;
            let java_uuid = result_type == PrimitiveType::Uuid;
            let options = SortOptions {
                descending: f.direction == SortDirection::Desc,
                nulls_first: f.null_order == NullOrder::NullsFirst,
            };
            fields.push(SortField::new_with_options(
                arrow_type(&Type::Primitive(result_type), &name)?,
                options,
            ));
            keys.push(KeyPlan {
                name,
                transform: f.transform.clone(),
                source_id: f.source_id,
                source_type,
                java_uuid,
            });
        }
        let converter = RowConverter::new(fields).map_err(|e| Error::arrow(SORT_CONTEXT, e))?;
        Ok(Some(Self {
            order_id,
            keys,
            converter,
        }))
    }

    /// The id of the order, as a data file records it.
    pub(crate) fn order_id(&self) -> i32 {
        self.order_id
    }

    /// The sort key of every row of an aligned `batch`.
    ///
    /// # Errors
    /// When a source column is missing or a transform fails.
    pub(crate) fn keys(&self, batch: &RecordBatch) -> Result<Rows> {
        let columns = self
            .keys
            .iter()
            .map(|k| {
                let source =
                    find_column(batch, k.source_id).ok_or_else(|| Error::MissingColumn {
                        name: k.name.clone(),
                    })?;
                let key = transform_array(&k.transform, &k.source_type, &source, &k.name)?;
                if k.java_uuid {
                    return java_uuid_keys(&key);
                }
                Ok(canonical_nans(key))
            })
            .collect::<Result<Vec<_>>>()?;
        self.converter
            .convert_columns(&columns)
            .map_err(|e| Error::arrow(SORT_CONTEXT, e))
    }

    /// `batch` with its rows in sort order (rows with equal keys keep their order).
    ///
    /// # Errors
    /// As [`Sorter::keys`], or when reordering the rows fails.
    pub(crate) fn sort(&self, batch: &RecordBatch) -> Result<SortedBatch> {
        let keys = self.keys(batch)?;
        let n = keys.num_rows();
        if (1..n).all(|i| keys.row(i - 1) <= keys.row(i)) {
            return Ok(SortedBatch {
                batch: batch.clone(),
                keys,
                order: None,
            });
        }
        let mut order: Vec<u32> = (0..n)
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        order.sort_by(|a, b| keys.row(*a as usize).cmp(&keys.row(*b as usize)));
        let indices = UInt32Array::from(order.clone());
        let sorted = arrow_select::take::take_record_batch(batch, &indices)
            .map_err(|e| Error::arrow("<batch>", e))?;
        Ok(SortedBatch {
            batch: sorted,
            keys,
            order: Some(order),
        })
    }
}

/// The rows of a slice of batches in (partition key, sort key) order, as (batch, row)
/// positions; `None` when they already are in that order.
///
/// `partition_keys` holds one entry per batch (`None` when unpartitioned) and `sort_keys`
/// one per batch; both come from the same converters, so rows compare across batches.
/// Rows with equal keys keep their input order.
pub(crate) fn slice_order(
    partition_keys: &[Option<Rows>],
    sort_keys: &[Rows],
) -> Option<Vec<(u32, u32)>> {
    let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    let compare = |a: &(u32, u32), b: &(u32, u32)| {
        let (ab, ar, bb, br) = (a.0 as usize, a.1 as usize, b.0 as usize, b.1 as usize);
        let partition = match (&partition_keys[ab], &partition_keys[bb]) {
            (Some(pa), Some(pb)) => pa.row(ar).cmp(&pb.row(br)),
            _ => std::cmp::Ordering::Equal,
        };
        partition.then_with(|| sort_keys[ab].row(ar).cmp(&sort_keys[bb].row(br)))
    };
    let mut order: Vec<(u32, u32)> = sort_keys
        .iter()
        .enumerate()
        .flat_map(|(b, keys)| (0..keys.num_rows()).map(move |r| (index(b), index(r))))
        .collect();
    if order.windows(2).all(|w| compare(&w[0], &w[1]).is_le()) {
        return None;
    }
    order.sort_by(compare);
    Some(order)
}

/// Uuid keys as bytes whose unsigned order is Java's `UUID.compareTo` (two signed longs), so
/// a file's `sort_order_id` is true for Java, the reference reader (write-spec gotcha G16).
fn java_uuid_keys(key: &ArrayRef) -> Result<ArrayRef> {
    let Some(a) = key.as_fixed_size_binary_opt() else {
        return Ok(key.clone());
    };
    let values = (0..a.len()).map(|i| {
        a.is_valid(i).then(|| {
            <&[u8; 16]>::try_from(a.value(i))
                .map(uuid_order::java_uuid_sort_key)
                .unwrap_or_default()
        })
    });
    let out = FixedSizeBinaryArray::try_from_sparse_iter_with_size(values, 16)
        .map_err(|e| Error::arrow(SORT_CONTEXT, e))?;
    Ok(Arc::new(out))
}

/// Float keys with every NaN replaced by the positive quiet NaN, so that the row format's
/// total order puts all NaNs together after `+inf`, as Java's `Double.compare` does.
fn canonical_nans(key: ArrayRef) -> ArrayRef {
    match key.data_type() {
        DataType::Float32 => {
            let a = key.as_primitive::<Float32Type>();
            if !a.values().iter().any(|v| v.is_nan()) {
                return key;
            }
            let out: Float32Array = a.unary(|v| if v.is_nan() { f32::NAN } else { v });
            Arc::new(out)
        }
        DataType::Float64 => {
            let a = key.as_primitive::<Float64Type>();
            if !a.values().iter().any(|v| v.is_nan()) {
                return key;
            }
            let out: Float64Array = a.unary(|v| if v.is_nan() { f64::NAN } else { v });
            Arc::new(out)
        }
        _ => key,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use arrow_array::types::Int64Type;
    use arrow_array::{Array, Int64Array, StringArray, StructArray};
    use arrow_buffer::NullBuffer;
    use iceberg_spec::types::{NestedField, StructType};
    use iceberg_spec::{SortField as IcebergSortField, Transform};

    use super::*;
    use crate::to_arrow::arrow_schema;

    fn key(
        source_id: i32,
        transform: Transform,
        desc: bool,
        nulls_first: bool,
    ) -> IcebergSortField {
        IcebergSortField {
            transform,
            source_id,
            direction: if desc {
                SortDirection::Desc
            } else {
                SortDirection::Asc
            },
            null_order: if nulls_first {
                NullOrder::NullsFirst
            } else {
                NullOrder::NullsLast
            },
        }
    }

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "name", PrimitiveType::String),
                NestedField::optional(
                    3,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        4,
                        "x",
                        PrimitiveType::Double,
                    )])),
                ),
            ],
        )
        .unwrap()
    }

    fn batch(
        ids: Vec<Option<i64>>,
        names: Vec<Option<&str>>,
        xs: Vec<Option<f64>>,
        s_valid: Option<Vec<bool>>,
    ) -> RecordBatch {
        let arrow = Arc::new(arrow_schema(&schema()).unwrap());
        let DataType::Struct(children) = arrow.field(2).data_type().clone() else {
            unreachable!()
        };
        let s = StructArray::new(
            children,
            vec![Arc::new(Float64Array::from(xs))],
            s_valid.map(NullBuffer::from),
        );
        RecordBatch::try_new(
            arrow,
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
                Arc::new(s),
            ],
        )
        .unwrap()
    }

    fn ids(b: &RecordBatch) -> Vec<Option<i64>> {
        b.column(0).as_primitive::<Int64Type>().iter().collect()
    }

    fn sorter(fields: Vec<IcebergSortField>) -> Sorter {
        let order = SortOrder {
            order_id: 3,
            fields,
        };
        Sorter::new(&order, &schema()).unwrap().unwrap()
    }

    #[test]
    fn unsorted_order_makes_no_sorter() {
        assert!(
            Sorter::new(&SortOrder::unsorted(), &schema())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn direction_and_null_order() {
        let b = batch(
            vec![Some(2), None, Some(1), Some(3)],
            vec![None; 4],
            vec![None; 4],
            None,
        );
        let cases = [
            (false, true, vec![None, Some(1), Some(2), Some(3)]),
            (false, false, vec![Some(1), Some(2), Some(3), None]),
            (true, true, vec![None, Some(3), Some(2), Some(1)]),
            (true, false, vec![Some(3), Some(2), Some(1), None]),
        ];
        for (desc, nulls_first, expected) in cases {
            let s = sorter(vec![key(1, Transform::Identity, desc, nulls_first)]);
            let sorted = s.sort(&b).unwrap();
            assert_eq!(
                ids(&sorted.batch),
                expected,
                "desc {desc} nulls_first {nulls_first}"
            );
            assert!(sorted.key(0) <= sorted.key(3));
        }
    }

    #[test]
    fn later_keys_break_ties_and_ties_keep_input_order() {
        let b = batch(
            vec![Some(1), Some(2), Some(3), Some(4)],
            vec![Some("b"), Some("a"), Some("b"), Some("a")],
            vec![None; 4],
            None,
        );
        let s = sorter(vec![key(2, Transform::Identity, false, true)]);
        assert_eq!(
            ids(&s.sort(&b).unwrap().batch),
            vec![Some(2), Some(4), Some(1), Some(3)]
        );
        let s = sorter(vec![
            key(2, Transform::Identity, false, true),
            key(1, Transform::Identity, true, true),
        ]);
        assert_eq!(
            ids(&s.sort(&b).unwrap().batch),
            vec![Some(4), Some(2), Some(3), Some(1)]
        );
    }

    #[test]
    fn transformed_keys() {
        let b = batch(
            vec![Some(25), Some(11), Some(-3), Some(19)],
            vec![None; 4],
            vec![None; 4],
            None,
        );
        // truncate[10]: 20, 10, -10, 10; ties keep input order.
        let s = sorter(vec![key(1, Transform::Truncate(10), false, true)]);
        assert_eq!(
            ids(&s.sort(&b).unwrap().batch),
            vec![Some(-3), Some(11), Some(19), Some(25)]
        );
        let s = sorter(vec![key(1, Transform::Truncate(10), true, true)]);
        assert_eq!(
            ids(&s.sort(&b).unwrap().batch),
            vec![Some(25), Some(11), Some(19), Some(-3)]
        );
    }

    #[test]
    fn nested_source_with_null_parent_and_java_float_order() {
        let b = batch(
            vec![Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)],
            vec![None; 6],
            vec![
                Some(f64::from_bits(0xFFF8_0000_0000_0001)),
                Some(0.0),
                Some(-0.0),
                Some(f64::INFINITY),
                Some(5.0),
                Some(-1.0),
            ],
            Some(vec![true, true, true, true, false, true]),
        );
        let s = sorter(vec![key(4, Transform::Identity, false, false)]);
        let sorted = s.sort(&b).unwrap();
        // -1, -0.0, 0.0, +inf, NaN (even a negative one), then the row whose struct is null.
        assert_eq!(
            ids(&sorted.batch),
            vec![Some(5), Some(2), Some(1), Some(3), Some(0), Some(4)]
        );
        assert!(sorted.batch.column(2).as_struct().is_null(5));
    }

    #[test]
    fn already_sorted_input_is_not_copied() {
        let b = batch(
            vec![Some(1), Some(1), Some(2)],
            vec![None; 3],
            vec![None; 3],
            None,
        );
        let s = sorter(vec![key(1, Transform::Identity, false, true)]);
        let sorted = s.sort(&b).unwrap();
        assert!(sorted.order.is_none());
        assert_eq!(ids(&sorted.batch), ids(&b));
        assert_eq!(sorted.owned_key(2).row(), sorted.key(2));
    }

    #[test]
    fn slice_order_groups_partitions_then_sorts() {
        let s = sorter(vec![key(1, Transform::Identity, true, true)]);
        let a = batch(
            vec![Some(1), Some(5)],
            vec![Some("x"), Some("y")],
            vec![None; 2],
            None,
        );
        let b = batch(
            vec![Some(3), Some(2)],
            vec![Some("y"), Some("x")],
            vec![None; 2],
            None,
        );
        let sort_keys = vec![s.keys(&a).unwrap(), s.keys(&b).unwrap()];
        // Partition by name (ascending), then id descending.
        let names = sorter(vec![key(2, Transform::Identity, false, true)]);
        let partition_keys = vec![Some(names.keys(&a).unwrap()), Some(names.keys(&b).unwrap())];
        assert_eq!(
            slice_order(&partition_keys, &sort_keys),
            Some(vec![(1, 1), (0, 0), (0, 1), (1, 0)])
        );
        assert_eq!(
            slice_order(&[None, None], &sort_keys),
            Some(vec![(0, 1), (1, 0), (1, 1), (0, 0)])
        );
        let sorted = batch(vec![Some(9), Some(4)], vec![None; 2], vec![None; 2], None);
        assert_eq!(slice_order(&[None], &[s.keys(&sorted).unwrap()]), None);
    }

    #[test]
    fn orders_that_do_not_fit_are_refused() {
        let bad_source = SortOrder {
            order_id: 1,
            fields: vec![key(3, Transform::Identity, false, true)],
        };
        assert!(Sorter::new(&bad_source, &schema()).is_err());
        let bad_id = SortOrder {
            order_id: i64::from(i32::MAX) + 1,
            fields: vec![key(1, Transform::Identity, false, true)],
        };
        assert!(matches!(
            Sorter::new(&bad_id, &schema()),
            Err(Error::InvalidOption { .. })
        ));
    }
}
