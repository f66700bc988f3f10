//! Statistics files, partition statistics files and encryption keys listed in table metadata.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A Puffin statistics file for one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct StatisticsFile {
    /// Snapshot the statistics describe.
    pub snapshot_id: i64,
    /// Location of the Puffin file.
    pub statistics_path: String,
    /// Size of the file.
    pub file_size_in_bytes: i64,
    /// Size of the Puffin footer.
    pub file_footer_size_in_bytes: i64,
    /// Base64 encryption key metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_metadata: Option<String>,
    /// The blobs in the file.
    pub blob_metadata: Vec<BlobMetadata>,
}

/// One blob of a statistics file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BlobMetadata {
    /// Blob type, e.g. `apache-datasketches-theta-v1`.
    #[serde(rename = "type")]
    pub blob_type: String,
    /// Snapshot the blob was computed from.
    pub snapshot_id: i64,
    /// Sequence number of that snapshot.
    pub sequence_number: i64,
    /// Field ids the blob covers.
    pub fields: Vec<i32>,
    /// Extra properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, String>>,
}

/// A partition statistics file for one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionStatisticsFile {
    /// Snapshot the statistics describe.
    pub snapshot_id: i64,
    /// Location of the file.
    pub statistics_path: String,
    /// Size of the file.
    pub file_size_in_bytes: i64,
}

/// A v3 encryption key entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct EncryptionKey {
    /// Key id.
    pub key_id: String,
    /// Base64 encrypted key metadata.
    pub encrypted_key_metadata: String,
    /// Id of the key that encrypted this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_by_id: Option<String>,
    /// Extra properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, String>>,
}
