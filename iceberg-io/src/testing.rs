//! Fault injection for tests of the layers above: an [`ObjectStore`] wrapper that records
//! every operation and can fail puts, fail any operation before or after the store did it
//! ([`FaultInjectingStore::fail_at`]), crash the process, or slow everything down.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use iceberg_io::FileIo;
//! use iceberg_io::object_store::memory::InMemory;
//! use iceberg_io::testing::{FaultInjectingStore, OpKind};
//!
//! let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
//! let io = FileIo::with_store("memory://t", Arc::new(store.clone()));
//! store.fail_puts_matching("metadata/");
//! assert!(io.put("memory://t/metadata/v1.json", "{}".into()).await.is_err());
//! io.put("memory://t/data/a.parquet", "x".into()).await?;
//! assert_eq!(store.count(OpKind::Put), 2);
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, UploadPart,
};

/// The kind of an operation seen by [`FaultInjectingStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpKind {
    /// A single-request put (any mode).
    Put,
    /// Creation of a multipart upload.
    PutMultipart,
    /// Upload of one part.
    PutPart,
    /// Completion of a multipart upload.
    CompleteMultipart,
    /// Abort of a multipart upload.
    AbortMultipart,
    /// A get (whole object or range).
    Get,
    /// A head (metadata only).
    Head,
    /// A multi-range get.
    GetRanges,
    /// Deletion of one object.
    Delete,
    /// A recursive list (path is the prefix).
    List,
    /// A list with delimiter (path is the prefix).
    ListWithDelimiter,
    /// A copy (path is the source).
    Copy,
    /// A rename (path is the source).
    Rename,
}

/// Where [`FaultInjectingStore::crash_at`] ends the process, relative to its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    /// Before the operation reaches the store.
    Before,
    /// After the store completed it, before the caller hears (a listing: once its last
    /// entry is out; a delete of a stream: once the store reports it).
    After,
}

/// How [`FaultInjectingStore::fail_at`] fails its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailPoint {
    /// An error before the operation reaches the store: nothing happened.
    Before,
    /// The store completes the operation, then the caller gets an error (a 5xx after the
    /// write was stored, a dropped connection): it happened, the caller cannot tell.
    After,
    /// The store completes a put, then the caller hears "already exists" (object_store's retry
    /// of a conditional create that had in fact succeeded); other operations fail as `After`.
    AfterAsAlreadyExists,
}

/// One recorded operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// What was done.
    pub kind: OpKind,
    /// The object key (without scheme and bucket).
    pub path: String,
}

/// Keys a stream of deletes sends per request under [`FaultInjectingStore::set_latency`]:
/// S3's DeleteObjects limit.
pub const DELETES_PER_REQUEST: usize = 1000;

/// An [`ObjectStore`] wrapper that records operations and injects put failures and latency.
///
/// Clones share recording and faults: keep one clone to arm faults and inspect
/// [`ops`](Self::ops) after handing another to [`FileIo::with_store`](crate::FileIo::with_store).
#[derive(Clone, Debug)]
pub struct FaultInjectingStore {
    inner: Arc<dyn ObjectStore>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    ops: Mutex<Vec<Op>>,
    faults: Mutex<Faults>,
    puts: AtomicU64,
    parts: AtomicU64,
    /// Operations seen so far (every kind), numbering them from 1.
    seen: AtomicU64,
}

#[derive(Debug, Default)]
struct Faults {
    nth_put: Option<u64>,
    nth_part: Option<u64>,
    put_patterns: Vec<String>,
    latency: Duration,
    crash: Option<(u64, CrashPoint)>,
    fail: Option<(u64, FailPoint)>,
    hooks: Vec<PutHook>,
}

/// When a hook armed by [`FaultInjectingStore::on_put_matching`] runs, relative to its put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookPoint {
    /// Before the put reaches the inner store.
    Before,
    /// After the inner store answered.
    After,
}

/// A one-shot action run at a put whose key contains `pattern`: another process's step,
/// made exactly between two of this one's.
struct PutHook {
    pattern: String,
    point: HookPoint,
    action: Box<dyn FnOnce() + Send>,
}

impl fmt::Debug for PutHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PutHook({:?} {:?})", self.point, self.pattern)
    }
}

impl fmt::Display for FaultInjectingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultInjectingStore({})", self.inner)
    }
}

impl FaultInjectingStore {
    /// Wraps `inner`, with no faults armed.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            shared: Arc::default(),
        }
    }

    /// Fails the `n`th put (1-based, counting single puts and multipart creations from now on).
    pub fn fail_nth_put(&self, n: u64) {
        let seen = self.shared.puts.load(Ordering::SeqCst);
        self.faults().nth_put = Some(seen + n);
    }

    /// Fails the `n`th part upload (1-based, counted from now on, across uploads).
    pub fn fail_nth_part(&self, n: u64) {
        let seen = self.shared.parts.load(Ordering::SeqCst);
        self.faults().nth_part = Some(seen + n);
    }

    /// Fails every put and multipart creation whose key contains `pattern`.
    pub fn fail_puts_matching(&self, pattern: &str) {
        self.faults().put_patterns.push(pattern.to_owned());
    }

    /// Ends the process (`abort`, as a kill would: no destructor, no cleanup) at the `n`th
    /// operation of any kind from now on (1-based), before or after it; for tests that
    /// run a writer in a child process and check what it leaves behind.
    pub fn crash_at(&self, n: u64, point: CrashPoint) {
        let seen = self.shared.seen.load(Ordering::SeqCst);
        self.faults().crash = Some((seen + n, point));
    }

    /// Fails the `n`th operation from now on (1-based, every kind counted) at `point`. Puts,
    /// multipart completions, gets, heads, ranged gets and deletes of a delete stream can
    /// fail; lists pass.
    pub fn fail_at(&self, n: u64, point: FailPoint) {
        let seen = self.shared.seen.load(Ordering::SeqCst);
        self.faults().fail = Some((seen + n, point));
    }

    /// Runs `action` once, at `point` of the first single put whose key
    /// contains `pattern`; the action is synchronous, as another process's step would be.
    pub fn on_put_matching(
        &self,
        pattern: &str,
        point: HookPoint,
        action: impl FnOnce() + Send + 'static,
    ) {
        self.faults().hooks.push(PutHook {
            pattern: pattern.to_owned(),
            point,
            action: Box::new(action),
        });
    }

    /// Runs (and disarms) the hook armed for `point` of a put to `path`, if any.
    fn run_hook(&self, path: &Path, point: HookPoint) {
        let hook = {
            let mut faults = self.faults();
            let found = faults
                .hooks
                .iter()
                .position(|h| h.point == point && path.as_ref().contains(h.pattern.as_str()));
            found.map(|i| faults.hooks.remove(i))
        };
        if let Some(hook) = hook {
            (hook.action)();
        }
    }

    /// Delays every operation by `latency` (a stream of deletes once per
    /// [`DELETES_PER_REQUEST`] keys).
    pub fn set_latency(&self, latency: Duration) {
        self.faults().latency = latency;
    }

    /// Disarms every fault and removes latency; the recording is kept.
    pub fn clear_faults(&self) {
        *self.faults() = Faults::default();
    }

    /// How many operations were seen so far (the count [`Self::crash_at`] numbers from).
    pub fn op_count(&self) -> u64 {
        self.shared.seen.load(Ordering::SeqCst)
    }

    /// Every operation so far, in order.
    pub fn ops(&self) -> Vec<Op> {
        lock(&self.shared.ops).clone()
    }

    /// How many operations of `kind` were recorded.
    pub fn count(&self, kind: OpKind) -> usize {
        lock(&self.shared.ops)
            .iter()
            .filter(|op| op.kind == kind)
            .count()
    }

    /// Forgets the recorded operations.
    pub fn clear_ops(&self) {
        lock(&self.shared.ops).clear();
    }

    fn faults(&self) -> MutexGuard<'_, Faults> {
        lock(&self.shared.faults)
    }

    /// Records an operation and returns its number (crashing first when armed to).
    fn record(&self, kind: OpKind, path: &Path) -> u64 {
        self.shared.record(kind, path)
    }

    async fn delay(&self) {
        self.shared.delay().await;
    }

    /// Counts a put to `path` and returns the injected error if it must fail.
    fn check_put(&self, path: &Path) -> object_store::Result<()> {
        let n = self.shared.puts.fetch_add(1, Ordering::SeqCst) + 1;
        let faults = self.faults();
        if faults.nth_put == Some(n) {
            return Err(injected(format!("put #{n} to {path}")));
        }
        if let Some(p) = faults
            .put_patterns
            .iter()
            .find(|p| path.as_ref().contains(p.as_str()))
        {
            return Err(injected(format!("put to {path} (matches `{p}`)")));
        }
        Ok(())
    }
}

impl Shared {
    fn record(&self, kind: OpKind, path: &Path) -> u64 {
        lock(&self.ops).push(Op {
            kind,
            path: path.to_string(),
        });
        let n = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        self.crash_if(n, CrashPoint::Before);
        n
    }

    /// Aborts the process when operation `n` is armed to crash at `point`.
    fn crash_if(&self, n: u64, point: CrashPoint) {
        if lock(&self.faults).crash == Some((n, point)) {
            std::process::abort();
        }
    }

    /// Passes `result` through, first crashing when operation `n` is armed to crash after.
    fn after<T>(&self, n: u64, result: T) -> T {
        self.crash_if(n, CrashPoint::After);
        result
    }

    /// The injected error of operation `n` when it is armed to fail before the store.
    fn fail_before(&self, n: u64, path: &Path) -> object_store::Result<()> {
        match lock(&self.faults).fail {
            Some((at, FailPoint::Before)) if at == n => Err(injected(format!(
                "operation #{n} on {path}, before the store"
            ))),
            _ => Ok(()),
        }
    }

    /// `result`, or the injected error when operation `n` is armed to fail after the store.
    fn fail_after<T>(
        &self,
        n: u64,
        path: &Path,
        is_put: bool,
        result: object_store::Result<T>,
    ) -> object_store::Result<T> {
        let point = match lock(&self.faults).fail {
            Some((at, point)) if at == n => point,
            _ => return result,
        };
        match (point, result) {
            (FailPoint::Before, result) | (_, result @ Err(_)) => result,
            (FailPoint::AfterAsAlreadyExists, Ok(_)) if is_put => {
                Err(object_store::Error::AlreadyExists {
                    path: path.to_string(),
                    source: format!("injected: operation #{n} stored, then a retry saw it").into(),
                })
            }
            (_, Ok(_)) => Err(injected(format!(
                "operation #{n} on {path}, after the store completed it"
            ))),
        }
    }

    fn latency(&self) -> Duration {
        lock(&self.faults).latency
    }

    async fn delay(&self) {
        let latency = self.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn injected(what: String) -> object_store::Error {
    object_store::Error::Generic {
        store: "FaultInjectingStore",
        source: format!("injected fault: {what}").into(),
    }
}

#[async_trait]
impl ObjectStore for FaultInjectingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let n = self.record(OpKind::Put, location);
        self.delay().await;
        self.check_put(location)?;
        self.shared.fail_before(n, location)?;
        self.run_hook(location, HookPoint::Before);
        let result = self.inner.put_opts(location, payload, opts).await;
        self.run_hook(location, HookPoint::After);
        let result = self.shared.fail_after(n, location, true, result);
        self.shared.after(n, result)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let n = self.record(OpKind::PutMultipart, location);
        self.delay().await;
        self.check_put(location)?;
        let inner = self.inner.put_multipart_opts(location, opts).await;
        let inner = self.shared.after(n, inner)?;
        Ok(Box::new(RecordingUpload {
            inner,
            path: location.clone(),
            shared: Arc::clone(&self.shared),
        }))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let kind = if options.head {
            OpKind::Head
        } else {
            OpKind::Get
        };
        let n = self.record(kind, location);
        self.delay().await;
        self.shared.fail_before(n, location)?;
        let result = self.inner.get_opts(location, options).await;
        let result = self.shared.fail_after(n, location, false, result);
        self.shared.after(n, result)
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let n = self.record(OpKind::GetRanges, location);
        self.delay().await;
        self.shared.fail_before(n, location)?;
        let result = self.inner.get_ranges(location, ranges).await;
        let result = self.shared.fail_after(n, location, false, result);
        self.shared.after(n, result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let shared = Arc::clone(&self.shared);
        // Operation numbers of the deletes sent, matched in order to the store's answers.
        let sent = Arc::new(Mutex::new(std::collections::VecDeque::new()));
        let queue = Arc::clone(&sent);
        let mut position = 0usize;
        let recorded = locations
            .then(move |location| {
                let (shared, queue) = (Arc::clone(&shared), Arc::clone(&queue));
                // One latency per request of up to `DELETES_PER_REQUEST` keys, as S3's
                // DeleteObjects (and object_store's S3 `delete_stream`) batches them.
                let starts_request = position.is_multiple_of(DELETES_PER_REQUEST);
                position += 1;
                async move {
                    if let Ok(path) = &location {
                        let n = shared.record(OpKind::Delete, path);
                        lock(&queue).push_back(n);
                        if starts_request {
                            shared.delay().await;
                        }
                        // A delete failed before the store is not sent: the store passes
                        // the error back in its place.
                        shared.fail_before(n, path)?;
                    }
                    location
                }
            })
            .boxed();
        let shared = Arc::clone(&self.shared);
        self.inner
            .delete_stream(recorded)
            .map(move |result| match lock(&sent).pop_front() {
                Some(n) => {
                    shared.crash_if(n, CrashPoint::After);
                    match result {
                        Ok(path) => shared.fail_after(n, &path.clone(), false, Ok(path)),
                        Err(e) => Err(e),
                    }
                }
                None => result,
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let n = self.record(OpKind::List, prefix.unwrap_or(&Path::default()));
        self.finished(n, self.delayed(self.inner.list(prefix)))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let n = self.record(OpKind::List, prefix.unwrap_or(&Path::default()));
        self.finished(n, self.delayed(self.inner.list_with_offset(prefix, offset)))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let n = self.record(
            OpKind::ListWithDelimiter,
            prefix.unwrap_or(&Path::default()),
        );
        self.delay().await;
        let result = self.inner.list_with_delimiter(prefix).await;
        self.shared.after(n, result)
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        let n = self.record(OpKind::Copy, from);
        self.delay().await;
        let result = self.inner.copy_opts(from, to, options).await;
        self.shared.after(n, result)
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        let n = self.record(OpKind::Rename, from);
        self.delay().await;
        let result = self.inner.rename_opts(from, to, options).await;
        self.shared.after(n, result)
    }
}

impl FaultInjectingStore {
    /// `stream`, then the crash armed for after operation `n`, once it has ended.
    fn finished<T: Send + 'static>(
        &self,
        n: u64,
        stream: BoxStream<'static, T>,
    ) -> BoxStream<'static, T> {
        let shared = Arc::clone(&self.shared);
        stream
            .chain(
                futures::stream::once(async move { shared.crash_if(n, CrashPoint::After) })
                    .flat_map(|()| futures::stream::empty()),
            )
            .boxed()
    }

    /// `stream`, starting after the configured latency.
    fn delayed<T: Send + 'static>(&self, stream: BoxStream<'static, T>) -> BoxStream<'static, T> {
        let shared = Arc::clone(&self.shared);
        futures::stream::once(async move { shared.delay().await })
            .flat_map(move |()| futures::stream::empty())
            .chain(stream)
            .boxed()
    }
}

/// A multipart upload that records parts, completion and abort, and can fail a part.
#[derive(Debug)]
struct RecordingUpload {
    inner: Box<dyn MultipartUpload>,
    path: Path,
    shared: Arc<Shared>,
}

#[async_trait]
impl MultipartUpload for RecordingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let op = self.shared.record(OpKind::PutPart, &self.path);
        let n = self.shared.parts.fetch_add(1, Ordering::SeqCst) + 1;
        if lock(&self.shared.faults).nth_part == Some(n) {
            let error = injected(format!("part #{n} of {}", self.path));
            return futures::future::ready(Err(error)).boxed();
        }
        let upload = self.inner.put_part(data);
        let shared = Arc::clone(&self.shared);
        async move {
            shared.delay().await;
            let result = upload.await;
            shared.after(op, result)
        }
        .boxed()
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let n = self.shared.record(OpKind::CompleteMultipart, &self.path);
        self.shared.delay().await;
        self.shared.fail_before(n, &self.path)?;
        let result = self.inner.complete().await;
        let result = self.shared.fail_after(n, &self.path, true, result);
        self.shared.after(n, result)
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        let n = self.shared.record(OpKind::AbortMultipart, &self.path);
        self.shared.delay().await;
        let result = self.inner.abort().await;
        self.shared.after(n, result)
    }
}

#[cfg(test)]
mod tests;
