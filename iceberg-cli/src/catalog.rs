//! Opening the catalog the global options name, and resolving table names in it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, Table, TableIdent};
use iceberg_catalog::{ObjectStoreCatalog, SqlCatalog, SqlCatalogConfig};
use iceberg_io::FileIo;

use crate::cli::Cli;
use crate::error::{Error, Result};

/// The `--catalog` value of the catalog-less object-store catalog.
pub(crate) const OBJECT_STORE: &str = "object-store";

/// An open catalog and where its warehouse is.
#[derive(Debug)]
pub(crate) struct OpenCatalog {
    /// The catalog.
    pub(crate) catalog: Arc<dyn Catalog>,
    /// The SQL catalog, kept to close its pool cleanly.
    sql: Option<SqlCatalog>,
    /// The warehouse as a URL (`file:///abs/dir`, `s3://bucket/wh`).
    pub(crate) warehouse_url: String,
    /// The warehouse folder when it is local.
    pub(crate) local_dir: Option<PathBuf>,
    /// True for the default catalog (SQLite in the warehouse, catalog name `default`).
    pub(crate) is_default: bool,
    /// True when namespaces must be created before their tables (not the object store's).
    explicit_namespaces: bool,
}

impl OpenCatalog {
    /// Opens the catalog of the global options. Read-only commands (`create_dirs` false)
    /// refuse a local warehouse folder that does not exist rather than creating it.
    ///
    /// # Errors
    /// A missing warehouse, an unknown catalog URI, or a catalog that cannot be opened.
    pub(crate) async fn open(cli: &Cli, create_dirs: bool) -> Result<Self> {
        let io_props: HashMap<String, String> = cli.io_properties.iter().cloned().collect();
        if let Some(uri) = cli.catalog.as_deref().filter(|u| is_rest(u)) {
            return Self::open_rest(cli, uri, io_props).await;
        }
        if let Some((key, _)) = cli.catalog_properties.first() {
            return Err(Error::Usage(format!(
                "--catalog-property {key}=...: catalog properties are for a REST catalog \
                 (--catalog http(s)://...)"
            )));
        }
        let given = cli
            .warehouse
            .as_deref()
            .unwrap_or(crate::cli::DEFAULT_WAREHOUSE);
        let (warehouse_url, local_dir) = warehouse(given, create_dirs)?;
        let (catalog, sql, is_default): (Arc<dyn Catalog>, _, _) = match cli.catalog.as_deref() {
            None | Some("" | "sqlite") => {
                let dir = local_dir.as_ref().ok_or_else(|| {
                    Error::Usage(format!(
                        "warehouse {warehouse_url} is not a local folder: the default SQLite \
                         catalog lives in one; pass --catalog postgresql://... or --catalog {OBJECT_STORE}"
                    ))
                })?;
                let mut config = SqlCatalogConfig::local(dir);
                if let Some(name) = &cli.catalog_name {
                    config.name.clone_from(name);
                }
                config.io_properties = io_props;
                let sql = SqlCatalog::connect(config).await?;
                (Arc::new(sql.clone()), Some(sql), true)
            }
            Some(OBJECT_STORE) => {
                let io = FileIo::from_location(&warehouse_url, &io_props)?;
                let catalog = ObjectStoreCatalog::open(io, &warehouse_url).await?;
                (Arc::new(catalog), None, false)
            }
            Some(uri)
                if ["sqlite:", "postgres://", "postgresql://"]
                    .iter()
                    .any(|p| uri.starts_with(p)) =>
            {
                let name = cli
                    .catalog_name
                    .as_deref()
                    .unwrap_or(iceberg_catalog::sql::DEFAULT_CATALOG_NAME);
                let mut config = SqlCatalogConfig::new(name, uri, warehouse_url.clone());
                config.io_properties = io_props;
                let sql = SqlCatalog::connect(config).await?;
                (Arc::new(sql.clone()), Some(sql), false)
            }
            Some(other) => {
                return Err(Error::Usage(format!(
                    "--catalog `{other}`: expected sqlite:////abs/path, postgres://..., \
                     postgresql://..., {OBJECT_STORE} or http(s)://... (REST)"
                )));
            }
        };
        Ok(Self {
            explicit_namespaces: sql.is_some(),
            catalog,
            sql,
            warehouse_url,
            local_dir,
            is_default,
        })
    }

    /// A REST catalog at `uri`: `--catalog-property` and the file IO's `--io` settings are
    /// its client properties. `--warehouse` is not used (the server owns the warehouse);
    /// `--catalog-property warehouse=<name>` names one of the server's.
    #[cfg(feature = "rest")]
    async fn open_rest(cli: &Cli, uri: &str, io_props: HashMap<String, String>) -> Result<Self> {
        let mut config = iceberg_catalog::RestCatalogConfig::new(uri);
        config.properties.extend(io_props);
        config
            .properties
            .extend(cli.catalog_properties.iter().cloned());
        let catalog = iceberg_catalog::RestCatalog::connect(config).await?;
        Ok(Self {
            catalog: Arc::new(catalog),
            sql: None,
            warehouse_url: uri.to_string(),
            local_dir: None,
            is_default: false,
            explicit_namespaces: true,
        })
    }

    #[cfg(not(feature = "rest"))]
    async fn open_rest(_cli: &Cli, uri: &str, _io: HashMap<String, String>) -> Result<Self> {
        Err(Error::Usage(format!(
            "--catalog {uri}: this `iceberg` was built without the `rest` feature"
        )))
    }

    /// The table's current state.
    ///
    /// # Errors
    /// A malformed name, or a table the catalog does not know (said plainly).
    pub(crate) async fn load(&self, name: &str) -> Result<(TableIdent, Table)> {
        let ident = parse_table_name(name)?;
        match self.catalog.load_table(&ident).await {
            Ok(t) => Ok((ident, t)),
            Err(e) if e.is_not_found() => Err(Error::Table(self.missing_table(&ident).await)),
            Err(e) => Err(e.into()),
        }
    }

    /// "table `x` does not exist", with the nearest names in its namespace (or the nearest
    /// namespaces, when that is missing too).
    pub(crate) async fn missing_table(&self, ident: &TableIdent) -> String {
        let ns = ident.namespace_ident();
        let base = format!(
            "table `{ident}` does not exist in the catalog of {}",
            self.warehouse_url
        );
        match self.catalog.list_tables(&ns).await {
            Ok(tables) => {
                let names: Vec<String> = tables.iter().map(ToString::to_string).collect();
                with_suggestions(base, &ident.to_string(), &names)
            }
            Err(_) => format!("{base}: {}", self.missing_namespace(&ns).await),
        }
    }

    /// "namespace `x` does not exist", with the nearest existing ones.
    pub(crate) async fn missing_namespace(&self, ns: &NamespaceIdent) -> String {
        let base = format!("namespace `{ns}` does not exist");
        let parent = NamespaceIdent::new(ns.levels()[..ns.levels().len() - 1].to_vec());
        match self.catalog.list_namespaces(parent.as_ref()).await {
            Ok(found) => {
                let names: Vec<String> = found.iter().map(ToString::to_string).collect();
                with_suggestions(base, &ns.to_string(), &names)
            }
            Err(_) => base,
        }
    }

    /// Creates `namespace` unless it exists; true when this call created it. The
    /// object-store catalog needs none: a table's folder makes its namespace, as in Java's
    /// `HadoopCatalog`.
    ///
    /// # Errors
    /// When the catalog cannot be asked or refuses the namespace.
    pub(crate) async fn ensure_namespace(&self, namespace: &NamespaceIdent) -> Result<bool> {
        if !self.explicit_namespaces {
            return Ok(false);
        }
        if self.catalog.namespace_exists(namespace).await? {
            return Ok(false);
        }
        self.catalog
            .create_namespace(namespace, BTreeMap::new())
            .await?;
        Ok(true)
    }

    /// Closes the database connections, if any.
    pub(crate) async fn close(&self) {
        if let Some(sql) = &self.sql {
            sql.close().await;
        }
    }
}

/// `message`, and "did you mean" the names of `candidates` within a few edits of `name`.
fn with_suggestions(message: String, name: &str, candidates: &[String]) -> String {
    let mut near: Vec<(usize, &String)> = candidates
        .iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, c)| *d <= (name.chars().count() / 3).max(2) && c.as_str() != name)
        .collect();
    near.sort();
    match near.as_slice() {
        [] => message,
        some => {
            let names: Vec<String> = some.iter().take(3).map(|(_, c)| format!("`{c}`")).collect();
            format!("{message}; did you mean {}?", names.join(" or "))
        }
    }
}

/// True for a REST catalog URI.
fn is_rest(uri: &str) -> bool {
    uri.starts_with("http://") || uri.starts_with("https://")
}

/// `ns.table` (or `a.b.table`) as a table identifier.
///
/// # Errors
/// When the name has no namespace or an empty part.
pub(crate) fn parse_table_name(name: &str) -> Result<TableIdent> {
    TableIdent::parse(name).ok_or_else(|| {
        Error::Usage(format!(
            "table name `{name}` must be namespace.table (e.g. `db.events`)"
        ))
    })
}

/// The warehouse as a URL, and as a local folder when it is one.
fn warehouse(text: &str, create: bool) -> Result<(String, Option<PathBuf>)> {
    let path = match text.split_once("://") {
        // `file:///p` and `file://localhost/p` (Java's and PyIceberg's spellings).
        Some(("file", rest)) => PathBuf::from(rest.strip_prefix("localhost").unwrap_or(rest)),
        Some(_) => return Ok((text.trim_end_matches('/').to_string(), None)),
        // `file:/p`, as Hadoop's `Path` prints a local folder.
        None => PathBuf::from(text.strip_prefix("file:").unwrap_or(text)),
    };
    if text.starts_with("file:") && !path.is_absolute() {
        return Err(Error::Usage(format!(
            "warehouse `{text}`: a file: location names an absolute local folder \
             (`file:///path`)"
        )));
    }
    if create {
        std::fs::create_dir_all(&path).map_err(|e| {
            Error::Table(format!(
                "cannot create warehouse folder {}: {e}",
                path.display()
            ))
        })?;
    } else if !path.is_dir() {
        return Err(Error::Table(format!(
            "warehouse folder {} does not exist (pass --warehouse)",
            path.display()
        )));
    }
    let abs = std::fs::canonicalize(&path)
        .map_err(|e| Error::Table(format!("warehouse folder {}: {e}", path.display())))?;
    Ok((format!("file://{}", abs.display()), Some(abs)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every spelling Java and PyIceberg give a local warehouse names the same folder, and
    /// none lands under the current directory.
    #[test]
    fn file_spellings_of_a_warehouse_name_the_same_folder() {
        let dir = tempfile::tempdir().unwrap();
        let abs = std::fs::canonicalize(dir.path()).unwrap();
        let want = format!("file://{}", abs.display());
        for text in [
            format!("{}", abs.display()),
            format!("file://{}", abs.display()),
            format!("file:{}", abs.display()),
            format!("file://localhost{}", abs.display()),
        ] {
            let (url, local) = warehouse(&text, false).unwrap();
            assert_eq!(url, want, "{text}");
            assert_eq!(local.as_deref(), Some(abs.as_path()), "{text}");
        }
        assert!(warehouse("file://elsewhere/tmp/wh", true).is_err());
        assert!(!std::path::Path::new("elsewhere").exists());
        assert_eq!(
            warehouse("s3://bucket/wh/", false).unwrap(),
            ("s3://bucket/wh".to_string(), None)
        );
    }
}
