//! [`Catalog`] over the REST protocol: each trait method is one endpoint (lists follow
//! `next-page-token`), and a commit is the diff of its metadata against its base.

use std::collections::BTreeMap;

use async_trait::async_trait;
use iceberg_append::catalog::{NamespaceIdent, namespace_not_empty};
use iceberg_append::{Catalog, Environment, Error, Result, Table, TableCreation, TableIdent};
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;
use reqwest::{Method, StatusCode};

use super::RestCatalog;
use super::calls::{Sent, Target, identifier, metadata_location_of, refused, unreachable};
use super::client::Answer;
use super::types::{
    CommitTableRequest, CreateNamespaceRequest, CreateTableRequest, ListNamespacesResponse,
    ListTablesResponse, RegisterTableRequest, RenameTableRequest, UpdateNamespacePropertiesRequest,
};
use super::updates::{TableChange, create, diff};
use crate::error::Error as CatalogError;

#[async_trait]
impl Catalog for RestCatalog {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let operation = format!("load table {ident}");
        let target = Target::Table(ident);
        let url = self.table_url(ident);
        let answer = self
            .call_ok::<()>(Method::GET, &url, None, &operation, target, |r| r)
            .await?;
        self.table_of(&answer, &operation)
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        self.post_create(ident, creation, false).await
    }

    /// The server's staged create: the table's first metadata, placed and given its UUID by
    /// the server (and the IO it vends for it), not yet a table.
    async fn stage_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
        _env: &dyn Environment,
    ) -> Result<Table> {
        self.post_create(ident, creation, true).await
    }

    /// A commit that creates the table (`assert-create`) with everything `metadata` holds;
    /// a 409 means the table exists.
    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> Result<Table> {
        let operation = format!("create table {ident} with its first commit");
        self.require(
            "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
            "commit",
            &Target::Table(ident),
        )?;
        let change = create(&metadata).map_err(|e| Error::Backend {
            table: ident.to_string(),
            source: Box::new(e),
        })?;
        let unknown = |reason: String| Error::CommitStateUnknown {
            table: ident.to_string(),
            snapshot_id: metadata.current_snapshot_id,
            reason,
            source: None,
        };
        // `assert-create` failed: the table exists.
        let conflict = |_: String| Error::TableAlreadyExists {
            table: ident.to_string(),
        };
        let answer = self
            .send_change(ident, &change, &operation, unknown, conflict)
            .await?;
        self.table_of(&answer, &operation).map_err(|e| {
            unknown(format!(
                "{operation}: landed, but the answer is unreadable: {e}"
            ))
        })
    }

    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String> {
        let operation = format!("commit to {ident}");
        self.require(
            "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
            "commit",
            &Target::Table(ident),
        )?;
        let base = self.base_metadata(ident, base_location).await?;
        let change = diff(&base, new_metadata).map_err(|e| Error::Backend {
            table: ident.to_string(),
            source: Box::new(e),
        })?;
        let unknown = |reason: String| Error::CommitStateUnknown {
            table: ident.to_string(),
            snapshot_id: new_metadata.current_snapshot_id,
            reason,
            source: None,
        };
        let conflict = |found: String| Error::CommitConflict {
            table: ident.to_string(),
            expected: Some(base_location.to_string()),
            found: Some(found),
        };
        let answer = self
            .send_change(ident, &change, &operation, unknown, conflict)
            .await?;
        match self.table_of(&answer, &operation) {
            Ok(table) => table.metadata_location.ok_or_else(|| {
                unknown(format!(
                    "{operation}: the answer names no metadata location"
                ))
            }),
            // It landed (2xx) though its metadata does not parse here: never report that as
            // a refusal, which would delete what the commit wrote.
            Err(e) => metadata_location_of(&answer).ok_or_else(|| {
                unknown(format!(
                    "{operation}: landed, but the answer is unreadable: {e}"
                ))
            }),
        }
    }

    fn io(&self) -> &FileIo {
        &self.io
    }

    /// The server writes the metadata files, their log, and deletes expired ones.
    fn writes_metadata_files(&self) -> bool {
        true
    }

    /// The IO of the credentials the server vended when it last answered for this table
    /// (load, create, commit), else the catalog's.
    fn table_io(&self, table: &Table) -> FileIo {
        self.vended_io(&table.metadata.location)
            .unwrap_or_else(|| self.io.clone())
    }

    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        let url = self.table_url(ident);
        self.exists(
            &url,
            "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
            &format!("table exists {ident}"),
            Target::Table(ident),
        )
        .await
    }

    async fn list_tables(&self, namespace: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        let operation = format!("list tables in {namespace}");
        let url = self.namespace_url(namespace, "/tables");
        let mut tables = Vec::new();
        self.pages(
            &url,
            &[],
            &operation,
            Target::Namespace(namespace),
            |page: ListTablesResponse| {
                tables.extend(page.identifiers.into_iter().map(|i| TableIdent {
                    namespace: i.namespace,
                    name: i.name,
                }));
                page.next_page_token
            },
        )
        .await?;
        tables.sort();
        Ok(tables)
    }

    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let operation = format!("drop table {ident}");
        let target = Target::Table(ident);
        let url = self.table_url(ident);
        let purge = if purge { "true" } else { "false" };
        self.call_ok::<()>(Method::DELETE, &url, None, &operation, target, |r| {
            r.query(&[("purgeRequested", purge)])
        })
        .await?;
        Ok(())
    }

    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let operation = format!("rename table {from} to {to}");
        let body = RenameTableRequest {
            source: identifier(from),
            destination: identifier(to),
        };
        let url = self.client.url("tables/rename");
        let answer = self
            .call(Method::POST, &url, Some(&body), &operation, |r| r)
            .await
            .map_err(|e| unreachable(e, &Target::Table(from)))?;
        match answer.status {
            s if s.is_success() => Ok(()),
            // A conflict names the destination; a missing table or namespace, either.
            StatusCode::CONFLICT => Err(refused(&answer, &operation, Target::Table(to))),
            _ => Err(refused(&answer, &operation, Target::Table(from))),
        }
    }

    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        let operation = format!("register table {ident}");
        let target = Target::Table(ident);
        let body = RegisterTableRequest {
            name: &ident.name,
            metadata_location,
        };
        let url = self.namespace_url(&ident.namespace_ident(), "/register");
        let answer = self
            .call_ok(Method::POST, &url, Some(&body), &operation, target, |r| r)
            .await?;
        self.table_of(&answer, &operation)
    }

    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        let operation = format!("create namespace {namespace}");
        let target = Target::Namespace(namespace);
        let body = CreateNamespaceRequest {
            namespace: namespace.levels(),
            properties: &properties,
        };
        let url = self.client.url("namespaces");
        let answer = self
            .call(Method::POST, &url, Some(&body), &operation, |r| r)
            .await
            .map_err(|e| unreachable(e, &target))?;
        match answer.status {
            s if s.is_success() => Ok(()),
            // A parent that does not exist is not this namespace missing.
            StatusCode::NOT_FOUND => Err(Error::Backend {
                table: target.label(),
                source: Box::new(answer.refusal(&operation)),
            }),
            _ => Err(refused(&answer, &operation, target)),
        }
    }

    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        let operation = match parent {
            Some(p) => format!("list namespaces in {p}"),
            None => "list namespaces".to_string(),
        };
        let url = self.client.url("namespaces");
        // The query encoder turns the unit separator into `%1F`.
        let query: Vec<(&str, String)> = parent
            .map(|p| ("parent", p.levels().join("\u{1f}")))
            .into_iter()
            .collect();
        let mut found = Vec::new();
        let target = parent.map_or(Target::Catalog, Target::Namespace);
        self.pages(
            &url,
            &query,
            &operation,
            target,
            |page: ListNamespacesResponse| {
                found.extend(page.namespaces.into_iter().filter_map(NamespaceIdent::new));
                page.next_page_token
            },
        )
        .await?;
        found.sort();
        Ok(found)
    }

    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> Result<bool> {
        let url = self.namespace_url(namespace, "");
        self.exists(
            &url,
            "HEAD /v1/{prefix}/namespaces/{namespace}",
            &format!("namespace exists {namespace}"),
            Target::Namespace(namespace),
        )
        .await
    }

    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        self.load_namespace(namespace).await
    }

    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        let operation = format!("update properties of namespace {namespace}");
        let target = Target::Namespace(namespace);
        let body = UpdateNamespacePropertiesRequest {
            removals,
            updates: &updates,
        };
        let url = self.namespace_url(namespace, "/properties");
        self.call_ok(Method::POST, &url, Some(&body), &operation, target, |r| r)
            .await?;
        Ok(())
    }

    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> Result<()> {
        let operation = format!("drop namespace {namespace}");
        let target = Target::Namespace(namespace);
        let url = self.namespace_url(namespace, "");
        let answer = self
            .call::<()>(Method::DELETE, &url, None, &operation, |r| r)
            .await
            .map_err(|e| unreachable(e, &target))?;
        match answer.status {
            s if s.is_success() => Ok(()),
            StatusCode::CONFLICT => {
                let tables = self.list_tables(namespace).await.map_or(0, |t| t.len());
                Err(namespace_not_empty(namespace, tables))
            }
            _ => Err(refused(&answer, &operation, target)),
        }
    }
}

impl RestCatalog {
    /// `POST .../tables`, staged (`stage-create`) or not.
    async fn post_create(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
        stage_create: bool,
    ) -> Result<Table> {
        let operation = if stage_create {
            format!("stage the create of table {ident}")
        } else {
            format!("create table {ident}")
        };
        let target = Target::Table(ident);
        let mut properties = creation.properties.clone();
        properties.insert(
            "format-version".into(),
            creation.format_version.number().to_string(),
        );
        let body = CreateTableRequest {
            name: &ident.name,
            location: Some(creation.location.as_str()).filter(|l| !l.is_empty()),
            schema: creation.schema.to_json(),
            partition_spec: &creation.spec,
            write_order: &creation.sort_order,
            stage_create,
            properties,
        };
        let url = self.namespace_url(&ident.namespace_ident(), "/tables");
        let answer = self
            .call_ok(Method::POST, &url, Some(&body), &operation, target, |r| r)
            .await?;
        self.table_of(&answer, &operation)
    }

    /// Sends `change` to the table's commit endpoint (its callers have checked the server
    /// offers it, before any other request): the answer when it landed (2xx); `conflict` of
    /// the refusal for a 409, `unknown` when the change may have landed (a lost answer, a
    /// 5xx, any refusal after an earlier send's answer was lost).
    async fn send_change(
        &self,
        ident: &TableIdent,
        change: &TableChange,
        operation: &str,
        unknown: impl Fn(String) -> Error,
        conflict: impl FnOnce(String) -> Error,
    ) -> Result<Answer> {
        let target = Target::Table(ident);
        let body = CommitTableRequest {
            identifier: identifier(ident),
            requirements: &change.requirements,
            updates: &change.updates,
        };
        let url = self.table_url(ident);
        let Sent {
            answer,
            uncertain,
            unsent,
        } = self
            .send_tracked(Method::POST, &url, Some(&body), operation, |r| r)
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            // Failed before the request went out (no token): the change cannot have landed.
            Err(e) if unsent && !uncertain => return Err(unreachable(e, &target)),
            // Never sent: the change cannot have landed.
            Err(CatalogError::Http { source, .. }) if source.is_connect() && !uncertain => {
                return Err(unreachable(
                    CatalogError::Http {
                        operation: operation.to_string(),
                        source,
                    },
                    &target,
                ));
            }
            // Sent, and the answer lost (a timeout, a reset): only a reload can tell.
            Err(e) => return Err(unknown(e.to_string())),
        };
        match answer.status {
            s if s.is_success() => Ok(answer),
            // An earlier send may have landed: a conflict or refusal now may be our own.
            _ if uncertain => Err(unknown(format!(
                "an earlier send's answer was lost; then {}",
                answer.refusal(operation)
            ))),
            StatusCode::CONFLICT => Err(conflict(answer.refusal(operation).to_string())),
            s if s.is_server_error() => Err(unknown(answer.refusal(operation).to_string())),
            _ => Err(refused(&answer, operation, target)),
        }
    }
}
