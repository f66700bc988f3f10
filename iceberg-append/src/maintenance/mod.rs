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

use iceberg_spec::TableMetadata;
use iceberg_spec::properties::{GC_ENABLED, gc_enabled};

use crate::error::{Error, Result};

#[cfg(feature = "write")]
pub use compact::{CompactionReport, DEFAULT_MIN_INPUT_FILES, RewriteDataFiles};
pub(crate) use expire::EXPIRING;
pub use expire::{ExpireSnapshots, ExpiredFiles, ExpiryReport, FileCount};
pub use orphans::{DEFAULT_ORPHAN_AGE_MS, DeleteOrphanFiles, OrphanReport};
pub use rewrite_manifests::{RewriteManifests, RewriteReport};

/// Refuses `operation`, which deletes files, on a table whose `gc.enabled` is false: its
/// files may belong to another table (Spark's `snapshot` procedure makes such tables), so
/// Java refuses expiry and orphan removal there too.
pub(crate) fn refuse_without_gc(meta: &TableMetadata, operation: &str) -> Result<()> {
    if gc_enabled(&meta.properties) {
        return Ok(());
    }
    Err(Error::NotSupportedForTable {
        table: meta.location.clone(),
        operation: operation.into(),
        reason: format!("{GC_ENABLED} is false (its files may belong to another table)"),
    })
}
