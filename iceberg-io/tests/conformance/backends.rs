//! Backends for the suite: each gives a FileIo and a fresh base path, plus whatever must
//! live as long as the test (a temp dir, a moto_server process).

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

/// S3 on a fresh moto_server, configured through Iceberg property names.
#[cfg(feature = "s3")]
pub(crate) async fn s3(case: &str) -> Option<Backend> {
    use std::collections::HashMap;

    let moto = moto::MotoServer::start()?;
    let bucket = "warehouse";
    moto.create_bucket(bucket);
    let props: HashMap<String, String> = [
        ("s3.endpoint", moto.endpoint.as_str()),
        ("s3.access-key-id", "test"),
        ("s3.secret-access-key", "test"),
        ("s3.region", "us-east-1"),
        ("s3.path-style-access", "true"),
        ("s3.multipart.part-size-bytes", "5242880"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
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

#[cfg_attr(not(feature = "s3"), allow(dead_code))]
pub(crate) mod moto {
    //! Starts `moto_server` on a free port and kills it on drop.

    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// A running moto_server, killed on drop.
    pub(crate) struct MotoServer {
        child: Child,
        addr: String,
        pub(crate) endpoint: String,
    }

    impl MotoServer {
        /// Starts one, or returns `None` (after saying so loudly) if moto_server is not on
        /// PATH; with `ICEBERG_TEST_MOTO=1` a missing moto_server fails the test instead.
        pub(crate) fn start() -> Option<Self> {
            let required = std::env::var("ICEBERG_TEST_MOTO").is_ok_and(|v| v == "1");
            let mut last_error = String::new();
            for _ in 0..3 {
                let port = free_port();
                let spawned = Command::new("moto_server")
                    .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                let child = match spawned {
                    Ok(child) => child,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        if required {
                            panic!("moto_server not found on PATH and ICEBERG_TEST_MOTO=1");
                        }
                        // Written to the stderr handle, not `eprintln!`, so that the test
                        // harness's output capture does not hide it.
                        let _ = writeln!(
                            std::io::stderr(),
                            "\n*** SKIPPED: moto_server not found on PATH; S3 conformance \
                             tests did not run (set ICEBERG_TEST_MOTO=1 to make this fail) ***"
                        );
                        return None;
                    }
                    Err(e) => panic!("cannot start moto_server: {e}"),
                };
                let addr = format!("127.0.0.1:{port}");
                let mut server = Self {
                    child,
                    endpoint: format!("http://{addr}"),
                    addr,
                };
                match server.wait_ready(Duration::from_secs(30)) {
                    Ok(()) => return Some(server),
                    // Most likely the port was taken in the meantime: try another.
                    Err(e) => last_error = e,
                }
            }
            panic!("moto_server did not come up: {last_error}");
        }

        fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
            let start = Instant::now();
            while start.elapsed() < timeout {
                if let Ok(Some(status)) = self.child.try_wait() {
                    return Err(format!("moto_server exited early with {status}"));
                }
                if self
                    .request("GET", "/")
                    .is_ok_and(|response| response.starts_with("HTTP/1."))
                {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(format!("no answer on {} within {timeout:?}", self.addr))
        }

        /// Creates `bucket` with a raw `PUT /bucket` (moto does not check signatures).
        pub(crate) fn create_bucket(&self, bucket: &str) {
            let response = self.request("PUT", &format!("/{bucket}")).unwrap();
            assert!(
                response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200"),
                "creating bucket {bucket}: {response}"
            );
        }

        /// How many multipart uploads are in progress in `bucket` (ListMultipartUploads).
        pub(crate) fn pending_uploads(&self, bucket: &str) -> usize {
            let response = self.request("GET", &format!("/{bucket}?uploads")).unwrap();
            assert!(
                response.contains("ListMultipartUploadsResult"),
                "{response}"
            );
            response.matches("<UploadId>").count()
        }

        fn request(&self, method: &str, path: &str) -> std::io::Result<String> {
            let mut stream = TcpStream::connect(&self.addr)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            write!(
                stream,
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\
                 Connection: close\r\n\r\n",
                self.addr
            )?;
            let mut response = String::new();
            stream.read_to_string(&mut response)?;
            Ok(response)
        }
    }

    impl Drop for MotoServer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn free_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }
}
