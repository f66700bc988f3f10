//! Tests of [`super`]: inference, timestamps, decimals and times from text.

#![allow(clippy::unwrap_used)]
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, TimestampMicrosecondType};
use proptest::prelude::*;

use super::*;

fn infer(values: &[&str]) -> Kind {
    values
        .iter()
        .fold(Kind::Nothing, |k, v| k.merge(Kind::of(v, false)))
}

#[test]
fn inference_keeps_zones_codes_and_precision() {
    assert_eq!(infer(&["1", "-2", "+3"]), Kind::Long);
    assert_eq!(infer(&["1", "2.5", "1e3"]), Kind::Double);
    assert_eq!(
        infer(&["007", "12"]),
        Kind::String,
        "a code keeps its zeros"
    );
    assert_eq!(infer(&["99999999999999999999"]), Kind::String);
    assert_eq!(infer(&["NaN", "inf"]), Kind::String);
    assert_eq!(infer(&["true", "FALSE"]), Kind::Boolean);
    assert_eq!(infer(&["2024-01-01", "2024-02-29"]), Kind::Date);
    assert_eq!(infer(&["2023-02-29"]), Kind::String, "no such day");
    assert_eq!(
        infer(&["2024-01-01T10:00:00", "2024-01-01 10:00"]),
        Kind::Timestamp(false)
    );
    assert_eq!(
        infer(&["2024-01-01T10:00:00Z", "2024-01-01T10:00:00+02:00"]),
        Kind::Timestamptz(false)
    );
    assert_eq!(
        infer(&["2024-01-01T10:00:00.123456789-0130"]),
        Kind::Timestamptz(true)
    );
    assert_eq!(
        infer(&["2024-01-01T10:00:00.123456000"]),
        Kind::Timestamp(false)
    );
    assert_eq!(
        infer(&["2024-01-01T10:00:00Z", "2024-01-01T10:00:00"]),
        Kind::String,
        "a mix of instants and local times is neither"
    );
    assert_eq!(infer(&["2024-01-01", "2024-01-01T10:00:00"]), Kind::String);
    assert_eq!(infer(&[]), Kind::Nothing);
    assert_eq!(Kind::Nothing.data_type(), DataType::Utf8);
    assert_eq!(Kind::of("12", true), Kind::String, "JSON strings stay text");
}

fn column(values: &[Option<&str>]) -> StringArray {
    StringArray::from(values.to_vec())
}

#[test]
fn timestamps_keep_the_instant_or_are_refused() {
    let tz = DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()));
    let c = column(&[
        Some("2024-01-01T12:00:00+02:00"),
        None,
        Some("2024-01-01T10:00:00Z"),
        Some("2024-01-01T10:00:00"),
    ]);
    let a = convert(&c, &tz, "timestamptz", Rules::default()).unwrap();
    let a = a.as_primitive::<TimestampMicrosecondType>();
    assert_eq!(a.value(0), 1_704_103_200_000_000);
    assert_eq!(a.value(0), a.value(2), "same instant");
    assert_eq!(a.value(3), a.value(0), "no zone is UTC");
    assert!(a.is_null(1));

    let local = DataType::Timestamp(TimeUnit::Microsecond, None);
    let e = convert(
        &column(&[Some("2024-01-01T10:00:00"), Some("2024-01-01T10:00:00Z")]),
        &local,
        "timestamp",
        Rules::default(),
    )
    .unwrap_err();
    assert_eq!(e.0, 1);
    assert!(e.1.contains("zone"), "{}", e.1);

    let ns = column(&[Some("1969-12-31T23:59:59.999999999")]);
    let e = convert(&ns, &local, "timestamp", Rules::default()).unwrap_err();
    assert!(e.1.contains("--allow-rounding"), "{}", e.1);
    let a = convert(
        &ns,
        &local,
        "timestamp",
        Rules {
            allow_rounding: true,
        },
    )
    .unwrap();
    assert_eq!(
        a.as_primitive::<TimestampMicrosecondType>().value(0),
        -1,
        "floored"
    );
    let nano = DataType::Timestamp(TimeUnit::Nanosecond, None);
    let a = convert(&ns, &nano, "timestamp_ns", Rules::default()).unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::TimestampNanosecondType>()
            .value(0),
        -1
    );
    assert!(
        convert(
            &column(&[Some("yesterday")]),
            &local,
            "timestamp",
            Rules::default()
        )
        .is_err()
    );
}

#[test]
fn decimals_are_exact_unless_rounding_is_allowed() {
    let to = DataType::Decimal128(10, 2);
    let ok = column(&[
        Some("12.3"),
        Some("-0.05"),
        Some("1.2e1"),
        Some("12.340"),
        Some("99999999.99"),
    ]);
    let a = convert(&ok, &to, "decimal(10, 2)", Rules::default()).unwrap();
    let a = a.as_primitive::<Decimal128Type>();
    assert_eq!(
        a.values().to_vec(),
        vec![1230, -5, 1200, 1234, 9_999_999_999]
    );
    let e = convert(
        &column(&[Some("12.345")]),
        &to,
        "decimal(10, 2)",
        Rules::default(),
    )
    .unwrap_err();
    assert!(
        e.1.contains("12.345") && e.1.contains("--allow-rounding"),
        "{}",
        e.1
    );
    let a = convert(
        &column(&[Some("12.345"), Some("-12.345"), Some("12.344")]),
        &to,
        "d",
        Rules {
            allow_rounding: true,
        },
    )
    .unwrap();
    assert_eq!(
        a.as_primitive::<Decimal128Type>().values().to_vec(),
        vec![1235, -1235, 1234]
    );
    let e = convert(
        &column(&[Some("100000000")]),
        &to,
        "d",
        Rules {
            allow_rounding: true,
        },
    )
    .unwrap_err();
    assert!(e.1.contains("precision"), "{}", e.1);
    assert!(convert(&column(&[Some("1.2.3")]), &to, "d", Rules::default()).is_err());
}

/// Exponents at their extremes: zero at any exponent is zero (it looped for ever), a
/// value 38 or more digits below the scale rounds to zero when allowed, and half up at
/// 38 dropped digits does not overflow (it wrapped to 0 in release builds).
#[test]
fn decimal_exponents_at_the_extremes() {
    let round = Rules {
        allow_rounding: true,
    };
    let values = |to: &DataType, texts: &[&str], rules| {
        let texts: Vec<Option<&str>> = texts.iter().copied().map(Some).collect();
        convert(&column(&texts), to, "d", rules)
            .map(|a| a.as_primitive::<Decimal128Type>().values().to_vec())
    };
    let d = DataType::Decimal128(10, 2);
    assert_eq!(
        values(
            &d,
            &["0e9223372036854775807", "-0e-9223372036854775807"],
            Rules::default()
        ),
        Ok(vec![0, 0])
    );
    assert_eq!(values(&d, &["1e-400", "-3e-41"], round), Ok(vec![0, 0]));
    assert!(values(&d, &["1e-400"], Rules::default()).is_err());
    assert!(values(&d, &["1e400"], round).is_err());
    assert!(values(&d, &["1e9223372036854775807"], round).is_err());
    let d38 = DataType::Decimal128(38, 0);
    let nine = format!("0.9{}", "0".repeat(37));
    assert_eq!(
        values(&d38, &[nine.as_str(), "-0.5", "0.49"], round),
        Ok(vec![1, -1, 0])
    );
}

/// A time is `HH:MM[:SS[.f]]` within one day: never a number of microseconds (Arrow's
/// cast took `1200` as 00:00:00.0012), digits past the microsecond refused unless
/// rounding (down) is allowed.
#[test]
fn times_are_times_of_day() {
    use arrow_array::types::Time64MicrosecondType;
    let to = DataType::Time64(TimeUnit::Microsecond);
    let ok = column(&[
        Some("00:00"),
        Some("10:15:30"),
        Some("23:59:59.999999"),
        None,
    ]);
    let a = convert(&ok, &to, "time", Rules::default()).unwrap();
    let a = a.as_primitive::<Time64MicrosecondType>();
    assert_eq!(a.values()[..3], [0, 36_930_000_000, 86_399_999_999]);
    assert!(a.is_null(3));
    for bad in [
        "1200",
        "3600.9",
        "24:00:00",
        "23:59:60",
        "10:15:30Z",
        "1:2:3",
        "10:15:30.1234567",
    ] {
        let e = convert(&column(&[Some(bad)]), &to, "time", Rules::default()).unwrap_err();
        assert!(e.1.contains(bad), "{bad}: {}", e.1);
    }
    let rounded = convert(
        &column(&[Some("10:15:30.1234567")]),
        &to,
        "time",
        Rules {
            allow_rounding: true,
        },
    )
    .unwrap();
    assert_eq!(
        rounded.as_primitive::<Time64MicrosecondType>().value(0),
        36_930_123_456
    );
}

proptest! {
    /// A timestamp written as text (any offset) converts back to the instant it names.
    #[test]
    fn timestamp_text_round_trips(micros in -62_135_596_800_000_000i64..253_402_300_799_000_000, offset_min in -1080i32..=1080) {
        let utc = chrono::DateTime::from_timestamp_micros(micros).unwrap();
        let off = chrono::FixedOffset::east_opt(offset_min * 60).unwrap();
        let text = utc.with_timezone(&off).format("%Y-%m-%dT%H:%M:%S%.6f%:z").to_string();
        let to = DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()));
        let a = convert(&column(&[Some(&text)]), &to, "timestamptz", Rules::default()).unwrap();
        prop_assert_eq!(a.as_primitive::<TimestampMicrosecondType>().value(0), micros);
        prop_assert_eq!(Kind::of(&text, false), Kind::Timestamptz(false));
    }

    /// A decimal with at most the column's scale converts to exactly its digits.
    #[test]
    fn decimal_text_round_trips(unscaled in -9_999_999_999i64..=9_999_999_999, scale in 0i8..=4) {
        let to = DataType::Decimal128(10, scale);
        let text = arrow_array::Decimal128Array::from(vec![i128::from(unscaled)])
            .with_precision_and_scale(10, scale).unwrap().value_as_string(0);
        let a = convert(&column(&[Some(&text)]), &to, "d", Rules::default()).unwrap();
        prop_assert_eq!(a.as_primitive::<Decimal128Type>().value(0), i128::from(unscaled));
    }
}

/// A uuid (or `fixed[16]`) column takes a uuid as it is written, in any of its forms;
/// anything else is refused naming the value.
#[test]
fn uuids_are_read_in_every_written_form() {
    let to = DataType::FixedSizeBinary(16);
    let forms = [
        "550e8400-e29b-41d4-a716-446655440000",
        "550E8400-E29B-41D4-A716-446655440000",
        "{550e8400-e29b-41d4-a716-446655440000}",
        "urn:uuid:550e8400-e29b-41d4-a716-446655440000",
        "550e8400e29b41d4a716446655440000",
    ];
    let texts: Vec<Option<&str>> = forms.iter().copied().map(Some).chain([None]).collect();
    let a = convert(&column(&texts), &to, "uuid", Rules::default()).unwrap();
    let a = a.as_fixed_size_binary();
    let want = [
        0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00,
        0x00,
    ];
    for (i, form) in forms.iter().enumerate() {
        assert_eq!(a.value(i), want, "{form}");
    }
    assert!(a.is_null(forms.len()));
    for bad in [
        "550e8400-e29b-41d4-a716",
        "zz0e8400-e29b-41d4-a716-446655440000",
        "1",
    ] {
        let e = convert(&column(&[Some(bad)]), &to, "uuid", Rules::default()).unwrap_err();
        assert!(e.1.contains(bad), "{bad}: {}", e.1);
    }
}
