//! A Ballista cluster on 127.0.0.1 (one scheduler and two executor processes of the
//! `iceberg-ballista` binary, a SQLite catalog on the disk they share): `INSERT INTO ...
//! SELECT` over 8 Parquet files lands one snapshot whose data files both executors wrote,
//! and PyIceberg reads exactly the input rows; with one executor killed mid-insert, the
//! table holds either nothing new or exactly the input rows, never a part or a double.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_datafusion_writer::scan::plan_files;
use iceberg_datafusion_writer::{CatalogRegistry, IcebergCatalogProvider};
use iceberg_testing::events;

const FILES: usize = 8;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The scheduler and executors, killed when dropped.
struct Cluster {
    scheduler: Child,
    executors: Vec<Child>,
    port: u16,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in self.executors.iter_mut().chain([&mut self.scheduler]) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn(dir: &Path, log: &Path, args: &[String]) -> Child {
    let config = SqlCatalogConfig::local(dir);
    Command::new(env!("CARGO_BIN_EXE_iceberg-ballista"))
        .args([
            "--catalog-uri",
            &config.uri,
            "--warehouse",
            &config.warehouse,
        ])
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Waits until something accepts connections on `port` (the scheduler whose log is `log`).
fn wait_listening(port: u16, log: &Path) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "nothing listens on {port}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `log` has `count` lines containing `needle`.
fn wait_for(log: &Path, needle: &str, count: usize) {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.matches(needle).count() >= count {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no {count} x {needle:?} in {}:\n{text}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Cluster {
    /// A scheduler and `executors` executors of two slots each, for the catalog in `dir`.
    fn start(dir: &Path, executors: usize) -> Self {
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let port = free_port();
        let scheduler = spawn(
            dir,
            &logs.join("scheduler.log"),
            &[
                "scheduler".into(),
                "--port".into(),
                port.to_string(),
                "--executor-timeout-seconds".into(),
                "6".into(),
            ],
        );
        let mut cluster = Self {
            scheduler,
            executors: Vec::new(),
            port,
        };
        // An executor that finds no scheduler listening gives up at once: start them only
        // once it listens (a loaded machine may take seconds to get there).
        wait_listening(port, &logs.join("scheduler.log"));
        for i in 0..executors {
            let work = dir.join(format!("work-{i}"));
            std::fs::create_dir_all(&work).unwrap();
            let child = spawn(
                dir,
                &logs.join(format!("executor-{i}.log")),
                &[
                    "executor".into(),
                    "--scheduler-port".into(),
                    port.to_string(),
                    "--port".into(),
                    free_port().to_string(),
                    "--grpc-port".into(),
                    free_port().to_string(),
                    "--slots".into(),
                    "2".into(),
                    "--heartbeat-seconds".into(),
                    "2".into(),
                    "--work-dir".into(),
                    work.display().to_string(),
                ],
            );
            cluster.executors.push(child);
        }
        // Executors ask for tasks: each has started polling, and a second is enough for
        // the scheduler to have heard from both.
        for i in 0..executors {
            wait_for(
                &logs.join(format!("executor-{i}.log")),
                "Starting poll work loop",
                1,
            );
        }
        std::thread::sleep(Duration::from_secs(2));
        cluster
    }

    fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.port)
    }
}

/// The empty `day(ts)` table `db.events` in the SQLite catalog in `dir`, and `rows` events
/// as 8 Parquet files under `dir/raw`.
async fn setup(dir: &Path, rows: usize) -> (Arc<SqlCatalog>, String, Vec<RecordBatch>) {
    let catalog = Arc::new(
        SqlCatalog::connect(SqlCatalogConfig::local(dir))
            .await
            .unwrap(),
    );
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, Default::default())
        .await
        .unwrap();
    let schema = events::iceberg_schema().unwrap();
    let mut creation = TableCreation::new("", schema.clone());
    creation.spec = events::day_spec(&schema).unwrap();
    catalog
        .create_table(&TableIdent::new(db, "events"), creation)
        .await
        .unwrap();
    let raw = dir.join("raw");
    std::fs::create_dir_all(&raw).unwrap();
    let batches = events::generate(rows).unwrap();
    let all = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let step = rows.div_ceil(FILES);
    for i in 0..FILES {
        let part = all.slice(i * step, step.min(rows - i * step));
        let file = std::fs::File::create(raw.join(format!("part-{i}.parquet"))).unwrap();
        let mut w = ArrowWriter::try_new(file, part.schema(), None).unwrap();
        w.write(&part).unwrap();
        w.close().unwrap();
    }
    (catalog, format!("{}/", raw.display()), batches)
}

fn ident() -> TableIdent {
    TableIdent::new(NamespaceIdent::parse("db").unwrap(), "events")
}

/// A client session on `cluster` with the catalog as `default` and `raw` registered.
async fn client(cluster: &Cluster, catalog: &Arc<SqlCatalog>, raw: &str) -> SessionContext {
    let registry =
        CatalogRegistry::new().with_catalog("default", catalog.clone() as Arc<dyn Catalog>);
    let config = iceberg_ballista::client_config().with_target_partitions(8);
    let ctx = iceberg_ballista::client(&cluster.url(), &registry, config)
        .await
        .unwrap();
    ctx.register_parquet("raw", raw, ParquetReadOptions::default())
        .await
        .unwrap();
    ctx
}

/// `(count(*), count(DISTINCT id), sum(id))` of the table, read here without Ballista.
async fn local_read(catalog: &Arc<SqlCatalog>) -> (i64, i64, i64) {
    let ctx = SessionContext::new();
    let provider = IcebergCatalogProvider::try_new(catalog.clone() as Arc<dyn Catalog>)
        .await
        .unwrap();
    ctx.register_catalog("local", Arc::new(provider));
    let batches = ctx
        .sql("SELECT count(*), count(DISTINCT id), sum(id) FROM local.db.events")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let at = |i: usize| {
        let column = batches[0].column(i);
        column.as_primitive::<Int64Type>().value(0)
    };
    (at(0), at(1), at(2))
}

fn input_ids(batches: &[RecordBatch]) -> i64 {
    batches
        .iter()
        .map(|b| {
            let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
            ids.values().iter().sum::<i64>()
        })
        .sum()
}

const PYICEBERG_READS: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("db.events")
rows = t.scan().to_arrow()
ids = rows.column("id").to_pylist()
print(json.dumps({"rows": rows.num_rows, "distinct": len(set(ids)), "ids": sum(ids),
                  "snapshots": len(t.snapshots())}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_on_two_executors_lands_one_snapshot_of_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 80_000;
    let (catalog, raw, batches) = setup(dir.path(), rows).await;
    let cluster = Cluster::start(dir.path(), 2);
    let ctx = client(&cluster, &catalog, &raw).await;

    let out = ctx
        .sql("INSERT INTO default.db.events SELECT * FROM raw")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let inserted = out[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::UInt64Type>();
    assert_eq!(inserted.value(0), rows as u64);

    let table = catalog.load_table(&ident()).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    let columns = iceberg_write::arrow_schema(table.metadata.current_schema().unwrap()).unwrap();
    let files = plan_files(
        &catalog.table_io(&table),
        "db.events",
        &table.metadata,
        &columns,
        &[],
    )
    .await
    .unwrap()
    .files;
    // Every file names the process that wrote it: both executors wrote, this one none.
    let writers: BTreeSet<u32> = files
        .iter()
        .map(|f| {
            let pid = f.file_path.rsplit("pid").next().unwrap();
            pid.trim_end_matches(".parquet").parse().unwrap()
        })
        .collect();
    let executors: BTreeSet<u32> = cluster.executors.iter().map(Child::id).collect();
    assert_eq!(writers, executors, "files: {files:#?}");
    // Hash-partitioned by day across the cluster: one file per day.
    assert_eq!(files.len(), 30);

    let expected = (rows as i64, rows as i64, input_ids(&batches));
    assert_eq!(local_read(&catalog).await, expected);
    // SELECT through the cluster too.
    let through = ctx
        .sql("SELECT count(*) FROM default.db.events WHERE id % 2 = 0")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let even = through[0].column(0).as_primitive::<Int64Type>().value(0);
    let expected_even = batches
        .iter()
        .map(|b| {
            let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
            ids.values().iter().filter(|v| *v % 2 == 0).count() as i64
        })
        .sum::<i64>();
    assert_eq!(even, expected_even);
    drop(cluster);

    let Some(python) = iceberg_testing::external::python(
        "an_insert_on_two_executors_lands_one_snapshot_of_every_row",
    ) else {
        return;
    };
    let theirs = iceberg_testing::external::run_json(
        &python,
        PYICEBERG_READS,
        &[&dir.path().display().to_string()],
    );
    assert_eq!(theirs["snapshots"], 1);
    assert_eq!(theirs["rows"], expected.0);
    assert_eq!(theirs["distinct"], expected.1);
    assert_eq!(theirs["ids"], expected.2);
}

/// Every data file under the table's folder.
fn data_files(dir: &Path) -> usize {
    iceberg_testing::files_under(&dir.join("db").join("events"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_killed_mid_insert_leaves_no_partial_snapshot() {
    let dir = tempfile::Builder::new()
        .disable_cleanup(true)
        .tempdir()
        .unwrap();
    let rows = 400_000;
    let (catalog, raw, batches) = setup(dir.path(), rows).await;
    let mut cluster = Cluster::start(dir.path(), 2);
    let ctx = client(&cluster, &catalog, &raw).await;

    let insert = tokio::spawn(async move {
        let df = ctx
            .sql("INSERT INTO default.db.events SELECT * FROM raw")
            .await?;
        df.collect().await
    });
    // Once the writers have begun (the first data file is on disk), one executor dies.
    let start = Instant::now();
    while data_files(dir.path()) == 0 && !insert.is_finished() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no writer started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let victim = cluster.executors[0].id();
    cluster.executors[0].kill().unwrap();
    cluster.executors[0].wait().unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(180), insert)
        .await
        .expect("the insert ends")
        .unwrap();

    let table = catalog.load_table(&ident()).await.unwrap();
    match outcome {
        // Ballista ran the dead executor's tasks again elsewhere: every row, once.
        Ok(_) => {
            assert_eq!(table.metadata.snapshots.len(), 1);
            let expected = (rows as i64, rows as i64, input_ids(&batches));
            assert_eq!(local_read(&catalog).await, expected);
        }
        // The query failed: no snapshot at all.
        Err(e) => {
            assert!(
                table.metadata.snapshots.is_empty(),
                "failed ({e}) yet committed"
            );
        }
    }
    eprintln!(
        "executor pid{victim} killed; the insert {}",
        if table.metadata.snapshots.is_empty() {
            "failed and committed nothing"
        } else {
            "was retried and landed every row once"
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_command_inserts_and_reads_without_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 20_000;
    let (catalog, raw, batches) = setup(dir.path(), rows).await;
    let config = SqlCatalogConfig::local(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_iceberg-ballista"))
        .args([
            "--catalog-uri",
            &config.uri,
            "--warehouse",
            &config.warehouse,
            "sql",
        ])
        .arg(format!(
            "CREATE EXTERNAL TABLE raw STORED AS PARQUET LOCATION '{raw}'"
        ))
        .arg("INSERT INTO default.db.events SELECT * FROM raw")
        .arg("SELECT count(*) AS evens FROM default.db.events WHERE id % 2 = 0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "iceberg-ballista sql failed: {stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let expected = (rows as i64, rows as i64, input_ids(&batches));
    assert_eq!(local_read(&catalog).await, expected);
    // The insert's row count, then the select's: printed as tables.
    assert!(stdout.contains(&format!("| {rows} ")), "{stdout}");
    assert!(stdout.contains("evens"), "{stdout}");
    assert!(stdout.contains(&format!("| {} ", rows / 2)), "{stdout}");
    let table = catalog.load_table(&ident()).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
}
