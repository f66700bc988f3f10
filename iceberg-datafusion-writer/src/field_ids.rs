//! A data file's columns matched to the table's by Iceberg field id, not by name: a column
//! renamed since the file was written reads under its new name, a column added since reads
//! as null (even when an older, dropped column had its name), and a promoted type is cast.
//! Files without field ids (registered with `add-files`) are matched through the table's
//! name mapping, as Java and PyIceberg read them.
//!
//! DataFusion's Parquet source matches by name: [`FieldIdAdapterFactory`] renames the
//! table's columns, per file, to the names the file uses for the same ids, and lets
//! DataFusion's default adapter do the rest (casts, nulls for missing columns).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapter, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::scalar::ScalarValue;
use iceberg_spec::name_mapping::NameMapping;
use iceberg_spec::{Datum, Schema};

/// The prefix of the name a table column gets in a file that does not have it: no file
/// column can be called that, so DataFusion reads the column as null.
const ABSENT: &str = "\u{0}iceberg-absent-field-";

/// Makes, for each file a scan opens, an adapter that matches its columns by field id.
#[derive(Debug, Clone, Default)]
pub struct FieldIdAdapterFactory {
    /// Field ids by top-level column name, for files whose columns carry none.
    name_mapping: HashMap<String, i32>,
    /// What a column missing from a file reads as, by field id: its `initial-default`
    /// (columns added with one); the others read as null.
    defaults: HashMap<i32, ScalarValue>,
}

impl FieldIdAdapterFactory {
    /// A factory for a table with this name mapping (`None`: files without field ids have
    /// no columns the table knows).
    pub fn new(mapping: Option<&NameMapping>) -> Self {
        let mut name_mapping = HashMap::new();
        for field in mapping.map(|m| m.fields.as_slice()).unwrap_or_default() {
            if let Some(id) = field.field_id {
                for name in &field.names {
                    name_mapping.insert(name.clone(), id);
                }
            }
        }
        Self {
            name_mapping,
            defaults: HashMap::new(),
        }
    }

    /// The same factory, with the `initial-default`s of `schema`'s top-level primitive
    /// columns filled into files that lack them.
    ///
    /// # Errors
    /// A default that is not a value of its column's type;
    /// [`crate::Error::NestedDefaultNotSupported`] for a nested field with one (DataFusion
    /// would read it as null, or refuse it when it is required, in files that lack it).
    pub fn with_defaults_of(mut self, schema: &Schema) -> Result<Self> {
        if let Some(nested) = schema
            .fields_breadth_first()
            .into_iter()
            .find(|f| f.parent_id.is_some() && f.field.initial_default.is_some())
        {
            return Err(crate::Error::NestedDefaultNotSupported {
                column: nested.full_name.clone(),
            }
            .into());
        }
        for field in schema.fields() {
            let (Some(json), Some(ty)) = (&field.initial_default, field.field_type.as_primitive())
            else {
                continue;
            };
            let datum = Datum::from_json(ty, json).map_err(crate::Error::from)?;
            let arrow = iceberg_write::arrow_type(&field.field_type, &field.name)
                .map_err(crate::Error::from)?;
            self.defaults
                .insert(field.id, scalar(&datum).cast_to(&arrow)?);
        }
        Ok(self)
    }

    /// The field id of a file's column: its own, else the name mapping's.
    fn file_field_id(&self, field: &Field) -> Option<i32> {
        match field_id(field) {
            Some(id) => Some(id),
            None => self.name_mapping.get(field.name()).copied(),
        }
    }
}

/// `d` as a DataFusion scalar (before the cast to its column's exact Arrow type).
fn scalar(d: &Datum) -> ScalarValue {
    match d {
        Datum::Boolean(v) => ScalarValue::Boolean(Some(*v)),
        Datum::Int(v) => ScalarValue::Int32(Some(*v)),
        Datum::Long(v) => ScalarValue::Int64(Some(*v)),
        Datum::Float(v) => ScalarValue::Float32(Some(*v)),
        Datum::Double(v) => ScalarValue::Float64(Some(*v)),
        Datum::Decimal {
            unscaled,
            precision,
            scale,
        } => ScalarValue::Decimal128(
            Some(*unscaled),
            u8::try_from(*precision).unwrap_or(38),
            i8::try_from(*scale).unwrap_or(0),
        ),
        Datum::Date(v) => ScalarValue::Date32(Some(*v)),
        Datum::Time(v) => ScalarValue::Time64Microsecond(Some(*v)),
        Datum::Timestamp(v) | Datum::Timestamptz(v) => {
            ScalarValue::TimestampMicrosecond(Some(*v), None)
        }
        Datum::TimestampNs(v) | Datum::TimestamptzNs(v) => {
            ScalarValue::TimestampNanosecond(Some(*v), None)
        }
        Datum::String(v) => ScalarValue::Utf8(Some(v.clone())),
        Datum::Uuid(v) => ScalarValue::FixedSizeBinary(16, Some(v.as_bytes().to_vec())),
        Datum::Fixed(v) => ScalarValue::FixedSizeBinary(
            i32::try_from(v.len()).unwrap_or(i32::MAX),
            Some(v.clone()),
        ),
        Datum::Binary(v) => ScalarValue::LargeBinary(Some(v.clone())),
    }
}

/// The Iceberg field id a Parquet-derived Arrow field carries.
pub(crate) fn field_id(field: &Field) -> Option<i32> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok())
}

impl PhysicalExprAdapterFactory for FieldIdAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let mut file_names: HashMap<i32, &str> = HashMap::new();
        for field in physical_file_schema.fields() {
            if let Some(id) = self.file_field_id(field) {
                file_names.entry(id).or_insert(field.name());
            }
        }
        // The table's columns under the names the file uses for their ids, in the same
        // order (column indices stay valid).
        let mut renames = HashMap::new();
        let mut filled = HashMap::new();
        let fields: Vec<Field> = logical_file_schema
            .fields()
            .iter()
            .map(|f| {
                let name = match field_id(f) {
                    Some(id) => match file_names.get(&id) {
                        Some(name) => (*name).to_string(),
                        None => {
                            if let Some(value) = self.defaults.get(&id) {
                                filled.insert(f.name().clone(), value.clone());
                            }
                            format!("{ABSENT}{id}")
                        }
                    },
                    // A column without an id (none of ours): matched by name.
                    None => f.name().clone(),
                };
                if &name != f.name() {
                    renames.insert(f.name().clone(), name.clone());
                }
                f.as_ref().clone().with_name(name)
            })
            .collect();
        let renamed = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        Ok(Arc::new(FieldIdAdapter {
            renames,
            filled,
            inner: DefaultPhysicalExprAdapter::new(renamed, physical_file_schema),
        }))
    }
}

/// Renames the table's columns in an expression to the file's names for their ids, then
/// adapts it as DataFusion does by name.
#[derive(Debug)]
struct FieldIdAdapter {
    /// Table column name -> the name it has in this file (or an absent name).
    renames: HashMap<String, String>,
    /// Table column name -> the value it reads as, for columns the file lacks that have an
    /// initial default.
    filled: HashMap<String, ScalarValue>,
    inner: DefaultPhysicalExprAdapter,
}

impl PhysicalExprAdapter for FieldIdAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        let renamed = if self.renames.is_empty() && self.filled.is_empty() {
            expr
        } else {
            expr.transform(|e| {
                let Some(column) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                if let Some(value) = self.filled.get(column.name()) {
                    let literal: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(value.clone()));
                    return Ok(Transformed::yes(literal));
                }
                match self.renames.get(column.name()) {
                    Some(name) => Ok(Transformed::yes(
                        Arc::new(Column::new(name, column.index())) as Arc<dyn PhysicalExpr>,
                    )),
                    None => Ok(Transformed::no(e)),
                }
            })
            .data()?
        };
        self.inner.rewrite(renamed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use datafusion::arrow::datatypes::DataType;

    fn with_id(name: &str, ty: DataType, id: i32) -> Field {
        Field::new(name, ty, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    fn column(schema: &ArrowSchema, name: &str) -> Arc<dyn PhysicalExpr> {
        Arc::new(Column::new(name, schema.index_of(name).unwrap()))
    }

    #[test]
    fn renamed_columns_read_by_id_and_added_ones_as_null() {
        // The table renamed `a` (id 1) to `b`, and added a new `a` (id 3).
        let table = ArrowSchema::new(vec![
            with_id("b", DataType::Int64, 1),
            with_id("a", DataType::Int64, 3),
        ]);
        let file = Arc::new(ArrowSchema::new(vec![with_id("a", DataType::Int64, 1)]));
        let adapter = FieldIdAdapterFactory::new(None)
            .create(Arc::new(table.clone()), file)
            .unwrap();
        let b = adapter.rewrite(column(&table, "b")).unwrap();
        let b = b.downcast_ref::<Column>().unwrap();
        assert_eq!((b.name(), b.index()), ("a", 0), "b is the file's a");
        let a = adapter.rewrite(column(&table, "a")).unwrap();
        assert!(a.downcast_ref::<Literal>().unwrap().value().is_null());
    }

    #[test]
    fn files_without_ids_use_the_name_mapping_and_promotions_cast() {
        let table = ArrowSchema::new(vec![with_id("total", DataType::Int64, 7)]);
        let file = Arc::new(ArrowSchema::new(vec![Field::new(
            "sum",
            DataType::Int32,
            true,
        )]));
        let mapping =
            NameMapping::from_json(r#"[{"field-id": 7, "names": ["total", "sum"]}]"#).unwrap();
        let adapter = FieldIdAdapterFactory::new(Some(&mapping))
            .create(Arc::new(table.clone()), file.clone())
            .unwrap();
        let total = adapter.rewrite(column(&table, "total")).unwrap();
        assert_eq!(total.data_type(&file).unwrap(), DataType::Int64);
        assert!(total.to_string().contains("sum"), "{total}");
        // Without the mapping, the file has no column the table knows.
        let adapter = FieldIdAdapterFactory::new(None)
            .create(Arc::new(table.clone()), file)
            .unwrap();
        let total = adapter.rewrite(column(&table, "total")).unwrap();
        assert!(total.downcast_ref::<Literal>().is_some());
    }
}
