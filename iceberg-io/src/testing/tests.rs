#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use object_store::memory::InMemory;

use super::*;
use crate::FileIo;

fn setup() -> (FileIo, FaultInjectingStore) {
    let store = FaultInjectingStore::new(Arc::new(InMemory::new()));
    let io = FileIo::with_store("memory://t", Arc::new(store.clone()));
    (io, store)
}

fn op(kind: OpKind, path: &str) -> Op {
    Op {
        kind,
        path: path.to_owned(),
    }
}

#[tokio::test]
async fn records_every_operation_with_its_key() {
    let (io, store) = setup();
    io.put("memory://t/a/1", Bytes::from_static(b"x"))
        .await
        .unwrap();
    io.read("memory://t/a/1").await.unwrap();
    io.exists("memory://t/a/2").await.unwrap();
    io.list("memory://t/a").await.unwrap();
    io.delete("memory://t/a/1").await.unwrap();
    assert_eq!(
        store.ops(),
        vec![
            op(OpKind::Put, "a/1"),
            op(OpKind::Get, "a/1"),
            op(OpKind::Head, "a/2"),
            op(OpKind::List, "a"),
            op(OpKind::Delete, "a/1"),
        ]
    );
    store.clear_ops();
    assert!(store.ops().is_empty());
}

#[tokio::test]
async fn fails_exactly_the_nth_put() {
    let (io, store) = setup();
    io.put("memory://t/before", Bytes::new()).await.unwrap();
    store.fail_nth_put(2);
    io.put("memory://t/p1", Bytes::new()).await.unwrap();
    let err = io.put("memory://t/p2", Bytes::new()).await.unwrap_err();
    assert!(matches!(err, crate::Error::Store { ref path, .. } if path == "memory://t/p2"));
    assert!(format!("{:?}", err).contains("injected fault"));
    io.put("memory://t/p3", Bytes::new()).await.unwrap();
    assert!(!io.exists("memory://t/p2").await.unwrap());
    assert_eq!(store.count(OpKind::Put), 4, "failed puts are recorded too");
}

#[tokio::test]
async fn fails_puts_matching_a_pattern_only() {
    let (io, store) = setup();
    store.fail_puts_matching("metadata/");
    let err = io
        .put_if_absent("memory://t/tbl/metadata/v1.json", Bytes::new())
        .await
        .unwrap_err();
    assert!(!err.is_already_exists());
    io.put("memory://t/tbl/data/f.parquet", Bytes::new())
        .await
        .unwrap();
    // Streaming writes to a matching path fail when the upload is created or closed.
    let mut w = io.writer("memory://t/tbl/metadata/v2.json").await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut w, b"{}")
        .await
        .unwrap();
    assert!(w.close().await.is_err());
    assert_eq!(
        io.list("memory://t/tbl").await.unwrap(),
        vec!["memory://t/tbl/data/f.parquet"]
    );
    store.clear_faults();
    io.put("memory://t/tbl/metadata/v1.json", Bytes::new())
        .await
        .unwrap();
}

#[tokio::test]
async fn adds_latency_to_operations() {
    let (io, store) = setup();
    store.set_latency(Duration::from_millis(40));
    let start = Instant::now();
    io.put("memory://t/slow", Bytes::new()).await.unwrap();
    io.list("memory://t").await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(80),
        "{:?}",
        start.elapsed()
    );
    store.clear_faults();
    let start = Instant::now();
    io.read("memory://t/slow").await.unwrap();
    assert!(start.elapsed() < Duration::from_millis(40));
}

#[tokio::test]
async fn deletes_pay_latency_once_per_request_of_keys() {
    let (io, store) = setup();
    let n = DELETES_PER_REQUEST * 2 + 1;
    let paths: Vec<String> = (0..n).map(|i| format!("memory://t/d/{i}")).collect();
    for p in &paths {
        io.put(p, Bytes::from_static(b"x")).await.unwrap();
    }
    store.set_latency(Duration::from_millis(30));
    let start = Instant::now();
    io.delete_many(paths.clone()).await.unwrap();
    let elapsed = start.elapsed();
    // Three requests' latency, not one per key (that would take a minute).
    assert!(elapsed >= Duration::from_millis(90), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    assert_eq!(store.count(OpKind::Delete), n);
    store.clear_faults();
    for p in &paths {
        assert!(io.read(p).await.is_err(), "{p} survived");
    }
}

#[tokio::test]
async fn records_multipart_parts_and_can_fail_one() {
    let (io, store) = setup();
    let io = io.with_write_config(crate::WriteConfig::default().with_part_size_bytes(1024));

    let mut w = io.writer("memory://t/big").await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut w, &[7u8; 3000])
        .await
        .unwrap();
    assert_eq!(w.close().await.unwrap(), 3000);
    let kinds: Vec<OpKind> = store.ops().into_iter().map(|o| o.kind).collect();
    assert_eq!(
        kinds,
        vec![
            OpKind::PutMultipart,
            OpKind::PutPart,
            OpKind::PutPart,
            OpKind::PutPart,
            OpKind::CompleteMultipart,
        ]
    );

    store.clear_ops();
    store.fail_nth_part(2);
    let mut w = io.writer("memory://t/broken").await.unwrap();
    match tokio::io::AsyncWriteExt::write_all(&mut w, &[7u8; 3000]).await {
        Ok(()) => assert!(w.close().await.is_err()),
        Err(_) => w.abort().await.unwrap(),
    }
    assert!(!io.exists("memory://t/broken").await.unwrap());
    assert_eq!(store.count(OpKind::CompleteMultipart), 0);
    assert_eq!(store.count(OpKind::AbortMultipart), 1);
}
