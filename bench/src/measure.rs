//! Wall time, CPU time and peak memory of a measured section, read from `/proc` (no libc,
//! so no `unsafe`).

use std::path::Path;
use std::time::{Duration, Instant};

/// Clock ticks per second of `/proc/self/stat` (`USER_HZ`, 100 on every Linux we target).
const TICKS_PER_SECOND: f64 = 100.0;

/// User + system CPU seconds of this process (all threads) so far, if readable.
pub(crate) fn cpu_seconds() -> Option<f64> {
    cpu_seconds_at("/proc/self/stat")
}

/// User + system CPU seconds of process `pid` so far, while it runs.
pub(crate) fn cpu_seconds_of(pid: u32) -> Option<f64> {
    cpu_seconds_at(&format!("/proc/{pid}/stat"))
}

fn cpu_seconds_at(stat_file: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(stat_file).ok()?;
    // The command name may hold spaces; fields restart after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SECOND)
}

/// Peak resident set size of this process in bytes (`VmHWM`), if readable.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    peak_rss_bytes_at("/proc/self/status")
}

/// Peak resident set size of process `pid` in bytes, while it runs.
pub(crate) fn peak_rss_bytes_of(pid: u32) -> Option<u64> {
    peak_rss_bytes_at(&format!("/proc/{pid}/status"))
}

/// Resident set size of this process in bytes now (`VmRSS`), if readable.
pub(crate) fn rss_bytes() -> Option<u64> {
    status_bytes("/proc/self/status", "VmRSS:")
}

fn peak_rss_bytes_at(status_file: &str) -> Option<u64> {
    status_bytes(status_file, "VmHWM:")
}

fn status_bytes(status_file: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(status_file).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak RSS to the current RSS (Linux 4.0+); false when not possible.
pub(crate) fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// What one measured run cost.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// User + system seconds over wall seconds (2.0 = both cores busy).
    pub(crate) cpu_util: Option<f64>,
    /// Peak RSS during the run (it includes whatever was resident before it).
    pub(crate) peak_rss: Option<u64>,
}

/// Runs `f`, measuring it.
pub(crate) async fn measure<T, E, F>(f: F) -> Result<(T, Sample), E>
where
    F: Future<Output = Result<T, E>>,
{
    let peak_ok = reset_peak_rss();
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let out = f.await?;
    let wall = t0.elapsed();
    let cpu1 = cpu_seconds();
    let cpu_util = match (cpu0, cpu1) {
        (Some(a), Some(b)) if wall.as_secs_f64() > 0.0 => Some((b - a) / wall.as_secs_f64()),
        _ => None,
    };
    let peak_rss = if peak_ok { peak_rss_bytes() } else { None };
    Ok((out, Sample { cpu_util, peak_rss }))
}

/// The median of `values` (the lower middle one for an even count); `None` when empty.
pub(crate) fn median<T: Copy + PartialOrd>(values: &[T]) -> Option<T> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// Total size of the regular files under `dir`.
pub(crate) fn dir_bytes(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    Ok(total)
}

/// Number of regular files under `dir` whose name `keep` accepts.
pub(crate) fn count_files(dir: &Path, keep: impl Fn(&str) -> bool) -> std::io::Result<usize> {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            if entry.metadata()?.is_dir() {
                stack.push(entry.path());
            } else if keep(&entry.file_name().to_string_lossy()) {
                n += 1;
            }
        }
    }
    Ok(n)
}

/// Milliseconds of a duration, as f64.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `bytes` in MiB.
pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
