//! Tests of [`super::align_batch`]: matching, casts, defaults, required checks.

#![allow(clippy::unwrap_used, clippy::panic)]
use std::collections::HashMap;

use arrow_array::{Float32Array, Int32Array, StringArray, TimestampNanosecondArray};
use arrow_schema::{Field, Schema as ArrowSchema};
use iceberg_spec::Schema;
use iceberg_spec::types::{ListType, StructType};

use super::*;
use crate::to_arrow::arrow_schema;

fn table() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "name", PrimitiveType::String),
            NestedField::optional(3, "score", PrimitiveType::Double),
            NestedField::optional(4, "ts", PrimitiveType::Timestamp),
            NestedField::optional(
                5,
                "s",
                Type::Struct(StructType::new(vec![NestedField::required(
                    6,
                    "x",
                    PrimitiveType::Int,
                )])),
            ),
        ],
    )
    .unwrap()
}

fn align(batch: &RecordBatch) -> Result<RecordBatch> {
    align_with(batch, Rules::default())
}

fn align_with(batch: &RecordBatch, rules: Rules) -> Result<RecordBatch> {
    let t = table();
    let target = Arc::new(arrow_schema(&t).unwrap());
    align_batch(batch, t.fields(), &target, rules)
}

fn batch(fields: Vec<Field>, cols: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), cols).unwrap()
}

/// A column the input leaves out gets its `write-default` (v3), a required one too; one
/// without a default stays null (optional) or is refused (required).
#[test]
fn missing_columns_get_their_write_default() {
    let with_default = |mut f: NestedField, v: serde_json::Value| {
        f.write_default = Some(v);
        f
    };
    let t = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            with_default(
                NestedField::required(2, "flag", PrimitiveType::Boolean),
                serde_json::json!(true),
            ),
            with_default(
                NestedField::optional(3, "age", PrimitiveType::Int),
                serde_json::json!(25),
            ),
            with_default(
                NestedField::optional(4, "label", PrimitiveType::String),
                serde_json::json!("x"),
            ),
            with_default(
                NestedField::optional(
                    5,
                    "price",
                    PrimitiveType::Decimal {
                        precision: 9,
                        scale: 2,
                    },
                ),
                serde_json::json!("12.50"),
            ),
            NestedField::optional(6, "note", PrimitiveType::String),
        ],
    )
    .unwrap();
    let target = Arc::new(arrow_schema(&t).unwrap());
    let b = batch(
        vec![Field::new("id", DataType::Int64, false)],
        vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2, 3]))],
    );
    let out = align_batch(&b, t.fields(), &target, Rules::default()).unwrap();
    let flags = out.column(1).as_boolean();
    assert!((0..3).all(|i| flags.value(i)) && flags.null_count() == 0);
    let ages = out
        .column(2)
        .as_primitive::<arrow_array::types::Int32Type>();
    assert_eq!(ages.values().to_vec(), vec![25, 25, 25]);
    assert_eq!(out.column(3).as_string::<i32>().value(2), "x");
    let prices = out
        .column(4)
        .as_primitive::<arrow_array::types::Decimal128Type>();
    assert_eq!(prices.value(0), 1250);
    assert_eq!(out.column(5).null_count(), 3);
    // Required without a default: refused, naming it.
    let bare = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::required(2, "flag", PrimitiveType::Boolean),
        ],
    )
    .unwrap();
    let target = Arc::new(arrow_schema(&bare).unwrap());
    let err = align_batch(&b, bare.fields(), &target, Rules::default()).unwrap_err();
    assert!(
        matches!(&err, Error::MissingColumn { name } if name == "flag"),
        "{err}"
    );
}

/// Values for an `unknown` column (always null) are refused, not dropped; nulls pass.
#[test]
fn values_for_an_unknown_column_are_refused() {
    let t = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "later", PrimitiveType::Unknown),
        ],
    )
    .unwrap();
    let target = Arc::new(arrow_schema(&t).unwrap());
    let with = |later: ArrayRef| {
        batch(
            vec![
                Field::new("id", DataType::Int64, false),
                Field::new("later", later.data_type().clone(), true),
            ],
            vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2])), later],
        )
    };
    let err = align_batch(
        &with(Arc::new(Int32Array::from(vec![Some(7), None]))),
        t.fields(),
        &target,
        Rules::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::TypeMismatch { column, .. } if column == "later"),
        "{err}"
    );
    align_batch(
        &with(Arc::new(Int32Array::from(vec![None, None]))),
        t.fields(),
        &target,
        Rules::default(),
    )
    .unwrap();
}

/// A timestamp that does not fit nanoseconds (past 2262) is an error naming the column,
/// never a null written in its place.
#[test]
fn a_timestamp_past_the_nanosecond_range_is_refused() {
    let t = Schema::new(
        0,
        vec![NestedField::optional(1, "at", PrimitiveType::TimestampNs)],
    )
    .unwrap();
    let target = Arc::new(arrow_schema(&t).unwrap());
    let far = 253_402_214_400_000_000i64; // 9999-12-31 in microseconds
    let b = batch(
        vec![Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        )],
        vec![Arc::new(arrow_array::TimestampMicrosecondArray::from(
            vec![0, far],
        ))],
    );
    let err = align_batch(&b, t.fields(), &target, Rules::default()).unwrap_err();
    assert!(err.to_string().contains("at"), "{err}");
}

#[test]
fn reorders_casts_and_fills_missing() {
    let b = batch(
        vec![
            Field::new("score", DataType::Float32, true),
            Field::new("id", DataType::Int32, false),
            Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
        ],
        vec![
            Arc::new(Float32Array::from(vec![1.5, 2.5])),
            Arc::new(Int32Array::from(vec![1, 2])),
            Arc::new(TimestampNanosecondArray::from(vec![-1, 1_999])),
        ],
    );
    let floor = Rules {
        floor_nanoseconds: true,
    };
    let out = align_with(&b, floor).unwrap();
    assert_eq!(out.num_columns(), 5);
    assert_eq!(out.column(0).data_type(), &DataType::Int64);
    assert_eq!(out.column(1).null_count(), 2);
    assert_eq!(
        out.column(2)
            .as_primitive::<arrow_array::types::Float64Type>()
            .value(1),
        2.5
    );
    let ts = out.column(3).as_primitive::<TimestampMicrosecondType>();
    assert_eq!((ts.value(0), ts.value(1)), (-1, 1));
    assert_eq!(out.column(4).null_count(), 2);
}

#[test]
fn falls_back_to_field_id() {
    let meta = HashMap::from([("PARQUET:field_id".to_string(), "2".to_string())]);
    let b = batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("renamed", DataType::Utf8, true).with_metadata(meta),
        ],
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1])),
            Arc::new(StringArray::from(vec!["a"])),
        ],
    );
    let out = align(&b).unwrap();
    assert_eq!(out.column(1).as_string::<i32>().value(0), "a");
}

#[test]
fn refusals_name_the_column() {
    let b = batch(
        vec![Field::new("name", DataType::Utf8, true)],
        vec![Arc::new(StringArray::from(vec!["a"]))],
    );
    assert!(matches!(align(&b), Err(Error::MissingColumn { name }) if name == "id"));

    let b = batch(
        vec![Field::new("id", DataType::Utf8, true)],
        vec![Arc::new(StringArray::from(vec!["a"]))],
    );
    match align(&b) {
        Err(Error::TypeMismatch {
            column,
            expected,
            found,
        }) => {
            assert_eq!(
                (column.as_str(), expected.as_str(), found.as_str()),
                ("id", "long", "Utf8")
            );
        }
        other => panic!("{other:?}"),
    }

    let b = batch(
        vec![Field::new("id", DataType::Int64, true)],
        vec![Arc::new(arrow_array::Int64Array::from(vec![Some(1), None]))],
    );
    assert!(
        matches!(align(&b), Err(Error::NullInRequiredColumn { column, nulls: 1 }) if column == "id")
    );

    let b = batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("extra", DataType::Int64, true),
        ],
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1])),
            Arc::new(arrow_array::Int64Array::from(vec![1])),
        ],
    );
    assert!(matches!(align(&b), Err(Error::UnexpectedColumn { name }) if name == "extra"));
}

#[test]
fn required_child_of_null_struct_is_fine() {
    let child = Field::new("x", DataType::Int32, true);
    let s = StructArray::try_new(
        Fields::from(vec![child.clone()]),
        vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
        Some(NullBuffer::from(vec![true, false])),
    )
    .unwrap();
    let ok = batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", s.data_type().clone(), true),
        ],
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
            Arc::new(s),
        ],
    );
    assert!(align(&ok).is_ok());

    let s = StructArray::try_new(
        Fields::from(vec![child]),
        vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
        None,
    )
    .unwrap();
    let bad = batch(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", s.data_type().clone(), true),
        ],
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
            Arc::new(s),
        ],
    );
    assert!(
        matches!(align(&bad), Err(Error::NullInRequiredColumn { column, .. }) if column == "s.x")
    );
}

/// `batch` of one column `c` aligned to a table of one optional column `c` of `ty`.
fn align_one(ty: Type, field: Field, column: ArrayRef) -> Result<RecordBatch> {
    let t = Schema::new(0, vec![NestedField::optional(1, "c", ty)]).unwrap();
    let target = Arc::new(arrow_schema(&t).unwrap());
    align_batch(
        &batch(vec![field], vec![column]),
        t.fields(),
        &target,
        Rules::default(),
    )
}

/// Nanoseconds into a microsecond column: whole microseconds are exact and taken; digits
/// past the microsecond would be dropped, so they are refused naming the column (nested
/// too, nulls aside) unless the rules floor them (as PyIceberg refuses unless
/// `downcast-ns-timestamp-to-us-on-write`).
#[test]
fn nanoseconds_past_the_microsecond_are_refused_unless_floored() {
    let ns = |tz: Option<&str>| DataType::Timestamp(TimeUnit::Nanosecond, tz.map(Into::into));
    let ts = |v: Vec<Option<i64>>| -> ArrayRef {
        Arc::new(TimestampNanosecondArray::from(v).with_timezone_opt(Some("UTC")))
    };
    let whole = align_one(
        Type::Primitive(PrimitiveType::Timestamptz),
        Field::new("c", ns(Some("UTC")), true),
        ts(vec![Some(-1_000), None, Some(1_700_000_000_123_456_000)]),
    )
    .unwrap();
    let v = whole.column(0).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(v.value(0), -1);
    assert_eq!(v.value(2), 1_700_000_000_123_456);

    let lossy = ts(vec![None, Some(1_700_000_000_123_456_789), Some(-1_001)]);
    let err = align_one(
        Type::Primitive(PrimitiveType::Timestamptz),
        Field::new("c", ns(Some("UTC")), true),
        lossy.clone(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::ValueOutOfRange { column, reason }
            if column == "c" && reason.contains("1700000000123456789")),
        "{err}"
    );

    let time = Arc::new(arrow_array::Time64NanosecondArray::from(vec![1_001])) as ArrayRef;
    let err = align_one(
        Type::Primitive(PrimitiveType::Time),
        Field::new("c", DataType::Time64(TimeUnit::Nanosecond), true),
        time,
    )
    .unwrap_err();
    assert!(matches!(&err, Error::ValueOutOfRange { column, .. } if column == "c"));

    // Nested: a list of timestamps names its element.
    let element = Arc::new(Field::new("element", ns(Some("UTC")), true));
    let list = arrow_array::ListArray::new(
        element.clone(),
        arrow_buffer::OffsetBuffer::from_lengths([3]),
        lossy,
        None,
    );
    let list_type = Type::List(ListType::new(2, PrimitiveType::Timestamptz, false));
    let err = align_one(
        list_type.clone(),
        Field::new("c", DataType::List(element), true),
        Arc::new(list.clone()),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::ValueOutOfRange { column, .. } if column == "c.element"),
        "{err}"
    );

    // Floored when the rules say so: toward the past, never toward zero.
    let t = Schema::new(0, vec![NestedField::optional(1, "c", list_type)]).unwrap();
    let target = Arc::new(arrow_schema(&t).unwrap());
    let list_field = Field::new("c", list.data_type().clone(), true);
    let floored = align_batch(
        &batch(vec![list_field], vec![Arc::new(list)]),
        t.fields(),
        &target,
        Rules {
            floor_nanoseconds: true,
        },
    )
    .unwrap();
    let values = floored.column(0).as_list::<i32>().values().clone();
    let v = values.as_primitive::<TimestampMicrosecondType>();
    assert_eq!((v.value(1), v.value(2)), (1_700_000_000_123_456, -2));

    // A null struct row's child may hold anything (pyarrow's `mask=` leaves it): never
    // written, so never refused.
    let child = Arc::new(Field::new("ts", ns(None), true));
    let hidden = StructArray::new(
        vec![child.clone()].into(),
        vec![Arc::new(TimestampNanosecondArray::from(vec![1_001, 2_000])) as ArrayRef],
        Some(NullBuffer::from(vec![false, true])),
    );
    let ty = Type::Struct(StructType::new(vec![NestedField::optional(
        2,
        "ts",
        PrimitiveType::Timestamp,
    )]));
    let out = align_one(
        ty,
        Field::new("c", hidden.data_type().clone(), true),
        Arc::new(hidden),
    )
    .unwrap();
    let s = out.column(0).as_struct();
    assert!(s.is_null(0));
    assert_eq!(
        s.column(0)
            .as_primitive::<TimestampMicrosecondType>()
            .value(1),
        2
    );
}

/// Arrow does not hold decimals to their type's precision and Parquet's writer would keep
/// only the low bytes of one too wide (10000000000 in a decimal(9, 2) read back as
/// 14100654.08): refused as Java's writer refuses it, from every decimal width (a
/// Decimal256 beyond 128 bits without a panic), nulls aside.
#[test]
fn decimals_wider_than_their_precision_are_refused() {
    use arrow_array::{Decimal128Array, Decimal256Array};
    use arrow_buffer::i256;
    let dec = |precision, scale| Type::Primitive(PrimitiveType::Decimal { precision, scale });
    let d128 = |values: Vec<Option<i128>>, p, s| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(p, s)
                .unwrap(),
        )
    };
    let field = |a: &ArrayRef| Field::new("c", a.data_type().clone(), true);

    let fits = d128(vec![Some(999_999_999), None, Some(-999_999_999)], 9, 2);
    let out = align_one(dec(9, 2), field(&fits), fits.clone()).unwrap();
    assert_eq!(out.column(0).as_ref(), fits.as_ref());
    for wide in [
        d128(vec![None, Some(10_000_000_000)], 9, 2),
        d128(vec![Some(-1_000_000_000)], 9, 2),
        // Declared narrower than the column, holding a wider value all the same.
        d128(vec![Some(123_456_789_012)], 5, 2),
    ] {
        let err = align_one(dec(9, 2), field(&wide), wide.clone()).unwrap_err();
        assert!(
            matches!(&err, Error::ValueOutOfRange { column, .. } if column == "c"),
            "{err}"
        );
    }
    // At the Arrow type's own maximum precision: an i128 still holds 10^38 (39 digits).
    for (value, ok) in [(10i128.pow(38) - 1, true), (10i128.pow(38), false)] {
        let column = d128(vec![Some(value)], 38, 0);
        let out = align_one(dec(38, 0), field(&column), column.clone());
        assert_eq!(out.is_ok(), ok, "{value}");
    }
    let wide = d128(vec![Some(-10i128.pow(38))], 38, 0);
    let err = align_one(dec(38, 0), field(&wide), wide.clone()).unwrap_err();
    assert!(
        matches!(&err, Error::ValueOutOfRange { column, .. } if column == "c"),
        "{err}"
    );
    let huge: ArrayRef = Arc::new(
        Decimal256Array::from(vec![Some(
            i256::from_i128(i128::MAX).wrapping_mul(i256::from(4)),
        )])
        .with_precision_and_scale(38, 0)
        .unwrap(),
    );
    let err = align_one(dec(38, 0), field(&huge), huge.clone()).unwrap_err();
    assert!(matches!(err, Error::ValueOutOfRange { .. }), "{err}");
    let small: ArrayRef = Arc::new(
        Decimal256Array::from(vec![Some(i256::from_i128(-12_345))])
            .with_precision_and_scale(38, 2)
            .unwrap(),
    );
    let out = align_one(dec(38, 2), field(&small), small).unwrap();
    let values = out
        .column(0)
        .as_primitive::<arrow_array::types::Decimal128Type>();
    assert_eq!(values.value(0), -12_345);
}

/// A `Date64` column (which `iceberg_schema` makes a `date`) writes as whole days; a value
/// that is not one is refused instead of truncated.
#[test]
fn date64_values_are_whole_days_or_refused() {
    use arrow_array::Date64Array;
    const DAY: i64 = 86_400_000;
    let field = Field::new("c", DataType::Date64, true);
    let days: ArrayRef = Arc::new(Date64Array::from(vec![Some(-DAY), None, Some(3 * DAY)]));
    let out = align_one(PrimitiveType::Date.into(), field.clone(), days).unwrap();
    let out = out
        .column(0)
        .as_primitive::<arrow_array::types::Date32Type>();
    assert_eq!(
        out.iter().collect::<Vec<_>>(),
        vec![Some(-1), None, Some(3)]
    );
    for bad in [DAY + 1, -1, i64::MAX / DAY * DAY] {
        let column: ArrayRef = Arc::new(Date64Array::from(vec![bad]));
        let err = align_one(PrimitiveType::Date.into(), field.clone(), column).unwrap_err();
        assert!(matches!(err, Error::ValueOutOfRange { .. }), "{bad}: {err}");
    }
}

/// Arrow lets a null list slot cover values (a FixedSizeList's always do, often nulls): they
/// are no part of the data, so a required element does not refuse them and they are not
/// written.
#[test]
fn values_under_null_list_slots_are_dropped() {
    use arrow_array::FixedSizeListArray;
    let ty = Type::List(ListType::new(2, PrimitiveType::Int, true));
    let item = Arc::new(Field::new("item", DataType::Int32, false));
    let list: ArrayRef = Arc::new(
        FixedSizeListArray::try_new(
            item,
            2,
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(2),
                None,
                None,
                Some(5),
                Some(6),
            ])),
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap(),
    );
    let field = Field::new("c", list.data_type().clone(), true);
    let out = align_one(ty.clone(), field.clone(), list).unwrap();
    let out = out.column(0).as_list::<i32>();
    assert_eq!(out.len(), 3);
    assert!(out.is_null(1));
    assert_eq!(out.value_offsets(), &[0, 2, 2, 4]);
    let values = out.values().as_primitive::<arrow_array::types::Int32Type>();
    assert_eq!(values.values().to_vec(), vec![1, 2, 5, 6]);

    // A null inside a valid slot is still refused.
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    let list: ArrayRef = Arc::new(
        FixedSizeListArray::try_new(
            item,
            2,
            Arc::new(Int32Array::from(vec![Some(1), None])),
            None,
        )
        .unwrap(),
    );
    let field = Field::new("c", list.data_type().clone(), true);
    let err = align_one(ty, field, list).unwrap_err();
    assert!(
        matches!(&err, Error::NullInRequiredColumn { column, nulls: 1 } if column == "c.element"),
        "{err}"
    );
}

/// A null struct row's lists and maps may hold anything too (Arrow leaves what its builders
/// or `mask=` put there): Parquet writes nothing under the null row, so a null element of a
/// required list or map value there is not refused, nor a decimal too wide, and is dropped;
/// the same values in a valid row are still refused.
#[test]
fn lists_and_maps_under_a_null_struct_row_are_not_checked() {
    use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
    let list_of = |rows: Vec<Option<i32>>| -> ArrayRef {
        let mut b = ListBuilder::new(Int32Builder::new()).with_field(Arc::new(Field::new(
            "element",
            DataType::Int32,
            true,
        )));
        b.append_value(rows.clone());
        b.append_value([Some(7)]);
        Arc::new(b.finish())
    };
    let map_of = |v: Option<i32>| -> ArrayRef {
        let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        b.keys().append_value("k");
        b.values().append_option(v);
        b.append(true).unwrap();
        b.keys().append_value("k");
        b.values().append_value(8);
        b.append(true).unwrap();
        Arc::new(b.finish())
    };
    let ty = Type::Struct(StructType::new(vec![
        NestedField::optional(
            2,
            "l",
            Type::List(ListType::new(3, PrimitiveType::Int, true)),
        ),
        NestedField::optional(
            4,
            "m",
            Type::Map(iceberg_spec::types::MapType::new(
                5,
                PrimitiveType::String,
                6,
                PrimitiveType::Int,
                true,
            )),
        ),
    ]));
    let row = |first_valid: bool, l: ArrayRef, m: ArrayRef| -> (Field, ArrayRef) {
        let s = StructArray::try_new(
            Fields::from(vec![
                Field::new("l", l.data_type().clone(), true),
                Field::new("m", m.data_type().clone(), true),
            ]),
            vec![l, m],
            Some(NullBuffer::from(vec![first_valid, true])),
        )
        .unwrap();
        (Field::new("c", s.data_type().clone(), true), Arc::new(s))
    };

    let (field, col) = row(false, list_of(vec![None, Some(1)]), map_of(None));
    let out = align_one(ty.clone(), field, col).unwrap();
    let s = out.column(0).as_struct();
    assert!(s.is_null(0));
    let l = s.column(0).as_list::<i32>();
    assert_eq!(l.value_offsets(), &[0, 0, 1]);
    assert_eq!(
        l.value(1)
            .as_primitive::<arrow_array::types::Int32Type>()
            .value(0),
        7
    );
    let m = s.column(1).as_map();
    assert_eq!(m.value_offsets(), &[0, 0, 1]);
    assert_eq!(
        m.values()
            .as_primitive::<arrow_array::types::Int32Type>()
            .value(0),
        8
    );

    for (field, col, column) in [
        {
            let (f, c) = row(true, list_of(vec![None]), map_of(Some(1)));
            (f, c, "c.l.element")
        },
        {
            let (f, c) = row(true, list_of(vec![Some(1)]), map_of(None));
            (f, c, "c.m.value")
        },
    ] {
        let err = align_one(ty.clone(), field, col).unwrap_err();
        assert!(
            matches!(&err, Error::NullInRequiredColumn { column: c, nulls: 1 } if c == column),
            "{err}"
        );
    }
}

/// Iceberg's `time` is a time of day: a value Arrow's time types hold past midnight or below
/// zero (from any unit) is refused naming the column, nulls and null struct rows aside.
#[test]
fn times_outside_a_day_are_refused() {
    use arrow_array::{Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray};
    let time = Type::Primitive(PrimitiveType::Time);
    let field = |a: &ArrayRef| Field::new("c", a.data_type().clone(), true);
    let day_us = 86_400_000_000_i64;
    let ok: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![
        Some(0),
        None,
        Some(day_us - 1),
    ]));
    let out = align_one(time.clone(), field(&ok), ok.clone()).unwrap();
    assert_eq!(out.column(0).as_ref(), ok.as_ref());
    for bad in [
        Arc::new(Time64MicrosecondArray::from(vec![Some(1), Some(day_us)])) as ArrayRef,
        Arc::new(Time64MicrosecondArray::from(vec![Some(-1)])),
        Arc::new(Time64NanosecondArray::from(vec![Some(day_us * 1000)])),
        Arc::new(Time32SecondArray::from(vec![Some(86_400)])),
    ] {
        let err = align_one(time.clone(), field(&bad), bad.clone()).unwrap_err();
        assert!(
            matches!(&err, Error::ValueOutOfRange { column, .. } if column == "c"),
            "{err}"
        );
    }
    // Under a null struct row: never written, not refused.
    let hidden = StructArray::new(
        vec![Arc::new(Field::new(
            "t",
            DataType::Time64(TimeUnit::Microsecond),
            true,
        ))]
        .into(),
        vec![Arc::new(Time64MicrosecondArray::from(vec![day_us, 5])) as ArrayRef],
        Some(NullBuffer::from(vec![false, true])),
    );
    let ty = Type::Struct(StructType::new(vec![NestedField::optional(
        2,
        "t",
        PrimitiveType::Time,
    )]));
    let field = Field::new("c", hidden.data_type().clone(), true);
    assert!(align_one(ty, field, Arc::new(hidden)).is_ok());
}
