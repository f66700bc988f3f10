//! Namespaces of the SQL catalog, with PyIceberg's and Java's rules: a namespace exists when
//! it has a property row or a table lies in or below it; a new one gets `exists = true` (as
//! Java writes it, whatever other properties it has).

use std::collections::{BTreeMap, BTreeSet};

use iceberg_append::Result;
use iceberg_append::catalog::{
    NamespaceIdent, namespace_already_exists, namespace_not_empty, no_such_namespace,
};

use super::pool::{Statement, fetch, is_unique_violation, transaction};
use super::{NAMESPACE_EXISTS_PROPERTY, SqlCatalog};

/// `ns.%` for `LIKE ... ESCAPE '!'`, with `!`, `_` and `%` escaped.
fn children_pattern(ns: &str) -> String {
    let escaped = ns.replace('!', "!!").replace('_', "!_").replace('%', "!%");
    format!("{escaped}.%")
}

impl SqlCatalog {
    pub(super) async fn namespace_known(&self, ns: &NamespaceIdent) -> Result<bool> {
        let name = ns.to_string();
        let pattern = children_pattern(&name);
        let sql = "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = $1 \
                   AND (table_namespace = $2 OR table_namespace LIKE $3 ESCAPE '!') \
                   UNION ALL \
                   SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1 \
                   AND (namespace = $2 OR namespace LIKE $3 ESCAPE '!') LIMIT 1";
        let rows = fetch(
            &self.pool,
            sql,
            &[Some(&self.name), Some(&name), Some(&pattern)],
        )
        .await
        .map_err(|e| self.db_error(ns, "namespace_exists", &e))?;
        Ok(!rows.is_empty())
    }

    pub(super) async fn create_namespace_rows(
        &self,
        ns: &NamespaceIdent,
        mut properties: BTreeMap<String, String>,
    ) -> Result<()> {
        if self.namespace_known(ns).await? {
            return Err(namespace_already_exists(ns));
        }
        // Always, as Java's JdbcCatalog: removing the other properties later (from any
        // client) must not make the namespace vanish.
        properties
            .entry(NAMESPACE_EXISTS_PROPERTY.into())
            .or_insert_with(|| "true".into());
        let name = ns.to_string();
        let statements: Vec<Statement<'_>> = properties
            .iter()
            .map(|(k, v)| {
                (
                    "INSERT INTO iceberg_namespace_properties \
                     (catalog_name, namespace, property_key, property_value) \
                     VALUES ($1, $2, $3, $4)",
                    vec![Some(self.name.as_str()), Some(&name), Some(k), Some(v)],
                )
            })
            .collect();
        match transaction(&self.pool, &statements).await {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(namespace_already_exists(ns)),
            Err(e) => Err(self.db_error(ns, "create_namespace", &e)),
        }
    }

    pub(super) async fn list_namespace_children(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        let shown = parent.map(ToString::to_string).unwrap_or_default();
        if let Some(p) = parent
            && !self.namespace_known(p).await?
        {
            return Err(no_such_namespace(p));
        }
        let sql = "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = $1 \
                   UNION \
                   SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1";
        let rows = fetch(&self.pool, sql, &[Some(&self.name)])
            .await
            .map_err(|e| self.db_error(&shown, "list_namespaces", &e))?;
        let prefix: &[String] = parent.map(NamespaceIdent::levels).unwrap_or_default();
        let children: BTreeSet<NamespaceIdent> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .filter_map(|name| NamespaceIdent::parse(&name))
            .filter(|ns| ns.levels().len() > prefix.len() && ns.levels().starts_with(prefix))
            .filter_map(|ns| NamespaceIdent::new(ns.levels()[..=prefix.len()].to_vec()))
            .collect();
        Ok(children.into_iter().collect())
    }

    pub(super) async fn namespace_property_rows(
        &self,
        ns: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        if !self.namespace_known(ns).await? {
            return Err(no_such_namespace(ns));
        }
        let name = ns.to_string();
        let sql = "SELECT property_key, property_value FROM iceberg_namespace_properties \
                   WHERE catalog_name = $1 AND namespace = $2";
        let rows = fetch(&self.pool, sql, &[Some(&self.name), Some(&name)])
            .await
            .map_err(|e| self.db_error(ns, "namespace_properties", &e))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                Some((it.next().flatten()?, it.next().flatten()?))
            })
            .collect())
    }

    pub(super) async fn update_namespace_rows(
        &self,
        ns: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        if !self.namespace_known(ns).await? {
            return Err(no_such_namespace(ns));
        }
        // The row that makes an empty namespace exist for every client (Java refuses to set
        // it, and removing it would drop a namespace without tables for everyone).
        if removals
            .iter()
            .chain(updates.keys())
            .any(|k| k == NAMESPACE_EXISTS_PROPERTY)
        {
            return Err(iceberg_append::Error::Unsupported {
                operation: format!("changing the reserved property `{NAMESPACE_EXISTS_PROPERTY}`"),
                catalog: "the SQL catalog".into(),
                target: ns.to_string(),
            });
        }
        let name = ns.to_string();
        let delete = "DELETE FROM iceberg_namespace_properties \
                      WHERE catalog_name = $1 AND namespace = $2 AND property_key = $3";
        let insert = "INSERT INTO iceberg_namespace_properties \
                      (catalog_name, namespace, property_key, property_value) \
                      VALUES ($1, $2, $3, $4)";
        let mut statements: Vec<Statement<'_>> = Vec::new();
        for key in removals.iter().chain(updates.keys()) {
            statements.push((delete, vec![Some(&self.name), Some(&name), Some(key)]));
        }
        for (k, v) in &updates {
            statements.push((
                insert,
                vec![Some(&self.name), Some(&name), Some(k), Some(v)],
            ));
        }
        transaction(&self.pool, &statements)
            .await
            .map(|_| ())
            .map_err(|e| self.db_error(ns, "update_namespace_properties", &e))
    }

    pub(super) async fn drop_namespace_rows(&self, ns: &NamespaceIdent) -> Result<()> {
        if !self.namespace_known(ns).await? {
            return Err(no_such_namespace(ns));
        }
        let name = ns.to_string();
        // Views count too (Java's JdbcCatalog refuses them as it refuses tables): dropping
        // the properties under them would lose the namespace's settings, not the namespace.
        let count_sql = "SELECT table_name FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2";
        let tables = fetch(&self.pool, count_sql, &[Some(&self.name), Some(&name)])
            .await
            .map_err(|e| self.db_error(ns, "drop_namespace", &e))?;
        if !tables.is_empty() {
            return Err(namespace_not_empty(ns, tables.len()));
        }
        if !self.list_namespace_children(Some(ns)).await?.is_empty() {
            // Stricter than Java's JdbcCatalog and PyIceberg (which check tables and views
            // only): dropping it would orphan the namespaces below it.
            return Err(iceberg_append::Error::Catalog {
                table: name,
                reason: "namespace is not empty: namespaces lie below it".into(),
            });
        }
        let sql =
            "DELETE FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2";
        transaction(&self.pool, &[(sql, vec![Some(&self.name), Some(&name)])])
            .await
            .map(|_| ())
            .map_err(|e| self.db_error(ns, "drop_namespace", &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(children_pattern("a_b%c!"), "a!_b!%c!!.%");
    }
}
