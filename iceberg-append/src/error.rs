//! The one error type of the commit layer.

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a commit can fail with, each variant saying what and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The table metadata or a record broke a spec rule.
    #[error(transparent)]
    Spec(#[from] iceberg_spec::Error),
    /// Reading or writing a file failed.
    #[error(transparent)]
    Io(#[from] iceberg_io::Error),
    /// Writing data files failed.
    #[cfg(feature = "write")]
    #[error(transparent)]
    Write(#[from] iceberg_write::Error),
    /// An Avro manifest or manifest list could not be encoded or decoded.
    #[error("avro error in {path}: {source}")]
    Avro {
        /// The manifest or manifest list.
        path: String,
        /// The apache-avro error.
        #[source]
        source: Box<apache_avro::Error>,
    },
    /// A manifest or manifest list holds something the spec does not allow.
    #[error("invalid manifest {path}: {reason}")]
    InvalidManifest {
        /// The file at fault.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A data file given to a commit is not acceptable (wrong spec, duplicate path, ...).
    #[error("invalid data file {path}: {reason}")]
    InvalidDataFile {
        /// The data file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The catalog's pointer moved since the base was loaded.
    #[error("commit conflict on {table}: expected metadata {expected:?}, found {found:?}")]
    CommitConflict {
        /// The table.
        table: String,
        /// The base location the commit was made on.
        expected: Option<String>,
        /// The location the catalog holds now.
        found: Option<String>,
    },
    /// An append that evolves the schema found the table's schema changed so that its data
    /// files would not read as written (see [`crate::evolve`]); files it wrote were cleaned
    /// up and nothing was committed.
    #[error("schema conflict on {table}: {reason}; write the data again against the new schema")]
    SchemaConflict {
        /// The table.
        table: String,
        /// What changed.
        reason: String,
    },
    /// A partition spec or sort order change planned on a default spec or order that a
    /// concurrent commit replaced.
    #[error("partition spec or sort order conflict on {table}: {reason}")]
    SpecConflict {
        /// The table.
        table: String,
        /// What changed.
        reason: String,
    },
    /// The commit failed for certain; files it wrote were cleaned up.
    #[error(
        "commit of snapshot {snapshot_id} to {table} failed after {attempts} attempt(s): {reason}"
    )]
    CommitFailed {
        /// The table.
        table: String,
        /// The snapshot that was not committed.
        snapshot_id: i64,
        /// Attempts made.
        attempts: u32,
        /// Why it stopped.
        reason: String,
        /// The error it stopped on, when one did (a store's or catalog's own).
        #[source]
        source: Option<Box<Error>>,
    },
    /// Every attempt lost to a concurrent commit until the retries ran out; files it wrote
    /// were cleaned up.
    #[error(
        "commit of snapshot {snapshot_id} to {table} failed after {attempts} attempt(s): retries exhausted; last: {last}"
    )]
    RetriesExhausted {
        /// The table.
        table: String,
        /// The snapshot that was not committed.
        snapshot_id: i64,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's conflict.
        #[source]
        last: Box<Error>,
    },
    /// A metadata-only update lost to concurrent commits until the retries ran out.
    #[error(
        "update of {table} failed after {attempts} attempt(s): retries exhausted; last: {last}"
    )]
    UpdateRetriesExhausted {
        /// The table.
        table: String,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's conflict.
        #[source]
        last: Box<Error>,
    },
    /// The commit may or may not have landed (the catalog did not answer); nothing was deleted.
    #[error("commit of snapshot {snapshot_id:?} to {table} has an unknown outcome: {reason}")]
    CommitStateUnknown {
        /// The table.
        table: String,
        /// The snapshot that may have been committed, when known.
        snapshot_id: Option<i64>,
        /// What went wrong.
        reason: String,
        /// The error that left the outcome open, when one did.
        #[source]
        source: Option<Box<Error>>,
    },
    /// A namespace that the catalog does not know.
    #[error("no such namespace {namespace}")]
    NoSuchNamespace {
        /// The namespace.
        namespace: String,
    },
    /// A namespace that already exists.
    #[error("namespace {namespace} already exists")]
    NamespaceAlreadyExists {
        /// The namespace.
        namespace: String,
    },
    /// A namespace that still holds tables.
    #[error("namespace {namespace} is not empty: it holds {tables} table(s)")]
    NamespaceNotEmpty {
        /// The namespace.
        namespace: String,
        /// Tables still in it.
        tables: usize,
    },
    /// An operation this catalog does not offer.
    #[error("{operation} is not supported by {catalog} (on {target})")]
    Unsupported {
        /// The operation.
        operation: String,
        /// The catalog.
        catalog: String,
        /// The table or namespace it was asked about.
        target: String,
    },
    /// A commit whose snapshot id was fixed in advance ([`crate::Environment::fixed_snapshot_id`])
    /// found that snapshot in the table: it landed before (an earlier run of the same
    /// commit); nothing was committed now.
    #[error("snapshot {snapshot_id} is already in {table}; nothing was committed again")]
    SnapshotAlreadyCommitted {
        /// The table.
        table: String,
        /// The fixed snapshot id.
        snapshot_id: i64,
    },
    /// An existing file offered to a table twice: already live in its current snapshot,
    /// or named twice in one call.
    #[error("`{path}` {reason}; nothing was committed")]
    DuplicateFile {
        /// The file.
        path: String,
        /// Where it already is.
        reason: String,
    },
    /// A rewrite of data files (compaction) whose inputs a concurrent commit changed: a
    /// file it rewrote is no longer live, or a delete file now applies to one. Its files
    /// were deleted; nothing was committed.
    #[error(
        "rewriting data files of {table} conflicts with a concurrent commit: `{path}` {reason}"
    )]
    RewriteConflict {
        /// The table.
        table: String,
        /// The data file at stake.
        path: String,
        /// What changed.
        reason: String,
    },
    /// An operation this library does not perform on this table.
    #[error("{operation} is not supported on {table}: {reason}")]
    NotSupportedForTable {
        /// The table.
        table: String,
        /// The operation.
        operation: String,
        /// Why.
        reason: String,
    },
    /// A table that the catalog does not know.
    #[error("no such table {table}")]
    NoSuchTable {
        /// The table.
        table: String,
    },
    /// A table that already exists.
    #[error("table {table} already exists")]
    TableAlreadyExists {
        /// The table.
        table: String,
    },
    /// The catalog's backend refused or failed, with its own typed error (a REST server's
    /// answer, a driver's error) as the source.
    #[error("catalog error on {table}: {source}")]
    Backend {
        /// The table or namespace.
        table: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The catalog's backend failed.
    #[error("catalog error on {table}: {reason}")]
    Catalog {
        /// The table.
        table: String,
        /// What failed.
        reason: String,
    },
}

impl Error {
    pub(crate) fn avro(path: impl Into<String>, source: apache_avro::Error) -> Self {
        Self::Avro {
            path: path.into(),
            source: Box::new(source),
        }
    }

    pub(crate) fn invalid_manifest(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidManifest {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// True when the catalog pointer moved under the commit (retrying on a fresh base can help).
    pub fn is_commit_conflict(&self) -> bool {
        matches!(self, Self::CommitConflict { .. })
    }

    /// True for a refusal that proves a commit did not land: made before anything was sent (a
    /// bad identifier or base, invalid metadata), or a table that no longer exists.
    pub fn is_pre_request_refusal(&self) -> bool {
        matches!(
            self,
            Self::Spec(_)
                | Self::InvalidManifest { .. }
                | Self::InvalidDataFile { .. }
                | Self::Unsupported { .. }
                | Self::NoSuchNamespace { .. }
                | Self::NoSuchTable { .. }
        )
    }

    /// True when a commit lost every retry to concurrent commits.
    pub fn is_retries_exhausted(&self) -> bool {
        matches!(self, Self::RetriesExhausted { .. })
    }

    /// True when the commit's outcome is unknown (it may have landed).
    pub fn is_commit_state_unknown(&self) -> bool {
        matches!(self, Self::CommitStateUnknown { .. })
    }

    /// True for a table or namespace that does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::NoSuchTable { .. } | Self::NoSuchNamespace { .. }
        )
    }

    /// True for a table or namespace that already exists.
    pub fn is_already_exists(&self) -> bool {
        matches!(
            self,
            Self::TableAlreadyExists { .. } | Self::NamespaceAlreadyExists { .. }
        )
    }
}
