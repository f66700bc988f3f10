//! The error of opening a catalog. Catalog operations themselves speak
//! [`iceberg_append::Error`], the error of the [`iceberg_append::Catalog`] trait.

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a catalog could not be opened, naming the database or location at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The catalog URI is not one this crate can open.
    #[error("invalid catalog uri {uri}: {reason}")]
    InvalidUri {
        /// The URI (password removed).
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The database could not be reached.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[error("cannot connect to catalog database {uri}: {source}")]
    Connect {
        /// The URI (password removed).
        uri: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The catalog tables could not be created or probed.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[error("cannot prepare the catalog tables in {uri}: {source}")]
    Schema {
        /// The URI (password removed).
        uri: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The store under an object-store catalog does not honour conditional create.
    #[error("unsafe store for an object-store catalog at {location}: {reason}")]
    UnsupportedStore {
        /// The warehouse location.
        location: String,
        /// Why it is refused.
        reason: String,
    },
    /// A REST catalog answered with an error (its `ErrorModel`).
    #[error("REST catalog {operation}: HTTP {status} {error_type}: {message}")]
    RestResponse {
        /// What was asked (`load table db.t`, `GET /v1/config`).
        operation: String,
        /// The HTTP status.
        status: u16,
        /// The server's `error.type` (`NoSuchTableException`, ...), empty when it sent none.
        error_type: String,
        /// The server's `error.message`, or the body when it was not an `ErrorModel`.
        message: String,
    },
    /// A REST catalog could not be reached, or its answer not received.
    #[cfg(feature = "rest")]
    #[error("REST catalog {operation}: {source}")]
    Http {
        /// What was asked.
        operation: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// A REST catalog answered with a body this client cannot read.
    #[error("REST catalog {operation}: unreadable response: {reason}")]
    InvalidResponse {
        /// What was asked.
        operation: String,
        /// What is wrong with the body.
        reason: String,
    },
    /// The warehouse's file IO could not be set up or probed.
    #[error("file io for warehouse {location}: {source}")]
    Io {
        /// The warehouse location.
        location: String,
        /// The IO error.
        #[source]
        source: iceberg_io::Error,
    },
}

impl Error {
    /// True when the store was refused because commits on it would not be atomic.
    pub fn is_unsupported_store(&self) -> bool {
        matches!(self, Self::UnsupportedStore { .. })
    }
}

impl From<Error> for iceberg_append::Error {
    fn from(e: Error) -> Self {
        let table = match &e {
            Error::InvalidUri { uri, .. } => uri.clone(),
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Error::Connect { uri, .. } | Error::Schema { uri, .. } => uri.clone(),
            Error::UnsupportedStore { location, .. } | Error::Io { location, .. } => {
                location.clone()
            }
            Error::RestResponse { operation, .. } | Error::InvalidResponse { operation, .. } => {
                operation.clone()
            }
            #[cfg(feature = "rest")]
            Error::Http { operation, .. } => operation.clone(),
        };
        iceberg_append::Error::Backend {
            table,
            source: Box::new(e),
        }
    }
}
