//! PyIceberg prunes with our bounds and partition values without losing a row.
//!
//! One table per transform (void, identity, bucket[4], truncate[3], year, month, day, hour),
//! partitioned by that transform on every source column the spec allows (void: a few). The
//! columns cover every primitive type PyIceberg 0.12 reads, with the values where bounds go
//! wrong: NaN and signed zeros, infinities, decimals at their precision, dates and timestamps
//! before the epoch, strings longer than 16 code points (truncated bounds) with multi-byte
//! characters, U+D7FF and U+10FFFF, 0xFF-heavy binary longer than 16 bytes, and nulls.
//! Several files per table, in two appends, with value ranges that differ per file.
//!
//! Then one Python process per table builds predicates per column from the data and from
//! the bounds PyIceberg decodes (==, <, <=, >, >=, in, is_null, not_null, is_nan, not_nan,
//! starts_with, not_starts_with; at, just below and just above each bound and each file's
//! min and max, present and absent values), and checks that `scan(row_filter=...)` returns
//! exactly the rows of the full scan filtered by pyarrow. It also counts the files planned,
//! so a test where nothing is ever pruned fails.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, LargeBinaryArray, RecordBatch, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray,
};
use iceberg_append::{
    DeterministicEnvironment, Table, TableCreation, create_table, prepare_append,
    write_metadata_file,
};
use iceberg_io::FileIo;
use iceberg_spec::{Datum, NestedField, PartitionSpec, PrimitiveType, Schema, Transform};
use serde_json::Value;

use crate::external;

/// Appends per table; each is one manifest, and PyIceberg re-reads manifests per scan.
const APPENDS: usize = 2;
/// Files written per append in the void table (one `write_data_files` call each).
const VOID_FILES_PER_APPEND: usize = 4;
/// Rows per file in the void table.
const VOID_ROWS: usize = 10;
/// Partition groups per append in the partitioned tables (plus one group of nulls).
const GROUPS: usize = 4;
/// Rows per partition group.
const GROUP_ROWS: usize = 4;

struct Column {
    id: i32,
    name: &'static str,
    ty: PrimitiveType,
    /// The type name the Python script dispatches on.
    kind: &'static str,
}

fn columns() -> Vec<Column> {
    use PrimitiveType as P;
    let c = |id, name, ty, kind| Column { id, name, ty, kind };
    vec![
        c(2, "b", P::Boolean, "boolean"),
        c(3, "i", P::Int, "int"),
        c(4, "l", P::Long, "long"),
        c(5, "f", P::Float, "float"),
        c(6, "d", P::Double, "double"),
        c(
            7,
            "dec9",
            P::Decimal {
                precision: 9,
                scale: 2,
            },
            "decimal",
        ),
        c(
            8,
            "dec38",
            P::Decimal {
                precision: 38,
                scale: 10,
            },
            "decimal",
        ),
        c(9, "dt", P::Date, "date"),
        c(10, "tm", P::Time, "time"),
        c(11, "ts", P::Timestamp, "timestamp"),
        c(12, "tstz", P::Timestamptz, "timestamptz"),
        c(13, "s", P::String, "string"),
        c(14, "u", P::Uuid, "uuid"),
        c(15, "fx", P::Fixed(4), "fixed"),
        c(16, "bin", P::Binary, "binary"),
    ]
}

fn schema() -> Schema {
    let mut fields = vec![NestedField::required(1, "id", PrimitiveType::Long)];
    fields.extend(
        columns()
            .into_iter()
            .map(|c| NestedField::optional(c.id, c.name, c.ty)),
    );
    Schema::new(0, fields).unwrap()
}

const HOUR: i64 = 3_600_000_000;
const DAY: i64 = 24 * HOUR;

/// Interesting values of `ty`, sorted in Iceberg order, distinct, without NaN.
fn pool(ty: &PrimitiveType) -> Vec<Datum> {
    use PrimitiveType as P;
    let mut v: Vec<Datum> = match ty {
        P::Boolean => vec![Datum::bool(false), Datum::bool(true)],
        P::Int => [
            i32::MIN,
            i32::MIN + 1,
            -1_000_000,
            -1000,
            -999,
            -998,
            -7,
            -6,
            -5,
            -1,
            0,
            1,
            2,
            3,
            100,
            101,
            102,
            999_999,
            i32::MAX - 1,
            i32::MAX,
        ]
        .into_iter()
        .map(Datum::int)
        .collect(),
        P::Long => [
            i64::MIN,
            i64::MIN + 1,
            -(1 << 53) - 1,
            -5_000_000_000,
            -4_999_999_999,
            -3,
            -2,
            -1,
            0,
            1,
            2,
            4_294_967_296,
            4_294_967_297,
            (1 << 53) + 1,
            i64::MAX - 1,
            i64::MAX,
        ]
        .into_iter()
        .map(Datum::long)
        .collect(),
        P::Float => [
            f32::NEG_INFINITY,
            f32::MIN,
            -1e30,
            -1.5,
            -1.0,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            1e-45,
            1.0,
            1.25,
            1.5,
            3.25,
            1e30,
            f32::MAX,
            f32::INFINITY,
        ]
        .into_iter()
        .map(Datum::float)
        .collect(),
        P::Double => [
            f64::NEG_INFINITY,
            f64::MIN,
            -1e300,
            -1.5,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            5e-324,
            1.0,
            1.25,
            1.5,
            0.1 + 0.2,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ]
        .into_iter()
        .map(Datum::double)
        .collect(),
        P::Decimal { precision, scale } => {
            let max = 10i128.pow(*precision) - 1;
            [
                -max,
                -max + 1,
                -100_000,
                -2,
                -1,
                0,
                1,
                2,
                3,
                150,
                151,
                152,
                10i128.pow(*precision - 2),
                10i128.pow(*precision - 2) + 1,
                max - 1,
                max,
            ]
            .into_iter()
            .map(|u| Datum::decimal(u, *precision, *scale).unwrap())
            .collect()
        }
        P::Date => [
            -25_567, -366, -365, -32, -31, -1, 0, 1, 30, 31, 58, 59, 365, 18_262, 18_293, 18_322,
            47_482,
        ]
        .into_iter()
        .map(Datum::Date)
        .collect(),
        P::Time => [
            0,
            1,
            999_999,
            1_000_000,
            HOUR - 1,
            HOUR,
            HOUR + 1,
            12 * HOUR,
            DAY - HOUR,
            DAY - 1,
        ]
        .into_iter()
        .map(Datum::Time)
        .collect(),
        P::Timestamp | P::Timestamptz => {
            let micros = [
                -2_208_988_800_000_000, // 1900-01-01
                -366 * DAY,
                -DAY - 1,
                -DAY,
                -HOUR - 1,
                -HOUR,
                -1,
                0,
                1,
                HOUR - 1,
                HOUR,
                DAY - 1,
                DAY,
                31 * DAY,
                1_700_000_000_000_000,
                1_700_000_000_000_001,
                1_700_000_000_000_000 + HOUR,
                4_102_444_800_000_000, // 2100-01-01
            ];
            micros
                .into_iter()
                .map(|m| {
                    if *ty == P::Timestamp {
                        Datum::Timestamp(m)
                    } else {
                        Datum::Timestamptz(m)
                    }
                })
                .collect()
        }
        P::String => {
            let max = '\u{10FFFF}';
            let near = '\u{10FFFE}';
            let rep = |c: char, n: usize| std::iter::repeat_n(c, n).collect::<String>();
            [
                String::new(),
                "a".into(),
                "aa".into(),
                "abc".into(),
                "abcdefghijklmnop".into(),
                "abcdefghijklmnopq".into(),
                "abcdefghijklmnopqrstuvwxyz".into(),
                "abd".into(),
                format!("{}\u{D7FF}tail", rep('a', 15)),
                format!("{}\u{D7FF}\u{10FFFF}", rep('a', 15)),
                "mé".into(),
                "méthodiquement-très-long-texte".into(),
                "zz".into(),
                "日本語".into(),
                "日本語のテキストはとても長いですね、そう思いませんか".into(),
                "😀".into(),
                rep('😀', 17),
                format!("{}a{max}", rep(near, 15)),
                rep(near, 20),
                max.to_string(),
                format!("{}a{max}", rep(max, 15)),
                rep(max, 16),
                rep(max, 17),
                rep(max, 20),
            ]
            .into_iter()
            .map(Datum::string)
            .collect()
        }
        P::Uuid => [
            [0u8; 16],
            {
                let mut b = [0u8; 16];
                b[15] = 1;
                b
            },
            [0x12; 16],
            [0x7f; 16],
            {
                let mut b = [0u8; 16];
                b[0] = 0x80;
                b
            },
            [0xa5; 16],
            {
                let mut b = [0xffu8; 16];
                b[15] = 0xfe;
                b
            },
            [0xff; 16],
        ]
        .into_iter()
        .map(|b| Datum::from_bytes(&P::Uuid, &b).unwrap())
        .collect(),
        P::Fixed(_) => [
            [0u8, 0, 0, 0],
            [0, 0, 0, 1],
            [1, 2, 3, 4],
            [1, 2, 3, 5],
            [0x7f, 0xff, 0xff, 0xff],
            [0x80, 0, 0, 0],
            [0xff, 0xff, 0xff, 0xfe],
            [0xff, 0xff, 0xff, 0xff],
        ]
        .into_iter()
        .map(Datum::fixed)
        .collect(),
        P::Binary => {
            let cat = |parts: &[&[u8]]| parts.concat();
            vec![
                vec![],
                vec![0x00],
                vec![0x00, 0x00],
                vec![0x01],
                vec![0x10; 17],
                cat(&[&[0x7f; 3], &[0x80; 20]]),
                vec![0x7f; 3],
                vec![0xfe],
                cat(&[&[0xfe], &[0xff; 19]]),
                cat(&[&[0xff; 15], &[0x00], &[0xff; 4]]),
                vec![0xff],
                vec![0xff; 16],
                vec![0xff; 17],
                vec![0xff; 20],
            ]
            .into_iter()
            .map(Datum::binary)
            .collect()
        }
        other => panic!("no pool for {other}"),
    };
    v.sort_by(|a, b| a.compare(b).unwrap());
    v.dedup_by(|a, b| a.compare(b) == Some(std::cmp::Ordering::Equal));
    v
}

/// Whether PyIceberg 0.12 handles `transform(v)` as a partition value, so that a lost row
/// can only be our fault:
/// - it reads double partition values back as 32-bit floats (5e-324 becomes 0.0, 1e300
///   becomes inf: its own tables lose these rows too), so identity on double gets only values
///   a float holds exactly;
/// - `truncate[W]` just above the minimum int/long has no representable result (Java wraps
///   it to a large positive number, we saturate to the minimum, PyIceberg computes an
///   out-of-range number), so those values are left out of truncate tables.
fn pyiceberg_reads_partition(transform: &Transform, v: &Datum) -> bool {
    match (transform, v) {
        (Transform::Identity, Datum::Double(d)) => f64::from(*d as f32) == *d,
        (Transform::Truncate(w), Datum::Int(i)) => {
            i64::from(*i) - i64::from(*i).rem_euclid(i64::from(*w)) >= i64::from(i32::MIN)
        }
        (Transform::Truncate(w), Datum::Long(l)) => {
            i128::from(*l) - i128::from(*l).rem_euclid(i128::from(*w)) >= i128::from(i64::MIN)
        }
        _ => true,
    }
}

/// `vals` as the Arrow array `iceberg_write::arrow_schema` expects for `ty`.
fn array(ty: &PrimitiveType, vals: &[Option<Datum>]) -> ArrayRef {
    use PrimitiveType as P;
    macro_rules! collect {
        ($variant:ident) => {
            vals.iter()
                .map(|v| match v {
                    Some(Datum::$variant(x)) => Some(x.clone()),
                    None => None,
                    Some(other) => panic!("{other:?} in a {ty} column"),
                })
                .collect::<Vec<_>>()
        };
    }
    match ty {
        P::Boolean => Arc::new(BooleanArray::from(collect!(Boolean))),
        P::Int => Arc::new(Int32Array::from(collect!(Int))),
        P::Long => Arc::new(Int64Array::from(collect!(Long))),
        P::Float => Arc::new(Float32Array::from(collect!(Float))),
        P::Double => Arc::new(Float64Array::from(collect!(Double))),
        P::Date => Arc::new(Date32Array::from(collect!(Date))),
        P::Time => Arc::new(Time64MicrosecondArray::from(collect!(Time))),
        P::Timestamp => Arc::new(TimestampMicrosecondArray::from(collect!(Timestamp))),
        P::Timestamptz => Arc::new(
            TimestampMicrosecondArray::from(collect!(Timestamptz))
                .with_timezone(iceberg_write::UTC_TIME_ZONE),
        ),
        P::String => Arc::new(StringArray::from(collect!(String))),
        P::Binary => {
            let v = collect!(Binary);
            Arc::new(LargeBinaryArray::from(
                v.iter().map(|b| b.as_deref()).collect::<Vec<_>>(),
            ))
        }
        P::Decimal { precision, scale } => {
            let v: Vec<Option<i128>> = vals
                .iter()
                .map(|v| match v {
                    Some(Datum::Decimal { unscaled, .. }) => Some(*unscaled),
                    None => None,
                    Some(other) => panic!("{other:?} in a {ty} column"),
                })
                .collect();
            Arc::new(
                Decimal128Array::from(v)
                    .with_precision_and_scale(*precision as u8, *scale as i8)
                    .unwrap(),
            )
        }
        P::Uuid | P::Fixed(_) => {
            let size = if let P::Fixed(n) = ty { *n as i32 } else { 16 };
            let bytes = vals.iter().map(|v| v.as_ref().map(Datum::to_bytes));
            Arc::new(FixedSizeBinaryArray::try_from_sparse_iter_with_size(bytes, size).unwrap())
        }
        other => panic!("no array for {other}"),
    }
}

/// Builds rows column by column: `values[c][row]`.
struct Rows {
    ids: Vec<i64>,
    values: Vec<Vec<Option<Datum>>>,
}

impl Rows {
    fn new(ncols: usize) -> Self {
        Self {
            ids: Vec::new(),
            values: vec![Vec::new(); ncols],
        }
    }

    fn batch(&self, schema: &Schema) -> RecordBatch {
        let arrow = Arc::new(iceberg_write::arrow_schema(schema).unwrap());
        let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(self.ids.clone()))];
        for (c, col) in columns().iter().enumerate() {
            cols.push(array(&col.ty, &self.values[c]));
        }
        RecordBatch::try_new(arrow, cols).unwrap()
    }
}

/// A value of column `c` (index into `columns()`) for file `f` of `files`, row `r`: each
/// file covers an overlapping window of the sorted pool, so files have different ranges.
/// Some rows are null, float columns get NaNs, and some files hold only nulls (or, for
/// floats, only NaNs and nulls) in a column, so they have no bounds at all.
fn windowed(
    col: &Column,
    pool: &[Datum],
    c: usize,
    f: usize,
    files: usize,
    r: usize,
) -> Option<Datum> {
    let is_float = matches!(col.ty, PrimitiveType::Float | PrimitiveType::Double);
    if (r + c + f).is_multiple_of(6) || (c.is_multiple_of(2) && f == c % files && !is_float) {
        return None;
    }
    if is_float && (r % 5 == 2 || f == files - 1) {
        return Some(match col.ty {
            PrimitiveType::Float => Datum::float(f32::NAN),
            _ => Datum::double(f64::NAN),
        });
    }
    let n = pool.len();
    let start = f * n / files;
    let width = n.div_ceil(files) + 1;
    Some(pool[(start + (r * 3 + c) % width).min(n - 1)].clone())
}

/// The void table: rows drawn freely, `VOID_FILES_PER_APPEND` files per append.
fn void_batches(schema: &Schema) -> Vec<Vec<RecordBatch>> {
    let cols = columns();
    let pools: Vec<Vec<Datum>> = cols.iter().map(|c| pool(&c.ty)).collect();
    let files = APPENDS * VOID_FILES_PER_APPEND;
    let mut next_id = 0i64;
    (0..APPENDS)
        .map(|a| {
            (0..VOID_FILES_PER_APPEND)
                .map(|k| {
                    let f = a * VOID_FILES_PER_APPEND + k;
                    let mut rows = Rows::new(cols.len());
                    for r in 0..VOID_ROWS {
                        rows.ids.push(next_id);
                        next_id += 1;
                        for (c, col) in cols.iter().enumerate() {
                            rows.values[c].push(windowed(col, &pools[c], c, f, files, r));
                        }
                    }
                    rows.batch(schema)
                })
                .collect()
        })
        .collect()
}

/// A partitioned table: `GROUPS` partition groups per append, each taking, for every
/// partitioned column, the members of one transform class (values with the same
/// transform result, so one group is one partition), plus a group where every partitioned
/// column is null. Unpartitioned columns are filled as in the void table.
fn grouped_batches(
    schema: &Schema,
    transform: Transform,
    partitioned: &[&str],
) -> Vec<Vec<RecordBatch>> {
    let cols = columns();
    let pools: Vec<Vec<Datum>> = cols.iter().map(|c| pool(&c.ty)).collect();
    // Transform classes per column, ordered by their smallest member.
    let classes: Vec<Vec<Vec<Datum>>> = cols
        .iter()
        .zip(&pools)
        .map(|(col, pool)| {
            if !partitioned.contains(&col.name) {
                return Vec::new();
            }
            let mut classes: Vec<(Datum, Vec<Datum>)> = Vec::new();
            for v in pool
                .iter()
                .filter(|v| pyiceberg_reads_partition(&transform, v))
            {
                let key = transform.apply(Some(v)).unwrap().expect("non-null result");
                match classes.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, members)) => members.push(v.clone()),
                    None => classes.push((key, vec![v.clone()])),
                }
            }
            classes.into_iter().map(|(_, m)| m).collect()
        })
        .collect();
    let groups = APPENDS * GROUPS;
    let mut next_id = 0i64;
    (0..APPENDS)
        .map(|a| {
            let mut rows = Rows::new(cols.len());
            for g in 0..=GROUPS {
                let q = a * GROUPS + g;
                let null_group = g == GROUPS;
                let nrows = if null_group { 2 } else { GROUP_ROWS };
                for r in 0..nrows {
                    rows.ids.push(next_id);
                    next_id += 1;
                    for (c, col) in cols.iter().enumerate() {
                        let v = if !partitioned.contains(&col.name) {
                            windowed(col, &pools[c], c, q.min(groups - 1), groups, r)
                        } else if null_group {
                            None
                        } else {
                            let cls = &classes[c];
                            let j = if cls.len() >= groups {
                                q * cls.len() / groups
                            } else {
                                (q + c) % cls.len()
                            };
                            let members = &cls[j];
                            Some(members[(r + c + q) % members.len()].clone())
                        };
                        rows.values[c].push(v);
                    }
                }
            }
            vec![rows.batch(schema)]
        })
        .collect()
}

/// Writes the appends (each a list of `write_data_files` calls committed together) and
/// returns the metadata location and the number of data files.
async fn build_table(
    dir: &std::path::Path,
    spec_of: impl Fn(&Schema) -> PartitionSpec,
    appends: Vec<Vec<RecordBatch>>,
) -> (String, usize, usize) {
    let location = format!("file://{}/db/t", dir.display());
    let io = FileIo::from_location(&location, &Default::default()).unwrap();
    let env = DeterministicEnvironment::new(1_700_000_000_000, 1000, 7);
    let s = schema();
    let mut creation = TableCreation::new(location.clone(), s.clone());
    creation.spec = spec_of(&s);
    let mut table: Table = create_table(&io, creation, &env).await.unwrap();
    let mut files = 0;
    let mut rows = 0;
    for (a, calls) in appends.into_iter().enumerate() {
        let options =
            iceberg_write::WriteOptions::from_table_properties(&table.metadata.properties)
                .unwrap()
                .with_task_id(a as u64);
        let mut data_files = Vec::new();
        for (k, batch) in calls.iter().enumerate() {
            rows += batch.num_rows();
            let written = iceberg_write::write_data_files(
                &io,
                &table.metadata.location,
                std::slice::from_ref(batch),
                &s,
                table.metadata.default_spec().unwrap(),
                None,
                &options.clone().with_partition_id(k as u32),
            )
            .await
            .unwrap();
            data_files.extend(written);
        }
        files += data_files.len();
        let result = prepare_append(&io, &table, data_files, Default::default(), &env)
            .await
            .unwrap();
        let loc = write_metadata_file(
            &io,
            &result.metadata,
            table.metadata_location.as_deref(),
            &env,
        )
        .await
        .unwrap();
        table = Table::load(&io, &loc).await.unwrap();
    }
    (table.metadata_location.clone().unwrap(), files, rows)
}

/// Argv: the metadata location, then JSON `{"columns": [{"name", "kind"}], "max_per_column"}`.
/// Prints a JSON report: rows and files of the full scan, predicates run, how many pruned a
/// file, and every predicate whose scan lost or invented a row (or pruned a file holding a
/// matching row).
const CHECK: &str = r##"
import json, math, struct, sys, time
import datetime as dt
import decimal
from decimal import Decimal
from uuid import UUID

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg import expressions as E
from pyiceberg.conversions import from_bytes
from pyiceberg.utils import datetime as pdt
from pyiceberg.table import StaticTable

try:
    from pyiceberg.table import _to_arrow_via_file_scan_tasks as via_tasks
except ImportError:  # another PyIceberg: plan twice
    via_tasks = None

start = time.time()
decimal.getcontext().prec = 80  # decimal(38, 10) neighbours need 38 digits
loc, cfg = sys.argv[1], json.loads(sys.argv[2])
K = cfg["max_per_column"]
t = StaticTable.from_metadata(loc)
full = t.scan().to_arrow()
ids = full.column("id")
all_files = len(list(t.scan().plan_files()))
data_files = [task.file for task in t.scan().plan_files()]


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path


# Row ids of each data file, to name a file pruned although it holds a matching row.
file_ids = {f.file_path: set(pq.read_table(local(f.file_path), columns=["id"]).column("id").to_pylist()) for f in data_files}


def plain(col):
    """The column without extension types (uuid), as arrays pyarrow compute accepts."""
    if isinstance(col.type, pa.BaseExtensionType):
        return pa.chunked_array([c.storage for c in col.chunks], type=col.type.storage_type)
    return col


def is_nan(v):
    return isinstance(v, float) and math.isnan(v)


def key(v):
    """Distinct -0.0 and +0.0; everything else by value."""
    if isinstance(v, float):
        return (v, math.copysign(1.0, v))
    return (v,)


def py(kind, v):
    """A value as PyIceberg literals take it."""
    if kind == "uuid" and isinstance(v, bytes):
        return UUID(bytes=v)
    return v


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_step(x, up):
    if math.isinf(x) and (x > 0) == up:
        return None
    if x == 0.0:
        tiny = struct.unpack("<f", struct.pack("<I", 1))[0]
        return tiny if up else -tiny
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits += 1 if (x > 0) == up else -1
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def step(kind, ps, v, up):
    """The next value above (`up`) or below `v` in the column's order, or None."""
    d = 1 if up else -1
    try:
        if kind in ("int", "long"):
            r = v + d
            return r if kind == "int" or -(2**63) <= r < 2**63 else None
        if kind == "float":
            return f32_step(v, up)
        if kind == "double":
            if math.isinf(v) and (v > 0) == up:
                return None
            return math.nextafter(v, math.inf if up else -math.inf)
        if kind == "decimal":
            precision, scale = ps
            r = v + d * Decimal(1).scaleb(-scale)
            return r if abs(r.scaleb(scale)) < Decimal(10) ** precision else None
        if kind == "date":
            return v + dt.timedelta(days=d)
        if kind in ("timestamp", "timestamptz"):
            return v + dt.timedelta(microseconds=d)
        if kind == "time":
            m = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond + d
            if not 0 <= m < 86_400_000_000:
                return None
            s, us = divmod(m, 1_000_000)
            return dt.time(s // 3600, s // 60 % 60, s % 60, us)
        if kind in ("string", "binary"):
            if up:
                return v + ("\x00" if kind == "string" else b"\x00")
            return v[:-1] if len(v) else None
        if kind in ("fixed", "uuid"):
            n = len(v)
            r = int.from_bytes(v, "big") + d
            return r.to_bytes(n, "big") if 0 <= r < 2 ** (8 * n) else None
    except (OverflowError, ValueError):
        return None
    return None


def usable(kind, v):
    """Whether PyIceberg binds `v` as a value of the column's type. It turns int literals out
    of the int range, and float infinities, into below-min/above-max markers, and then
    mis-filters `in` (out-of-range ints wrap) and drops infinities: not what is tested here."""
    if v is None:
        return False
    if kind == "int":
        return -(2**31) <= v < 2**31
    if kind == "float":
        return not math.isinf(v)
    return True


def to_bytes(kind, v):
    """uuid values as 16 bytes (pyarrow's storage); everything else unchanged."""
    if kind == "uuid" and isinstance(v, UUID):
        return v.bytes
    return v


def scalar(col, kind, v):
    if kind in ("int", "long"):
        return pa.scalar(v, pa.int64())
    if kind == "uuid":
        return pa.scalar(to_bytes(kind, v), col.type)
    return pa.scalar(v, col.type)


CMP = {
    "==": (pc.equal, E.EqualTo),
    "<": (pc.less, E.LessThan),
    "<=": (pc.less_equal, E.LessThanOrEqual),
    ">": (pc.greater, E.GreaterThan),
    ">=": (pc.greater_equal, E.GreaterThanOrEqual),
}


def predicate(name, kind, col, op, v):
    """(PyIceberg expression, pyarrow mask) of one predicate."""
    if op == "is_null":
        return E.IsNull(name), pc.is_null(col)
    if op == "not_null":
        return E.NotNull(name), pc.is_valid(col)
    if op == "is_nan":
        return E.IsNaN(name), pc.is_nan(col)
    if op == "not_nan":
        return E.NotNaN(name), pc.invert(pc.is_nan(col))
    if op == "starts_with":
        return E.StartsWith(name, v), pc.starts_with(col, pattern=v)
    if op == "not_starts_with":
        return E.NotStartsWith(name, v), pc.invert(pc.starts_with(col, pattern=v))
    if op == "in":
        if kind in ("int", "long"):
            mask = pc.is_in(pc.cast(col, pa.int64()), value_set=pa.array(v, pa.int64()))
        else:
            mask = pc.is_in(col, value_set=pa.array([to_bytes(kind, x) for x in v], col.type))
        return E.In(name, {py(kind, x) for x in v}), mask
    arrow_fn, expr = CMP[op]
    return expr(name, py(kind, v)), arrow_fn(col, scalar(col, kind, v))


def scan(expr, kind):
    """(paths of the files planned, sorted row ids read or None where PyIceberg cannot read)."""
    s = t.scan(row_filter=expr)
    tasks = list(s.plan_files())
    try:
        res = via_tasks(s, s.projection(), tasks) if via_tasks else s.to_arrow()
    except pa.ArrowNotImplementedError:
        # PyIceberg 0.12 with pyarrow's uuid extension type cannot filter uuid columns at
        # all (not even is_null); its pruning is still checked from the planned files.
        if kind != "uuid":
            raise
        return [task.file.file_path for task in tasks], None
    return [task.file.file_path for task in tasks], sorted(res.column("id").to_pylist())


def pick(items, n):
    """At most `n` of `items`, spread evenly, order kept."""
    if len(items) <= n:
        return items
    return [items[i * len(items) // n] for i in range(n)]


def file_minmax(path, name):
    """(min, max) of the non-null, non-NaN values of `name` in one data file, or None."""
    col = pq.read_table(local(path), columns=[name]).column(name)
    vals = [v for v in col.to_pylist() if v is not None and not is_nan(v)]
    if not vals:
        return None
    vals.sort(key=key)
    return vals[0], vals[-1]


def bound(kind, field, raw):
    """A file's bound as PyIceberg decodes it, in the Python type of the column's values."""
    if raw is None:
        return None
    v = from_bytes(field.field_type, raw)
    if kind == "date":
        return pdt.days_to_date(v)
    if kind == "time":
        return pdt.micros_to_time(v)
    if kind == "timestamp":
        return pdt.micros_to_timestamp(v)
    if kind == "timestamptz":
        return pdt.micros_to_timestamptz(v)
    return to_bytes(kind, v)


def literals(name, kind, ps):
    """Literal predicates of one column, the ones at the bounds first."""
    col = full.column(name)
    vals = sorted({key(v): v for v in col.to_pylist() if v is not None and not is_nan(v)}.values(), key=key)
    if kind in ("uuid",):
        vals = [to_bytes(kind, v) if isinstance(v, UUID) else v for v in vals]
    at_bounds, others = [], []
    def up(v):
        return step(kind, ps, v, True)

    def down(v):
        return step(kind, ps, v, False)

    field = t.schema().find_field(name)
    for f in data_files:
        lo = bound(kind, field, (f.lower_bounds or {}).get(field.field_id))
        hi = bound(kind, field, (f.upper_bounds or {}).get(field.field_id))
        if lo is not None:
            at_bounds += [("<", lo), ("<=", lo), ("==", lo), ("<=", down(lo)), ("==", down(lo))]
        if hi is not None:
            at_bounds += [(">", hi), (">=", hi), ("==", hi), (">=", up(hi)), ("==", up(hi))]
        mm = file_minmax(f.file_path, name)
        if mm is not None:
            lo2, hi2 = mm
            if kind == "uuid":
                lo2, hi2 = to_bytes(kind, lo2), to_bytes(kind, hi2)
            others += [("==", lo2), ("<", lo2), ("<=", down(lo2)), ("==", hi2), (">", hi2), (">=", up(hi2))]
    if vals:
        lo, hi = vals[0], vals[-1]
        at_bounds += [("<", lo), ("<=", down(lo)), ("==", down(lo)), (">", hi), (">=", up(hi)), ("==", up(hi))]
        for v in pick(vals, 8):
            others += [("==", v), ("<", v), (">=", v), ("==", up(v))]
    if kind in ("float", "double"):
        at_bounds += [(op, z) for z in (-0.0, 0.0) for op in ("==", "<", "<=", ">", ">=")]
    seen, out = set(), ([], [])
    for i, (op, v) in enumerate(at_bounds + others):
        if v is None or (kind == "float" and math.isinf(v)):
            continue
        k = (op, key(v))
        if k not in seen:
            seen.add(k)
            out[i >= len(at_bounds)].append((op, v))
    return out, vals


report_cols, failures = [], []
total = pruned_total = plan_only = 0
for c in cfg["columns"]:
    name, kind = c["name"], c["kind"]
    field = t.schema().find_field(name)
    ps = (getattr(field.field_type, "precision", 0), getattr(field.field_type, "scale", 0))
    col = plain(full.column(name))
    (at_bounds, others), vals = literals(name, kind, ps)
    if kind == "boolean":
        preds = [(op, v) for op, v in at_bounds + others if op == "=="]
    else:
        n_others = min(len(others), K // 3)
        preds = pick(at_bounds, K - n_others) + pick(others, n_others)
    preds += [("is_null", None), ("not_null", None)]
    if vals:
        absent = [x for x in (step(kind, ps, vals[0], False), step(kind, ps, vals[-1], True)) if x is not None]
        absent = [x for x in absent if usable(kind, x)]
        preds += [("in", [v for v in pick(vals, 4) if usable(kind, v)] + absent)]
        if absent:
            preds += [("in", absent)]
    if kind in ("float", "double"):
        preds += [("is_nan", None), ("not_nan", None)]
    if kind == "string":
        longs = [v for v in vals if len(v) > 16]
        prefixes = {p for v in longs for p in (v[:1], v[:3], v[:16], v[:17])}
        for f in data_files:
            hi = bound(kind, field, (f.upper_bounds or {}).get(field.field_id))
            if hi is not None and len(hi) == 16:
                prefixes.add(hi)  # a truncated, incremented upper bound
        preds += [("starts_with", p) for p in pick(sorted(prefixes), 10)]
        preds += [("starts_with", "b"), ("starts_with", "\U0010ffff" * 16)]
        preds += [("not_starts_with", p) for p in ("a", "abc", vals[-1][:16])]
    n = np_ = nonempty = empty = 0
    for op, v in preds:
        label = f"{name} {op} {v!r}"
        try:
            expr, mask = predicate(name, kind, col, op, v)
            want = sorted(pc.filter(ids, mask).to_pylist())
            planned, got = scan(expr, kind)
        except Exception as e:  # noqa: BLE001 - reported to the Rust side
            failures.append({"predicate": label, "error": f"{type(e).__name__}: {e}"})
            continue
        n += 1
        if len(planned) < all_files:
            np_ += 1
        if want:
            nonempty += 1
        else:
            empty += 1
        wanted = set(want)
        lost_files = sorted(p for p, rows in file_ids.items() if rows & wanted and p not in planned)
        if got is None:
            plan_only += 1
        if lost_files or (got is not None and got != want):
            failures.append({
                "predicate": label,
                "files_planned": len(planned),
                "wrongly_pruned": [p.rsplit("/data/", 1)[-1] for p in lost_files],
                "want": len(want),
                "got": None if got is None else len(got),
                "missing": None if got is None else sorted(wanted - set(got))[:8],
                "extra": None if got is None else sorted(set(got) - wanted)[:8],
            })
    total += n
    pruned_total += np_
    report_cols.append({"name": name, "predicates": n, "pruned": np_, "nonempty": nonempty, "empty": empty})

print(json.dumps({
    "rows": full.num_rows,
    "files": all_files,
    "predicates": total,
    "pruned": pruned_total,
    "plan_only": plan_only,
    "failures": failures,
    "columns": report_cols,
    "seconds": time.time() - start,
}, default=repr))
"##;

/// Builds the table, runs the checks in PyIceberg, and asserts on the report.
async fn check(test: &str, transform: Option<Transform>, partitioned: &[&str]) {
    let Some(python) = external::python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let s = schema();
    let spec_transform = transform.clone().unwrap_or(Transform::Void);
    let spec_of = |s: &Schema| {
        let mut b = PartitionSpec::builder(s);
        for name in partitioned {
            b = b.add(name, spec_transform.clone()).unwrap();
        }
        b.build().unwrap()
    };
    let appends = match transform.clone() {
        None => void_batches(&s),
        Some(t) => grouped_batches(&s, t, partitioned),
    };
    let (loc, files, rows) = Box::pin(build_table(dir.path(), spec_of, appends)).await;
    assert!(files >= 6, "{test}: only {files} data files");

    let cols = columns();
    let predicate_cols: Vec<Value> = cols
        .iter()
        .filter(|c| transform.is_none() || partitioned.contains(&c.name))
        .map(|c| serde_json::json!({"name": c.name, "kind": c.kind}))
        .collect();
    let config = serde_json::json!({ "columns": predicate_cols, "max_per_column": 20 });
    let out = external::run_json(&python, CHECK, &[&loc, &config.to_string()]);

    assert_eq!(out["rows"], rows, "{test}: full scan row count");
    assert_eq!(
        out["files"], files,
        "{test}: files planned for the full scan"
    );
    let failures = out["failures"].as_array().unwrap();
    assert!(
        failures.is_empty(),
        "{test}: {} predicates lost or invented rows (of {}):\n{}",
        failures.len(),
        out["predicates"],
        failures
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Not vacuous: every column saw predicates that select rows, that select none, and
    // that let PyIceberg skip files.
    let reported: Vec<&str> = out["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(reported.len(), predicate_cols.len(), "{test}: {reported:?}");
    for c in out["columns"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let boolean = name == "b";
        let min = if boolean { 4 } else { 20 };
        assert!(c["predicates"].as_u64().unwrap() >= min, "{test}: {c}");
        assert!(c["nonempty"].as_u64().unwrap() > 0, "{test}: {c}");
        assert!(boolean || c["empty"].as_u64().unwrap() > 0, "{test}: {c}");
        assert!(
            c["pruned"].as_u64().unwrap() > 0,
            "{test}: no predicate on {name} pruned a file: {c}"
        );
    }
    eprintln!(
        "{test}: {} predicates over {} files, {} pruned at least one file, {:.1}s in python",
        out["predicates"],
        files,
        out["pruned"],
        out["seconds"].as_f64().unwrap_or(0.0)
    );
}

#[tokio::test]
async fn pyiceberg_pruning_void_all_types() {
    check(
        "pyiceberg_pruning_void_all_types",
        None,
        &["i", "s", "tstz"],
    )
    .await;
}

/// Every column but `u`: PyIceberg 0.12 compares a uuid identity partition value (a `UUID`)
/// with the literal's bytes, so it prunes every file for `u == x` and fails on `u < x`, on
/// tables it wrote itself too.
const IDENTITY: &[&str] = &[
    "b", "i", "l", "f", "d", "dec9", "dec38", "dt", "tm", "ts", "tstz", "s", "fx", "bin",
];

#[tokio::test]
async fn pyiceberg_pruning_identity() {
    check(
        "pyiceberg_pruning_identity",
        Some(Transform::Identity),
        IDENTITY,
    )
    .await;
}

#[tokio::test]
async fn pyiceberg_pruning_bucket() {
    let cols = &[
        "i", "l", "dec9", "dec38", "dt", "tm", "ts", "tstz", "s", "u", "fx", "bin",
    ];
    check("pyiceberg_pruning_bucket", Some(Transform::Bucket(4)), cols).await;
}

#[tokio::test]
async fn pyiceberg_pruning_truncate() {
    let cols = &["i", "l", "dec9", "dec38", "s", "bin"];
    check(
        "pyiceberg_pruning_truncate",
        Some(Transform::Truncate(3)),
        cols,
    )
    .await;
}

#[tokio::test]
async fn pyiceberg_pruning_year() {
    check(
        "pyiceberg_pruning_year",
        Some(Transform::Year),
        &["dt", "ts", "tstz"],
    )
    .await;
}

#[tokio::test]
async fn pyiceberg_pruning_month() {
    check(
        "pyiceberg_pruning_month",
        Some(Transform::Month),
        &["dt", "ts", "tstz"],
    )
    .await;
}

#[tokio::test]
async fn pyiceberg_pruning_day() {
    check(
        "pyiceberg_pruning_day",
        Some(Transform::Day),
        &["dt", "ts", "tstz"],
    )
    .await;
}

#[tokio::test]
async fn pyiceberg_pruning_hour() {
    check(
        "pyiceberg_pruning_hour",
        Some(Transform::Hour),
        &["ts", "tstz"],
    )
    .await;
}
