//! A loaded table (metadata plus where it lives), table creation, and metadata file names.

use std::collections::BTreeMap;

use bytes::Bytes;
use iceberg_io::FileIo;
use iceberg_spec::properties::{PARQUET_COMPRESSION, WRITE_METADATA_PATH};
use iceberg_spec::{FormatVersion, PartitionSpec, Schema, SortOrder, TableMetadata};

use crate::env::Environment;
use crate::error::Result;

/// A table as loaded: its metadata and the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Location of the current metadata file (`None` before the first one is written).
    pub metadata_location: Option<String>,
    /// The metadata.
    pub metadata: TableMetadata,
}

impl Table {
    /// Reads and parses a metadata file.
    ///
    /// # Errors
    /// When the file cannot be read or is not valid table metadata.
    pub async fn load(io: &FileIo, metadata_location: &str) -> Result<Self> {
        let bytes = io.read(metadata_location).await?;
        let text = metadata_text(metadata_location, &bytes)?;
        Ok(Self {
            metadata_location: Some(metadata_location.to_string()),
            metadata: TableMetadata::from_json(&text)?,
        })
    }
}

/// The text of a metadata file: gzip-compressed ones (Java's `*.gz.metadata.json`, written
/// with `write.metadata.compression-codec=gzip`) are recognised by their magic bytes.
fn metadata_text(location: &str, bytes: &[u8]) -> Result<String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(bytes), &mut text)
            .map_err(|e| crate::error::Error::InvalidManifest {
                path: location.to_string(),
                reason: format!("not a gzip-compressed metadata file: {e}"),
            })?;
        return Ok(text);
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// The folder metadata files go to: `write.metadata.path` or `<location>/metadata`.
pub fn metadata_dir(meta: &TableMetadata) -> String {
    match meta.property(WRITE_METADATA_PATH) {
        Some(p) => p.trim_end_matches('/').to_string(),
        None => format!("{}/metadata", meta.location),
    }
}

/// `<V:05>-<uuid>.metadata.json`, the name Java gives catalog tables' metadata files.
pub fn metadata_file_name(version: u32, uuid: uuid::Uuid) -> String {
    format!("{version:05}-{uuid}.metadata.json")
}

/// The version of the next metadata file: one past the current file's own `<V>` prefix,
/// else one past the metadata log's length (a table written by something else), else 0.
pub fn next_metadata_version(meta: &TableMetadata, current_location: Option<&str>) -> u32 {
    let Some(loc) = current_location else {
        return 0;
    };
    let name = loc.rsplit('/').next().unwrap_or(loc);
    let parsed = name
        .split_once('-')
        .and_then(|(v, _)| v.parse::<u32>().ok())
        .or_else(|| {
            name.strip_prefix('v')
                .and_then(|r| r.split('.').next()?.parse().ok())
        });
    match parsed {
        Some(v) => v + 1,
        None => meta.metadata_log.len() as u32 + 1,
    }
}

/// Writes `meta` as the next metadata file after `current_location`, refusing to overwrite.
///
/// # Errors
/// When the metadata is invalid or the file already exists.
pub async fn write_metadata_file(
    io: &FileIo,
    meta: &TableMetadata,
    current_location: Option<&str>,
    env: &dyn Environment,
) -> Result<String> {
    let version = next_metadata_version(meta, current_location);
    let path = format!(
        "{}/{}",
        metadata_dir(meta),
        metadata_file_name(version, env.new_uuid())
    );
    let json = meta.to_json()?;
    io.put_if_absent(&path, Bytes::from(json)).await?;
    Ok(path)
}

/// What a new table is made of.
#[derive(Debug, Clone)]
pub struct TableCreation {
    /// Base location, with scheme (`file:///...`, `s3://...`).
    pub location: String,
    /// The schema (field ids as given).
    pub schema: Schema,
    /// The partition spec.
    pub spec: PartitionSpec,
    /// The sort order.
    pub sort_order: SortOrder,
    /// Table properties.
    pub properties: BTreeMap<String, String>,
    /// Format version.
    pub format_version: FormatVersion,
}

impl TableCreation {
    /// An unpartitioned, unsorted v2 table.
    pub fn new(location: impl Into<String>, schema: Schema) -> Self {
        Self {
            location: location.into(),
            schema,
            spec: PartitionSpec::unpartitioned(),
            sort_order: SortOrder::unsorted(),
            properties: BTreeMap::new(),
            format_version: FormatVersion::V2,
        }
    }

    /// The first metadata of the table, located at `location` (catalogs that place tables
    /// themselves pass their own); as Java does, records
    /// `write.parquet.compression-codec=zstd` unless set.
    ///
    /// # Errors
    /// When the definition is invalid.
    pub fn into_metadata(self, location: &str, env: &dyn Environment) -> Result<TableMetadata> {
        let mut properties = self.properties;
        properties
            .entry(PARQUET_COMPRESSION.to_string())
            .or_insert_with(|| "zstd".to_string());
        Ok(TableMetadata::new_table(
            self.format_version,
            env.new_uuid(),
            location,
            self.schema,
            self.spec,
            self.sort_order,
            properties,
            env.now_ms(),
        )?)
    }
}

/// Creates a table: writes `metadata/00000-<uuid>.metadata.json` and returns it loaded
/// (its metadata from [`TableCreation::into_metadata`]).
///
/// # Errors
/// When the definition is invalid or the metadata file cannot be written.
pub async fn create_table(
    io: &FileIo,
    creation: TableCreation,
    env: &dyn Environment,
) -> Result<Table> {
    let location = creation.location.clone();
    let meta = creation.into_metadata(&location, env)?;
    let location = write_metadata_file(io, &meta, None, env).await?;
    Ok(Table {
        metadata_location: Some(location),
        metadata: meta,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use iceberg_spec::{NestedField, PrimitiveType};

    #[test]
    fn versions_from_names() {
        let s = Schema::new(0, vec![NestedField::required(1, "a", PrimitiveType::Int)]).unwrap();
        let meta = TableMetadata::new_table(
            FormatVersion::V2,
            uuid::Uuid::nil(),
            "file:///t",
            s,
            PartitionSpec::unpartitioned(),
            SortOrder::unsorted(),
            BTreeMap::new(),
            0,
        )
        .unwrap();
        assert_eq!(next_metadata_version(&meta, None), 0);
        assert_eq!(
            next_metadata_version(&meta, Some("file:///t/metadata/00041-6f1c.metadata.json")),
            42
        );
        assert_eq!(
            next_metadata_version(&meta, Some("s3://b/t/metadata/v7.metadata.json")),
            8
        );
        assert_eq!(
            next_metadata_version(&meta, Some("s3://b/t/metadata/odd.json")),
            1
        );
        assert_eq!(
            metadata_file_name(3, uuid::Uuid::nil()),
            "00003-00000000-0000-0000-0000-000000000000.metadata.json"
        );
    }
}
