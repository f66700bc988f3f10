//! Reading manifests back: many at once, and each distinct header parsed once.
//!
//! A streaming table's snapshot lists thousands of small manifests whose headers are equal
//! byte for byte (the Avro schema, codec and key-value metadata depend only on the table's
//! schema, spec and format version, for Java's manifests as for ours). Parsing a header's
//! Avro and Iceberg schemas cost more than decoding a one-entry manifest's rows, so a
//! [`ManifestDecoder`] keeps each distinct header's parsed facts and decodes only the
//! blocks of the manifests that share it. A manifest it does not take as it is (framing,
//! a schema or codec apache-avro refuses, names it must rewrite first, any decoding error)
//! is decoded whole by apache-avro's reader, which also reports the errors.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};

use apache_avro::Codec;
use iceberg_spec::{ManifestEntry, NestedField, PartitionSpec, Schema, StructType};

use super::DecodedManifest;
use crate::avro::{self, blocks, decode};
use crate::error::{Error, Result};

/// Manifests read at once. A streaming table's snapshot lists thousands of manifests of a
/// few KB, so each read is mostly a request's latency: 64 at once bring 2,032 manifests
/// behind 20 ms requests from 2.5 s to about 0.7 s. Raw bytes in flight stay below what the
/// decoded entries, which the callers keep, take anyway.
pub(crate) const MANIFEST_READS: usize = 64;

/// Reads and decodes the manifests at `paths`, in their order, [`MANIFEST_READS`] at once:
/// on an object store each read is a request, and reading a merge bin's or a snapshot's
/// manifests one after the other would wait out every request's latency in turn.
///
/// # Errors
/// The first manifest that cannot be read or decoded.
pub(crate) async fn read_manifests<'a>(
    io: &iceberg_io::FileIo,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<DecodedManifest>> {
    read_manifests_as(io, paths, |m| m).await
}

/// [`read_manifests`], each manifest turned into what `keep` takes of it as soon as it is
/// decoded (so only that is held while the others are read).
///
/// # Errors
/// The first manifest that cannot be read or decoded.
pub(crate) async fn read_manifests_as<'a, T: Send + 'static>(
    io: &iceberg_io::FileIo,
    paths: impl IntoIterator<Item = &'a str>,
    keep: impl Fn(DecodedManifest) -> T + Clone + Send + 'static,
) -> Result<Vec<T>> {
    use futures::{StreamExt, TryStreamExt};
    let decoder = ManifestDecoder::default();
    // Owned futures: futures borrowing `io` and the paths inside `buffered` make the callers'
    // futures fail `Send` for every lifetime (rust-lang/rust#102211).
    let reads: Vec<_> = paths
        .into_iter()
        .map(|path| {
            let (io, path, decoder) = (io.clone(), path.to_string(), decoder.clone());
            let keep = keep.clone();
            async move { read_manifest(&io, &path, &decoder).await.map(keep) }
        })
        .collect();
    futures::stream::iter(reads)
        .buffered(MANIFEST_READS)
        .try_collect()
        .await
}

/// Reads and decodes the manifest at `path` with `decoder`, the decoding in a task of its
/// own: CPU work other cores take on while the caller reads further manifests.
///
/// # Errors
/// When the file cannot be read or is not a valid manifest.
pub(crate) async fn read_manifest(
    io: &iceberg_io::FileIo,
    path: &str,
    decoder: &ManifestDecoder,
) -> Result<DecodedManifest> {
    let bytes = io.read(path).await?;
    let (owned, decoder) = (path.to_string(), decoder.clone());
    tokio::spawn(async move { decoder.decode(&owned, &bytes) })
        .await
        .map_err(|e| Error::invalid_manifest(path, format!("its decoding failed: {e}")))?
}

/// Decodes a manifest, taking its schema and partition spec from its own metadata.
///
/// # Errors
/// When the file is not a valid manifest.
pub fn decode_manifest(path: &str, bytes: &[u8]) -> Result<DecodedManifest> {
    ManifestDecoder::default().decode(path, bytes)
}

/// Parsed headers by the header's bytes (from the magic to the sync marker).
type Headers = HashMap<Box<[u8]>, Arc<Header>>;

/// Decodes manifests, parsing each distinct header once; clones share what was parsed.
#[derive(Clone, Default)]
pub(crate) struct ManifestDecoder {
    headers: Arc<Mutex<Headers>>,
}

impl ManifestDecoder {
    /// Decodes the manifest `bytes` read from `path`.
    ///
    /// # Errors
    /// When the file is not a valid manifest.
    pub(crate) fn decode(&self, path: &str, bytes: &[u8]) -> Result<DecodedManifest> {
        match self.decode_by_header(path, bytes) {
            Some(decoded) => Ok(decoded),
            None => decode_whole(path, bytes),
        }
    }

    /// The manifest decoded block by block under its (cached) header, or `None` for
    /// anything short of a manifest decoded in full.
    pub(super) fn decode_by_header(&self, path: &str, bytes: &[u8]) -> Option<DecodedManifest> {
        let (entries, header_end) = blocks::header_entries(bytes)?;
        let key = &bytes[..header_end];
        let cached = self.lock().get(key).cloned();
        let header = match cached {
            Some(header) => header,
            None => {
                let header = Arc::new(Header::parse(path, bytes, &entries)?);
                self.lock().insert(key.into(), header.clone());
                header
            }
        };
        let mut out = Vec::new();
        for block in blocks::data_blocks(bytes, header_end)? {
            let payload = &bytes[block.data];
            let rows =
                avro::decode_block(path, &header.schema, header.codec, block.rows, payload).ok()?;
            for row in &rows {
                let f = &header.facts;
                out.push(decode::avro_to_entry(row, f.spec_id, &f.pt, &f.names, path).ok()?);
            }
        }
        Some(DecodedManifest {
            metadata: header.metadata.clone(),
            entries: out,
        })
    }

    /// Distinct headers parsed so far.
    #[cfg(test)]
    pub(crate) fn headers_parsed(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Headers> {
        // A panic while holding the lock leaves the map as it was: entries are whole.
        self.headers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A manifest header, parsed.
struct Header {
    /// The writer schema.
    schema: apache_avro::Schema,
    codec: Codec,
    /// Key-value metadata, `avro.*` keys aside (as apache-avro's reader gives it).
    metadata: HashMap<String, String>,
    facts: Facts,
}

impl Header {
    /// The header of `bytes` from its `entries`, or `None` when apache-avro's reader would
    /// not take its schema or codec as they are.
    fn parse(path: &str, bytes: &[u8], entries: &blocks::HeaderEntries) -> Option<Self> {
        let (mut schema, mut codec, mut metadata) = (None, None, HashMap::new());
        for (key, value) in entries {
            let key = std::str::from_utf8(&bytes[key.clone()]).ok()?;
            let value = &bytes[value.clone()];
            match key {
                "avro.schema" => schema = Some(value),
                "avro.codec" => codec = Some(value),
                _ if key.starts_with("avro.") => {}
                _ => {
                    let value = String::from_utf8_lossy(value).into_owned();
                    metadata.insert(key.to_string(), value);
                }
            }
        }
        let schema = apache_avro::Schema::parse_str(std::str::from_utf8(schema?).ok()?).ok()?;
        let codec = match codec {
            None => Codec::Null,
            Some(name) => Codec::from_str(std::str::from_utf8(name).ok()?).ok()?,
        };
        let facts = Facts::of(path, &metadata, &schema).ok()?;
        Some(Self {
            schema,
            codec,
            metadata,
            facts,
        })
    }
}

/// What a manifest's metadata and writer schema say about its entries.
struct Facts {
    spec_id: i32,
    /// The partition type of the manifest's spec under its table schema.
    pt: StructType,
    /// The Avro names of the partition fields in the writer schema.
    names: Vec<String>,
}

impl Facts {
    fn of(
        path: &str,
        metadata: &HashMap<String, String>,
        writer_schema: &apache_avro::Schema,
    ) -> Result<Self> {
        let schema_text = metadata
            .get("schema")
            .ok_or_else(|| Error::invalid_manifest(path, "no `schema` in key-value metadata"))?;
        let schema_json: serde_json::Value = serde_json::from_str(schema_text)
            .map_err(|e| Error::invalid_manifest(path, format!("bad `schema` metadata: {e}")))?;
        let schema = Schema::from_json(&schema_json)?;
        let spec_id: i32 = metadata
            .get("partition-spec-id")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let fields_text = metadata.get("partition-spec").ok_or_else(|| {
            Error::invalid_manifest(path, "no `partition-spec` in key-value metadata")
        })?;
        let spec_json = format!(r#"{{"spec-id": {spec_id}, "fields": {fields_text}}}"#);
        let spec: PartitionSpec = serde_json::from_str(&spec_json).map_err(|e| {
            Error::invalid_manifest(path, format!("bad `partition-spec` metadata: {e}"))
        })?;
        let pt = read_partition_type(path, &spec, &schema, writer_schema)?;
        let names = avro::names::partition_field_names(writer_schema, &pt)
            .into_iter()
            .zip(&pt.fields)
            .map(|(name, f)| {
                name.ok_or_else(|| {
                    Error::invalid_manifest(
                        path,
                        format!(
                            "partition field `{}` (id {}) is not in the manifest's schema",
                            f.name, f.id
                        ),
                    )
                })
            })
            .collect::<Result<Vec<String>>>()?;
        Ok(Self { spec_id, pt, names })
    }
}

/// The partition type a manifest's entries are read with: the spec's under the header's
/// schema, except that the field of a transform this library does not know takes the type
/// the manifest's own Avro schema gives it (the spec requires readers to read such tables;
/// no one else can tell the type).
fn read_partition_type(
    path: &str,
    spec: &PartitionSpec,
    schema: &Schema,
    writer_schema: &apache_avro::Schema,
) -> Result<StructType> {
    let fields =
        spec.fields()
            .iter()
            .map(|f| {
                let ty = if f.transform.is_unknown() {
                    avro::names::partition_field_type(writer_schema, f.field_id, &f.name)
                        .ok_or_else(|| {
                            Error::invalid_manifest(
                                path,
                                format!(
                                    "partition field `{}` of the unknown transform `{}` has no \
                                 primitive type in the manifest's schema",
                                    f.name, f.transform
                                ),
                            )
                        })?
                } else {
                    spec.field_type(f, schema)?
                };
                Ok(NestedField::optional(f.field_id, f.name.clone(), ty))
            })
            .collect::<Result<Vec<_>>>()?;
    Ok(StructType::new(fields))
}

/// Decodes a manifest whole with apache-avro's reader (names it refuses made readable
/// first), header and all.
///
/// # Errors
/// When the file is not a valid manifest.
pub(super) fn decode_whole(path: &str, bytes: &[u8]) -> Result<DecodedManifest> {
    let avro::Container {
        schema: writer_schema,
        metadata,
        rows,
    } = avro::read_container(path, bytes)?;
    let Facts { spec_id, pt, names } = Facts::of(path, &metadata, &writer_schema)?;
    let entries = rows
        .iter()
        .map(|r| decode::avro_to_entry(r, spec_id, &pt, &names, path))
        .collect::<Result<Vec<ManifestEntry>>>()?;
    Ok(DecodedManifest { metadata, entries })
}
