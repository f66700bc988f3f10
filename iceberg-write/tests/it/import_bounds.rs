//! Bounds of files other writers wrote, as imported: they must hold in every reader's order
//! and over every row group, or be left out (a wrong bound makes a reader skip rows).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::datum::uuid_order::java_uuid_cmp;
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{PartitionSpec, Schema};
use iceberg_write::arrow_array::{FixedSizeBinaryArray, RecordBatch};
use iceberg_write::arrow_schema::{DataType, Field, Schema as ArrowSchema};
use iceberg_write::import::{ImportTarget, PartitionSource, data_file_from_parquet};
use iceberg_write::parquet::arrow::ArrowWriter;
use iceberg_write::parquet::data_type::{ByteArray, ByteArrayType};
use iceberg_write::parquet::file::properties::WriterProperties;
use iceberg_write::parquet::file::writer::SerializedFileWriter;
use iceberg_write::parquet::schema::parser::parse_message_type;

use crate::common::options;

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn one_column(ty: PrimitiveType) -> Schema {
    Schema::new(0, vec![NestedField::optional(1, "c", ty)]).unwrap()
}

/// The imported record of a one-column file `bytes` for a table of `schema`.
async fn import(schema: &Schema, bytes: Vec<u8>) -> iceberg_spec::DataFile {
    let io = FileIo::memory();
    let path = "memory://x/f.parquet";
    io.put(path, Bytes::from(bytes)).await.unwrap();
    let target = ImportTarget::new(schema, &PartitionSpec::unpartitioned(), &options());
    data_file_from_parquet(&io, path, &target, &PartitionSource::Given(Vec::new()))
        .await
        .unwrap()
        .data_file
}

/// A file of one uuid column (FLBA(16), field id 1) as parquet-rs and pyarrow write it, with
/// unsigned-byte-order statistics.
fn uuid_file(values: &[[u8; 16]]) -> Vec<u8> {
    let field = Field::new("c", DataType::FixedSizeBinary(16), true).with_metadata(HashMap::from(
        [("PARQUET:field_id".to_string(), "1".to_string())],
    ));
    let schema = Arc::new(ArrowSchema::new(vec![field]));
    let array = FixedSizeBinaryArray::try_from_iter(values.iter().map(|v| v.to_vec())).unwrap();
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(array)]).unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

/// Another writer's uuid statistics are in the spec's unsigned byte order; Java compares
/// uuids as two signed longs. Bounds are kept only where both orders agree on every value
/// between them, so no Java scan skips the file for a value it holds.
#[test]
fn imported_uuid_bounds_hold_in_javas_order_or_are_left_out() {
    run(async {
        let schema = one_column(PrimitiveType::Uuid);
        let mut low_8_set = [0u8; 16];
        low_8_set[8] = 0x80;
        let mut one = [0u8; 16];
        one[15] = 1;
        let mut first_byte_set = [0u8; 16];
        first_byte_set[0] = 0x80;
        for values in [vec![one, low_8_set], vec![one, first_byte_set]] {
            let f = import(&schema, uuid_file(&values)).await;
            assert_eq!(f.value_counts.get(&1), Some(&2));
            for v in &values {
                let v = uuid::Uuid::from_bytes(*v);
                let bound = |b: Option<&Vec<u8>>| b.map(|b| uuid::Uuid::from_slice(b).unwrap());
                if let Some(lower) = bound(f.lower_bounds.get(&1)) {
                    assert_ne!(
                        java_uuid_cmp(&lower, &v),
                        std::cmp::Ordering::Greater,
                        "{v}"
                    );
                }
                if let Some(upper) = bound(f.upper_bounds.get(&1)) {
                    assert_ne!(java_uuid_cmp(&upper, &v), std::cmp::Ordering::Less, "{v}");
                }
            }
            assert!(!f.lower_bounds.contains_key(&1) && !f.upper_bounds.contains_key(&1));
        }
        // Same first 8 bytes, same sign class: both orders agree, the bounds stay.
        let mut high = [0x10u8; 16];
        high[15] = 0x20;
        let f = import(&schema, uuid_file(&[[0x10; 16], high])).await;
        assert_eq!(f.lower_bounds.get(&1), Some(&vec![0x10; 16]));
        assert_eq!(f.upper_bounds.get(&1), Some(&high.to_vec()));
    });
}

/// A string column whose row groups hold bytes that are not UTF-8 (Hive and Spark do not
/// check): the chunk's statistics cannot be decoded, so the file gets no bounds rather than
/// the other row groups' bounds, which would exclude that chunk's rows.
#[test]
fn undecodable_string_statistics_leave_the_file_without_bounds() {
    run(async {
        let parquet_schema =
            Arc::new(parse_message_type("message m { optional binary c (STRING) = 1; }").unwrap());
        let mut buf = Vec::new();
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(&mut buf, parquet_schema, props).unwrap();
        for group in [vec![&b"a\xff"[..]], vec![&b"b"[..], &b"c"[..]]] {
            let mut rg = w.next_row_group().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            let values: Vec<ByteArray> =
                group.iter().map(|v| ByteArray::from(v.to_vec())).collect();
            let defs = vec![1i16; values.len()];
            col.typed::<ByteArrayType>()
                .write_batch(&values, Some(&defs), None)
                .unwrap();
            col.close().unwrap();
            rg.close().unwrap();
        }
        w.close().unwrap();
        let f = import(&one_column(PrimitiveType::String), buf).await;
        assert_eq!(f.record_count, 3);
        assert_eq!(f.value_counts.get(&1), Some(&3));
        assert!(f.lower_bounds.is_empty(), "{:?}", f.lower_bounds);
        assert!(f.upper_bounds.is_empty(), "{:?}", f.upper_bounds);
    });
}
