//! Which columns of a file get a dictionary: the ones where it pays off on the file's first
//! page of rows, as parquet-mr decides for Java (`FallbackValuesWriter`: after the first page,
//! a dictionary whose indices plus entries are not smaller than the plain values is dropped
//! and the page is written plain).
//!
//! parquet-rs has no such check: it interns every value until the dictionary reaches its size
//! limit, then falls back, in every row group. For a column of mostly distinct values (ids,
//! timestamps, measurements, free text) that costs the hashing of up to a 2 MiB dictionary
//! per row group and leaves a dictionary page plus dictionary-encoded pages nobody gains
//! from. Measured on the benchmark events (BENCHMARKS.md section 1): 28% less encoding time
//! and 15% smaller files.

use std::collections::HashSet;
use std::hash::Hash;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use foldhash::fast::FixedState;
use iceberg_spec::PrimitiveType;
use parquet::schema::types::ColumnPath;

/// Fewer non-null sample values than this decide nothing: the column keeps its dictionary
/// (and parquet-rs's own fallback), since a few rows say little about a file.
const MIN_SAMPLE: usize = 1_000;

/// The leaf columns of `batch` to write without a dictionary: those whose first
/// `sample_rows` values would not be smaller dictionary-encoded (indices and dictionary
/// entries) than plain. Only top-level and struct leaves of types parquet dictionary-encodes
/// are judged; lists, maps, booleans and Arrow dictionary arrays keep the default.
pub(crate) fn plain_columns(batch: &RecordBatch, sample_rows: usize) -> Vec<ColumnPath> {
    let rows = batch.num_rows().min(sample_rows.max(1));
    let mut out = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let sample = column.slice(0, rows);
        walk(&sample, &mut vec![field.name().clone()], &mut out);
    }
    out
}

fn walk(array: &ArrayRef, path: &mut Vec<String>, out: &mut Vec<ColumnPath>) {
    if let DataType::Struct(fields) = array.data_type() {
        let s = array.as_struct();
        for (f, child) in fields.iter().zip(s.columns()) {
            path.push(f.name().clone());
            walk(child, path, out);
            path.pop();
        }
        return;
    }
    if let Some(sizes) = sample_sizes(array.as_ref())
        && !dictionary_pays_off(&sizes)
    {
        out.push(ColumnPath::new(path.clone()));
    }
}

/// What the rule needs of a sample: its non-null values, how many distinct, and the plain
/// encoded bytes of all of them and of the distinct ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SampleSizes {
    values: usize,
    distinct: usize,
    plain_bytes: usize,
    dictionary_bytes: usize,
}

/// parquet-mr's `isCompressionSatisfying`: the RLE/bit-packed indices plus the dictionary
/// page are smaller than the plain values. Too small a sample keeps the dictionary.
fn dictionary_pays_off(s: &SampleSizes) -> bool {
    if s.values < MIN_SAMPLE {
        return true;
    }
    let bit_width = usize::BITS - s.distinct.saturating_sub(1).leading_zeros();
    let indices = (s.values * bit_width as usize).div_ceil(8);
    indices + s.dictionary_bytes < s.plain_bytes
}

/// The sizes of a sample, or `None` for types this rule leaves alone.
fn sample_sizes(array: &dyn Array) -> Option<SampleSizes> {
    let count = array.len() - array.null_count();
    match array.data_type() {
        DataType::Utf8 => Some(byte_sizes(
            array.as_string::<i32>().iter().flatten().map(str::as_bytes),
            count,
        )),
        DataType::LargeUtf8 => Some(byte_sizes(
            array.as_string::<i64>().iter().flatten().map(str::as_bytes),
            count,
        )),
        DataType::Utf8View => Some(byte_sizes(
            array.as_string_view().iter().flatten().map(str::as_bytes),
            count,
        )),
        DataType::Binary => Some(byte_sizes(array.as_binary::<i32>().iter().flatten(), count)),
        DataType::LargeBinary => Some(byte_sizes(array.as_binary::<i64>().iter().flatten(), count)),
        DataType::BinaryView => Some(byte_sizes(array.as_binary_view().iter().flatten(), count)),
        DataType::FixedSizeBinary(w) => {
            let a = array.as_fixed_size_binary();
            Some(fixed_sizes(
                a.iter().flatten(),
                count,
                usize::try_from(*w).ok()?,
            ))
        }
        DataType::Decimal128(p, _) | DataType::Decimal256(p, _) => {
            fixed_width_sizes(array, decimal_plain_width(*p))
        }
        t if t.is_primitive() => fixed_width_sizes(array, t.primitive_width()?),
        _ => None,
    }
}

/// Plain sizes of byte-array values: a 4-byte length before each.
fn byte_sizes<'a>(values: impl Iterator<Item = &'a [u8]>, count: usize) -> SampleSizes {
    sizes(values, count, |v| 4 + v.len())
}

/// Plain sizes of fixed-width values stored `width` bytes each.
fn fixed_sizes<T: Hash + Eq>(
    values: impl Iterator<Item = T>,
    count: usize,
    width: usize,
) -> SampleSizes {
    sizes(values, count, |_| width)
}

/// The sizes of `values` (`count` of them), each `plain_size` bytes when written plain. The
/// set is sized for every value up front: a file's sample is judged once, and growing the set cost more than
/// the hashing (a fifth of the rule's time at 1,000 files).
fn sizes<T: Hash + Eq>(
    values: impl Iterator<Item = T>,
    count: usize,
    plain_size: impl Fn(&T) -> usize,
) -> SampleSizes {
    let mut seen: HashSet<T, FixedState> =
        HashSet::with_capacity_and_hasher(count, FixedState::default());
    let (mut n, mut plain, mut dict) = (0, 0, 0);
    for v in values {
        let size = plain_size(&v);
        n += 1;
        plain += size;
        if seen.insert(v) {
            dict += size;
        }
    }
    SampleSizes {
        values: n,
        distinct: seen.len(),
        plain_bytes: plain,
        dictionary_bytes: dict,
    }
}

/// A primitive array's non-null values, stored `width` each: compared as integers of their
/// Arrow width (one machine word, not a byte slice), or as bytes past 16.
fn fixed_width_sizes(array: &dyn Array, width: usize) -> Option<SampleSizes> {
    let data = array.to_data();
    let arrow_width = data.data_type().primitive_width()?;
    let buffer = data.buffers().first()?;
    let start = data.offset() * arrow_width;
    let values = buffer
        .as_slice()
        .get(start..start + data.len() * arrow_width)?;
    let valid: Vec<&[u8]> = match data.nulls() {
        Some(nulls) => values
            .chunks_exact(arrow_width)
            .enumerate()
            .filter(|(i, _)| nulls.is_valid(*i))
            .map(|(_, v)| v)
            .collect(),
        None => values.chunks_exact(arrow_width).collect(),
    };
    let word = |v: &&[u8]| {
        let mut b = [0u8; 16];
        b[..v.len()].copy_from_slice(v);
        u128::from_le_bytes(b)
    };
    let count = valid.len();
    Some(match arrow_width {
        0..=8 => fixed_sizes(valid.iter().map(|v| word(v) as u64), count, width),
        9..=16 => fixed_sizes(valid.iter().map(word), count, width),
        _ => fixed_sizes(valid.into_iter(), count, width),
    })
}

/// Bytes a decimal of `precision` takes in Parquet (int32, int64, or the fewest bytes).
fn decimal_plain_width(precision: u8) -> usize {
    match precision {
        0..=9 => 4,
        10..=18 => 8,
        p => PrimitiveType::decimal_required_bytes(u32::from(p)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, StringArray, StructArray};
    use arrow_schema::{Field, Fields};

    use super::*;

    fn names(batch: &RecordBatch, rows: usize) -> Vec<String> {
        plain_columns(batch, rows)
            .iter()
            .map(|p| p.string())
            .collect()
    }

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn distinct_values_go_plain_and_repeated_ones_keep_the_dictionary() {
        let n = 20_000;
        let b = batch(vec![
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
            ),
            (
                "qty",
                Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i % 100))),
            ),
            (
                "text",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("value-{i}")),
                )),
            ),
            (
                "category",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("c{}", i % 50)),
                )),
            ),
        ]);
        assert_eq!(names(&b, 20_000), ["id", "text"]);
    }

    #[test]
    fn a_small_sample_keeps_every_dictionary() {
        let b = batch(vec![(
            "id",
            Arc::new(Int64Array::from_iter_values(0..999)) as ArrayRef,
        )]);
        assert!(names(&b, 20_000).is_empty());
        let b = batch(vec![(
            "id",
            Arc::new(Int64Array::from_iter_values(0..5000)) as ArrayRef,
        )]);
        // Only the first 500 rows are the sample.
        assert!(names(&b, 500).is_empty());
        assert_eq!(names(&b, 1000), ["id"]);
    }

    #[test]
    fn nulls_are_not_values() {
        // 1,500 rows of which 600 are values: too few to judge.
        let ids = Int64Array::from_iter((0..1500).map(|i| (i % 5 < 2).then_some(i)));
        let b = batch(vec![("id", Arc::new(ids) as ArrayRef)]);
        assert!(names(&b, 20_000).is_empty());
        let ids = Int64Array::from_iter((0..3000).map(|i| (i % 5 < 2).then_some(i)));
        let b = batch(vec![("id", Arc::new(ids) as ArrayRef)]);
        assert_eq!(names(&b, 20_000), ["id"]);
    }

    #[test]
    fn struct_leaves_are_judged_by_their_path() {
        let n = 4000;
        let fields = Fields::from(vec![
            Field::new("a", arrow_schema::DataType::Int64, false),
            Field::new("b", arrow_schema::DataType::Int32, false),
        ]);
        let s = StructArray::new(
            fields,
            vec![
                Arc::new(Int64Array::from_iter_values(0..n)),
                Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i % 3))),
            ],
            None,
        );
        let b = batch(vec![("s", Arc::new(s) as ArrayRef)]);
        assert_eq!(names(&b, 20_000), ["s.a"]);
    }

    #[test]
    fn the_rule_is_parquet_mrs() {
        // 1,024 values of 8 bytes, 512 distinct: 9-bit indices (1,152 bytes) plus a
        // 4,096-byte dictionary against 8,192 plain bytes: the dictionary stays.
        let s = SampleSizes {
            values: 1024,
            distinct: 512,
            plain_bytes: 8192,
            dictionary_bytes: 4096,
        };
        assert!(dictionary_pays_off(&s));
        // 1,024 distinct: 10-bit indices plus 8,192 bytes of dictionary.
        let s = SampleSizes {
            distinct: 1024,
            dictionary_bytes: 8192,
            ..s
        };
        assert!(!dictionary_pays_off(&s));
        // One distinct value: zero-width indices.
        let s = SampleSizes {
            distinct: 1,
            dictionary_bytes: 8,
            ..s
        };
        assert!(dictionary_pays_off(&s));
    }
}
