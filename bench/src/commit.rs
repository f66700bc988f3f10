//! The commit benchmarks of issue 5, on local disk through `InMemoryCatalog`:
//! latency of a one-file append after 1, 100 and 1,000 prior appends (fast and merge), and
//! one commit of 100,000 data files.

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iceberg_append::{
    AppendMode, Catalog, InMemoryCatalog, SystemEnvironment, TableCreation, TableIdent,
    commit_append_with_mode,
};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Datum, FileFormat, Schema};

use crate::measure::{self, median, mib, ms};
use iceberg_testing::events::{self as data, DAY_MICROS, DAYS, START_MICROS, SplitMix64, day_of};

type BoxError = Box<dyn Error + Send + Sync>;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct CommitArgs {
    pub(crate) work_dir: PathBuf,
    /// Prior-append counts at which latency is sampled.
    pub(crate) points: Vec<usize>,
    /// Commits timed at each point.
    pub(crate) samples: usize,
    /// Files in the one big commit (0: skip).
    pub(crate) big_files: usize,
    /// Whether to sample merge append too.
    pub(crate) merge: bool,
}

/// A table partitioned by `day(ts)` at `dir`.
async fn create_table(dir: &Path) -> Result<(InMemoryCatalog, TableIdent, Schema), BoxError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let location = format!("file://{}", dir.display());
    let io = FileIo::from_location(&location, &HashMap::new())?;
    let catalog = InMemoryCatalog::new(io, Arc::new(SystemEnvironment));
    let ident = TableIdent::parse("bench.events").ok_or("bad table name")?;
    let schema = data::iceberg_schema()?;
    let mut creation = TableCreation::new(location, schema.clone());
    creation.spec = data::day_spec(&schema)?;
    catalog.create_table(&ident, creation).await?;
    Ok((catalog, ident, schema))
}

/// A synthetic data file of the events table with the metrics our writer would give it:
/// sizes, counts and Appendix-D bounds for the 7 columns, `payload` bounds truncated to 16.
fn synthetic_file(location: &str, spec_id: i32, n: u64, rng: &mut SplitMix64) -> DataFile {
    let day = day_of(START_MICROS) + (n % DAYS as u64) as i64;
    let records = 50_000 + rng.below(100_000) as i64;
    let first_id = n as i64 * 200_000;
    let ts_lo = day * DAY_MICROS + rng.below(60_000_000) as i64;
    let ts_hi = (day + 1) * DAY_MICROS - 1 - rng.below(60_000_000) as i64;
    let letters =
        |rng: &mut SplitMix64| -> Vec<u8> { (0..16).map(|_| b'a' + rng.below(26) as u8).collect() };
    let bounds = |lower: bool, rng: &mut SplitMix64| -> BTreeMap<i32, Vec<u8>> {
        let pick = |lo: Datum, hi: Datum| if lower { lo } else { hi };
        let mut m = BTreeMap::new();
        m.insert(
            1,
            pick(Datum::Long(first_id), Datum::Long(first_id + records - 1)).to_bytes(),
        );
        m.insert(
            2,
            pick(Datum::Timestamptz(ts_lo), Datum::Timestamptz(ts_hi)).to_bytes(),
        );
        m.insert(3, pick(Datum::Long(3), Datum::Long(999_996)).to_bytes());
        m.insert(
            4,
            pick(
                Datum::String("category-00".into()),
                Datum::String("category-49".into()),
            )
            .to_bytes(),
        );
        m.insert(
            5,
            pick(Datum::Double(0.01), Datum::Double(99_999.99)).to_bytes(),
        );
        let mut p = letters(rng);
        if lower {
            p[0] = b'a';
        } else {
            p[0] = b'z';
            p[15] = b'{';
        }
        m.insert(6, p);
        m.insert(7, pick(Datum::Int(1), Datum::Int(1_000)).to_bytes());
        m
    };
    let size = records * 37 + rng.below(10_000) as i64;
    let cols = |f: &dyn Fn(i32) -> i64| (1..=7).map(|id| (id, f(id))).collect::<BTreeMap<_, _>>();
    DataFile {
        file_path: format!("{location}/data/ts_day={day}/00000-{n}-bench-00001.parquet",),
        file_format: FileFormat::Parquet,
        spec_id,
        partition: vec![Some(Datum::Date(day as i32))],
        record_count: records,
        file_size_in_bytes: size,
        column_sizes: cols(&|id| size / 8 + i64::from(id)),
        value_counts: cols(&|_| records),
        null_value_counts: cols(&|id| if id == 5 { records / 100 } else { 0 }),
        nan_value_counts: BTreeMap::from([(5, 0)]),
        lower_bounds: bounds(true, rng),
        upper_bounds: bounds(false, rng),
        split_offsets: Some(vec![4]),
        ..Default::default()
    }
}

/// Whether a metadata file name is a manifest (not a manifest list).
fn is_manifest(name: &str) -> bool {
    name.ends_with(".avro") && !name.starts_with("snap-")
}

/// Commits `files` and returns how long it took.
async fn timed_commit(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    files: Vec<DataFile>,
    mode: AppendMode,
) -> Result<Duration, BoxError> {
    let t0 = Instant::now();
    commit_append_with_mode(
        catalog,
        ident,
        files,
        Default::default(),
        Some(mode),
        &SystemEnvironment,
    )
    .await?;
    Ok(t0.elapsed())
}

/// Latency of one-file appends as the table grows, for one mode; returns the median at
/// each point.
async fn latency_curve(
    args: &CommitArgs,
    mode: AppendMode,
    name: &str,
) -> Result<Vec<(usize, f64, f64)>, BoxError> {
    let dir = args.work_dir.join(format!("commit-{name}"));
    let (catalog, ident, _) = create_table(&dir).await?;
    let table = catalog.load_table(&ident).await?;
    let location = table.metadata.location.clone();
    let spec_id = table.metadata.default_spec()?.spec_id();
    let last = args.points.iter().max().copied().unwrap_or(0) + args.samples;
    let mut rng = SplitMix64::new(5);
    let mut lat = Vec::with_capacity(last);
    let t0 = Instant::now();
    for prior in 0..last {
        let file = synthetic_file(&location, spec_id, prior as u64, &mut rng);
        lat.push(ms(timed_commit(&catalog, &ident, vec![file], mode).await?));
    }
    let table = catalog.load_table(&ident).await?;
    let meta_len = match &table.metadata_location {
        Some(loc) => std::fs::metadata(loc.trim_start_matches("file://"))
            .map(|m| m.len())
            .unwrap_or(0),
        None => 0,
    };
    let manifests = measure::count_files(&dir.join("metadata"), is_manifest)?;
    println!(
        "  {name}: {last} commits in {:.1} s; final metadata.json {:.2} MiB, {} snapshots, \
         {} manifests listed in the head snapshot's manifest list ({} written)",
        t0.elapsed().as_secs_f64(),
        mib(meta_len),
        table.metadata.snapshots.len(),
        head_manifest_count(&catalog, &ident).await?,
        manifests,
    );
    // A coarse curve: the median of each block of 100 commits.
    let curve: Vec<String> = lat
        .chunks(100)
        .enumerate()
        .map(|(i, c)| format!("{}:{:.1}", i * 100, median(c).unwrap_or(f64::NAN)))
        .collect();
    println!(
        "    median ms per 100 commits (from prior count): {}",
        curve.join(" ")
    );
    let out = args
        .points
        .iter()
        .map(|&p| {
            let window = &lat[p.min(lat.len())..(p + args.samples).min(lat.len())];
            let max = window.iter().copied().fold(f64::NAN, f64::max);
            (p, median(window).unwrap_or(f64::NAN), max)
        })
        .collect();
    std::fs::remove_dir_all(&dir)?;
    Ok(out)
}

/// Manifests in the current snapshot's manifest list.
async fn head_manifest_count(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
) -> Result<usize, BoxError> {
    let table = catalog.load_table(ident).await?;
    let Some(list) = table
        .metadata
        .current_snapshot()
        .and_then(|s| s.manifest_list.clone())
    else {
        return Ok(0);
    };
    let path = list.trim_start_matches("file://").to_string();
    let bytes = std::fs::read(&path)?;
    Ok(iceberg_append::manifest_list::decode_manifest_list(&list, &bytes)?.len())
}

/// Runs the commit benchmarks and prints their tables.
pub(crate) async fn run(args: &CommitArgs) -> Result<(), BoxError> {
    println!(
        "commit latency: one synthetic data file per append, median of {} commits starting \
         at each prior-append count, InMemoryCatalog + local disk, SystemEnvironment",
        args.samples
    );
    let fast = latency_curve(args, AppendMode::Fast, "fast").await?;
    let merge = if args.merge {
        latency_curve(
            args,
            AppendMode::from_properties(&Default::default()),
            "merge",
        )
        .await?
    } else {
        fast.iter()
            .map(|&(p, _, _)| (p, f64::NAN, f64::NAN))
            .collect()
    };
    println!();
    println!(
        "| prior appends | fast append median (ms) | fast max (ms) | merge append median (ms) | merge max (ms) |"
    );
    println!("|---|---|---|---|---|");
    for ((p, f, fmax), (_, m, mmax)) in fast.iter().zip(&merge) {
        println!("| {p} | {f:.2} | {fmax:.2} | {m:.2} | {mmax:.2} |");
    }
    if let (Some(f0), Some(fl), Some(m0), Some(ml)) =
        (fast.first(), fast.last(), merge.first(), merge.last())
    {
        println!(
            "\nratio last/first: fast {:.2} (target <= 2.0), merge {:.2}",
            fl.1 / f0.1,
            ml.1 / m0.1
        );
    }

    if args.big_files > 0 {
        let dir = args.work_dir.join("commit-big");
        let (catalog, ident, _) = create_table(&dir).await?;
        let table = catalog.load_table(&ident).await?;
        let location = table.metadata.location.clone();
        let spec_id = table.metadata.default_spec()?.spec_id();
        let mut rng = SplitMix64::new(7);
        let files: Vec<DataFile> = (0..args.big_files as u64)
            .map(|n| synthetic_file(&location, spec_id, n, &mut rng))
            .collect();
        let (took, sample) = measure::measure(async {
            timed_commit(&catalog, &ident, files, AppendMode::Fast).await
        })
        .await?;
        let meta_dir = dir.join("metadata");
        println!(
            "\none fast-append commit of {} data files (7 columns of metrics each): {:.2} s, \
             CPU {:.2}, peak RSS {} MiB; metadata written {:.1} MiB in {} manifests",
            args.big_files,
            took.as_secs_f64(),
            sample.cpu_util.unwrap_or(f64::NAN),
            sample
                .peak_rss
                .map(|r| format!("{:.0}", mib(r)))
                .unwrap_or_else(|| "n/a".into()),
            mib(measure::dir_bytes(&meta_dir)?),
            measure::count_files(&meta_dir, is_manifest)?,
        );
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
