//! What a command fails with, by kind: the kind picks the exit status (so scripts can tell a
//! bad input from a lost commit race) and the `--json` error object.

use std::process::ExitCode;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// An argument the command cannot use: a table name, an expression, an option value.
    #[error("{0}")]
    Usage(String),
    /// An input file that cannot be read, or whose data does not fit the table.
    #[error("{file}: {reason}")]
    Input {
        /// The file (or pattern) as given.
        file: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A table, namespace, snapshot or warehouse that is missing, or already exists.
    #[error("{0}")]
    Table(String),
    /// The commit lost its race past every retry, or its outcome is unknown.
    #[error(transparent)]
    Commit(iceberg_append::Error),
    /// A catalog or commit failure other than those.
    #[error(transparent)]
    Append(iceberg_append::Error),
    /// Opening a catalog.
    #[error(transparent)]
    Catalog(#[from] iceberg_catalog::Error),
    /// Writing data files.
    #[error(transparent)]
    Write(#[from] iceberg_write::Error),
    /// Storage.
    #[error(transparent)]
    Io(#[from] iceberg_io::Error),
    /// Table metadata that breaks a spec rule.
    #[error(transparent)]
    Spec(#[from] iceberg_spec::Error),
    /// Building the sample data of `quickstart`.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Writing the command's own output (stdout).
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// A write that failed part way: everything it wrote was removed again.
    #[error("{cause}\nnothing was committed; the table is unchanged")]
    Aborted {
        /// Why it failed.
        #[source]
        cause: Box<Error>,
    },
}

impl From<iceberg_append::Error> for Error {
    fn from(e: iceberg_append::Error) -> Self {
        if e.is_commit_conflict() || e.is_commit_state_unknown() || e.is_retries_exhausted() {
            Self::Commit(e)
        } else {
            Self::Append(e)
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Self::Output(std::io::Error::other(e))
    }
}

/// A command's result.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An input error about `file`.
    pub(crate) fn input(file: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        Self::Input {
            file: file.to_string(),
            reason: reason.into(),
        }
    }

    /// The short name of the kind, as the `--json` error object gives it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Usage(_) => "usage",
            Self::Input { .. } => "input",
            Self::Table(_) => "table",
            Self::Commit(_) => "commit",
            Self::Aborted { cause } => cause.kind(),
            Self::Output(_) => "output",
            Self::Append(_)
            | Self::Catalog(_)
            | Self::Write(_)
            | Self::Io(_)
            | Self::Spec(_)
            | Self::Arrow(_) => "failure",
        }
    }

    /// The exit status: 2 usage, 3 input, 4 table, 5 commit, 1 anything else.
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Input { .. } => 3,
            Self::Table(_) => 4,
            Self::Commit(_) => 5,
            Self::Aborted { cause } => cause.exit_status(),
            Self::Append(_)
            | Self::Catalog(_)
            | Self::Write(_)
            | Self::Io(_)
            | Self::Spec(_)
            | Self::Arrow(_)
            | Self::Output(_) => 1,
        }
    }

    /// True when the commit may have landed (the catalog could not tell): nothing it may
    /// reference can be undone, the table this command created included.
    pub(crate) fn outcome_unknown(&self) -> bool {
        match self {
            Self::Commit(e) => e.is_commit_state_unknown(),
            Self::Aborted { cause } => cause.outcome_unknown(),
            _ => false,
        }
    }

    /// True for a closed stdout (`iceberg tree t | head`): the reader's choice, not a failure.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// Reports the error on stderr (as a JSON object with `--json`) and gives the status.
    pub(crate) fn report(&self, as_json: bool) -> ExitCode {
        let status = self.exit_status();
        let message = self.message_with_causes();
        if as_json {
            let out = serde_json::json!({
                "error": {"kind": self.kind(), "message": message, "exit_status": status}
            });
            eprintln!("{out}");
        } else {
            eprintln!("error: {message}");
        }
        ExitCode::from(status)
    }

    /// The message with each cause's appended that it does not already say: a store's
    /// reason (a 403, a timeout) travels as a typed source, not in the top message.
    fn message_with_causes(&self) -> String {
        let mut out = self.to_string();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            let text = cause.to_string();
            if !text.is_empty() && !out.contains(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            next = cause.source();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store's own reason, kept as the source of the IO error, reaches the message.
    #[test]
    fn the_message_says_each_cause_once() {
        let store = iceberg_io::Error::Store {
            path: "s3://b/t/metadata/v3.metadata.json".into(),
            source: iceberg_io::object_store::Error::Generic {
                store: "S3",
                source: "403 Forbidden: access denied".into(),
            },
        };
        let e = Error::from(iceberg_append::Error::from(store));
        let message = e.message_with_causes();
        assert!(message.contains("v3.metadata.json"), "{message}");
        assert_eq!(message.matches("403 Forbidden").count(), 1, "{message}");
    }

    #[test]
    fn kinds_pick_distinct_statuses_and_aborts_keep_their_cause() {
        let input = Error::input("a.csv", "column `id`: expected long");
        assert_eq!((input.kind(), input.exit_status()), ("input", 3));
        assert_eq!(input.to_string(), "a.csv: column `id`: expected long");
        let aborted = Error::Aborted {
            cause: Box::new(input),
        };
        assert_eq!(aborted.exit_status(), 3);
        assert!(aborted.to_string().ends_with("the table is unchanged"));
        assert_eq!(Error::Usage("x".into()).exit_status(), 2);
        assert_eq!(Error::Table("x".into()).exit_status(), 4);
        let conflict = iceberg_append::Error::CommitConflict {
            table: "db.t".into(),
            expected: Some("v1".into()),
            found: Some("v2".into()),
        };
        let exhausted = Error::from(iceberg_append::Error::RetriesExhausted {
            table: "db.t".into(),
            snapshot_id: 7,
            attempts: 5,
            last: Box::new(conflict),
        });
        assert_eq!((exhausted.kind(), exhausted.exit_status()), ("commit", 5));
        let source = std::error::Error::source(&exhausted).map(ToString::to_string);
        assert!(
            source.is_some_and(|s| s.contains("expected metadata")),
            "the last conflict is kept as a typed source"
        );
        let unknown = Error::from(iceberg_append::Error::CommitStateUnknown {
            table: "db.t".into(),
            snapshot_id: Some(7),
            reason: "no answer".into(),
            source: None,
        });
        assert_eq!(unknown.exit_status(), 5);
        let aborted_commit = Error::Aborted {
            cause: Box::new(exhausted),
        };
        assert_eq!(aborted_commit.exit_status(), 5);
        let pipe = Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(pipe.is_broken_pipe());
        assert_eq!(pipe.exit_status(), 1);
    }
}
