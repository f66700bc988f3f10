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

/// The file of a SQLite URI, read as SQLAlchemy (and so PyIceberg) reads it:
/// `sqlite:////abs/path` is `/abs/path`, `sqlite:///rel/path` is `rel/path` in the current
/// folder; also `sqlite://rel/path`, `sqlite:path`, or a bare path.
pub fn sqlite_path(uri: &str) -> Result<PathBuf> {
    let rest = uri
        .strip_prefix("sqlite:///")
        .or_else(|| uri.strip_prefix("sqlite://"))
        .or_else(|| uri.strip_prefix("sqlite:"))
        .unwrap_or(uri);
    let rest = rest.split('?').next().unwrap_or(rest);
    if rest.is_empty() || rest.contains(":memory:") {
        return Err(Error::InvalidUri {
            uri: uri.to_string(),
            reason: "a SQLite catalog needs a file (in-memory databases are not shared)".into(),
        });
    }
    // `sqlite://///abs` (one slash too many) is still `/abs`.
    let collapsed = if rest.starts_with("//") {
        format!("/{}", rest.trim_start_matches('/'))
    } else {
        rest.to_string()
    };
    Ok(PathBuf::from(collapsed))
}

/// Refuses `sqlite:///x` (relative, as SQLAlchemy reads it) when `x` does not exist in the
/// current folder but `/x` does: the URI was most likely meant for `/x`, and opening `x`
/// would start a second, empty catalog beside it.
///
/// # Errors
/// [`Error::InvalidUri`] naming the four-slash form.
pub fn refuse_ambiguous(uri: &str, path: &Path) -> Result<()> {
    let three_slashes = uri.starts_with("sqlite:///") && !uri.starts_with("sqlite:////");
    if three_slashes && path.is_relative() && !path.exists() {
        let absolute = Path::new("/").join(path);
        if absolute.exists() {
            return Err(Error::InvalidUri {
                uri: uri.to_string(),
                reason: format!(
                    "`sqlite:///{0}` is `{0}` in the current folder, as SQLAlchemy and PyIceberg \
                     read it, and there is none; for the catalog at {1}, write `sqlite:///{1}`",
                    path.display(),
                    absolute.display()
                ),
            });
        }
    }
    Ok(())
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
        // SQLAlchemy's reading: three slashes, then a relative path.
        assert_eq!(
            sqlite_path("sqlite:///tmp/c.db").unwrap(),
            Path::new("tmp/c.db")
        );
        assert_eq!(
            sqlite_path("sqlite://rel/c.db").unwrap(),
            Path::new("rel/c.db")
        );
        assert_eq!(sqlite_path("sqlite:c.db").unwrap(), Path::new("c.db"));
        assert_eq!(
            sqlite_path("/w/catalog.db").unwrap(),
            Path::new("/w/catalog.db")
        );
        assert!(sqlite_path("sqlite::memory:").is_err());
        assert!(sqlite_path("sqlite:///:memory:").is_err());
    }

    /// `sqlite:///x` where only `/x` exists is refused, naming the four-slash form.
    #[test]
    fn a_three_slash_uri_meant_for_an_absolute_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("catalog.db");
        std::fs::write(&file, b"").unwrap();
        let uri = format!("sqlite://{}", file.display());
        let path = sqlite_path(&uri).unwrap();
        assert!(path.is_relative());
        let err = refuse_ambiguous(&uri, &path).unwrap_err().to_string();
        assert!(
            err.contains(&format!("sqlite:///{}", file.display())),
            "{err}"
        );
        let four = format!("sqlite:///{}", file.display());
        let path = sqlite_path(&four).unwrap();
        assert_eq!(path, file);
        refuse_ambiguous(&four, &path).unwrap();
    }
}
