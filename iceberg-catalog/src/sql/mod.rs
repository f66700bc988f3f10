//! The SQL catalog: table pointers in a database, schema-compatible with Java's
//! `JdbcCatalog` and PyIceberg's `SqlCatalog`, on SQLite (embedded) or PostgreSQL.
//!
//! A commit writes the next metadata file, then runs one conditional
//! `UPDATE iceberg_tables SET metadata_location = <new>, previous_metadata_location = <base>
//! WHERE ... AND metadata_location = <base>`: zero rows changed is a conflict.

mod namespaces;
mod pool;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod schema;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod tables;

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use iceberg_append::{Environment, MetadataCache, SystemEnvironment};
use iceberg_io::FileIo;

use crate::error::{Error, Result};

/// Catalog property: the database URI (`sqlite:////abs/catalog.db`, `postgresql://...`).
pub const URI: &str = "uri";
/// Catalog property: the base location of new tables (`file:///...`, `s3://...`).
pub const WAREHOUSE: &str = "warehouse";
/// Namespace property: the base location of the namespace's new tables.
pub const NAMESPACE_LOCATION: &str = "location";
/// The property a namespace created without properties gets, as PyIceberg does.
pub const NAMESPACE_EXISTS_PROPERTY: &str = "exists";
/// The catalog name PyIceberg's examples use (`SqlCatalog("default", ...)`).
pub const DEFAULT_CATALOG_NAME: &str = "default";
/// The file name of the embedded catalog inside a local warehouse.
pub const DEFAULT_SQLITE_FILE_NAME: &str = "catalog.db";

/// How to open a [`SqlCatalog`].
#[derive(Clone, PartialEq, Eq)]
pub struct SqlCatalogConfig {
    /// The `catalog_name` of every row; several catalogs may share one database.
    pub name: String,
    /// The database URI.
    pub uri: String,
    /// Where new tables go: `<warehouse>/<namespace>/<table>`.
    pub warehouse: String,
    /// File IO properties (`s3.endpoint`, ...).
    pub io_properties: HashMap<String, String>,
}

impl fmt::Debug for SqlCatalogConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlCatalogConfig")
            .field("name", &self.name)
            .field("uri", &redact(&self.uri))
            .field("warehouse", &self.warehouse)
            .finish_non_exhaustive()
    }
}

impl SqlCatalogConfig {
    /// A catalog `name` in the database at `uri`, creating tables under `warehouse`.
    pub fn new(
        name: impl Into<String>,
        uri: impl Into<String>,
        warehouse: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            uri: uri.into(),
            warehouse: warehouse.into().trim_end_matches('/').to_string(),
            io_properties: HashMap::new(),
        }
    }

    /// The embedded default: catalog `default` in `<dir>/catalog.db`, tables under `dir`.
    pub fn local(dir: &Path) -> Self {
        let dir = dir.display().to_string();
        Self::new(
            DEFAULT_CATALOG_NAME,
            // `sqlite:///` then the path: four slashes for an absolute one, as SQLAlchemy.
            format!("sqlite:///{dir}/{DEFAULT_SQLITE_FILE_NAME}"),
            format!("file://{dir}"),
        )
    }

    /// From catalog properties as PyIceberg takes them: [`URI`], [`WAREHOUSE`], and the
    /// rest for file IO.
    ///
    /// # Errors
    /// [`Error::InvalidUri`] when `uri` or `warehouse` is missing.
    pub fn from_properties(name: &str, properties: &HashMap<String, String>) -> Result<Self> {
        let get = |key: &str| {
            properties
                .get(key)
                .cloned()
                .ok_or_else(|| Error::InvalidUri {
                    uri: String::new(),
                    reason: format!("catalog {name}: property `{key}` is required"),
                })
        };
        let mut config = Self::new(name, get(URI)?, get(WAREHOUSE)?);
        config.io_properties = properties
            .iter()
            .filter(|(k, _)| k.as_str() != URI && k.as_str() != WAREHOUSE)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(config)
    }
}

/// An open connection pool to one of the backends.
#[derive(Debug, Clone)]
enum Pool {
    /// The embedded SQLite file.
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    /// A PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

/// A catalog whose table pointers live in a SQL database (see the [module docs](self)).
#[derive(Clone)]
pub struct SqlCatalog {
    name: String,
    uri: String,
    warehouse: String,
    io: FileIo,
    env: Arc<dyn Environment>,
    pool: Pool,
    /// Whether `iceberg_tables.iceberg_type` exists (schema V1).
    typed: bool,
    /// Parsed metadata files and manifest lists, shared by clones.
    cache: Arc<MetadataCache>,
}

impl fmt::Debug for SqlCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlCatalog({} at {})", self.name, self.uri)
    }
}

impl SqlCatalog {
    /// Opens the catalog, creating its tables when absent, with the system clock.
    ///
    /// # Errors
    /// See [`SqlCatalog::connect_with_env`].
    pub async fn connect(config: SqlCatalogConfig) -> Result<Self> {
        Self::connect_with_env(config, Arc::new(SystemEnvironment)).await
    }

    /// Opens the catalog with an injected environment (clock and UUIDs).
    ///
    /// # Errors
    /// [`Error::InvalidUri`] for an unknown scheme, [`Error::Connect`] when the database
    /// cannot be reached, [`Error::Schema`] when its tables cannot be created, [`Error::Io`]
    /// when the warehouse's IO cannot be set up.
    pub async fn connect_with_env(
        config: SqlCatalogConfig,
        env: Arc<dyn Environment>,
    ) -> Result<Self> {
        let io =
            FileIo::from_location(&config.warehouse, &config.io_properties).map_err(|source| {
                Error::Io {
                    location: config.warehouse.clone(),
                    source,
                }
            })?;
        Self::connect_with_io(config, io, env).await
    }

    /// As [`SqlCatalog::connect_with_env`], with the tables' files served by `io` (a store
    /// of your own; `config.io_properties` are then unused).
    ///
    /// # Errors
    /// As [`SqlCatalog::connect_with_env`].
    pub async fn connect_with_io(
        config: SqlCatalogConfig,
        io: FileIo,
        env: Arc<dyn Environment>,
    ) -> Result<Self> {
        let shown = redact(&config.uri);
        let pool = open_pool(&config.uri, &shown).await?;
        // Two processes creating the tables of a fresh PostgreSQL database at once: one
        // `CREATE TABLE IF NOT EXISTS` can fail on the other's row in `pg_type` (a unique
        // violation). The tables then exist; probing again finds them.
        let typed = match schema::init(&pool).await {
            Err(e) if pool::is_unique_violation(&e) => schema::init(&pool).await,
            other => other,
        }
        .map_err(|source| Error::Schema {
            uri: shown.clone(),
            source,
        })?;
        Ok(Self {
            name: config.name,
            uri: shown,
            warehouse: config.warehouse,
            io,
            env,
            pool,
            typed,
            cache: Arc::default(),
        })
    }

    /// The catalog's name (the `catalog_name` column).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where new tables go.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// Closes the connections (waits for those in use).
    pub async fn close(&self) {
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(p) => p.close().await,
            #[cfg(feature = "postgres")]
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// `AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)` on V1 schemas: rows of views
    /// written by Java or iceberg-rust are not tables.
    fn type_filter(&self) -> &'static str {
        if self.typed {
            " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
        } else {
            ""
        }
    }

    /// A database error as the trait's error, naming `what` and the operation.
    fn db_error(
        &self,
        what: &dyn fmt::Display,
        operation: &str,
        e: &sqlx::Error,
    ) -> iceberg_append::Error {
        iceberg_append::Error::Catalog {
            table: what.to_string(),
            reason: format!("{operation} in {}: {e}", self.uri),
        }
    }
}

async fn open_pool(uri: &str, shown: &str) -> Result<Pool> {
    let scheme = uri.split(':').next().unwrap_or_default();
    match scheme {
        #[cfg(feature = "postgres")]
        s if s == "postgres" || s.starts_with("postgresql") => {
            Ok(Pool::Postgres(postgres::connect(uri, shown).await?))
        }
        #[cfg(feature = "sqlite")]
        _ if scheme == "sqlite" || !uri.contains("://") => {
            let path = sqlite::sqlite_path(uri)?;
            sqlite::refuse_ambiguous(uri, &path)?;
            Ok(Pool::Sqlite(sqlite::connect(&path, shown).await?))
        }
        _ => Err(Error::InvalidUri {
            uri: shown.to_string(),
            reason: "expected sqlite:, postgresql: or postgres: (with that feature enabled)".into(),
        }),
    }
}

/// `uri` without the password of its user info.
fn redact(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return uri.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => uri.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("postgresql://me:secret@127.0.0.1:5432/db"),
            "postgresql://me:***@127.0.0.1:5432/db"
        );
        assert_eq!(redact("sqlite:///w/catalog.db"), "sqlite:///w/catalog.db");
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod catalog_tests;

#[cfg(all(test, feature = "postgres"))]
mod postgres_tests;
