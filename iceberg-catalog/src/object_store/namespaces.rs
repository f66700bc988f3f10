//! Namespaces of the object-store catalog, laid out as Java's `HadoopCatalog` lays them out:
//! namespace `a.b` is the folder `<warehouse>/a/b`, and a table is a folder holding
//! `metadata/v<N>.metadata.json`.
//!
//! Object stores have no empty folders, so a namespace created here is a marker object,
//! `<folder>/.namespace.json`, holding its properties (Java's `HadoopCatalog` ignores files
//! among its folders). As in the SQL catalog, a namespace also exists without a marker
//! while a table or another namespace lies below it; and, as in Java's `HadoopCatalog`, one
//! is dropped only when nothing lies below it.
//!
//! Property updates rewrite the marker: two concurrent updates of one namespace keep the
//! last (there is no compare-and-swap of an object on every store); tables are unaffected.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use iceberg_append::Result;
use iceberg_append::catalog::{
    NamespaceIdent, namespace_already_exists, namespace_not_empty, no_such_namespace,
};

use super::ObjectStoreCatalog;

/// The marker object of a namespace created through this catalog.
pub const NAMESPACE_MARKER: &str = ".namespace.json";

impl ObjectStoreCatalog {
    /// `<warehouse>/<ns1>/<ns2>...` (the warehouse itself for the root).
    pub(super) fn namespace_dir(&self, levels: &[String]) -> String {
        if levels.is_empty() {
            self.warehouse.clone()
        } else {
            format!("{}/{}", self.warehouse, levels.join("/"))
        }
    }

    fn marker(&self, ns: &NamespaceIdent) -> String {
        format!("{}/{NAMESPACE_MARKER}", self.namespace_dir(ns.levels()))
    }

    /// Whether `dir` is a table: it holds `metadata/*.metadata.json`, as Java's
    /// `HadoopCatalog` decides (this catalog loads the `v<N>` ones).
    pub(super) async fn is_table_dir(&self, dir: &str) -> Result<bool> {
        let listing = self.io.list_dir(&format!("{dir}/metadata")).await?;
        Ok(listing.files.iter().any(|f| f.ends_with(".metadata.json")))
    }

    /// Whether a table or a namespace marker lies below `dir`: a breadth-first walk that
    /// stops at tables, and does not descend into what a dropped table left (folders with
    /// a `data` or `metadata` child), so its cost follows the namespaces, not the files.
    async fn has_content_below(&self, dir: &str) -> Result<bool> {
        let mut queue = VecDeque::from([dir.to_string()]);
        while let Some(d) = queue.pop_front() {
            for child in self.io.list_dir(&d).await?.dirs {
                if self.is_table_dir(&child).await? {
                    return Ok(true);
                }
                let below = self.io.list_dir(&child).await?;
                if below.files.iter().any(|f| f.ends_with(NAMESPACE_MARKER)) {
                    return Ok(true);
                }
                let leftover = below
                    .dirs
                    .iter()
                    .any(|d| d.ends_with("/data") || d.ends_with("/metadata"));
                if !leftover {
                    queue.push_back(child);
                }
            }
        }
        Ok(false)
    }

    /// Whether `ns` exists: it has a marker, or a table or namespace lies below it.
    pub(super) async fn namespace_known(&self, ns: &NamespaceIdent) -> Result<bool> {
        check_levels(ns)?;
        let dir = self.namespace_dir(ns.levels());
        if self.is_table_dir(&dir).await? {
            return Ok(false);
        }
        Ok(self.io.exists(&self.marker(ns)).await? || self.has_content_below(&dir).await?)
    }

    /// The tables directly in `ns`, by name, sorted.
    pub(super) async fn table_names(&self, ns: &NamespaceIdent) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for child in self
            .io
            .list_dir(&self.namespace_dir(ns.levels()))
            .await?
            .dirs
        {
            if self.is_table_dir(&child).await?
                && let Some(name) = child.rsplit('/').next()
            {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    pub(super) async fn create_namespace_marker(
        &self,
        ns: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        let dir = self.namespace_dir(ns.levels());
        if self.is_table_dir(&dir).await? {
            return Err(iceberg_append::Error::Catalog {
                table: ns.to_string(),
                reason: format!("{dir} is a table, not a namespace"),
            });
        }
        if self.namespace_known(ns).await? {
            return Err(namespace_already_exists(ns));
        }
        match self
            .io
            .put_if_absent(&self.marker(ns), marker_bytes(ns, &properties)?)
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if e.is_already_exists() => Err(namespace_already_exists(ns)),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) async fn child_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        if let Some(p) = parent
            && !self.namespace_known(p).await?
        {
            return Err(no_such_namespace(p));
        }
        let levels: &[String] = parent.map(NamespaceIdent::levels).unwrap_or_default();
        let mut children = Vec::new();
        for child in self.io.list_dir(&self.namespace_dir(levels)).await?.dirs {
            let Some(name) = child.rsplit('/').next() else {
                continue;
            };
            let mut child_levels = levels.to_vec();
            child_levels.push(name.to_string());
            let Some(ns) = NamespaceIdent::new(child_levels) else {
                continue;
            };
            if self.namespace_known(&ns).await? {
                children.push(ns);
            }
        }
        Ok(children)
    }

    pub(super) async fn marker_properties(
        &self,
        ns: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        if !self.namespace_known(ns).await? {
            return Err(no_such_namespace(ns));
        }
        let marker = self.marker(ns);
        match self.io.read(&marker).await {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| iceberg_append::Error::Catalog {
                    table: ns.to_string(),
                    reason: format!("{marker} is not a JSON object of strings: {e}"),
                })
            }
            // A namespace that exists through its tables alone has no properties.
            Err(e) if e.is_not_found() => Ok(BTreeMap::new()),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) async fn update_marker(
        &self,
        ns: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        let mut properties = self.marker_properties(ns).await?;
        for key in removals {
            properties.remove(key);
        }
        properties.extend(updates);
        self.io
            .put(&self.marker(ns), marker_bytes(ns, &properties)?)
            .await?;
        Ok(())
    }

    pub(super) async fn drop_namespace_marker(&self, ns: &NamespaceIdent) -> Result<()> {
        if !self.namespace_known(ns).await? {
            return Err(no_such_namespace(ns));
        }
        let tables = self.table_names(ns).await?;
        if !tables.is_empty() {
            return Err(namespace_not_empty(ns, tables.len()));
        }
        if self
            .has_content_below(&self.namespace_dir(ns.levels()))
            .await?
        {
            // Namespaces below it, or tables deeper down: as Java's HadoopCatalog, refuse.
            return Err(iceberg_append::Error::Catalog {
                table: ns.to_string(),
                reason: "namespace is not empty: namespaces or tables lie below it".into(),
            });
        }
        self.io.delete(&self.marker(ns)).await?;
        Ok(())
    }
}

/// Refuses namespace levels that are not one folder name each (`a/b`, `.`, `..`): they
/// would name another folder than the namespace says.
pub(super) fn check_levels(ns: &NamespaceIdent) -> Result<()> {
    match ns
        .levels()
        .iter()
        .find(|l| l.contains('/') || l.as_str() == "." || l.as_str() == "..")
    {
        Some(level) => Err(iceberg_append::Error::Catalog {
            table: ns.to_string(),
            reason: format!("namespace level `{level}` is not a folder name"),
        }),
        None => Ok(()),
    }
}

fn marker_bytes(ns: &NamespaceIdent, properties: &BTreeMap<String, String>) -> Result<Bytes> {
    serde_json::to_vec_pretty(properties)
        .map(Bytes::from)
        .map_err(|e| iceberg_append::Error::Catalog {
            table: ns.to_string(),
            reason: format!("cannot write the namespace marker: {e}"),
        })
}
