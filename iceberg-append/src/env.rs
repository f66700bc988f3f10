//! The commit environment: the clock and the source of UUIDs, injectable so that every
//! decision of a commit is reproducible in tests and fixtures.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use uuid::Uuid;

/// Where a commit gets the time and fresh UUIDs (and from them snapshot ids).
pub trait Environment: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// A fresh random UUID.
    fn new_uuid(&self) -> Uuid;
    /// A 16-byte Avro sync marker.
    fn sync_marker(&self) -> [u8; 16] {
        *self.new_uuid().as_bytes()
    }
    /// A positive snapshot id, derived from a fresh UUID as Java does.
    fn new_snapshot_id(&self) -> i64 {
        snapshot_id_from_uuid(self.new_uuid())
    }
    /// True when [`Environment::new_snapshot_id`] always names the same snapshot, fixed in
    /// advance so that a commit run twice lands once: a table already holding it means the
    /// commit landed before, and the append fails with
    /// [`crate::Error::SnapshotAlreadyCommitted`] instead of taking another id.
    fn fixed_snapshot_id(&self) -> bool {
        false
    }
}

/// A snapshot id not yet in `meta`, from `env`.
///
/// # Errors
/// [`crate::Error::SnapshotAlreadyCommitted`] when `env` fixes the id
/// ([`Environment::fixed_snapshot_id`]) and `meta` already holds it.
pub(crate) fn fresh_snapshot_id(
    meta: &iceberg_spec::TableMetadata,
    env: &dyn Environment,
) -> crate::Result<i64> {
    let mut id = env.new_snapshot_id();
    while meta.snapshot_by_id(id).is_some() {
        if env.fixed_snapshot_id() {
            return Err(crate::Error::SnapshotAlreadyCommitted {
                table: meta.location.clone(),
                snapshot_id: id,
            });
        }
        id = env.new_snapshot_id();
    }
    Ok(id)
}

/// Java's snapshot id: `(msb ^ lsb) & Long.MAX_VALUE` of a UUID.
pub fn snapshot_id_from_uuid(uuid: Uuid) -> i64 {
    let (msb, lsb) = uuid.as_u64_pair();
    ((msb ^ lsb) & (i64::MAX as u64)) as i64
}

/// The real clock and random UUIDs.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemEnvironment;

impl Environment for SystemEnvironment {
    fn now_ms(&self) -> i64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        now.as_millis() as i64
    }

    fn new_uuid(&self) -> Uuid {
        Uuid::new_v4()
    }
}

/// A deterministic environment: a clock that starts at a fixed time and ticks by a fixed step
/// on each reading, and UUIDs counted up from a seed. For tests and fixtures.
#[derive(Debug)]
pub struct DeterministicEnvironment {
    now_ms: AtomicI64,
    step_ms: i64,
    counter: AtomicU64,
    seed: u64,
}

impl DeterministicEnvironment {
    /// Starts the clock at `start_ms`, advancing `step_ms` per reading; UUIDs derive from `seed`.
    pub fn new(start_ms: i64, step_ms: i64, seed: u64) -> Self {
        Self {
            now_ms: AtomicI64::new(start_ms),
            step_ms,
            counter: AtomicU64::new(0),
            seed,
        }
    }
}

impl Environment for DeterministicEnvironment {
    fn now_ms(&self) -> i64 {
        self.now_ms.fetch_add(self.step_ms, Ordering::SeqCst)
    }

    fn new_uuid(&self) -> Uuid {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let seed = self.seed;
        // A splitmix64 step keeps ids well spread while staying reproducible.
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let hi = mix(seed
            .wrapping_add(n.wrapping_mul(2))
            .wrapping_add(0x9e37_79b9_7f4a_7c15));
        let lo = mix(seed
            .wrapping_add(n.wrapping_mul(2) + 1)
            .wrapping_add(0x9e37_79b9_7f4a_7c15));
        uuid::Builder::from_random_bytes(((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes())
            .into_uuid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_ids_are_positive_and_deterministic() {
        let a = DeterministicEnvironment::new(1000, 1, 7);
        let b = DeterministicEnvironment::new(1000, 1, 7);
        for _ in 0..100 {
            let (x, y) = (a.new_snapshot_id(), b.new_snapshot_id());
            assert_eq!(x, y);
            assert!(x >= 0);
        }
        assert_eq!(a.now_ms(), 1000);
        assert_eq!(a.now_ms(), 1001);
        assert_eq!(snapshot_id_from_uuid(Uuid::from_u64_pair(0xF0, 0x0F)), 0xFF);
        assert_eq!(
            snapshot_id_from_uuid(Uuid::from_u64_pair(u64::MAX, 0)),
            i64::MAX
        );
    }
}
