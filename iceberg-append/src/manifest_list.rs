//! Manifest lists: one Avro file per commit attempt listing every manifest of a snapshot.
//!
//! A list carries most of its rows from its parent's list unchanged. [`ManifestList`] keeps
//! the parent's encoded blocks beside its rows, and [`encode_manifest_list_onto`] copies
//! every block whose rows the new list repeats, re-encoding only the new rows (and a small
//! leading block, so that blocks do not shrink to a row each): the cost of a commit then
//! follows the rows it adds, not the length of the list.

use std::borrow::Borrow;
use std::sync::Arc;

use bytes::Bytes;
use iceberg_spec::{AvroCodec, FormatVersion, ManifestFile};

use crate::avro::blocks::{self, Block, EncodedBlocks};
use crate::avro::{self, ContainerWriter, decode, encode};
use crate::error::Result;

mod history;

pub(crate) use history::rows_of_lists;

/// A parent block of fewer rows is re-encoded into the new list's first block rather than
/// copied, so each commit's few new rows join it until it is worth keeping: blocks stay
/// large enough to compress well, and a commit never re-encodes more than this many rows
/// of its history.
const REENCODE_BELOW_ROWS: usize = 100;

/// The rows of a manifest list and, when known, the encoded file they came from.
#[derive(Debug, Clone)]
pub struct ManifestList {
    /// Shared with the lists before and after it: a commit copies pointers, not rows.
    rows: Vec<Arc<ManifestFile>>,
    encoded: Option<EncodedBlocks>,
}

impl ManifestList {
    /// A list known only by its rows (nothing to copy from it).
    pub fn from_rows(rows: Vec<ManifestFile>) -> Self {
        Self {
            rows: rows.into_iter().map(Arc::new).collect(),
            encoded: None,
        }
    }

    /// Decodes the manifest list file `bytes` (v1 rows get sequence numbers 0), keeping its
    /// blocks for reuse.
    ///
    /// # Errors
    /// When the file is not a valid manifest list.
    pub fn decode(path: &str, bytes: Bytes) -> Result<Self> {
        let rows: Vec<Arc<ManifestFile>> = decode_manifest_list(path, &bytes)?
            .into_iter()
            .map(Arc::new)
            .collect();
        let encoded = blocks::split(bytes)
            .filter(|e| e.blocks.iter().map(|b| b.rows).sum::<usize>() == rows.len());
        Ok(Self { rows, encoded })
    }

    /// Its rows, in order.
    pub fn rows(&self) -> &[Arc<ManifestFile>] {
        &self.rows
    }

    /// The encoded file, when this list was written or read here.
    pub fn file(&self) -> Option<&Bytes> {
        self.encoded.as_ref().map(|e| &e.file)
    }

    /// Its data blocks' row counts (empty when the encoded file is not known).
    pub fn block_rows(&self) -> Vec<usize> {
        self.encoded
            .as_ref()
            .map(|e| e.blocks.iter().map(|b| b.rows).collect())
            .unwrap_or_default()
    }
}

/// The snapshot-level values a manifest list records in its key-value metadata.
#[derive(Debug, Clone, Copy)]
pub struct ManifestListHeader {
    /// Table format version.
    pub version: FormatVersion,
    /// The snapshot the list belongs to.
    pub snapshot_id: i64,
    /// Its parent, if any.
    pub parent_snapshot_id: Option<i64>,
    /// Its sequence number (v2+).
    pub sequence_number: i64,
    /// Its first row id (v3).
    pub first_row_id: Option<i64>,
}

/// Encodes a manifest list in the version's `manifest_file` schema.
///
/// # Errors
/// When a block cannot be compressed.
pub fn encode_manifest_list<M: Borrow<ManifestFile>>(
    path: &str,
    header: &ManifestListHeader,
    manifests: &[M],
    codec: AvroCodec,
    marker: [u8; 16],
) -> Result<Vec<u8>> {
    let schema = avro::schema::manifest_list_schema(header.version).to_string();
    let meta = header_metadata(header);
    let mut writer = ContainerWriter::new(path, &schema, &meta, avro::codec(codec), marker);
    for m in manifests {
        writer.append(|buf| encode::put_manifest_file(buf, m.borrow(), header.version))?;
    }
    writer.finish()
}

/// As [`encode_manifest_list`], copying from `parent` every encoded block whose rows end
/// `manifests` unchanged; returns the file's bytes and the new list with its own blocks,
/// ready to be the next list's parent. The file decodes to exactly `manifests` either way.
///
/// # Errors
/// When a block cannot be compressed.
pub fn encode_manifest_list_onto(
    path: &str,
    header: &ManifestListHeader,
    manifests: Vec<Arc<ManifestFile>>,
    codec: AvroCodec,
    marker: [u8; 16],
    parent: Option<&ManifestList>,
) -> Result<(Bytes, ManifestList)> {
    let schema = avro::schema::manifest_list_schema(header.version).to_string();
    let meta = header_metadata(header);
    let mut writer = ContainerWriter::new(path, &schema, &meta, avro::codec(codec), marker);
    let copied = match parent.and_then(|p| p.encoded.as_ref().map(|e| (p, e))) {
        Some((p, e)) if writer.can_copy_from(e) => copyable_tail(&manifests, &p.rows, e),
        _ => &[],
    };
    let copied_rows: usize = copied.iter().map(|b| b.rows).sum();
    for m in &manifests[..manifests.len() - copied_rows] {
        writer.append(|buf| encode::put_manifest_file(buf, m, header.version))?;
    }
    if let Some(e) = parent.and_then(|p| p.encoded.as_ref()) {
        for b in copied {
            writer.copy_block(e, b)?;
        }
    }
    let encoded = writer.finish_blocks()?;
    let file = encoded.file.clone();
    Ok((
        file,
        ManifestList {
            rows: manifests,
            encoded: Some(encoded),
        },
    ))
}

/// The parent's blocks that may be copied: those whose rows are the last rows of `rows`,
/// equal and in order, less a small leading one (re-encoded so blocks grow, not multiply).
fn copyable_tail<'e>(
    rows: &[Arc<ManifestFile>],
    parent_rows: &[Arc<ManifestFile>],
    parent: &'e EncodedBlocks,
) -> &'e [Block] {
    let common = rows
        .iter()
        .rev()
        .zip(parent_rows.iter().rev())
        .take_while(|(a, b)| Arc::ptr_eq(a, b) || a == b)
        .count();
    // Blocks from the end while they lie within the common suffix.
    let mut first = parent.blocks.len();
    let mut covered = 0;
    while first > 0 && covered + parent.blocks[first - 1].rows <= common {
        first -= 1;
        covered += parent.blocks[first].rows;
    }
    if parent
        .blocks
        .get(first)
        .is_some_and(|b| b.rows < REENCODE_BELOW_ROWS)
    {
        first += 1;
    }
    &parent.blocks[first..]
}

/// The key-value metadata of a manifest list, in Java's order.
fn header_metadata(header: &ManifestListHeader) -> Vec<(&'static str, String)> {
    let mut meta = vec![
        ("snapshot-id", header.snapshot_id.to_string()),
        (
            "parent-snapshot-id",
            header
                .parent_snapshot_id
                .map_or_else(|| "null".to_string(), |p| p.to_string()),
        ),
    ];
    if header.version >= FormatVersion::V2 {
        meta.push(("sequence-number", header.sequence_number.to_string()));
    }
    if header.version >= FormatVersion::V3
        && let Some(first) = header.first_row_id
    {
        meta.push(("first-row-id", first.to_string()));
    }
    meta.push(("format-version", header.version.number().to_string()));
    meta
}

/// Decodes a manifest list (v1 rows get sequence numbers 0).
///
/// # Errors
/// When the file is not a valid manifest list.
pub fn decode_manifest_list(path: &str, bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    let rows = avro::read_container(path, bytes)?.rows;
    rows.iter()
        .map(|r| decode::avro_to_manifest_file(r, path))
        .collect()
}

#[cfg(test)]
mod tests;
