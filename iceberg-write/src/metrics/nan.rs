//! Metrics Parquet statistics cannot give, taken from the Arrow arrays as they are written:
//! NaN counts and NaN-free bounds of float/double columns (with −0.0 < +0.0, as Java orders
//! them), and the null counts and bounds of uuid columns, with whether those bounds hold in
//! Java's uuid order too (gotcha G16).
//!
//! Only columns at top level or inside structs are tracked; leaves inside lists and maps get
//! column sizes alone.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Fields};

use iceberg_spec::datum::uuid_order::uuid_sign_class;

use crate::to_arrow::field_id_of;

/// NaN count and NaN-free min/max of one float or double column (f32 values held exactly).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct FloatStats {
    /// NaN values seen.
    pub(crate) nan_count: i64,
    /// Smallest non-NaN value, −0.0 below +0.0.
    pub(crate) min: Option<f64>,
    /// Largest non-NaN value, +0.0 above −0.0.
    pub(crate) max: Option<f64>,
}

impl FloatStats {
    fn add(&mut self, v: f64) {
        if v.is_nan() {
            self.nan_count += 1;
            return;
        }
        if self.min.is_none_or(|m| v.total_cmp(&m).is_lt()) {
            self.min = Some(v);
        }
        if self.max.is_none_or(|m| v.total_cmp(&m).is_gt()) {
            self.max = Some(v);
        }
    }
}

/// Null count, bounds and sign classes of one uuid column. Parquet keeps no statistics for
/// uuid columns (see `writer::file::writer_properties`), so all of them come from here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct UuidStats {
    /// The sign classes the values have shown, one bit each.
    seen: u8,
    /// Null values (a null parent struct included, as Parquet counts them).
    pub(crate) nulls: i64,
    /// Smallest value in unsigned byte order.
    pub(crate) min: Option<[u8; 16]>,
    /// Largest value in unsigned byte order.
    pub(crate) max: Option<[u8; 16]>,
}

impl UuidStats {
    fn add(&mut self, bytes: &[u8]) {
        let Ok(v) = <[u8; 16]>::try_from(bytes) else {
            return;
        };
        self.seen |= 1 << uuid_sign_class(&uuid::Uuid::from_bytes(v));
        if self.min.is_none_or(|m| v < m) {
            self.min = Some(v);
        }
        if self.max.is_none_or(|m| v > m) {
            self.max = Some(v);
        }
    }

    /// True when every value is of one sign class (it shares the top bit of byte 0 and of
    /// byte 8), so Java's signed-long order and the unsigned byte order agree on this
    /// column's bounds.
    pub(crate) fn orders_agree(self) -> bool {
        self.seen.count_ones() <= 1
    }
}

/// Per-field-id array-derived metrics of one data file.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArrayMetrics {
    pub(crate) floats: HashMap<i32, FloatStats>,
    pub(crate) uuids: HashMap<i32, UuidStats>,
}

impl ArrayMetrics {
    /// Adds the values of an aligned batch (fields carry their `PARQUET:field_id`).
    pub(crate) fn update(&mut self, batch: &RecordBatch) {
        let schema = batch.schema();
        self.visit(schema.fields(), batch.columns(), None);
    }

    fn visit(&mut self, fields: &Fields, cols: &[ArrayRef], parent_valid: Option<&NullBuffer>) {
        for (field, col) in fields.iter().zip(cols) {
            let Some(id) = field_id_of(field) else {
                continue;
            };
            let valid = NullBuffer::union(parent_valid, col.logical_nulls().as_ref());
            let is_valid = |i: usize| valid.as_ref().is_none_or(|n| n.is_valid(i));
            match col.data_type() {
                DataType::Struct(children) => {
                    let s = col.as_struct();
                    self.visit(children, s.columns(), valid.as_ref());
                }
                DataType::Float32 => {
                    let stats = self.floats.entry(id).or_default();
                    for (i, v) in col
                        .as_primitive::<Float32Type>()
                        .values()
                        .iter()
                        .enumerate()
                    {
                        if is_valid(i) {
                            stats.add(f64::from(*v));
                        }
                    }
                }
                DataType::Float64 => {
                    let stats = self.floats.entry(id).or_default();
                    for (i, v) in col
                        .as_primitive::<Float64Type>()
                        .values()
                        .iter()
                        .enumerate()
                    {
                        if is_valid(i) {
                            stats.add(*v);
                        }
                    }
                }
                DataType::FixedSizeBinary(16)
                    if field.extension_type_name() == Some("arrow.uuid") =>
                {
                    let stats = self.uuids.entry(id).or_default();
                    let a = col.as_fixed_size_binary();
                    for i in 0..a.len() {
                        if is_valid(i) {
                            stats.add(a.value(i));
                        } else {
                            stats.nulls += 1;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::HashMap as Map;
    use std::sync::Arc;

    use arrow_array::{Float64Array, StructArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    fn with_id(f: Field, id: i32) -> Field {
        f.with_metadata(Map::from([(
            "PARQUET:field_id".to_string(),
            id.to_string(),
        )]))
    }

    #[test]
    fn nan_and_signed_zero() {
        let values = Float64Array::from(vec![
            Some(f64::NAN),
            Some(0.0),
            None,
            Some(-0.0),
            Some(f64::NAN),
        ]);
        let field = with_id(Field::new("d", DataType::Float64, true), 1);
        let batch =
            RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(values)])
                .unwrap();
        let mut m = ArrayMetrics::default();
        m.update(&batch);
        let s = m.floats[&1];
        assert_eq!(s.nan_count, 2);
        assert!(s.min.unwrap().is_sign_negative() && s.min.unwrap() == 0.0);
        assert!(s.max.unwrap().is_sign_positive());
    }

    #[test]
    fn null_struct_hides_child_values() {
        let child = with_id(Field::new("d", DataType::Float64, true), 2);
        let s = StructArray::try_new(
            vec![child].into(),
            vec![Arc::new(Float64Array::from(vec![f64::NAN, 5.0]))],
            Some(NullBuffer::from(vec![false, true])),
        )
        .unwrap();
        let field = with_id(Field::new("s", s.data_type().clone(), true), 1);
        let batch =
            RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(s)]).unwrap();
        let mut m = ArrayMetrics::default();
        m.update(&batch);
        assert_eq!(
            m.floats[&2],
            FloatStats {
                nan_count: 0,
                min: Some(5.0),
                max: Some(5.0)
            }
        );
    }

    #[test]
    fn uuid_sign_rule() {
        let mut s = UuidStats::default();
        s.add(&[0x01; 16]);
        s.add(&[0x7F; 16]);
        assert!(s.orders_agree());
        assert_eq!((s.min, s.max), (Some([0x01; 16]), Some([0x7F; 16])));
        s.add(&[0x80; 16]);
        assert!(!s.orders_agree());
        let mut s = UuidStats::default();
        let mut v = [0u8; 16];
        s.add(&v);
        v[8] = 0x80;
        s.add(&v);
        assert!(!s.orders_agree(), "byte 8's top bit is Java's second sign");
    }
}
