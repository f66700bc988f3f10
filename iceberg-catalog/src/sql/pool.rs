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
    /// The statement was sent and no answer came: it may have been applied.
    Unknown(sqlx::Error),
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
            Err(e @ sqlx::Error::Database(_)) => Err(SwapError::Definite(e)),
            Err(e) => Err(SwapError::Unknown(e)),
        }
    })
}

/// True for a primary-key (unique) violation.
pub(super) fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.kind() == sqlx::error::ErrorKind::UniqueViolation)
}
