//! Drop, purge and create racing appends in other processes: the table always loads, every
//! file it reaches exists, an append that reported success is in the table it loaded (or that
//! table was dropped since), no append ever lands in a table created after the one it started
//! on, and a failed append left no row behind.
//!
//! The test binary re-runs itself as the appenders: `catalog_lifecycle_worker` does nothing
//! unless `ICEBERG_LIFECYCLE_WORKER` describes its job. Workers append until the parent has
//! made its last drop and create (it then writes a `stop` file), then make a few more appends,
//! which must land.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, SystemEnvironment, Table};
use iceberg_catalog::ObjectStoreCatalog;
use iceberg_io::FileIo;
use iceberg_spec::properties::{
    COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES,
};

use crate::catalog_common::{creation_with, spawn_workers, try_append_ids};
use crate::catalog_kills::{check_table, ident, open, snapshot_ids};

const WORKER_ENV: &str = "ICEBERG_LIFECYCLE_WORKER";
const WORKERS: usize = 3;
/// Drop-and-create cycles the parent makes while the workers append.
const CYCLES: usize = 4;
/// Appends each worker makes after the last create; all must land.
const FINAL_APPENDS: i64 = 3;
const ROWS_PER_APPEND: i64 = 2;

/// A worker's job: `kind|dir|endpoint|worker`.
#[derive(Debug, Clone)]
struct Job {
    /// `sqlite`, `object-store` (local folder) or `object-s3` (moto at `endpoint`).
    kind: String,
    /// The test's folder: the local warehouse, and the `stop` file in every case.
    dir: PathBuf,
    endpoint: String,
}

impl Job {
    fn warehouse(&self) -> String {
        if self.kind == "object-s3" {
            "s3://lifecycle/wh".into()
        } else {
            format!("file://{}", self.dir.display())
        }
    }

    async fn catalog(&self) -> Box<dyn Catalog> {
        let warehouse = self.warehouse();
        if self.kind == "object-s3" {
            let props = iceberg_testing::moto::s3_properties(&self.endpoint);
            let io = FileIo::from_location(&warehouse, &props).unwrap();
            Box::new(ObjectStoreCatalog::open(io, &warehouse).await.unwrap())
        } else {
            let io = FileIo::from_location(&warehouse, &HashMap::new()).unwrap();
            open(&self.kind, &self.dir, io, Arc::new(SystemEnvironment)).await
        }
    }

    fn stop_file(&self) -> PathBuf {
        self.dir.join("stop")
    }
}

/// One append as a worker reported it.
#[derive(Debug)]
struct Report {
    first: i64,
    /// Made after the last create: must land.
    last_round: bool,
    outcome: Reported,
}

#[derive(Debug)]
enum Reported {
    /// Landed as this snapshot, in the table of this UUID (`None`: its metadata file was
    /// already gone, dropped and purged, when the worker looked).
    Landed(i64, Option<String>),
    Unknown,
    Failed(String),
}

fn ids(first: i64) -> std::ops::Range<i64> {
    first..first + ROWS_PER_APPEND
}

#[tokio::test]
async fn catalog_lifecycle_worker() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let job = Job {
        kind: parts[0].into(),
        dir: parts[1].into(),
        endpoint: parts[2].into(),
    };
    let worker: i64 = parts[3].parse().unwrap();
    let catalog = job.catalog().await;
    let mut last_round_left = None;
    for i in 0.. {
        if last_round_left.is_none() && job.stop_file().exists() {
            last_round_left = Some(FINAL_APPENDS);
        }
        match &mut last_round_left {
            Some(0) => break,
            Some(left) => *left -= 1,
            None => {}
        }
        let first = (worker * 100_000 + i) * ROWS_PER_APPEND;
        let last_round = u8::from(last_round_left.is_some());
        match try_append_ids(catalog.as_ref(), &ident(), ids(first), &SystemEnvironment).await {
            Ok(done) => {
                let uuid = match Table::load(catalog.io(), &done.metadata_location).await {
                    Ok(table) => table
                        .metadata
                        .table_uuid
                        .map_or_else(|| "?".into(), |u| u.to_string()),
                    Err(_) => "?".into(),
                };
                println!("landed {first} {last_round} {} {uuid}", done.snapshot_id);
            }
            Err(e) if e.is_commit_state_unknown() => println!("unknown {first} {last_round}"),
            Err(e) => {
                println!(
                    "failed {first} {last_round} {}",
                    e.to_string().replace('\n', " ")
                );
                if e.is_not_found() {
                    // Between a drop and the next create: no need to spin.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }
}

fn parse_report(line: &str) -> Option<Report> {
    let mut words = line.splitn(5, ' ');
    let verb = words.next()?;
    let first = words.next()?.parse().ok()?;
    let last_round = words.next()? == "1";
    let outcome = match verb {
        "landed" => {
            let snapshot = words.next()?.parse().ok()?;
            let uuid = words.next()?;
            Reported::Landed(snapshot, (uuid != "?").then(|| uuid.to_string()))
        }
        "unknown" => Reported::Unknown,
        "failed" => Reported::Failed(line.to_string()),
        _ => return None,
    };
    Some(Report {
        first,
        last_round,
        outcome,
    })
}

/// Creates `db.t` with quick, patient commit retries; returns its UUID.
async fn create(catalog: &dyn Catalog) -> String {
    let creation = creation_with(&[
        (COMMIT_NUM_RETRIES, "50"),
        (COMMIT_MIN_RETRY_WAIT_MS, "5"),
        (COMMIT_MAX_RETRY_WAIT_MS, "100"),
    ]);
    // On the object-store catalog a writer may briefly re-create a version the drop just
    // deleted (it deletes it again on seeing its base gone): the table exists for that moment.
    let mut tries = 0;
    let table = loop {
        match catalog.create_table(&ident(), creation.clone()).await {
            Err(e) if e.is_already_exists() && tries < 50 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => break other.unwrap(),
        }
    };
    table.metadata.table_uuid.unwrap().to_string()
}

async fn race(job: Job) {
    let kind = job.kind.clone();
    let catalog = job.catalog().await;
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, BTreeMap::new())
        .await
        .unwrap();
    let mut created = vec![create(catalog.as_ref()).await];
    let children = spawn_workers(
        "catalog_lifecycle::catalog_lifecycle_worker",
        WORKER_ENV,
        WORKERS,
        |w| format!("{kind}|{}|{}|{w}", job.dir.display(), job.endpoint),
    );
    for cycle in 0..CYCLES {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let purge = cycle % 2 == 0;
        catalog
            .drop_table(&ident(), purge)
            .await
            .unwrap_or_else(|e| panic!("{kind}: drop (purge: {purge}) in cycle {cycle}: {e}"));
        tokio::time::sleep(Duration::from_millis(40)).await;
        created.push(create(catalog.as_ref()).await);
    }
    std::fs::write(job.stop_file(), b"").unwrap();
    let mut reports = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{kind}: worker failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        reports.extend(stdout.lines().filter_map(parse_report));
    }
    let fresh = job.catalog().await;
    let table = fresh.load_table(&ident()).await.unwrap();
    let final_uuid = table.metadata.table_uuid.unwrap().to_string();
    assert_eq!(
        Some(&final_uuid),
        created.last(),
        "{kind}: the last table created"
    );
    let held = check_table(&table, fresh.io()).await;
    let snapshots = snapshot_ids(&table);
    let (mut landed, mut landed_earlier, mut unknown, mut failed) = (0, 0, 0, 0);
    let mut may_hold = BTreeSet::new();
    for r in &reports {
        match &r.outcome {
            Reported::Landed(snapshot, uuid) => {
                landed += 1;
                may_hold.extend(ids(r.first));
                match uuid {
                    Some(uuid) if *uuid == final_uuid => {
                        assert!(
                            snapshots.contains(snapshot),
                            "{kind}: append {} landed in this table and is gone",
                            r.first
                        );
                        assert!(ids(r.first).all(|i| held.contains(&i)), "{kind}: {r:?}");
                    }
                    Some(uuid) => {
                        landed_earlier += 1;
                        assert!(created.contains(uuid), "{kind}: landed in an unknown table");
                        assert!(
                            !snapshots.contains(snapshot),
                            "{kind}: append {} of table {uuid} is in the table created after",
                            r.first
                        );
                    }
                    None => assert!(!snapshots.contains(snapshot), "{kind}: {r:?}"),
                }
            }
            Reported::Unknown => {
                unknown += 1;
                may_hold.extend(ids(r.first));
            }
            Reported::Failed(why) => {
                failed += 1;
                assert!(
                    !r.last_round,
                    "{kind}: an append after the last create failed: {why}"
                );
            }
        }
        if r.last_round {
            assert!(
                matches!(r.outcome, Reported::Landed(..)),
                "{kind}: an append after the last create must land: {r:?}"
            );
        }
    }
    // Why appends failed, by kind (a missing table, a replaced one, anything else in full).
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for r in &reports {
        if let Reported::Failed(why) = &r.outcome {
            let key = if why.contains("no such table") {
                "no such table"
            } else if why.contains("UUID") {
                "the table was replaced"
            } else {
                why.as_str()
            };
            *reasons.entry(key.to_string()).or_default() += 1;
        }
    }
    eprintln!("{kind}: failures: {reasons:?}");
    let stray: Vec<&i64> = held.iter().filter(|i| !may_hold.contains(i)).collect();
    assert!(
        stray.is_empty(),
        "{kind}: rows of failed appends in the table: {stray:?}"
    );
    let last_round = reports.iter().filter(|r| r.last_round).count();
    assert_eq!(last_round as i64, WORKERS as i64 * FINAL_APPENDS, "{kind}");
    eprintln!(
        "{kind}: {CYCLES} drop/create cycles against {WORKERS} appending processes: {} appends, \
         {landed} landed ({landed_earlier} in a table dropped since), {unknown} unknown, \
         {failed} failed",
        reports.len()
    );
}

fn local(kind: &str) -> (tempfile::TempDir, Job) {
    let dir = tempfile::tempdir().unwrap();
    let job = Job {
        kind: kind.into(),
        dir: dir.path().to_path_buf(),
        endpoint: String::new(),
    };
    (dir, job)
}

#[tokio::test]
async fn catalog_lifecycle_sqlite_drop_and_create_race_appends() {
    let (_dir, job) = local("sqlite");
    race(job).await;
}

#[tokio::test]
async fn catalog_lifecycle_object_store_drop_and_create_race_appends() {
    let (_dir, job) = local("object-store");
    race(job).await;
}

#[tokio::test]
async fn catalog_lifecycle_object_store_s3_drop_and_create_race_appends() {
    let Some(moto) = iceberg_testing::moto::MotoServer::start() else {
        return;
    };
    moto.create_bucket("lifecycle");
    let (_dir, mut job) = local("object-s3");
    job.endpoint = moto.endpoint.clone();
    race(job).await;
}
