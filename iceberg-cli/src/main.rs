//! The `iceberg` command.
//!
//! `iceberg quickstart` writes a sample events table partitioned by `day(ts)` under
//! `./warehouse` in three commits and prints the metadata tree it wrote.

mod quickstart;
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Land data in Apache Iceberg tables and show what a commit wrote.
#[derive(Debug, Parser)]
#[command(name = "iceberg", version, about)]
struct Cli {
    /// Warehouse folder (tables go to `<warehouse>/<namespace>/<table>`).
    #[arg(long, global = true, default_value = "./warehouse")]
    warehouse: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a sample `demo.events` table in three appends and print its metadata tree.
    Quickstart {
        /// Rows per append.
        #[arg(long, default_value_t = 100_000)]
        rows: usize,
    },
    /// Print the metadata tree of a table's current snapshot.
    Tree {
        /// The table as `namespace.table`.
        table: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        match cli.command {
            Command::Quickstart { rows } => quickstart::run(&cli.warehouse, rows).await,
            Command::Tree { table } => tree::run_for_name(&cli.warehouse, &table).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`iceberg tree t | head`) is the reader's choice, not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
