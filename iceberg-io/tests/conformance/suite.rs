//! The cases every backend must pass. Each takes a FileIo and a fresh base path.

use std::time::Instant;

use bytes::Bytes;
use iceberg_io::FileIo;
use tokio::io::AsyncWriteExt;

use crate::backends::PART_SIZE_BYTES;

const MIB: usize = 1024 * 1024;

/// Deterministic pseudo-random bytes for chunk `index` (xorshift64).
fn chunk(index: u64, len: usize) -> Vec<u8> {
    let mut x = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

pub(crate) async fn round_trip(io: &FileIo, base: &str) {
    let a = format!("{base}/dir/a.bin");
    let b = format!("{base}/dir/sub/b.bin");
    let sibling = format!("{base}/dir2/c.bin");
    let data = Bytes::from(chunk(1, 10_000));

    assert!(!io.exists(&a).await.unwrap());
    io.put(&a, data.clone()).await.unwrap();
    io.put(&b, Bytes::from_static(b"bee")).await.unwrap();
    io.put(&sibling, Bytes::from_static(b"sea")).await.unwrap();

    assert!(io.exists(&a).await.unwrap());
    assert_eq!(io.read(&a).await.unwrap(), data);
    assert_eq!(io.len(&a).await.unwrap(), 10_000);
    assert_eq!(
        io.read_range(&a, 100..250).await.unwrap(),
        data.slice(100..250)
    );
    assert_eq!(
        io.read_range(&a, 9_990..10_000).await.unwrap(),
        data.slice(9_990..)
    );

    // Overwrite replaces.
    io.put(&b, Bytes::from_static(b"bumblebee")).await.unwrap();
    assert_eq!(io.read(&b).await.unwrap().as_ref(), b"bumblebee");

    // Recursive, whole-segment prefixes, in the caller's URI form.
    let dir = format!("{base}/dir");
    assert_eq!(io.list(&dir).await.unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(
        io.list(&format!("{dir}/")).await.unwrap(),
        vec![a.clone(), b.clone()]
    );
    assert_eq!(
        io.list(base).await.unwrap(),
        vec![a.clone(), b.clone(), sibling.clone()]
    );
    assert!(
        io.list(&format!("{base}/nothing-here"))
            .await
            .unwrap()
            .is_empty()
    );
    // One level: sub-directories and objects apart, in the caller's URI form.
    let listing = io.list_dir(&dir).await.unwrap();
    assert_eq!(listing.dirs, vec![format!("{dir}/sub")]);
    assert_eq!(listing.files, vec![a.clone()]);
    let top = io.list_dir(base).await.unwrap();
    assert_eq!(top.dirs, vec![dir.clone(), format!("{base}/dir2")]);
    assert!(top.files.is_empty());
    assert_eq!(
        io.list_dir(&format!("{base}/nothing-here")).await.unwrap(),
        iceberg_io::DirListing::default()
    );

    io.delete(&a).await.unwrap();
    assert!(!io.exists(&a).await.unwrap());
    io.delete(&a)
        .await
        .expect("deleting a missing object is Ok");
    assert_eq!(io.list(&dir).await.unwrap(), vec![b.clone()]);

    io.delete_many(vec![
        b.clone(),
        sibling.clone(),
        format!("{base}/never-existed"),
    ])
    .await
    .unwrap();
    assert!(io.list(base).await.unwrap().is_empty());
}

pub(crate) async fn not_found_is_typed(io: &FileIo, base: &str) {
    let missing = format!("{base}/missing.bin");
    let errors = [
        io.read(&missing).await.unwrap_err(),
        io.read_range(&missing, 0..1).await.unwrap_err(),
        io.len(&missing).await.unwrap_err(),
    ];
    for err in errors {
        assert!(err.is_not_found(), "{err:?}");
        assert_eq!(err.path(), Some(missing.as_str()));
    }
    assert!(!io.exists(&missing).await.unwrap());
}

pub(crate) async fn put_if_absent_twice(io: &FileIo, base: &str) {
    let path = format!("{base}/metadata/v1.metadata.json");
    io.put_if_absent(&path, Bytes::from_static(b"first"))
        .await
        .unwrap();
    let err = io
        .put_if_absent(&path, Bytes::from_static(b"second"))
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err:?}");
    assert_eq!(err.path(), Some(path.as_str()));
    assert_eq!(io.read(&path).await.unwrap().as_ref(), b"first");
}

pub(crate) async fn concurrent_put_if_absent(io: &FileIo, base: &str) {
    // Four racers a round: the store, not the timing, must pick exactly one.
    const RACERS: usize = 4;
    for round in 0..20 {
        let path = format!("{base}/metadata/v{round}.metadata.json");
        let results = futures::future::join_all((0..RACERS).map(|i| {
            let (io, path) = (io.clone(), path.clone());
            async move {
                io.put_if_absent(&path, Bytes::from(format!("racer {i}")))
                    .await
            }
        }))
        .await;
        let winners: Vec<usize> = (0..RACERS).filter(|&i| results[i].is_ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        for (i, result) in results.iter().enumerate() {
            if let Err(e) = result {
                assert!(e.is_already_exists(), "round {round}, racer {i}: {e:?}");
            }
        }
        let expected = format!("racer {}", winners[0]);
        assert_eq!(io.read(&path).await.unwrap().as_ref(), expected.as_bytes());
    }
}

pub(crate) async fn streaming_writer_multipart(io: &FileIo, base: &str) {
    let path = format!("{base}/data/streamed.bin");
    // Three full parts and a partial one, in writes of awkward sizes.
    let total = 3 * PART_SIZE_BYTES + 12_345;
    let expected = chunk(7, total);
    let mut writer = io.writer(&path).await.unwrap();
    let sizes = [1, 4096, MIB + 3, 777_777, 2 * MIB + 1];
    let (mut offset, mut i) = (0, 0);
    while offset < total {
        let end = (offset + sizes[i % sizes.len()]).min(total);
        writer.write_all(&expected[offset..end]).await.unwrap();
        offset = end;
        i += 1;
    }
    assert_eq!(writer.bytes_written(), total as u64);
    assert!(!io.exists(&path).await.unwrap(), "not visible before close");
    assert_eq!(writer.close().await.unwrap(), total as u64);

    assert_eq!(io.len(&path).await.unwrap(), total as u64);
    let got = io.read(&path).await.unwrap();
    assert!(got.as_ref() == expected.as_slice(), "content differs");
    let mid = PART_SIZE_BYTES as u64 - 10..PART_SIZE_BYTES as u64 + 10;
    let range = io.read_range(&path, mid.clone()).await.unwrap();
    assert_eq!(
        range.as_ref(),
        &expected[mid.start as usize..mid.end as usize]
    );
    assert_eq!(io.list(&format!("{base}/data")).await.unwrap(), vec![path]);
}

pub(crate) async fn dropped_writer_leaves_nothing(io: &FileIo, base: &str) {
    let small = format!("{base}/data/dropped-small.bin");
    let large = format!("{base}/data/dropped-large.bin");
    let mut writer = io.writer(&small).await.unwrap();
    writer.write_all(b"never visible").await.unwrap();
    drop(writer);
    let mut writer = io.writer(&large).await.unwrap();
    writer
        .write_all(&chunk(3, 2 * PART_SIZE_BYTES + 5))
        .await
        .unwrap();
    drop(writer);
    // Give the abort spawned by drop a moment; visibility must be false throughout.
    for _ in 0..5 {
        assert!(!io.exists(&small).await.unwrap());
        assert!(!io.exists(&large).await.unwrap());
        assert!(io.list(base).await.unwrap().is_empty());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

pub(crate) async fn aborted_writer_leaves_nothing(io: &FileIo, base: &str) {
    let path = format!("{base}/data/aborted.bin");
    let mut writer = io.writer(&path).await.unwrap();
    writer
        .write_all(&chunk(4, 2 * PART_SIZE_BYTES + 5))
        .await
        .unwrap();
    writer.abort().await.unwrap();
    assert!(!io.exists(&path).await.unwrap());
    assert!(io.list(base).await.unwrap().is_empty());
    // The path is free for a new writer.
    let mut writer = io.writer(&path).await.unwrap();
    writer.write_all(b"second try").await.unwrap();
    assert_eq!(writer.close().await.unwrap(), 10);
    assert_eq!(io.read(&path).await.unwrap().as_ref(), b"second try");
}

/// Peak and current resident memory of this process, in KiB (Linux only).
fn memory_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub(crate) async fn large_streaming_write_bounded_memory(io: &FileIo, base: &str) {
    const TOTAL_MIB: u64 = 300;
    let path = format!("{base}/data/large.bin");
    let started = Instant::now();
    // Reset the peak-RSS counter (Linux), then remember where we start.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = memory_kib("VmRSS:");

    let mut writer = io.writer(&path).await.unwrap();
    for i in 0..TOTAL_MIB {
        writer.write_all(&chunk(1000 + i, MIB)).await.unwrap();
    }
    assert_eq!(writer.close().await.unwrap(), TOTAL_MIB * MIB as u64);
    let written_in = started.elapsed();

    if let (Some(before), Some(peak)) = (rss_before, memory_kib("VmHWM:")) {
        let grown_mib = peak.saturating_sub(before) / 1024;
        eprintln!("large write: peak RSS grew by {grown_mib} MiB for {TOTAL_MIB} MiB written");
        assert!(
            grown_mib < 200,
            "memory not bounded: peak RSS grew by {grown_mib} MiB"
        );
    }
    assert_eq!(io.len(&path).await.unwrap(), TOTAL_MIB * MIB as u64);

    // Verify every byte, 10 MiB at a time.
    let step = 10;
    for first in (0..TOTAL_MIB).step_by(step) {
        let last = (first + step as u64).min(TOTAL_MIB);
        let range = first * MIB as u64..last * MIB as u64;
        let got = io.read_range(&path, range).await.unwrap();
        for (n, i) in (first..last).enumerate() {
            let expected = chunk(1000 + i, MIB);
            assert!(
                got[n * MIB..(n + 1) * MIB] == expected[..],
                "MiB {i} differs"
            );
        }
    }
    eprintln!(
        "large write: {TOTAL_MIB} MiB written in {written_in:?}, verified in {:?}",
        started.elapsed() - written_in
    );
    io.delete(&path).await.unwrap();
}
