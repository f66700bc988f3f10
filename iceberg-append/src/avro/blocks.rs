//! The data blocks of an Avro object-container file, located in its bytes so that another
//! file with the same schema and codec can copy them verbatim.
//!
//! A fast append's manifest list repeats every row of its parent's list unchanged. Each
//! block of a container file is compressed on its own and framed only by its row count, its
//! length and the file's sync marker, so the parent's blocks can be carried over as they
//! are, under the new file's marker, instead of being decoded, re-encoded and compressed
//! again on every commit.
//!
//! Spec: Avro 1.11 "Object Container Files".

use std::ops::Range;

use bytes::Bytes;

/// One data block: how many rows it holds and where its (compressed) payload lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// Rows in the block.
    pub(crate) rows: usize,
    /// The payload, after the codec, within the file's bytes.
    pub(crate) data: Range<usize>,
}

/// A container file's bytes with its header facts and the blocks found in it.
#[derive(Debug, Clone)]
pub(crate) struct EncodedBlocks {
    /// The whole file.
    pub(crate) file: Bytes,
    /// The writer schema, exactly as the header holds it.
    pub(crate) schema: String,
    /// The header's `avro.codec` (`null` when absent).
    pub(crate) codec: String,
    /// The data blocks in file order.
    pub(crate) blocks: Vec<Block>,
}

impl EncodedBlocks {
    /// The compressed payload of `block`.
    pub(crate) fn payload(&self, block: &Block) -> &[u8] {
        &self.file[block.data.clone()]
    }
}

/// A cursor over a file's bytes that reads Avro's framing; `None` on anything malformed.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn long(&mut self) -> Option<i64> {
        let mut z: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            z |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Some((z >> 1) as i64 ^ -((z & 1) as i64));
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<Range<usize>> {
        let end = self.at.checked_add(n)?;
        if end > self.bytes.len() {
            return None;
        }
        let range = self.at..end;
        self.at = end;
        Some(range)
    }

    fn bytes(&mut self) -> Option<Range<usize>> {
        let n = usize::try_from(self.long()?).ok()?;
        self.take(n)
    }
}

/// The key-value entries of a container file's header, as (key, value) ranges of `bytes` in
/// file order, and where the sync marker that ends the header starts; `None` when the
/// framing is malformed.
pub(crate) fn header_entries(bytes: &[u8]) -> Option<(HeaderEntries, usize)> {
    if bytes.get(..4)? != b"Obj\x01" {
        return None;
    }
    let mut c = Cursor { bytes, at: 4 };
    let mut entries = Vec::new();
    loop {
        let count = c.long()?;
        if count == 0 {
            return Some((entries, c.at));
        }
        if count < 0 {
            // A negative count is followed by the block's size in bytes.
            c.long()?;
        }
        for _ in 0..count.unsigned_abs() {
            let key = c.bytes()?;
            let value = c.bytes()?;
            entries.push((key, value));
        }
    }
}

/// A header's entries: key and value ranges.
pub(crate) type HeaderEntries = Vec<(Range<usize>, Range<usize>)>;

/// Locates the header facts and every data block of `file`, or `None` when its framing is
/// not exactly as expected (the file is then simply not reused; decoding reports errors).
pub(crate) fn split(file: Bytes) -> Option<EncodedBlocks> {
    let (entries, header_end) = header_entries(&file)?;
    let (mut schema, mut codec) = (None, None);
    for (key, value) in entries {
        match &file[key] {
            b"avro.schema" => schema = Some(file[value].to_vec()),
            b"avro.codec" => codec = Some(file[value].to_vec()),
            _ => {}
        }
    }
    let blocks = data_blocks(&file, header_end)?;
    Some(EncodedBlocks {
        schema: String::from_utf8(schema?).ok()?,
        codec: codec.map_or(Some("null".to_string()), |c| String::from_utf8(c).ok())?,
        blocks,
        file,
    })
}

/// The data blocks of `file`, whose header ends at `header_end` (see [`header_entries`]),
/// in file order; `None` when a block is cut short or not followed by the sync marker.
pub(crate) fn data_blocks(file: &[u8], header_end: usize) -> Option<Vec<Block>> {
    let mut c = Cursor {
        bytes: file,
        at: header_end,
    };
    let sync = c.take(16)?;
    let marker = &file[sync];
    let mut blocks = Vec::new();
    while c.at < file.len() {
        let rows = usize::try_from(c.long()?).ok()?;
        let data = c.bytes()?;
        let end = c.take(16)?;
        if &file[end] != marker {
            return None;
        }
        blocks.push(Block { rows, data });
    }
    Some(blocks)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::avro::ContainerWriter;

    fn file(rows: &[&[u8]], per_block: usize) -> Vec<u8> {
        let meta = [("k", "v".to_string())];
        let mut w = ContainerWriter::new(
            "t.avro",
            r#""bytes""#,
            &meta,
            apache_avro::Codec::Null,
            [9; 16],
        );
        for (i, r) in rows.iter().enumerate() {
            w.append(|buf| {
                super::super::container::put_bytes(buf, r);
                Ok(())
            })
            .unwrap();
            if (i + 1) % per_block == 0 {
                w.close_block().unwrap();
            }
        }
        w.finish().unwrap()
    }

    #[test]
    fn finds_every_block_and_the_header_facts() {
        let bytes = file(&[b"a", b"bb", b"ccc"], 2);
        let split = split(Bytes::from(bytes)).unwrap();
        assert_eq!(split.schema, r#""bytes""#);
        assert_eq!(split.codec, "null");
        assert_eq!(
            split.blocks.iter().map(|b| b.rows).collect::<Vec<_>>(),
            [2, 1]
        );
        // Payloads are the encoded rows: length-prefixed bytes.
        assert_eq!(split.payload(&split.blocks[1]), b"\x06ccc");
    }

    #[test]
    fn malformed_framing_is_not_reused() {
        let bytes = file(&[b"a", b"bb"], 1);
        let mut broken = bytes.clone();
        let n = broken.len();
        broken[n - 1] ^= 0xFF; // the last sync marker no longer matches
        assert!(split(Bytes::from(broken)).is_none());
        assert!(split(Bytes::from(bytes[..bytes.len() - 3].to_vec())).is_none());
        assert!(split(Bytes::from_static(b"Obj\x02")).is_none());
    }
}
