//! The catalog contract: load a table, and atomically move its metadata pointer.
//!
//! Real catalogs (SQL, object store) implement [`Catalog`] in their own crate or module;
//! [`InMemoryCatalog`] here serves tests and single-process use.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use crate::env::Environment;
use crate::error::{Error, Result};
use crate::table::{Table, TableCreation, create_table, write_metadata_file};

/// A table's name: a namespace path and a table name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    /// Namespace levels, outermost first.
    pub namespace: Vec<String>,
    /// Table name.
    pub name: String,
}

impl TableIdent {
    /// Parses `a.b.table` (the last part is the table).
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts: Vec<String> = s.split('.').map(str::to_string).collect();
        let name = parts.pop().filter(|n| !n.is_empty())?;
        if parts.is_empty() || parts.iter().any(String::is_empty) {
            return None;
        }
        Some(Self {
            namespace: parts,
            name,
        })
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace.join("."), self.name)
    }
}

/// Loads tables and swaps their metadata pointer atomically.
#[async_trait]
pub trait Catalog: Send + Sync + fmt::Debug {
    /// The table's current metadata.
    ///
    /// # Errors
    /// [`Error::NoSuchTable`] when the catalog does not know it.
    async fn load_table(&self, ident: &TableIdent) -> Result<Table>;

    /// Creates a table and registers its first metadata file.
    ///
    /// # Errors
    /// [`Error::TableAlreadyExists`], or IO/validation errors.
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table>;

    /// Writes `new_metadata` as the next metadata file and moves the pointer from
    /// `base_location` to it, atomically; returns the new location.
    ///
    /// # Errors
    /// [`Error::CommitConflict`] when the pointer is no longer `base_location`;
    /// [`Error::CommitStateUnknown`] when the swap may or may not have happened.
    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String>;

    /// The IO that reaches the table's files.
    fn io(&self) -> &FileIo;
}

/// A catalog that keeps pointers in memory; metadata files go through its [`FileIo`].
#[derive(Debug, Clone)]
pub struct InMemoryCatalog {
    io: FileIo,
    env: Arc<dyn Environment>,
    pointers: Arc<Mutex<HashMap<TableIdent, String>>>,
}

impl InMemoryCatalog {
    /// An empty catalog writing through `io`.
    pub fn new(io: FileIo, env: Arc<dyn Environment>) -> Self {
        Self {
            io,
            env,
            pointers: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn pointer(&self, ident: &TableIdent) -> Result<Option<String>> {
        let map = self.pointers.lock().map_err(|_| Error::Catalog {
            table: ident.to_string(),
            reason: "catalog lock poisoned".into(),
        })?;
        Ok(map.get(ident).cloned())
    }
}

#[async_trait]
impl Catalog for InMemoryCatalog {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let loc = self.pointer(ident)?.ok_or_else(|| Error::NoSuchTable {
            table: ident.to_string(),
        })?;
        Table::load(&self.io, &loc).await
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        if self.pointer(ident)?.is_some() {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        let table = create_table(&self.io, creation, self.env.as_ref()).await?;
        let loc = table.metadata_location.clone().unwrap_or_default();
        let mut map = self.pointers.lock().map_err(|_| Error::Catalog {
            table: ident.to_string(),
            reason: "catalog lock poisoned".into(),
        })?;
        if map.contains_key(ident) {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        map.insert(ident.clone(), loc);
        Ok(table)
    }

    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String> {
        let new_location = write_metadata_file(
            &self.io,
            new_metadata,
            Some(base_location),
            self.env.as_ref(),
        )
        .await?;
        let swapped = {
            let mut map = self.pointers.lock().map_err(|_| Error::Catalog {
                table: ident.to_string(),
                reason: "catalog lock poisoned".into(),
            })?;
            let current = map.get(ident).cloned();
            if current.as_deref() == Some(base_location) {
                map.insert(ident.clone(), new_location.clone());
                Ok(())
            } else {
                Err(current)
            }
        };
        match swapped {
            Ok(()) => Ok(new_location),
            Err(found) => {
                // Best effort: the file we wrote is unreachable.
                let _ = self.io.delete(&new_location).await;
                Err(Error::CommitConflict {
                    table: ident.to_string(),
                    expected: Some(base_location.to_string()),
                    found,
                })
            }
        }
    }

    fn io(&self) -> &FileIo {
        &self.io
    }
}
