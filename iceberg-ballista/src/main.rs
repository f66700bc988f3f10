//! `iceberg-ballista`: a Ballista scheduler or executor that knows our Iceberg tables.
//!
//! ```text
//! iceberg-ballista --catalog-uri sqlite:////wh/catalog.db --warehouse file:///wh scheduler --port 50050
//! iceberg-ballista --catalog-uri sqlite:////wh/catalog.db --warehouse file:///wh executor \
//!     --scheduler-port 50050 --port 50051 --grpc-port 50052 --work-dir /tmp/ex1
//! iceberg-ballista --catalog-uri sqlite:////wh/catalog.db --warehouse file:///wh sql \
//!     --scheduler-port 50050 "CREATE EXTERNAL TABLE raw STORED AS PARQUET LOCATION '/in/'" \
//!     "INSERT INTO default.db.events SELECT * FROM raw"
//! ```

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use datafusion::arrow::util::pretty::pretty_format_batches;
use iceberg_ballista::{
    ExecutorOptions, SchedulerOptions, client_config, run_executor, run_scheduler,
};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::CatalogRegistry;

/// A Ballista scheduler or executor with Iceberg's codecs and one SQL catalog.
#[derive(Debug, Parser)]
#[command(name = "iceberg-ballista", version)]
struct Cli {
    /// The SQL catalog's database (`sqlite:////abs/catalog.db`, `postgresql://...`): the
    /// same for the scheduler, every executor and the client.
    #[arg(long, env = "ICEBERG_CATALOG_URI")]
    catalog_uri: String,
    /// Where the catalog's new tables go (`file:///path`, `s3://bucket/wh`).
    #[arg(long, env = "ICEBERG_WAREHOUSE")]
    warehouse: String,
    /// The catalog's name: its rows in the database, and the name plans give it.
    #[arg(long, default_value = "default")]
    catalog_name: String,
    /// The host to bind and be reached at.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    #[command(subcommand)]
    role: Role,
}

#[derive(Debug, Subcommand)]
enum Role {
    /// Plans queries and hands their tasks to executors.
    Scheduler {
        /// The scheduler's gRPC port.
        #[arg(long, default_value_t = 50050)]
        port: u16,
        /// Seconds without a heartbeat after which an executor is dead and its work runs
        /// again elsewhere.
        #[arg(long, default_value_t = 180)]
        executor_timeout_seconds: u64,
    },
    /// Runs tasks: reads, writes data files, commits.
    Executor {
        /// The scheduler's port (on `--host`).
        #[arg(long, default_value_t = 50050)]
        scheduler_port: u16,
        /// The executor's Arrow Flight port.
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The executor's gRPC port.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once.
        #[arg(long, default_value_t = 2)]
        slots: usize,
        /// Where shuffle files go.
        #[arg(long)]
        work_dir: String,
        /// Seconds between heartbeats to the scheduler.
        #[arg(long, default_value_t = 60)]
        heartbeat_seconds: u64,
    },
    /// Runs SQL statements one after the other, on the scheduler at `--scheduler-port`
    /// or, without it, in this process (DataFusion alone), and prints their results.
    Sql {
        /// The scheduler's port (on `--host`); none runs the statements here.
        #[arg(long)]
        scheduler_port: Option<u16>,
        /// The statements; the catalog's tables are `<catalog-name>.<namespace>.<table>`.
        #[arg(required = true)]
        statements: Vec<String>,
    },
}

/// Ballista's log lines (info and above) on stderr, each with its process id.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!(
                "[{} pid{} {}] {}",
                record.level(),
                std::process::id(),
                record.target(),
                record.args()
            );
        }
    }

    fn flush(&self) {}
}

async fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let config = SqlCatalogConfig::new(&cli.catalog_name, &cli.catalog_uri, &cli.warehouse);
    let catalog = SqlCatalog::connect(config).await?;
    let registry = CatalogRegistry::new().with_catalog(cli.catalog_name, Arc::new(catalog));
    match cli.role {
        Role::Scheduler {
            port,
            executor_timeout_seconds,
        } => {
            let options = SchedulerOptions {
                address: SocketAddr::new(cli.host, port),
                executor_timeout_seconds,
            };
            run_scheduler(options, &registry).await?;
        }
        Role::Executor {
            scheduler_port,
            port,
            grpc_port,
            slots,
            work_dir,
            heartbeat_seconds,
        } => {
            let options = ExecutorOptions {
                host: cli.host.to_string(),
                port,
                grpc_port,
                scheduler_host: cli.host.to_string(),
                scheduler_port,
                slots,
                work_dir,
                heartbeat_seconds,
            };
            run_executor(options, &registry).await?;
        }
        Role::Sql {
            scheduler_port,
            statements,
        } => {
            let ctx = match scheduler_port {
                Some(port) => {
                    let url = format!("df://{}:{port}", cli.host);
                    iceberg_ballista::client(&url, &registry, client_config()).await?
                }
                None => iceberg_ballista::local_session(&registry).await?,
            };
            for statement in &statements {
                let batches = ctx.sql(statement).await?.collect().await?;
                if !batches.is_empty() {
                    println!("{}", pretty_format_batches(&batches)?);
                }
            }
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    if log::set_logger(&StderrLog).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("iceberg-ballista: {e}");
            ExitCode::FAILURE
        }
    }
}
