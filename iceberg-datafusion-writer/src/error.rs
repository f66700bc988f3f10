//! The error of this crate; DataFusion sees it as [`DataFusionError::External`], with the
//! cause kept as a typed source.

use datafusion::error::DataFusionError;

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a scan, write or commit of an Iceberg table failed, naming the table or file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading, committing to or reading the metadata of a table failed.
    #[error(transparent)]
    Append(#[from] iceberg_append::Error),
    /// Reaching the table's files failed.
    #[error(transparent)]
    Io(#[from] iceberg_io::Error),
    /// Writing data files failed.
    #[error(transparent)]
    Write(#[from] iceberg_write::Error),
    /// The table's metadata does not fit the spec (a schema or spec id that is missing).
    #[error(transparent)]
    Spec(#[from] iceberg_spec::Error),
    /// The table's current snapshot has delete files, which this scan does not apply yet:
    /// reading it would return deleted rows.
    #[error(
        "table {table} has {manifests} delete manifest(s): scans that apply deletes are not \
         supported yet (inserting into it is)"
    )]
    DeletesNotSupported {
        /// The table.
        table: String,
        /// How many delete manifests its current snapshot lists.
        manifests: usize,
    },
    /// A nested field with an `initial-default`: scans read files that lack it as null, so
    /// they are refused rather than answered wrongly.
    #[error(
        "column `{column}` is a nested field with a default: scans of tables with one are not \
         supported yet (inserting into them is)"
    )]
    NestedDefaultNotSupported {
        /// Full (dotted) name of the field.
        column: String,
    },
    /// A data file the scan would read is not Parquet (Java also writes ORC and Avro).
    #[error("table {table}: data file {path} is {format}: scans read Parquet files only")]
    FormatNotSupported {
        /// The table.
        table: String,
        /// The data file.
        path: String,
        /// Its format, as the manifest names it.
        format: String,
    },
    /// A write task's data file record could not be encoded or decoded on its way to the
    /// commit.
    #[error("data file record of {table}: {source}")]
    DataFileRecord {
        /// The table.
        table: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A column's `write-default` has no DataFusion literal.
    #[error("write-default of column `{column}`: {source}")]
    WriteDefault {
        /// The column.
        column: String,
        /// Why it has no literal.
        #[source]
        source: DataFusionError,
    },
    /// The commit node was given batches that are not a write node's output.
    #[error("commit of {table}: its input is not a write node's data file records")]
    NotWriteOutput {
        /// The table.
        table: String,
    },
    /// The table's schema changed since its provider was made: an insert planned on the old
    /// columns is refused (load the table again).
    #[error(
        "insert into {table}: its schema is now {current}, the statement was planned on \
         {planned}; load the table again"
    )]
    SchemaChanged {
        /// The table.
        table: String,
        /// The schema id the provider was made with.
        planned: i32,
        /// The table's current schema id.
        current: i32,
    },
    /// A plan names a schema its table's metadata does not have.
    #[error("table {table} has no schema {schema_id}")]
    SchemaMissing {
        /// The table.
        table: String,
        /// The schema id the plan names.
        schema_id: i32,
    },
    /// A plan names a catalog the decoding process does not have.
    #[error("catalog {name} is not in this process's catalog registry (known: {known})")]
    UnknownCatalog {
        /// The catalog's name in the plan.
        name: String,
        /// The names the registry has, comma separated.
        known: String,
    },
    /// A plan node's catalog is not in the codec's registry, so the node cannot be described
    /// by name for another process.
    #[error("table {table}: its catalog is not in the codec's catalog registry")]
    CatalogNotRegistered {
        /// The table.
        table: String,
    },
    /// A plan node's description could not be encoded or decoded.
    #[error("plan description of {node}: {source}")]
    PlanDescription {
        /// The node (or table provider).
        node: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` asked for what an Iceberg table cannot
    /// be made with.
    #[error("CREATE EXTERNAL TABLE {table}: {reason}")]
    CreateTable {
        /// The table.
        table: String,
        /// What was refused.
        reason: String,
    },
    /// A partition or sort expression of `CREATE EXTERNAL TABLE` that does not parse or fit
    /// the columns.
    #[error("CREATE EXTERNAL TABLE {table}: {source}")]
    TableDefinition {
        /// The table.
        table: String,
        /// The expression's error, quoting it.
        #[source]
        source: iceberg_spec::Error,
    },
    /// A table that is not one of the catalog's own Iceberg tables was to be registered in
    /// it (`CREATE TABLE`, `CREATE EXTERNAL TABLE ... STORED AS PARQUET`).
    #[error(
        "{table}: tables of an Iceberg catalog are made with CREATE EXTERNAL TABLE ... \
         STORED AS ICEBERG"
    )]
    NotIcebergTable {
        /// The table's name.
        table: String,
    },
    /// An insert mode this table provider does not offer.
    #[error("{operation} into {table} is not supported: only appends (INSERT INTO) are")]
    UnsupportedInsert {
        /// The table.
        table: String,
        /// What was asked (`INSERT OVERWRITE`, `REPLACE INTO`).
        operation: String,
    },
}

impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        DataFusionError::External(Box::new(e))
    }
}
