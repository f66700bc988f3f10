//! The command line: global options and one struct per subcommand (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub(crate) use crate::input::source::Compression;

/// Land data in Apache Iceberg tables and show what a commit wrote.
#[derive(Debug, Parser)]
#[command(
    name = "iceberg",
    version,
    about,
    after_help = "Exit status: 0 done, 2 bad argument, 3 bad input file, 4 missing or \
                  existing table, 5 commit lost or unknown, 1 anything else."
)]
pub(crate) struct Cli {
    /// Warehouse folder or URL (tables go to `<warehouse>/<namespace>/<table>`) [default:
    /// the configured catalog's `warehouse`, else `./warehouse`]; a REST catalog ignores it
    /// (its server owns the warehouse).
    #[arg(long, global = true, env = "ICEBERG_WAREHOUSE")]
    pub(crate) warehouse: Option<String>,
    /// Catalog: unset for SQLite at `<warehouse>/catalog.db`; `sqlite:////abs/path` (or
    /// `sqlite:///rel/path`, as SQLAlchemy reads them),
    /// `postgres://...` / `postgresql://...`, `object-store` (Hadoop layout, no database), or
    /// `http(s)://host/path` for an Iceberg REST catalog (the server owns the warehouse).
    /// Unset, the configured catalog's `uri` is used.
    #[arg(long, global = true, env = "ICEBERG_CATALOG")]
    pub(crate) catalog: Option<String>,
    /// Which catalog of PyIceberg's configuration (`.pyiceberg.yaml`, `PYICEBERG_CATALOG__*`
    /// variables) to use [default: its `default-catalog`, else `default`].
    #[arg(long, global = true, env = "ICEBERG_CATALOG_NAME")]
    pub(crate) catalog_name: Option<String>,
    /// REST catalog property `key=value`: `warehouse`, `token`, `credential` (id:secret),
    /// `scope`, `oauth2-server-uri`, `header.<Name>`; repeatable. Only with an http(s)
    /// `--catalog`.
    #[arg(
        long = "catalog-property",
        global = true,
        value_name = "KEY=VALUE",
        value_parser = parse_key_value
    )]
    pub(crate) catalog_properties: Vec<(String, String)>,
    /// File IO setting `key=value` (`s3.endpoint=...`, credentials); repeatable. Give it
    /// before the subcommand, as `--io` (or `--property`): after it, `--property` sets table
    /// properties, which refuse credentials.
    #[arg(
        long = "io",
        visible_alias = "property",
        value_name = "KEY=VALUE",
        value_parser = parse_key_value
    )]
    pub(crate) io_properties: Vec<(String, String)>,
    /// Machine-readable JSON on stdout (and an error as a JSON object on stderr).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write a sample `demo.events` table in three appends and print its metadata tree.
    Quickstart {
        /// Rows per append.
        #[arg(long, default_value_t = 100_000)]
        rows: usize,
    },
    /// Create a table with a schema taken from a data file or an Iceberg schema JSON.
    Create(CreateArgs),
    /// Append Parquet, CSV, NDJSON or Arrow IPC files to a table in one commit (with
    /// `--create`, the table and its first snapshot in one commit).
    Append(AppendArgs),
    /// Register existing Parquet files in a table where they are, without rewriting them,
    /// in one commit (with `--create`, the table is made from the files' columns first).
    AddFiles(AddFilesArgs),
    /// Show a table's schema, partition spec, sort order, properties and snapshots.
    Inspect {
        /// The table as `namespace.table`.
        table: String,
        /// Also list every live data file with its decoded column stats.
        #[arg(long)]
        files: bool,
    },
    /// Change a table's schema or properties (a new metadata file; no data is rewritten).
    Alter {
        /// The table as `namespace.table`.
        table: String,
        /// The change.
        #[command(subcommand)]
        change: AlterChange,
    },
    /// Show a table's snapshot history.
    Log {
        /// The table as `namespace.table`.
        table: String,
    },
    /// List the namespaces and tables (top level, or directly in NAMESPACE).
    List {
        /// A namespace, e.g. `db`.
        namespace: Option<String>,
    },
    /// Create or drop a namespace.
    Namespace {
        /// What to do.
        #[command(subcommand)]
        action: NamespaceAction,
    },
    /// Drop a table from the catalog (its files stay unless `--purge`).
    Drop {
        /// The table as `namespace.table`.
        table: String,
        /// Also delete every file the table's metadata reaches.
        #[arg(long)]
        purge: bool,
    },
    /// Rename a table.
    Rename {
        /// The table as `namespace.table`.
        from: String,
        /// Its new name as `namespace.table`.
        to: String,
    },
    /// Show a table's current schema.
    Schema {
        /// The table as `namespace.table`.
        table: String,
    },
    /// Print the first rows of a table's current snapshot.
    Head {
        /// The table as `namespace.table`.
        table: String,
        /// How many rows.
        #[arg(short = 'n', long = "rows", default_value_t = 20)]
        rows: usize,
    },
    /// Expire old snapshots in one commit (the table's `history.expire.*` retention, or the
    /// limits given; branches and tags keep theirs), then delete the files only they reached.
    Expire(ExpireArgs),
    /// Compact small data files: per partition, files under 3/4 of the target size are
    /// rewritten into files near it, as one `replace` snapshot (files a delete file applies
    /// to are left alone).
    Compact {
        /// The table as `namespace.table`.
        table: String,
        /// Aim for files of this size (`512MiB`, `128MB`, bytes) [default: the table's
        /// `write.target-file-size-bytes`, 512 MiB].
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        target_file_size: Option<u64>,
        /// Compact a partition only from this many small files on.
        #[arg(long, value_name = "N", default_value_t = 5)]
        min_input_files: usize,
    },
    /// Rewrite the current snapshot's data manifests into few, clustered by partition, as
    /// a `replace` snapshot (no data file changes).
    RewriteManifests {
        /// The table as `namespace.table`.
        table: String,
        /// Roll to a new manifest past this many bytes [default: the table's
        /// `commit.manifest.target-size-bytes`, 8 MiB].
        #[arg(long, value_name = "BYTES")]
        target_size: Option<u64>,
    },
    /// List the files under a table's location that nothing of the table refers to (older
    /// than 3 days by default, so writes in flight are spared); `--delete` deletes them.
    Orphans(OrphansArgs),
    /// Print the metadata tree of a snapshot (the current one by default).
    Tree {
        /// The table as `namespace.table`.
        table: String,
        /// The snapshot to show.
        #[arg(long)]
        snapshot: Option<i64>,
        /// Emit Graphviz `dot` instead of text.
        #[arg(long)]
        dot: bool,
    },
}

/// `iceberg alter NS.T ...`: one change per call, as Java's `UpdateSchema` and
/// `UpdateProperties` make them. Column names are full names (`point.x`, `tags.element.k`).
#[derive(Debug, Subcommand)]
pub(crate) enum AlterChange {
    /// Add an optional column (or a required one with `--default`, format v3).
    AddColumn {
        /// The new column's full name (`point.z` adds `z` to the struct `point`; a list or
        /// map of structs takes it in its element or value).
        name: String,
        /// Its type: a primitive (`long`, `decimal(10,2)`, `timestamptz`) or the spec's
        /// JSON for a nested type.
        #[arg(value_name = "TYPE")]
        field_type: String,
        /// Place it after this sibling (default: last in its struct).
        #[arg(long, conflicts_with_all = ["before", "first"])]
        after: Option<String>,
        /// Place it before this sibling.
        #[arg(long, conflicts_with = "first")]
        before: Option<String>,
        /// Place it first in its struct.
        #[arg(long)]
        first: bool,
        /// Its doc.
        #[arg(long)]
        doc: Option<String>,
        /// Make it required, with this value (JSON) for the rows already written (v3 only).
        #[arg(long, value_name = "JSON")]
        default: Option<String>,
    },
    /// Delete a column (its data stays in the old files; its id is never reused).
    DropColumn {
        /// The column's full name.
        name: String,
    },
    /// Rename a column (it keeps its id, so its data).
    RenameColumn {
        /// The column's full name.
        name: String,
        /// Its new name (the last part only).
        new_name: String,
    },
    /// Widen a column: int -> long, float -> double, decimal(P,S) -> decimal(P',S).
    WidenColumn {
        /// The column's full name.
        name: String,
        /// The wider type.
        #[arg(value_name = "TYPE")]
        field_type: String,
    },
    /// Make a required column optional.
    MakeOptional {
        /// The column's full name.
        name: String,
    },
    /// Set a column's doc (no DOC removes it).
    SetDoc {
        /// The column's full name.
        name: String,
        /// The doc.
        doc: Option<String>,
    },
    /// Move a column within its struct.
    MoveColumn {
        /// The column's full name.
        name: String,
        /// After this sibling.
        #[arg(long, conflicts_with_all = ["before", "first"], required_unless_present_any = ["before", "first"])]
        after: Option<String>,
        /// Before this sibling.
        #[arg(long, conflicts_with = "first")]
        before: Option<String>,
        /// First in its struct.
        #[arg(long)]
        first: bool,
    },
    /// Add a partition field (a new default spec; older files keep theirs).
    AddPartitionField {
        /// A Spark-style term: `day(ts)`, `bucket(16, id)`, `truncate(4, name)`, `id`.
        term: String,
        /// Its name [default: Java's, e.g. `ts_day`, `id_bucket_16`].
        #[arg(long)]
        name: Option<String>,
    },
    /// Remove a partition field from the default spec (v1: it becomes `void`).
    DropPartitionField {
        /// The partition field's name.
        name: String,
    },
    /// Rename a partition field.
    RenamePartitionField {
        /// The partition field's name.
        name: String,
        /// Its new name.
        new_name: String,
    },
    /// Replace the table's sort order (new data files are sorted by it; none: unsorted).
    SetSort {
        /// Spark-style keys: `ts`, `id desc`, `day(ts) asc nulls last`; none for unsorted.
        #[arg(value_name = "KEY")]
        keys: Vec<String>,
    },
    /// Set table properties.
    SetProperty {
        /// `key=value`; several in one commit.
        #[arg(value_name = "KEY=VALUE", value_parser = parse_key_value, required = true)]
        properties: Vec<(String, String)>,
    },
    /// Remove table properties.
    UnsetProperty {
        /// The keys; several in one commit.
        #[arg(value_name = "KEY", required = true)]
        keys: Vec<String>,
    },
}

/// `iceberg namespace ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum NamespaceAction {
    /// Create a namespace.
    Create {
        /// The namespace, e.g. `db` or `a.b`.
        namespace: String,
        /// Namespace property `key=value` (e.g. `location=s3://bucket/db`); repeatable.
        #[arg(long = "property", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        properties: Vec<(String, String)>,
    },
    /// Drop an empty namespace.
    Drop {
        /// The namespace.
        namespace: String,
    },
}

/// `iceberg create`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The table as `namespace.table` (the namespace is created when missing).
    pub(crate) table: String,
    /// The table definition.
    #[command(flatten)]
    pub(crate) def: TableDefArgs,
    /// How `--schema-from` is read.
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    /// Print the table definition and create nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// How input files are read: shared by `create --schema-from` and `append`.
#[derive(Debug, Args, Clone)]
pub(crate) struct ReadArgs {
    /// Input format, when the file extension does not say (required for `-`, standard
    /// input).
    #[arg(long, value_enum)]
    pub(crate) format: Option<InputFormat>,
    /// Compression of CSV and NDJSON inputs, when the extension (`.gz`, `.zst`) does not
    /// say.
    #[arg(long, value_enum)]
    pub(crate) compression: Option<Compression>,
    /// CSV field delimiter (one byte; `\t` for tab; `.tsv` files default to tab).
    #[arg(long, default_value = ",")]
    pub(crate) delimiter: String,
    /// An unquoted CSV value that means null; repeatable [default: the empty field]. A
    /// quoted value is never null: `""` is the empty string.
    #[arg(long = "null-value", value_name = "TEXT")]
    pub(crate) null_values: Vec<String>,
}

impl ReadArgs {
    /// The CSV null markers.
    pub(crate) fn nulls(&self) -> Vec<String> {
        if self.null_values.is_empty() {
            vec![String::new()]
        } else {
            self.null_values.clone()
        }
    }
}

/// The warehouse when neither `--warehouse` nor a configured catalog names one.
pub(crate) const DEFAULT_WAREHOUSE: &str = "./warehouse";

/// The format version of a new table when `--format-version` is not given.
pub(crate) const DEFAULT_FORMAT_VERSION: u8 = 2;

/// How a new table looks: the options shared by `create` and `append --create`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct TableDefArgs {
    /// A data file (Parquet, CSV, NDJSON, Arrow IPC) whose schema to use, or an Iceberg
    /// schema JSON file (`{"type": "struct", "fields": [...]}`).
    #[arg(long, value_name = "FILE")]
    pub(crate) schema_from: Option<PathBuf>,
    /// Partition field, as Spark writes it: `c`, `identity(c)`, `bucket(16, c)`,
    /// `truncate(4, c)`, `year(c)`, `month(c)`, `day(c)`, `hour(c)`, `void(c)`;
    /// comma-separated or repeated.
    #[arg(long, value_name = "EXPR")]
    pub(crate) partition: Vec<String>,
    /// Sort key `term [asc|desc] [nulls first|nulls last]`, comma-separated or repeated.
    #[arg(long, value_name = "EXPR")]
    pub(crate) sort: Vec<String>,
    /// Table format version [default: 2].
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub(crate) format_version: Option<u8>,
    /// Table property `key=value`, stored in the table's metadata; repeatable. Credentials
    /// are refused: they go before the subcommand, as `--io`.
    #[arg(
        long = "table-property",
        visible_alias = "property",
        value_name = "KEY=VALUE",
        value_parser = parse_key_value
    )]
    pub(crate) properties: Vec<(String, String)>,
    /// Infer CSV and JSON column types from the first N rows [default: every row].
    #[arg(long, value_name = "N")]
    pub(crate) infer_rows: Option<usize>,
    /// A top-level column's Iceberg type `NAME=TYPE` instead of the inferred one (`long`,
    /// `decimal(12, 2)`, `timestamptz`, `string`, ...); repeatable.
    #[arg(long = "column", value_name = "NAME=TYPE", value_parser = parse_key_value)]
    pub(crate) columns: Vec<(String, String)>,
}

impl TableDefArgs {
    /// The format version to create with.
    ///
    /// # Errors
    /// A version Iceberg does not define, as a usage error.
    pub(crate) fn format_version(&self) -> crate::error::Result<iceberg_spec::FormatVersion> {
        let number = self.format_version.unwrap_or(DEFAULT_FORMAT_VERSION);
        iceberg_spec::FormatVersion::from_number(i64::from(number))
            .map_err(|e| crate::error::Error::Usage(format!("--format-version: {e}")))
    }

    /// The options given that only shape a new table, as the user spelled them.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.schema_from.is_some() {
            given.push("--schema-from");
        }
        if !self.partition.is_empty() {
            given.push("--partition");
        }
        if !self.sort.is_empty() {
            given.push("--sort");
        }
        if self.format_version.is_some() {
            given.push("--format-version");
        }
        if !self.properties.is_empty() {
            given.push("--table-property");
        }
        if self.infer_rows.is_some() {
            given.push("--infer-rows");
        }
        if !self.columns.is_empty() {
            given.push("--column");
        }
        given
    }
}

/// `iceberg append`.
#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The table as `namespace.table`.
    pub(crate) table: String,
    /// Input files, folders (every data file under them), glob patterns
    /// (`data/*.parquet`), or `-` for standard input (with `--format`).
    #[arg(required = true, value_name = "FILE")]
    pub(crate) inputs: Vec<String>,
    /// Create the table (from `--schema-from` or the first input) when it does not exist.
    #[arg(long)]
    pub(crate) create: bool,
    /// The table definition used with `--create`.
    #[command(flatten)]
    pub(crate) def: TableDefArgs,
    /// Evolve the table's schema to take the inputs' columns, in the same commit: add the
    /// columns it lacks, widen types a typed input promotes (`--column` widens for text).
    #[arg(long)]
    pub(crate) evolve: bool,
    /// Merge small manifests as Java's default append does.
    #[arg(long, conflicts_with = "fast")]
    pub(crate) merge: bool,
    /// Fast append: add one manifest, carry the others by reference.
    #[arg(long)]
    pub(crate) fast: bool,
    /// How the inputs are read.
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    /// Round values past a column's precision (decimal digits past its scale half up,
    /// sub-microsecond digits down) instead of refusing the input.
    #[arg(long)]
    pub(crate) allow_rounding: bool,
    /// With `--create` on a missing table: print the table definition and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Rows per batch read from the inputs.
    #[arg(long, default_value_t = 8192)]
    pub(crate) batch_size: usize,
}

/// Arguments of `expire`.
#[derive(Debug, Args)]
pub(crate) struct ExpireArgs {
    /// The table as `namespace.table`.
    pub(crate) table: String,
    /// Expire snapshots older than this age (`5d`, `12h`, `30min`, `0s`) or time
    /// (`2026-01-01T00:00:00Z`) [default: the table's `history.expire.max-snapshot-age-ms`,
    /// 5 days].
    #[arg(long, value_name = "AGE|TIME")]
    pub(crate) older_than: Option<String>,
    /// Keep at least N snapshots of each branch, its head included, whatever their age
    /// [default: the table's `history.expire.min-snapshots-to-keep`, 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) retain_last: Option<u32>,
    /// Also expire this snapshot whatever its age (not one a branch or tag points at);
    /// repeatable.
    #[arg(long = "snapshot-id", value_name = "ID")]
    pub(crate) snapshot_ids: Vec<i64>,
    /// Print what would be expired and deleted; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Remove the snapshots from the metadata but delete no file.
    #[arg(long, conflicts_with = "dry_run")]
    pub(crate) keep_files: bool,
}

/// Arguments of `orphans`.
#[derive(Debug, Args)]
pub(crate) struct OrphansArgs {
    /// The table as `namespace.table`.
    pub(crate) table: String,
    /// Only files last written longer ago than this age (`3d`, `12h`) or before this time
    /// (`2026-01-01T00:00:00Z`) [default: 3 days].
    #[arg(long, value_name = "AGE|TIME")]
    pub(crate) older_than: Option<String>,
    /// Search under this location instead of the table's.
    #[arg(long, value_name = "URI")]
    pub(crate) location: Option<String>,
    /// Delete the orphans found (without it, only list them).
    #[arg(long)]
    pub(crate) delete: bool,
    /// With `--delete`, take files younger than 24 hours too. A write still in flight
    /// (its data files and manifests not yet committed) loses them and then commits a
    /// snapshot that refers to missing files; only for a table nobody writes.
    #[arg(long, requires = "delete")]
    pub(crate) allow_recent: bool,
}

/// Arguments of `add-files`.
#[derive(Debug, Args)]
pub(crate) struct AddFilesArgs {
    /// The table as `namespace.table`.
    pub(crate) table: String,
    /// Parquet files, folders (every `.parquet` under them) or glob patterns on local disk,
    /// or object-store URIs of files (`s3://bucket/path/part-0.parquet`).
    #[arg(required = true, value_name = "FILE")]
    pub(crate) inputs: Vec<String>,
    /// Take each file's partition from Hive-style `name=value` folders of its path
    /// (checked against its column statistics) instead of the statistics alone. With
    /// `--create`, the folders' keys are also the new table's identity partitions (unless
    /// `--partition` is given), and a key the files leave out becomes a column.
    #[arg(long)]
    pub(crate) hive_partitioning: bool,
    /// Create the table from the files' columns when it does not exist.
    #[arg(long)]
    pub(crate) create: bool,
    /// The table definition used with `--create`.
    #[command(flatten)]
    pub(crate) def: TableDefArgs,
    /// How the files are read for `--create`.
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    /// Read and check every file, print what would be added, commit nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// The input formats `append` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InputFormat {
    /// Apache Parquet.
    Parquet,
    /// CSV with a header line.
    Csv,
    /// Newline-delimited JSON objects.
    Json,
    /// Arrow IPC file (`.arrow`, `.feather`) or stream (`.arrows`).
    Ipc,
}

/// A size in bytes: a number with an optional unit (`KB`, `MB`, `GB` powers of 1000;
/// `KiB`, `MiB`, `GiB` powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 512MiB)"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        other => {
            return Err(format!(
                "`{s}`: unknown unit `{other}` (KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    n.checked_mul(factor)
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("`{s}` is not a positive size"))
}

/// `key=value`.
fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not key=value")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sizes_take_decimal_and_binary_units() {
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("128 MB").unwrap(), 128_000_000);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("0").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(
            parse_size("3 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
    }
}
