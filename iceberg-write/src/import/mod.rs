//! Existing Parquet files as data files: the seeds' `data_file_from_parquet`, for files this
//! crate did not write (DataFusion, Polars, pyarrow, Spark, a streaming sink).
//!
//! Only the footer is read, with ranged reads. Columns are matched to the table by the
//! file's field ids, or by name through the table's name mapping (`columns`); the partition
//! tuple is given, inferred from the statistics or read from Hive-style folders
//! (`partition`). Metrics follow the table's metrics config exactly as for files we write,
//! with what a footer alone cannot give left out, as Java's `ParquetUtil.footerMetrics`
//! does:
//! - no NaN counts (they need the values);
//! - float and double bounds only where no row group's min or max is NaN;
//! - no bounds for INT96 timestamps or for old statistics in signed order of columns
//!   Iceberg orders unsigned (strings, binary);
//! - no counts or bounds for a column some row group has no statistics for.

mod columns;
mod partition;

use std::collections::HashMap;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::name_mapping::NameMapping;
use iceberg_spec::{DataFile, MetricsMode, PartitionSpec, Schema};
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

pub use partition::{HIVE_NULL, PartitionSource, hive_folders};

use crate::error::{Error, Result};
use crate::metrics::{file_metrics_of, footer_metrics};
use crate::options::WriteOptions;

/// How much of a file's end the first read fetches: most footers fit.
const FOOTER_GUESS: u64 = 64 * 1024;

/// What existing files are checked against and described for: the table's schema,
/// partition spec, metrics config, name mapping and (when the rows are known to be sorted)
/// sort order id.
#[derive(Debug, Clone)]
pub struct ImportTarget {
    schema: Schema,
    spec: PartitionSpec,
    mapping: NameMapping,
    modes: HashMap<i32, MetricsMode>,
    sort_order_id: Option<i32>,
}

impl ImportTarget {
    /// A target for the table's `schema` and `spec`, with the metrics config of `options`
    /// and a name mapping of the schema's current names.
    pub fn new(schema: &Schema, spec: &PartitionSpec, options: &WriteOptions) -> Self {
        Self {
            schema: schema.clone(),
            spec: spec.clone(),
            mapping: NameMapping::from_schema(schema),
            modes: options.metrics.resolve(schema),
            sort_order_id: None,
        }
    }

    /// The same target resolving files without field ids through `mapping` (the table's
    /// `schema.name-mapping.default`).
    pub fn with_name_mapping(mut self, mapping: NameMapping) -> Self {
        self.mapping = mapping;
        self
    }

    /// The same target recording `sort_order_id` on every file: only for files known to be
    /// sorted by that order.
    pub fn with_sort_order_id(mut self, sort_order_id: Option<i32>) -> Self {
        self.sort_order_id = sort_order_id;
        self
    }

    /// The table schema files are checked against.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The partition spec the files' tuples belong to.
    pub fn spec(&self) -> &PartitionSpec {
        &self.spec
    }
}

/// An existing file's footer and what describing it found.
#[derive(Debug, Clone)]
pub struct ImportedFile {
    /// The data file record to commit.
    pub data_file: DataFile,
    /// True when the file's columns carry field ids (else the name mapping resolved them,
    /// and readers need the table to have one).
    pub uses_field_ids: bool,
}

/// Reads the Parquet footer of the file at `path` (its last bytes, in at most two ranged
/// reads) and the file's size.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read (`is_not_found` for a missing one),
/// [`Error::NotParquet`] when its end is not a Parquet footer.
pub async fn read_parquet_footer(io: &FileIo, path: &str) -> Result<(ParquetMetaData, u64)> {
    let len = io.len(path).await?;
    let not_parquet = |source: ParquetError| Error::NotParquet {
        path: path.into(),
        source,
    };
    let mut fetch = FOOTER_GUESS.min(len);
    for _ in 0..2 {
        let tail: Bytes = io.read_range(path, len - fetch..len).await?;
        let mut reader = ParquetMetaDataReader::new();
        match reader.try_parse_sized(&tail, len) {
            Ok(()) => return Ok((reader.finish().map_err(not_parquet)?, len)),
            Err(ParquetError::NeedMoreData(needed)) if (needed as u64) <= len => {
                fetch = needed as u64;
            }
            Err(e) => return Err(not_parquet(e)),
        }
    }
    Err(not_parquet(ParquetError::General(
        "the footer is longer than it said".into(),
    )))
}

/// Describes the existing Parquet file at `path` as a data file of `target`: reads its footer
/// and applies [`data_file_from_footer`].
///
/// # Errors
/// As [`read_parquet_footer`] and [`data_file_from_footer`].
pub async fn data_file_from_parquet(
    io: &FileIo,
    path: &str,
    target: &ImportTarget,
    partition: &PartitionSource,
) -> Result<ImportedFile> {
    let (meta, len) = read_parquet_footer(io, path).await?;
    data_file_from_footer(path, len, &meta, target, partition)
}

/// The data file record of an existing Parquet file of `file_size` bytes whose footer is
/// `meta`, checked against `target`.
///
/// # Errors
/// [`Error::UnknownColumn`], [`Error::FieldIdMismatch`], [`Error::IncompatibleColumn`] and
/// [`Error::RequiredColumn`] (a required column missing, holding nulls, or without the null
/// counts to show it holds none) for columns that do not read as the table's;
/// [`Error::Partition`] when the partition tuple is refused.
pub fn data_file_from_footer(
    path: &str,
    file_size: u64,
    meta: &ParquetMetaData,
    target: &ImportTarget,
    partition: &PartitionSource,
) -> Result<ImportedFile> {
    let schema = &target.schema;
    let descr = meta.file_metadata().schema_descr();
    let resolved = columns::resolve(path, descr, schema, &target.mapping)?;
    let footers = footer_metrics(meta, &resolved.leaves);
    for id in &resolved.required_leaves {
        let column = schema.field_name(*id).unwrap_or("?").to_string();
        let refuse = |reason: String| Error::RequiredColumn {
            path: path.into(),
            column: column.clone(),
            reason,
        };
        match footers.get(id) {
            Some(c) if c.stats_complete && c.nulls == 0 => {}
            Some(c) if c.stats_complete => {
                return Err(refuse(format!(
                    "holds {} null value(s) in the file",
                    c.nulls
                )));
            }
            _ => {
                return Err(refuse(
                    "has no null counts in the file to show it holds no nulls".into(),
                ));
            }
        }
    }
    let facts = partition::FileFacts {
        path,
        columns: &footers,
        present: &resolved.present,
    };
    let tuple = partition::partition_of(&facts, &target.spec, schema, partition)?;
    let data_file = file_metrics_of(&footers, schema, &target.modes, None).into_data_file(
        path.to_string(),
        file_size,
        meta,
        target.spec.spec_id(),
        tuple,
        target.sort_order_id,
    );
    Ok(ImportedFile {
        data_file,
        uses_field_ids: resolved.uses_ids,
    })
}
