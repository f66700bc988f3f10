//! `bucket[N]`: Murmur3 x86 32-bit hashing (seed 0) and `(hash & i32::MAX) % N`.
//!
//! Spec: Appendix B. Every integer-like value (int, long, date, time, timestamps) is hashed as
//! its 8 little-endian bytes as a long; nanosecond timestamps are first floor-divided to
//! microseconds; decimals hash their minimal big-endian unscaled bytes; uuids their 16
//! big-endian bytes; strings their UTF-8 bytes. These free functions are what the vectorized
//! writer calls, so scalar and columnar paths hash identically.

use uuid::Uuid;

use crate::datum::{Datum, civil, decimal_be_bytes};

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline]
fn mix_k1(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline]
fn mix_h1(h: u32, k: u32) -> u32 {
    (h ^ mix_k1(k))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline]
fn finish(h: u32, len: usize) -> i32 {
    // The length is mixed in modulo 2^32, as the reference implementation does.
    let mut h = h ^ (len as u32);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

/// Murmur3 x86 32-bit hash with seed 0, read as a signed int (Guava `murmur3_32_fixed`).
pub fn murmur3_32(bytes: &[u8]) -> i32 {
    let mut h = 0u32;
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        h = mix_h1(
            h,
            u32::from_le_bytes([block[0], block[1], block[2], block[3]]),
        );
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k |= u32::from(*b) << (8 * i);
        }
        h ^= mix_k1(k);
    }
    finish(h, bytes.len())
}

/// Murmur3 of a long's 8 little-endian bytes (how int, long, date, time and timestamps hash).
#[inline]
pub fn hash_i64(v: i64) -> i32 {
    let bits = v as u64;
    let h = mix_h1(0, bits as u32);
    let h = mix_h1(h, (bits >> 32) as u32);
    finish(h, 8)
}

/// Murmur3 of a decimal's unscaled value as minimal big-endian two's complement bytes.
pub fn hash_decimal(unscaled: i128) -> i32 {
    let (buf, start) = decimal_be_bytes(unscaled);
    murmur3_32(&buf[start..])
}

/// The bucket of a hash: `(hash & 0x7FFF_FFFF) % n`.
///
/// # Panics
/// When `n` is 0 (division by zero); `Transform::apply` rejects `bucket[0]` with an error.
#[inline]
pub fn bucket_index(hash: i32, n: u32) -> i32 {
    // The masked hash and the remainder are both below 2^31, so the casts are exact.
    ((hash & i32::MAX) as u32 % n) as i32
}

/// `bucket[n]` of an int or date (hashed as a long).
///
/// # Panics
/// When `n` is 0.
#[inline]
pub fn bucket_i32(v: i32, n: u32) -> i32 {
    bucket_index(hash_i64(i64::from(v)), n)
}

/// `bucket[n]` of a long, time, or µs timestamp.
///
/// # Panics
/// When `n` is 0.
#[inline]
pub fn bucket_i64(v: i64, n: u32) -> i32 {
    bucket_index(hash_i64(v), n)
}

/// `bucket[n]` of a nanosecond timestamp: floor-divided to µs first, so it matches `timestamp`.
///
/// # Panics
/// When `n` is 0.
#[inline]
pub fn bucket_nanos(v: i64, n: u32) -> i32 {
    bucket_index(hash_i64(v.div_euclid(civil::NANOS_PER_MICRO)), n)
}

/// `bucket[n]` of a decimal's unscaled value (the scale does not take part).
///
/// # Panics
/// When `n` is 0.
pub fn bucket_decimal(unscaled: i128, n: u32) -> i32 {
    bucket_index(hash_decimal(unscaled), n)
}

/// `bucket[n]` of a string (its UTF-8 bytes).
///
/// # Panics
/// When `n` is 0.
pub fn bucket_str(s: &str, n: u32) -> i32 {
    bucket_index(murmur3_32(s.as_bytes()), n)
}

/// `bucket[n]` of fixed or binary bytes.
///
/// # Panics
/// When `n` is 0.
pub fn bucket_bytes(b: &[u8], n: u32) -> i32 {
    bucket_index(murmur3_32(b), n)
}

/// `bucket[n]` of a uuid (its 16 big-endian bytes).
///
/// # Panics
/// When `n` is 0.
pub fn bucket_uuid(u: &Uuid, n: u32) -> i32 {
    bucket_index(murmur3_32(u.as_bytes()), n)
}

/// The Appendix-B hash of a value, or `None` for a type bucket does not accept.
pub(super) fn hash_datum(d: &Datum) -> Option<i32> {
    Some(match d {
        Datum::Int(v) | Datum::Date(v) => hash_i64(i64::from(*v)),
        Datum::Long(v) | Datum::Time(v) | Datum::Timestamp(v) | Datum::Timestamptz(v) => {
            hash_i64(*v)
        }
        Datum::TimestampNs(v) | Datum::TimestamptzNs(v) => {
            hash_i64(v.div_euclid(civil::NANOS_PER_MICRO))
        }
        Datum::Decimal { unscaled, .. } => hash_decimal(*unscaled),
        Datum::String(s) => murmur3_32(s.as_bytes()),
        Datum::Uuid(u) => murmur3_32(u.as_bytes()),
        Datum::Fixed(b) | Datum::Binary(b) => murmur3_32(b),
        Datum::Boolean(_) | Datum::Float(_) | Datum::Double(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn murmur3_reference_vectors() {
        // Classic Murmur3 x86_32 seed-0 vectors, one per tail length.
        let cases: [(&[u8], u32); 6] = [
            (b"", 0),
            (b"a", 0x3c25_69b2),
            (b"ab", 0x9bbf_d75f),
            (b"abc", 0xb3dd_93fa),
            (b"abcd", 0x43ed_676a),
            (b"hello", 0x248b_fa47),
        ];
        for (input, want) in cases {
            assert_eq!(murmur3_32(input), want as i32, "{input:?}");
        }
    }

    #[test]
    fn hash_i64_matches_byte_form() {
        for v in [0, 1, -1, 34, 17_486, i64::MIN, i64::MAX] {
            assert_eq!(hash_i64(v), murmur3_32(&v.to_le_bytes()));
        }
    }

    #[test]
    fn bucket_index_masks_sign() {
        assert_eq!(bucket_index(-1, 16), (i32::MAX % 16));
        assert_eq!(bucket_index(i32::MIN, 7), 0);
    }

    proptest! {
        #[test]
        fn hash_i64_agrees_with_generic(v in any::<i64>()) {
            prop_assert_eq!(hash_i64(v), murmur3_32(&v.to_le_bytes()));
        }

        #[test]
        fn buckets_in_range(v in any::<i64>(), s in ".*", n in 1u32..=u32::MAX) {
            let b = bucket_i64(v, n);
            prop_assert!(b >= 0 && (b as u32) < n);
            let b = bucket_str(&s, n);
            prop_assert!(b >= 0 && (b as u32) < n);
            let b = bucket_nanos(v, n);
            prop_assert!(b >= 0 && (b as u32) < n);
        }

        #[test]
        fn nanos_bucket_like_micros(us in -(i64::MAX / 1_000)..(i64::MAX / 1_000), sub in 0i64..1_000, n in 1u32..1_000) {
            prop_assert_eq!(bucket_nanos(us * 1_000 + sub, n), bucket_i64(us, n));
        }
    }
}
