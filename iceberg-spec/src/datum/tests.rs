#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cmp::Ordering;
use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

use super::civil::MICROS_PER_DAY;
use super::*;
use crate::types::PrimitiveType as P;

const UUID: &str = "f79c3e09-677c-4bbd-a479-3f349cb785e7";

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn dec(unscaled: i128, precision: u32, scale: u32) -> Datum {
    Datum::decimal(unscaled, precision, scale).unwrap()
}

fn uuid() -> Datum {
    Datum::Uuid(Uuid::parse_str(UUID).unwrap())
}

/// Checklist section 2, every worked example.
fn appendix_d_table() -> Vec<(Datum, &'static str)> {
    vec![
        (Datum::Boolean(true), "01"),
        (Datum::Boolean(false), "00"),
        (Datum::Int(1), "01 00 00 00"),
        (Datum::Int(34), "22 00 00 00"),
        (Datum::Int(-1), "FF FF FF FF"),
        (Datum::Long(34), "22 00 00 00 00 00 00 00"),
        (Datum::Float(1.0), "00 00 80 3F"),
        (Datum::Float(-0.0), "00 00 00 80"),
        (Datum::Double(1.0), "00 00 00 00 00 00 F0 3F"),
        (Datum::Double(-1.5), "00 00 00 00 00 00 F8 BF"),
        (Datum::Date(17_486), "4E 44 00 00"),
        (Datum::Date(-1), "FF FF FF FF"),
        (Datum::Time(81_068_000_000), "00 83 07 E0 12 00 00 00"),
        (
            Datum::Timestamp(1_510_871_468_000_000),
            "00 C3 26 2D 21 5E 05 00",
        ),
        (
            Datum::Timestamptz(1_510_871_468_000_000),
            "00 C3 26 2D 21 5E 05 00",
        ),
        (
            Datum::TimestampNs(1_510_871_468_000_000_000),
            "00 B8 69 5F 98 B1 F7 14",
        ),
        (
            Datum::TimestamptzNs(1_510_871_468_000_000_000),
            "00 B8 69 5F 98 B1 F7 14",
        ),
        (Datum::string("iceberg"), "69 63 65 62 65 72 67"),
        (Datum::string("é"), "C3 A9"),
        (uuid(), "F7 9C 3E 09 67 7C 4B BD A4 79 3F 34 9C B7 85 E7"),
        (Datum::fixed([0u8, 1, 2, 3]), "00 01 02 03"),
        (Datum::binary([0u8, 1, 2, 3]), "00 01 02 03"),
        (Datum::binary(Vec::new()), ""),
        (dec(1_420, 4, 2), "05 8C"),
        (dec(0, 4, 2), "00"),
        (dec(1, 4, 0), "01"),
        (dec(-1, 4, 0), "FF"),
        (dec(127, 4, 0), "7F"),
        (dec(128, 4, 0), "00 80"),
        (dec(-128, 4, 0), "80"),
        (dec(-129, 4, 0), "FF 7F"),
        (dec(255, 4, 0), "00 FF"),
        (dec(-1_420, 4, 2), "FA 74"),
        (
            dec(10i128.pow(38) - 1, 38, 0),
            "4B 3B 4C A8 5A 86 C4 7A 09 8A 22 3F FF FF FF FF",
        ),
    ]
}

#[test]
fn appendix_d_examples_both_ways() {
    for (datum, bytes) in appendix_d_table() {
        let bytes = hex(bytes);
        assert_eq!(datum.to_bytes(), bytes, "encode {datum:?}");
        let back = Datum::from_bytes(&datum.primitive_type(), &bytes).unwrap();
        assert_eq!(back, datum, "decode {datum:?}");
        assert_eq!(back.to_bytes(), bytes);
    }
}

#[test]
fn appendix_d_promotion_widths() {
    let read = |ty: &P, b: &[u8]| Datum::from_bytes(ty, b).unwrap();
    assert_eq!(read(&P::Long, &hex("FF FF FF FF")), Datum::Long(-1));
    assert_eq!(read(&P::Double, &hex("00 00 80 3F")), Datum::Double(1.0));
    assert_eq!(read(&P::Double, &hex("00 00 00 80")), Datum::Double(-0.0));
    let date = hex("4E 44 00 00");
    assert_eq!(
        read(&P::Timestamp, &date),
        Datum::Timestamp(17_486 * MICROS_PER_DAY)
    );
    assert_eq!(
        read(&P::Timestamptz, &date),
        Datum::Timestamptz(17_486 * MICROS_PER_DAY)
    );
    let ns = 17_486 * MICROS_PER_DAY * 1_000;
    assert_eq!(read(&P::TimestampNs, &date), Datum::TimestampNs(ns));
    assert_eq!(read(&P::TimestamptzNs, &date), Datum::TimestamptzNs(ns));
    assert_eq!(
        read(&P::Timestamp, &hex("FF FF FF FF")),
        Datum::Timestamp(-MICROS_PER_DAY)
    );
    // A date beyond year 2262 cannot become nanoseconds.
    let err = Datum::from_bytes(&P::TimestampNs, &200_000i32.to_le_bytes()).unwrap_err();
    assert!(err.to_string().contains("timestamp_ns"), "{err}");
    // Boolean readers accept any non-zero byte as true.
    assert_eq!(read(&P::Boolean, &[7]), Datum::Boolean(true));
}

#[test]
fn appendix_d_decimal_lengths() {
    let ty = P::Decimal {
        precision: 38,
        scale: 2,
    };
    let mut padded = vec![0u8; 14];
    padded.extend(hex("05 8C"));
    assert_eq!(Datum::from_bytes(&ty, &padded).unwrap(), dec(1_420, 38, 2));
    let mut neg = vec![0xFFu8; 15];
    neg.extend(hex("FA 74"));
    assert_eq!(Datum::from_bytes(&ty, &neg).unwrap(), dec(-1_420, 38, 2));
    let mut bad = vec![0x01u8];
    bad.extend([0u8; 16]);
    assert!(Datum::from_bytes(&ty, &bad).is_err());
    let mut bad_sign = vec![0x00u8];
    bad_sign.extend([0x80u8; 16]);
    assert!(Datum::from_bytes(&ty, &bad_sign).is_err());
    assert!(Datum::from_bytes(&ty, &[]).is_err());
}

#[test]
fn appendix_d_rejects_wrong_lengths_naming_the_type() {
    let cases: Vec<(P, Vec<u8>, &str)> = vec![
        (P::Boolean, vec![], "boolean"),
        (P::Int, vec![1, 2, 3], "int"),
        (P::Int, vec![0; 8], "int"),
        (P::Long, vec![0; 5], "long"),
        (P::Float, vec![0; 8], "float"),
        (P::Double, vec![0; 2], "double"),
        (P::Date, vec![0; 8], "date"),
        (P::Time, vec![0; 4], "time"),
        (P::Timestamp, vec![0; 7], "timestamp"),
        (P::Uuid, vec![0; 15], "uuid"),
        (P::Fixed(4), vec![0; 3], "fixed[4]"),
        (P::String, vec![0xC3], "string"),
        (P::Unknown, vec![], "unknown"),
        (P::Variant, vec![], "variant"),
        (P::Geometry { crs: None }, vec![0; 16], "geometry"),
    ];
    for (ty, bytes, name) in cases {
        let err = Datum::from_bytes(&ty, &bytes).unwrap_err();
        assert!(
            matches!(err, Error::InvalidValue { ref type_name, .. } if type_name == name),
            "{err}"
        );
    }
}

#[test]
fn decimal_constructor_validates() {
    assert!(Datum::decimal(99, 2, 0).is_ok());
    assert!(Datum::decimal(-99, 2, 0).is_ok());
    assert!(Datum::decimal(100, 2, 0).is_err());
    assert!(Datum::decimal(1, 39, 0).is_err());
    assert!(Datum::decimal(1, 2, 3).is_err());
    assert!(Datum::decimal(10i128.pow(38) - 1, 38, 10).is_ok());
    assert_eq!(
        Datum::date_from_ymd(2017, 11, 16).unwrap(),
        Datum::Date(17_486)
    );
    assert!(Datum::date_from_ymd(2017, 2, 29).is_err());
    assert_eq!(
        Datum::time_from_hms_micro(22, 31, 8, 0).unwrap(),
        Datum::Time(81_068_000_000)
    );
    assert!(Datum::time_from_hms_micro(24, 0, 0, 0).is_err());
}

#[test]
fn ordering_follows_the_spec() {
    use Ordering::*;
    let cases = [
        (Datum::Float(-0.0), Datum::Float(0.0), Some(Less)),
        (Datum::Double(-0.0), Datum::Double(0.0), Some(Less)),
        (
            Datum::Double(f64::NAN),
            Datum::Double(f64::INFINITY),
            Some(Greater),
        ),
        (
            Datum::Double(f64::NAN),
            Datum::Double(-f64::NAN),
            Some(Equal),
        ),
        (
            Datum::Float(f32::NEG_INFINITY),
            Datum::Float(-1.0),
            Some(Less),
        ),
        (Datum::Int(1), Datum::Long(1), None),
        (Datum::Timestamp(1), Datum::Timestamptz(1), None),
        (dec(1_420, 4, 2), dec(142, 3, 1), None),
        (dec(1_420, 4, 2), dec(1_420, 9, 2), Some(Equal)),
        (dec(-1, 4, 2), dec(1, 4, 2), Some(Less)),
        // U+FFFF sorts before U+1F600 by code point, although its UTF-16 unit is larger.
        (Datum::string("\u{FFFF}"), Datum::string("😀"), Some(Less)),
        (Datum::string("a"), Datum::string("ab"), Some(Less)),
        (
            Datum::binary([0x80u8]),
            Datum::binary([0x7Fu8]),
            Some(Greater),
        ),
        (Datum::fixed([0u8, 1]), Datum::fixed([0u8, 2]), Some(Less)),
        (
            Datum::Uuid(Uuid::from_bytes([0x80; 16])),
            Datum::Uuid(Uuid::from_bytes([0x7F; 16])),
            Some(Greater),
        ),
        (Datum::Boolean(false), Datum::Boolean(true), Some(Less)),
        (Datum::Date(-1), Datum::Date(0), Some(Less)),
    ];
    for (a, b, want) in cases {
        assert_eq!(a.compare(&b), want, "{a:?} vs {b:?}");
        assert_eq!(a.partial_cmp(&b), want);
        assert_eq!(b.compare(&a), want.map(Ordering::reverse));
    }
    assert!(Datum::Float(f32::NAN).is_nan());
    assert!(!Datum::Int(0).is_nan());
}

#[test]
fn equality_and_hash_agree() {
    let set: HashSet<Datum> = [
        Datum::Double(0.0),
        Datum::Double(-0.0),
        Datum::Double(f64::NAN),
        Datum::Double(-f64::NAN),
        dec(1_420, 4, 2),
        dec(1_420, 9, 2),
        Datum::Int(1),
        Datum::Long(1),
    ]
    .into_iter()
    .collect();
    assert_eq!(set.len(), 6);
}

/// Every type both ways; the JSON is what we write.
fn json_table() -> Vec<(P, Datum, Value)> {
    let ts = 1_510_871_468_123_456i64;
    vec![
        (P::Boolean, Datum::Boolean(true), json!(true)),
        (P::Int, Datum::Int(34), json!(34)),
        (P::Long, Datum::Long(-34), json!(-34)),
        (P::Float, Datum::Float(1.5), json!(1.5)),
        (P::Float, Datum::Float(0.1), json!(0.1)),
        (P::Float, Datum::Float(f32::NAN), json!("NaN")),
        (P::Double, Datum::Double(-1.5), json!(-1.5)),
        (
            P::Double,
            Datum::Double(f64::NEG_INFINITY),
            json!("-Infinity"),
        ),
        (
            P::Decimal {
                precision: 4,
                scale: 2,
            },
            dec(1_420, 4, 2),
            json!("14.20"),
        ),
        (
            P::Decimal {
                precision: 4,
                scale: 2,
            },
            dec(-5, 4, 2),
            json!("-0.05"),
        ),
        (
            P::Decimal {
                precision: 9,
                scale: 0,
            },
            dec(1_420, 9, 0),
            json!("1420"),
        ),
        (P::Date, Datum::Date(17_486), json!("2017-11-16")),
        (P::Date, Datum::Date(-719_529), json!("-0001-12-31")),
        (
            P::Time,
            Datum::Time(81_068_123_456),
            json!("22:31:08.123456"),
        ),
        (
            P::Timestamp,
            Datum::Timestamp(ts),
            json!("2017-11-16T22:31:08.123456"),
        ),
        (
            P::Timestamp,
            Datum::Timestamp(-1),
            json!("1969-12-31T23:59:59.999999"),
        ),
        (
            P::Timestamptz,
            Datum::Timestamptz(ts),
            json!("2017-11-16T22:31:08.123456+00:00"),
        ),
        (
            P::TimestampNs,
            Datum::TimestampNs(ts * 1_000 + 789),
            json!("2017-11-16T22:31:08.123456789"),
        ),
        (
            P::TimestamptzNs,
            Datum::TimestamptzNs(1_510_871_468_000_000_000),
            json!("2017-11-16T22:31:08.000000000+00:00"),
        ),
        (P::String, Datum::string("iceberg"), json!("iceberg")),
        (P::Uuid, uuid(), json!(UUID)),
        (
            P::Fixed(4),
            Datum::fixed([0u8, 1, 2, 0xFF]),
            json!("000102FF"),
        ),
        (
            P::Binary,
            Datum::binary([0u8, 1, 2, 0xFF]),
            json!("000102FF"),
        ),
    ]
}

#[test]
fn json_single_values_both_ways() {
    for (ty, datum, value) in json_table() {
        assert_eq!(datum.to_json(), value, "write {datum:?}");
        assert_eq!(
            Datum::from_json(&ty, &value).unwrap(),
            datum,
            "read {value}"
        );
    }
}

#[test]
fn json_accepts_java_and_spec_variants() {
    let ok = |ty: P, v: Value, want: Datum| {
        assert_eq!(Datum::from_json(&ty, &v).unwrap(), want, "{v}");
    };
    ok(
        P::Binary,
        json!("000102ff"),
        Datum::binary([0u8, 1, 2, 0xFF]),
    );
    ok(P::Fixed(2), json!("aBcD"), Datum::fixed([0xABu8, 0xCD]));
    ok(P::Uuid, json!(UUID.to_uppercase()), uuid());
    ok(P::Float, json!(2), Datum::Float(2.0));
    ok(P::Double, json!("Infinity"), Datum::Double(f64::INFINITY));
    ok(P::Time, json!("22:31"), Datum::Time(81_060_000_000));
    ok(P::Time, json!("22:31:08.5"), Datum::Time(81_068_500_000));
    ok(
        P::Timestamp,
        json!("2017-11-16T22:31:08"),
        Datum::Timestamp(1_510_871_468_000_000),
    );
    ok(
        P::Timestamptz,
        json!("2017-11-16T22:31:08Z"),
        Datum::Timestamptz(1_510_871_468_000_000),
    );
    ok(
        P::Timestamp,
        json!("2017-11-16T22:31:08.123456000"),
        Datum::Timestamp(1_510_871_468_123_456),
    );
    ok(
        P::Timestamp,
        json!("+10000-01-01T00:00:00"),
        Datum::Timestamp(253_402_300_800_000_000),
    );
    let d42 = P::Decimal {
        precision: 4,
        scale: 2,
    };
    ok(d42.clone(), json!("1.420E+1"), dec(1_420, 4, 2));
    ok(d42.clone(), json!("+14.20"), dec(1_420, 4, 2));
}

#[test]
fn json_rejects_bad_values() {
    let d42 = P::Decimal {
        precision: 4,
        scale: 2,
    };
    let cases = [
        (P::Boolean, json!(1)),
        (P::Int, json!(1.5)),
        (P::Int, json!(2_147_483_648i64)),
        (P::Long, json!("1")),
        (P::Float, json!("1.0")),
        (d42.clone(), json!("14.2")),
        (d42.clone(), json!(14.20)),
        (d42.clone(), json!("140.20")),
        (d42, json!("1x.20")),
        (P::Date, json!("2017-02-30")),
        (P::Time, json!("22:31:08.1234567")),
        (P::Timestamp, json!("2017-11-16T22:31:08+00:00")),
        (P::Timestamp, json!("2017-11-16 22:31:08")),
        (P::Timestamptz, json!("2017-11-16T22:31:08")),
        (P::Timestamptz, json!("2017-11-16T14:31:08-08:00")),
        (P::TimestampNs, json!("3000-01-01T00:00:00")),
        (P::Uuid, json!("f79c3e09677c4bbda4793f349cb785e7")),
        (P::Fixed(4), json!("000102")),
        (P::Binary, json!("0G")),
        (P::Binary, json!("012")),
        (P::String, Value::Null),
        (P::Variant, json!("x")),
    ];
    for (ty, v) in cases {
        let err = Datum::from_json(&ty, &v).unwrap_err();
        assert!(matches!(err, Error::InvalidValue { .. }), "{ty} {v}: {err}");
    }
}

#[test]
fn display_is_readable() {
    let cases = [
        (dec(1_420, 4, 2), "14.20"),
        (Datum::Date(17_486), "2017-11-16"),
        (
            Datum::Timestamptz(1_510_871_468_000_000),
            "2017-11-16T22:31:08.000000+00:00",
        ),
        (Datum::Double(1.0), "1.0"),
        (Datum::Float(-0.0), "-0.0"),
        (Datum::binary([0u8, 0xAB]), "00AB"),
        (uuid(), UUID),
        (Datum::string("a b"), "a b"),
    ];
    for (d, want) in cases {
        assert_eq!(d.to_string(), want);
    }
}

fn arb_decimal() -> impl Strategy<Value = Datum> {
    (1u32..=38).prop_flat_map(|p| {
        let bound = 10i128.pow(p);
        (Just(p), 0..=p, -(bound - 1)..bound).prop_map(|(precision, scale, unscaled)| {
            Datum::Decimal {
                unscaled,
                precision,
                scale,
            }
        })
    })
}

fn arb_datum() -> impl Strategy<Value = Datum> {
    prop_oneof![
        any::<bool>().prop_map(Datum::Boolean),
        any::<i32>().prop_map(Datum::Int),
        any::<i64>().prop_map(Datum::Long),
        any::<f32>().prop_map(Datum::Float),
        any::<f64>().prop_map(Datum::Double),
        arb_decimal(),
        any::<i32>().prop_map(Datum::Date),
        (0..MICROS_PER_DAY).prop_map(Datum::Time),
        any::<i64>().prop_map(Datum::Timestamp),
        any::<i64>().prop_map(Datum::Timestamptz),
        any::<i64>().prop_map(Datum::TimestampNs),
        any::<i64>().prop_map(Datum::TimestamptzNs),
        ".*".prop_map(Datum::String),
        any::<[u8; 16]>().prop_map(|b| Datum::Uuid(Uuid::from_bytes(b))),
        proptest::collection::vec(any::<u8>(), 1..24).prop_map(Datum::Fixed),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Datum::Binary),
    ]
}

fn arb_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(0.0),
        Just(-0.0),
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
    ]
}

proptest! {
    #[test]
    fn appendix_d_round_trip(d in arb_datum()) {
        let bytes = d.to_bytes();
        let back = Datum::from_bytes(&d.primitive_type(), &bytes).unwrap();
        prop_assert_eq!(back.to_bytes(), bytes);
        prop_assert_eq!(back, d);
    }

    #[test]
    fn json_round_trip(d in arb_datum()) {
        let back = Datum::from_json(&d.primitive_type(), &d.to_json()).unwrap();
        prop_assert_eq!(back, d);
    }

    #[test]
    fn decimal_bytes_are_minimal(d in arb_decimal()) {
        let bytes = d.to_bytes();
        // No leading byte merely repeats the sign of the next one.
        if bytes.len() > 1 {
            let redundant = (bytes[0] == 0 && bytes[1] & 0x80 == 0)
                || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0);
            prop_assert!(!redundant, "{:?}", bytes);
        }
    }

    #[test]
    fn a_promoted_value_is_of_the_wider_type_and_compares_as_before(d in arb_datum()) {
        for ty in [P::Long, P::Double, d.primitive_type()] {
            match d.promoted_to(&ty) {
                Some(wider) => {
                    prop_assert_eq!(wider.primitive_type(), ty.clone());
                    prop_assert_eq!(wider.widest(), d.widest());
                    prop_assert!(matches!((&d, &ty), (Datum::Int(_), P::Long) | (Datum::Float(_), P::Double)));
                }
                None => prop_assert!(!matches!((&d, &ty), (Datum::Int(_), P::Long) | (Datum::Float(_), P::Double))),
            }
        }
    }

    #[test]
    fn float_order_is_total(a in arb_f64(), b in arb_f64(), c in arb_f64()) {
        let (da, db, dc) = (Datum::Double(a), Datum::Double(b), Datum::Double(c));
        let ab = da.compare(&db).unwrap();
        prop_assert_eq!(db.compare(&da).unwrap(), ab.reverse());
        if ab != Ordering::Greater && db.compare(&dc).unwrap() != Ordering::Greater {
            prop_assert_ne!(da.compare(&dc).unwrap(), Ordering::Greater);
        }
        if !a.is_nan() && !b.is_nan() && a < b {
            prop_assert_eq!(ab, Ordering::Less);
        }
        prop_assert_eq!(da.compare(&da), Some(Ordering::Equal));
        let (fa, fb) = (Datum::Float(a as f32), Datum::Float(b as f32));
        prop_assert_eq!(fb.compare(&fa).unwrap(), fa.compare(&fb).unwrap().reverse());
    }
}
