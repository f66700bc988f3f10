//! A catalog for tests of the commit path: [`InterceptingCatalog`] forwards every call to a
//! real catalog, except the swaps and loads a [`CommitInterceptor`] takes (a lost answer, a
//! racing writer, an unreachable server), so a test writes the fault and nothing else.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicBool, Ordering};
//!
//! use async_trait::async_trait;
//! use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
//! use iceberg_append::{Catalog, DeterministicEnvironment, Error, InMemoryCatalog};
//! use iceberg_append::{Result, TableCreation, TableIdent, commit_append};
//! use iceberg_io::FileIo;
//! use iceberg_spec::{DataFile, NestedField, PrimitiveType, Schema, TableMetadata};
//!
//! /// The first swap lands, then its answer is lost as a conflict.
//! #[derive(Debug, Default)]
//! struct LosesFirstAnswer(AtomicBool);
//!
//! #[async_trait]
//! impl CommitInterceptor<InMemoryCatalog> for LosesFirstAnswer {
//!     async fn commit(
//!         &self,
//!         inner: &InMemoryCatalog,
//!         ident: &TableIdent,
//!         base: &str,
//!         new: &TableMetadata,
//!     ) -> Result<String> {
//!         let location = inner.commit(ident, base, new).await?;
//!         if self.0.swap(true, Ordering::SeqCst) {
//!             return Ok(location);
//!         }
//!         Err(Error::CommitConflict {
//!             table: ident.to_string(),
//!             expected: Some(base.to_string()),
//!             found: None,
//!         })
//!     }
//! }
//!
//! let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 1, 7));
//! let inner = InMemoryCatalog::new(FileIo::memory(), env.clone());
//! let catalog = InterceptingCatalog::new(inner, LosesFirstAnswer::default());
//! let ident = TableIdent::parse("db.t").expect("a table name");
//! let schema = Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)])?;
//! catalog.create_table(&ident, TableCreation::new("memory://wh/db/t", schema)).await?;
//! // The lost answer is found on reload: one snapshot, reported as landed.
//! let file = DataFile {
//!     file_path: "memory://wh/db/t/data/a.parquet".into(),
//!     record_count: 1,
//!     file_size_in_bytes: 100,
//!     ..Default::default()
//! };
//! commit_append(&catalog, &ident, vec![file], Default::default(), env.as_ref()).await?;
//! assert_eq!(catalog.load_table(&ident).await?.metadata.snapshots.len(), 1);
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use crate::cache::MetadataCache;
use crate::catalog::{Catalog, NamespaceIdent, TableIdent};
use crate::env::Environment;
use crate::error::Result;
use crate::table::{Table, TableCreation};

/// What a test does in place of the wrapped catalog's swaps (and, if it likes, its loads).
#[async_trait]
pub trait CommitInterceptor<C: Catalog>: Send + Sync + fmt::Debug {
    /// Called for every commit instead of `inner.commit`; calls it to let the swap through.
    ///
    /// # Errors
    /// Whatever the fault under test reports.
    async fn commit(
        &self,
        inner: &C,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String>;

    /// Called for every load; passes it through unless overridden.
    ///
    /// # Errors
    /// As [`Catalog::load_table`], or the fault under test.
    async fn load_table(&self, inner: &C, ident: &TableIdent) -> Result<Table> {
        inner.load_table(ident).await
    }
}

/// A catalog that forwards everything to `inner`, except the commits (and loads) its
/// interceptor takes.
#[derive(Debug)]
pub struct InterceptingCatalog<C, I> {
    /// The catalog under the faults, reached directly to set up or inspect a table.
    pub inner: C,
    /// The fault under test, with whatever state it keeps.
    pub interceptor: I,
}

impl<C: Catalog, I: CommitInterceptor<C>> InterceptingCatalog<C, I> {
    /// `inner` with its commits going through `interceptor`.
    pub fn new(inner: C, interceptor: I) -> Self {
        Self { inner, interceptor }
    }
}

#[async_trait]
impl<C: Catalog, I: CommitInterceptor<C>> Catalog for InterceptingCatalog<C, I> {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        self.interceptor.load_table(&self.inner, ident).await
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        self.inner.create_table(ident, creation).await
    }

    async fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        self.inner.default_table_location(ident).await
    }

    async fn stage_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
        env: &dyn Environment,
    ) -> Result<Table> {
        self.inner.stage_table(ident, creation, env).await
    }

    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> Result<Table> {
        self.inner.create_table_from_metadata(ident, metadata).await
    }

    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String> {
        self.interceptor
            .commit(&self.inner, ident, base_location, new_metadata)
            .await
    }

    fn io(&self) -> &FileIo {
        self.inner.io()
    }

    fn table_io(&self, table: &Table) -> FileIo {
        self.inner.table_io(table)
    }

    fn writes_metadata_files(&self) -> bool {
        self.inner.writes_metadata_files()
    }

    fn metadata_cache(&self) -> Option<&MetadataCache> {
        self.inner.metadata_cache()
    }

    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        self.inner.table_exists(ident).await
    }

    async fn list_tables(&self, namespace: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace).await
    }

    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        self.inner.drop_table(ident, purge).await
    }

    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.inner.rename_table(from, to).await
    }

    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        self.inner.register_table(ident, metadata_location).await
    }

    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        self.inner.create_namespace(namespace, properties).await
    }

    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        self.inner.list_namespaces(parent).await
    }

    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> Result<bool> {
        self.inner.namespace_exists(namespace).await
    }

    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        self.inner.namespace_properties(namespace).await
    }

    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        self.inner
            .update_namespace_properties(namespace, removals, updates)
            .await
    }

    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> Result<()> {
        self.inner.drop_namespace(namespace).await
    }

    async fn purge_table_files(&self, table: &Table) -> Result<()> {
        self.inner.purge_table_files(table).await
    }
}
