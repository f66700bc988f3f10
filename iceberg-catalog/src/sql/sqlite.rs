//! The embedded backend: one SQLite file (by default `<warehouse>/catalog.db`), in WAL mode
//! with a busy timeout, so several processes on one machine commit to it safely.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

use crate::error::{Error, Result};

/// How long a statement waits for another process's write lock before failing.
pub const DEFAULT_SQLITE_BUSY_TIMEOUT_MS: u64 = 60_000;

/// Connections per process to one SQLite file.
pub const DEFAULT_SQLITE_MAX_CONNECTIONS: u32 = 4;

/// The file of a SQLite URI: `sqlite:///abs/path` (SQLAlchemy writes `sqlite:////abs/path`),
/// `sqlite://rel/path`, `sqlite:path`, or a bare path.
pub fn sqlite_path(uri: &str) -> Result<PathBuf> {
    let rest = uri
        .strip_prefix("sqlite://")
        .or_else(|| uri.strip_prefix("sqlite:"))
        .unwrap_or(uri);
    let rest = rest.split('?').next().unwrap_or(rest);
    if rest.is_empty() || rest.contains(":memory:") {
        return Err(Error::InvalidUri {
            uri: uri.to_string(),
            reason: "a SQLite catalog needs a file (in-memory databases are not shared)".into(),
        });
    }
    // `sqlite:////abs` and `sqlite:///abs` both mean `/abs`.
    let collapsed = if rest.starts_with("//") {
        format!("/{}", rest.trim_start_matches('/'))
    } else {
        rest.to_string()
    };
    Ok(PathBuf::from(collapsed))
}

/// Opens (creating when absent) the SQLite catalog file at `path`.
pub(super) async fn connect(path: &Path, uri: &str) -> Result<sqlx::SqlitePool> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_millis(DEFAULT_SQLITE_BUSY_TIMEOUT_MS));
    SqlitePoolOptions::new()
        .max_connections(DEFAULT_SQLITE_MAX_CONNECTIONS)
        .connect_with(options)
        .await
        .map_err(|source| Error::Connect {
            uri: uri.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(
            sqlite_path("sqlite:////tmp/c.db").unwrap(),
            Path::new("/tmp/c.db")
        );
        assert_eq!(
            sqlite_path("sqlite:///tmp/c.db").unwrap(),
            Path::new("/tmp/c.db")
        );
        assert_eq!(sqlite_path("sqlite:c.db").unwrap(), Path::new("c.db"));
        assert_eq!(
            sqlite_path("/w/catalog.db").unwrap(),
            Path::new("/w/catalog.db")
        );
        assert!(sqlite_path("sqlite::memory:").is_err());
    }
}
