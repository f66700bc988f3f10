//! The command line: global options and one struct per subcommand (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// Warehouse folder or URL (tables go to `<warehouse>/<namespace>/<table>`); a REST
    /// catalog ignores it (its server owns the warehouse).
    #[arg(long, global = true, default_value = "./warehouse")]
    pub(crate) warehouse: String,
    /// Catalog: unset for SQLite at `<warehouse>/catalog.db`; `sqlite:///path`,
    /// `postgres://...` / `postgresql://...`, `object-store` (Hadoop layout, no database), or
    /// `http(s)://host/path` for an Iceberg REST catalog (the server owns the warehouse).
    #[arg(long, global = true)]
    pub(crate) catalog: Option<String>,
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
    /// Append Parquet, CSV, NDJSON or Arrow IPC files to a table in one commit.
    Append(AppendArgs),
    /// Show a table's schema, partition spec, sort order, properties and snapshots.
    Inspect {
        /// The table as `namespace.table`.
        table: String,
        /// Also list every live data file with its decoded column stats.
        #[arg(long)]
        files: bool,
    },
    /// Show a table's snapshot history.
    Log {
        /// The table as `namespace.table`.
        table: String,
    },
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

/// `iceberg create`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The table as `namespace.table` (the namespace is created when missing).
    pub(crate) table: String,
    /// The table definition.
    #[command(flatten)]
    pub(crate) def: TableDefArgs,
}

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
}

impl TableDefArgs {
    /// The format version to create with.
    pub(crate) fn format_version(&self) -> u8 {
        self.format_version.unwrap_or(DEFAULT_FORMAT_VERSION)
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
        given
    }
}

/// `iceberg append`.
#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The table as `namespace.table`.
    pub(crate) table: String,
    /// Input files or glob patterns (`data/*.parquet`).
    #[arg(required = true, value_name = "FILE")]
    pub(crate) inputs: Vec<String>,
    /// Create the table (from `--schema-from` or the first input) when it does not exist.
    #[arg(long)]
    pub(crate) create: bool,
    /// The table definition used with `--create`.
    #[command(flatten)]
    pub(crate) def: TableDefArgs,
    /// Merge small manifests as Java's default append does.
    #[arg(long, conflicts_with = "fast")]
    pub(crate) merge: bool,
    /// Fast append: add one manifest, carry the others by reference.
    #[arg(long)]
    pub(crate) fast: bool,
    /// Input format, when the file extension does not say.
    #[arg(long, value_enum)]
    pub(crate) format: Option<InputFormat>,
    /// CSV field delimiter (one byte; `\t` for tab).
    #[arg(long, default_value = ",")]
    pub(crate) delimiter: String,
    /// Rows per batch read from the inputs.
    #[arg(long, default_value_t = 8192)]
    pub(crate) batch_size: usize,
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

/// `key=value`.
fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not key=value")),
    }
}
