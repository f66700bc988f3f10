//! [`IcebergTableProvider`]: one Iceberg table as a DataFusion table, for `SELECT` and
//! `INSERT INTO`.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::{Result as DfResult, ScalarValue};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, lit};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use iceberg_append::{Catalog, Environment, SystemEnvironment, Table, TableIdent};

use crate::commit::IcebergCommitExec;
use crate::error::{Error, Result};
use crate::scan::{ScanRequest, plan_files, plan_scan};
use crate::write::{IcebergWriteExec, WriteTarget};

/// An Iceberg table in DataFusion: its columns are the current schema's; a scan reads the
/// current snapshot (loaded when the query is planned), an insert appends one snapshot.
#[derive(Debug, Clone)]
pub struct IcebergTableProvider {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    /// The table's columns when the provider was made (with field ids).
    schema: SchemaRef,
    /// The id of that schema: an insert planned on it goes to a table still on it.
    schema_id: i32,
    /// The `write-default` (v3) of top-level columns that have one: what an `INSERT` that
    /// leaves them out writes (the spec's rule), where DataFusion would write NULL.
    defaults: HashMap<String, Expr>,
}

impl IcebergTableProvider {
    /// The table `ident` of `catalog`, its columns as they are now.
    ///
    /// # Errors
    /// When the table cannot be loaded or its schema has no Arrow equivalent.
    pub async fn try_new(catalog: Arc<dyn Catalog>, ident: TableIdent) -> Result<Self> {
        let table = catalog.load_table(&ident).await?;
        Self::from_table(catalog, ident, &table)
    }

    /// `table`, already loaded from `catalog` as `ident`.
    ///
    /// # Errors
    /// When the table's schema has no Arrow equivalent.
    pub fn from_table(catalog: Arc<dyn Catalog>, ident: TableIdent, table: &Table) -> Result<Self> {
        let iceberg = table.metadata.current_schema()?;
        let schema = Arc::new(iceberg_write::arrow_schema(iceberg)?);
        let mut defaults = HashMap::new();
        for (field, arrow) in iceberg.fields().iter().zip(schema.fields()) {
            let (Some(value), Some(ty)) = (&field.write_default, field.field_type.as_primitive())
            else {
                continue;
            };
            let Some(one) =
                iceberg_write::default_array(value, ty, arrow.data_type(), 1, &field.name)?
            else {
                continue;
            };
            let scalar =
                ScalarValue::try_from_array(&one, 0).map_err(|source| Error::WriteDefault {
                    column: field.name.clone(),
                    source,
                })?;
            defaults.insert(field.name.clone(), lit(scalar));
        }
        Ok(Self {
            catalog,
            ident,
            schema,
            schema_id: table.metadata.current_schema_id,
            defaults,
        })
    }

    /// `ident` of `catalog` with the columns `schema` (Arrow, with field ids) of its schema
    /// `schema_id`, as described by a plan made elsewhere: no IO.
    pub fn from_parts(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        schema: SchemaRef,
        schema_id: i32,
    ) -> Self {
        Self {
            catalog,
            ident,
            schema,
            schema_id,
            defaults: HashMap::new(),
        }
    }

    /// The table's identifier in its catalog.
    pub fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The catalog the table is in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// The id of the schema whose columns the provider has.
    pub fn schema_id(&self) -> i32 {
        self.schema_id
    }

    async fn load(&self) -> Result<Table> {
        Ok(self.catalog.load_table(&self.ident).await?)
    }
}

#[async_trait]
impl TableProvider for IcebergTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.defaults.get(column)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        // Files are skipped by their bounds, rows are not: DataFusion filters them again.
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let table = self.load().await?;
        let io = self.catalog.table_io(&table);
        let name = self.ident.to_string();
        let files = plan_files(&io, &name, &table.metadata, &self.schema, filters).await?;
        plan_scan(
            state,
            &self.catalog,
            &self.ident,
            table,
            (self.schema_id, &self.schema),
            files.files,
            ScanRequest {
                projection,
                filters,
                limit,
            },
        )
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append {
            return Err(Error::UnsupportedInsert {
                table: self.ident.to_string(),
                operation: insert_op.to_string(),
            }
            .into());
        }
        let table = self.load().await?;
        let current = table.metadata.current_schema_id;
        if current != self.schema_id {
            // DataFusion matched the input to the columns as they were; the writer would
            // match them by name to the columns as they are.
            return Err(Error::SchemaChanged {
                table: self.ident.to_string(),
                planned: self.schema_id,
                current,
            }
            .into());
        }
        let env = SystemEnvironment;
        let target = WriteTarget {
            ident: self.ident.clone(),
            metadata_location: table.metadata_location,
            metadata: table.metadata,
            operation_id: env.new_uuid(),
        };
        let write = IcebergWriteExec::try_new(input, Arc::new(target), self.catalog.clone())?;
        let write = Arc::new(write);
        let gathered = Arc::new(CoalescePartitionsExec::new(write));
        Ok(Arc::new(IcebergCommitExec::new(
            gathered,
            self.catalog.clone(),
            self.ident.clone(),
            env.new_snapshot_id(),
        )))
    }
}
