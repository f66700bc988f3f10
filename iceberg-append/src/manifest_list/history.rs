//! The rows of many manifest lists of one table's history, each distinct data block decoded
//! once.
//!
//! A commit's list repeats its parent's rows, and this crate's lists (see the parent module)
//! carry the parent's blocks over byte for byte: a history of N fast appends holds about N
//! distinct blocks but N²/2 rows. Expiry's reachability needs every manifest any of them
//! lists, not which list said so, so it decodes each distinct block once. An Avro block
//! decodes the same wherever it sits: its rows depend only on the writer schema, the codec,
//! its row count and its bytes. Lists whose framing, schema or codec this reader does not
//! take (other writers' odd files) are decoded whole, as before.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use apache_avro::Codec;
use bytes::Bytes;
use futures::TryStreamExt;
use futures::stream::FuturesUnordered;
use iceberg_io::FileIo;
use iceberg_spec::ManifestFile;

use super::decode_manifest_list;
use crate::avro::{self, blocks, decode};
use crate::error::{Error, Result};

/// Manifest lists read at once at most: on an object store each is a request, and a
/// streaming table's history is thousands of small lists.
const LIST_READS: usize = 64;

/// Lists read at once until one list's size is known.
const FIRST_LIST_READS: usize = 16;

/// The bytes the lists being read may hold together, judged by the largest list read so
/// far: a long history of a table with many manifests has lists of tens of MB each.
const LIST_READ_BYTES: usize = 64 << 20;

/// How many lists to keep in flight once `done` were read, the largest of `largest` bytes.
/// The window grows by one per list read, so a few small lists read first cannot open it
/// wide before larger ones are seen (lists are read in no order of size).
fn list_reads(largest: usize, done: usize) -> usize {
    let grown = FIRST_LIST_READS.saturating_add(done).min(LIST_READS);
    if largest == 0 {
        return grown;
    }
    (LIST_READ_BYTES / largest).clamp(1, grown)
}

/// The distinct blocks of the lists of one writer schema and codec.
struct Group {
    schema: Arc<apache_avro::Schema>,
    codec: Codec,
    /// By (row count, payload; copied out, so the lists' bytes are not kept), with a path
    /// that holds each (for errors).
    blocks: HashMap<(usize, Bytes), String>,
}

/// Every row of the manifest lists at `paths`, in no particular order; a row that sits in
/// several distinct blocks comes as often (callers collect them into sets). Memory holds
/// the distinct blocks and the lists being read, not every list.
///
/// # Errors
/// A list that cannot be read or decoded.
pub(crate) async fn rows_of_lists(io: &FileIo, paths: &[String]) -> Result<Vec<ManifestFile>> {
    let read = |path: &String| {
        let (io, path) = (io.clone(), path.clone());
        async move {
            let bytes = io.read(&path).await?;
            Ok::<_, Error>((path, bytes))
        }
    };
    let mut pending = paths.iter();
    let mut in_flight = FuturesUnordered::new();
    let (mut largest, mut done) = (0, 0);
    // `None`: apache-avro refuses the schema or codec, so such lists are decoded whole.
    let mut groups: HashMap<(String, String), Option<Group>> = HashMap::new();
    let mut tasks = Vec::new();
    loop {
        let window = list_reads(largest, done);
        while in_flight.len() < window {
            let Some(path) = pending.next() else { break };
            in_flight.push(read(path));
        }
        let Some((path, bytes)) = in_flight.try_next().await? else {
            break;
        };
        largest = largest.max(bytes.len());
        done += 1;
        let group = blocks::split(bytes.clone()).and_then(|split| {
            let group = groups
                .entry((split.schema.clone(), split.codec.clone()))
                .or_insert_with(|| {
                    let schema = apache_avro::Schema::parse_str(&split.schema).ok()?;
                    let codec = Codec::from_str(&split.codec).ok()?;
                    Some(Group {
                        schema: Arc::new(schema),
                        codec,
                        blocks: HashMap::new(),
                    })
                })
                .as_mut()?;
            for block in &split.blocks {
                let key = (block.rows, split.file.slice(block.data.clone()));
                if !group.blocks.contains_key(&key) {
                    let owned = Bytes::copy_from_slice(&key.1);
                    group.blocks.insert((block.rows, owned), path.clone());
                }
            }
            Some(())
        });
        if group.is_none() {
            tasks.push(tokio::spawn(
                async move { decode_manifest_list(&path, &bytes) },
            ));
        }
    }
    for group in groups.into_values().flatten() {
        for ((rows, payload), path) in group.blocks {
            let (schema, codec) = (group.schema.clone(), group.codec);
            tasks.push(tokio::spawn(async move {
                avro::decode_block(&path, &schema, codec, rows, &payload)?
                    .iter()
                    .map(|row| decode::avro_to_manifest_file(row, &path))
                    .collect::<Result<Vec<_>>>()
            }));
        }
    }
    let mut out = Vec::new();
    for task in tasks {
        let rows = task.await.map_err(|e| {
            Error::invalid_manifest("<manifest lists>", format!("decoding failed: {e}"))
        })??;
        out.extend(rows);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_reads_keep_the_bytes_in_flight_within_the_budget() {
        assert_eq!(list_reads(0, 0), FIRST_LIST_READS);
        // A streaming table's lists of a few KB: one more at once per list read, up to the
        // most at once.
        assert_eq!(list_reads(8 << 10, 1), FIRST_LIST_READS + 1);
        assert_eq!(list_reads(8 << 10, 10_000), LIST_READS);
        for largest in [1 << 20, 3 << 20, 50 << 20, 1 << 30] {
            for done in [0, 5, 100] {
                let n = list_reads(largest, done);
                assert!(
                    n >= 1 && n <= FIRST_LIST_READS + done,
                    "{largest}, {done}: {n}"
                );
                assert!(n == 1 || n * largest <= LIST_READ_BYTES, "{largest}: {n}");
            }
        }
        assert_eq!(list_reads(1 << 30, 100), 1);
    }
}
