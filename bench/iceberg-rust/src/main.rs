//! `iceberg-rust-bench`: writes an Arrow IPC file into a new Iceberg table with
//! iceberg-rust 0.10.1's own writer stack and one fast append, and prints one JSON line
//! (the write matrix of `iceberg-bench` runs it next to our writer).
//!
//! ```text
//! iceberg-rust-bench --input events.arrow --layout unpartitioned|day|bucket --out DIR
//! ```
//!
//! Untimed: reading every input batch into memory. Timed: creating the table in a
//! `MemoryCatalog` over a `file://` warehouse in `DIR`, writing every batch, committing
//! one fast append. See README.md for the API path of each layout.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{RecordBatch, make_array};
use arrow_ipc::reader::FileReader;
use arrow_schema::SchemaRef as ArrowSchemaRef;
use iceberg::arrow::{RecordBatchPartitionSplitter, schema_to_arrow_schema};
use iceberg::io::LocalFsStorageFactory;
use iceberg::memory::{MEMORY_CATALOG_WAREHOUSE, MemoryCatalogBuilder};
use iceberg::spec::{
    DataFile, DataFileFormat, NestedField, PrimitiveType, Schema, Transform, Type,
    UnboundPartitionSpec,
};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::partitioning::PartitioningWriter;
use iceberg::writer::partitioning::fanout_writer::FanoutWriter;
use iceberg::writer::partitioning::unpartitioned_writer::UnpartitionedWriter;
use iceberg::{Catalog, CatalogBuilder, NamespaceIdent, TableCreation};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Linux clock ticks per second (`USER_HZ`) for `/proc/self/stat`.
const USER_HZ: f64 = 100.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Unpartitioned,
    Day,
    Bucket,
}

impl Layout {
    fn parse(s: &str) -> Result<Self, BoxError> {
        match s {
            "unpartitioned" => Ok(Self::Unpartitioned),
            "day" => Ok(Self::Day),
            "bucket" => Ok(Self::Bucket),
            _ => Err(format!("unknown layout {s:?} (unpartitioned, day or bucket)").into()),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Unpartitioned => "unpartitioned",
            Self::Day => "day",
            Self::Bucket => "bucket",
        }
    }

    /// The partition spec: none, `day(ts)` or `bucket(1000, user_id)`.
    fn partition_spec(self) -> Result<UnboundPartitionSpec, BoxError> {
        let builder = UnboundPartitionSpec::builder();
        let builder = match self {
            Self::Unpartitioned => builder,
            Self::Day => builder.add_partition_field(2, "ts_day", Transform::Day)?,
            Self::Bucket => {
                builder.add_partition_field(3, "user_id_bucket", Transform::Bucket(1000))?
            }
        };
        Ok(builder.build())
    }
}

struct Args {
    input: PathBuf,
    layout: Layout,
    out: PathBuf,
}

fn parse_args() -> Result<Args, BoxError> {
    const USAGE: &str =
        "usage: iceberg-rust-bench --input FILE.arrow --layout unpartitioned|day|bucket --out DIR";
    let (mut input, mut layout, mut out) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--input" => input = Some(PathBuf::from(value()?)),
            // `--layouts` too: the iceberg-bench harness spells it that way for every writer.
            "--layout" | "--layouts" => layout = Some(Layout::parse(&value()?)?),
            "--out" => out = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {arg:?}\n{USAGE}").into()),
        }
    }
    let missing = |what: &str| format!("{what} is required\n{USAGE}");
    Ok(Args {
        input: input.ok_or_else(|| missing("--input"))?,
        layout: layout.ok_or_else(|| missing("--layout"))?,
        out: out.ok_or_else(|| missing("--out"))?,
    })
}

/// The table schema: field ids 1..7 in the input's column order.
fn table_schema() -> Result<Schema, BoxError> {
    let p = |t| Type::Primitive(t);
    Ok(Schema::builder()
        .with_schema_id(0)
        .with_fields(vec![
            NestedField::required(1, "id", p(PrimitiveType::Long)).into(),
            NestedField::optional(2, "ts", p(PrimitiveType::Timestamptz)).into(),
            NestedField::optional(3, "user_id", p(PrimitiveType::Long)).into(),
            NestedField::optional(4, "category", p(PrimitiveType::String)).into(),
            NestedField::optional(5, "amount", p(PrimitiveType::Double)).into(),
            NestedField::optional(6, "payload", p(PrimitiveType::String)).into(),
            NestedField::optional(7, "qty", p(PrimitiveType::Int)).into(),
        ])
        .build()?)
}

/// Reads every batch of an Arrow IPC file.
fn read_input(path: &Path) -> Result<Vec<RecordBatch>, BoxError> {
    let reader = FileReader::try_new(File::open(path)?, None)?;
    Ok(reader.collect::<Result<Vec<_>, _>>()?)
}

/// A `/proc/self/status` value in bytes (`VmRSS`, `VmHWM`).
fn proc_status_bytes(key: &str) -> Result<u64, BoxError> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .ok_or_else(|| format!("no {key} in /proc/self/status"))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse()?;
    Ok(kib * 1024)
}

/// User + system CPU seconds of this process so far (`/proc/self/stat` utime + stime).
fn cpu_seconds() -> Result<f64, BoxError> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // Fields after the `(comm)`, which may hold spaces: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').ok_or("bad /proc/self/stat")? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11).ok_or("no utime")?.parse()?;
    let stime: u64 = fields.get(12).ok_or("no stime")?.parse()?;
    Ok((utime + stime) as f64 / USER_HZ)
}

/// Total size and count of the `*.parquet` files under `dir`.
fn parquet_files(dir: &Path) -> Result<(u64, u64), BoxError> {
    let (mut bytes, mut files) = (0, 0);
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let (b, f) = parquet_files(&entry.path())?;
            bytes += b;
            files += f;
        } else if kind.is_file() && entry.path().extension().is_some_and(|e| e == "parquet") {
            bytes += entry.metadata()?.len();
            files += 1;
        }
    }
    Ok((bytes, files))
}

/// Gives `batch` the table's Arrow schema (Iceberg field ids in the field metadata, and
/// `+00:00` as the timestamptz zone where the input says `UTC`): no data is copied, only
/// the declared types are replaced, after checking they are the same physical types.
fn with_table_schema(
    batch: &RecordBatch,
    schema: &ArrowSchemaRef,
) -> Result<RecordBatch, BoxError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(col, field)| {
            if col.data_type() == field.data_type() {
                return Ok(col.clone());
            }
            if col.data_type().primitive_width() != field.data_type().primitive_width() {
                return Err(format!(
                    "column {}: input type {} does not match the table's {}",
                    field.name(),
                    col.data_type(),
                    field.data_type()
                ));
            }
            let data = col
                .to_data()
                .into_builder()
                .data_type(field.data_type().clone())
                .build()
                .map_err(|e| e.to_string())?;
            Ok(make_array(data))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// The timed part: create the table, write every batch, commit one fast append.
/// Returns the committed table and the rows written.
async fn write_table(
    batches: &[RecordBatch],
    layout: Layout,
    out: &Path,
) -> Result<(Table, u64), BoxError> {
    let warehouse = format!("file://{}", out.display());
    let catalog = MemoryCatalogBuilder::default()
        .with_storage_factory(Arc::new(LocalFsStorageFactory))
        .load(
            "bench",
            HashMap::from([(MEMORY_CATALOG_WAREHOUSE.to_string(), warehouse)]),
        )
        .await?;
    let namespace = NamespaceIdent::new("bench".to_string());
    catalog.create_namespace(&namespace, HashMap::new()).await?;
    let creation = TableCreation::builder()
        .name("events".to_string())
        .schema(table_schema()?)
        .partition_spec(layout.partition_spec()?)
        // Recorded in the table metadata for other engines; iceberg-rust 0.10.1's writers
        // ignore write.parquet.* (ParquetWriterBuilder::from_table_properties has a TODO), so
        // the same settings are given to the Parquet writer below.
        .properties([
            (
                "write.parquet.compression-codec".to_string(),
                "zstd".to_string(),
            ),
            (
                "write.parquet.compression-level".to_string(),
                "3".to_string(),
            ),
        ])
        .build();
    let table = catalog.create_table(&namespace, creation).await?;
    let metadata = table.metadata();
    let schema = metadata.current_schema().clone();
    let arrow_schema: ArrowSchemaRef = Arc::new(schema_to_arrow_schema(&schema)?);

    // zstd level 3; row groups, pages, dictionaries and statistics at the parquet-rs
    // defaults iceberg-rust uses (it sets nothing else).
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .build();
    let parquet_writer = ParquetWriterBuilder::new(props, schema.clone());
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        parquet_writer,
        table.file_io().clone(),
        DefaultLocationGenerator::new(metadata)?,
        DefaultFileNameGenerator::new("data".to_string(), None, DataFileFormat::Parquet),
    );
    let data_file_writer = DataFileWriterBuilder::new(rolling);

    let data_files: Vec<DataFile> = match layout {
        Layout::Unpartitioned => {
            let mut writer = UnpartitionedWriter::new(data_file_writer);
            for batch in batches {
                writer
                    .write(with_table_schema(batch, &arrow_schema)?)
                    .await?;
            }
            writer.close().await?
        }
        Layout::Day | Layout::Bucket => {
            // iceberg-rust computes the partition values (its transforms, through
            // PartitionValueCalculator) and splits each batch by them; the fanout writer
            // keeps one open data file writer per partition (the input is not clustered).
            let splitter = RecordBatchPartitionSplitter::try_new_with_computed_values(
                schema.clone(),
                metadata.default_partition_spec().clone(),
            )?;
            let mut writer = FanoutWriter::new(data_file_writer);
            for batch in batches {
                let batch = with_table_schema(batch, &arrow_schema)?;
                for (key, part) in splitter.split(&batch)? {
                    writer.write(key, part).await?;
                }
            }
            writer.close().await?
        }
    };
    let rows = data_files.iter().map(DataFile::record_count).sum();

    let tx = Transaction::new(&table);
    let tx = tx.fast_append().add_data_files(data_files).apply(tx)?;
    let table = tx.commit(&catalog).await?;
    Ok((table, rows))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.out)?;
    let out = std::fs::canonicalize(&args.out)?;

    let batches = read_input(&args.input)?;
    let rss_before = proc_status_bytes("VmRSS")?;
    // Reset VmHWM to the current RSS (not possible everywhere: then the peak is the
    // process's, loading included).
    let _ = std::fs::write("/proc/self/clear_refs", "5");

    let cpu0 = cpu_seconds()?;
    let t0 = Instant::now();
    let (table, rows) = write_table(&batches, args.layout, &out).await?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds()? - cpu0;
    let peak_rss = proc_status_bytes("VmHWM")?;

    if table.metadata().current_snapshot().is_none() {
        return Err("the fast append left no current snapshot".into());
    }
    let (bytes, files) = parquet_files(&out)?;
    // One JSON object, keys in this order (serde_json's `Map` would sort them).
    let fields: [(&str, serde_json::Value); 9] = [
        ("writer", "iceberg-rust 0.10.1".into()),
        ("layout", args.layout.name().into()),
        ("wall_s", wall.into()),
        ("cpu_s", cpu.into()),
        ("rss_before_bytes", rss_before.into()),
        ("peak_rss_bytes", peak_rss.into()),
        ("bytes", bytes.into()),
        ("files", files.into()),
        ("rows", rows.into()),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", serde_json::Value::from(*k)))
        .collect();
    let line = format!("{{{}}}", body.join(","));
    println!("{line}");
    Ok(())
}
