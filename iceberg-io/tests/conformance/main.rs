//! One conformance suite every backend must pass: local disk (as `file:///` URIs and as
//! bare paths), memory, and S3 against a real moto server (feature `s3`).
//!
//! S3 tests start their own moto server on a free port (`iceberg_testing::moto`, which
//! makes moto's conditional writes atomic as S3's are). Without a Python that has moto they
//! print `SKIPPED` and pass, unless `ICEBERG_TEST_MOTO=1`, when they fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backends;
mod suite;

/// Generates one test per suite case for a backend.
macro_rules! conformance {
    ($backend:ident: $($case:ident),+ $(,)?) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(backend) = crate::backends::$backend(stringify!($case)).await else {
                        return;
                    };
                    crate::suite::$case(&backend.io, &backend.base).await;
                }
            )+
        }
    };
}

conformance!(local:
    round_trip,
    not_found_is_typed,
    put_if_absent_twice,
    concurrent_put_if_absent,
    streaming_writer_multipart,
    dropped_writer_leaves_nothing,
    aborted_writer_leaves_nothing,
    large_streaming_write_bounded_memory,
);

conformance!(local_plain_path:
    round_trip,
    not_found_is_typed,
    put_if_absent_twice,
    concurrent_put_if_absent,
    streaming_writer_multipart,
    dropped_writer_leaves_nothing,
    aborted_writer_leaves_nothing,
);

conformance!(memory:
    round_trip,
    not_found_is_typed,
    put_if_absent_twice,
    concurrent_put_if_absent,
    streaming_writer_multipart,
    dropped_writer_leaves_nothing,
    aborted_writer_leaves_nothing,
);

#[cfg(feature = "s3")]
conformance!(s3:
    round_trip,
    not_found_is_typed,
    put_if_absent_twice,
    concurrent_put_if_absent,
    streaming_writer_multipart,
    dropped_writer_leaves_nothing,
    aborted_writer_leaves_nothing,
    large_streaming_write_bounded_memory,
);

mod local_specific {
    use bytes::Bytes;
    use iceberg_io::FileIo;

    /// Iceberg partition paths hold literal `%` escapes and spaces; they must reach the
    /// disk unchanged and list back unchanged.
    #[tokio::test]
    async fn special_characters_map_to_literal_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let io = FileIo::memory();
        let path = format!("file://{root}/data/name=a%2Fb c/f#1.parquet");
        io.put(&path, Bytes::from_static(b"x")).await.unwrap();
        let on_disk = dir
            .path()
            .join("data")
            .join("name=a%2Fb c")
            .join("f#1.parquet");
        assert!(on_disk.is_file(), "{on_disk:?} missing");
        assert_eq!(
            io.list(&format!("file://{root}/data")).await.unwrap(),
            vec![path.clone()]
        );
        assert_eq!(io.read(&path).await.unwrap().as_ref(), b"x");
        // `file:/abs` (Hadoop form) reaches the same file and lists in its own form.
        let hadoop = format!("file:{root}/data/name=a%2Fb c/f#1.parquet");
        assert!(io.exists(&hadoop).await.unwrap());
        assert_eq!(
            io.list(&format!("file:{root}/data")).await.unwrap(),
            vec![hadoop]
        );
    }
}

#[cfg(feature = "s3")]
mod s3_specific {
    use bytes::Bytes;

    /// One FileIo routes `s3a://` to the same store as `s3://`, and other buckets to
    /// their own, lazily created, store.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn routes_by_scheme_and_bucket() {
        let Some(backend) = crate::backends::s3("routing").await else {
            return;
        };
        let moto = backend.moto.as_ref().unwrap();
        moto.create_bucket("other-bucket");
        let io = &backend.io;
        let a = format!("{}/x", backend.base);
        io.put(&a, Bytes::from_static(b"1")).await.unwrap();
        let a_s3a = a.replacen("s3://", "s3a://", 1);
        assert_eq!(io.read(&a_s3a).await.unwrap().as_ref(), b"1");
        let listed = io
            .list(&backend.base.replacen("s3://", "s3a://", 1))
            .await
            .unwrap();
        assert_eq!(listed, vec![a_s3a]);

        io.put("s3://other-bucket/y", Bytes::from_static(b"2"))
            .await
            .unwrap();
        assert_eq!(
            io.list("s3://other-bucket").await.unwrap(),
            vec!["s3://other-bucket/y"]
        );
        assert!(!io.exists(&format!("{}/y", backend.base)).await.unwrap());
    }

    /// A writer dropped mid-upload leaves no pending multipart upload on the server.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropped_writer_aborts_its_multipart_upload() {
        use tokio::io::AsyncWriteExt;

        let Some(backend) = crate::backends::s3("drop-abort").await else {
            return;
        };
        let moto = backend.moto.as_ref().unwrap();
        let path = format!("{}/data/dropped.bin", backend.base);
        let mut writer = backend.io.writer(&path).await.unwrap();
        writer
            .write_all(&vec![1u8; 11 * 1024 * 1024])
            .await
            .unwrap();
        assert_eq!(
            moto.pending_uploads("warehouse"),
            1,
            "multipart upload started"
        );
        drop(writer);
        let mut pending = 1;
        for _ in 0..100 {
            pending = moto.pending_uploads("warehouse");
            if pending == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(pending, 0, "drop did not abort the multipart upload");
        assert!(!backend.io.exists(&path).await.unwrap());
    }
}
