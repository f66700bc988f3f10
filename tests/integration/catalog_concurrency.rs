//! Many processes append to one table through each catalog: all appends land, in one chain,
//! and PyIceberg scans every row of the result.
//!
//! The test binary re-runs itself as the workers: `catalog_concurrency_worker` does nothing
//! unless `ICEBERG_CATALOG_WORKER` describes its job.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, SystemEnvironment, TableIdent};
use iceberg_catalog::{
    ObjectStoreCatalog, RestCatalog, RestCatalogConfig, SqlCatalog, SqlCatalogConfig,
};
use iceberg_io::FileIo;
use iceberg_spec::FormatVersion;
use iceberg_spec::properties::{
    COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES,
    COMMIT_TOTAL_RETRY_TIME_MS, MANIFEST_MERGE_ENABLED,
};

use crate::catalog_common::{append_ids, creation_with, spawn_workers};
use crate::external;
use iceberg_catalog::testing::RestServer;

const WORKER_ENV: &str = "ICEBERG_CATALOG_WORKER";
const WORKERS: usize = 8;
const APPENDS_PER_WORKER: usize = 25;
const ROWS_PER_APPEND: i64 = 3;

/// What a worker is told: `kind|name|uri|warehouse|worker|appends`.
#[derive(Debug, Clone)]
struct Job {
    kind: String,
    name: String,
    uri: String,
    warehouse: String,
}

impl Job {
    fn encode(&self, worker: usize) -> String {
        format!(
            "{}|{}|{}|{}|{worker}|{APPENDS_PER_WORKER}",
            self.kind, self.name, self.uri, self.warehouse
        )
    }

    async fn catalog(&self) -> Arc<dyn Catalog> {
        if self.kind == "rest" {
            let config = RestCatalogConfig::new(&self.uri);
            return Arc::new(RestCatalog::connect(config).await.unwrap());
        }
        if self.kind.starts_with("object") {
            // `object-s3`: the S3 endpoint (moto) travels in `uri`.
            let props = if self.kind == "object-s3" {
                iceberg_testing::moto::s3_properties(&self.uri)
            } else {
                HashMap::new()
            };
            let io = FileIo::from_location(&self.warehouse, &props).unwrap();
            Arc::new(ObjectStoreCatalog::open(io, &self.warehouse).await.unwrap())
        } else {
            let config = SqlCatalogConfig::new(&self.name, &self.uri, &self.warehouse);
            Arc::new(SqlCatalog::connect(config).await.unwrap())
        }
    }
}

fn ident() -> TableIdent {
    TableIdent::parse("db.hot").unwrap()
}

#[tokio::test]
async fn catalog_concurrency_worker() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let job = Job {
        kind: parts[0].into(),
        name: parts[1].into(),
        uri: parts[2].into(),
        warehouse: parts[3].into(),
    };
    let worker: i64 = parts[4].parse().unwrap();
    let appends: i64 = parts[5].parse().unwrap();
    let catalog = job.catalog().await;
    for i in 0..appends {
        let first = (worker * 1_000 + i) * ROWS_PER_APPEND;
        let done = append_ids(
            catalog.as_ref(),
            &ident(),
            first..first + ROWS_PER_APPEND,
            &SystemEnvironment,
        )
        .await;
        println!(
            "landed {} after {} attempt(s)",
            done.snapshot_id, done.attempts
        );
    }
}

async fn hammer(job: Job) {
    let started = Instant::now();
    let catalog = job.catalog().await;
    let db = NamespaceIdent::parse("db").unwrap();
    if !job.kind.starts_with("object") {
        catalog
            .create_namespace(&db, BTreeMap::new())
            .await
            .unwrap();
    }
    let location = format!("{}/db/hot", job.warehouse);
    let mut creation = creation_with(&[
        (COMMIT_NUM_RETRIES, "1000"),
        (COMMIT_MIN_RETRY_WAIT_MS, "5"),
        (COMMIT_MAX_RETRY_WAIT_MS, "200"),
        (COMMIT_TOTAL_RETRY_TIME_MS, "600000"),
        // Java's default append: manifests merge once there are 100 (from append ~100 on).
        (MANIFEST_MERGE_ENABLED, "true"),
    ]);
    creation.location = location;
    creation.format_version = FormatVersion::V3;
    catalog.create_table(&ident(), creation).await.unwrap();

    let children = spawn_workers(
        "catalog_concurrency::catalog_concurrency_worker",
        WORKER_ENV,
        WORKERS,
        |w| job.encode(w),
    );
    let mut attempts = 0usize;
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "worker failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        attempts += stdout
            .lines()
            .filter_map(|l| {
                l.split(" after ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .sum::<usize>();
    }
    check_chain(catalog.as_ref()).await;
    pyiceberg_scans_every_row(&job, catalog.as_ref()).await;
    eprintln!(
        "{}: {WORKERS} processes x {APPENDS_PER_WORKER} appends in {:.1?}, {attempts} attempts",
        job.kind,
        started.elapsed()
    );
}

/// PyIceberg, given the current metadata file (and moto's S3 properties), scans exactly the
/// ids the workers wrote.
const SCAN_IDS: &str = r#"
import json, sys
from pyiceberg.table import StaticTable
table = StaticTable.from_metadata(sys.argv[1], properties=json.loads(sys.argv[2]))
ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
print(json.dumps({"ids": sorted(ids)}))
"#;

async fn pyiceberg_scans_every_row(job: &Job, catalog: &dyn Catalog) {
    let Some(python) = external::python(&format!(
        "catalog_concurrency ({}): PyIceberg scan",
        job.kind
    )) else {
        return;
    };
    let location = catalog
        .load_table(&ident())
        .await
        .unwrap()
        .metadata_location
        .unwrap();
    let props: BTreeMap<String, String> = if job.kind == "object-s3" {
        iceberg_testing::moto::s3_properties(&job.uri)
            .into_iter()
            .collect()
    } else {
        BTreeMap::new()
    };
    let props = serde_json::to_string(&props).unwrap();
    let out = external::run_json(&python, SCAN_IDS, &[&location, &props]);
    let mut expected: Vec<i64> = (0..WORKERS as i64)
        .flat_map(|w| {
            (0..APPENDS_PER_WORKER as i64).flat_map(move |i| {
                let first = (w * 1_000 + i) * ROWS_PER_APPEND;
                first..first + ROWS_PER_APPEND
            })
        })
        .collect();
    expected.sort_unstable();
    let scanned: Vec<i64> = out["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(scanned, expected, "{}: PyIceberg's scan", job.kind);
}

/// All appends in one parent chain, sequence numbers increasing, totals and row ids right.
async fn check_chain(catalog: &dyn Catalog) {
    let total = WORKERS * APPENDS_PER_WORKER;
    let meta = catalog.load_table(&ident()).await.unwrap().metadata;
    assert_eq!(meta.snapshots.len(), total);
    let mut chain = Vec::new();
    let mut at = meta.current_snapshot_id;
    while let Some(id) = at {
        let s = meta.snapshot_by_id(id).unwrap();
        chain.push(s);
        at = s.parent_snapshot_id;
    }
    assert_eq!(chain.len(), total, "every snapshot is on the current chain");
    chain.reverse();
    for (i, s) in chain.iter().enumerate() {
        assert_eq!(
            s.sequence_number,
            i as i64 + 1,
            "sequence numbers increase by one"
        );
    }
    let head = chain.last().unwrap();
    let summary = head.summary.as_ref().unwrap();
    let rows = (total as i64 * ROWS_PER_APPEND).to_string();
    assert_eq!(summary.properties.get("total-records"), Some(&rows));
    let mut ranges: Vec<(i64, i64)> = chain
        .iter()
        .map(|s| {
            let first = s.first_row_id.unwrap();
            (first, first + s.added_rows.unwrap())
        })
        .collect();
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "row-id ranges overlap: {pair:?}");
    }
    // Merged manifests take fresh row-id ranges too (as in Java), so ids may outrun rows;
    // every id handed out is accounted to one snapshot.
    let handed_out: i64 = chain.iter().map(|s| s.added_rows.unwrap()).sum();
    assert_eq!(meta.next_row_id, Some(handed_out));
    assert!(handed_out >= total as i64 * ROWS_PER_APPEND);
}

#[tokio::test]
async fn catalog_concurrency_sqlite_processes() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().display().to_string();
    hammer(Job {
        kind: "sqlite".into(),
        name: "default".into(),
        uri: format!("sqlite:///{wh}/catalog.db"),
        warehouse: format!("file://{wh}"),
    })
    .await;
}

#[tokio::test]
async fn catalog_concurrency_postgres_processes() {
    let Ok(url) = std::env::var("ICEBERG_TEST_POSTGRES_URL") else {
        if std::env::var_os("ICEBERG_TEST_REQUIRE_POSTGRES").is_some_and(|v| v == "1") {
            panic!("ICEBERG_TEST_POSTGRES_URL is not set but PostgreSQL is required");
        }
        eprintln!(
            "\n*** SKIPPED catalog_concurrency_postgres_processes: ICEBERG_TEST_POSTGRES_URL is \
             not set. Run .ci/run (or .ci/postgres.sh) to start a server. ***\n"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().display().to_string();
    // A catalog name of its own, so runs sharing one database do not meet.
    let name = format!("concurrency-{}", uuid_like(&wh));
    hammer(Job {
        kind: "postgres".into(),
        name,
        uri: url,
        warehouse: format!("file://{wh}"),
    })
    .await;
}

#[tokio::test]
async fn catalog_concurrency_object_store_processes() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().display().to_string();
    hammer(Job {
        kind: "object".into(),
        name: String::new(),
        uri: String::new(),
        warehouse: format!("file://{wh}"),
    })
    .await;
}

/// The object-store catalog on S3 (moto, which honours `If-None-Match`): the conditional
/// create of `v<N>.metadata.json` is the only arbiter between eight processes.
#[tokio::test]
async fn catalog_concurrency_object_store_s3_processes() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("concurrency");
    hammer(Job {
        kind: "object-s3".into(),
        name: String::new(),
        uri: moto.endpoint.clone(),
        warehouse: "s3://concurrency/wh".into(),
    })
    .await;
}

/// Through a REST server (rustberg), whose commits are the only arbiter: the requirements
/// (`assert-ref-snapshot-id` on main) it checks under its own lock.
#[tokio::test]
async fn catalog_concurrency_rest_processes() {
    let dir = tempfile::tempdir().unwrap();
    let wh = format!("file://{}", dir.path().display());
    let Some(server) = RestServer::start("catalog_concurrency_rest_processes", &wh, None) else {
        return;
    };
    hammer(Job {
        kind: "rest".into(),
        name: String::new(),
        uri: server.uri.clone(),
        warehouse: wh,
    })
    .await;
}

/// The temp dir's last component: unique per run.
fn uuid_like(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).replace('.', "")
}
