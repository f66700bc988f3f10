//! `iceberg-bench write-one`: one writer writing the events once, in a process of its own so
//! that its peak memory is its own. The input (an Arrow IPC file) is read before timing; the
//! result is one JSON line (the protocol every writer of the matrix speaks, Python and
//! iceberg-rust included):
//! `{"wall_s", "cpu_s", "rss_before_bytes", "peak_rss_bytes", "bytes", "files", "rows"}`.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use arrow_array::{RecordBatch, UInt32Array};
use arrow_select::take::take_record_batch;
use iceberg_append::{
    Catalog, InMemoryCatalog, SystemEnvironment, TableCreation, TableIdent, commit_fast_append,
};
use iceberg_io::FileIo;
use iceberg_spec::{Datum, PartitionSpec, Transform};
use iceberg_write::WriteOptions;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use serde_json::json;

use crate::measure::{self, count_files, dir_bytes};
use iceberg_testing::events as data;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The partition layouts of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Layout {
    /// No partitions: one file.
    Unpartitioned,
    /// `day(ts)`: 30 partitions.
    Day,
    /// `bucket(1000, user_id)`: 1,000 partitions, more than `write.max-open-files`.
    Bucket,
}

impl Layout {
    /// Every layout, in the order they are reported.
    pub(crate) const ALL: [Layout; 3] = [Layout::Unpartitioned, Layout::Day, Layout::Bucket];

    /// The name the other writers of the matrix take.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Unpartitioned => "unpartitioned",
            Self::Day => "day",
            Self::Bucket => "bucket",
        }
    }

    /// The Iceberg partition transform and its source column, if any.
    pub(crate) fn transform(self) -> Option<(&'static str, Transform)> {
        match self {
            Self::Unpartitioned => None,
            Self::Day => Some(("ts", Transform::Day)),
            Self::Bucket => Some(("user_id", Transform::Bucket(1000))),
        }
    }
}

/// Our writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OurWriter {
    /// parquet's `ArrowWriter`, one file per partition, the rows split by partition before
    /// timing, one core: the floor a partitioned writer adds its work to.
    Floor,
    /// `write_data_files` plus one fast append through `InMemoryCatalog`.
    Ours,
}

/// Reads the batches of an Arrow IPC file.
pub(crate) fn read_ipc(path: &Path) -> Result<Vec<RecordBatch>, BoxError> {
    let reader = arrow_ipc::reader::FileReader::try_new(File::open(path)?, None)?;
    Ok(reader.collect::<Result<Vec<_>, _>>()?)
}

/// Writes `batches` as an uncompressed Arrow IPC file (the matrix's input).
pub(crate) fn write_ipc(path: &Path, batches: &[RecordBatch]) -> Result<(), BoxError> {
    let mut w = arrow_ipc::writer::FileWriter::try_new(File::create(path)?, &data::arrow_schema())?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()?;
    Ok(())
}

/// The floor's Parquet settings: our defaults for codec, row groups, pages and dictionary,
/// and otherwise parquet's own (page statistics).
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

/// The partition of row `i` of `batch` under `layout` (the day, or the bucket through the
/// spec's own scalar transform).
fn partition_of(batch: &RecordBatch, layout: Layout, i: usize) -> Result<i64, BoxError> {
    let schema = data::arrow_schema();
    Ok(match layout {
        Layout::Unpartitioned => 0,
        Layout::Day => {
            let ts = batch
                .column(schema.index_of("ts")?)
                .as_primitive::<TimestampMicrosecondType>();
            data::day_of(ts.value(i))
        }
        Layout::Bucket => {
            let users = batch
                .column(schema.index_of("user_id")?)
                .as_primitive::<Int64Type>();
            match Transform::Bucket(1000).apply(Some(&Datum::long(users.value(i))))? {
                Some(Datum::Int(b)) => i64::from(b),
                other => return Err(format!("bucket gave {other:?}").into()),
            }
        }
    })
}

/// The batches split by partition, in partition order (the floor's input, made before
/// timing).
fn split(batches: &[RecordBatch], layout: Layout) -> Result<Vec<Vec<RecordBatch>>, BoxError> {
    if layout == Layout::Unpartitioned {
        return Ok(vec![batches.to_vec()]);
    }
    let mut parts: BTreeMap<i64, Vec<RecordBatch>> = BTreeMap::new();
    for batch in batches {
        let mut rows: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
        for i in 0..batch.num_rows() {
            rows.entry(partition_of(batch, layout, i)?)
                .or_default()
                .push(i as u32);
        }
        for (key, idx) in rows {
            let part = take_record_batch(batch, &UInt32Array::from(idx))?;
            parts.entry(key).or_default().push(part);
        }
    }
    Ok(parts.into_values().collect())
}

fn write_floor(parts: &[Vec<RecordBatch>], dir: &Path) -> Result<(), BoxError> {
    let props = floor_properties(&WriteOptions::default());
    let schema = data::arrow_schema();
    for (i, batches) in parts.iter().enumerate() {
        let file = File::create(dir.join(format!("part-{i:05}.parquet")))?;
        let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props.clone()))?;
        for b in batches {
            w.write(b)?;
        }
        w.close()?;
    }
    Ok(())
}

/// A fresh table for `layout` at `dir` (setup, not timed).
async fn create_table(
    dir: &Path,
    layout: Layout,
) -> Result<(FileIo, InMemoryCatalog, TableIdent), BoxError> {
    let location = format!("file://{}", dir.display());
    let io = FileIo::from_location(&location, &HashMap::new())?;
    let catalog = InMemoryCatalog::new(io.clone(), Arc::new(SystemEnvironment));
    let ident = TableIdent::parse("bench.events").ok_or("bad table name")?;
    let schema = data::iceberg_schema()?;
    let mut creation = TableCreation::new(location, schema.clone());
    if let Some((column, transform)) = layout.transform() {
        creation.spec = PartitionSpec::builder(&schema)
            .add(column, transform)?
            .build()?;
    }
    catalog.create_table(&ident, creation).await?;
    Ok((io, catalog, ident))
}

async fn write_ours(batches: &[RecordBatch], dir: &Path, layout: Layout) -> Result<(), BoxError> {
    let (io, catalog, ident) = create_table(dir, layout).await?;
    let table = catalog.load_table(&ident).await?;
    let meta = &table.metadata;
    let options = WriteOptions::from_table_properties(&meta.properties)?;
    let schema = meta.current_schema()?.clone();
    let files = iceberg_write::write_data_files(
        &io,
        &meta.location,
        batches,
        &schema,
        meta.default_spec()?,
        None,
        &options,
    )
    .await?;
    commit_fast_append(
        &catalog,
        &ident,
        files,
        Default::default(),
        &SystemEnvironment,
    )
    .await?;
    Ok(())
}

/// Runs one writer on `input` into the empty folder `out` and prints its JSON line;
/// `threads` sizes the tokio runtime ours runs on (the floor uses one core whatever it is).
pub(crate) fn run(
    writer: OurWriter,
    layout: Layout,
    input: &Path,
    out: &Path,
    threads: usize,
) -> Result<(), BoxError> {
    let batches = read_ipc(input)?;
    let parts = match writer {
        OurWriter::Floor => split(&batches, layout)?,
        OurWriter::Ours => Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()?;
    let rss_before = measure::rss_bytes().unwrap_or(0);
    measure::reset_peak_rss();
    let cpu0 = measure::cpu_seconds().unwrap_or(0.0);
    let t0 = Instant::now();
    match writer {
        OurWriter::Floor => write_floor(&parts, out)?,
        OurWriter::Ours => runtime.block_on(Box::pin(write_ours(&batches, out, layout)))?,
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = measure::cpu_seconds().unwrap_or(0.0) - cpu0;
    let peak = measure::peak_rss_bytes().unwrap_or(0);
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let line = json!({
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": peak,
        "bytes": dir_bytes(out)?,
        "files": count_files(out, |n| n.ends_with(".parquet"))?,
        "rows": rows,
    });
    println!("{line}");
    Ok(())
}
