//! The two orders of uuids that readers disagree on, and how to stay right under both.
//!
//! The spec, Parquet, PyIceberg and RFC 9562 order uuids by their unsigned bytes. Iceberg Java
//! 1.10 compares `java.util.UUID`s (`UUID.compareTo`): the most significant 8 bytes as a signed
//! long, then the least significant 8 as a signed long. The two orders agree on any set of
//! uuids that share the top bit of byte 0 and the top bit of byte 8 (one *sign class*), so a
//! bound is true for both readers when every value it covers is of one class.

use std::cmp::Ordering;

use uuid::Uuid;

/// The sign class of a uuid (0 to 3): the top bits of its bytes 0 and 8.
pub fn uuid_sign_class(u: &Uuid) -> u8 {
    let b = u.as_bytes();
    ((b[0] >> 7) << 1) | (b[8] >> 7)
}

/// Java's `UUID.compareTo`: two signed longs, most significant first.
pub fn java_uuid_cmp(a: &Uuid, b: &Uuid) -> Ordering {
    let (am, al) = a.as_u64_pair();
    let (bm, bl) = b.as_u64_pair();
    (am as i64, al as i64).cmp(&(bm as i64, bl as i64))
}

/// Bytes whose unsigned order is Java's uuid order (the top bits of bytes 0 and 8 flipped),
/// for sorting with byte-wise kernels.
pub fn java_uuid_sort_key(bytes: &[u8; 16]) -> [u8; 16] {
    let mut k = *bytes;
    k[0] ^= 0x80;
    k[8] ^= 0x80;
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn java_order_is_signed_longs() {
        let lo = Uuid::from_u128(0x0000_0000_0000_0000_0000_0000_0000_0001);
        let hi = Uuid::from_u128(0x8000_0000_0000_0000_0000_0000_0000_0000);
        // Unsigned bytes put 0x80.. last; Java's signed longs put it first.
        assert_eq!(lo.as_bytes().cmp(hi.as_bytes()), Ordering::Less);
        assert_eq!(java_uuid_cmp(&lo, &hi), Ordering::Greater);
        let a = Uuid::from_u128(0x0000_0000_0000_0000_8000_0000_0000_0000);
        let b = Uuid::from_u128(0x0000_0000_0000_0000_0000_0000_0000_0000);
        assert_eq!(
            java_uuid_cmp(&a, &b),
            Ordering::Less,
            "byte 8's top bit is a sign"
        );
        assert_eq!(uuid_sign_class(&lo), 0);
        assert_eq!(uuid_sign_class(&hi), 2);
        assert_eq!(uuid_sign_class(&a), 1);
    }

    proptest! {
        #[test]
        fn sort_key_orders_as_java(a in any::<u128>(), b in any::<u128>()) {
            let (a, b) = (Uuid::from_u128(a), Uuid::from_u128(b));
            prop_assert_eq!(
                java_uuid_sort_key(a.as_bytes()).cmp(&java_uuid_sort_key(b.as_bytes())),
                java_uuid_cmp(&a, &b)
            );
        }

        #[test]
        fn one_class_means_one_order(a in any::<u128>(), b in any::<u128>()) {
            let (a, b) = (Uuid::from_u128(a), Uuid::from_u128(b));
            if uuid_sign_class(&a) == uuid_sign_class(&b) {
                prop_assert_eq!(a.as_bytes().cmp(b.as_bytes()), java_uuid_cmp(&a, &b));
            }
        }
    }
}
