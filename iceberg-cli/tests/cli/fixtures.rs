//! Input files in every format.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};

use crate::Env;

pub(crate) const CSV: &str = "id,ts,name,amount\n\
    1,2024-01-01T10:00:00,a,1.5\n\
    2,2024-01-02T11:00:00,,2.5\n\
    3,2024-01-02T12:00:00,c,\n";

pub(crate) const NDJSON: &str = "{\"id\": 4, \"ts\": \"2024-01-03T00:00:00\", \"name\": \"d\", \"amount\": 3.0}\n\
    {\"id\": 5, \"ts\": \"2024-01-03T01:00:00\", \"name\": null}\n";

/// A batch matching the CSV's columns (`ts` as text is not needed: Parquet gets real types).
pub(crate) fn events(ids: &[i64]) -> RecordBatch {
    use arrow_array::{Float64Array, TimestampMicrosecondArray};
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new(
            "ts",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
            true,
        ),
        Field::new("name", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
    ]));
    let n = ids.len();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(TimestampMicrosecondArray::from(
            ids.iter()
                .map(|i| 1_704_067_200_000_000 + i * 3_600_000_000)
                .collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            ids.iter().map(|i| format!("n{i}")).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(vec![1.25; n])),
    ];
    RecordBatch::try_new(schema, cols).unwrap()
}

pub(crate) fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batches[0].schema(), None).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

pub(crate) fn write_ipc(path: &Path, batches: &[RecordBatch]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(f, &batches[0].schema()).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

/// `events.parquet` with ids `ids`.
pub(crate) fn parquet(env: &Env, name: &str, ids: &[i64]) -> PathBuf {
    let p = env.path(name);
    write_parquet(&p, &[events(ids)]);
    p
}

/// A Parquet file whose `id` is text: a schema mismatch for an events table.
pub(crate) fn parquet_with_text_id(env: &Env, name: &str) -> PathBuf {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, true)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(vec!["x"]))]).unwrap();
    let p = env.path(name);
    write_parquet(&p, &[b]);
    p
}

/// A Parquet file with a struct column `st {x int, y string}` after `id` and `tags`.
pub(crate) fn nested_parquet(env: &Env, name: &str) -> PathBuf {
    let st_fields = Fields::from(vec![
        Field::new("x", DataType::Int32, false),
        Field::new("y", DataType::Utf8, true),
    ]);
    let st = StructArray::new(
        st_fields.clone(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(StringArray::from(vec!["a", "b"])),
        ],
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("st", DataType::Struct(st_fields), true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(st),
            Arc::new(StringArray::from(vec!["p", "q"])),
        ],
    )
    .unwrap();
    let p = env.path(name);
    write_parquet(&p, &[b]);
    p
}
