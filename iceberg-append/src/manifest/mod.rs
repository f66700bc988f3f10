//! Manifests: Avro files of manifest entries, one partition spec each.
//!
//! [`encode_manifests`] turns entries into one or more manifest files (rolling at the target
//! size) and the manifest-list rows that describe them; [`decode_manifest`] reads one back
//! (`read.rs`: many at once, each distinct header parsed once).

mod read;
mod summary;

use iceberg_spec::AvroCodec;
use std::borrow::Cow;
use std::collections::HashMap;

use iceberg_spec::{
    DataContentType, FormatVersion, ManifestContent, ManifestEntry, ManifestFile, ManifestStatus,
    PartitionSpec, PrimitiveType, Schema, StructType,
};

use crate::avro::{self, ContainerWriter, encode};
use crate::error::{Error, Result};

pub use read::decode_manifest;
pub(crate) use read::{
    MANIFEST_READS, ManifestDecoder, read_manifest, read_manifests, read_manifests_as,
};
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
    let entries = &*promoted(entries, &types);
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

/// `entries` with the partition values of manifests written before a source column was
/// widened (int where the partition type is now long, float where it is double) promoted,
/// as Java's projection reads them: a merge or rewrite carries them in the wider type.
fn promoted<'e>(entries: &'e [ManifestEntry], types: &[PrimitiveType]) -> Cow<'e, [ManifestEntry]> {
    let narrower = |e: &ManifestEntry| {
        e.data_file
            .partition
            .iter()
            .zip(types)
            .any(|(d, t)| d.as_ref().is_some_and(|d| d.promoted_to(t).is_some()))
    };
    if !entries.iter().any(narrower) {
        return Cow::Borrowed(entries);
    }
    let mut owned = entries.to_vec();
    for e in &mut owned {
        for (d, t) in e.data_file.partition.iter_mut().zip(types) {
            if let Some(wider) = d.as_ref().and_then(|v| v.promoted_to(t)) {
                *d = Some(wider);
            }
        }
    }
    Cow::Owned(owned)
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
    let mut file = row_of(
        path,
        length as i64,
        ctx.spec.spec_id(),
        ctx.content,
        snapshot_id,
        entries,
    );
    file.min_sequence_number = if v1 { 0 } else { min_seq.unwrap_or(-1) };
    file.partitions = Some(partition_summaries(pt, entries)?);
    Ok(file)
}

/// The manifest-list row of the manifest at `path` holding `entries`: their counts,
/// sequence numbers 0 (the commit that lists it assigns them), no partition summaries.
pub(crate) fn row_of(
    path: &str,
    length: i64,
    spec_id: i32,
    content: ManifestContent,
    snapshot_id: i64,
    entries: &[ManifestEntry],
) -> ManifestFile {
    let mut file = ManifestFile {
        manifest_path: path.to_string(),
        manifest_length: length,
        partition_spec_id: spec_id,
        content,
        sequence_number: 0,
        min_sequence_number: 0,
        added_snapshot_id: snapshot_id,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    };
    StatusCounts::of(entries).fill(&mut file);
    file
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

#[cfg(test)]
mod tests;
