//! Table maintenance, for tables that take many small appends: expiring snapshots (and the
//! files only they reach).

mod expire;
mod reach;

pub use expire::{ExpireSnapshots, ExpiredFiles, ExpiryReport, FileCount};
