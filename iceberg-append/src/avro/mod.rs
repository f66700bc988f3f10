//! Avro object-container files for manifests and manifest lists: our encoder and framing,
//! apache-avro's codecs and decoder.

pub(crate) mod blocks;
mod container;
pub(crate) mod decode;
pub(crate) mod encode;
pub(crate) mod names;
pub(crate) mod schema;

use iceberg_spec::AvroCodec;
use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Reader, ZstandardSettings};

use self::blocks::{Block, EncodedBlocks};
use crate::error::{Error, Result};

/// The Avro codec for a table's manifest codec (`gzip` is Avro's `deflate`).
///
/// Deflate runs at its fastest level: a fast append rewrites the whole manifest list every
/// commit, and at the default level compressing it was the largest single cost of a commit
/// on a table with a long history (manifests come out a few percent larger).
pub(crate) fn codec(codec: AvroCodec) -> Codec {
    match codec {
        AvroCodec::Deflate => Codec::Deflate(DeflateSettings::new(
            miniz_oxide::deflate::CompressionLevel::BestSpeed,
        )),
        AvroCodec::Snappy => Codec::Snappy,
        AvroCodec::Zstd => Codec::Zstandard(ZstandardSettings::default()),
        AvroCodec::Uncompressed => Codec::Null,
    }
}

/// Uncompressed bytes gathered before a data block is closed (Avro's default sync interval,
/// as Java writes): small enough that the file's length tracks what has been encoded.
const BLOCK_TARGET_BYTES: usize = 64 * 1024;

/// An Avro object-container file being encoded in memory, one datum at a time.
///
/// The header is written here, not by apache-avro, because apache-avro re-serialises the
/// schema and drops attributes Iceberg readers need (`logicalType: map` on int-keyed map
/// arrays); the header carries `schema_json` exactly. Datums are appended already encoded
/// (see [`encode`]); blocks are compressed with apache-avro's codecs.
pub(crate) struct ContainerWriter<'a> {
    path: &'a str,
    schema_json: &'a str,
    out: Vec<u8>,
    block: Vec<u8>,
    count: i64,
    codec: Codec,
    marker: [u8; 16],
    /// The blocks closed so far, so that a later file can copy them.
    blocks: Vec<Block>,
}

/// The header name of a codec.
fn codec_name(codec: Codec) -> &'static str {
    match codec {
        Codec::Null => "null",
        Codec::Deflate(_) => "deflate",
        Codec::Snappy => "snappy",
        Codec::Zstandard(_) => "zstandard",
        #[allow(unreachable_patterns)]
        _ => "null",
    }
}

impl<'a> ContainerWriter<'a> {
    /// Starts a file at `path` (for errors) with its header: schema, codec, `metadata`, and
    /// the sync `marker` (a fixed one gives stable bytes).
    pub(crate) fn new(
        path: &'a str,
        schema_json: &'a str,
        metadata: &[(&str, String)],
        codec: Codec,
        marker: [u8; 16],
    ) -> Self {
        let mut out = Vec::with_capacity(8192);
        out.extend_from_slice(b"Obj\x01");
        let mut header: Vec<(&str, &[u8])> = vec![
            ("avro.schema", schema_json.as_bytes()),
            ("avro.codec", codec_name(codec).as_bytes()),
        ];
        header.extend(metadata.iter().map(|(k, v)| (*k, v.as_bytes())));
        container::put_long(&mut out, header.len() as i64);
        for (k, v) in header {
            container::put_bytes(&mut out, k.as_bytes());
            container::put_bytes(&mut out, v);
        }
        container::put_long(&mut out, 0);
        out.extend_from_slice(&marker);
        Self {
            path,
            schema_json,
            out,
            block: Vec::with_capacity(BLOCK_TARGET_BYTES + 4096),
            count: 0,
            codec,
            marker,
            blocks: Vec::new(),
        }
    }

    /// Appends one datum, encoded by `put` into the current block.
    pub(crate) fn append(&mut self, put: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        put(&mut self.block)?;
        self.count += 1;
        if self.block.len() >= BLOCK_TARGET_BYTES {
            self.close_block()?;
        }
        Ok(())
    }

    /// Whether a block encoded by `other` may be copied into this file as it is: the same
    /// writer schema, byte for byte, and the same codec.
    pub(crate) fn can_copy_from(&self, other: &EncodedBlocks) -> bool {
        other.schema == self.schema_json && other.codec == codec_name(self.codec)
    }

    /// Closes the current block and appends `block` of `from` after it, verbatim but for
    /// this file's sync marker. The caller checks [`Self::can_copy_from`].
    pub(crate) fn copy_block(&mut self, from: &EncodedBlocks, block: &Block) -> Result<()> {
        self.close_block()?;
        let payload = from.payload(block);
        container::put_long(&mut self.out, block.rows as i64);
        container::put_long(&mut self.out, payload.len() as i64);
        let start = self.out.len();
        self.out.extend_from_slice(payload);
        self.blocks.push(Block {
            rows: block.rows,
            data: start..self.out.len(),
        });
        self.out.extend_from_slice(&self.marker);
        Ok(())
    }

    /// Bytes of the file written so far: the header and the closed (compressed) blocks, as
    /// Java's rolling manifest writer measures it.
    pub(crate) fn written_len(&self) -> usize {
        self.out.len()
    }

    /// Compresses and writes the rows appended since the last block, if any.
    pub(crate) fn close_block(&mut self) -> Result<()> {
        if self.count > 0 {
            let data = container::put_block(
                &mut self.out,
                &mut self.block,
                self.count,
                self.codec,
                &self.marker,
            )
            .map_err(|e| Error::avro(self.path, e))?;
            self.blocks.push(Block {
                rows: self.count as usize,
                data,
            });
            self.count = 0;
        }
        Ok(())
    }

    /// Closes the last block and returns the file's bytes.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        self.close_block()?;
        Ok(self.out)
    }

    /// Closes the last block and returns the file with its blocks located, for reuse.
    pub(crate) fn finish_blocks(mut self) -> Result<EncodedBlocks> {
        self.close_block()?;
        Ok(EncodedBlocks {
            file: self.out.into(),
            schema: self.schema_json.to_string(),
            codec: codec_name(self.codec).to_string(),
            blocks: self.blocks,
        })
    }
}

/// A decoded container file: its writer schema, key-value metadata and rows.
pub(crate) struct Container {
    /// The writer schema (names made readable, see [`names::with_readable_names`]).
    pub(crate) schema: apache_avro::Schema,
    /// Key-value metadata.
    pub(crate) metadata: HashMap<String, String>,
    /// The rows.
    pub(crate) rows: Vec<Value>,
}

/// Decodes a container file into its writer schema, key-value metadata and rows.
/// The `rows` rows of one data block of a container file whose header gave `schema` and
/// `codec`, from its (compressed) payload.
///
/// # Errors
/// A payload that does not decompress or does not hold `rows` rows of `schema`.
pub(crate) fn decode_block(
    path: &str,
    schema: &apache_avro::Schema,
    codec: Codec,
    rows: usize,
    payload: &[u8],
) -> Result<Vec<Value>> {
    let mut data = payload.to_vec();
    codec
        .decompress(&mut data)
        .map_err(|e| Error::avro(path, e))?;
    let reader = apache_avro::reader::datum::GenericDatumReader::builder(schema)
        .build()
        .map_err(|e| Error::avro(path, e))?;
    let mut rest = &data[..];
    (0..rows)
        .map(|_| {
            reader
                .read_value(&mut rest)
                .map_err(|e| Error::avro(path, e))
        })
        .collect()
}

pub(crate) fn read_container(path: &str, bytes: &[u8]) -> Result<Container> {
    let renamed;
    let reader = match Reader::new(bytes) {
        Ok(reader) => reader,
        // A name apache-avro refuses (another writer's raw or non-ASCII partition name):
        // read the same blocks under names it accepts.
        Err(e) => match names::with_readable_names(bytes) {
            Some(fixed) => {
                renamed = fixed;
                Reader::new(&renamed[..]).map_err(|e| Error::avro(path, e))?
            }
            None => return Err(Error::avro(path, e)),
        },
    };
    let metadata = reader
        .user_metadata()
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    let schema = reader.writer_schema().clone();
    let rows = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::avro(path, e))?;
    Ok(Container {
        schema,
        metadata,
        rows,
    })
}
