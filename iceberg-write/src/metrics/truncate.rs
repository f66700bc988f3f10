//! Bound truncation for `truncate(N)` metrics: strings by code points, binary by bytes.
//!
//! A lower bound is simply cut (cutting can only lower it). An upper bound is cut and then
//! incremented so it still bounds the value; when nothing can be incremented there is no
//! upper bound. Java: `UnicodeUtil.truncateStringMax`, `BinaryUtil.truncateBinaryMax`.
//! Only `string` and `binary` are ever truncated (never fixed, uuid or decimal).

use iceberg_spec::Datum;

/// First surrogate code point; the range D800-DFFF is not valid in UTF-8.
const MIN_SURROGATE: u32 = 0xD800;
/// Last surrogate code point.
const MAX_SURROGATE: u32 = 0xDFFF;

/// The first `n` code points of `s`.
pub fn truncate_string_lower(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// An upper bound of `s` with at most `n` code points, or `None` when none exists.
///
/// Values of at most `n` code points are returned unchanged. Otherwise the last of the first
/// `n` code points that can be incremented is incremented (skipping the surrogate range) and
/// everything after it dropped.
pub fn truncate_string_upper(s: &str, n: usize) -> Option<String> {
    let Some((cut, _)) = s.char_indices().nth(n) else {
        return Some(s.to_string());
    };
    let prefix: Vec<char> = s[..cut].chars().collect();
    for i in (0..prefix.len()).rev() {
        if let Some(next) = increment_code_point(prefix[i]) {
            let mut out: String = prefix[..i].iter().collect();
            out.push(next);
            return Some(out);
        }
    }
    None
}

/// The next Unicode scalar value, skipping surrogates; `None` after U+10FFFF.
fn increment_code_point(c: char) -> Option<char> {
    let cp = u32::from(c);
    let next = if cp == MIN_SURROGATE - 1 {
        MAX_SURROGATE + 1
    } else {
        cp + 1
    };
    char::from_u32(next)
}

/// The first `n` bytes of `b`.
pub fn truncate_binary_lower(b: &[u8], n: usize) -> &[u8] {
    &b[..b.len().min(n)]
}

/// An upper bound of `b` with at most `n` bytes, or `None` when none exists.
///
/// Values of at most `n` bytes are returned unchanged. Otherwise trailing `0xFF` bytes of the
/// first `n` are dropped and the last remaining byte incremented.
pub fn truncate_binary_upper(b: &[u8], n: usize) -> Option<Vec<u8>> {
    if b.len() <= n {
        return Some(b.to_vec());
    }
    let prefix = &b[..n];
    let last = prefix.iter().rposition(|&x| x != 0xFF)?;
    let mut out = prefix[..=last].to_vec();
    out[last] += 1;
    Some(out)
}

/// A lower bound truncated to `n` units; types other than string and binary are unchanged.
pub(crate) fn truncate_lower_datum(d: Datum, n: usize) -> Datum {
    match d {
        Datum::String(s) => Datum::String(truncate_string_lower(&s, n).to_string()),
        Datum::Binary(b) => Datum::Binary(truncate_binary_lower(&b, n).to_vec()),
        other => other,
    }
}

/// An upper bound truncated to `n` units and incremented; `None` when no bound exists.
pub(crate) fn truncate_upper_datum(d: Datum, n: usize) -> Option<Datum> {
    match d {
        Datum::String(s) => truncate_string_upper(&s, n).map(Datum::String),
        Datum::Binary(b) => truncate_binary_upper(&b, n).map(Datum::Binary),
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn checklist_string_example() {
        let s = "abcdefghijklmnopqrstuvwxyz";
        assert_eq!(truncate_string_lower(s, 16), "abcdefghijklmnop");
        assert_eq!(truncate_string_upper(s, 16).unwrap(), "abcdefghijklmnoq");
    }

    #[test]
    fn checklist_binary_example() {
        let b: Vec<u8> = [0x01, 0xFF].repeat(9);
        assert_eq!(truncate_binary_lower(&b, 16), &b[..16]);
        let mut expected = b[..14].to_vec();
        expected.push(0x02);
        assert_eq!(truncate_binary_upper(&b, 16).unwrap(), expected);
    }

    #[test]
    fn short_values_unchanged() {
        assert_eq!(truncate_string_upper("abc", 3).unwrap(), "abc");
        assert_eq!(truncate_string_lower("abc", 5), "abc");
        assert_eq!(
            truncate_binary_upper(&[0xFF, 0xFF], 2).unwrap(),
            vec![0xFF, 0xFF]
        );
    }

    #[test]
    fn code_points_not_bytes() {
        assert_eq!(truncate_string_lower("😀😀😀", 2), "😀😀");
        assert_eq!(truncate_string_upper("😀😀😀", 2).unwrap(), "😀😁");
        assert_eq!(truncate_string_lower("éèê", 1), "é");
        assert_eq!(truncate_string_upper("éèê", 1).unwrap(), "ê");
    }

    #[test]
    fn surrogates_skipped_and_max_dropped() {
        let s = format!("a{}z", '\u{D7FF}');
        assert_eq!(
            truncate_string_upper(&s, 2).unwrap(),
            format!("a{}", '\u{E000}')
        );
        let s = format!("a{}{}", '\u{10FFFF}', '\u{10FFFF}');
        assert_eq!(truncate_string_upper(&s, 2).unwrap(), "b");
        let s = "\u{10FFFF}".repeat(3);
        assert_eq!(truncate_string_upper(&s, 2), None);
    }

    #[test]
    fn binary_all_ff_has_no_upper_bound() {
        assert_eq!(truncate_binary_upper(&[0xFF; 5], 3), None);
        assert_eq!(
            truncate_binary_upper(&[0x00, 0xFF, 0xFF, 0x01], 3).unwrap(),
            vec![0x01]
        );
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn string_bounds_bound(s in ".{0,40}", n in 1usize..20) {
            let lo = truncate_string_lower(&s, n);
            prop_assert!(s.starts_with(lo) && lo.chars().count() <= n);
            prop_assert_eq!(truncate_string_lower(lo, n), lo);
            if let Some(hi) = truncate_string_upper(&s, n) {
                prop_assert!(hi.as_bytes() >= s.as_bytes());
                prop_assert!(hi.chars().count() <= n);
            } else {
                prop_assert!(s.chars().take(n).all(|c| c == char::MAX));
            }
        }

        #[test]
        fn binary_bounds_bound(b in prop::collection::vec(prop_oneof![any::<u8>(), Just(0xFFu8)], 0..40), n in 1usize..20) {
            let lo = truncate_binary_lower(&b, n);
            prop_assert!(b.starts_with(lo) && lo.len() <= n);
            match truncate_binary_upper(&b, n) {
                Some(hi) => prop_assert!(hi.as_slice() >= b.as_slice() && hi.len() <= n),
                None => prop_assert!(b[..n].iter().all(|x| *x == 0xFF)),
            }
        }
    }

    #[test]
    fn other_datums_untouched() {
        let d = Datum::Fixed(vec![0xFF; 20]);
        assert_eq!(truncate_upper_datum(d.clone(), 4), Some(d.clone()));
        assert_eq!(truncate_lower_datum(d.clone(), 4), d);
    }
}
