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
}

impl OpenCatalog {
    /// Opens the catalog of the global options. Read-only commands (`create_dirs` false)
    /// refuse a local warehouse folder that does not exist rather than creating it.
    ///
    /// # Errors
    /// A missing warehouse, an unknown catalog URI, or a catalog that cannot be opened.
    pub(crate) async fn open(cli: &Cli, create_dirs: bool) -> Result<Self> {
        let (warehouse_url, local_dir) = warehouse(&cli.warehouse, create_dirs)?;
        let io_props: HashMap<String, String> = cli.io_properties.iter().cloned().collect();
        let (catalog, sql, is_default): (Arc<dyn Catalog>, _, _) = match cli.catalog.as_deref() {
            None | Some("" | "sqlite") => {
                let dir = local_dir.as_ref().ok_or_else(|| {
                    Error::Usage(format!(
                        "warehouse {warehouse_url} is not a local folder: the default SQLite \
                         catalog lives in one; pass --catalog postgresql://... or --catalog {OBJECT_STORE}"
                    ))
                })?;
                let mut config = SqlCatalogConfig::local(dir);
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
                let mut config = SqlCatalogConfig::new(
                    iceberg_catalog::sql::DEFAULT_CATALOG_NAME,
                    uri,
                    warehouse_url.clone(),
                );
                config.io_properties = io_props;
                let sql = SqlCatalog::connect(config).await?;
                (Arc::new(sql.clone()), Some(sql), false)
            }
            Some(other) => {
                return Err(Error::Usage(format!(
                    "--catalog `{other}`: expected sqlite:///path, postgres://..., \
                     postgresql://... or {OBJECT_STORE}"
                )));
            }
        };
        Ok(Self {
            catalog,
            sql,
            warehouse_url,
            local_dir,
            is_default,
        })
    }

    /// The table's current state.
    ///
    /// # Errors
    /// A malformed name, or a table the catalog does not know (said plainly).
    pub(crate) async fn load(&self, name: &str) -> Result<(TableIdent, Table)> {
        let ident = parse_table_name(name)?;
        match self.catalog.load_table(&ident).await {
            Ok(t) => Ok((ident, t)),
            Err(e) if e.is_not_found() => Err(Error::Table(format!(
                "table `{ident}` does not exist in the catalog of {}",
                self.warehouse_url
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates `namespace` unless it exists; true when this call created it. The
    /// object-store catalog needs none: a table's folder makes its namespace, as in Java's
    /// `HadoopCatalog`.
    ///
    /// # Errors
    /// When the catalog cannot be asked or refuses the namespace.
    pub(crate) async fn ensure_namespace(&self, namespace: &NamespaceIdent) -> Result<bool> {
        if self.sql.is_none() {
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
        Some(("file", rest)) => PathBuf::from(rest),
        Some(_) => return Ok((text.trim_end_matches('/').to_string(), None)),
        None => PathBuf::from(text),
    };
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
