//! [`InMemoryCatalog`]: pointers in a map, metadata files through a [`FileIo`]; for tests
//! and single-process use.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use super::{
    Catalog, NamespaceIdent, TableIdent, namespace_already_exists, namespace_not_empty,
    no_such_namespace,
};
use crate::cache::MetadataCache;
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::table::{Table, TableCreation, write_metadata_file};

/// A catalog that keeps pointers in memory; metadata files go through its [`FileIo`].
///
/// Namespaces are implicit: one exists when created or when a table lies in or below it, so
/// tables may be created without creating their namespace first.
#[derive(Debug, Clone)]
pub struct InMemoryCatalog {
    io: FileIo,
    env: Arc<dyn Environment>,
    state: Arc<Mutex<State>>,
    cache: Arc<MetadataCache>,
}

#[derive(Debug, Default)]
struct State {
    pointers: HashMap<TableIdent, String>,
    namespaces: BTreeMap<NamespaceIdent, BTreeMap<String, String>>,
}

impl State {
    fn namespace_exists(&self, ns: &NamespaceIdent) -> bool {
        self.namespaces.keys().any(|n| n.starts_with(ns))
            || self
                .pointers
                .keys()
                .any(|t| t.namespace.starts_with(ns.levels()))
    }
}

impl InMemoryCatalog {
    /// An empty catalog writing through `io`.
    pub fn new(io: FileIo, env: Arc<dyn Environment>) -> Self {
        Self {
            io,
            env,
            state: Arc::new(Mutex::new(State::default())),
            cache: Arc::default(),
        }
    }

    fn state(&self, what: &dyn fmt::Display) -> Result<MutexGuard<'_, State>> {
        self.state.lock().map_err(|_| Error::Catalog {
            table: what.to_string(),
            reason: "catalog lock poisoned".into(),
        })
    }

    fn pointer(&self, ident: &TableIdent) -> Result<Option<String>> {
        Ok(self.state(ident)?.pointers.get(ident).cloned())
    }
}

#[async_trait]
impl Catalog for InMemoryCatalog {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let loc = self.pointer(ident)?.ok_or_else(|| Error::NoSuchTable {
            table: ident.to_string(),
        })?;
        self.cache.load_table(&self.io, &loc).await
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        if self.pointer(ident)?.is_some() {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        let location = creation.location.clone();
        let metadata = creation.into_metadata(&location, self.env.as_ref())?;
        self.create_table_from_metadata(ident, metadata).await
    }

    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> Result<Table> {
        if self.pointer(ident)?.is_some() {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        let loc = write_metadata_file(&self.io, &metadata, None, self.env.as_ref()).await?;
        {
            let mut state = self.state(ident)?;
            if state.pointers.contains_key(ident) {
                return Err(Error::TableAlreadyExists {
                    table: ident.to_string(),
                });
            }
            state.pointers.insert(ident.clone(), loc.clone());
        }
        self.cache.insert_metadata(&loc, metadata.clone());
        Ok(Table {
            metadata_location: Some(loc),
            metadata,
        })
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
            let mut state = self.state(ident)?;
            let current = state.pointers.get(ident).cloned();
            if current.as_deref() == Some(base_location) {
                state.pointers.insert(ident.clone(), new_location.clone());
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

    fn metadata_cache(&self) -> Option<&MetadataCache> {
        Some(&self.cache)
    }

    async fn list_tables(&self, namespace: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        let state = self.state(namespace)?;
        if !state.namespace_exists(namespace) {
            return Err(no_such_namespace(namespace));
        }
        let mut tables: Vec<TableIdent> = state
            .pointers
            .keys()
            .filter(|t| t.namespace == namespace.levels())
            .cloned()
            .collect();
        tables.sort();
        Ok(tables)
    }

    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let table = if purge {
            Some(self.load_table(ident).await?)
        } else {
            None
        };
        let removed = self.state(ident)?.pointers.remove(ident);
        if removed.is_none() {
            return Err(Error::NoSuchTable {
                table: ident.to_string(),
            });
        }
        match table {
            Some(t) => self.purge_table_files(&t).await,
            None => Ok(()),
        }
    }

    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let mut state = self.state(from)?;
        if state.pointers.contains_key(to) {
            return Err(Error::TableAlreadyExists {
                table: to.to_string(),
            });
        }
        let loc = state
            .pointers
            .remove(from)
            .ok_or_else(|| Error::NoSuchTable {
                table: from.to_string(),
            })?;
        state.pointers.insert(to.clone(), loc);
        Ok(())
    }

    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        let table = Table::load(&self.io, metadata_location).await?;
        let mut state = self.state(ident)?;
        if state.pointers.contains_key(ident) {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        state
            .pointers
            .insert(ident.clone(), metadata_location.to_string());
        Ok(table)
    }

    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        let mut state = self.state(namespace)?;
        if state.namespace_exists(namespace) {
            return Err(namespace_already_exists(namespace));
        }
        state.namespaces.insert(namespace.clone(), properties);
        Ok(())
    }

    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        let state = self.state(&parent.map(ToString::to_string).unwrap_or_default())?;
        let prefix: &[String] = parent.map(NamespaceIdent::levels).unwrap_or_default();
        if let Some(p) = parent
            && !state.namespace_exists(p)
        {
            return Err(no_such_namespace(p));
        }
        let all = state
            .namespaces
            .keys()
            .map(NamespaceIdent::levels)
            .chain(state.pointers.keys().map(|t| t.namespace.as_slice()));
        let children: BTreeSet<NamespaceIdent> = all
            .filter(|levels| levels.len() > prefix.len() && levels.starts_with(prefix))
            .map(|levels| NamespaceIdent(levels[..=prefix.len()].to_vec()))
            .collect();
        Ok(children.into_iter().collect())
    }

    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        let state = self.state(namespace)?;
        if !state.namespace_exists(namespace) {
            return Err(no_such_namespace(namespace));
        }
        Ok(state.namespaces.get(namespace).cloned().unwrap_or_default())
    }

    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        let mut state = self.state(namespace)?;
        if !state.namespace_exists(namespace) {
            return Err(no_such_namespace(namespace));
        }
        let props = state.namespaces.entry(namespace.clone()).or_default();
        for key in removals {
            props.remove(key);
        }
        props.extend(updates);
        Ok(())
    }

    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> Result<()> {
        let mut state = self.state(namespace)?;
        if !state.namespace_exists(namespace) {
            return Err(no_such_namespace(namespace));
        }
        let tables = state
            .pointers
            .keys()
            .filter(|t| t.namespace == namespace.levels())
            .count();
        if tables > 0 {
            return Err(namespace_not_empty(namespace, tables));
        }
        state.namespaces.remove(namespace);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::env::DeterministicEnvironment;
    use iceberg_spec::{NestedField, PrimitiveType, Schema};

    fn ns(s: &str) -> NamespaceIdent {
        NamespaceIdent::parse(s).unwrap()
    }

    #[tokio::test]
    async fn in_memory_namespaces_and_tables() {
        let env = Arc::new(DeterministicEnvironment::new(0, 1, 3));
        let catalog = InMemoryCatalog::new(FileIo::memory(), env);
        let schema =
            Schema::new(0, vec![NestedField::required(1, "a", PrimitiveType::Int)]).unwrap();
        catalog
            .create_namespace(&ns("db"), [("owner".into(), "me".into())].into())
            .await
            .unwrap();
        assert!(
            catalog
                .create_namespace(&ns("db"), BTreeMap::new())
                .await
                .is_err()
        );
        let t = TableIdent::parse("db.inner.t").unwrap();
        catalog
            .create_table(&t, TableCreation::new("memory://wh/db/inner/t", schema))
            .await
            .unwrap();
        assert_eq!(catalog.list_namespaces(None).await.unwrap(), [ns("db")]);
        assert_eq!(
            catalog.list_namespaces(Some(&ns("db"))).await.unwrap(),
            [ns("db.inner")]
        );
        assert!(catalog.namespace_exists(&ns("db.inner")).await.unwrap());
        assert!(!catalog.namespace_exists(&ns("other")).await.unwrap());
        assert_eq!(
            catalog.list_tables(&ns("db.inner")).await.unwrap(),
            std::slice::from_ref(&t)
        );
        catalog
            .update_namespace_properties(
                &ns("db"),
                &["owner".into()],
                [("k".into(), "v".into())].into(),
            )
            .await
            .unwrap();
        assert_eq!(
            catalog.namespace_properties(&ns("db")).await.unwrap(),
            [("k".to_string(), "v".to_string())].into()
        );
        let err = catalog.drop_namespace(&ns("db.inner")).await.unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");

        let moved = TableIdent::parse("db.t2").unwrap();
        catalog.rename_table(&t, &moved).await.unwrap();
        assert!(!catalog.table_exists(&t).await.unwrap());
        let loaded = catalog.load_table(&moved).await.unwrap();
        let again = TableIdent::parse("db.t3").unwrap();
        let loc = loaded.metadata_location.clone().unwrap();
        catalog.register_table(&again, &loc).await.unwrap();
        assert!(catalog.register_table(&again, &loc).await.is_err());
        catalog.drop_table(&again, false).await.unwrap();
        assert!(catalog.io().exists(&loc).await.unwrap());
        catalog.drop_table(&moved, true).await.unwrap();
        assert!(!catalog.io().exists(&loc).await.unwrap());
        assert!(
            catalog
                .drop_table(&moved, false)
                .await
                .unwrap_err()
                .is_not_found()
        );
        assert!(
            catalog
                .list_tables(&ns("nope"))
                .await
                .unwrap_err()
                .is_not_found()
        );
    }
}
