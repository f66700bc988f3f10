//! One module per subcommand, and the few helpers they share.

pub(crate) mod add_files;
pub(crate) mod alter;
pub(crate) mod append;
pub(crate) mod compact;
pub(crate) mod create;
pub(crate) mod evolve;
pub(crate) mod expire;
pub(crate) mod head;
pub(crate) mod inspect;
pub(crate) mod log;
pub(crate) mod manage;
pub(crate) mod orphans;
pub(crate) mod quickstart;
pub(crate) mod rewrite_manifests;
pub(crate) mod tree;

/// `path` relative to the table `location` when it lies inside it.
pub(crate) fn short(path: &str, location: &str) -> String {
    path.strip_prefix(location)
        .map(|p| p.trim_start_matches('/').to_string())
        .unwrap_or_else(|| path.to_string())
}

/// Milliseconds since the epoch as `2026-01-01 12:00:00.000` (UTC).
pub(crate) fn format_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(
        || ms.to_string(),
        |t| t.format("%Y-%m-%d %H:%M:%S%.3f").to_string(),
    )
}
