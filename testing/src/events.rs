//! The deterministic events data set (issue 4) that benchmarks and write tests use: seven
//! columns (`id`, `ts` over 30 days of 2024, `user_id`, 50 `category` values, `amount` with 1%
//! nulls, a 16-48 byte `payload`, `qty`), the same rows for the same count on every platform.

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringBuilder};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, TimestampMicrosecondArray};
use arrow_schema::{ArrowError, DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use iceberg_spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Transform};

/// Rows per generated batch.
pub const BATCH_ROWS: usize = 131_072;
/// 2024-01-01T00:00:00Z in microseconds.
pub const START_MICROS: i64 = 1_704_067_200_000_000;
/// Microseconds in a day.
pub const DAY_MICROS: i64 = 86_400_000_000;
/// Days the timestamps spread over.
pub const DAYS: i64 = 30;
/// Distinct `category` values.
const CATEGORIES: usize = 50;
/// The fixed seed.
const SEED: u64 = 0x1ceb_e125_eed5_0001;

/// SplitMix64: tiny, fast and identical on every platform and crate version.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next pseudo-random value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The Arrow schema of the generated batches (no field ids: aligned by name).
pub fn arrow_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("user_id", DataType::Int64, true),
        Field::new("category", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
        Field::new("payload", DataType::Utf8, true),
        Field::new("qty", DataType::Int32, true),
    ]))
}

/// The Iceberg schema of the events table.
pub fn iceberg_schema() -> Result<Schema, iceberg_spec::Error> {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            NestedField::optional(3, "user_id", PrimitiveType::Long),
            NestedField::optional(4, "category", PrimitiveType::String),
            NestedField::optional(5, "amount", PrimitiveType::Double),
            NestedField::optional(6, "payload", PrimitiveType::String),
            NestedField::optional(7, "qty", PrimitiveType::Int),
        ],
    )
}

/// The events table's `day(ts)` partition spec, the benchmarks' default layout.
pub fn day_spec(schema: &Schema) -> Result<PartitionSpec, iceberg_spec::Error> {
    PartitionSpec::builder(schema)
        .add("ts", Transform::Day)?
        .build()
}

/// `rows` rows in batches of [`BATCH_ROWS`], always the same for the same `rows`.
pub fn generate(rows: usize) -> Result<Vec<RecordBatch>, ArrowError> {
    let schema = arrow_schema();
    let categories: Vec<String> = (0..CATEGORIES)
        .map(|i| format!("category-{i:02}"))
        .collect();
    let mut rng = SplitMix64::new(SEED);
    let mut batches = Vec::new();
    let mut start = 0usize;
    let mut payload = String::with_capacity(48);
    while start < rows {
        let n = BATCH_ROWS.min(rows - start);
        let id = Int64Array::from_iter_values((start..start + n).map(|i| i as i64));
        let span = (DAYS * DAY_MICROS) as u64;
        let ts = TimestampMicrosecondArray::from_iter_values(
            (0..n).map(|_| START_MICROS + rng.below(span) as i64),
        )
        .with_timezone("UTC");
        let user_id = Int64Array::from_iter_values((0..n).map(|_| rng.below(1_000_000) as i64));
        let mut category = StringBuilder::with_capacity(n, n * 11);
        let mut amount = Float64Builder::with_capacity(n);
        let mut payloads = StringBuilder::with_capacity(n, n * 32);
        for _ in 0..n {
            category.append_value(&categories[rng.below(CATEGORIES as u64) as usize]);
            if rng.below(100) == 0 {
                amount.append_null();
            } else {
                amount.append_value(rng.below(10_000_000) as f64 / 100.0);
            }
            payload.clear();
            let len = 16 + rng.below(33);
            for _ in 0..len {
                payload.push(char::from(b'a' + rng.below(26) as u8));
            }
            payloads.append_value(&payload);
        }
        let qty = Int32Array::from_iter_values((0..n).map(|_| 1 + rng.below(1_000) as i32));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(id),
            Arc::new(ts),
            Arc::new(user_id),
            Arc::new(category.finish()),
            Arc::new(amount.finish()),
            Arc::new(payloads.finish()),
            Arc::new(qty),
        ];
        batches.push(RecordBatch::try_new(schema.clone(), columns)?);
        start += n;
    }
    Ok(batches)
}

/// The day (since the epoch) of a `ts` value, as `day(ts)` computes it.
pub fn day_of(micros: i64) -> i64 {
    micros.div_euclid(DAY_MICROS)
}
