//! A throwaway `moto_server` (an S3-compatible server) for tests: a free port on
//! 127.0.0.1, killed on drop. Needs `moto_server` on PATH (`pip install moto[server]`).

// A test harness: failing the test loudly is its job.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running moto_server on 127.0.0.1, killed on drop.
pub struct MotoServer {
    child: Child,
    addr: String,
    /// `http://127.0.0.1:<port>`, for the `s3.endpoint` property.
    pub endpoint: String,
}

impl MotoServer {
    /// Starts one, or returns `None` (after saying so loudly) if moto_server is not on
    /// PATH; with `ICEBERG_TEST_MOTO=1` a missing moto_server fails the test instead.
    pub fn start() -> Option<Self> {
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
    pub fn create_bucket(&self, bucket: &str) {
        let response = self.request("PUT", &format!("/{bucket}")).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200"),
            "creating bucket {bucket}: {response}"
        );
    }

    /// How many multipart uploads are in progress in `bucket` (ListMultipartUploads).
    pub fn pending_uploads(&self, bucket: &str) -> usize {
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

/// The Iceberg IO properties that reach a moto server at `endpoint` (any key, path style).
pub fn s3_properties(endpoint: &str) -> std::collections::HashMap<String, String> {
    [
        ("s3.endpoint", endpoint),
        ("s3.access-key-id", "test"),
        ("s3.secret-access-key", "test"),
        ("s3.region", "us-east-1"),
        ("s3.path-style-access", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

impl MotoServer {
    /// [`s3_properties`] of this server.
    pub fn s3_properties(&self) -> std::collections::HashMap<String, String> {
        s3_properties(&self.endpoint)
    }
}
