//! The shared backend: PostgreSQL, for many writers on many machines.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::error::{Error, Result};

/// Connections per process to the PostgreSQL server.
pub const DEFAULT_POSTGRES_MAX_CONNECTIONS: u32 = 4;

/// `uri` in the form sqlx reads: SQLAlchemy's `postgresql+psycopg2://` becomes
/// `postgresql://`.
pub fn postgres_url(uri: &str) -> String {
    match uri.split_once("://") {
        Some((scheme, rest)) if scheme.starts_with("postgresql+") => format!("postgresql://{rest}"),
        _ => uri.to_string(),
    }
}

/// Connects to the PostgreSQL catalog database at `uri`.
pub(super) async fn connect(uri: &str, shown: &str) -> Result<sqlx::PgPool> {
    let options =
        PgConnectOptions::from_str(&postgres_url(uri)).map_err(|e| Error::InvalidUri {
            uri: shown.to_string(),
            reason: e.to_string(),
        })?;
    PgPoolOptions::new()
        .max_connections(DEFAULT_POSTGRES_MAX_CONNECTIONS)
        .connect_with(options)
        .await
        .map_err(|source| Error::Connect {
            uri: shown.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlalchemy_urls() {
        assert_eq!(
            postgres_url("postgresql+psycopg2://u:p@h:5432/db"),
            "postgresql://u:p@h:5432/db"
        );
        assert_eq!(postgres_url("postgres://h/db"), "postgres://h/db");
    }
}
