//! Property tests: bounds bound the data, counts equal a naive recount, files read back.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::types::{NestedField, PrimitiveType};
use iceberg_spec::{Datum, PartitionSpec, Schema};
use iceberg_write::WriteOptions;
use iceberg_write::arrow_array::{
    Array, ArrayRef, BinaryArray, Decimal128Array, Float32Array, Float64Array, Int32Array,
    Int64Array, StringArray,
};
use iceberg_write::arrow_schema::Field;
use proptest::prelude::*;

use crate::common::*;

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

/// Writes one column (id 1) with `mode` and checks every metric law against `values`.
fn check(ty: PrimitiveType, array: ArrayRef, values: &[Option<Datum>], mode: &str) {
    let schema = Schema::new(0, vec![NestedField::optional(1, "c", ty.clone())]).unwrap();
    let mut props = BTreeMap::new();
    props.insert(
        "write.metadata.metrics.default".to_string(),
        mode.to_string(),
    );
    props.insert(
        "write.parquet.row-group-size-rows".to_string(),
        "7".to_string(),
    );
    props.insert("write.parquet.page-row-limit".to_string(), "3".to_string());
    let opts = WriteOptions::from_table_properties(&props).unwrap();
    let b = batch(
        vec![Field::new("c", array.data_type().clone(), true)],
        vec![array.clone()],
    );
    run(async {
        let io = FileIo::memory();
        let files = write(&io, &[b], &schema, &PartitionSpec::unpartitioned(), &opts).await;
        if values.is_empty() {
            assert!(files.is_empty());
            return;
        }
        let f = &files[0];
        let nulls = values.iter().filter(|v| v.is_none()).count() as i64;
        let nans = values
            .iter()
            .filter(|v| v.as_ref().is_some_and(Datum::is_nan))
            .count() as i64;
        assert_eq!(f.record_count, values.len() as i64);
        assert_eq!(f.value_counts[&1], values.len() as i64);
        assert_eq!(f.null_value_counts[&1], nulls);
        if ty.is_floating() {
            assert_eq!(f.nan_value_counts[&1], nans);
        }
        let live: Vec<&Datum> = values.iter().flatten().filter(|d| !d.is_nan()).collect();
        let min = live.iter().copied().min_by(|a, b| a.compare(b).unwrap());
        let max = live.iter().copied().max_by(|a, b| a.compare(b).unwrap());
        let lo = lower(f, &schema, 1);
        let hi = upper(f, &schema, 1);
        match min {
            None => assert_eq!(lo, None),
            Some(min) => {
                let lo = lo.expect("lower bound");
                assert_ne!(
                    lo.compare(min),
                    Some(Ordering::Greater),
                    "lower {lo:?} > min {min:?}"
                );
                if mode == "full" {
                    assert_eq!(lo.compare(min), Some(Ordering::Equal));
                }
            }
        }
        if let (Some(max), Some(hi)) = (max, &hi) {
            assert_ne!(
                hi.compare(max),
                Some(Ordering::Less),
                "upper {hi:?} < max {max:?}"
            );
            if mode == "full" {
                assert_eq!(hi.compare(max), Some(Ordering::Equal));
            }
        }
        if max.is_none() {
            assert_eq!(hi, None);
        }
        let (batches, _) = read_back(&io, f).await;
        let read: Vec<ArrayRef> = batches.iter().map(|b| b.column(0).clone()).collect();
        let read = iceberg_write::arrow_array::RecordBatch::try_new(
            batches[0].schema(),
            vec![concat(&read)],
        )
        .unwrap();
        let written = iceberg_write::DataFileWriter::new(
            &io,
            LOCATION,
            &schema,
            &PartitionSpec::unpartitioned(),
            None,
            &opts,
        )
        .unwrap()
        .align(&batch(
            vec![Field::new("c", array.data_type().clone(), true)],
            vec![array.clone()],
        ))
        .unwrap();
        // Files carry no embedded Arrow schema (as Java's): binary reads back as `Binary`.
        let read = arrow_cast::cast(read.column(0), written.column(0).data_type()).unwrap();
        assert_eq!(read.to_data(), written.column(0).to_data());
    });
}

/// Reading back may yield several batches; stitch them with arrow's concat kernel.
fn concat(arrays: &[ArrayRef]) -> ArrayRef {
    let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&refs).unwrap()
}

fn special_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        any::<f64>(),
        -10.0f64..10.0,
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..24),
        prop::collection::vec(prop_oneof![Just(0xFFu8), Just(0x00), Just(0xFE)], 0..24),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn ints_bounds_counts_round_trip(v in prop::collection::vec(prop::option::of(any::<i32>()), 0..40)) {
        let datums: Vec<Option<Datum>> = v.iter().map(|x| x.map(Datum::Int)).collect();
        check(PrimitiveType::Int, Arc::new(Int32Array::from(v.clone())), &datums, "full");
        // int data written to a long column: promoted, and bounds are 8-byte longs.
        let longs: Vec<Option<Datum>> = v.iter().map(|x| x.map(|x| Datum::Long(x.into()))).collect();
        let schema_ty = PrimitiveType::Long;
        check(schema_ty, Arc::new(Int32Array::from(v)), &longs, "full");
    }

    #[test]
    fn longs_bounds(v in prop::collection::vec(prop::option::of(any::<i64>()), 0..40)) {
        let datums: Vec<Option<Datum>> = v.iter().map(|x| x.map(Datum::Long)).collect();
        check(PrimitiveType::Long, Arc::new(Int64Array::from(v)), &datums, "truncate(16)");
    }

    #[test]
    fn doubles_nan_and_signed_zero(v in prop::collection::vec(prop::option::of(special_f64()), 0..40)) {
        let datums: Vec<Option<Datum>> = v.iter().map(|x| x.map(Datum::Double)).collect();
        check(PrimitiveType::Double, Arc::new(Float64Array::from(v.clone())), &datums, "full");
        let floats: Vec<Option<f32>> = v.iter().map(|x| x.map(|x| x as f32)).collect();
        let datums: Vec<Option<Datum>> = floats.iter().map(|x| x.map(Datum::Float)).collect();
        check(PrimitiveType::Float, Arc::new(Float32Array::from(floats)), &datums, "full");
    }

    #[test]
    fn strings_truncated_bounds(v in prop::collection::vec(prop::option::of(".{0,30}"), 0..30), n in 1usize..20) {
        let datums: Vec<Option<Datum>> = v.iter().map(|x| x.clone().map(Datum::String)).collect();
        let array = Arc::new(StringArray::from(v.clone()));
        check(PrimitiveType::String, array.clone(), &datums, &format!("truncate({n})"));
        check(PrimitiveType::String, array, &datums, "full");
    }

    #[test]
    fn binary_truncated_bounds(v in prop::collection::vec(prop::option::of(bytes()), 0..30), n in 1usize..20) {
        let datums: Vec<Option<Datum>> = v.iter().map(|x| x.clone().map(Datum::Binary)).collect();
        let refs: Vec<Option<&[u8]>> = v.iter().map(|x| x.as_deref()).collect();
        check(PrimitiveType::Binary, Arc::new(BinaryArray::from(refs)), &datums, &format!("truncate({n})"));
    }

    #[test]
    fn decimals_signed_order(v in prop::collection::vec(prop::option::of(-(10i128.pow(20))..10i128.pow(20)), 0..30)) {
        for p in [9u32, 18, 21, 38] {
            let limit = 10i128.pow(p) - 1;
            let vals: Vec<Option<i128>> = v.iter().map(|x| x.map(|x| x.clamp(-limit, limit))).collect();
            let datums: Vec<Option<Datum>> =
                vals.iter().map(|x| x.map(|u| Datum::Decimal { unscaled: u, precision: p, scale: 2 })).collect();
            let array = Decimal128Array::from(vals).with_precision_and_scale(p as u8, 2).unwrap();
            check(PrimitiveType::Decimal { precision: p, scale: 2 }, Arc::new(array), &datums, "truncate(16)");
        }
    }
}
