//! Table maintenance, for tables that take many small appends: expiring snapshots (and the
//! files only they reach), and finding and deleting orphan files.

mod expire;
mod orphans;
mod reach;

pub use expire::{ExpireSnapshots, ExpiredFiles, ExpiryReport, FileCount};
pub use orphans::{DEFAULT_ORPHAN_AGE_MS, DeleteOrphanFiles, OrphanReport};
