//! [`FileWriter`]: a streaming upload that becomes visible only when closed.
//!
//! Bytes are buffered until one part is full; a small file is then written with one atomic
//! put on close, a large one with a multipart upload of `part_size_bytes` parts, at most
//! `max_concurrent_parts` in flight (so memory stays bounded). This is the state machine of
//! object_store's `BufWriter`, kept here because `BufWriter` cannot abort its upload when
//! dropped and panics when used after shutdown.
//!
//! ```text
//! Buffer --(part full)--> Starting --> Uploading --(close)--> Completing --> Closed
//!   |                                      |
//!   +------------(close: one put)----------+------------------> Completing
//! any error --> Failed (pending upload aborted by abort(), close() or drop)
//! ```

use std::fmt;
use std::mem;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt, ready};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMultipartOptions, PutOptions, PutPayloadMut};

use crate::config::WriteConfig;
use crate::error::{Error, Result};

mod parts;

use self::parts::Parts;

/// Implements tokio::io::AsyncWrite (so parquet's AsyncArrowWriter accepts it via its blanket AsyncFileWriter impl for AsyncWrite + Unpin + Send).
///
/// Nothing is visible at the path until [`FileWriter::close`] (or `AsyncWrite::shutdown`,
/// which parquet's `AsyncArrowWriter::close` calls) succeeds. A writer dropped or failed
/// before that leaves nothing at the path: a pending multipart upload is aborted (on drop,
/// by a task spawned on the current tokio runtime), and local disk keeps only a staging
/// file that object_store removes. Every write overwrites an existing object on close.
pub struct FileWriter {
    path: String,
    key: ObjectPath,
    store: Arc<dyn ObjectStore>,
    part_size: usize,
    max_concurrent_parts: usize,
    bytes_written: u64,
    state: State,
}

enum State {
    /// Less than one part written: bytes held in memory.
    Buffer(PutPayloadMut),
    /// Creating the multipart upload.
    Starting(BoxFuture<'static, object_store::Result<Parts>>),
    /// Multipart upload in progress.
    Uploading(Parts),
    /// The single put, or completing the multipart upload.
    Completing(BoxFuture<'static, object_store::Result<()>>),
    /// Done: the object is visible.
    Closed,
    /// Failed or aborted; an upload still to abort may remain.
    Failed(Option<Parts>),
}

/// Where accepted bytes go: the in-memory buffer of a small file, or the upload's parts.
enum Accept<'a> {
    Buffer(&'a mut PutPayloadMut),
    Parts(&'a mut Parts),
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            Self::Buffer(_) => "Buffer",
            Self::Starting(_) => "Starting",
            Self::Uploading(_) => "Uploading",
            Self::Completing(_) => "Completing",
            Self::Closed => "Closed",
            Self::Failed(_) => "Failed",
        }
    }
}

impl fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileWriter")
            .field("path", &self.path)
            .field("bytes_written", &self.bytes_written)
            .field("part_size", &self.part_size)
            .field("state", &self.state.name())
            .finish_non_exhaustive()
    }
}

impl FileWriter {
    pub(crate) fn new(
        path: String,
        key: ObjectPath,
        store: Arc<dyn ObjectStore>,
        config: WriteConfig,
    ) -> Self {
        Self {
            path,
            key,
            store,
            part_size: config.part_size_bytes.max(1),
            max_concurrent_parts: config.max_concurrent_parts.max(1),
            bytes_written: 0,
            state: State::Buffer(PutPayloadMut::new()),
        }
    }

    /// The path being written, as given to [`FileIo::writer`](crate::FileIo::writer).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Bytes accepted so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Completes the upload, returning the exact object size in bytes.
    ///
    /// Calling it after `AsyncWrite::shutdown` already completed the upload just returns
    /// the size.
    ///
    /// # Errors
    /// The store's error if the upload fails (the upload is then aborted), or
    /// [`Error::WriterClosed`] if the writer had already failed or been aborted.
    pub async fn close(mut self) -> Result<u64> {
        if let State::Failed(pending) = &mut self.state {
            if let Some(upload) = pending.take() {
                // Best effort: the failure being reported is the one that matters.
                let _ = upload.abort().await;
            }
            return Err(self.closed_error());
        }
        futures::future::poll_fn(|cx| self.poll_close_inner(cx)).await?;
        Ok(self.bytes_written)
    }

    /// Discards the upload: nothing written by this writer becomes visible.
    ///
    /// # Errors
    /// [`Error::WriterClosed`] if the upload had already completed; the store's error if
    /// aborting the multipart upload fails.
    pub async fn abort(mut self) -> Result<()> {
        let upload = match mem::replace(&mut self.state, State::Failed(None)) {
            State::Buffer(_) | State::Failed(None) => return Ok(()),
            State::Starting(start) => match start.await {
                Ok(upload) => upload,
                // The upload was never created.
                Err(_) => return Ok(()),
            },
            State::Uploading(upload) | State::Failed(Some(upload)) => upload,
            State::Completing(complete) => {
                let _ = complete.await;
                return Err(self.closed_error());
            }
            State::Closed => return Err(self.closed_error()),
        };
        upload
            .abort()
            .await
            .map_err(|e| Error::from_store(&self.path, e))
    }

    fn closed_error(&self) -> Error {
        Error::WriterClosed {
            path: self.path.clone(),
        }
    }

    /// Appends owned `bytes` without copying them (parquet row groups, for instance).
    ///
    /// # Errors
    /// The store's error if starting the upload or an earlier part failed;
    /// [`Error::WriterClosed`] after a failure, an abort or a close.
    pub async fn put(&mut self, bytes: bytes::Bytes) -> Result<()> {
        let len = bytes.len();
        let mut bytes = Some(bytes);
        futures::future::poll_fn(|cx| {
            self.poll_accept(cx, len, &mut |into| {
                if let Some(b) = bytes.take() {
                    match into {
                        Accept::Buffer(buffer) => buffer.push(b),
                        Accept::Parts(parts) => parts.put(b),
                    }
                }
            })
        })
        .await
    }

    fn poll_write_inner(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<Result<usize>> {
        self.poll_accept(cx, buf.len(), &mut |into| match into {
            Accept::Buffer(buffer) => buffer.extend_from_slice(buf),
            Accept::Parts(parts) => parts.write(buf),
        })
        .map_ok(|()| buf.len())
    }

    /// Makes room for `len` more bytes (starting the multipart upload once they would fill
    /// a part, waiting while `max_concurrent_parts` are in flight), then has `deliver` put
    /// them where they go.
    fn poll_accept(
        &mut self,
        cx: &mut Context<'_>,
        len: usize,
        deliver: &mut dyn FnMut(Accept<'_>),
    ) -> Poll<Result<()>> {
        loop {
            match mem::replace(&mut self.state, State::Failed(None)) {
                State::Buffer(mut buffer) => {
                    if buffer.content_length().saturating_add(len) < self.part_size {
                        deliver(Accept::Buffer(&mut buffer));
                        self.state = State::Buffer(buffer);
                        self.accept(len);
                        return Poll::Ready(Ok(()));
                    }
                    self.state = State::Starting(self.start_multipart(buffer));
                }
                State::Starting(start) => ready!(self.poll_start(cx, start))?,
                State::Uploading(mut upload) => {
                    match upload.poll_for_capacity(cx, self.max_concurrent_parts) {
                        Poll::Pending => {
                            self.state = State::Uploading(upload);
                            return Poll::Pending;
                        }
                        Poll::Ready(Err(e)) => {
                            self.state = State::Failed(Some(upload));
                            return Poll::Ready(Err(Error::from_store(&self.path, e)));
                        }
                        Poll::Ready(Ok(())) => {
                            deliver(Accept::Parts(&mut upload));
                            self.state = State::Uploading(upload);
                            self.accept(len);
                            return Poll::Ready(Ok(()));
                        }
                    }
                }
                other => {
                    self.state = other;
                    return Poll::Ready(Err(self.closed_error()));
                }
            }
        }
    }

    /// Drives the creation of the multipart upload to `Uploading`.
    fn poll_start(
        &mut self,
        cx: &mut Context<'_>,
        mut start: BoxFuture<'static, object_store::Result<Parts>>,
    ) -> Poll<Result<()>> {
        match start.poll_unpin(cx) {
            Poll::Pending => {
                self.state = State::Starting(start);
                Poll::Pending
            }
            Poll::Ready(Ok(upload)) => {
                self.state = State::Uploading(upload);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => {
                self.state = State::Failed(None);
                Poll::Ready(Err(Error::from_store(&self.path, e)))
            }
        }
    }

    fn poll_flush_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        // Parts are uploaded as they fill; a partial part cannot be sent before close.
        match mem::replace(&mut self.state, State::Failed(None)) {
            State::Starting(start) => self.poll_start(cx, start),
            other => {
                self.state = other;
                Poll::Ready(Ok(()))
            }
        }
    }

    fn poll_close_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        loop {
            match mem::replace(&mut self.state, State::Failed(None)) {
                State::Buffer(buffer) => {
                    let store = Arc::clone(&self.store);
                    let key = self.key.clone();
                    self.state = State::Completing(
                        async move {
                            store
                                .put_opts(&key, buffer.freeze(), PutOptions::default())
                                .await
                                .map(drop)
                        }
                        .boxed(),
                    );
                }
                State::Starting(start) => ready!(self.poll_start(cx, start))?,
                State::Uploading(upload) => {
                    // `finish` aborts the upload itself if a part or the completion fails.
                    self.state = State::Completing(upload.finish().boxed());
                }
                State::Completing(mut complete) => {
                    return match complete.poll_unpin(cx) {
                        Poll::Pending => {
                            self.state = State::Completing(complete);
                            Poll::Pending
                        }
                        Poll::Ready(Ok(())) => {
                            self.state = State::Closed;
                            Poll::Ready(Ok(()))
                        }
                        Poll::Ready(Err(e)) => Poll::Ready(Err(Error::from_store(&self.path, e))),
                    };
                }
                State::Closed => {
                    self.state = State::Closed;
                    return Poll::Ready(Ok(()));
                }
                failed @ State::Failed(_) => {
                    self.state = failed;
                    return Poll::Ready(Err(self.closed_error()));
                }
            }
        }
    }

    fn accept(&mut self, n: usize) {
        self.bytes_written += n as u64;
    }

    fn start_multipart(
        &self,
        buffer: PutPayloadMut,
    ) -> BoxFuture<'static, object_store::Result<Parts>> {
        let store = Arc::clone(&self.store);
        let key = self.key.clone();
        let part_size = self.part_size;
        async move {
            let upload = store
                .put_multipart_opts(&key, PutMultipartOptions::default())
                .await?;
            let mut upload = Parts::new(upload, part_size);
            for chunk in buffer.freeze() {
                upload.put(chunk);
            }
            Ok(upload)
        }
        .boxed()
    }
}

impl tokio::io::AsyncWrite for FileWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut()
            .poll_write_inner(cx, buf)
            .map_err(Error::into_io)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().poll_flush_inner(cx).map_err(Error::into_io)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().poll_close_inner(cx).map_err(Error::into_io)
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        let cleanup: BoxFuture<'static, ()> = match mem::replace(&mut self.state, State::Closed) {
            State::Uploading(upload) | State::Failed(Some(upload)) => async move {
                let _ = upload.abort().await;
            }
            .boxed(),
            State::Starting(start) => async move {
                if let Ok(upload) = start.await {
                    let _ = upload.abort().await;
                }
            }
            .boxed(),
            // Nothing uploaded yet, already done, or mid-completion (dropping the future
            // drops the upload; object_store removes local staging files itself).
            _ => return,
        };
        // Aborting is async, so it runs as a detached task. Without a runtime the upload is
        // dropped: local staging files are still removed, a remote upload stays invisible.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(cleanup));
        }
    }
}

#[cfg(test)]
mod tests;
