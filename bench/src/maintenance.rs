//! The maintenance benchmark of issue 20, on local disk through `InMemoryCatalog`: a streaming
//! table of `appends` fast appends of `rows_per_append` events (one small file each), then
//! `compact`, `rewrite-manifests` and `expire`. It reports data files, manifests and the
//! `metadata.json` size before and after, the latency of an append (write and commit) on the
//! new table, after the appends and after maintenance, and compaction's throughput against
//! writing the same rows fresh.

use std::collections::HashMap;
use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use iceberg_append::{
    Catalog, ExpireSnapshots, InMemoryCatalog, RewriteDataFiles, RewriteManifests,
    SystemEnvironment, TableCreation, TableHandle, TableIdent, read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_io::object_store::memory::InMemory;
use iceberg_io::testing::FaultInjectingStore;

use crate::measure::{median, mib, ms};
use iceberg_testing::events as data;

type BoxError = Box<dyn Error + Send + Sync>;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct MaintenanceArgs {
    pub(crate) work_dir: PathBuf,
    pub(crate) appends: usize,
    pub(crate) rows_per_append: usize,
    /// Run on an in-memory store that delays every request by this much during the
    /// maintenance steps and the fresh write (the appends and append probes run without it):
    /// an object store's latency, which local disk does not show.
    pub(crate) latency: Option<Duration>,
}

/// Appends timed at each point (the median is reported).
const SAMPLES: usize = 9;

/// Files, manifests and metadata size of the table now.
struct Shape {
    data_files: usize,
    manifests: usize,
    snapshots: usize,
    metadata_bytes: u64,
}

async fn shape(handle: &TableHandle) -> Result<Shape, BoxError> {
    let meta = handle.metadata();
    let head = meta.current_snapshot().ok_or("no snapshot")?;
    let manifests = read_manifest_list(handle.io(), head.manifest_list.as_deref()).await?;
    let data_files = head
        .summary
        .as_ref()
        .and_then(|s| s.get_i64("total-data-files"))
        .unwrap_or(0);
    let location = handle
        .table()
        .metadata_location
        .clone()
        .ok_or("no metadata file")?;
    Ok(Shape {
        data_files: usize::try_from(data_files).unwrap_or(0),
        manifests: manifests.len(),
        snapshots: meta.snapshots.len(),
        metadata_bytes: handle.io().len(&location).await?,
    })
}

/// The median time of `SAMPLES` appends of `batch`, the handle refreshed after each.
async fn append_latency(
    handle: &mut TableHandle,
    batch: &RecordBatch,
) -> Result<Duration, BoxError> {
    let mut times = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t = Instant::now();
        handle
            .new_transaction()
            .write(std::slice::from_ref(batch))
            .await?
            .commit()
            .await?;
        times.push(t.elapsed());
        handle.refresh().await?;
    }
    median(&times).ok_or_else(|| "no sample".into())
}

/// Runs the benchmark and prints its table.
pub(crate) async fn run(args: &MaintenanceArgs) -> Result<(), BoxError> {
    let dir = args.work_dir.join("maintenance");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    // With a latency: an in-memory store behind the fault-injecting wrapper, whose latency
    // is switched on for the maintenance steps only.
    let (location, io, slow) = match args.latency {
        None => {
            let location = format!("file://{}", dir.display());
            let io = FileIo::from_location(&location, &HashMap::new())?;
            (location, io, None)
        }
        Some(_) => {
            let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
            let io = FileIo::with_store("memory://bench", Arc::new(store.clone()));
            ("memory://bench/stream".to_string(), io, Some(store))
        }
    };
    let catalog: Arc<dyn Catalog> = Arc::new(InMemoryCatalog::new(
        io.clone(),
        Arc::new(SystemEnvironment),
    ));
    let ident = TableIdent::parse("bench.stream").ok_or("bad table name")?;
    let mut creation = TableCreation::new(location.clone(), data::iceberg_schema()?);
    // Streaming writers append fast: one manifest per commit, nothing merged.
    creation
        .properties
        .insert("commit.manifest-merge.enabled".into(), "false".into());
    catalog.create_table(&ident, creation).await?;
    let mut handle =
        TableHandle::load(catalog.clone(), ident.clone(), Arc::new(SystemEnvironment)).await?;
    let total = args.appends * args.rows_per_append;
    let all = data::generate(total)?;
    let mut chunks: Vec<RecordBatch> = Vec::with_capacity(args.appends);
    for batch in &all {
        let mut start = 0;
        while start < batch.num_rows() {
            let n = args.rows_per_append.min(batch.num_rows() - start);
            chunks.push(batch.slice(start, n));
            start += n;
        }
    }
    let probe = chunks[0].clone();
    let first = append_latency(&mut handle, &probe).await?;
    let t = Instant::now();
    for (i, chunk) in chunks.iter().enumerate() {
        handle.append(std::slice::from_ref(chunk)).await?;
        handle.refresh().await?;
        if (i + 1) % 500 == 0 {
            eprintln!("  {} appends, {:.1} s", i + 1, t.elapsed().as_secs_f64());
        }
    }
    let appended = t.elapsed();
    let after_appends = append_latency(&mut handle, &probe).await?;
    let before = shape(&handle).await?;

    if let (Some(store), Some(latency)) = (&slow, args.latency) {
        store.set_latency(latency);
    }
    let t = Instant::now();
    let compacted = RewriteDataFiles::new()
        .commit(catalog.as_ref(), &ident, &SystemEnvironment, |_, _, _| {})
        .await?;
    let compact_time = t.elapsed();
    let t = Instant::now();
    let rewritten = RewriteManifests::new()
        .commit(catalog.as_ref(), &ident, &SystemEnvironment)
        .await?;
    let rewrite_time = t.elapsed();
    let t = Instant::now();
    let expired = ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(catalog.as_ref(), &ident, &SystemEnvironment)
        .await?;
    let expire_time = t.elapsed();
    if let Some(store) = &slow {
        store.clear_faults();
    }
    handle.refresh().await?;
    let after = shape(&handle).await?;
    let after_maintenance = append_latency(&mut handle, &probe).await?;

    // The same rows written fresh, in one go, for the throughput comparison.
    let fresh_dir = args.work_dir.join("maintenance-fresh");
    let _ = std::fs::remove_dir_all(&fresh_dir);
    std::fs::create_dir_all(&fresh_dir)?;
    let (fresh_location, fresh_io) = match args.latency {
        None => {
            let location = format!("file://{}", fresh_dir.display());
            let io = FileIo::from_location(&location, &HashMap::new())?;
            (location, io)
        }
        Some(latency) => {
            let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
            store.set_latency(latency);
            let io = FileIo::with_store("memory://fresh", Arc::new(store));
            ("memory://fresh/t".to_string(), io)
        }
    };
    let meta = handle.metadata();
    let t = Instant::now();
    let fresh = iceberg_write::write_data_files(
        &fresh_io,
        &fresh_location,
        &all,
        meta.current_schema()?,
        meta.default_spec()?,
        None,
        &iceberg_write::WriteOptions::from_table_properties(&meta.properties)?,
    )
    .await?;
    let fresh_time = t.elapsed();

    if let Some(latency) = args.latency {
        println!(
            "Store: in memory, every request of the maintenance steps and the fresh write \
             delayed by {} ms.\n",
            latency.as_millis()
        );
    }
    println!(
        "{} fast appends of {} rows ({:.1} s, {:.1} ms each on average), then compact, \
         rewrite-manifests and expire:\n",
        args.appends,
        args.rows_per_append,
        appended.as_secs_f64(),
        ms(appended) / args.appends as f64
    );
    println!("| | data files | manifests | snapshots | metadata.json (MiB) |");
    println!("|---|---|---|---|---|");
    for (name, s) in [
        ("after the appends", &before),
        ("after maintenance", &after),
    ] {
        println!(
            "| {name} | {} | {} | {} | {:.2} |",
            s.data_files,
            s.manifests,
            s.snapshots,
            mib(s.metadata_bytes)
        );
    }
    println!("\n| append (write + commit), median of {SAMPLES} | ms | / first |");
    println!("|---|---|---|");
    for (name, d) in [
        ("on the new table", first),
        ("after the appends", after_appends),
        ("after maintenance", after_maintenance),
    ] {
        println!("| {name} | {:.1} | {:.2}x |", ms(d), ms(d) / ms(first));
    }
    let rows_per_s = |rows: u64, d: Duration| rows as f64 / d.as_secs_f64();
    println!("\n| step | s | what |");
    println!("|---|---|---|");
    println!(
        "| compact | {:.2} | {} files -> {}, {} rows, {:.2} M rows/s |",
        compact_time.as_secs_f64(),
        compacted.files_rewritten,
        compacted.files_written,
        compacted.rows,
        rows_per_s(compacted.rows, compact_time) / 1e6
    );
    println!(
        "| the same rows written fresh | {:.2} | {} file(s), {:.2} M rows/s (compaction at {:.2}x) |",
        fresh_time.as_secs_f64(),
        fresh.len(),
        rows_per_s(total as u64, fresh_time) / 1e6,
        rows_per_s(compacted.rows, compact_time) / rows_per_s(total as u64, fresh_time)
    );
    println!(
        "| rewrite-manifests | {:.2} | {} manifests -> {} |",
        rewrite_time.as_secs_f64(),
        rewritten.manifests_replaced,
        rewritten.manifests_created
    );
    println!(
        "| expire | {:.2} | {} snapshots, {} files deleted |",
        expire_time.as_secs_f64(),
        expired.expired_snapshots.len(),
        expired.files.paths.len()
    );
    std::fs::remove_dir_all(&dir)?;
    std::fs::remove_dir_all(&fresh_dir)?;
    Ok(())
}
