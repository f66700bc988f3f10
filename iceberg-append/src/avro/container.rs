//! Avro object-container framing: zig-zag longs, length-prefixed bytes, data blocks.
//!
//! Spec: Avro 1.11 "Object Container Files".

use std::ops::Range;

use apache_avro::Codec;

/// Appends a zig-zag varint long.
pub(super) fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        if z < 0x80 {
            out.push(z as u8);
            return;
        }
        out.push((z as u8 & 0x7F) | 0x80);
        z >>= 7;
    }
}

/// Appends length-prefixed bytes (Avro `bytes` and `string`).
pub(super) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Compresses `block` and appends it as one data block of `count` rows, then clears it;
/// returns where the compressed payload went in `out`.
pub(super) fn put_block(
    out: &mut Vec<u8>,
    block: &mut Vec<u8>,
    count: i64,
    codec: Codec,
    marker: &[u8; 16],
) -> Result<Range<usize>, apache_avro::Error> {
    codec.compress(block)?;
    put_long(out, count);
    put_long(out, block.len() as i64);
    let start = out.len();
    out.extend_from_slice(block);
    let data = start..out.len();
    out.extend_from_slice(marker);
    block.clear();
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_matches_avro_examples() {
        let cases: [(i64, &[u8]); 6] = [
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (-64, &[0x7F]),
            (64, &[0x80, 0x01]),
            (
                i64::MIN,
                &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            ),
        ];
        for (v, bytes) in cases {
            let mut out = Vec::new();
            put_long(&mut out, v);
            assert_eq!(out, bytes, "{v}");
        }
    }
}
