//! The requests behind the [`Catalog`](iceberg_append::Catalog) methods: URLs, one call
//! with its `Idempotency-Key` and resends, answers turned into the trait's errors, paged
//! lists, and the base a commit's diff is computed against.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use iceberg_append::catalog::{NamespaceIdent, namespace_already_exists, no_such_namespace};
use iceberg_append::{Error, Result, Table, TableIdent};
use iceberg_spec::TableMetadata;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Serialize;

use super::RestCatalog;
use super::client::{Answer, encode_namespace, encode_segment};
use super::types::{GetNamespaceResponse, LoadTableResponse, TableIdentifier};
use crate::error::Error as CatalogError;

/// Extra sends of a mutation whose answer was lost, with the same `Idempotency-Key` (only on
/// servers that honour one: they answer a repeat with the first outcome).
const IDEMPOTENT_RESENDS: u32 = 2;

/// Times a request answered "busy" is sent again (Java's `HTTPClient` retries 5 times).
const BUSY_RETRIES: u32 = 5;

/// The longest wait between busy answers, whatever `Retry-After` asks.
const MAX_BUSY_WAIT: Duration = Duration::from_secs(64);

/// How long to wait before sending again a request answered with `answer` after `busy`
/// earlier busy answers, or `None` when the answer stands. As Java's
/// `ExponentialHttpRequestRetryStrategy`: 429 (the server ran nothing) for every method, 503
/// with `Retry-After` for every method, and 408, 500, 502, 503 and 504 for reads, waiting
/// what `Retry-After` says or 1, 2, 4 ... seconds.
pub(super) fn busy_wait(method: &Method, answer: &Answer, busy: u32) -> Option<Duration> {
    let status = answer.status;
    let read = *method == Method::GET || *method == Method::HEAD;
    let retried = status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::SERVICE_UNAVAILABLE && answer.retry_after_secs.is_some())
        || (read
            && [
                StatusCode::REQUEST_TIMEOUT,
                StatusCode::INTERNAL_SERVER_ERROR,
                StatusCode::BAD_GATEWAY,
                StatusCode::SERVICE_UNAVAILABLE,
                StatusCode::GATEWAY_TIMEOUT,
            ]
            .contains(&status));
    if !retried || busy >= BUSY_RETRIES {
        return None;
    }
    let wait = match answer.retry_after_secs {
        Some(secs) if secs > 0 => Duration::from_secs(secs),
        _ => Duration::from_secs(1 << busy.min(6)),
    };
    Some(wait.min(MAX_BUSY_WAIT))
}

/// A request's last answer, and whether an earlier send of it may have reached the server
/// (its answer lost), so that the last answer does not tell the whole outcome.
pub(super) struct Sent {
    pub(super) answer: std::result::Result<Answer, CatalogError>,
    pub(super) uncertain: bool,
    /// The last attempt failed before its request went out (fetching a token).
    pub(super) unsent: bool,
}

/// What a failed request was about, to name it in the error.
pub(super) enum Target<'a> {
    /// The catalog itself (listing top-level namespaces).
    Catalog,
    Namespace(&'a NamespaceIdent),
    Table(&'a TableIdent),
}

impl Target<'_> {
    pub(super) fn label(&self) -> String {
        match self {
            Self::Catalog => "the catalog".to_string(),
            Self::Namespace(ns) => format!("namespace {ns}"),
            Self::Table(t) => t.to_string(),
        }
    }
}

/// The error for a refused answer: 404 and 409 as the trait's typed errors, the rest with
/// the server's `error.type` and `message`.
pub(super) fn refused(answer: &Answer, operation: &str, target: Target<'_>) -> Error {
    let rest = answer.refusal(operation);
    let kind = match &rest {
        CatalogError::RestResponse { error_type, .. } => error_type.as_str(),
        _ => "",
    };
    match (answer.status, &target) {
        (StatusCode::NOT_FOUND, Target::Namespace(ns)) => no_such_namespace(ns),
        (StatusCode::NOT_FOUND, Target::Table(t)) if kind.contains("NoSuchNamespace") => {
            no_such_namespace(&t.namespace_ident())
        }
        (StatusCode::NOT_FOUND, Target::Table(t)) => Error::NoSuchTable {
            table: t.to_string(),
        },
        (StatusCode::CONFLICT, Target::Namespace(ns)) if kind.contains("AlreadyExists") => {
            namespace_already_exists(ns)
        }
        (StatusCode::CONFLICT, Target::Table(t)) if kind.contains("AlreadyExists") => {
            Error::TableAlreadyExists {
                table: t.to_string(),
            }
        }
        _ => Error::Backend {
            table: target.label(),
            source: Box::new(rest),
        },
    }
}

/// An HTTP failure (no answer) as the trait's error.
pub(super) fn unreachable(e: CatalogError, target: &Target<'_>) -> Error {
    Error::Backend {
        table: target.label(),
        source: Box::new(e),
    }
}

impl RestCatalog {
    pub(super) fn namespace_url(&self, ns: &NamespaceIdent, tail: &str) -> String {
        self.client.url(&format!(
            "namespaces/{}{tail}",
            encode_namespace(ns.levels())
        ))
    }

    pub(super) fn table_url(&self, t: &TableIdent) -> String {
        self.namespace_url(
            &t.namespace_ident(),
            &format!("/tables/{}", encode_segment(&t.name)),
        )
    }

    /// Refuses a call the server does not list among its endpoints.
    pub(super) fn require(
        &self,
        endpoint: &str,
        operation: &str,
        target: &Target<'_>,
    ) -> Result<()> {
        if self.client.offers(endpoint) {
            return Ok(());
        }
        Err(Error::Unsupported {
            operation: operation.to_string(),
            catalog: format!("{self:?} (endpoint `{endpoint}` not offered)"),
            target: target.label(),
        })
    }

    /// A new `Idempotency-Key` (a UUIDv7 from the environment's clock and randomness), when
    /// the server honours them.
    pub(super) fn idempotency_key(&self) -> Option<String> {
        self.idempotent.then(|| {
            let random = self.env.new_uuid();
            let mut bytes = [0u8; 10];
            bytes.copy_from_slice(&random.as_bytes()[..10]);
            let ms = u64::try_from(self.env.now_ms()).unwrap_or(0);
            uuid::Builder::from_unix_timestamp_millis(ms, &bytes)
                .into_uuid()
                .to_string()
        })
    }

    /// Sends one request built by `extra` (with `body` as JSON, when given) and reads the
    /// answer; see [`RestCatalog::send_tracked`].
    pub(super) async fn call<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: &str,
        body: Option<&B>,
        operation: &str,
        extra: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> std::result::Result<Answer, CatalogError> {
        self.send_tracked(method, url, body, operation, extra)
            .await
            .answer
    }

    /// As [`RestCatalog::call`], with any failure as the trait's error about `target`.
    pub(super) async fn call_ok<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: &str,
        body: Option<&B>,
        operation: &str,
        target: Target<'_>,
        extra: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Answer> {
        let answer = self
            .call(method, url, body, operation, extra)
            .await
            .map_err(|e| unreachable(e, &target))?;
        if !answer.status.is_success() {
            return Err(refused(&answer, operation, target));
        }
        Ok(answer)
    }

    /// Sends one request and reads the answer. A mutation carries an `Idempotency-Key` on
    /// servers that honour it, and is sent again with the same key when its answer was lost
    /// (the server then replays the first outcome). Never after a 5xx: servers do not store
    /// those for replay, so a resend would run the request again.
    pub(super) async fn send_tracked<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: &str,
        body: Option<&B>,
        operation: &str,
        extra: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> Sent {
        let mutation = method != Method::GET && method != Method::HEAD;
        let key = if mutation {
            self.idempotency_key()
        } else {
            None
        };
        let resends = if key.is_some() { IDEMPOTENT_RESENDS } else { 0 };
        let mut attempt = 0;
        let mut busy = 0;
        let mut uncertain = false;
        loop {
            // Building the request may fetch an OAuth2 token: a failure there sent nothing.
            let request = match self.client.request(method.clone(), url).await {
                Ok(request) => request,
                Err(e) => {
                    return Sent {
                        answer: Err(e),
                        uncertain,
                        unsent: true,
                    };
                }
            };
            let mut request = extra(request);
            if let Some(body) = body {
                request = request.json(body);
            }
            if let Some(key) = &key {
                request = request.header("Idempotency-Key", key);
            }
            let answer = self.client.send(request, operation).await;
            let e = match &answer {
                Ok(a) => match busy_wait(&method, a, busy) {
                    Some(wait) => {
                        // A busy answer (the server ran nothing) or a read's transient
                        // failure: asked again later, with the same key.
                        busy += 1;
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    None => {
                        return Sent {
                            answer,
                            uncertain,
                            unsent: false,
                        };
                    }
                },
                Err(e) => e,
            };
            if attempt >= resends {
                return Sent {
                    answer,
                    uncertain,
                    unsent: false,
                };
            }
            // Unless it never connected, that send may have reached the server.
            if !matches!(e, CatalogError::Http { source, .. } if source.is_connect()) {
                uncertain = true;
            }
            attempt += 1;
            tokio::time::sleep(Duration::from_millis(100 << attempt)).await;
        }
    }

    /// The table of a load, create, register or commit answer, remembered as a base.
    pub(super) fn table_of(&self, answer: &Answer, operation: &str) -> Result<Table> {
        let body: LoadTableResponse = answer.json(operation)?;
        let metadata = TableMetadata::from_json(body.metadata.get())?;
        if let Some(location) = &body.metadata_location {
            self.remember(
                location,
                Arc::new(as_stored(&metadata, body.metadata.get())),
            );
        }
        if let Some(vended) = vended_properties(&body, &metadata.location) {
            self.vended_io_for(&metadata.location, vended)
                .map_err(|source| Error::Backend {
                    table: metadata.location.clone(),
                    source: Box::new(CatalogError::Io {
                        location: metadata.location.clone(),
                        source,
                    }),
                })?;
        }
        Ok(Table {
            metadata_location: body.metadata_location,
            metadata,
        })
    }

    /// Every page of a list endpoint.
    pub(super) async fn pages<T, F>(
        &self,
        url: &str,
        query: &[(&str, String)],
        operation: &str,
        target: Target<'_>,
        mut take: F,
    ) -> Result<()>
    where
        T: serde::de::DeserializeOwned,
        F: FnMut(T) -> Option<String>,
    {
        let mut token: Option<String> = None;
        loop {
            let mut q: Vec<(&str, String)> = query.to_vec();
            if let Some(t) = &token {
                q.push(("pageToken", t.clone()));
            }
            let answer = self
                .call::<()>(Method::GET, url, None, operation, |r| r.query(&q))
                .await
                .map_err(|e| unreachable(e, &target))?;
            if !answer.status.is_success() {
                return Err(refused(&answer, operation, target));
            }
            token = take(answer.json(operation)?).filter(|t| !t.is_empty());
            if token.is_none() {
                return Ok(());
            }
        }
    }

    pub(super) async fn load_namespace(
        &self,
        ns: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        let operation = format!("load namespace {ns}");
        let target = Target::Namespace(ns);
        let url = self.namespace_url(ns, "");
        let answer = self
            .call_ok::<()>(Method::GET, &url, None, &operation, target, |r| r)
            .await?;
        let body: GetNamespaceResponse = answer.json(&operation)?;
        Ok(body.properties.unwrap_or_default())
    }

    /// Whether `url` exists: `HEAD` where the server offers it, else `GET`.
    pub(super) async fn exists(
        &self,
        url: &str,
        head: &str,
        operation: &str,
        target: Target<'_>,
    ) -> Result<bool> {
        let method = if self.client.offers(head) {
            Method::HEAD
        } else {
            Method::GET
        };
        let answer = self
            .call::<()>(method, url, None, operation, |r| r)
            .await
            .map_err(|e| unreachable(e, &target))?;
        match answer.status {
            s if s.is_success() => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            _ => Err(refused(&answer, operation, target)),
        }
    }

    /// The base a commit on `ident` was planned on, at `location`: remembered from a load,
    /// else the table as the server has it now, which must still be at `location` (else the
    /// pointer moved: a conflict). Loaded through the server, not read from the file: a
    /// server that vends credentials may be the only way to read the table's storage.
    ///
    /// # Errors
    /// [`Error::CommitConflict`] when the table moved on; [`Error::Catalog`] for a base
    /// without a location (a load answer that left `metadata-location` out); the load's.
    pub(super) async fn base_metadata(
        &self,
        ident: &TableIdent,
        location: &str,
    ) -> Result<Arc<TableMetadata>> {
        if let Some(base) = self.base(location) {
            return Ok(base);
        }
        if location.is_empty() {
            return Err(Error::Catalog {
                table: ident.to_string(),
                reason: "the server did not say where the table's current metadata file is \
                         (`metadata-location`), so a commit cannot name what it replaces"
                    .into(),
            });
        }
        let table = <Self as iceberg_append::Catalog>::load_table(self, ident).await?;
        match table.metadata_location.as_deref() {
            // Loading remembered it as the server stores it.
            Some(now) if now == location => Ok(self
                .base(location)
                .unwrap_or_else(|| Arc::new(table.metadata))),
            now => Err(Error::CommitConflict {
                table: ident.to_string(),
                expected: Some(location.to_string()),
                found: now.map(str::to_string),
            }),
        }
    }
}

/// `metadata` (parsed from `json`) with the column and partition id counters as the server
/// stores them, for a commit's base: its `assert-last-assigned-*` requirements must match the
/// server's values, which loading raises where another writer left one below an id in use
/// (iceberg-go's `last-partition-id` 999 beside field 1000). Only a commit's requirements read
/// a base's counters; the metadata planned on keeps the raised ones.
pub(super) fn as_stored(metadata: &TableMetadata, json: &str) -> TableMetadata {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    struct Counters {
        last_column_id: Option<i32>,
        last_partition_id: Option<i32>,
    }
    let mut base = metadata.clone();
    if let Ok(stored) = serde_json::from_str::<Counters>(json) {
        if let Some(id) = stored.last_column_id {
            base.last_column_id = id;
        }
        if let Some(id) = stored.last_partition_id {
            base.last_partition_id = id;
        }
    }
    base
}

/// The table settings a load answer vends for the table at `location`: its `config`, then
/// the storage credential with the longest prefix of `location`; `None` when it vends none.
pub(super) fn vended_properties(
    body: &LoadTableResponse,
    location: &str,
) -> Option<BTreeMap<String, String>> {
    let mut vended = body.config.clone();
    if let Some(credential) = body
        .storage_credentials
        .iter()
        .filter(|c| location.starts_with(&c.prefix))
        .max_by_key(|c| c.prefix.len())
    {
        vended.extend(credential.config.clone());
    }
    (!vended.is_empty()).then_some(vended)
}

/// The `metadata-location` of an answer whose metadata may not parse.
pub(super) fn metadata_location_of(answer: &Answer) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Location {
        #[serde(rename = "metadata-location")]
        metadata_location: Option<String>,
    }
    serde_json::from_slice::<Location>(&answer.body)
        .ok()?
        .metadata_location
}

pub(super) fn identifier(t: &TableIdent) -> TableIdentifier {
    TableIdentifier {
        namespace: t.namespace.clone(),
        name: t.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn vended_settings_are_the_config_then_the_longest_matching_credential() {
        let body: LoadTableResponse = serde_json::from_str(
            r#"{"metadata": {}, "config": {"s3.endpoint": "http://e", "s3.access-key-id": "cfg"},
                "storage-credentials": [
                  {"prefix": "s3://b/", "config": {"s3.access-key-id": "bucket"}},
                  {"prefix": "s3://b/wh/db/", "config": {"s3.access-key-id": "db"}},
                  {"prefix": "s3://other/", "config": {"s3.access-key-id": "other"}}]}"#,
        )
        .unwrap();
        let got = vended_properties(&body, "s3://b/wh/db/t").unwrap();
        assert_eq!(got["s3.access-key-id"], "db");
        assert_eq!(got["s3.endpoint"], "http://e");
        let got = vended_properties(&body, "s3://b/elsewhere/t").unwrap();
        assert_eq!(got["s3.access-key-id"], "bucket");
        let none: LoadTableResponse = serde_json::from_str(r#"{"metadata": {}}"#).unwrap();
        assert!(vended_properties(&none, "s3://b/t").is_none());
    }

    /// A table whose stored counters are below ids in use (iceberg-go's) loads with them
    /// raised, but a commit's base keeps the stored ones: a spec change asserts the server's
    /// `last-partition-id`, or it would be refused on every attempt.
    #[test]
    fn a_commit_asserts_the_counters_the_server_stores() {
        use iceberg_spec::{FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema};
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::required(2, "n", PrimitiveType::Long),
            ],
        )
        .unwrap();
        let spec = PartitionSpec::builder(&schema)
            .add("id", iceberg_spec::Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let made = TableMetadata::new_table(
            FormatVersion::V2,
            uuid::Uuid::from_u128(7),
            "s3://b/t",
            schema,
            spec,
            iceberg_spec::SortOrder::unsorted(),
            BTreeMap::new(),
            1_700_000_000_000,
        )
        .unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&made.to_json().unwrap()).unwrap();
        json["last-partition-id"] = 999.into();
        json["last-column-id"] = 1.into();
        let json = json.to_string();
        let loaded = TableMetadata::from_json(&json).unwrap();
        assert_eq!((loaded.last_column_id, loaded.last_partition_id), (2, 1000));
        let base = as_stored(&loaded, &json);
        assert_eq!((base.last_column_id, base.last_partition_id), (1, 999));
        let mut new = loaded.clone();
        let wider = PartitionSpec::new(1, Vec::new(), new.current_schema().unwrap()).unwrap();
        new.partition_specs.push(wider);
        new.default_spec_id = 1;
        let change = super::super::updates::diff(&base, &new).unwrap();
        let requirements = serde_json::to_value(&change.requirements).unwrap();
        assert!(
            requirements
                .as_array()
                .unwrap()
                .contains(&serde_json::json!(
                    {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999}
                )),
            "{requirements}"
        );
    }

    /// Nulls Java's parsers take (`hasNonNull`, nullable map values) are empty, not errors.
    #[test]
    fn null_maps_and_lists_of_a_server_are_empty() {
        let body: LoadTableResponse = serde_json::from_str(
            r#"{"metadata": {}, "config": null, "storage-credentials": null}"#,
        )
        .unwrap();
        assert!(body.config.is_empty() && body.storage_credentials.is_empty());
        let config: super::super::types::CatalogConfig = serde_json::from_str(
            r#"{"defaults": null, "overrides": {"warehouse": "w", "prefix": null}}"#,
        )
        .unwrap();
        assert!(config.defaults.is_empty());
        assert_eq!(
            config.overrides,
            BTreeMap::from([("warehouse".to_string(), "w".to_string())])
        );
    }

    /// Java's retry rules: 429 for every method, 503 with `Retry-After` for every method, the
    /// other transient answers for reads only; `Retry-After` wins, capped; five retries.
    #[test]
    fn busy_answers_are_asked_again_as_java_asks() {
        let answer = |status: u16, retry_after_secs| Answer {
            status: StatusCode::from_u16(status).unwrap(),
            body: bytes::Bytes::new(),
            retry_after_secs,
        };
        let secs = Duration::from_secs;
        assert_eq!(
            busy_wait(&Method::POST, &answer(429, None), 0),
            Some(secs(1))
        );
        assert_eq!(
            busy_wait(&Method::POST, &answer(429, None), 2),
            Some(secs(4))
        );
        assert_eq!(
            busy_wait(&Method::POST, &answer(429, Some(3)), 0),
            Some(secs(3))
        );
        assert_eq!(
            busy_wait(&Method::POST, &answer(429, Some(900)), 0),
            Some(secs(64))
        );
        assert_eq!(busy_wait(&Method::POST, &answer(429, None), 5), None);
        // A commit answered 503 or 500 may have run: it stands (an unknown outcome).
        assert_eq!(busy_wait(&Method::POST, &answer(503, None), 0), None);
        assert_eq!(busy_wait(&Method::POST, &answer(500, None), 0), None);
        assert_eq!(
            busy_wait(&Method::POST, &answer(503, Some(2)), 0),
            Some(secs(2))
        );
        for status in [408, 500, 502, 503, 504] {
            assert!(
                busy_wait(&Method::GET, &answer(status, None), 0).is_some(),
                "{status}"
            );
        }
        for status in [200, 400, 404, 409] {
            assert_eq!(
                busy_wait(&Method::GET, &answer(status, None), 0),
                None,
                "{status}"
            );
        }
    }
}
