//! Sort orders: how rows are ordered within data files.
//!
//! Spec: "Sorting" and Appendix C (sort order JSON).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::transform::Transform;

/// Ascending or descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortDirection {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

/// Where nulls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NullOrder {
    /// Nulls before all values.
    #[serde(rename = "nulls-first")]
    NullsFirst,
    /// Nulls after all values.
    #[serde(rename = "nulls-last")]
    NullsLast,
}

/// One key of a sort order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortField {
    /// Transform applied to the source before comparing.
    pub transform: Transform,
    /// Source column id.
    pub source_id: i32,
    /// Direction.
    pub direction: SortDirection,
    /// Null placement.
    pub null_order: NullOrder,
}

/// A sort order: an id and its keys; order 0 with no keys means unsorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortOrder {
    /// The order id (0 is reserved for unsorted).
    pub order_id: i64,
    /// The sort keys, most significant first.
    pub fields: Vec<SortField>,
}

impl SortOrder {
    /// The unsorted order, id 0.
    pub fn unsorted() -> Self {
        Self {
            order_id: 0,
            fields: Vec::new(),
        }
    }

    /// True when the order has no keys.
    pub fn is_unsorted(&self) -> bool {
        self.fields.is_empty()
    }

    /// Checks every key against `schema`, for writing: a [`Transform::Unknown`] key is
    /// refused.
    ///
    /// # Errors
    /// [`Error::InvalidSortOrder`] naming the key at fault, [`Error::InvalidTransform`] for
    /// an unknown transform.
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        self.check(schema, false)
    }

    /// Checks every key against `schema` as a reader must: an unknown transform's key passes
    /// when its source exists.
    pub(crate) fn validate_loaded(&self, schema: &Schema) -> Result<()> {
        self.check(schema, true)
    }

    fn check(&self, schema: &Schema, allow_unknown: bool) -> Result<()> {
        if self.order_id == 0 && !self.fields.is_empty() {
            return Err(Error::InvalidSortOrder {
                reason: "order id 0 is reserved for the unsorted order".into(),
            });
        }
        for f in &self.fields {
            let ty = schema
                .field_by_id(f.source_id)
                .and_then(|field| field.field_type.as_primitive())
                .ok_or_else(|| Error::InvalidSortOrder {
                    reason: format!("sort source id {} is not a primitive column", f.source_id),
                })?;
            if !(allow_unknown && f.transform.is_unknown()) {
                f.transform.result_type(ty)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn json_form() {
        let json = serde_json::json!({"order-id": 1, "fields": [
            {"transform": "identity", "source-id": 2, "direction": "desc", "null-order": "nulls-last"}]});
        let o: SortOrder = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(o.fields[0].direction, SortDirection::Desc);
        assert_eq!(serde_json::to_value(&o).unwrap(), json);
        assert!(SortOrder::unsorted().is_unsorted());
    }
}
