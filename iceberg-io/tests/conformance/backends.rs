//! Backends for the suite: each gives a FileIo and a fresh base path, plus whatever must
//! live as long as the test (a temp dir, a moto server process).

use iceberg_io::{FileIo, WriteConfig};

/// Part size used by the suite: the S3 minimum, so every backend runs the same code path.
pub(crate) const PART_SIZE_BYTES: usize = 5 * 1024 * 1024;

/// A FileIo, the base path the case writes under, and what must outlive the test.
pub(crate) struct Backend {
    pub(crate) io: FileIo,
    pub(crate) base: String,
    #[allow(dead_code)]
    pub(crate) moto: Option<moto::MotoServer>,
    _dir: Option<tempfile::TempDir>,
}

fn small_parts(io: FileIo) -> FileIo {
    io.with_write_config(WriteConfig::default().with_part_size_bytes(PART_SIZE_BYTES))
}

/// Local disk, addressed as `file:///tmp/.../case`.
pub(crate) async fn local(case: &str) -> Option<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_owned();
    let base = format!("file://{root}/{case}");
    let io = FileIo::from_location(&base, &Default::default()).unwrap();
    Some(Backend {
        io: small_parts(io),
        base,
        moto: None,
        _dir: Some(dir),
    })
}

/// Local disk, addressed as a bare absolute path `/tmp/.../case`.
pub(crate) async fn local_plain_path(case: &str) -> Option<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/{case}", dir.path().to_str().unwrap());
    let io = FileIo::from_location(&base, &Default::default()).unwrap();
    Some(Backend {
        io: small_parts(io),
        base,
        moto: None,
        _dir: Some(dir),
    })
}

/// A fresh in-memory store.
pub(crate) async fn memory(case: &str) -> Option<Backend> {
    Some(Backend {
        io: small_parts(FileIo::memory()),
        base: format!("memory://suite/{case}"),
        moto: None,
        _dir: None,
    })
}

/// S3 on a fresh moto server, configured through Iceberg property names.
#[cfg(feature = "s3")]
pub(crate) async fn s3(case: &str) -> Option<Backend> {
    use std::collections::HashMap;

    let moto = moto::MotoServer::start()?;
    let bucket = "warehouse";
    moto.create_bucket(bucket);
    let mut props: HashMap<String, String> = moto.s3_properties();
    props.insert("s3.multipart.part-size-bytes".into(), "5242880".into());
    let base = format!("s3://{bucket}/{case}");
    let io = FileIo::from_location(&base, &props).unwrap();
    assert_eq!(io.write_config().part_size_bytes, PART_SIZE_BYTES);
    Some(Backend {
        io,
        base,
        moto: Some(moto),
        _dir: None,
    })
}

pub(crate) use iceberg_testing::moto;
