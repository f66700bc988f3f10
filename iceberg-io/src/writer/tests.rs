#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use object_store::memory::InMemory;
use tokio::io::AsyncWriteExt;

use crate::testing::{FaultInjectingStore, OpKind};
use crate::{Error, FileIo, WriteConfig};

const PART: usize = 1000;

fn setup() -> (FileIo, FaultInjectingStore) {
    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let write = WriteConfig::default()
        .with_part_size_bytes(PART)
        .with_max_concurrent_parts(2);
    let io = FileIo::with_store("memory://w", Arc::new(store.clone())).with_write_config(write);
    (io, store)
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[tokio::test]
async fn small_file_is_one_put_and_close_returns_its_size() {
    let (io, store) = setup();
    let mut w = io.writer("memory://w/small").await.unwrap();
    w.write_all(b"abc").await.unwrap();
    w.write_all(b"de").await.unwrap();
    assert_eq!(w.bytes_written(), 5);
    assert_eq!(w.path(), "memory://w/small");
    assert!(
        !io.exists("memory://w/small").await.unwrap(),
        "invisible before close"
    );
    assert_eq!(w.close().await.unwrap(), 5);
    assert_eq!(
        io.read("memory://w/small").await.unwrap().as_ref(),
        b"abcde"
    );
    assert_eq!(store.count(OpKind::Put), 1);
    assert_eq!(store.count(OpKind::PutMultipart), 0);
}

#[tokio::test]
async fn empty_writer_creates_an_empty_object() {
    let (io, _) = setup();
    let w = io.writer("memory://w/empty").await.unwrap();
    assert_eq!(w.close().await.unwrap(), 0);
    assert_eq!(io.len("memory://w/empty").await.unwrap(), 0);
}

#[tokio::test]
async fn large_writes_go_through_bounded_multipart_upload() {
    let (io, store) = setup();
    let data = pattern(5 * PART + 123);
    let mut w = io.writer("memory://w/big").await.unwrap();
    // One write far bigger than a part, then small ones.
    w.write_all(&data[..3 * PART + 7]).await.unwrap();
    for chunk in data[3 * PART + 7..].chunks(100) {
        w.write_all(chunk).await.unwrap();
    }
    assert_eq!(w.close().await.unwrap(), data.len() as u64);
    assert_eq!(io.read("memory://w/big").await.unwrap().as_ref(), &data[..]);
    assert_eq!(store.count(OpKind::PutMultipart), 1);
    assert_eq!(store.count(OpKind::PutPart), 6);
    assert_eq!(store.count(OpKind::CompleteMultipart), 1);
}

#[tokio::test]
async fn shutdown_completes_and_close_afterwards_returns_the_size() {
    let (io, _) = setup();
    let data = pattern(2 * PART + 1);
    let mut w = io.writer("memory://w/shut").await.unwrap();
    w.write_all(&data).await.unwrap();
    w.shutdown().await.unwrap();
    assert_eq!(io.len("memory://w/shut").await.unwrap(), data.len() as u64);
    // Writing after shutdown is an error, not a panic.
    let err = w.write_all(b"x").await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    assert_eq!(w.close().await.unwrap(), data.len() as u64);
}

#[tokio::test]
async fn abort_discards_buffered_and_multipart_uploads() {
    let (io, store) = setup();
    let mut w = io.writer("memory://w/a1").await.unwrap();
    w.write_all(b"tiny").await.unwrap();
    w.abort().await.unwrap();

    let mut w = io.writer("memory://w/a2").await.unwrap();
    w.write_all(&pattern(3 * PART)).await.unwrap();
    w.abort().await.unwrap();

    assert_eq!(store.count(OpKind::AbortMultipart), 1);
    assert_eq!(store.count(OpKind::CompleteMultipart), 0);
    assert!(io.list("memory://w").await.unwrap().is_empty());
}

#[tokio::test]
async fn abort_after_close_is_an_error() {
    let (io, _) = setup();
    let mut w = io.writer("memory://w/done").await.unwrap();
    w.write_all(b"x").await.unwrap();
    w.shutdown().await.unwrap();
    let err = w.abort().await.unwrap_err();
    assert!(matches!(err, Error::WriterClosed { .. }));
    assert!(io.exists("memory://w/done").await.unwrap());
}

#[tokio::test]
async fn dropping_a_multipart_writer_aborts_its_upload() {
    let (io, store) = setup();
    let mut w = io.writer("memory://w/dropped").await.unwrap();
    w.write_all(&pattern(3 * PART)).await.unwrap();
    drop(w);
    for _ in 0..200 {
        if store.count(OpKind::AbortMultipart) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(store.count(OpKind::AbortMultipart), 1);
    assert!(!io.exists("memory://w/dropped").await.unwrap());
}

#[tokio::test]
async fn failed_start_is_reported_and_the_writer_is_closed() {
    let (io, store) = setup();
    store.fail_puts_matching("bad");
    let mut w = io.writer("memory://w/bad").await.unwrap();
    let err = w.write_all(&pattern(2 * PART)).await.unwrap_err();
    assert!(err.to_string().contains("memory://w/bad"), "{err}");
    let err = w.close().await.unwrap_err();
    assert!(matches!(err, Error::WriterClosed { .. }));
    assert!(!io.exists("memory://w/bad").await.unwrap());
}

#[test]
fn writer_and_io_can_cross_tasks() {
    // parquet's blanket `AsyncFileWriter` impl needs `AsyncWrite + Unpin + Send`.
    fn assert_writer<T: tokio::io::AsyncWrite + Unpin + Send + 'static>() {}
    fn assert_shared<T: Send + Sync + Clone + 'static>() {}
    assert_writer::<crate::FileWriter>();
    assert_shared::<FileIo>();
}

#[tokio::test]
async fn put_takes_owned_bytes_in_both_states_mixed_with_writes() {
    let (io, store) = setup();
    let data = pattern(4 * PART + 321);
    let mut w = io.writer("memory://w/put").await.unwrap();
    w.put(bytes::Bytes::copy_from_slice(&data[..10]))
        .await
        .unwrap();
    w.write_all(&data[10..20]).await.unwrap();
    // Past one part: the upload starts, then owned bytes go straight into parts.
    w.put(bytes::Bytes::copy_from_slice(&data[20..2 * PART + 5]))
        .await
        .unwrap();
    w.write_all(&data[2 * PART + 5..3 * PART]).await.unwrap();
    w.put(bytes::Bytes::copy_from_slice(&data[3 * PART..]))
        .await
        .unwrap();
    assert_eq!(w.bytes_written(), data.len() as u64);
    assert_eq!(w.close().await.unwrap(), data.len() as u64);
    assert_eq!(io.read("memory://w/put").await.unwrap().as_ref(), &data[..]);
    assert_eq!(store.count(OpKind::PutPart), 5);
}

#[tokio::test]
async fn a_failed_last_part_aborts_the_upload_on_close() {
    // The last part is uploaded by close itself; its failure must abort the upload too,
    // or its stored parts (a staging file on local disk) would stay behind.
    let (io, store) = setup();
    store.fail_nth_part(3);
    let mut w = io.writer("memory://w/last").await.unwrap();
    w.write_all(&pattern(2 * PART + 10)).await.unwrap();
    assert!(w.close().await.is_err());
    assert!(!io.exists("memory://w/last").await.unwrap());
    assert_eq!(store.count(OpKind::CompleteMultipart), 0);
    assert_eq!(store.count(OpKind::AbortMultipart), 1);
}
