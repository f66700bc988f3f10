//! [`Parts`]: a multipart upload and its parts in flight.
//!
//! This is object_store's `WriteMultipart`, owned here because the version DataFusion pins
//! (object_store 0.13) returns from `finish` without aborting the upload when a part failed:
//! the parts already stored (and, on local disk, the staging file) would stay behind. Every
//! failure path here aborts the upload before the error is returned.

use std::task::{Context, Poll};

use futures::ready;
use object_store::{MultipartUpload, PutPayload, PutPayloadMut};
use tokio::task::JoinSet;

/// Parts of one multipart upload: bytes are buffered to `chunk_size`, then each full part
/// is uploaded in a task of its own.
#[derive(Debug)]
pub(super) struct Parts {
    upload: Box<dyn MultipartUpload>,
    buffer: PutPayloadMut,
    chunk_size: usize,
    tasks: JoinSet<object_store::Result<()>>,
}

/// A part's task that panicked or was cancelled, as a store error.
fn join_error(e: tokio::task::JoinError) -> object_store::Error {
    object_store::Error::Generic {
        store: "multipart upload",
        source: Box::new(e),
    }
}

impl Parts {
    /// Parts of `chunk_size` bytes (at least one) for `upload`.
    pub(super) fn new(upload: Box<dyn MultipartUpload>, chunk_size: usize) -> Self {
        Self {
            upload,
            buffer: PutPayloadMut::new(),
            chunk_size: chunk_size.max(1),
            tasks: JoinSet::new(),
        }
    }

    /// Ready once fewer than `max` parts are in flight; the first failed part is an error.
    pub(super) fn poll_for_capacity(
        &mut self,
        cx: &mut Context<'_>,
        max: usize,
    ) -> Poll<object_store::Result<()>> {
        while !self.tasks.is_empty() && self.tasks.len() >= max {
            match ready!(self.tasks.poll_join_next(cx)) {
                Some(Ok(Ok(()))) | None => {}
                Some(Ok(Err(e))) => return Poll::Ready(Err(e)),
                Some(Err(e)) => return Poll::Ready(Err(join_error(e))),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Buffers `buf`, starting the upload of every part it fills.
    pub(super) fn write(&mut self, mut buf: &[u8]) {
        while !buf.is_empty() {
            let remaining = self.chunk_size - self.buffer.content_length();
            let take = buf.len().min(remaining);
            self.buffer.extend_from_slice(&buf[..take]);
            if take == remaining {
                let part = std::mem::take(&mut self.buffer);
                self.put_part(part.into());
            }
            buf = &buf[take..];
        }
    }

    /// Buffers owned `bytes` without copying, starting the upload of every part it fills.
    pub(super) fn put(&mut self, mut bytes: bytes::Bytes) {
        while !bytes.is_empty() {
            let remaining = self.chunk_size - self.buffer.content_length();
            if bytes.len() < remaining {
                self.buffer.push(bytes);
                return;
            }
            self.buffer.push(bytes.split_to(remaining));
            let part = std::mem::take(&mut self.buffer);
            self.put_part(part.into());
        }
    }

    fn put_part(&mut self, part: PutPayload) {
        self.tasks.spawn(self.upload.put_part(part));
    }

    /// Uploads the last part and completes the upload; on any failure the upload is aborted
    /// (best effort) and the failure returned.
    pub(super) async fn finish(mut self) -> object_store::Result<()> {
        if self.buffer.content_length() > 0 {
            let part = std::mem::take(&mut self.buffer);
            self.put_part(part.into());
        }
        let waited = futures::future::poll_fn(|cx| self.poll_for_capacity(cx, 0)).await;
        let result = match waited {
            Ok(()) => self.upload.complete().await.map(drop),
            Err(e) => Err(e),
        };
        if result.is_err() {
            let _ = self.abort().await;
        }
        result
    }

    /// Stops the parts in flight and aborts the upload: nothing becomes visible.
    pub(super) async fn abort(mut self) -> object_store::Result<()> {
        self.tasks.shutdown().await;
        self.upload.abort().await
    }
}
