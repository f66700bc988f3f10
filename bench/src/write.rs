//! The end-to-end write benchmark of issue 4: the same events, on local disk, written by
//! (a) plain parquet `ArrowWriter`, already split by day, one file per day (the floor), and
//! (b) `write_data_files` + `commit_fast_append` into a table partitioned by `day(ts)`,
//! interleaved, each repeated; optionally (c) PyIceberg and pyarrow on the same data.

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{RecordBatch, UInt32Array};
use arrow_select::take::take_record_batch;
use iceberg_append::{
    Catalog, InMemoryCatalog, SystemEnvironment, TableCreation, TableIdent, commit_fast_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{PartitionSpec, Transform};
use iceberg_write::WriteOptions;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::data::{self, day_of};
use crate::measure::{self, Sample, median, mib, ms};
use crate::python;

type BoxError = Box<dyn Error + Send + Sync>;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct WriteArgs {
    pub(crate) rows: usize,
    pub(crate) repeats: usize,
    pub(crate) work_dir: PathBuf,
    pub(crate) python: Option<PathBuf>,
    pub(crate) two_writers: bool,
}

/// One run's result.
#[derive(Debug, Clone, Copy)]
struct RunResult {
    sample: Sample,
    bytes: u64,
    data_files: usize,
    /// Time spent committing (ours only).
    commit: Option<Duration>,
}

/// The floor's Parquet settings: our `WriteOptions` defaults for codec, row groups, pages
/// and dictionary, and otherwise parquet's own defaults (page statistics, truncated).
fn floor_properties(options: &WriteOptions) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(options.compression)
        .set_max_row_group_row_count(Some(options.row_group_size_rows))
        .set_max_row_group_bytes(Some(
            usize::try_from(options.row_group_size_bytes).unwrap_or(usize::MAX),
        ))
        .set_data_page_size_limit(options.page_size_bytes)
        .set_data_page_row_count_limit(options.page_row_limit)
        .set_dictionary_page_size_limit(options.dict_size_bytes)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build()
}

/// The batches split by day, in day order (done before timing).
fn split_by_day(batches: &[RecordBatch]) -> Result<Vec<(i64, Vec<RecordBatch>)>, BoxError> {
    let mut days: BTreeMap<i64, Vec<RecordBatch>> = BTreeMap::new();
    for batch in batches {
        let ts = batch
            .column(1)
            .as_primitive_opt::<TimestampMicrosecondType>()
            .ok_or("ts is not a microsecond timestamp")?;
        let mut rows: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
        for (i, v) in ts.values().iter().enumerate() {
            rows.entry(day_of(*v)).or_default().push(i as u32);
        }
        for (day, idx) in rows {
            let part = take_record_batch(batch, &UInt32Array::from(idx))?;
            days.entry(day).or_default().push(part);
        }
    }
    Ok(days.into_iter().collect())
}

/// The floor: one `ArrowWriter` per day writing its batches to a local file.
fn write_floor(
    days: &[(i64, Vec<RecordBatch>)],
    dir: &Path,
    props: &WriterProperties,
) -> Result<usize, BoxError> {
    let schema = data::arrow_schema();
    for (day, batches) in days {
        let sub = dir.join(format!("day={day}"));
        std::fs::create_dir_all(&sub)?;
        let file = File::create(sub.join("part-00000.parquet"))?;
        let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props.clone()))?;
        for b in batches {
            w.write(b)?;
        }
        w.close()?;
    }
    Ok(days.len())
}

/// A fresh `day(ts)`-partitioned table at `dir` (setup, not timed).
async fn create_table(
    dir: &Path,
) -> Result<(FileIo, InMemoryCatalog, TableIdent, Arc<SystemEnvironment>), BoxError> {
    let location = format!("file://{}", dir.display());
    let io = FileIo::from_location(&location, &HashMap::new())?;
    let env = Arc::new(SystemEnvironment);
    let catalog = InMemoryCatalog::new(io.clone(), env.clone());
    let ident = TableIdent::parse("bench.events").ok_or("bad table name")?;
    let schema = data::iceberg_schema()?;
    let mut creation = TableCreation::new(location, schema.clone());
    creation.spec = PartitionSpec::builder(&schema)
        .add("ts", Transform::Day)?
        .build()?;
    catalog.create_table(&ident, creation).await?;
    Ok((io, catalog, ident, env))
}

/// Ours: write the batches with `writers` concurrent `write_data_files` tasks (each with its
/// own task id, the batches dealt out in contiguous halves), then one fast-append commit.
async fn write_ours(
    batches: &[RecordBatch],
    dir: &Path,
    writers: usize,
) -> Result<RunResult, BoxError> {
    let (io, catalog, ident, env) = create_table(dir).await?;
    // Boxed: the writer's future is large (clippy::large_futures).
    let (result, sample) = measure::measure(Box::pin(async {
        let table = catalog.load_table(&ident).await?;
        let meta = &table.metadata;
        let options = WriteOptions::from_table_properties(&meta.properties)?;
        let schema = meta.current_schema()?.clone();
        let spec = meta.default_spec()?.clone();
        let files = if writers <= 1 {
            iceberg_write::write_data_files(
                &io,
                &meta.location,
                batches,
                &schema,
                &spec,
                None,
                &options,
            )
            .await?
        } else {
            let per = batches.len().div_ceil(writers);
            let mut tasks = Vec::new();
            for (task, chunk) in batches.chunks(per.max(1)).enumerate() {
                let (io, location, schema, spec) = (
                    io.clone(),
                    meta.location.clone(),
                    schema.clone(),
                    spec.clone(),
                );
                let options = options.clone().with_task_id(task as u64);
                let chunk = chunk.to_vec();
                tasks.push(tokio::spawn(async move {
                    iceberg_write::write_data_files(
                        &io, &location, &chunk, &schema, &spec, None, &options,
                    )
                    .await
                }));
            }
            let mut files = Vec::new();
            for t in tasks {
                files.extend(t.await??);
            }
            files
        };
        let n = files.len();
        let t0 = Instant::now();
        commit_fast_append(&catalog, &ident, files, Default::default(), env.as_ref()).await?;
        Ok::<_, BoxError>((n, t0.elapsed()))
    }))
    .await?;
    let (data_files, commit) = result;
    Ok(RunResult {
        sample,
        bytes: measure::dir_bytes(dir)?,
        data_files,
        commit: Some(commit),
    })
}

/// Runs the benchmark and prints its tables.
pub(crate) async fn run(args: &WriteArgs) -> Result<(), BoxError> {
    let t0 = Instant::now();
    let batches = data::generate(args.rows)?;
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let input_bytes: usize = batches.iter().map(RecordBatch::get_array_memory_size).sum();
    let days = split_by_day(&batches)?;
    println!(
        "data set: {rows} rows in {} batches of <= {} rows, {:.0} MiB in Arrow, {} days \
         (generated and split in {:.1} s, not timed)",
        batches.len(),
        data::BATCH_ROWS,
        mib(input_bytes as u64),
        days.len(),
        t0.elapsed().as_secs_f64(),
    );
    let options = WriteOptions::default();
    let props = floor_properties(&options);
    println!(
        "parquet settings (both): {:?}, row group <= {} rows, page {} B / {} rows, dict {} B",
        options.compression,
        options.row_group_size_rows,
        options.page_size_bytes,
        options.page_row_limit,
        options.dict_size_bytes,
    );

    let root = args.work_dir.join("write");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let mut variants: Vec<(&str, usize)> = vec![("floor: ArrowWriter per day", 0), ("ours", 1)];
    if args.two_writers {
        variants.push(("ours, 2 writer tasks", 2));
    }
    let mut results: Vec<Vec<RunResult>> = vec![Vec::new(); variants.len()];
    for rep in 0..args.repeats {
        for (v, (name, writers)) in variants.iter().enumerate() {
            let dir = root.join(format!("rep{rep}-v{v}"));
            std::fs::create_dir_all(&dir)?;
            let r = if *writers == 0 {
                let (files, sample) =
                    measure::measure(async { write_floor(&days, &dir, &props) }).await?;
                RunResult {
                    sample,
                    bytes: measure::dir_bytes(&dir)?,
                    data_files: files,
                    commit: None,
                }
            } else {
                Box::pin(write_ours(&batches, &dir, *writers)).await?
            };
            println!(
                "  run {rep} {name}: {:.3} s, cpu {:.2}, {} files, {:.1} MiB{}",
                r.sample.wall.as_secs_f64(),
                r.sample.cpu_util.unwrap_or(f64::NAN),
                r.data_files,
                mib(r.bytes),
                r.commit
                    .map(|c| format!(", commit {:.1} ms", ms(c)))
                    .unwrap_or_default(),
            );
            std::fs::remove_dir_all(&dir)?;
            results[v].push(r);
        }
    }

    println!();
    println!(
        "| writer | median wall (s) | rows/s | MiB/s written | MiB written | data files | CPU (user+sys)/wall | peak RSS (MiB) | vs floor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let floor_wall = median(
        &results[0]
            .iter()
            .map(|r| r.sample.wall.as_secs_f64())
            .collect::<Vec<_>>(),
    )
    .unwrap_or(f64::NAN);
    let mut summary = Vec::new();
    for ((name, _), runs) in variants.iter().zip(&results) {
        let wall = median(
            &runs
                .iter()
                .map(|r| r.sample.wall.as_secs_f64())
                .collect::<Vec<_>>(),
        )
        .unwrap_or(f64::NAN);
        let bytes = median(&runs.iter().map(|r| r.bytes).collect::<Vec<_>>()).unwrap_or(0);
        let cpu = median(
            &runs
                .iter()
                .filter_map(|r| r.sample.cpu_util)
                .collect::<Vec<_>>(),
        );
        let rss = runs.iter().filter_map(|r| r.sample.peak_rss).max();
        let files = runs.first().map(|r| r.data_files).unwrap_or(0);
        let commit = median(
            &runs
                .iter()
                .filter_map(|r| r.commit.map(ms))
                .collect::<Vec<_>>(),
        );
        let name = match commit {
            Some(c) => format!("{name} (commit {c:.0} ms)"),
            None => (*name).to_string(),
        };
        println!(
            "| {name} | {wall:.3} | {:.2} M | {:.1} | {:.1} | {files} | {} | {} | {:.2}x |",
            rows as f64 / wall / 1e6,
            mib(bytes) / wall,
            mib(bytes),
            cpu.map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "n/a".into()),
            rss.map(|r| format!("{:.0}", mib(r)))
                .unwrap_or_else(|| "n/a".into()),
            wall / floor_wall,
        );
        summary.push((name, wall));
    }
    println!();
    if let Some((_, ours)) = summary.get(1) {
        println!(
            "ratio ours/floor = {:.3} (target <= 1.10); walls are medians of {} interleaved runs",
            ours / floor_wall,
            args.repeats
        );
    }
    println!(
        "note: peak RSS includes the resident input data set ({:.0} MiB)",
        mib(input_bytes as u64)
    );

    match &args.python {
        Some(py) => {
            let ours = summary.get(1).map(|(_, w)| *w);
            python::run(py, &batches, &root, args.repeats, rows, floor_wall, ours)?;
        }
        None => println!(
            "\nPyIceberg / pyarrow: skipped (no python with pyiceberg: set ICEBERG_TEST_PYTHON \
             or run `cargo xtask venv`)"
        ),
    }
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    Ok(())
}
