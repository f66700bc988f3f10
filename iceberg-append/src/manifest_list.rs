//! Manifest lists: one Avro file per commit attempt listing every manifest of a snapshot.

use iceberg_spec::{FormatVersion, ManifestFile};

use crate::avro::{self, ContainerWriter, decode, encode};
use crate::error::Result;

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
pub fn encode_manifest_list(
    path: &str,
    header: &ManifestListHeader,
    manifests: &[ManifestFile],
    codec: &str,
    marker: [u8; 16],
) -> Result<Vec<u8>> {
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
    let schema = avro::schema::manifest_list_schema(header.version).to_string();
    let mut writer = ContainerWriter::new(path, &schema, &meta, avro::codec(codec), marker);
    for m in manifests {
        writer.append(|buf| {
            encode::put_manifest_file(buf, m, header.version);
            Ok(())
        })?;
    }
    writer.finish()
}

/// Decodes a manifest list (v1 rows get sequence numbers 0).
///
/// # Errors
/// When the file is not a valid manifest list.
pub fn decode_manifest_list(path: &str, bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    let (_, rows) = avro::read_container(path, bytes)?;
    rows.iter()
        .map(|r| decode::avro_to_manifest_file(r, path))
        .collect()
}
