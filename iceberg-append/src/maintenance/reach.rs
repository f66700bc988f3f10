//! Which files snapshots reach: their manifest lists, manifests and the data and delete files
//! those manifests hold live, read concurrently. What an expiry may delete is what the expired
//! snapshots reach and no kept one does, decided by reachability as Java's
//! `ReachableFileCleanup` does (never by timestamps or file names).

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt};
use iceberg_io::FileIo;
use iceberg_spec::{DataContentType, ManifestStatus, Snapshot};

use crate::error::Result;
use crate::manifest::{MANIFEST_READS, ManifestDecoder, read_manifest};
use crate::manifest_list::rows_of_lists;

/// A file a manifest holds live: its content kind and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LiveFile {
    pub(crate) content: DataContentType,
    pub(crate) size: u64,
}

/// The manifest lists and manifests a set of snapshots reaches.
#[derive(Debug, Clone, Default)]
pub(crate) struct Manifests {
    /// Manifest list paths.
    pub(crate) lists: BTreeSet<String>,
    /// Manifest paths with their length (0 when a v1 snapshot lists them inline).
    pub(crate) manifests: BTreeMap<String, u64>,
}

/// The manifest lists and manifests `snapshots` reach (v1 snapshots may list manifests
/// inline, without a list).
///
/// # Errors
/// When a manifest list cannot be read or decoded.
pub(crate) async fn manifests_of(io: &FileIo, snapshots: &[&Snapshot]) -> Result<Manifests> {
    let mut out = Manifests::default();
    for s in snapshots {
        for path in s.manifests.iter().flatten() {
            out.manifests.entry(path.clone()).or_insert(0);
        }
    }
    let lists: Vec<String> = snapshots
        .iter()
        .filter_map(|s| s.manifest_list.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Each distinct block of the lists decoded once, in tasks: a long history is thousands
    // of lists, each repeating most of its parent's rows.
    let read = rows_of_lists(io, &lists).await?;
    for manifest in read {
        let length = u64::try_from(manifest.manifest_length).unwrap_or(0);
        out.manifests.insert(manifest.manifest_path, length);
    }
    out.lists.extend(lists);
    Ok(out)
}

/// The files the manifests at `paths` hold live (added or existing entries), by path.
///
/// # Errors
/// When a manifest cannot be read or decoded.
pub(crate) async fn live_files<'a>(
    io: &FileIo,
    paths: impl IntoIterator<Item = &'a String>,
) -> Result<BTreeMap<String, LiveFile>> {
    let decoder = ManifestDecoder::default();
    let decoder = &decoder;
    let decoded: Vec<Vec<(String, LiveFile)>> =
        futures::stream::iter(paths.into_iter().map(|path| async move {
            let manifest = read_manifest(io, path, decoder).await?;
            Ok::<_, crate::error::Error>(
                manifest
                    .entries
                    .into_iter()
                    .filter(|e| e.status != ManifestStatus::Deleted)
                    .map(|e| {
                        let file = LiveFile {
                            content: e.data_file.content,
                            size: u64::try_from(e.data_file.file_size_in_bytes).unwrap_or(0),
                        };
                        (e.data_file.file_path, file)
                    })
                    .collect(),
            )
        }))
        .buffer_unordered(MANIFEST_READS)
        .try_collect()
        .await?;
    Ok(decoded.into_iter().flatten().collect())
}
