//! Any of our catalogs as a DataFusion catalog: its namespaces are schemas, its tables
//! tables, so SQL names them `catalog.namespace.table`.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::common::Result as DfResult;
use datafusion::datasource::TableProvider;
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableIdent};

use crate::error::Result;
use crate::provider::IcebergTableProvider;

/// A catalog's namespaces as DataFusion schemas (listed when it is made; tables are loaded
/// when a query names them, so every query sees the table's current snapshot).
#[derive(Debug)]
pub struct IcebergCatalogProvider {
    schemas: BTreeMap<String, Arc<IcebergSchemaProvider>>,
}

impl IcebergCatalogProvider {
    /// The namespaces and tables of `catalog`, as they are now.
    ///
    /// # Errors
    /// When the catalog cannot list its namespaces or their tables.
    pub async fn try_new(catalog: Arc<dyn Catalog>) -> Result<Self> {
        let mut schemas = BTreeMap::new();
        for namespace in catalog.list_namespaces(None).await? {
            let tables = catalog
                .list_tables(&namespace)
                .await?
                .into_iter()
                .map(|t| t.name)
                .collect();
            let schema = IcebergSchemaProvider {
                catalog: catalog.clone(),
                namespace: namespace.clone(),
                tables,
            };
            schemas.insert(namespace.to_string(), Arc::new(schema));
        }
        Ok(Self { schemas })
    }
}

impl CatalogProvider for IcebergCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        self.schemas.keys().cloned().collect()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.schemas
            .get(name)
            .map(|s| s.clone() as Arc<dyn SchemaProvider>)
    }
}

/// One namespace's tables.
#[derive(Debug)]
pub struct IcebergSchemaProvider {
    catalog: Arc<dyn Catalog>,
    namespace: NamespaceIdent,
    tables: Vec<String>,
}

#[async_trait]
impl SchemaProvider for IcebergSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.tables.clone()
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        let ident = TableIdent::new(self.namespace.clone(), name);
        match IcebergTableProvider::try_new(self.catalog.clone(), ident).await {
            Ok(provider) => Ok(Some(Arc::new(provider))),
            Err(crate::Error::Append(e)) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
    }
}
