//! Table maintenance racing appends in other processes: four processes append while this one
//! compacts, rewrites the manifests and expires everything but the head, in turn, again and
//! again. The table always loads; every file any kept snapshot reaches exists; every append
//! that reported success has its rows in the table and no failed one does; every maintenance
//! run lands, or fails with a typed error.
//!
//! The test binary re-runs itself as the appenders (`maintenance_race_worker` does nothing
//! unless `ICEBERG_MAINTENANCE_WORKER` describes its job), each making a fixed number of
//! appends; the parent expires until they are all done.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    Catalog, ExpireSnapshots, RewriteDataFiles, RewriteManifests, SystemEnvironment,
    read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::properties::{
    COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES,
};

use crate::catalog_common::{creation_with, spawn_workers, try_append_ids};
use crate::catalog_kills::{check_table, ident, open};

const WORKER_ENV: &str = "ICEBERG_MAINTENANCE_WORKER";
const WORKERS: usize = 4;
/// Appends each worker makes.
const APPENDS: i64 = 30;
const ROWS_PER_APPEND: i64 = 2;

fn ids(first: i64) -> std::ops::Range<i64> {
    first..first + ROWS_PER_APPEND
}

/// The catalog of `kind` (`sqlite`, `object-store`) over `dir`.
async fn open_catalog(kind: &str, dir: &std::path::Path) -> Box<dyn Catalog> {
    let io = FileIo::from_location(&format!("file://{}", dir.display()), &HashMap::new()).unwrap();
    open(kind, dir, io, Arc::new(SystemEnvironment)).await
}

#[tokio::test]
async fn maintenance_race_worker() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (kind, dir, worker) = (
        parts[0],
        PathBuf::from(parts[1]),
        parts[2].parse::<i64>().unwrap(),
    );
    let catalog = open_catalog(kind, &dir).await;
    for i in 0..APPENDS {
        let first = (worker * 100_000 + i) * ROWS_PER_APPEND;
        match try_append_ids(catalog.as_ref(), &ident(), ids(first), &SystemEnvironment).await {
            Ok(_) => println!("landed {first}"),
            Err(e) if e.is_commit_state_unknown() => println!("unknown {first}"),
            Err(e) => println!("failed {first} {}", e.to_string().replace('\n', " ")),
        }
        // Room for the expiries between the appends, which would otherwise win every race.
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
}

/// Every manifest list and manifest of every snapshot of the table exists.
async fn check_every_snapshot(catalog: &dyn Catalog, kind: &str) {
    let table = catalog.load_table(&ident()).await.unwrap();
    let io = catalog.table_io(&table);
    for s in &table.metadata.snapshots {
        let list = s.manifest_list.as_deref();
        let manifests = read_manifest_list(&io, list)
            .await
            .unwrap_or_else(|e| panic!("{kind}: snapshot {}'s list: {e}", s.snapshot_id));
        for m in manifests {
            let bytes = io.read(&m.manifest_path).await.unwrap_or_else(|e| {
                panic!("{kind}: manifest of kept snapshot {}: {e}", s.snapshot_id)
            });
            for e in decode_manifest(&m.manifest_path, &bytes).unwrap().entries {
                if e.status != iceberg_spec::ManifestStatus::Deleted {
                    assert!(
                        io.exists(&e.data_file.file_path).await.unwrap(),
                        "{kind}: a data file of kept snapshot {} is gone",
                        s.snapshot_id
                    );
                }
            }
        }
    }
}

async fn race(kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(kind, dir.path()).await;
    catalog
        .create_namespace(&NamespaceIdent::parse("db").unwrap(), BTreeMap::new())
        .await
        .unwrap();
    let creation = creation_with(&[
        (COMMIT_NUM_RETRIES, "100"),
        (COMMIT_MIN_RETRY_WAIT_MS, "5"),
        (COMMIT_MAX_RETRY_WAIT_MS, "100"),
    ]);
    catalog.create_table(&ident(), creation).await.unwrap();
    let children = spawn_workers(
        "maintenance_race::maintenance_race_worker",
        WORKER_ENV,
        WORKERS,
        |w| format!("{kind}|{}|{w}", dir.path().display()),
    );
    let (mut expired, mut expiries, mut expiry_errors) = (0, 0, BTreeMap::<String, usize>::new());
    let (mut compacted, mut rewritten) = (0, 0);
    let mut children = children;
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        expiries += 1;
        // In turn: compact, rewrite the manifests, expire everything but the head.
        let outcome = match expiries % 3 {
            0 => RewriteDataFiles::new()
                .commit(catalog.as_ref(), &ident(), &SystemEnvironment, |_, _, _| {})
                .await
                .map(|r| compacted += r.files_rewritten),
            1 => RewriteManifests::new()
                .commit(catalog.as_ref(), &ident(), &SystemEnvironment)
                .await
                .map(|r| rewritten += r.manifests_replaced),
            _ => ExpireSnapshots::new()
                .older_than_ms(i64::MAX)
                .commit(catalog.as_ref(), &ident(), &SystemEnvironment)
                .await
                .map(|report| {
                    assert!(
                        report.cleanup_error.is_none(),
                        "{kind}: {:?}",
                        report.cleanup_error
                    );
                    expired += report.expired_snapshots.len();
                }),
        };
        if let Err(e) = outcome {
            assert!(
                matches!(
                    e,
                    iceberg_append::Error::UpdateRetriesExhausted { .. }
                        | iceberg_append::Error::RetriesExhausted { .. }
                        | iceberg_append::Error::CommitStateUnknown { .. }
                ),
                "{kind}: a maintenance run failed untyped: {e}"
            );
            *expiry_errors.entry(format!("{e:.40}")).or_default() += 1;
        }
        let now = catalog.load_table(&ident()).await.unwrap();
        if now.metadata.current_snapshot().is_some() {
            check_table(&now, catalog.io()).await;
        }
    }
    // Once more after the appends, so that each kind of run had something to do.
    compacted += RewriteDataFiles::new()
        .commit(catalog.as_ref(), &ident(), &SystemEnvironment, |_, _, _| {})
        .await
        .unwrap()
        .files_rewritten;
    expired += ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(catalog.as_ref(), &ident(), &SystemEnvironment)
        .await
        .unwrap()
        .expired_snapshots
        .len();
    let (mut landed, mut may_hold, mut failed) = (BTreeSet::new(), BTreeSet::new(), 0);
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{kind}: worker failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in stdout.lines() {
            // The harness prints `test <name> ... ` before the test's first line.
            let line = line.rsplit(" ... ").next().unwrap_or(line);
            let mut words = line.split(' ');
            let (Some(verb), Some(first)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(first) = first.parse::<i64>() else {
                continue;
            };
            match verb {
                "landed" => {
                    landed.extend(ids(first));
                    may_hold.extend(ids(first));
                }
                "unknown" => may_hold.extend(ids(first)),
                "failed" => failed += 1,
                _ => {}
            }
        }
    }
    let fresh = open_catalog(kind, dir.path()).await;
    let table = fresh.load_table(&ident()).await.unwrap();
    let held = check_table(&table, fresh.io()).await;
    check_every_snapshot(fresh.as_ref(), kind).await;
    let lost: Vec<&i64> = landed.difference(&held).collect();
    assert!(
        lost.is_empty(),
        "{kind}: rows of landed appends lost: {lost:?}"
    );
    let stray: Vec<&i64> = held.difference(&may_hold).collect();
    assert!(
        stray.is_empty(),
        "{kind}: rows of failed appends: {stray:?}"
    );
    assert!(expired > 0, "{kind}: no expiry expired anything");
    assert!(
        compacted > 0,
        "{kind}: no compaction compacted anything ({expiries} runs, errors {expiry_errors:?})"
    );
    eprintln!(
        "{kind}: {expiries} maintenance runs against {WORKERS} appending processes: {} appends \
         landed, {failed} failed, {expired} snapshots expired, {compacted} files compacted, \
         {rewritten} manifests rewritten, errors {expiry_errors:?}",
        landed.len() as i64 / ROWS_PER_APPEND
    );
}

#[tokio::test]
async fn maintenance_race_sqlite_expiry_races_appends() {
    race("sqlite").await;
}

#[tokio::test]
async fn maintenance_race_object_store_expiry_races_appends() {
    race("object-store").await;
}
