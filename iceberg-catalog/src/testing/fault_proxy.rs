//! A loopback HTTP proxy in front of the REST server that injects faults into matching
//! requests: it drops the answer after the server acted, or answers 503, 429, 409, a canned
//! JSON body or a redirect to the same path without forwarding.
//!
//! Plain threads and HTTP/1.1 as reqwest sends it (a head, then a `Content-Length` body);
//! each request goes upstream on a connection of its own with `Connection: close`, so the
//! answer is everything the server sends before closing.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What to do to a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forward it, then close the client's connection without an answer.
    DropAnswer,
    /// Answer 503 without forwarding.
    Unavailable,
    /// Answer 429 with `Retry-After: 1` without forwarding (a throttling server).
    TooManyRequests,
    /// Answer 409 (`CommitFailedException`) without forwarding.
    Conflict,
    /// Answer 200 with this JSON body without forwarding (a server of another shape).
    Json(&'static str),
    /// Answer 302 to the same path without forwarding (a proxy or load balancer that
    /// redirects).
    Redirect,
}

#[derive(Debug)]
struct Rule {
    method: String,
    path_suffix: String,
    fault: Fault,
    left: u32,
}

/// A running proxy; its thread lives as long as the test process.
#[derive(Clone)]
pub struct FaultProxy {
    /// `http://127.0.0.1:<port>`.
    pub uri: String,
    rules: Arc<Mutex<Vec<Rule>>>,
    /// `METHOD path [Authorization] -> fault or "forwarded"`, in arrival order.
    log: Arc<Mutex<Vec<String>>>,
}

impl FaultProxy {
    /// A proxy forwarding to `upstream` (`http://host:port`).
    pub fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let proxy = Self {
            uri,
            rules: Arc::default(),
            log: Arc::default(),
        };
        let shared = proxy.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (upstream, proxy) = (upstream.clone(), shared.clone());
                std::thread::spawn(move || proxy.serve(client, &upstream));
            }
        });
        proxy
    }

    /// Applies `fault` to the next `count` `method` requests whose path ends in `suffix`.
    pub fn inject(&self, method: &str, suffix: &str, fault: Fault, count: u32) {
        self.rules.lock().unwrap().push(Rule {
            method: method.into(),
            path_suffix: suffix.into(),
            fault,
            left: count,
        });
    }

    /// Faults armed and not yet applied.
    pub fn pending(&self) -> u32 {
        self.rules.lock().unwrap().iter().map(|r| r.left).sum()
    }

    /// What the proxy saw.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn fault_for(&self, method: &str, path: &str) -> Option<Fault> {
        let path = path.split('?').next().unwrap_or(path);
        let mut rules = self.rules.lock().unwrap();
        let rule = rules
            .iter_mut()
            .find(|r| r.left > 0 && r.method == method && path.ends_with(&r.path_suffix))?;
        rule.left -= 1;
        Some(rule.fault)
    }

    /// Serves one client connection, request after request (reqwest keeps it alive).
    fn serve(&self, client: TcpStream, upstream: &str) {
        let mut reader = BufReader::new(client.try_clone().unwrap());
        let mut client = client;
        // One request per connection: every answer says `Connection: close`.
        if let Some((head, body)) = read_request(&mut reader) {
            let mut words = head.split_whitespace();
            let method = words.next().unwrap_or_default().to_string();
            let path = words.next().unwrap_or_default().to_string();
            let fault = self.fault_for(&method, &path);
            let auth = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("authorization"))
                .map_or(String::new(), |(_, v)| format!(" [{}]", v.trim()));
            self.log.lock().unwrap().push(format!(
                "{method} {path}{auth} -> {}",
                fault.map_or("forwarded".into(), |f| format!("{f:?}"))
            ));
            let answer = match fault {
                Some(Fault::Unavailable) => canned(503, "ServiceUnavailableException", "injected"),
                Some(Fault::TooManyRequests) => {
                    let body =
                        r#"{"error":{"message":"slow down","type":"TooManyRequests","code":429}}"#;
                    format!(
                        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n\
                         Content-Type: application/json\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .into_bytes()
                }
                Some(Fault::Conflict) => canned(409, "CommitFailedException", "injected"),
                Some(Fault::Json(body)) => answer(200, body),
                Some(Fault::Redirect) => format!(
                    "HTTP/1.1 302 Found\r\nLocation: {path}\r\nContent-Length: 0\r\n\
                     Connection: close\r\n\r\n"
                )
                .into_bytes(),
                Some(Fault::DropAnswer) | None => match forward(upstream, &head, &body) {
                    Some(answer) => answer,
                    None => return,
                },
            };
            if fault == Some(Fault::DropAnswer) {
                let _ = client.shutdown(Shutdown::Both);
                return;
            }
            let _ = client.write_all(&answer);
        }
    }
}

/// One request: its head (request line and headers) and body.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// Sends the request upstream with `Connection: close` and reads the whole answer.
fn forward(upstream: &str, head: &str, body: &[u8]) -> Option<Vec<u8>> {
    let mut server = TcpStream::connect(upstream).ok()?;
    let mut out = String::new();
    for line in head.lines() {
        if !line.to_ascii_lowercase().starts_with("connection:") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    server.write_all(out.as_bytes()).ok()?;
    server.write_all(body).ok()?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).ok()?;
    Some(answer)
}

/// An answer with the REST spec's `ErrorModel`.
fn canned(status: u16, kind: &str, message: &str) -> Vec<u8> {
    let body = format!(r#"{{"error":{{"message":"{message}","type":"{kind}","code":{status}}}}}"#);
    answer(status, &body)
}

/// An answer of `status` with a JSON `body`.
fn answer(status: u16, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} Injected\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
