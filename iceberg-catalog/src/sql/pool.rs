//! The few database primitives the catalog needs, over either backend. Every value bound or
//! read is a (nullable) string, so one query text serves SQLite and PostgreSQL (`$1` style).
//! Query texts are built from this crate's constants only; every value is bound.

use sqlx::Row;

use super::Pool;

/// Runs `$body` with `$p` bound to the concrete pool of `$pool`.
macro_rules! on_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite($p) => $body,
            #[cfg(feature = "postgres")]
            Pool::Postgres($p) => $body,
        }
    };
}

/// A statement and its bound values.
pub(super) type Statement<'a> = (&'a str, Vec<Option<&'a str>>);

/// Runs one statement; returns the rows it changed.
pub(super) async fn execute(
    pool: &Pool,
    sql: &str,
    binds: &[Option<&str>],
) -> Result<u64, sqlx::Error> {
    on_pool!(pool, p => {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(*b);
        }
        Ok(q.execute(p).await?.rows_affected())
    })
}

/// Runs a query; returns its rows as nullable strings.
pub(super) async fn fetch(
    pool: &Pool,
    sql: &str,
    binds: &[Option<&str>],
) -> Result<Vec<Vec<Option<String>>>, sqlx::Error> {
    on_pool!(pool, p => {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(*b);
        }
        let rows = q.fetch_all(p).await?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| r.try_get::<Option<String>, _>(i)).collect())
            .collect()
    })
}

/// Runs `statements` in one transaction; returns the rows each changed.
pub(super) async fn transaction(
    pool: &Pool,
    statements: &[Statement<'_>],
) -> Result<Vec<u64>, sqlx::Error> {
    on_pool!(pool, p => {
        let mut tx = p.begin().await?;
        let mut changed = Vec::with_capacity(statements.len());
        for (sql, binds) in statements {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(*sql));
            for b in binds {
                q = q.bind(*b);
            }
            changed.push(q.execute(&mut *tx).await?.rows_affected());
        }
        tx.commit().await?;
        Ok(changed)
    })
}

/// How a pointer swap ended when it did not succeed.
#[derive(Debug)]
pub(super) enum SwapError {
    /// The statement was never applied (no connection, or the database refused it).
    Definite(sqlx::Error),
    /// Not applied, because another transaction held or changed the row (a PostgreSQL
    /// serialization failure or deadlock, SQLite busy or locked): worth another attempt.
    Retryable,
    /// The statement was sent and no answer came: it may have been applied.
    Unknown(sqlx::Error),
}

impl SwapError {
    /// Classifies an error of a statement that was sent to the database.
    pub(super) fn after_send(e: sqlx::Error) -> Self {
        if may_have_applied(&e) {
            return Self::Unknown(e);
        }
        let code = e
            .as_database_error()
            .and_then(|db| db.code().map(|c| c.into_owned()))
            .unwrap_or_default();
        match code.as_str() {
            // PostgreSQL class 40 (transaction rollback: serialization failure, deadlock).
            c if c.starts_with("40") => Self::Retryable,
            // SQLite (primary result code in the low byte): 5 BUSY, 6 LOCKED.
            c if c.parse::<u32>().is_ok_and(|n| matches!(n & 0xFF, 5 | 6)) => Self::Retryable,
            _ => Self::Definite(e),
        }
    }
}

/// Whether a statement that failed with `e` once sent may still have been applied.
pub(super) fn may_have_applied(e: &sqlx::Error) -> bool {
    let Some(db) = e.as_database_error() else {
        // The connection failed mid-way (the pool's own refusals are before any send).
        return !matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed);
    };
    let code = db.code().unwrap_or_default();
    // PostgreSQL 40003, statement completion unknown (CockroachDB and YugabyteDB send it
    // for an ambiguous result), class 08 (connection exception) and 57P (operator
    // intervention, e.g. an administrator or crash shutdown).
    code == "40003" || code.starts_with("08") || code.starts_with("57P")
}

/// Runs the conditional `UPDATE` of a commit, telling apart failures before the statement
/// reached the database from those after.
pub(super) async fn swap(pool: &Pool, sql: &str, binds: &[Option<&str>]) -> Result<u64, SwapError> {
    on_pool!(pool, p => {
        let mut conn = p.acquire().await.map_err(SwapError::Definite)?;
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(*b);
        }
        match q.execute(&mut *conn).await {
            Ok(done) => Ok(done.rows_affected()),
            Err(e) => Err(SwapError::after_send(e)),
        }
    })
}

/// True for a query naming a column the table lacks (PostgreSQL 42703, SQLite's "no such
/// column").
pub(super) fn is_missing_column(e: &sqlx::Error) -> bool {
    e.as_database_error().is_some_and(|d| {
        d.code().as_deref() == Some("42703") || d.message().contains("no such column")
    })
}

/// True for a primary-key (unique) violation.
pub(super) fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.kind() == sqlx::error::ErrorKind::UniqueViolation)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    /// A database error with a given code, as a driver reports it.
    #[derive(Debug)]
    struct Coded(&'static str);

    impl std::fmt::Display for Coded {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "code {}", self.0)
        }
    }

    impl std::error::Error for Coded {}

    impl sqlx::error::DatabaseError for Coded {
        fn message(&self) -> &str {
            self.0
        }

        fn code(&self) -> Option<Cow<'_, str>> {
            Some(Cow::Borrowed(self.0))
        }

        fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
            self
        }

        fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
            self
        }

        fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
            self
        }

        fn kind(&self) -> sqlx::error::ErrorKind {
            sqlx::error::ErrorKind::Other
        }
    }

    fn classify(code: &'static str) -> &'static str {
        match SwapError::after_send(sqlx::Error::Database(Box::new(Coded(code)))) {
            SwapError::Definite(_) => "definite",
            SwapError::Retryable => "retryable",
            SwapError::Unknown(_) => "unknown",
        }
    }

    #[test]
    fn database_errors_are_classified_by_code() {
        // PostgreSQL SQLSTATEs.
        assert_eq!(classify("40001"), "retryable", "serialization failure");
        assert_eq!(classify("40P01"), "retryable", "deadlock");
        assert_eq!(classify("40003"), "unknown", "statement completion unknown");
        assert_eq!(classify("08006"), "unknown", "connection failure");
        assert_eq!(classify("57P01"), "unknown", "admin shutdown");
        assert_eq!(classify("23505"), "definite", "unique violation");
        assert_eq!(classify("42P01"), "definite", "undefined table");
        // SQLite result codes, extended ones included.
        assert_eq!(classify("5"), "retryable", "SQLITE_BUSY");
        assert_eq!(classify("517"), "retryable", "SQLITE_BUSY_SNAPSHOT");
        assert_eq!(classify("6"), "retryable", "SQLITE_LOCKED");
        assert_eq!(classify("19"), "definite", "SQLITE_CONSTRAINT");
        // No database answer at all.
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(may_have_applied(&io));
        assert!(matches!(SwapError::after_send(io), SwapError::Unknown(_)));
        // The pool's own refusals come before anything is sent.
        assert!(!may_have_applied(&sqlx::Error::PoolTimedOut));
        assert!(!may_have_applied(&sqlx::Error::PoolClosed));
    }

    /// Only a missing column tells the V0 layout (no `iceberg_type`); a lost connection
    /// does not.
    #[test]
    fn a_missing_column_is_told_from_other_failures() {
        let db = |code| sqlx::Error::Database(Box::new(Coded(code)));
        assert!(is_missing_column(&db("42703")));
        assert!(is_missing_column(&db("no such column: iceberg_type")));
        assert!(!is_missing_column(&db("08006")));
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(!is_missing_column(&io));
    }
}
