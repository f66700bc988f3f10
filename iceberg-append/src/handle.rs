//! [`TableHandle`]: the front door. A table loaded from its catalog that writes batches with
//! everything the table says (schema, default spec, sort order, write properties) and opens
//! [`Transaction`]s, in the style of Java's `Table`.
//!
//! ```text
//! TableHandle::load(catalog, ident, env)
//!   .write(&batches)        -> Vec<DataFile>   (any worker; ship them with serde)
//!   .new_transaction()      -> Transaction     (update_schema, update_spec, replace_sort_order,
//!                                               set_properties, append, fast_append, write)
//!       .commit()           -> TransactionOutcome
//!   .append(&batches)       -> TransactionOutcome   (write + commit, the one-liner)
//! ```
//! The free functions underneath ([`crate::commit_append`], [`crate::commit_table_update`],
//! `iceberg_write::write_data_files`) stay for callers that hold the pieces themselves.

use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use crate::catalog::{Catalog, TableIdent};
use crate::env::Environment;
use crate::error::Result;
use crate::table::Table;
use crate::transaction::Transaction;

/// A table loaded from its catalog: its metadata, the catalog and IO to change it through,
/// and the clock and id source its commits use.
#[derive(Debug, Clone)]
pub struct TableHandle {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    env: Arc<dyn Environment>,
    io: FileIo,
    table: Table,
}

impl TableHandle {
    /// Loads `ident` from `catalog`; its commits take time and ids from `env`.
    ///
    /// # Errors
    /// [`crate::Error::NoSuchTable`], or the catalog's error.
    pub async fn load(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        env: Arc<dyn Environment>,
    ) -> Result<Self> {
        let table = catalog.load_table(&ident).await?;
        let io = catalog.table_io(&table);
        Ok(Self {
            catalog,
            ident,
            env,
            io,
            table,
        })
    }

    /// Reloads the table's current metadata (after commits, ours or others').
    ///
    /// # Errors
    /// As [`TableHandle::load`].
    pub async fn refresh(&mut self) -> Result<()> {
        self.table = self.catalog.load_table(&self.ident).await?;
        self.io = self.catalog.table_io(&self.table);
        Ok(())
    }

    /// The table's name in its catalog.
    pub fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The table as loaded: its metadata and metadata file.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The table's metadata as loaded.
    pub fn metadata(&self) -> &TableMetadata {
        &self.table.metadata
    }

    /// The clock and id source the handle's commits use.
    pub fn environment(&self) -> &dyn Environment {
        self.env.as_ref()
    }

    /// The file IO for the table's files (with any credentials its catalog vended).
    pub fn io(&self) -> &FileIo {
        &self.io
    }

    /// The catalog the table commits through.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// A transaction planned on the table as loaded: stage changes and an append, then
    /// [`Transaction::commit`] them as one commit.
    pub fn new_transaction(&self) -> Transaction {
        Transaction::new(
            self.catalog.clone(),
            self.ident.clone(),
            self.env.clone(),
            self.io.clone(),
            self.table.clone(),
        )
    }

    /// The write options the table's properties and default sort order make.
    ///
    /// # Errors
    /// A write property with an invalid value, naming it.
    #[cfg(feature = "write")]
    pub fn write_options(&self) -> Result<iceberg_write::WriteOptions> {
        write_options(&self.table.metadata)
    }

    /// Writes `batches` as data files of the table (its current schema, default spec, sort
    /// order and write properties). Nothing is committed: append the files in a
    /// transaction, here or in another process.
    ///
    /// # Errors
    /// When a batch does not fit the schema or writing fails (nothing is left behind).
    #[cfg(feature = "write")]
    pub async fn write(
        &self,
        batches: &[arrow_array::RecordBatch],
    ) -> Result<Vec<iceberg_spec::DataFile>> {
        write_as_table(&self.io, &self.table.metadata, batches).await
    }

    /// Writes `batches` and appends them in one commit (fast or merge as the table's
    /// properties say). The handle keeps the metadata it was loaded with; call
    /// [`TableHandle::refresh`] to see the commit.
    ///
    /// # Errors
    /// As [`TableHandle::write`] and [`Transaction::commit`]; the data files are deleted
    /// unless the outcome is unknown.
    #[cfg(feature = "write")]
    pub async fn append(
        &self,
        batches: &[arrow_array::RecordBatch],
    ) -> Result<crate::transaction::TransactionOutcome> {
        self.new_transaction().write(batches).await?.commit().await
    }
}

/// The write options `meta`'s properties and default sort order make.
#[cfg(feature = "write")]
pub fn write_options(meta: &TableMetadata) -> Result<iceberg_write::WriteOptions> {
    let mut options = iceberg_write::WriteOptions::from_table_properties(&meta.properties)?;
    if let Some(order) = meta.default_sort_order().filter(|o| !o.is_unsorted()) {
        // The writer sorts each file by the order and records its id.
        options = options.with_sort_order(order);
    }
    Ok(options)
}

/// Writes `batches` as data files of the table `meta` describes.
#[cfg(feature = "write")]
pub(crate) async fn write_as_table(
    io: &FileIo,
    meta: &TableMetadata,
    batches: &[arrow_array::RecordBatch],
) -> Result<Vec<iceberg_spec::DataFile>> {
    let options = write_options(meta)?;
    // Boxed: the writer's future is large, and callers' futures should not carry it inline.
    Ok(Box::pin(iceberg_write::write_data_files(
        io,
        &meta.location,
        batches,
        meta.current_schema()?,
        meta.default_spec()?,
        None,
        &options,
    ))
    .await?)
}
