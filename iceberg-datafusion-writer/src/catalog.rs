//! Any of our catalogs as a DataFusion catalog: its namespaces are schemas, its tables
//! tables, so SQL names them `catalog.namespace.table`; [`register_catalogs`] installs a
//! registry's catalogs and `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` in a session.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::common::Result as DfResult;
use datafusion::datasource::TableProvider;
use datafusion::prelude::SessionContext;
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableIdent};

use crate::codec::CatalogRegistry;
use crate::create::{IcebergTableFactory, STORED_AS};
use crate::error::{Error, Result};
use crate::provider::IcebergTableProvider;

/// Registers each of `registry`'s catalogs in `ctx` under its name, and
/// [`IcebergTableFactory`] for `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` in them.
///
/// # Errors
/// When a catalog cannot list its namespaces or their tables.
pub async fn register_catalogs(ctx: &SessionContext, registry: &CatalogRegistry) -> Result<()> {
    for (name, catalog) in registry.iter() {
        let provider = IcebergCatalogProvider::try_new(catalog.clone()).await?;
        ctx.register_catalog(name, Arc::new(provider));
    }
    let factory = Arc::new(IcebergTableFactory::new(registry.clone()));
    ctx.state_ref()
        .write()
        .table_factories_mut()
        .insert(STORED_AS.to_string(), factory);
    Ok(())
}

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
                tables: RwLock::new(tables),
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
    /// The table names listed when the provider was made, and those created through it.
    tables: RwLock<Vec<String>>,
}

impl IcebergSchemaProvider {
    fn names(&self) -> Vec<String> {
        // A panic while holding the lock cannot leave a list of names half written.
        match self.tables.read() {
            Ok(names) => names.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

#[async_trait]
impl SchemaProvider for IcebergSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.names()
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
        self.names().iter().any(|t| t == name)
    }

    /// Takes the tables [`IcebergTableFactory`] made (already in this catalog, under this
    /// name); any other table is refused, as this catalog holds only its own Iceberg tables.
    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> DfResult<Option<Arc<dyn TableProvider>>> {
        let ident = TableIdent::new(self.namespace.clone(), name.as_str());
        let ours = table
            .downcast_ref::<IcebergTableProvider>()
            .is_some_and(|t| t.ident() == &ident && same(t.catalog(), &self.catalog));
        if !ours {
            let table = ident.to_string();
            return Err(Error::NotIcebergTable { table }.into());
        }
        let mut names = match self.tables.write() {
            Ok(names) => names,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !names.contains(&name) {
            names.push(name);
        }
        Ok(None)
    }
}

/// Whether `a` and `b` are the same catalog instance.
fn same(a: &Arc<dyn Catalog>, b: &Arc<dyn Catalog>) -> bool {
    std::ptr::eq(Arc::as_ptr(a).cast::<()>(), Arc::as_ptr(b).cast::<()>())
}
