//! A real Iceberg REST catalog server for the tests: rustberg 0.3.0 (crates.io), started on
//! 127.0.0.1 with a `file://` or moto S3 warehouse and killed on drop.
//!
//! The binary is `ICEBERG_TEST_RUSTBERG`, else the one `.ci/run` installs under
//! `~/.cache/iceberg-ci/`. Without it the REST tests print a loud SKIPPED line and pass;
//! with `ICEBERG_TEST_REQUIRE_REST=1` (set by `.ci/run`) they fail instead.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rest::{RestCatalog, RestCatalogConfig};

/// Where `.ci/run` installs rustberg (with S3 storage first, then the `file://`-only build).
const INSTALLS: &[&str] = &[
    ".cache/iceberg-ci/rustberg-0.3.0-s3/bin/rustberg",
    ".cache/iceberg-ci/rustberg-0.3.0/bin/rustberg",
];

/// A running rustberg, killed on drop.
pub struct RestServer {
    child: Child,
    /// `http://127.0.0.1:<port>`, the catalog's `uri`.
    pub uri: String,
    /// The S3 properties clients need to reach the warehouse (empty for `file://`).
    pub io_properties: HashMap<String, String>,
    _state: tempfile::TempDir,
}

fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ICEBERG_TEST_RUSTBERG") {
        return Some(PathBuf::from(path));
    }
    let home = PathBuf::from(std::env::var_os("HOME")?);
    INSTALLS.iter().map(|p| home.join(p)).find(|p| p.exists())
}

/// Says loudly that `test` did not run, or fails when REST is required.
fn skipped(test: &str, why: &str) {
    if std::env::var("ICEBERG_TEST_REQUIRE_REST").is_ok_and(|v| v == "1") {
        panic!("{test}: {why}, and ICEBERG_TEST_REQUIRE_REST=1 requires the REST server");
    }
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED {test}: {why}; REST catalog tests did not run (.ci/run installs \
         rustberg, or set ICEBERG_TEST_RUSTBERG to its binary) ***"
    );
}

impl RestServer {
    /// A server whose warehouse is `warehouse` (`file:///...`, or `s3://bucket/path` with the
    /// moto `s3` properties), or `None` when there is no binary.
    pub fn start(test: &str, warehouse: &str, s3: Option<HashMap<String, String>>) -> Option<Self> {
        let Some(binary) = binary() else {
            skipped(test, "no rustberg binary");
            return None;
        };
        if !binary.exists() {
            skipped(test, &format!("{} does not exist", binary.display()));
            return None;
        }
        let state = tempfile::tempdir().unwrap();
        let io_properties = s3.unwrap_or_default();
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = state.path().join(format!("rustberg-{port}.toml"));
            std::fs::write(
                &config,
                config_toml(port, state.path(), warehouse, &io_properties),
            )
            .unwrap();
            let log =
                std::fs::File::create(state.path().join(format!("rustberg-{port}.log"))).unwrap();
            let child = Command::new(&binary)
                .arg("--config")
                .arg(&config)
                .args(["--dev", "--no-auth", "--insecure-http"])
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
            let mut child = child;
            let uri = format!("http://127.0.0.1:{port}");
            match wait_ready(&mut child, &uri, Duration::from_secs(30)) {
                Ok(()) => {
                    return Some(Self {
                        child,
                        uri,
                        io_properties,
                        _state: state,
                    });
                }
                Err(e) => {
                    // Most likely the port was taken meanwhile: kill it, try another.
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = state.path().join(format!("rustberg-{port}.log"));
                    let log = std::fs::read_to_string(log).unwrap_or_default();
                    last_error = format!("{e}\n{log}");
                }
            }
        }
        panic!("rustberg did not come up: {last_error}");
    }

    /// A client of this server, with `extra` catalog properties.
    pub async fn catalog(&self, extra: &[(&str, &str)]) -> RestCatalog {
        RestCatalog::connect(self.config(extra)).await.unwrap()
    }

    /// This server's client config, with its warehouse's S3 properties and `extra`.
    pub fn config(&self, extra: &[(&str, &str)]) -> RestCatalogConfig {
        let mut config = RestCatalogConfig::new(&self.uri);
        for (k, v) in &self.io_properties {
            config = config.with_property(k, v);
        }
        for (k, v) in extra {
            config = config.with_property(*k, *v);
        }
        config
    }
}

/// Waits until `uri` answers its config, or `child` exits.
fn wait_ready(child: &mut Child, uri: &str, timeout: Duration) -> Result<(), String> {
    let start = Instant::now();
    let addr = uri.trim_start_matches("http://");
    while start.elapsed() < timeout {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("rustberg exited early with {status}"));
        }
        if get(addr, "/v1/config").is_some_and(|r| r.starts_with("HTTP/1.1 200")) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("no answer on {addr} within {timeout:?}"))
}

impl Drop for RestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// rustberg's config: loopback, plain HTTP, no rate limit (the concurrency tests send
/// hundreds of requests a second), no audit trail, the warehouse and its S3 access.
fn config_toml(
    port: u16,
    state: &std::path::Path,
    warehouse: &str,
    s3: &HashMap<String, String>,
) -> String {
    let mut toml = format!(
        "[server]\nhost = \"127.0.0.1\"\nport = {port}\n\n\
         [tls]\nenabled = false\ninsecure_http = true\n\n\
         [storage]\ncatalog_url = \"file://{}/catalog.redb\"\nwarehouse_location = \"{warehouse}\"\n\
         location_scope = \"warehouse\"\n",
        state.display()
    );
    if !s3.is_empty() {
        toml.push_str("\n[storage.properties]\n");
        let mut keys: Vec<_> = s3.iter().collect();
        keys.sort();
        for (k, v) in keys {
            toml.push_str(&format!("\"{k}\" = \"{v}\"\n"));
        }
    }
    toml.push_str(
        "\n[rate_limit]\nenabled = false\n\n[audit]\nsink = \"none\"\n\n[logging]\nlevel = \"warn\"\n",
    );
    toml
}

/// A raw `GET`, for the readiness probe (the tests' crate has no HTTP client of its own).
fn get(addr: &str, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}
