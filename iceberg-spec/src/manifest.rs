//! Manifest entries and manifest-list rows, the two records a commit's Avro files hold.
//!
//! Spec: "Manifests" (`manifest_entry`) and "Manifest Lists" (`manifest_file`).

use serde::{Deserialize, Serialize};

use crate::data_file::DataFile;
use crate::error::{Error, Result};

/// Status of a manifest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestStatus {
    /// A live file carried into a rewritten manifest (0).
    Existing,
    /// A file added by the snapshot that wrote the manifest (1).
    Added,
    /// A file removed by the snapshot that wrote the manifest (2).
    Deleted,
}

impl ManifestStatus {
    /// The spec's integer code.
    pub fn code(self) -> i32 {
        match self {
            Self::Existing => 0,
            Self::Added => 1,
            Self::Deleted => 2,
        }
    }

    /// The status for a spec integer code.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for codes other than 0, 1, 2.
    pub fn from_code(code: i32) -> Result<Self> {
        match code {
            0 => Ok(Self::Existing),
            1 => Ok(Self::Added),
            2 => Ok(Self::Deleted),
            other => Err(Error::invalid_value(
                "status",
                format!("unknown status code {other}"),
            )),
        }
    }

    /// True for ADDED and EXISTING, the entries a scan reads.
    pub fn is_live(self) -> bool {
        !matches!(self, Self::Deleted)
    }
}

/// One row of a manifest: a file with its status and the numbers it inherits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Added, existing or deleted.
    pub status: ManifestStatus,
    /// Snapshot that added or deleted the file; `None` inherits the manifest's.
    pub snapshot_id: Option<i64>,
    /// Data sequence number; `None` inherits the manifest's (ADDED entries).
    pub sequence_number: Option<i64>,
    /// File sequence number; `None` inherits the manifest's (ADDED entries).
    pub file_sequence_number: Option<i64>,
    /// The file.
    pub data_file: DataFile,
}

impl ManifestEntry {
    /// An ADDED entry for a new file: sequence numbers and row ids left to inheritance.
    pub fn added(snapshot_id: i64, mut data_file: DataFile) -> Self {
        data_file.first_row_id = None;
        Self {
            status: ManifestStatus::Added,
            snapshot_id: Some(snapshot_id),
            sequence_number: None,
            file_sequence_number: None,
            data_file,
        }
    }
}

/// What a manifest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ManifestContent {
    /// Data files (0).
    #[default]
    Data,
    /// Delete files (1).
    Deletes,
}

impl ManifestContent {
    /// The spec's integer code.
    pub fn code(self) -> i32 {
        match self {
            Self::Data => 0,
            Self::Deletes => 1,
        }
    }

    /// The string manifests store in their `content` metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Deletes => "deletes",
        }
    }

    /// The content for a spec integer code.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for codes other than 0, 1.
    pub fn from_code(code: i32) -> Result<Self> {
        match code {
            0 => Ok(Self::Data),
            1 => Ok(Self::Deletes),
            other => Err(Error::invalid_value(
                "content",
                format!("unknown manifest content {other}"),
            )),
        }
    }
}

/// Summary of one partition field over a manifest's entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldSummary {
    /// Some entry has a null value.
    pub contains_null: bool,
    /// Some entry has a NaN value (`None` when unknown).
    pub contains_nan: Option<bool>,
    /// Smallest non-null, non-NaN value, Appendix-D bytes of the partition result type.
    pub lower_bound: Option<Vec<u8>>,
    /// Largest non-null, non-NaN value.
    pub upper_bound: Option<Vec<u8>>,
}

/// One row of a manifest list: a manifest and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Full URI of the manifest.
    pub manifest_path: String,
    /// Exact size of the manifest in bytes.
    pub manifest_length: i64,
    /// Spec id of every file in it.
    pub partition_spec_id: i32,
    /// Data or deletes.
    pub content: ManifestContent,
    /// Sequence number of the commit that added the manifest (0 in v1).
    pub sequence_number: i64,
    /// Smallest data sequence number of its live entries.
    pub min_sequence_number: i64,
    /// Snapshot that added the manifest.
    pub added_snapshot_id: i64,
    /// Entries with status ADDED.
    pub added_files_count: Option<i32>,
    /// Entries with status EXISTING.
    pub existing_files_count: Option<i32>,
    /// Entries with status DELETED.
    pub deleted_files_count: Option<i32>,
    /// Rows in ADDED entries.
    pub added_rows_count: Option<i64>,
    /// Rows in EXISTING entries.
    pub existing_rows_count: Option<i64>,
    /// Rows in DELETED entries.
    pub deleted_rows_count: Option<i64>,
    /// One summary per partition field, in spec order.
    pub partitions: Option<Vec<FieldSummary>>,
    /// Encryption key metadata.
    pub key_metadata: Option<Vec<u8>>,
    /// v3: first row id assigned to the manifest's data files.
    pub first_row_id: Option<i64>,
}

impl ManifestFile {
    /// Rows covered by row-id assignment: added plus existing.
    pub fn assignable_rows(&self) -> i64 {
        self.added_rows_count.unwrap_or(0) + self.existing_rows_count.unwrap_or(0)
    }
}
