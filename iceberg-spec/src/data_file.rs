//! The `data_file` record: one file of a table and its metrics.
//!
//! This is the contract between writing and committing: `iceberg-write` produces these,
//! workers ship them (serde) to a committer, and `iceberg-append` puts them in manifests.
//! Spec: "Manifests" (`data_file` struct, field ids 100-145).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::schema::Schema;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DataContentType {
    /// Table rows (0).
    #[default]
    Data,
    /// Position deletes (1).
    PositionDeletes,
    /// Equality deletes (2).
    EqualityDeletes,
}

impl DataContentType {
    /// The spec's integer code.
    pub fn code(self) -> i32 {
        match self {
            Self::Data => 0,
            Self::PositionDeletes => 1,
            Self::EqualityDeletes => 2,
        }
    }

    /// The content type for a spec integer code.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for codes other than 0, 1, 2.
    pub fn from_code(code: i32) -> Result<Self> {
        match code {
            0 => Ok(Self::Data),
            1 => Ok(Self::PositionDeletes),
            2 => Ok(Self::EqualityDeletes),
            other => Err(Error::invalid_value(
                "content",
                format!("unknown content code {other}"),
            )),
        }
    }
}

/// The file format of a data or delete file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum FileFormat {
    /// Apache Parquet.
    #[default]
    Parquet,
    /// Apache Avro.
    Avro,
    /// Apache ORC.
    Orc,
    /// Puffin (deletion vectors).
    Puffin,
}

impl FileFormat {
    /// The name Java writes (upper case).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Parquet => "PARQUET",
            Self::Avro => "AVRO",
            Self::Orc => "ORC",
            Self::Puffin => "PUFFIN",
        }
    }

    /// Parses a format name, case-insensitively as readers do.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for an unknown format.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_uppercase().as_str() {
            "PARQUET" => Ok(Self::Parquet),
            "AVRO" => Ok(Self::Avro),
            "ORC" => Ok(Self::Orc),
            "PUFFIN" => Ok(Self::Puffin),
            _ => Err(Error::invalid_value(
                "file_format",
                format!("unknown file format `{s}`"),
            )),
        }
    }
}

/// The field id of a position delete file's `file_path` column (the spec's reserved id):
/// equal bounds on it name the one data file the deletes apply to.
pub const DELETE_FILE_PATH_FIELD_ID: i32 = 2_147_483_546;

/// One data or delete file with its partition tuple and column metrics.
///
/// Metric maps are keyed by field id; a missing key means unknown, never zero.
/// Bounds are Appendix-D bytes of the column's type at write time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DataFile {
    /// Data or delete content.
    pub content: DataContentType,
    /// Full URI of the file, with scheme.
    pub file_path: String,
    /// The file's format.
    pub file_format: FileFormat,
    /// Id of the partition spec the tuple belongs to.
    pub spec_id: i32,
    /// The partition tuple, one value per spec field, in spec order.
    #[serde(with = "partition_serde")]
    pub partition: Vec<Option<Datum>>,
    /// Number of rows.
    pub record_count: i64,
    /// Exact size of the file in bytes.
    pub file_size_in_bytes: i64,
    /// Bytes on disk per column (compressed).
    pub column_sizes: BTreeMap<i32, i64>,
    /// Values per column, nulls and NaNs included.
    pub value_counts: BTreeMap<i32, i64>,
    /// Nulls per column.
    pub null_value_counts: BTreeMap<i32, i64>,
    /// NaNs per float/double column.
    pub nan_value_counts: BTreeMap<i32, i64>,
    /// Lower bounds, Appendix-D bytes.
    #[serde(with = "bytes_map")]
    pub lower_bounds: BTreeMap<i32, Vec<u8>>,
    /// Upper bounds, Appendix-D bytes.
    #[serde(with = "bytes_map")]
    pub upper_bounds: BTreeMap<i32, Vec<u8>>,
    /// Encryption key metadata.
    pub key_metadata: Option<Vec<u8>>,
    /// Ascending offsets where a reader may split the file (row-group starts).
    pub split_offsets: Option<Vec<i64>>,
    /// Field ids used for equality deletes.
    pub equality_ids: Option<Vec<i32>>,
    /// Sort order the rows are written in, when known.
    pub sort_order_id: Option<i32>,
    /// v3: first row id; `None` for new files so it is inherited.
    pub first_row_id: Option<i64>,
    /// Data file a position-delete file or DV applies to.
    pub referenced_data_file: Option<String>,
    /// DV blob offset in a Puffin file.
    pub content_offset: Option<i64>,
    /// DV blob length in a Puffin file.
    pub content_size_in_bytes: Option<i64>,
}

impl DataFile {
    /// The decoded lower bound of a column, using its type in `schema`.
    ///
    /// # Errors
    /// When the field is unknown or the bytes do not decode as its type.
    pub fn lower_bound(&self, schema: &Schema, field_id: i32) -> Result<Option<Datum>> {
        decode_bound(&self.lower_bounds, schema, field_id)
    }

    /// The decoded upper bound of a column, using its type in `schema`.
    ///
    /// # Errors
    /// When the field is unknown or the bytes do not decode as its type.
    pub fn upper_bound(&self, schema: &Schema, field_id: i32) -> Result<Option<Datum>> {
        decode_bound(&self.upper_bounds, schema, field_id)
    }
}

fn decode_bound(
    map: &BTreeMap<i32, Vec<u8>>,
    schema: &Schema,
    field_id: i32,
) -> Result<Option<Datum>> {
    match map.get(&field_id) {
        None => Ok(None),
        Some(bytes) => Ok(Some(Datum::from_bytes(
            schema.primitive_type(field_id)?,
            bytes,
        )?)),
    }
}

/// Serde for the partition tuple: each value as its type and JSON single value, so a
/// `DataFile` shipped from a worker decodes to exactly the same datums.
mod partition_serde {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::datum::Datum;
    use crate::types::PrimitiveType;

    #[derive(Serialize, Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        ty: String,
        value: serde_json::Value,
    }

    pub(super) fn serialize<S: Serializer>(v: &[Option<Datum>], s: S) -> Result<S::Ok, S::Error> {
        let typed: Vec<Option<Typed>> = v
            .iter()
            .map(|d| {
                d.as_ref().map(|d| Typed {
                    ty: d.primitive_type().to_string(),
                    value: d.to_json(),
                })
            })
            .collect();
        typed.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<Option<Datum>>, D::Error> {
        let typed: Vec<Option<Typed>> = Vec::deserialize(d)?;
        typed
            .into_iter()
            .map(|t| match t {
                None => Ok(None),
                Some(t) => {
                    let ty: PrimitiveType = t.ty.parse().map_err(D::Error::custom)?;
                    Datum::from_json(&ty, &t.value)
                        .map(Some)
                        .map_err(D::Error::custom)
                }
            })
            .collect()
    }
}

/// Serde for bound maps: bytes as lowercase hex, compact and readable in JSON.
mod bytes_map {
    use std::collections::BTreeMap;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        m: &BTreeMap<i32, Vec<u8>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().map(|(k, v)| {
            let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
            (k, hex)
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<i32, Vec<u8>>, D::Error> {
        let m: BTreeMap<i32, String> = BTreeMap::deserialize(d)?;
        m.into_iter()
            .map(|(k, hex)| {
                if hex.len() % 2 != 0 {
                    return Err(D::Error::custom(format!(
                        "odd-length hex bound for field {k}"
                    )));
                }
                let bytes = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|e| D::Error::custom(format!("bad hex bound for field {k}: {e}")))?;
                Ok((k, bytes))
            })
            .collect()
    }
}
