//! `iceberg list`, `namespace create|drop`, `drop` and `rename`: what is in the catalog and
//! the few changes to it that are not appends.

use std::collections::BTreeMap;

use iceberg_append::TableIdent;
use iceberg_append::catalog::NamespaceIdent;
use serde_json::json;

use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{Cli, NamespaceAction};
use crate::error::{Error, Result};

/// `namespace` as an identifier.
///
/// # Errors
/// An empty name or level.
fn parse_namespace(namespace: &str) -> Result<NamespaceIdent> {
    NamespaceIdent::parse(namespace).ok_or_else(|| {
        Error::Usage(format!(
            "namespace `{namespace}` must be non-empty levels joined by `.`"
        ))
    })
}

/// Runs `iceberg list [NAMESPACE]`: the top-level namespaces (and their tables), or the
/// namespaces and tables directly in one.
///
/// # Errors
/// A missing namespace (with the nearest names), or a catalog that cannot list.
pub(crate) async fn list(cli: &Cli, namespace: Option<&str>) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = listing(&open, namespace).await;
    open.close().await;
    let (namespaces, tables) = result?;
    if cli.json {
        let out = json!({
            "namespaces": namespaces.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "tables": tables.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for ns in &namespaces {
        outln!("{ns}/");
    }
    for t in &tables {
        outln!("{t}");
    }
    if namespaces.is_empty() && tables.is_empty() {
        outln!("(nothing here)");
    }
    Ok(())
}

async fn listing(
    open: &OpenCatalog,
    namespace: Option<&str>,
) -> Result<(Vec<NamespaceIdent>, Vec<TableIdent>)> {
    let Some(namespace) = namespace else {
        let namespaces = open.catalog.list_namespaces(None).await?;
        let mut tables = Vec::new();
        for ns in &namespaces {
            tables.extend(open.catalog.list_tables(ns).await?);
        }
        return Ok((namespaces, tables));
    };
    let ns = parse_namespace(namespace)?;
    if !open.catalog.namespace_exists(&ns).await? {
        return Err(Error::Table(open.missing_namespace(&ns).await));
    }
    let namespaces = open.catalog.list_namespaces(Some(&ns)).await?;
    let tables = open.catalog.list_tables(&ns).await?;
    Ok((namespaces, tables))
}

/// Runs `iceberg namespace create|drop`.
///
/// # Errors
/// An existing namespace to create, a missing or non-empty one to drop.
pub(crate) async fn namespace(cli: &Cli, action: &NamespaceAction) -> Result<()> {
    let open = OpenCatalog::open(cli, true).await?;
    let result = match action {
        NamespaceAction::Create {
            namespace,
            properties,
        } => {
            let ns = parse_namespace(namespace)?;
            let props: BTreeMap<String, String> = properties.iter().cloned().collect();
            open.catalog
                .create_namespace(&ns, props)
                .await
                .map(|()| ("created", ns))
                .map_err(|e| {
                    if e.is_already_exists() {
                        Error::Table(format!("namespace `{namespace}` already exists"))
                    } else {
                        e.into()
                    }
                })
        }
        NamespaceAction::Drop { namespace } => {
            let ns = parse_namespace(namespace)?;
            match open.catalog.drop_namespace(&ns).await {
                Ok(()) => Ok(("dropped", ns)),
                Err(e) if e.is_not_found() => Err(Error::Table(open.missing_namespace(&ns).await)),
                Err(e) => Err(e.into()),
            }
        }
    };
    open.close().await;
    let (what, ns) = result?;
    if cli.json {
        outln!("{}", json!({ "namespace": ns.to_string(), what: true }));
    } else {
        outln!("{what} namespace {ns}");
    }
    Ok(())
}

/// Runs `iceberg drop NS.T [--purge]`.
///
/// # Errors
/// A missing table (with the nearest names) or a catalog failure.
pub(crate) async fn drop(cli: &Cli, table: &str, purge: bool) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, _) = open.load(table).await?;
        open.catalog.drop_table(&ident, purge).await?;
        Ok::<_, Error>(ident)
    }
    .await;
    open.close().await;
    let ident = result?;
    if cli.json {
        outln!(
            "{}",
            json!({ "table": ident.to_string(), "dropped": true, "purged": purge })
        );
    } else if purge {
        outln!("dropped table {ident} and deleted its files");
    } else {
        outln!("dropped table {ident} (its files stay; --purge deletes them)");
    }
    Ok(())
}

/// Runs `iceberg rename FROM TO`.
///
/// # Errors
/// A missing `from` (with the nearest names), an existing `to`, or a catalog failure.
pub(crate) async fn rename(cli: &Cli, from: &str, to: &str) -> Result<()> {
    let to_ident = parse_table_name(to)?;
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (from_ident, _) = open.load(from).await?;
        match open.catalog.rename_table(&from_ident, &to_ident).await {
            Ok(()) => Ok(from_ident),
            Err(e) if e.is_already_exists() => {
                Err(Error::Table(format!("table `{to_ident}` already exists")))
            }
            Err(e) => Err(e.into()),
        }
    }
    .await;
    open.close().await;
    let from_ident = result?;
    if cli.json {
        outln!(
            "{}",
            json!({ "from": from_ident.to_string(), "to": to_ident.to_string() })
        );
    } else {
        outln!("renamed table {from_ident} to {to_ident}");
    }
    Ok(())
}
