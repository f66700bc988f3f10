//! Avro object-container files for manifests and manifest lists, through apache-avro.

mod container;
pub(crate) mod schema;
pub(crate) mod value;

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use apache_avro::{Codec, DeflateSettings, Reader, Schema, ZstandardSettings};

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

/// Uncompressed bytes gathered before a data block is closed.
const BLOCK_TARGET_BYTES: usize = 1024 * 1024;

/// Encodes `rows` under `schema_json` with key-value `metadata` into one container file.
///
/// The header is written here, not by apache-avro, because apache-avro re-serialises the
/// schema and drops attributes Iceberg readers need (`logicalType: map` on int-keyed map
/// arrays); the header carries `schema_json` exactly. Each datum is encoded and each block
/// compressed by apache-avro. `marker` is the sync marker; a fixed one gives stable bytes.
pub(crate) fn write_container(
    path: &str,
    schema_json: &serde_json::Value,
    metadata: &[(&str, String)],
    rows: impl IntoIterator<Item = Value>,
    codec: Codec,
    marker: [u8; 16],
) -> Result<Vec<u8>> {
    let schema = Schema::parse(schema_json).map_err(|e| Error::avro(path, e))?;
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"Obj\x01");
    let codec_name = match codec {
        Codec::Null => "null",
        Codec::Deflate(_) => "deflate",
        Codec::Snappy => "snappy",
        Codec::Zstandard(_) => "zstandard",
        #[allow(unreachable_patterns)]
        _ => "null",
    };
    let schema_text = schema_json.to_string();
    let mut header: Vec<(&str, &[u8])> = vec![
        ("avro.schema", schema_text.as_bytes()),
        ("avro.codec", codec_name.as_bytes()),
    ];
    header.extend(metadata.iter().map(|(k, v)| (*k, v.as_bytes())));
    container::put_long(&mut out, header.len() as i64);
    for (k, v) in header {
        container::put_bytes(&mut out, k.as_bytes());
        container::put_bytes(&mut out, v);
    }
    container::put_long(&mut out, 0);
    out.extend_from_slice(&marker);

    let datum_writer = GenericDatumWriter::builder(&schema)
        .build()
        .map_err(|e| Error::avro(path, e))?;
    let mut block = Vec::new();
    let mut count = 0i64;
    for row in rows {
        datum_writer
            .write_value(&mut block, row)
            .map_err(|e| Error::avro(path, e))?;
        count += 1;
        if block.len() >= BLOCK_TARGET_BYTES {
            container::put_block(&mut out, &mut block, count, codec, &marker)
                .map_err(|e| Error::avro(path, e))?;
            count = 0;
        }
    }
    if count > 0 {
        container::put_block(&mut out, &mut block, count, codec, &marker)
            .map_err(|e| Error::avro(path, e))?;
    }
    Ok(out)
}

/// Decodes a container file into its key-value metadata and rows.
pub(crate) fn read_container(
    path: &str,
    bytes: &[u8],
) -> Result<(HashMap<String, String>, Vec<Value>)> {
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
