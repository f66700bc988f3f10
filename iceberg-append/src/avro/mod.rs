//! Avro object-container files for manifests and manifest lists, through apache-avro.

pub(crate) mod schema;
pub(crate) mod value;

use std::collections::HashMap;

use apache_avro::{Codec, DeflateSettings, Reader, Schema, Writer, ZstandardSettings};
use apache_avro::types::Value;

use crate::error::{Error, Result};

/// The Avro codec for a table's manifest codec name (`gzip` is Avro's `deflate`).
pub(crate) fn codec(name: &str) -> Codec {
    match name {
        "gzip" | "deflate" => Codec::Deflate(DeflateSettings::default()),
        "snappy" => Codec::Snappy,
        "zstd" => Codec::Zstandard(ZstandardSettings::default()),
        _ => Codec::Null,
    }
}

/// Encodes `rows` under `schema_json` with key-value `metadata` into one container file.
///
/// `marker` is the 16-byte sync marker; pass a fixed one for byte-stable fixtures.
pub(crate) fn write_container(
    path: &str,
    schema_json: &serde_json::Value,
    metadata: &[(&str, String)],
    rows: impl IntoIterator<Item = Value>,
    codec: Codec,
    marker: [u8; 16],
) -> Result<Vec<u8>> {
    let schema = Schema::parse(schema_json).map_err(|e| Error::avro(path, e))?;
    let mut writer = Writer::builder()
        .schema(&schema)
        .writer(Vec::new())
        .codec(codec)
        .marker(marker)
        .build()
        .map_err(|e| Error::avro(path, e))?;
    for (k, v) in metadata {
        writer
            .add_user_metadata((*k).to_string(), v.as_bytes())
            .map_err(|e| Error::avro(path, e))?;
    }
    for row in rows {
        writer.append_value(row).map_err(|e| Error::avro(path, e))?;
    }
    writer.into_inner().map_err(|e| Error::avro(path, e))
}

/// Decodes a container file into its key-value metadata and rows.
pub(crate) fn read_container(path: &str, bytes: &[u8]) -> Result<(HashMap<String, String>, Vec<Value>)> {
    let reader = Reader::new(bytes).map_err(|e| Error::avro(path, e))?;
    let metadata = reader
        .user_metadata()
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    let rows = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::avro(path, e))?;
    Ok((metadata, rows))
}
