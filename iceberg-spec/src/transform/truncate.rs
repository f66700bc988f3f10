//! `truncate[W]`: round integers and decimals down to a multiple of W, cut strings to W code
//! points and binary to W bytes.
//!
//! Spec: "Truncate Transform Details". Integers use `v - (((v % W) + W) % W)`, i.e. floor to a
//! multiple of W; it is computed in a wider type so no intermediate overflows. The one result
//! that cannot be represented, the multiple of W just below the type's minimum, saturates to
//! the minimum (Java's int arithmetic wraps to a large positive number there instead).

use crate::datum::Datum;

/// `truncate[w]` of an int: the largest multiple of `w` not above `v`.
///
/// Within `w` of `i32::MIN` that multiple does not exist and Java's int arithmetic wraps
/// (`truncate[10](i32::MIN)` is 2147483646); we wrap the same way, because readers compute
/// partition values of predicates with Java's formula and would otherwise skip our files.
///
/// # Panics
/// When `w` is 0 (division by zero); `Transform::apply` rejects `truncate[0]` with an error.
#[inline]
pub fn truncate_i32(v: i32, w: u32) -> i32 {
    let wide = i64::from(v);
    // The cast wraps, as `value - remainder` does in Java's int arithmetic.
    (wide - wide.rem_euclid(i64::from(w))) as i32
}

/// `truncate[w]` of a long: the largest multiple of `w` not above `v`, wrapping within `w`
/// of `i64::MIN` exactly as Java's long arithmetic does (see [`truncate_i32`]).
///
/// # Panics
/// When `w` is 0.
#[inline]
pub fn truncate_i64(v: i64, w: u32) -> i64 {
    let wide = i128::from(v);
    // The cast wraps, as `value - remainder` does in Java's long arithmetic.
    (wide - wide.rem_euclid(i128::from(w))) as i64
}

/// `truncate[w]` of a decimal's unscaled value (`w` counts units of the scale): 10.65 with
/// scale 2 and w = 50 is 1065 → 1050.
///
/// The result may have one digit more than the precision (`-99` → `-100` for w = 10), as in
/// Java; it saturates at `i128::MIN`, far outside any 38-digit decimal.
///
/// # Panics
/// When `w` is 0.
#[inline]
pub fn truncate_decimal(unscaled: i128, w: u32) -> i128 {
    unscaled.saturating_sub(unscaled.rem_euclid(i128::from(w)))
}

/// `truncate[w]` of a string: its first `w` Unicode code points (never splits a character).
pub fn truncate_str(s: &str, w: u32) -> &str {
    match s.char_indices().nth(w as usize) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// `truncate[w]` of binary: its first `w` bytes.
pub fn truncate_bytes(b: &[u8], w: u32) -> &[u8] {
    &b[..b.len().min(w as usize)]
}

/// `truncate[w]` of a value of an accepted type (int, long, decimal, string, binary).
pub(super) fn truncate_datum(d: &Datum, w: u32) -> Option<Datum> {
    Some(match d {
        Datum::Int(v) => Datum::Int(truncate_i32(*v, w)),
        Datum::Long(v) => Datum::Long(truncate_i64(*v, w)),
        Datum::Decimal {
            unscaled,
            precision,
            scale,
        } => Datum::Decimal {
            unscaled: truncate_decimal(*unscaled, w),
            precision: *precision,
            scale: *scale,
        },
        Datum::String(s) => Datum::String(truncate_str(s, w).to_string()),
        Datum::Binary(b) => Datum::Binary(truncate_bytes(b, w).to_vec()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_examples() {
        for (v, want) in [
            (1, 0),
            (9, 0),
            (10, 10),
            (-1, -10),
            (0, 0),
            (-10, -10),
            (-11, -20),
        ] {
            assert_eq!(truncate_i32(v, 10), want, "int {v}");
            assert_eq!(truncate_i64(i64::from(v), 10), i64::from(want), "long {v}");
        }
        assert_eq!(truncate_decimal(1065, 50), 1050);
        assert_eq!(truncate_decimal(-1065, 50), -1100);
        assert_eq!(truncate_str("iceberg", 3), "ice");
        assert_eq!(truncate_str("😀😀😀", 2), "😀😀");
        assert_eq!(truncate_str("😀😀😀", 2).len(), 8);
        assert_eq!(truncate_str("ab", 5), "ab");
        assert_eq!(truncate_str("ab", 0), "");
        assert_eq!(truncate_bytes(&[0, 1, 2, 3], 2), &[0, 1]);
        assert_eq!(truncate_bytes(&[0, 1], 5), &[0, 1]);
    }

    #[test]
    fn extremes_wrap_as_java() {
        // Java: MIN - (((MIN % 10) + 10) % 10) = MIN - 2, which wraps.
        assert_eq!(truncate_i32(i32::MIN, 10), 2_147_483_646);
        assert_eq!(truncate_i32(-2_147_483_647, 3), 2_147_483_647);
        assert_eq!(truncate_i32(i32::MIN + 8, 10), i32::MIN + 8);
        assert_eq!(truncate_i32(i32::MAX, 10), 2_147_483_640);
        assert_eq!(truncate_i32(i32::MIN, 1), i32::MIN);
        assert_eq!(truncate_i32(-5, i32::MAX as u32), -2_147_483_647);
        assert_eq!(truncate_i64(i64::MIN, 10), 9_223_372_036_854_775_806);
        assert_eq!(truncate_i64(i64::MAX, 10), 9_223_372_036_854_775_800);
        assert_eq!(truncate_i64(i64::MIN + 7, 10), 9_223_372_036_854_775_806);
        assert_eq!(truncate_i64(i64::MIN + 8, 10), i64::MIN + 8);
        assert_eq!(truncate_i64(i64::MIN + 9, 10), i64::MIN + 8);
        assert_eq!(truncate_decimal(i128::MIN, 10), i128::MIN);
    }

    proptest! {
        #[test]
        fn int_idempotent_and_monotonic(a in any::<i32>(), b in any::<i32>(), w in 1u32..=1_000_000) {
            // Within `w` of the minimum Java's formula wraps; the laws hold above it.
            let floor = i64::from(i32::MIN) + i64::from(w);
            prop_assume!(i64::from(a) >= floor && i64::from(b) >= floor);
            let t = |v| truncate_i32(v, w);
            prop_assert_eq!(t(t(a)), t(a));
            prop_assert!(t(a) <= a);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(t(lo) <= t(hi));
        }

        #[test]
        fn long_idempotent_and_monotonic(a in any::<i64>(), b in any::<i64>(), w in 1u32..=1_000_000) {
            let floor = i128::from(i64::MIN) + i128::from(w);
            prop_assume!(i128::from(a) >= floor && i128::from(b) >= floor);
            let t = |v| truncate_i64(v, w);
            prop_assert_eq!(t(t(a)), t(a));
            prop_assert!(t(a) <= a);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(t(lo) <= t(hi));
        }

        #[test]
        fn decimal_idempotent_and_monotonic(
            a in -(10i128.pow(38) - 1)..10i128.pow(38),
            b in -(10i128.pow(38) - 1)..10i128.pow(38),
            w in 1u32..=u32::MAX,
        ) {
            let t = |v| truncate_decimal(v, w);
            prop_assert_eq!(t(t(a)), t(a));
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(t(lo) <= t(hi));
        }

        #[test]
        fn string_idempotent_and_monotonic(a in "\\PC{0,12}", b in "\\PC{0,12}", w in 0u32..10) {
            let t = |v| truncate_str(v, w);
            prop_assert_eq!(t(t(&a)), t(&a));
            prop_assert!(t(&a).chars().count() <= w as usize);
            let (lo, hi) = if a.as_bytes() <= b.as_bytes() { (&a, &b) } else { (&b, &a) };
            prop_assert!(t(lo).as_bytes() <= t(hi).as_bytes());
        }

        #[test]
        fn binary_idempotent_and_monotonic(
            a in proptest::collection::vec(any::<u8>(), 0..12),
            b in proptest::collection::vec(any::<u8>(), 0..12),
            w in 0u32..10,
        ) {
            let t = |v| truncate_bytes(v, w);
            prop_assert_eq!(t(t(&a)), t(&a));
            let (lo, hi) = if a <= b { (&a, &b) } else { (&b, &a) };
            prop_assert!(t(lo) <= t(hi));
        }
    }
}
