//! Table maintenance, for tables that take many small appends: expiring snapshots (and the
//! files only they reach), finding and deleting orphan files, and rewriting manifests.

mod expire;
mod orphans;
mod reach;
mod rewrite_manifests;

pub use expire::{ExpireSnapshots, ExpiredFiles, ExpiryReport, FileCount};
pub use orphans::{DEFAULT_ORPHAN_AGE_MS, DeleteOrphanFiles, OrphanReport};
pub use rewrite_manifests::{RewriteManifests, RewriteReport};
