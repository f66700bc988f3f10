//! The HTTP side of the REST catalog: one `reqwest` client, the server's base path and the
//! endpoints it offers, authentication headers, and the reading of answers and errors.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;

use super::auth::Auth;
use super::types::{ErrorResponse, TokenResponse};
use crate::error::{Error, Result};

/// The endpoints a server offers when its config lists none (the spec's default set).
const DEFAULT_ENDPOINTS: &[&str] = &[
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
];

/// A server's answer to one request: its status and body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) body: bytes::Bytes,
    /// The `Retry-After` header in whole seconds (0 when present in another form).
    pub(crate) retry_after_secs: Option<u64>,
}

impl Answer {
    /// The body as `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self, operation: &str) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| Error::InvalidResponse {
            operation: operation.to_string(),
            reason: format!("{e}: {}", preview(&self.body)),
        })
    }

    /// The error of a failed answer, with the server's `error.type` and `message`.
    pub(crate) fn refusal(&self, operation: &str) -> Error {
        let (error_type, message) = match serde_json::from_slice::<ErrorResponse>(&self.body) {
            Ok(r) => (r.error.kind, r.error.message),
            Err(_) => (String::new(), preview(&self.body)),
        };
        Error::RestResponse {
            operation: operation.to_string(),
            status: self.status.as_u16(),
            error_type,
            message,
        }
    }
}

/// The first 300 characters of a body, for errors.
fn preview(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(300).collect()
}

/// The HTTP client of one catalog.
#[derive(Debug)]
pub(crate) struct Client {
    http: reqwest::Client,
    /// `{uri}/v1`.
    root: String,
    /// `{uri}/v1/{prefix}` without a trailing slash (`{uri}/v1` without a prefix).
    base: String,
    /// `VERB /v1/{prefix}/...` templates the server offers.
    endpoints: BTreeSet<String>,
    auth: Auth,
}

impl Client {
    /// A client for `uri` with the static `headers`.
    pub(crate) fn new(
        uri: &str,
        headers: HeaderMap,
        timeout: Duration,
        auth: Auth,
    ) -> Result<Self> {
        // No redirects: reqwest turns a redirected POST into a GET, whose 200 (the table
        // as it was) a commit would take for its own success.
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|source| Error::Http {
                operation: format!("client for {uri}"),
                source,
            })?;
        let root = format!("{}/v1", uri.trim_end_matches('/'));
        Ok(Self {
            http,
            base: root.clone(),
            root,
            endpoints: DEFAULT_ENDPOINTS.iter().map(|e| e.to_string()).collect(),
            auth,
        })
    }

    /// Applies the server's config: its `prefix` and the endpoints it lists.
    pub(crate) fn configure(&mut self, prefix: Option<&str>, endpoints: Option<Vec<String>>) {
        if let Some(prefix) = prefix
            .map(|p| p.trim_matches('/'))
            .filter(|p| !p.is_empty())
        {
            // As Java: the prefix is used as the server gave it (it may span segments).
            self.base = format!("{}/{prefix}", self.root);
        }
        // An empty list says nothing (Java and PyIceberg keep their defaults for it; Java's
        // own server never sends one): taken as given it would refuse every call.
        if let Some(endpoints) = endpoints.filter(|e| !e.is_empty()) {
            self.endpoints = endpoints
                .into_iter()
                .map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
        }
    }

    /// True when the server offers `endpoint` (`GET /v1/{prefix}/namespaces`).
    pub(crate) fn offers(&self, endpoint: &str) -> bool {
        self.endpoints.contains(endpoint)
    }

    /// `path` under `/v1` (for `/v1/config`), without the prefix.
    pub(crate) fn root_url(&self, path: &str) -> String {
        format!("{}/{path}", self.root)
    }

    /// `path` under `/v1/{prefix}`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }

    /// A request with the catalog's authentication.
    pub(crate) async fn request(&self, method: Method, url: &str) -> Result<RequestBuilder> {
        let request = self.http.request(method, url);
        Ok(match self.auth.header(&self.http).await? {
            Some(value) => request.header(reqwest::header::AUTHORIZATION, value),
            None => request,
        })
    }

    /// Sends `request` and reads the whole answer; any status is an answer.
    pub(crate) async fn send(&self, request: RequestBuilder, operation: &str) -> Result<Answer> {
        answer_of(request, operation).await
    }

    /// Fetches an OAuth2 token with the client-credentials grant.
    pub(crate) async fn fetch_token(
        http: &reqwest::Client,
        server_uri: &str,
        form: &[(&str, &str)],
    ) -> Result<TokenResponse> {
        let operation = format!("token from {server_uri}");
        let mut busy = 0;
        let answer = loop {
            let answer = answer_of(http.post(server_uri).form(form), &operation).await?;
            match super::calls::busy_wait(&reqwest::Method::POST, &answer, busy) {
                Some(wait) => {
                    busy += 1;
                    tokio::time::sleep(wait).await;
                }
                None => break answer,
            }
        };
        if !answer.status.is_success() {
            // OAuth errors are `{"error": "invalid_client", "error_description": ...}`.
            return Err(Error::RestResponse {
                operation,
                status: answer.status.as_u16(),
                error_type: String::new(),
                message: preview(&answer.body),
            });
        }
        answer.json(&operation)
    }
}

/// Sends `request` and reads the whole answer.
async fn answer_of(request: RequestBuilder, operation: &str) -> Result<Answer> {
    let http = |source| Error::Http {
        operation: operation.to_string(),
        source,
    };
    let response = request.send().await.map_err(http)?;
    let status = response.status();
    // A date (or anything but seconds) still says "retry later": 0, the default wait.
    let retry_after_secs = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        });
    let body = response.bytes().await.map_err(http)?;
    Ok(Answer {
        status,
        body,
        retry_after_secs,
    })
}

/// Headers from `header.<name>` properties.
///
/// # Errors
/// [`Error::InvalidUri`] naming a header whose name or value HTTP does not allow.
pub(crate) fn headers<'a>(
    uri: &str,
    properties: impl Iterator<Item = (&'a String, &'a String)>,
) -> Result<HeaderMap> {
    let mut map = HeaderMap::new();
    for (key, value) in properties {
        let Some(name) = key.strip_prefix("header.") else {
            continue;
        };
        let invalid = |what: &str| Error::InvalidUri {
            uri: uri.to_string(),
            reason: format!("property {key}: not a valid HTTP header {what}"),
        };
        let name = HeaderName::try_from(name).map_err(|_| invalid("name"))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|_| invalid("value"))?;
        map.insert(name, value);
    }
    // As PyIceberg's client: ask for vended credentials unless told otherwise; an empty
    // `header.X-Iceberg-Access-Delegation` sends none, as Java's client does by default (a
    // server may then check fewer permissions, and one that vends none may refuse the ask).
    let delegation = HeaderName::from_static("x-iceberg-access-delegation");
    match map.get(&delegation) {
        None => {
            map.insert(delegation, HeaderValue::from_static("vended-credentials"));
        }
        Some(v) if v.is_empty() => {
            map.remove(&delegation);
        }
        Some(_) => {}
    }
    Ok(map)
}

/// A path segment, percent-encoded: everything but RFC 3986's unreserved characters.
pub(crate) fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A namespace as one path segment: its levels encoded, joined by the unit separator
/// (`%1F`, the spec's default `namespace-separator`).
pub(crate) fn encode_namespace(levels: &[String]) -> String {
    levels
        .iter()
        .map(|l| encode_segment(l))
        .collect::<Vec<_>>()
        .join("%1F")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn namespaces_and_names_are_one_encoded_segment_each() {
        assert_eq!(encode_segment("events"), "events");
        assert_eq!(encode_segment("a b/c%d"), "a%20b%2Fc%25d");
        assert_eq!(encode_segment("é"), "%C3%A9");
        let levels = vec!["accounting".to_string(), "tax 2026".to_string()];
        assert_eq!(encode_namespace(&levels), "accounting%1Ftax%202026");
    }

    /// A config answer with `"endpoints": []` (servers built on generated models send it)
    /// keeps the default endpoints, as Java and PyIceberg do; a list that names endpoints is
    /// taken as it is.
    #[test]
    fn an_empty_endpoint_list_keeps_the_defaults() {
        const COMMIT: &str = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}";
        let client = || {
            Client::new(
                "http://h",
                HeaderMap::new(),
                Duration::from_secs(1),
                Auth::None,
            )
            .unwrap()
        };
        let mut c = client();
        c.configure(None, Some(Vec::new()));
        assert!(c.offers(COMMIT));
        let mut c = client();
        c.configure(None, Some(vec!["GET  /v1/{prefix}/namespaces".into()]));
        assert!(c.offers("GET /v1/{prefix}/namespaces"));
        assert!(!c.offers(COMMIT));
    }

    #[test]
    fn errors_carry_the_servers_type_and_message() {
        let answer = Answer {
            status: StatusCode::NOT_FOUND,
            body: bytes::Bytes::from_static(
                br#"{"error": {"message": "Table does not exist: db.t", "type": "NoSuchTableException", "code": 404}}"#,
            ),
            retry_after_secs: None,
        };
        let e = answer.refusal("load table db.t");
        assert!(matches!(
            &e,
            Error::RestResponse { status: 404, error_type, message, .. }
                if error_type == "NoSuchTableException" && message == "Table does not exist: db.t"
        ));
        let plain = Answer {
            status: StatusCode::BAD_GATEWAY,
            body: bytes::Bytes::from_static(b"<html>bad gateway</html>"),
            retry_after_secs: None,
        };
        assert!(
            plain
                .refusal("x")
                .to_string()
                .contains("HTTP 502 : <html>bad gateway")
        );
    }

    #[test]
    fn header_properties_become_headers_and_bad_ones_are_named() {
        let props: std::collections::BTreeMap<String, String> = [
            ("header.X-Iceberg-Access-Delegation", "remote-signing"),
            ("token", "t"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let map = headers("http://h", props.iter()).unwrap();
        assert_eq!(map.len(), 1);
        let none = std::collections::BTreeMap::new();
        let default = headers("http://h", none.iter()).unwrap();
        assert_eq!(default["x-iceberg-access-delegation"], "vended-credentials");
        assert_eq!(map["x-iceberg-access-delegation"], "remote-signing");
        // Empty: no delegation asked for, as Java's client.
        let off: std::collections::BTreeMap<String, String> = [(
            "header.X-Iceberg-Access-Delegation".to_string(),
            String::new(),
        )]
        .into();
        assert!(headers("http://h", off.iter()).unwrap().is_empty());
        let bad: std::collections::BTreeMap<String, String> =
            [("header.bad name".to_string(), "v".to_string())].into();
        let e = headers("http://h", bad.iter()).unwrap_err();
        assert!(e.to_string().contains("header.bad name"));
    }
}
