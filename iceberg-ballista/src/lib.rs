//! `iceberg-ballista`: Iceberg tables in SQL on a Ballista cluster (distributed DataFusion).
//!
//! The scheduler, every executor and the client hold the same catalogs under the same names
//! (a [`CatalogRegistry`]; each its own connection to the shared catalog: PostgreSQL, a REST
//! server, or SQLite on a disk they share) and `iceberg-datafusion-writer`'s codecs wrapped
//! around Ballista's own, so plans travel as descriptions, never live handles:
//!
//! - the client ([`client`]) plans `INSERT INTO lake.db.events SELECT ...` against its
//!   catalogs and sends the logical plan, our tables described by name;
//! - the scheduler ([`run_scheduler`]) plans it physically (the scan's files, the write
//!   node, the commit node with its snapshot id fixed) and splits it into stages at the
//!   partition-key shuffle and before the commit;
//! - each executor ([`run_executor`]) writes the data files of the partitions it is given
//!   (file names carry its process id), and one commits them all in one snapshot.
//!
//! The `iceberg-ballista` binary runs a scheduler or an executor with these installed, or
//! SQL statements on a scheduler (or, without one, in its own process: [`local_session`]).

use std::net::SocketAddr;
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_core::utils::default_session_builder;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::execution::{FunctionRegistry, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use iceberg_datafusion_writer::{
    CatalogRegistry, IcebergLogicalCodec, IcebergPhysicalCodec, partition_key_udf,
    register_catalogs,
};

/// Why a Ballista process or session could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Ballista refused its configuration or stopped with an error.
    #[error(transparent)]
    Ballista(#[from] ballista_core::error::BallistaError),
    /// The client session could not be made.
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// A catalog could not list its namespaces and tables for the client session.
    #[error(transparent)]
    Catalog(#[from] iceberg_datafusion_writer::Error),
}

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Our codecs for `registry`, around Ballista's own (its shuffle nodes, file formats).
pub fn codecs(registry: &CatalogRegistry) -> (Arc<IcebergLogicalCodec>, Arc<IcebergPhysicalCodec>) {
    let logical = IcebergLogicalCodec::new(registry.clone())
        .with_inner(Arc::new(BallistaLogicalExtensionCodec::default()));
    let physical = IcebergPhysicalCodec::new(registry.clone())
        .with_inner(Arc::new(BallistaPhysicalExtensionCodec::default()));
    (Arc::new(logical), Arc::new(physical))
}

/// A session that runs its queries on the scheduler at `url` (`df://host:port`), with
/// `registry`'s catalogs registered under their names (so SQL names tables
/// `catalog.namespace.table`) and `config`'s settings (e.g. target partitions).
///
/// # Errors
/// When a catalog cannot list its tables, or `url` is not a scheduler URL.
pub async fn client(
    url: &str,
    registry: &CatalogRegistry,
    config: SessionConfig,
) -> Result<SessionContext> {
    let (logical, physical) = codecs(registry);
    let config = config
        .with_ballista_logical_extension_codec(logical)
        .with_ballista_physical_extension_codec(physical);
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    let ctx = SessionContext::remote_with_state(url, state).await?;
    register_catalogs(&ctx, registry).await?;
    Ok(ctx)
}

/// A session that runs its queries in this process (DataFusion alone, no cluster), with
/// `registry`'s catalogs registered under their names, as [`client`] does.
///
/// # Errors
/// When a catalog cannot list its tables.
pub async fn local_session(registry: &CatalogRegistry) -> Result<SessionContext> {
    let ctx = SessionContext::new();
    register_catalogs(&ctx, registry).await?;
    Ok(ctx)
}

/// A session config with Ballista's settings, for [`client`]: its static planner, because
/// Ballista 55's adaptive one left a query that lost an executor mid-stage hanging (the
/// stage rolled back and never ran again); the static one fails it, and nothing commits.
pub fn client_config() -> SessionConfig {
    SessionConfig::new_with_ballista().set_bool(ADAPTIVE_PLANNER, false)
}

/// Ballista's setting that turns its adaptive planner on.
const ADAPTIVE_PLANNER: &str = "ballista.planner.adaptive.enabled";

/// Where a scheduler listens and when it gives an executor up.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// Its gRPC address.
    pub address: SocketAddr,
    /// An executor silent this long is dead: its tasks and shuffle output are run again
    /// elsewhere (Ballista's default is 180 s).
    pub executor_timeout_seconds: u64,
}

/// Executors ask for tasks when they have free slots. Ballista 55 with tasks pushed by the
/// scheduler never ran again the stages an executor lost mid-query: the query hung instead
/// of being retried or failing (tested in `tests/distributed.rs`).
const SCHEDULING: TaskSchedulingPolicy = TaskSchedulingPolicy::PullStaged;

/// Runs a scheduler until the process ends.
///
/// # Errors
/// When Ballista refuses the configuration or the server stops with an error.
pub async fn run_scheduler(options: SchedulerOptions, registry: &CatalogRegistry) -> Result<()> {
    let (logical, physical) = codecs(registry);
    let address = options.address;
    let timeout = options.executor_timeout_seconds.max(1);
    let config = SchedulerConfig {
        bind_host: address.ip().to_string(),
        external_host: address.ip().to_string(),
        bind_port: address.port(),
        scheduling_policy: SCHEDULING,
        executor_timeout_seconds: timeout,
        expire_dead_executor_interval_seconds: timeout.div_ceil(3).min(15),
        no_executors_grace_period_seconds: timeout,
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        override_session_builder: Some(Arc::new(|config| {
            let mut state = default_session_builder(config)?;
            state.register_udf(partition_key_udf())?;
            Ok(state)
        })),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, address, Arc::new(config)).await?;
    Ok(())
}

/// Where an executor listens and which scheduler it serves.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The host it binds and is reached at.
    pub host: String,
    /// Its Arrow Flight port (shuffle reads).
    pub port: u16,
    /// Its gRPC port.
    pub grpc_port: u16,
    /// The scheduler's host.
    pub scheduler_host: String,
    /// The scheduler's port.
    pub scheduler_port: u16,
    /// How many tasks it runs at once.
    pub slots: usize,
    /// Where it keeps shuffle files.
    pub work_dir: String,
    /// How often it tells the scheduler it is alive (below the scheduler's executor
    /// timeout).
    pub heartbeat_seconds: u64,
}

/// Runs an executor until the process ends or the scheduler stops it.
///
/// # Errors
/// When Ballista refuses the configuration or the executor stops with an error.
pub async fn run_executor(options: ExecutorOptions, registry: &CatalogRegistry) -> Result<()> {
    let (logical, physical) = codecs(registry);
    let mut functions = BallistaFunctionRegistry::default();
    let udf = partition_key_udf();
    functions
        .scalar_functions
        .insert(udf.name().to_string(), udf);
    let config = ExecutorProcessConfig {
        bind_host: options.host.clone(),
        external_host: Some(options.host),
        port: options.port,
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler_host,
        scheduler_port: options.scheduler_port,
        vcores: options.slots,
        task_scheduling_policy: SCHEDULING,
        work_dir: Some(options.work_dir),
        executor_heartbeat_interval_seconds: options.heartbeat_seconds.max(1),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        override_function_registry: Some(Arc::new(functions)),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}
