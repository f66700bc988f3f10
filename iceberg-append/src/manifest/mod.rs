//! Manifests: Avro files of manifest entries, one partition spec each.
//!
//! [`encode_manifests`] turns entries into one or more manifest files (rolling at the target
//! size) and the manifest-list rows that describe them; [`decode_manifest`] reads one back.

mod summary;

use iceberg_spec::AvroCodec;
use std::collections::HashMap;

use iceberg_spec::{
    DataContentType, FormatVersion, ManifestContent, ManifestEntry, ManifestFile, ManifestStatus,
    PartitionSpec, Schema, StructType,
};

use crate::avro::{self, ContainerWriter, decode, encode};
use crate::error::{Error, Result};

pub(crate) use summary::partition_summaries;

/// Everything that decides the bytes of a manifest besides its entries.
#[derive(Debug, Clone)]
pub struct ManifestContext<'a> {
    /// Table format version.
    pub version: FormatVersion,
    /// The table schema the files were written with.
    pub schema: &'a Schema,
    /// The partition spec of every entry.
    pub spec: &'a PartitionSpec,
    /// Manifest codec.
    pub codec: AvroCodec,
    /// Avro sync marker (fixed for byte-stable fixtures).
    pub marker: [u8; 16],
    /// Roll to a new manifest past this many bytes.
    pub target_size_bytes: u64,
    /// Data or delete files (every entry must match).
    pub content: ManifestContent,
}

/// One encoded manifest: its bytes and its manifest-list row.
#[derive(Debug, Clone)]
pub struct EncodedManifest {
    /// The Avro file.
    pub bytes: Vec<u8>,
    /// The row describing it; `sequence_number`, `min_sequence_number` and `first_row_id` are
    /// assigned by the commit attempt that lists it.
    pub file: ManifestFile,
}

/// Encodes `entries` into manifests named by `path_for(n)`, rolling to a new manifest when
/// the one being written reaches the target size (measured as Java's rolling writer does:
/// the bytes written so far, compressed blocks included).
///
/// # Errors
/// When an entry does not fit the spec.
pub fn encode_manifests(
    ctx: &ManifestContext<'_>,
    snapshot_id: i64,
    entries: &[ManifestEntry],
    mut path_for: impl FnMut(usize) -> String,
) -> Result<Vec<EncodedManifest>> {
    let pt = ctx.spec.partition_type(ctx.schema)?;
    let types = encode::partition_types(&pt);
    let schema_json = avro::schema::manifest_entry_schema(ctx.version, &pt).to_string();
    let mut meta = vec![
        ("schema", ctx.schema.to_json().to_string()),
        ("schema-id", ctx.schema.schema_id().to_string()),
        ("partition-spec", ctx.spec.fields_json().to_string()),
        ("partition-spec-id", ctx.spec.spec_id().to_string()),
        ("format-version", ctx.version.number().to_string()),
    ];
    if ctx.version >= FormatVersion::V2 {
        meta.push(("content", ctx.content.as_str().to_string()));
    } else if ctx.content != ManifestContent::Data {
        return Err(Error::invalid_manifest(
            path_for(0),
            "format v1 has no delete manifests",
        ));
    }
    let codec = avro::codec(ctx.codec);
    let mut out = Vec::new();
    let mut start = 0;
    while start < entries.len() {
        let path = path_for(out.len());
        let mut writer = ContainerWriter::new(&path, &schema_json, &meta, codec, ctx.marker);
        let mut end = start;
        while end < entries.len() {
            let e = &entries[end];
            if (e.data_file.content == DataContentType::Data)
                != (ctx.content == ManifestContent::Data)
            {
                return Err(Error::invalid_manifest(
                    &path,
                    format!(
                        "{} in a {} manifest",
                        e.data_file.file_path,
                        ctx.content.as_str()
                    ),
                ));
            }
            writer.append(|buf| encode::put_entry(buf, e, ctx.version, &pt, &types))?;
            end += 1;
            if writer.written_len() as u64 >= ctx.target_size_bytes {
                break;
            }
        }
        let bytes = writer.finish()?;
        let file = describe(
            ctx,
            &pt,
            &path,
            bytes.len(),
            snapshot_id,
            &entries[start..end],
        )?;
        out.push(EncodedManifest { bytes, file });
        start = end;
    }
    Ok(out)
}

fn describe(
    ctx: &ManifestContext<'_>,
    pt: &StructType,
    path: &str,
    length: usize,
    snapshot_id: i64,
    entries: &[ManifestEntry],
) -> Result<ManifestFile> {
    let mut min_seq: Option<i64> = None;
    for e in entries {
        if e.status.is_live()
            && let Some(s) = e.sequence_number
        {
            min_seq = Some(min_seq.map_or(s, |m| m.min(s)));
        }
    }
    let v1 = ctx.version == FormatVersion::V1;
    let mut file = ManifestFile {
        manifest_path: path.to_string(),
        manifest_length: length as i64,
        partition_spec_id: ctx.spec.spec_id(),
        content: ctx.content,
        sequence_number: 0,
        min_sequence_number: if v1 { 0 } else { min_seq.unwrap_or(-1) },
        added_snapshot_id: snapshot_id,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: Some(partition_summaries(pt, entries)?),
        key_metadata: None,
        first_row_id: None,
    };
    StatusCounts::of(entries).fill(&mut file);
    Ok(file)
}

/// Files and rows of manifest entries by status: the counts a manifest-list row records.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StatusCounts {
    files: [i32; 3],
    rows: [i64; 3],
}

impl StatusCounts {
    /// The counts of `entries`.
    pub(crate) fn of(entries: &[ManifestEntry]) -> Self {
        let mut out = Self::default();
        for e in entries {
            let i = e.status.code() as usize;
            out.files[i] = out.files[i].saturating_add(1);
            out.rows[i] = out.rows[i].saturating_add(e.data_file.record_count);
        }
        out
    }

    /// Sets every count of `m` that is unknown.
    pub(crate) fn fill(&self, m: &mut ManifestFile) {
        let (a, x, d) = (
            ManifestStatus::Added.code() as usize,
            ManifestStatus::Existing.code() as usize,
            ManifestStatus::Deleted.code() as usize,
        );
        m.added_files_count.get_or_insert(self.files[a]);
        m.existing_files_count.get_or_insert(self.files[x]);
        m.deleted_files_count.get_or_insert(self.files[d]);
        m.added_rows_count.get_or_insert(self.rows[a]);
        m.existing_rows_count.get_or_insert(self.rows[x]);
        m.deleted_rows_count.get_or_insert(self.rows[d]);
    }
}

/// A decoded manifest: its key-value metadata and entries.
#[derive(Debug, Clone)]
pub struct DecodedManifest {
    /// Avro key-value metadata (`schema`, `partition-spec`, `format-version`, ...).
    pub metadata: HashMap<String, String>,
    /// The entries, with the manifest's spec id on every data file.
    pub entries: Vec<ManifestEntry>,
}

/// Manifests and manifest lists read at once (requests in flight on an object store).
pub(crate) const READ_CONCURRENCY: usize = 16;

/// Reads and decodes the manifests at `paths`, in their order, [`READ_CONCURRENCY`] at once:
/// on an object store each read is a request, and reading a merge bin's or a snapshot's
/// manifests one after the other would wait out every request's latency in turn.
///
/// # Errors
/// The first manifest that cannot be read or decoded.
pub(crate) async fn read_manifests<'a>(
    io: &iceberg_io::FileIo,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<DecodedManifest>> {
    use futures::{StreamExt, TryStreamExt};
    // Owned futures: futures borrowing `io` and the paths inside `buffered` make the callers'
    // futures fail `Send` for every lifetime (rust-lang/rust#102211).
    let reads: Vec<_> = paths
        .into_iter()
        .map(|path| {
            let (io, path) = (io.clone(), path.to_string());
            async move { read_manifest(&io, &path).await }
        })
        .collect();
    futures::stream::iter(reads)
        .buffered(READ_CONCURRENCY)
        .try_collect()
        .await
}

/// Reads and decodes the manifest at `path`, the decoding in a task of its own: CPU work
/// other cores take on while the caller reads further manifests.
///
/// # Errors
/// When the file cannot be read or is not a valid manifest.
pub(crate) async fn read_manifest(io: &iceberg_io::FileIo, path: &str) -> Result<DecodedManifest> {
    let bytes = io.read(path).await?;
    let owned = path.to_string();
    tokio::spawn(async move { decode_manifest(&owned, &bytes) })
        .await
        .map_err(|e| Error::invalid_manifest(path, format!("its decoding failed: {e}")))?
}

/// Decodes a manifest, taking its schema and partition spec from its own metadata.
///
/// # Errors
/// When the file is not a valid manifest.
pub fn decode_manifest(path: &str, bytes: &[u8]) -> Result<DecodedManifest> {
    let avro::Container {
        schema: writer_schema,
        metadata,
        rows,
    } = avro::read_container(path, bytes)?;
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
    let pt = spec.partition_type(&schema)?;
    let names = avro::names::partition_field_names(&writer_schema, &pt)
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
    let entries = rows
        .iter()
        .map(|r| decode::avro_to_entry(r, spec_id, &pt, &names, path))
        .collect::<Result<Vec<_>>>()?;
    Ok(DecodedManifest { metadata, entries })
}

#[cfg(test)]
mod tests;
