//! The one error type of the write layer.

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything writing data files can refuse or fail at, naming the column or file involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A required table column is absent from the batch.
    #[error("required column `{name}` is missing from the batch")]
    MissingColumn {
        /// Full (dotted) name of the column.
        name: String,
    },
    /// A batch column that the table schema does not have.
    #[error("batch column `{name}` is not in the table schema")]
    UnexpectedColumn {
        /// Full (dotted) name of the batch column.
        name: String,
    },
    /// A batch column whose Arrow type cannot be written as the column's Iceberg type.
    #[error("column `{column}`: expected Iceberg type {expected}, found Arrow type {found}")]
    TypeMismatch {
        /// Full (dotted) name of the column.
        column: String,
        /// The Iceberg type of the column.
        expected: String,
        /// The Arrow type found in the batch.
        found: String,
    },
    /// A batch value the column's type cannot hold exactly (a decimal with more digits than
    /// its precision, a `Date64` that is not a whole day).
    #[error("column `{column}`: {reason}")]
    ValueOutOfRange {
        /// Full (dotted) name of the column.
        column: String,
        /// Which value and why.
        reason: String,
    },
    /// Nulls in a column the schema declares required.
    #[error("column `{column}` is required but the batch holds {nulls} null value(s)")]
    NullInRequiredColumn {
        /// Full (dotted) name of the column.
        column: String,
        /// How many nulls were found.
        nulls: usize,
    },
    /// A type this writer cannot store in Parquet (`variant`, `geometry`, `geography`, or
    /// `unknown` as a list element or map key or value).
    #[error("column `{column}` has type {type_name}, which this writer does not support")]
    UnsupportedType {
        /// Full (dotted) name of the column.
        column: String,
        /// The Iceberg type.
        type_name: String,
    },
    /// An Arrow type with no Iceberg counterpart (on the table's format version).
    #[error("column `{column}`: Arrow type {arrow_type} cannot be stored in Iceberg ({reason})")]
    UnsupportedArrowType {
        /// Full (dotted) name of the column.
        column: String,
        /// The Arrow type.
        arrow_type: String,
        /// Why.
        reason: String,
    },
    /// A write option with a value that cannot be used.
    #[error("invalid write option `{option}` = `{value}`: {reason}")]
    InvalidOption {
        /// The option or property name.
        option: String,
        /// The value given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// The spec layer refused something (schema, partition spec, property, datum).
    #[error(transparent)]
    Spec(#[from] iceberg_spec::Error),
    /// Reading or writing a file failed.
    #[error("IO error: {source}")]
    Io {
        /// The IO layer's error (it names the path).
        #[from]
        source: iceberg_io::Error,
    },
    /// The Parquet encoder failed for a file.
    #[error("Parquet error writing `{path}`: {source}")]
    Parquet {
        /// The data file being written.
        path: String,
        /// The parquet crate's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// Reading a Parquet data file back failed.
    #[error("Parquet error reading `{path}`: {source}")]
    ParquetRead {
        /// The data file being read.
        path: String,
        /// The parquet crate's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// An Arrow kernel (cast, take, filter) failed on a column.
    #[error("Arrow error on column `{column}`: {source}")]
    Arrow {
        /// Full (dotted) name of the column, or `<batch>` for whole-batch operations.
        column: String,
        /// The arrow crate's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// The local spill of rows past the open-file cap failed (its folder, or a run file).
    #[error("spill file `{path}`: {source}")]
    Spill {
        /// The spill folder or run file.
        path: String,
        /// The local IO error (Arrow IPC errors carry theirs as text).
        #[source]
        source: std::io::Error,
    },
    /// A file given as an existing data file is not a Parquet file (or its footer is
    /// damaged).
    #[error("`{path}` is not a readable Parquet file: {source}")]
    NotParquet {
        /// The file.
        path: String,
        /// What the footer reader said.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A column of an existing data file whose values would not read as the table column's
    /// type.
    #[error("`{path}`: column `{column}` {reason}")]
    IncompatibleColumn {
        /// The file.
        path: String,
        /// The column's name in the file (dotted).
        column: String,
        /// Its Parquet type (physical and logical) and the table's type.
        reason: String,
    },
    /// A column of an existing data file that no table column reads (by its field id or
    /// through the name mapping).
    #[error("`{path}`: column `{column}` is not a column of the table{hint}")]
    UnknownColumn {
        /// The file.
        path: String,
        /// The column's name in the file (dotted).
        column: String,
        /// How it was looked up.
        hint: String,
    },
    /// A field id in an existing data file that disagrees with the table's schema.
    #[error("`{path}`: column `{column}` has field id {field_id}, {reason}")]
    FieldIdMismatch {
        /// The file.
        path: String,
        /// The column's name in the file (dotted).
        column: String,
        /// The id in the file.
        field_id: i32,
        /// How it disagrees.
        reason: String,
    },
    /// A required table column that an existing data file lacks or holds nulls in.
    #[error("`{path}`: required column `{column}` {reason}")]
    RequiredColumn {
        /// The file.
        path: String,
        /// The table column (dotted).
        column: String,
        /// What the file lacks.
        reason: String,
    },
    /// The partition of an existing data file cannot be told, or it holds rows of more than
    /// one partition.
    #[error("`{path}`: partition field `{field}`: {reason}")]
    Partition {
        /// The file.
        path: String,
        /// The partition field.
        field: String,
        /// Why the value is refused or unknown.
        reason: String,
    },
    /// The writer was used after it failed; the first failure was already reported.
    #[error("the data file writer already failed and cannot be used: {reason}")]
    WriterFailed {
        /// The earlier failure, as text.
        reason: String,
    },
}

impl Error {
    /// True when the error is the IO layer's "not found".
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source } if source.is_not_found())
    }

    /// True when the input data (not IO or configuration) was refused.
    pub fn is_invalid_data(&self) -> bool {
        matches!(
            self,
            Self::MissingColumn { .. }
                | Self::UnexpectedColumn { .. }
                | Self::TypeMismatch { .. }
                | Self::NullInRequiredColumn { .. }
                | Self::ValueOutOfRange { .. }
        )
    }

    pub(crate) fn arrow(column: impl Into<String>, source: arrow_schema::ArrowError) -> Self {
        Self::Arrow {
            column: column.into(),
            source,
        }
    }

    /// A Parquet error, unless it only carries an IO error of the sink, which is reported
    /// as [`Error::Io`] (so `is_not_found` and friends work).
    /// A Parquet error while reading `path` (an IO error inside it surfaces as [`Error::Io`]).
    pub(crate) fn parquet_read(path: &str, source: parquet::errors::ParquetError) -> Self {
        match Self::parquet(path, source) {
            Self::Parquet { path, source } => Self::ParquetRead { path, source },
            other => other,
        }
    }

    pub(crate) fn parquet(path: impl Into<String>, source: parquet::errors::ParquetError) -> Self {
        match source {
            parquet::errors::ParquetError::External(inner) => match io_error_of(inner) {
                Ok(io) => Self::Io { source: io },
                Err(inner) => Self::Parquet {
                    path: path.into(),
                    source: parquet::errors::ParquetError::External(inner),
                },
            },
            source => Self::Parquet {
                path: path.into(),
                source,
            },
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The `iceberg_io::Error` inside a boxed error (directly or in a `std::io::Error`).
fn io_error_of(inner: BoxError) -> std::result::Result<iceberg_io::Error, BoxError> {
    let inner = match inner.downcast::<iceberg_io::Error>() {
        Ok(e) => return Ok(*e),
        Err(other) => other,
    };
    let io = inner.downcast::<std::io::Error>()?;
    if !io.get_ref().is_some_and(|e| e.is::<iceberg_io::Error>()) {
        return Err(io);
    }
    match io.into_inner().map(|e| e.downcast::<iceberg_io::Error>()) {
        Some(Ok(e)) => Ok(*e),
        Some(Err(other)) => Err(other),
        None => Err("IO error without a source".into()),
    }
}
