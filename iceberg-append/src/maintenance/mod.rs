//! Table maintenance, for tables that take many small appends: expiring snapshots (and the
//! files only they reach), finding and deleting orphan files, rewriting manifests, and
//! compacting small data files (with the `write` feature).

#[cfg(feature = "write")]
mod compact;
mod expire;
mod orphans;
mod reach;
mod replace;
mod rewrite_manifests;

#[cfg(feature = "write")]
pub use compact::{CompactionReport, DEFAULT_MIN_INPUT_FILES, RewriteDataFiles};
pub use expire::{ExpireSnapshots, ExpiredFiles, ExpiryReport, FileCount};
pub use orphans::{DEFAULT_ORPHAN_AGE_MS, DeleteOrphanFiles, OrphanReport};
pub use rewrite_manifests::{RewriteManifests, RewriteReport};
