#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::types::PrimitiveType as P;

const TS: i64 = 1_510_871_468_000_000; // 2017-11-16T22:31:08
const UUID: &str = "f79c3e09-677c-4bbd-a479-3f349cb785e7";

fn dec(unscaled: i128, precision: u32, scale: u32) -> Datum {
    Datum::decimal(unscaled, precision, scale).unwrap()
}

fn apply(t: impl std::borrow::Borrow<Transform>, d: Datum) -> Datum {
    let t = t.borrow();
    t.apply(Some(&d)).unwrap().unwrap()
}

/// Checklist section 3: (input, hash, bucket[16], bucket[10]).
fn bucket_table() -> Vec<(Datum, i32, i32, i32)> {
    vec![
        (Datum::Int(34), 2_017_239_379, 3, 9),
        (Datum::Long(34), 2_017_239_379, 3, 9),
        (dec(1_420, 4, 2), -500_754_589, 3, 9),
        (Datum::Date(17_486), -653_330_422, 10, 6),
        (Datum::Time(81_068_000_000), -662_762_989, 3, 9),
        (Datum::Timestamp(TS), -2_047_944_441, 7, 7),
        (Datum::Timestamp(TS + 1), -1_207_196_810, 6, 8),
        // 2017-11-16T14:31:08-08:00 is the same instant.
        (Datum::Timestamptz(TS), -2_047_944_441, 7, 7),
        (
            Datum::TimestampNs((TS + 1) * 1_000 + 1),
            -1_207_196_810,
            6,
            8,
        ),
        (
            Datum::TimestamptzNs((TS + 1) * 1_000 + 1),
            -1_207_196_810,
            6,
            8,
        ),
        (Datum::string("iceberg"), 1_210_000_089, 9, 9),
        (
            Datum::Uuid(Uuid::parse_str(UUID).unwrap()),
            1_488_055_340,
            12,
            0,
        ),
        (Datum::fixed([0u8, 1, 2, 3]), -188_683_207, 9, 1),
        (Datum::binary([0u8, 1, 2, 3]), -188_683_207, 9, 1),
    ]
}

#[test]
fn bucket_spec_vectors() {
    for (d, hash, b16, b10) in bucket_table() {
        assert_eq!(bucket::hash_datum(&d), Some(hash), "hash {d:?}");
        assert_eq!(
            apply(Transform::Bucket(16), d.clone()),
            Datum::Int(b16),
            "{d:?}"
        );
        assert_eq!(
            apply(Transform::Bucket(10), d.clone()),
            Datum::Int(b10),
            "{d:?}"
        );
    }
    // The free functions the vectorized writer uses agree.
    assert_eq!(bucket_i32(34, 16), 3);
    assert_eq!(bucket_i64(34, 10), 9);
    assert_eq!(bucket_i32(17_486, 16), 10);
    assert_eq!(bucket_nanos((TS + 1) * 1_000 + 1, 16), 6);
    assert_eq!(bucket_decimal(1_420, 16), 3);
    assert_eq!(bucket_str("iceberg", 16), 9);
    assert_eq!(bucket_bytes(&[0, 1, 2, 3], 10), 1);
    assert_eq!(bucket_uuid(&Uuid::parse_str(UUID).unwrap(), 10), 0);
    assert_eq!(hash_decimal(-1_420), murmur3_32(&[0xFA, 0x74]));
}

#[test]
fn informational_hashes() {
    assert_eq!(hash_i64(1), 1_392_991_556); // boolean true
    assert_eq!(hash_i64(1.0f64.to_bits() as i64), -142_385_009); // float/double 1.0
    assert_eq!(hash_i64(0), 1_669_671_676); // 0.0 and -0.0
    assert_eq!(murmur3_32(b"34"), -427_558_391); // the string "34"
    assert_eq!(murmur3_32(&17_486i32.to_le_bytes()), 1_087_118_125); // date as 4 bytes (wrong)
}

#[test]
fn null_void_and_identity() {
    let all = [
        Transform::Identity,
        Transform::Bucket(4),
        Transform::Truncate(4),
        Transform::Year,
        Transform::Month,
        Transform::Day,
        Transform::Hour,
        Transform::Void,
    ];
    for t in all {
        assert_eq!(t.apply(None).unwrap(), None, "{t}");
    }
    assert_eq!(Transform::Void.apply(Some(&Datum::Int(3))).unwrap(), None);
    assert_eq!(
        Transform::Void.apply(Some(&Datum::Float(1.0))).unwrap(),
        None
    );
    for d in [Datum::Double(f64::NAN), Datum::string("x"), dec(1, 2, 1)] {
        assert_eq!(apply(Transform::Identity, d.clone()), d);
    }
}

#[test]
fn time_transforms_table() {
    // Checklist 4.2: (µs, year, month, day, hour) with floor semantics.
    let rows = [
        (TS, 47, 574, 17_486, 419_686),
        (0, 0, 0, 0, 0),
        (-1, -1, -1, -1, -1),
        (-31_536_000_000_000, -1, -12, -365, -8_760),
        (-2_203_848_000_000_000, -70, -838, -25_508, -612_180),
        (-3_599_000_001, -1, -1, -1, -1),
    ];
    type Make = fn(i64) -> Datum;
    let sources: [(Make, i64); 4] = [
        (Datum::Timestamp, 1),
        (Datum::Timestamptz, 1),
        (Datum::TimestampNs, 1_000),
        (Datum::TimestamptzNs, 1_000),
    ];
    for (us, y, m, d, h) in rows {
        for (make, scale) in sources {
            let v = make(us * scale);
            assert_eq!(apply(Transform::Year, v.clone()), Datum::Int(y), "{v:?}");
            assert_eq!(apply(Transform::Month, v.clone()), Datum::Int(m), "{v:?}");
            assert_eq!(apply(Transform::Day, v.clone()), Datum::Date(d), "{v:?}");
            assert_eq!(apply(Transform::Hour, v.clone()), Datum::Int(h), "{v:?}");
        }
        let date = Datum::Date(micros_to_day(us));
        assert_eq!(apply(Transform::Year, date.clone()), Datum::Int(y));
        assert_eq!(apply(Transform::Month, date.clone()), Datum::Int(m));
        assert_eq!(apply(Transform::Day, date.clone()), date);
    }
}

#[test]
fn truncate_examples() {
    let t10 = Transform::Truncate(10);
    for (v, want) in [(1, 0), (9, 0), (10, 10), (-1, -10)] {
        assert_eq!(apply(&t10, Datum::Int(v)), Datum::Int(want));
        assert_eq!(apply(&t10, Datum::Long(v.into())), Datum::Long(want.into()));
    }
    // Java wraps below the minimum: MIN - ((MIN % 10 + 10) % 10) = MIN - 2.
    assert_eq!(apply(&t10, Datum::Int(i32::MIN)), Datum::Int(2_147_483_646));
    assert_eq!(
        apply(&t10, Datum::Long(i64::MIN)),
        Datum::Long(9_223_372_036_854_775_806)
    );
    assert_eq!(
        apply(Transform::Truncate(3), Datum::Int(-2_147_483_647)),
        Datum::Int(2_147_483_647)
    );
    assert_eq!(
        apply(&t10, Datum::Int(i32::MIN + 8)),
        Datum::Int(i32::MIN + 8)
    );
    let d = apply(Transform::Truncate(50), dec(1_065, 4, 2));
    assert!(matches!(
        d,
        Datum::Decimal {
            unscaled: 1_050,
            precision: 4,
            scale: 2
        }
    ));
    assert_eq!(
        apply(Transform::Truncate(3), Datum::string("iceberg")),
        Datum::string("ice")
    );
    let emoji = apply(Transform::Truncate(2), Datum::string("😀😀😀"));
    assert_eq!(emoji, Datum::string("😀😀"));
    assert_eq!(emoji.to_bytes().len(), 8);
    assert_eq!(
        apply(Transform::Truncate(2), Datum::binary([0u8, 1, 2, 3])),
        Datum::binary([0u8, 1])
    );
}

#[test]
fn wrong_source_types_and_parameters_are_errors() {
    let cases = [
        (Transform::Bucket(4), Datum::Float(1.0)),
        (Transform::Bucket(4), Datum::Boolean(true)),
        (Transform::Truncate(4), Datum::fixed([1u8])),
        (Transform::Truncate(4), Datum::Uuid(Uuid::nil())),
        (Transform::Truncate(4), Datum::Date(1)),
        (Transform::Year, Datum::Long(1)),
        (Transform::Month, Datum::Time(1)),
        (Transform::Day, Datum::string("2017-11-16")),
        (Transform::Hour, Datum::Date(1)),
    ];
    for (t, d) in cases {
        let err = t.apply(Some(&d)).unwrap_err();
        assert!(
            matches!(err, Error::TransformSourceType { .. }),
            "{t} {d:?}: {err}"
        );
    }
    for t in [Transform::Bucket(0), Transform::Truncate(0)] {
        let err = t.apply(Some(&Datum::Int(1))).unwrap_err();
        assert!(matches!(err, Error::InvalidTransform { .. }), "{t}: {err}");
    }
}

/// Java reads transform names ignoring case and parameters as ints: a spec naming
/// `Bucket[16]` loads, and a parameter past `i32::MAX` is refused wherever a spec is made.
#[test]
fn names_ignore_case_and_parameters_are_ints() {
    assert_eq!(
        "Bucket[16]".parse::<Transform>().unwrap(),
        Transform::Bucket(16)
    );
    assert_eq!(" DAY ".parse::<Transform>().unwrap(), Transform::Day);
    assert_eq!(
        "Identity".parse::<Transform>().unwrap(),
        Transform::Identity
    );
    assert!("bucket[2147483648]".parse::<Transform>().is_err());
    for t in [
        Transform::Bucket(3_000_000_000),
        Transform::Truncate(2_147_483_648),
    ] {
        let err = t.result_type(&P::Long).unwrap_err();
        assert!(matches!(err, Error::InvalidTransform { .. }), "{t}: {err}");
    }
    assert_eq!(
        Transform::Bucket(i32::MAX as u32)
            .result_type(&P::Long)
            .unwrap(),
        P::Int
    );
    let schema =
        crate::Schema::new(0, vec![crate::NestedField::required(1, "id", P::Long)]).unwrap();
    for expr in ["bucket(3000000000, id)", "truncate(2147483648, id)"] {
        assert!(
            crate::partition_expr::partition_spec(&[expr.to_string()], &schema).is_err(),
            "{expr}"
        );
    }
}

/// Java's `Transforms.fromString`: any name it does not know is an `UnknownTransform` kept by
/// its text (readers must load such tables), but nothing can be computed with it.
#[test]
fn unknown_names_are_kept_and_refused_only_where_used() {
    for text in [
        "zorder",
        "bucket[x]",
        "truncate[-1]",
        "Bucket[ 4 ]",
        "geohash[12]",
    ] {
        let t: Transform = text.parse().unwrap();
        assert_eq!(t, Transform::Unknown(text.to_string()), "{text}");
        assert!(t.is_unknown());
        // Written back exactly as read.
        assert_eq!(t.to_string(), text);
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json, serde_json::Value::String(text.into()));
        assert_eq!(serde_json::from_value::<Transform>(json).unwrap(), t);
        assert!(t.can_transform(&P::Long));
        assert!(!t.preserves_order());
        assert_eq!(t.fixed_result_type(), None);
        let err = t.result_type(&P::Long).unwrap_err();
        assert!(
            matches!(err, Error::InvalidTransform { .. }),
            "{text}: {err}"
        );
        assert!(err.to_string().contains(text), "{err}");
        assert!(t.apply(Some(&Datum::Long(1))).is_err());
    }
    for text in ["", "  ", "bucket[0]", "truncate[0]", "bucket[99999999999]"] {
        assert!(text.parse::<Transform>().is_err(), "{text}");
    }
}

#[test]
fn human_strings_of_section_4_4() {
    let ts = Datum::Timestamp;
    let cases: Vec<(Transform, P, Option<Datum>, &str)> = vec![
        (Transform::Bucket(16), P::Long, Some(Datum::Int(3)), "3"),
        (Transform::Identity, P::Long, Some(Datum::Long(-34)), "-34"),
        (
            Transform::Truncate(10),
            P::Int,
            Some(Datum::Int(-10)),
            "-10",
        ),
        (Transform::Year, P::Timestamp, Some(Datum::Int(47)), "2017"),
        (Transform::Year, P::Date, Some(Datum::Int(-1)), "1969"),
        (
            Transform::Month,
            P::Timestamp,
            Some(Datum::Int(574)),
            "2017-11",
        ),
        (
            Transform::Month,
            P::Timestamp,
            Some(Datum::Int(-1)),
            "1969-12",
        ),
        (
            Transform::Day,
            P::Timestamp,
            Some(Datum::Date(17_486)),
            "2017-11-16",
        ),
        (
            Transform::Day,
            P::Timestamp,
            Some(Datum::Int(-1)),
            "1969-12-31",
        ),
        (
            Transform::Hour,
            P::Timestamp,
            Some(Datum::Int(419_686)),
            "2017-11-16-22",
        ),
        (
            Transform::Hour,
            P::Timestamp,
            Some(Datum::Int(-1)),
            "1969-12-31-23",
        ),
        (
            Transform::Identity,
            P::Date,
            Some(Datum::Date(17_486)),
            "2017-11-16",
        ),
        (
            Transform::Identity,
            P::Time,
            Some(Datum::Time(81_068_000_000)),
            "22:31:08",
        ),
        (
            Transform::Identity,
            P::Time,
            Some(Datum::Time(81_060_000_000)),
            "22:31",
        ),
        (
            Transform::Identity,
            P::Time,
            Some(Datum::Time(81_068_500_000)),
            "22:31:08.500",
        ),
        (
            Transform::Identity,
            P::Time,
            Some(Datum::Time(81_068_000_001)),
            "22:31:08.000001",
        ),
        (Transform::Identity, P::Time, Some(Datum::Time(0)), "00:00"),
        (
            Transform::Identity,
            P::Timestamp,
            Some(ts(TS)),
            "2017-11-16T22:31:08",
        ),
        (
            Transform::Identity,
            P::Timestamp,
            Some(ts(TS - 8_000_000)),
            "2017-11-16T22:31:00",
        ),
        (
            Transform::Identity,
            P::Timestamp,
            Some(ts(TS + 1)),
            "2017-11-16T22:31:08.000001",
        ),
        (
            Transform::Identity,
            P::Timestamp,
            Some(ts(TS + 500_000)),
            "2017-11-16T22:31:08.5",
        ),
        (
            Transform::Identity,
            P::Timestamp,
            Some(ts(-1)),
            "1969-12-31T23:59:59.999999",
        ),
        (
            Transform::Identity,
            P::Timestamptz,
            Some(Datum::Timestamptz(TS)),
            "2017-11-16T22:31:08+00:00",
        ),
        (
            Transform::Identity,
            P::TimestampNs,
            Some(Datum::TimestampNs(TS * 1_000 + 1_001)),
            "2017-11-16T22:31:08.000001001",
        ),
        (
            Transform::Identity,
            P::TimestamptzNs,
            Some(Datum::TimestamptzNs(TS * 1_000 + 500_000_000)),
            "2017-11-16T22:31:08.5+00:00",
        ),
        (
            Transform::Identity,
            P::String,
            Some(Datum::string("a b/c")),
            "a b/c",
        ),
        (
            Transform::Identity,
            P::Boolean,
            Some(Datum::Boolean(false)),
            "false",
        ),
        (
            Transform::Identity,
            P::Decimal {
                precision: 4,
                scale: 2,
            },
            Some(dec(1_420, 4, 2)),
            "14.20",
        ),
        (
            Transform::Identity,
            P::Decimal {
                precision: 10,
                scale: 10,
            },
            Some(dec(1, 10, 10)),
            "1E-10",
        ),
        (
            Transform::Identity,
            P::Uuid,
            Some(Datum::Uuid(Uuid::parse_str(&UUID.to_uppercase()).unwrap())),
            UUID,
        ),
        (
            Transform::Identity,
            P::Binary,
            Some(Datum::binary([0u8, 1, 2, 3])),
            "AAECAw==",
        ),
        (
            Transform::Identity,
            P::Fixed(4),
            Some(Datum::fixed([0u8, 1, 2, 3])),
            "AAECAw==",
        ),
        (
            Transform::Identity,
            P::Float,
            Some(Datum::Float(1.0)),
            "1.0",
        ),
        (
            Transform::Identity,
            P::Double,
            Some(Datum::Double(f64::NAN)),
            "NaN",
        ),
        (Transform::Day, P::Timestamp, None, "null"),
        (Transform::Void, P::Long, None, "null"),
    ];
    for (t, ty, v, want) in cases {
        assert_eq!(t.to_human_string(&ty, v.as_ref()), want, "{t} {ty} {v:?}");
    }
    // A plain int/long holding a date or timestamp prints by the source type, as in Java.
    assert_eq!(
        Transform::Identity.to_human_string(&P::Date, Some(&Datum::Int(17_486))),
        "2017-11-16"
    );
    assert_eq!(
        Transform::Identity.to_human_string(&P::Timestamp, Some(&Datum::Long(TS))),
        "2017-11-16T22:31:08"
    );
}

#[test]
fn java_decimal_strings() {
    let cases = [
        (1_420, 2, "14.20"),
        (-1_420, 2, "-14.20"),
        (-5, 2, "-0.05"),
        (0, 0, "0"),
        (0, 2, "0.00"),
        (1, 6, "0.000001"),
        (1, 7, "1E-7"),
        (1, 10, "1E-10"),
        (123, 10, "1.23E-8"),
        (-123, 10, "-1.23E-8"),
        (0, 10, "0E-10"),
        (12_345_678, 14, "1.2345678E-7"),
        (12_345_678, 13, "0.0000012345678"),
        (
            10i128.pow(38) - 1,
            0,
            "99999999999999999999999999999999999999",
        ),
    ];
    for (unscaled, scale, want) in cases {
        assert_eq!(
            java_decimal_string(unscaled, scale),
            want,
            "{unscaled} scale {scale}"
        );
    }
}

#[test]
fn java_float_and_double_strings() {
    let doubles = [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1.0e7, "1.0E7"),
        (9_999_999.0, "9999999.0"),
        (123_456.789, "123456.789"),
        (1.0e10, "1.0E10"),
        (-1.5e-5, "-1.5E-5"),
        (0.1, "0.1"),
        (f64::MAX, "1.7976931348623157E308"),
        (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
        (5e-324, "4.9E-324"),
        (1.0e23, "1.0E23"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ];
    for (v, want) in doubles {
        assert_eq!(java_double_string(v), want, "{v:e}");
    }
    let floats = [
        (1.0f32, "1.0"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        (1.0e7, "1.0E7"),
        (3.4028235e38, "3.4028235E38"),
        (1.4e-45, "1.4E-45"),
        (f32::NAN, "NaN"),
    ];
    for (v, want) in floats {
        assert_eq!(java_float_string(v), want, "{v:e}");
    }
}

#[test]
fn url_encoding_like_java() {
    let cases = [
        ("2017-11-16T22:31:08", "2017-11-16T22%3A31%3A08"),
        ("a b/c", "a+b%2Fc"),
        ("é", "%C3%A9"),
        ("~!'()", "%7E%21%27%28%29"),
        ("*._-", "*._-"),
        ("AAECAw==", "AAECAw%3D%3D"),
        ("1+1", "1%2B1"),
        ("😀", "%F0%9F%98%80"),
    ];
    for (s, want) in cases {
        assert_eq!(escape_path_component(s), want, "{s}");
    }
    assert_eq!(partition_path_segment("id_bucket", "3"), "id_bucket=3");
    assert_eq!(partition_path_segment("ts_day", "null"), "ts_day=null");
    assert_eq!(
        partition_path_segment("ts", "2017-11-16T22:31:08+00:00"),
        "ts=2017-11-16T22%3A31%3A08%2B00%3A00"
    );
    assert_eq!(partition_path_segment("my col", "x"), "my+col=x");
}

fn arb_bucket_source() -> impl Strategy<Value = Datum> {
    prop_oneof![
        any::<i32>().prop_map(Datum::Int),
        any::<i64>().prop_map(Datum::Long),
        any::<i32>().prop_map(Datum::Date),
        any::<i64>().prop_map(Datum::Timestamp),
        any::<i64>().prop_map(Datum::TimestamptzNs),
        (-(10i128.pow(38) - 1)..10i128.pow(38)).prop_map(|u| Datum::Decimal {
            unscaled: u,
            precision: 38,
            scale: 3,
        }),
        ".*".prop_map(Datum::String),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Datum::Binary),
        any::<[u8; 16]>().prop_map(|b| Datum::Uuid(Uuid::from_bytes(b))),
    ]
}

proptest! {
    #[test]
    fn bucket_in_range(d in arb_bucket_source(), n in 1u32..=u32::MAX) {
        let Datum::Int(b) = apply(Transform::Bucket(n), d) else {
            panic!("bucket must give an int");
        };
        prop_assert!(b >= 0 && (b as u32) < n);
    }

    #[test]
    fn truncate_datum_idempotent_and_order_preserving(
        a in arb_bucket_source(),
        b in arb_bucket_source(),
        w in 1u32..100,
    ) {
        let t = Transform::Truncate(w);
        if !t.can_transform(&a.primitive_type()) {
            return Ok(());
        }
        // Within `w` of the type's minimum Java's formula wraps (see `truncate_i32`); the
        // laws hold everywhere else.
        let near_min = |d: &Datum| match d {
            Datum::Int(v) => i64::from(*v) < i64::from(i32::MIN) + i64::from(w),
            Datum::Long(v) => i128::from(*v) < i128::from(i64::MIN) + i128::from(w),
            _ => false,
        };
        if near_min(&a) || near_min(&b) {
            return Ok(());
        }
        let ta = apply(&t, a.clone());
        prop_assert_eq!(apply(&t, ta.clone()), ta.clone());
        if let Some(ord) = a.compare(&b) {
            // a <= b implies t(a) <= t(b), and symmetrically.
            let tb = apply(&t, b);
            let tord = ta.compare(&tb).unwrap();
            match ord {
                std::cmp::Ordering::Less => prop_assert_ne!(tord, std::cmp::Ordering::Greater),
                std::cmp::Ordering::Greater => prop_assert_ne!(tord, std::cmp::Ordering::Less),
                std::cmp::Ordering::Equal => prop_assert_eq!(tord, std::cmp::Ordering::Equal),
            }
        }
    }
}

/// A partition value and the source type it came from, for every transform kind.
fn human_cases() -> impl Strategy<Value = (Transform, P, Datum)> {
    let micros = -100_000_000_000_000_000i64..100_000_000_000_000_000;
    prop_oneof![
        (-500_000i32..500_000).prop_map(|v| (Transform::Year, P::Timestamp, Datum::Int(v % 8_000))),
        (-96_000i32..96_000).prop_map(|v| (Transform::Month, P::Date, Datum::Int(v))),
        (-2_000_000i32..2_000_000).prop_map(|v| (Transform::Day, P::Timestamptz, Datum::Date(v))),
        (-40_000_000i32..40_000_000).prop_map(|v| (Transform::Hour, P::Timestamp, Datum::Int(v))),
        (0i32..1000).prop_map(|v| (Transform::Bucket(1000), P::Long, Datum::Int(v))),
        any::<i64>().prop_map(|v| (Transform::Identity, P::Long, Datum::Long(v))),
        any::<bool>().prop_map(|v| (Transform::Identity, P::Boolean, Datum::Boolean(v))),
        any::<f64>().prop_map(|v| (Transform::Identity, P::Double, Datum::Double(v))),
        any::<f32>().prop_map(|v| (Transform::Identity, P::Float, Datum::Float(v))),
        ".{0,12}".prop_map(|v| (Transform::Truncate(4), P::String, Datum::String(v))),
        (-10i128.pow(18)..10i128.pow(18)).prop_map(|v| (
            Transform::Identity,
            P::Decimal {
                precision: 20,
                scale: 3
            },
            dec(v, 20, 3)
        )),
        (-3_000_000i32..3_000_000).prop_map(|v| (Transform::Identity, P::Date, Datum::Date(v))),
        micros
            .clone()
            .prop_map(|v| (Transform::Identity, P::Timestamp, Datum::Timestamp(v))),
        micros.prop_map(|v| (Transform::Identity, P::Timestamptz, Datum::Timestamptz(v))),
        (0i64..86_400_000_000).prop_map(|v| (Transform::Identity, P::Time, Datum::Time(v))),
        prop::collection::vec(any::<u8>(), 0..9).prop_map(|v| (
            Transform::Identity,
            P::Binary,
            Datum::Binary(v)
        )),
        any::<u128>().prop_map(|v| (
            Transform::Identity,
            P::Uuid,
            Datum::Uuid(Uuid::from_u128(v))
        )),
    ]
}

proptest! {
    /// Every human string parses back to the value it prints (NaN to a NaN).
    #[test]
    fn human_strings_parse_back((t, source, value) in human_cases()) {
        let text = t.to_human_string(&source, Some(&value));
        let back = t.from_human_string(&source, &text).unwrap();
        if value.is_nan() {
            prop_assert!(back.is_nan());
        } else {
            prop_assert_eq!(back, value, "{}", text);
        }
    }
}

#[test]
fn human_strings_refuse_what_is_not_a_value() {
    for (t, source, text) in [
        (Transform::Day, P::Date, "2024-13-01"),
        (Transform::Month, P::Date, "2024"),
        (Transform::Hour, P::Timestamp, "2024-01-01-24"),
        (Transform::Identity, P::Int, "3000000000"),
        (Transform::Identity, P::Boolean, "yes"),
        (
            Transform::Identity,
            P::Decimal {
                precision: 4,
                scale: 1,
            },
            "1.25",
        ),
        (Transform::Identity, P::Double, "0x10"),
    ] {
        let err = t.from_human_string(&source, text).unwrap_err();
        assert!(err.to_string().contains(text), "{err}");
    }
    // Fewer decimal digits than the scale are padded, as a path may print them.
    let d = Transform::Identity.from_human_string(
        &P::Decimal {
            precision: 6,
            scale: 2,
        },
        "14.2",
    );
    assert_eq!(d.unwrap(), dec(1_420, 6, 2));
}
