//! The `iceberg` command: land Parquet, CSV, NDJSON and Arrow IPC files in Iceberg tables
//! and show what a commit wrote.
//!
//! Module map:
//! - `cli`: the clap definitions (global options, one struct per subcommand).
//! - `catalog`: opening the catalog the global options name.
//! - `config`: settings from PyIceberg's `.pyiceberg.yaml` and `PYICEBERG_*` variables.
//! - `error`: what a command fails with, and its exit status.
//! - `commands`: one module per subcommand (`quickstart`, `create`, `append`, `alter`,
//!   `inspect`, `log`, `tree`; `manage` for `list`, `namespace`, `drop` and `rename`; `head` for `head`
//!   and `schema`).
//! - `input`: globs, formats, and each format's streaming batch reader.
//! - `describe`: readable schema, spec and sort order.
//! - `progress`: the progress bar of `append`.

/// `println!` that returns a closed stdout as an error (`?`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)?;
    }};
}

mod catalog;
mod cli;
mod commands;
mod config;
mod describe;
mod error;
mod input;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if let Err(e) = config::apply(&mut cli, &config::Sources::from_process()) {
        return e.report(cli.json);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match &cli.command {
            Command::Quickstart { rows } => commands::quickstart::run(&cli, *rows).await,
            Command::Create(args) => commands::create::run(&cli, args).await,
            Command::Append(args) => Box::pin(commands::append::run(&cli, args)).await,
            Command::AddFiles(args) => Box::pin(commands::add_files::run(&cli, args)).await,
            Command::Inspect { table, files } => commands::inspect::run(&cli, table, *files).await,
            Command::Alter { table, change } => commands::alter::run(&cli, table, change).await,
            Command::Log { table } => commands::log::run(&cli, table).await,
            Command::List { namespace } => commands::manage::list(&cli, namespace.as_deref()).await,
            Command::Namespace { action } => commands::manage::namespace(&cli, action).await,
            Command::Drop { table, purge } => commands::manage::drop(&cli, table, *purge).await,
            Command::Rename { from, to } => commands::manage::rename(&cli, from, to).await,
            Command::Schema { table } => commands::head::schema(&cli, table).await,
            Command::Head { table, rows } => commands::head::head(&cli, table, *rows).await,
            Command::Expire(args) => commands::expire::run(&cli, args).await,
            Command::Orphans(args) => commands::orphans::run(&cli, args).await,
            Command::Compact {
                table,
                target_file_size,
                min_input_files,
            } => commands::compact::run(&cli, table, *target_file_size, *min_input_files).await,
            Command::RewriteManifests { table, target_size } => {
                commands::rewrite_manifests::run(&cli, table, *target_size).await
            }
            Command::Tree {
                table,
                snapshot,
                dot,
            } => commands::tree::run(&cli, table, *snapshot, *dot).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => e.report(cli.json),
    }
}
