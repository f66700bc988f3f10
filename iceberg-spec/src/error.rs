//! The one error type of the spec layer.

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the spec layer can refuse, each variant naming what it refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A type string or type object that is not an Iceberg type.
    #[error("invalid type `{text}`: {reason}")]
    InvalidType {
        /// The offending text.
        text: String,
        /// Why it was refused.
        reason: String,
    },
    /// A schema that breaks a schema rule (duplicate ids, missing identifier field, ...).
    #[error("invalid schema: {reason}")]
    InvalidSchema {
        /// Why it was refused.
        reason: String,
    },
    /// A partition spec change the evolution rules refuse (a duplicate field, a missing
    /// source, a name in use).
    #[error("cannot change partition field `{field}`: {reason}")]
    PartitionEvolution {
        /// The partition field's name (or its term, `day(ts)`, before it has one).
        field: String,
        /// Why the change was refused.
        reason: String,
    },
    /// A schema change the evolution rules refuse (a narrowing, an incompatible type, a
    /// required column that cannot be added, a name that matches twice).
    #[error("cannot evolve column `{column}`: {reason}")]
    SchemaEvolution {
        /// Full (dotted) name of the column.
        column: String,
        /// Why the change was refused.
        reason: String,
    },
    /// A field id that the schema does not contain.
    #[error("field id {id} is not in the schema")]
    FieldNotFound {
        /// The id looked for.
        id: i32,
    },
    /// A column name that the schema does not contain.
    #[error("column `{name}` is not in the schema")]
    ColumnNotFound {
        /// The name looked for.
        name: String,
    },
    /// A transform string that is not an Iceberg transform.
    #[error("invalid transform `{text}`: {reason}")]
    InvalidTransform {
        /// The offending text.
        text: String,
        /// Why it was refused.
        reason: String,
    },
    /// A transform applied to a source type it does not accept.
    #[error("transform {transform} cannot be applied to type {source_type}")]
    TransformSourceType {
        /// The transform, as its spec string.
        transform: String,
        /// The source type, as its spec string.
        source_type: String,
    },
    /// A partition spec that breaks a partition rule.
    #[error("invalid partition spec: {reason}")]
    InvalidPartitionSpec {
        /// Why it was refused.
        reason: String,
    },
    /// A sort order that breaks a sort-order rule.
    #[error("invalid sort order: {reason}")]
    InvalidSortOrder {
        /// Why it was refused.
        reason: String,
    },
    /// A partition or sort expression (`bucket(16, id)`, `ts desc`) that does not parse or
    /// does not fit the schema; the message quotes it.
    #[error("{message}")]
    InvalidExpression {
        /// What is wrong, quoting the expression.
        message: String,
    },
    /// A value that does not fit the type it was read or written as.
    #[error("invalid {type_name} value: {reason}")]
    InvalidValue {
        /// The Iceberg type, as its spec string.
        type_name: String,
        /// Why it was refused.
        reason: String,
    },
    /// An option given to an operation that it cannot take (Java throws
    /// `IllegalArgumentException` for the same).
    #[error("invalid option `{option}`: {reason}")]
    InvalidOption {
        /// The option, as its builder method names it.
        option: String,
        /// Why it was refused.
        reason: String,
    },
    /// Table metadata that is missing a field its format version requires, or holds a bad one.
    #[error("invalid table metadata field `{field}`: {reason}")]
    InvalidMetadata {
        /// The JSON field (dotted path) at fault.
        field: String,
        /// Why it was refused.
        reason: String,
    },
    /// A table property whose value cannot be parsed.
    #[error("invalid table property `{key}` = `{value}`: {reason}")]
    InvalidProperty {
        /// The property key.
        key: String,
        /// The value found.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// An expiry named a snapshot a kept branch or tag points at.
    #[error("cannot expire snapshot {snapshot_id}: ref `{reference}` points at it")]
    SnapshotInUse {
        /// The snapshot.
        snapshot_id: i64,
        /// The branch or tag.
        reference: String,
    },
    /// A format version outside 1..=3.
    #[error("unsupported format version {version}")]
    UnsupportedFormatVersion {
        /// The version found.
        version: i64,
    },
    /// A feature that the table's format version does not allow.
    #[error("{feature} requires format version {required}, table is version {found}")]
    FormatVersionTooLow {
        /// What needs the higher version.
        feature: String,
        /// The lowest version that allows it.
        required: u8,
        /// The table's version.
        found: u8,
    },
    /// JSON that is not valid or does not have the expected shape.
    #[error("invalid JSON for {what}: {source}")]
    Json {
        /// What was being parsed or written.
        what: String,
        /// The serde_json error.
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    pub(crate) fn expression(message: String) -> Self {
        Self::InvalidExpression { message }
    }

    pub(crate) fn invalid_type(text: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidType {
            text: text.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid_schema(reason: impl Into<String>) -> Self {
        Self::InvalidSchema {
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid_metadata(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidMetadata {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid_value(type_name: impl ToString, reason: impl Into<String>) -> Self {
        Self::InvalidValue {
            type_name: type_name.to_string(),
            reason: reason.into(),
        }
    }

    /// True when the error says a field id or column name is absent.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::FieldNotFound { .. } | Self::ColumnNotFound { .. }
        )
    }
}
