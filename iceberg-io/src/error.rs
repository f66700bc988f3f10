//! The crate's error type: one enum, with the path that failed in every variant that has one.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors raised by [`FileIo`](crate::FileIo) and [`FileWriter`](crate::FileWriter).
///
/// Ask the predicates ([`Error::is_not_found`], [`Error::is_already_exists`]) rather than
/// matching on the message text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No object exists at `path`.
    #[error("object not found: {path}")]
    NotFound {
        /// The path as the caller gave it.
        path: String,
    },

    /// An atomic create found an object already at `path`.
    #[error("object already exists: {path}")]
    AlreadyExists {
        /// The path as the caller gave it.
        path: String,
    },

    /// A conditional request on `path` failed its precondition.
    #[error("precondition failed for {path}")]
    Precondition {
        /// The path as the caller gave it.
        path: String,
    },

    /// The location's scheme has no backend (or its cargo feature is not enabled).
    #[error(
        "unsupported scheme `{scheme}` in `{location}` \
         (s3/s3a need the `s3` feature, gs the `gcs` feature, abfss/az the `azure` feature)"
    )]
    UnsupportedScheme {
        /// The scheme found, e.g. `hdfs`.
        scheme: String,
        /// The full location.
        location: String,
    },

    /// The location could not be turned into a store and a key.
    #[error("invalid location `{location}`: {reason}")]
    InvalidLocation {
        /// The full location.
        location: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A configuration property has a value that cannot be used.
    #[error("invalid value `{value}` for property `{key}`: {reason}")]
    InvalidProperty {
        /// The property name, e.g. `s3.path-style-access`.
        key: String,
        /// The value found.
        value: String,
        /// What was expected.
        reason: String,
    },

    /// A [`FileWriter`](crate::FileWriter) was used after it was closed, aborted or failed.
    #[error("writer for {path} is already closed, aborted or failed")]
    WriterClosed {
        /// The path the writer was writing.
        path: String,
    },

    /// Any other error from the object store.
    #[error("object store error for {path}")]
    Store {
        /// The path as the caller gave it.
        path: String,
        /// The underlying error.
        #[source]
        source: object_store::Error,
    },

    /// A local IO error.
    #[error("IO error for {path}")]
    Io {
        /// The path as the caller gave it.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Whether this error means the object does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Self::NotFound { .. } => true,
            Self::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        }
    }

    /// Whether this error means an atomic create lost to an existing object.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Self::AlreadyExists { .. })
    }

    /// The path this error is about, if it is about one.
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::NotFound { path }
            | Self::AlreadyExists { path }
            | Self::Precondition { path }
            | Self::WriterClosed { path }
            | Self::Store { path, .. }
            | Self::Io { path, .. } => Some(path),
            Self::UnsupportedScheme { location, .. } | Self::InvalidLocation { location, .. } => {
                Some(location)
            }
            Self::InvalidProperty { .. } => None,
        }
    }

    /// Wraps an `object_store` error for `path`, mapping the typed cases to typed variants.
    pub(crate) fn from_store(path: &str, source: object_store::Error) -> Self {
        let path = path.to_owned();
        match source {
            object_store::Error::NotFound { .. } => Self::NotFound { path },
            object_store::Error::AlreadyExists { .. } => Self::AlreadyExists { path },
            object_store::Error::Precondition { .. } => Self::Precondition { path },
            source => Self::Store { path, source },
        }
    }

    /// Converts into an `std::io::Error` for the `AsyncWrite` interface, keeping the kind.
    pub(crate) fn into_io(self) -> std::io::Error {
        use std::io::ErrorKind;
        let kind = match &self {
            Self::NotFound { .. } => ErrorKind::NotFound,
            Self::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            Self::WriterClosed { .. } => ErrorKind::BrokenPipe,
            Self::Io { source, .. } => source.kind(),
            _ => ErrorKind::Other,
        };
        std::io::Error::new(kind, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(msg: &str) -> Box<dyn std::error::Error + Send + Sync> {
        msg.to_owned().into()
    }

    #[test]
    fn maps_typed_store_errors_and_keeps_the_callers_path() {
        let e = Error::from_store(
            "s3://b/k",
            object_store::Error::NotFound {
                path: "k".into(),
                source: boxed("404"),
            },
        );
        assert!(e.is_not_found());
        assert_eq!(e.path(), Some("s3://b/k"));

        let e = Error::from_store(
            "s3://b/k",
            object_store::Error::AlreadyExists {
                path: "k".into(),
                source: boxed("412"),
            },
        );
        assert!(e.is_already_exists());
        assert!(!e.is_not_found());

        let e = Error::from_store(
            "s3://b/k",
            object_store::Error::Precondition {
                path: "k".into(),
                source: boxed("412"),
            },
        );
        assert!(matches!(e, Error::Precondition { .. }));

        let e = Error::from_store(
            "s3://b/k",
            object_store::Error::Generic {
                store: "S3",
                source: boxed("boom"),
            },
        );
        assert!(matches!(e, Error::Store { .. }));
        assert_eq!(e.to_string(), "object store error for s3://b/k");
    }

    #[test]
    fn io_conversion_keeps_the_kind() {
        let e = Error::NotFound { path: "p".into() }.into_io();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        let e = Error::AlreadyExists { path: "p".into() }.into_io();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    }
}
