//! A throwaway moto S3 server for tests: a free port on 127.0.0.1, killed on drop.
//!
//! It is moto's own server started through `moto_server.py` (at the root of this crate), which makes
//! conditional writes atomic as real S3 does: plain `moto_server` checks `If-None-Match` and
//! then stores as two steps on concurrent threads, so two racing creates can both succeed.
//! Needs a Python with `moto[server]`: `$ICEBERG_TEST_PYTHON` (set by `cargo xtask test`),
//! else `python3` on PATH.

// A test harness: failing the test loudly is its job.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The launcher run by [`MotoServer::start`].
const LAUNCHER: &str = include_str!("../moto_server.py");

/// The launcher's exit status when moto is not installed.
const NOT_INSTALLED: i32 = 3;

/// A running moto server on 127.0.0.1, killed on drop.
pub struct MotoServer {
    child: Child,
    addr: String,
    /// `http://127.0.0.1:<port>`, for the `s3.endpoint` property.
    pub endpoint: String,
}

impl MotoServer {
    /// Starts one, or returns `None` (after saying so loudly) if there is no Python with
    /// moto; with `ICEBERG_TEST_MOTO=1` a missing moto fails the test instead.
    pub fn start() -> Option<Self> {
        let required = std::env::var("ICEBERG_TEST_MOTO").is_ok_and(|v| v == "1");
        let python = std::env::var("ICEBERG_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let spawned = Command::new(&python)
                .args(["-c", LAUNCHER, "127.0.0.1", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let child = match spawned {
                Ok(child) => child,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Self::missing(required, &format!("{python} not found"));
                }
                Err(e) => panic!("cannot start moto with {python}: {e}"),
            };
            let addr = format!("127.0.0.1:{port}");
            let mut server = Self {
                child,
                endpoint: format!("http://{addr}"),
                addr,
            };
            match server.wait_ready(Duration::from_secs(30)) {
                Ok(()) => return Some(server),
                Err(Ready::NotInstalled) => {
                    return Self::missing(required, &format!("{python} has no moto[server]"));
                }
                // Most likely the port was taken in the meantime: try another.
                Err(Ready::Failed(e)) => last_error = e,
            }
        }
        panic!("moto did not come up: {last_error}");
    }

    /// Says loudly that the S3 tests are skipped (or fails when they are required).
    fn missing(required: bool, why: &str) -> Option<Self> {
        if required {
            panic!("{why}, and ICEBERG_TEST_MOTO=1 requires moto");
        }
        // Written to the stderr handle, not `eprintln!`, so that the test harness's output
        // capture does not hide it.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED: {why}; S3 tests did not run (`pip install moto[server]`, or set \
             ICEBERG_TEST_MOTO=1 to make this fail) ***"
        );
        None
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), Ready> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Ok(Some(status)) = self.child.try_wait() {
                if status.code() == Some(NOT_INSTALLED) {
                    return Err(Ready::NotInstalled);
                }
                return Err(Ready::Failed(format!("moto exited early with {status}")));
            }
            if self
                .request("GET", "/")
                .is_ok_and(|response| response.starts_with("HTTP/1."))
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(Ready::Failed(format!(
            "no answer on {} within {timeout:?}",
            self.addr
        )))
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

    /// Makes the next `count` PUTs whose path contains `fragment` store their object and then
    /// answer 503, as a server that failed after the write landed (clients retry them).
    pub fn store_then_503(&self, fragment: &str, count: u32) {
        self.arm("store-then-503", fragment, count);
    }

    /// Makes the next `count` PUTs whose path contains `fragment` store their object and then
    /// close the connection with no answer.
    pub fn store_then_drop(&self, fragment: &str, count: u32) {
        self.arm("store-then-drop", fragment, count);
    }

    /// Makes the next `count` PUTs whose path contains `fragment` wait `delay` before moto
    /// sees them.
    pub fn delay(&self, fragment: &str, count: u32, delay: Duration) {
        self.arm(&format!("delay-{}", delay.as_millis()), fragment, count);
    }

    /// How many requests armed by the fault methods have not arrived yet.
    pub fn faults_pending(&self) -> u32 {
        let response = self.request("GET", "/__faults__").unwrap();
        let body = response.rsplit("\r\n\r\n").next().unwrap_or_default();
        body.trim().parse().unwrap_or_else(|_| panic!("{response}"))
    }

    fn arm(&self, mode: &str, fragment: &str, count: u32) {
        let response = self
            .request_with_body("POST", &format!("/__faults__/{mode}/{count}"), fragment)
            .unwrap();
        assert!(
            response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200"),
            "{response}"
        );
    }

    fn request(&self, method: &str, path: &str) -> std::io::Result<String> {
        self.request_with_body(method, path, "")
    }

    fn request_with_body(&self, method: &str, path: &str, body: &str) -> std::io::Result<String> {
        let mut stream = TcpStream::connect(&self.addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.addr,
            body.len()
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

/// Why a started server is not ready.
enum Ready {
    /// The Python has no moto.
    NotInstalled,
    /// Anything else (a taken port, most likely).
    Failed(String),
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
