//! Tables of the SQL catalog: the [`Catalog`] implementation, with the commit.

use std::collections::BTreeMap;

use async_trait::async_trait;
use iceberg_append::catalog::{NamespaceIdent, no_such_namespace};
use iceberg_append::{
    Catalog, Error, MetadataCache, Result, Table, TableCreation, TableIdent, write_metadata_file,
};
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use super::pool::{SwapError, execute, fetch, is_unique_violation, may_have_applied, swap};
use super::schema::ICEBERG_TYPE_TABLE;
use super::{NAMESPACE_LOCATION, SqlCatalog};

impl SqlCatalog {
    /// The current metadata location of `ident`, if the catalog knows it.
    async fn metadata_location(&self, ident: &TableIdent) -> Result<Option<String>> {
        let sql = format!(
            "SELECT metadata_location FROM iceberg_tables \
             WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3{}",
            self.type_filter()
        );
        let ns = ident.namespace_ident().to_string();
        let rows = fetch(
            &self.pool,
            &sql,
            &[Some(&self.name), Some(&ns), Some(&ident.name)],
        )
        .await
        .map_err(|e| self.db_error(ident, "load_table", &e))?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Inserts the row of a new table; a taken name is [`Error::TableAlreadyExists`].
    async fn insert_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<()> {
        let ns = ident.namespace_ident().to_string();
        let (columns, values) = if self.typed {
            (", iceberg_type", ", $5")
        } else {
            ("", "")
        };
        let sql = format!(
            "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, \
             metadata_location, previous_metadata_location{columns}) \
             VALUES ($1, $2, $3, $4, NULL{values})"
        );
        let mut binds = vec![
            Some(self.name.as_str()),
            Some(&ns),
            Some(&ident.name),
            Some(metadata_location),
        ];
        if self.typed {
            binds.push(Some(ICEBERG_TYPE_TABLE));
        }
        match execute(&self.pool, &sql, &binds).await {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            }),
            // Sent and unanswered: the row may yet appear, so nothing may be deleted.
            Err(e) if may_have_applied(&e) => Err(Error::CommitStateUnknown {
                table: ident.to_string(),
                snapshot_id: None,
                reason: format!(
                    "no answer to inserting the row pointing at {metadata_location}: {e}"
                ),
                source: Some(backend(ident, e)),
            }),
            Err(e) => Err(self.db_error(ident, "insert table", &e)),
        }
    }

    /// `<namespace location>/<table>` when the namespace has a `location` property, else
    /// `<warehouse>/<namespace>/<table>` (PyIceberg's default).
    ///
    /// # Errors
    /// A missing namespace.
    pub async fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        let ns = ident.namespace_ident();
        let props = self.namespace_properties(&ns).await?;
        Ok(match props.get(NAMESPACE_LOCATION) {
            Some(base) => format!("{}/{}", base.trim_end_matches('/'), ident.name),
            None => format!("{}/{ns}/{}", self.warehouse, ident.name),
        })
    }

    async fn require_namespace(&self, ns: &NamespaceIdent) -> Result<()> {
        if self.namespace_exists(ns).await? {
            Ok(())
        } else {
            Err(no_such_namespace(ns))
        }
    }
}

#[async_trait]
impl Catalog for SqlCatalog {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let location = self
            .metadata_location(ident)
            .await?
            .ok_or_else(|| Error::NoSuchTable {
                table: ident.to_string(),
            })?;
        self.cache.load_table(&self.io, &location).await
    }

    /// Creates the table; an empty `creation.location` means
    /// [`SqlCatalog::default_table_location`]. The namespace and name are checked once, by
    /// [`Catalog::create_table_from_metadata`].
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        let staged = self.stage_table(ident, creation, self.env.as_ref()).await?;
        self.create_table_from_metadata(ident, staged.metadata)
            .await
    }

    async fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        SqlCatalog::default_table_location(self, ident).await
    }

    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> Result<Table> {
        self.require_namespace(&ident.namespace_ident()).await?;
        if self.metadata_location(ident).await?.is_some() {
            return Err(Error::TableAlreadyExists {
                table: ident.to_string(),
            });
        }
        let location = write_metadata_file(&self.io, &metadata, None, self.env.as_ref()).await?;
        let table = Table {
            metadata_location: Some(location.clone()),
            metadata,
        };
        if let Err(e) = self.insert_table(ident, &location).await {
            if e.is_commit_state_unknown() {
                // The file stays: the row may still point at it.
                return Err(e);
            }
            // An error may follow a row that was written (a lost answer): read it back, and
            // delete the file only when the row does not point at it.
            match self.metadata_location(ident).await {
                Ok(Some(found)) if found == location => return Ok(table),
                Ok(_) => {
                    let _ = self.io.delete(&location).await;
                }
                // Cannot tell: the file stays (an orphan at worst, never a dangling row).
                Err(_) => {}
            }
            return Err(e);
        }
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
        let ns = ident.namespace_ident().to_string();
        let sql = "UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2 \
                   WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 \
                   AND metadata_location = $2";
        let binds = [
            Some(new_location.as_str()),
            Some(base_location),
            Some(self.name.as_str()),
            Some(&ns),
            Some(&ident.name),
        ];
        match swap(&self.pool, sql, &binds).await {
            Ok(1) => Ok(new_location),
            // The pointer moved, or another transaction had the row: reload and re-plan.
            Ok(_) | Err(SwapError::Retryable) => {
                let _ = self.io.delete(&new_location).await;
                Err(Error::CommitConflict {
                    table: ident.to_string(),
                    expected: Some(base_location.to_string()),
                    found: self.metadata_location(ident).await.ok().flatten(),
                })
            }
            // Refused, as far as the driver says; the row decides (a trigger or a driver can
            // fail a statement whose change stays).
            Err(SwapError::Definite(e)) => match self.metadata_location(ident).await {
                Ok(Some(found)) if found == new_location => Ok(new_location),
                Ok(_) => {
                    let _ = self.io.delete(&new_location).await;
                    Err(self.db_error(ident, "commit", &e))
                }
                Err(read) => Err(Error::CommitStateUnknown {
                    table: ident.to_string(),
                    snapshot_id: new_metadata.current_snapshot_id,
                    reason: format!(
                        "the pointer swap to {new_location} failed ({e}), and reading it back failed: {read}"
                    ),
                    source: Some(Box::new(read)),
                }),
            },
            Err(SwapError::Unknown(e)) => Err(Error::CommitStateUnknown {
                table: ident.to_string(),
                snapshot_id: new_metadata.current_snapshot_id,
                reason: format!("no answer to the pointer swap to {new_location}: {e}"),
                source: Some(backend(ident, e)),
            }),
        }
    }

    fn io(&self) -> &FileIo {
        &self.io
    }

    fn metadata_cache(&self) -> Option<&MetadataCache> {
        Some(&self.cache)
    }

    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        Ok(self.metadata_location(ident).await?.is_some())
    }

    async fn list_tables(&self, namespace: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        self.require_namespace(namespace).await?;
        let sql = format!(
            "SELECT table_name FROM iceberg_tables \
             WHERE catalog_name = $1 AND table_namespace = $2{} ORDER BY table_name",
            self.type_filter()
        );
        let ns = namespace.to_string();
        let rows = fetch(&self.pool, &sql, &[Some(&self.name), Some(&ns)])
            .await
            .map_err(|e| self.db_error(namespace, "list_tables", &e))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .map(|name| TableIdent::new(namespace.clone(), name))
            .collect())
    }

    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let table = if purge {
            Some(self.load_table(ident).await?)
        } else {
            None
        };
        let sql = format!(
            "DELETE FROM iceberg_tables \
             WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3{}",
            self.type_filter()
        );
        let ns = ident.namespace_ident().to_string();
        let deleted = execute(
            &self.pool,
            &sql,
            &[Some(&self.name), Some(&ns), Some(&ident.name)],
        )
        .await
        .map_err(|e| self.db_error(ident, "drop_table", &e))?;
        if deleted == 0 {
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
        self.require_namespace(&to.namespace_ident()).await?;
        let sql = format!(
            "UPDATE iceberg_tables SET table_namespace = $1, table_name = $2 \
             WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5{}",
            self.type_filter()
        );
        let (to_ns, from_ns) = (
            to.namespace_ident().to_string(),
            from.namespace_ident().to_string(),
        );
        let binds = [
            Some(to_ns.as_str()),
            Some(&to.name),
            Some(&self.name),
            Some(&from_ns),
            Some(&from.name),
        ];
        match execute(&self.pool, &sql, &binds).await {
            Ok(0) => Err(Error::NoSuchTable {
                table: from.to_string(),
            }),
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(Error::TableAlreadyExists {
                table: to.to_string(),
            }),
            Err(e) => Err(self.db_error(from, "rename_table", &e)),
        }
    }

    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        self.require_namespace(&ident.namespace_ident()).await?;
        let table = Table::load(&self.io, metadata_location).await?;
        self.insert_table(ident, metadata_location).await?;
        Ok(table)
    }

    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        self.create_namespace_rows(namespace, properties).await
    }

    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        self.list_namespace_children(parent).await
    }

    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> Result<bool> {
        self.namespace_known(namespace).await
    }

    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        self.namespace_property_rows(namespace).await
    }

    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        self.update_namespace_rows(namespace, removals, updates)
            .await
    }

    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> Result<()> {
        self.drop_namespace_rows(namespace).await
    }
}

/// The driver's error `e` as the typed source of an error about `ident`.
fn backend(ident: &TableIdent, e: sqlx::Error) -> Box<Error> {
    Box::new(Error::Backend {
        table: ident.to_string(),
        source: Box::new(e),
    })
}
