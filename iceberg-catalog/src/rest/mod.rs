//! [`RestCatalog`]: tables behind an Iceberg REST catalog server (Polaris, Unity, Glue and S3
//! Tables' REST endpoints, Lakekeeper, Nessie, Gravitino, rustberg, ...), over the protocol of
//! `open-api/rest-catalog-open-api.yaml` in apache/iceberg.
//!
//! The server owns the pointer and writes the metadata files: a commit sends the
//! [`updates::diff`] of the planned metadata against its base, as requirements the server
//! checks and updates it applies, and the server's answer is the new base. Failures follow the
//! spec: 409 is a conflict (the append's retry loop reloads and plans again), 500, 502, 503,
//! 504 (any 5xx) and a lost answer are an unknown outcome (nothing is deleted; the loop
//! reloads and looks for its snapshot id), other 4xx are typed errors carrying the server's
//! `error.type` and `message` ([`crate::Error::RestResponse`]). Redirects are not followed: a
//! redirected POST would come back as a GET whose 200 reads as a landed commit.
//!
//! Module map: `client` (HTTP, endpoints, errors), `auth` (token, OAuth2 client
//! credentials), `types` (request and response bodies), [`updates`] (metadata diff to
//! requirements and updates), `calls` (one request, its resends and its errors), `catalog`
//! (the [`Catalog`](iceberg_append::Catalog) implementation).

mod auth;
mod calls;
mod catalog;
mod client;
mod types;
pub mod updates;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use iceberg_append::env::{Environment, SystemEnvironment};
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;
use reqwest::Method;

use crate::error::{Error, Result};
use auth::Auth;
use client::Client;
use types::CatalogConfig;

/// Catalog property: the warehouse to ask the server's config for (`GET /v1/config?warehouse=`).
pub const WAREHOUSE: &str = "warehouse";
/// Catalog property: a bearer token sent with every request.
pub const TOKEN: &str = "token";
/// Catalog property: OAuth2 client credentials, `client_id:client_secret` (or a secret alone).
pub const CREDENTIAL: &str = "credential";
/// Catalog property: the OAuth2 scope of the client-credentials grant (default `catalog`).
pub const SCOPE: &str = "scope";
/// Catalog property: the OAuth2 token endpoint (default `{uri}/v1/oauth/tokens`).
pub const OAUTH2_SERVER_URI: &str = "oauth2-server-uri";
/// Catalog property: the whole-request timeout in milliseconds (default 120,000); a commit
/// that times out has an unknown outcome.
pub const REQUEST_TIMEOUT_MS: &str = "rest.client.request-timeout-ms";
/// Prefix of catalog properties sent as HTTP headers (`header.X-Custom: v`).
pub const HEADER_PREFIX: &str = "header.";

/// Default whole-request timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How to reach a REST catalog: its URI and the client's catalog properties.
#[derive(Debug, Clone)]
pub struct RestCatalogConfig {
    /// The server's base URI (`https://host/api/catalog`), below which `/v1/...` lies.
    pub uri: String,
    /// Client properties: [`WAREHOUSE`], [`TOKEN`], [`CREDENTIAL`], [`SCOPE`],
    /// [`OAUTH2_SERVER_URI`], [`REQUEST_TIMEOUT_MS`], `header.*`, and the file IO's own
    /// (`s3.endpoint`, ...). The server's defaults are applied below them, its overrides above.
    pub properties: BTreeMap<String, String>,
}

impl RestCatalogConfig {
    /// A config for the server at `uri` with no properties.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            properties: BTreeMap::new(),
        }
    }

    /// The config with `key` set to `value`.
    pub fn with_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }
}

/// A [`Catalog`](iceberg_append::Catalog) whose tables a REST catalog server keeps.
pub struct RestCatalog {
    uri: String,
    client: Client,
    io: FileIo,
    properties: BTreeMap<String, String>,
    /// Whether the server honours `Idempotency-Key` (its config names a key lifetime).
    idempotent: bool,
    env: Arc<dyn Environment>,
    /// Metadata this client loaded or committed, by metadata location: the base a commit's
    /// updates are computed against. A miss reads the metadata file itself.
    bases: Mutex<HashMap<String, Arc<TableMetadata>>>,
    /// IO built from the settings the server vended, with those settings, by table location.
    vended: Mutex<HashMap<String, VendedIo>>,
}

impl std::fmt::Debug for RestCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Properties are left out: they hold tokens and credentials.
        write!(f, "RestCatalog({})", self.uri)
    }
}

/// The properties the HTTP client is built from.
fn client_settings(props: &BTreeMap<String, String>) -> Vec<(&String, &String)> {
    const KEYS: [&str; 5] = [
        TOKEN,
        CREDENTIAL,
        SCOPE,
        OAUTH2_SERVER_URI,
        REQUEST_TIMEOUT_MS,
    ];
    props
        .iter()
        .filter(|(k, _)| KEYS.contains(&k.as_str()) || k.starts_with(HEADER_PREFIX))
        .collect()
}

/// The settings a server vended for a table, and the IO built from them.
type VendedIo = (BTreeMap<String, String>, FileIo);

/// Bases kept before the map is cleared (a miss only costs one metadata read).
const MAX_BASES: usize = 64;

impl RestCatalog {
    /// Connects to the server: fetches its config (`GET /v1/config`) and merges it with the
    /// client's properties as the spec says (defaults, then the client's, then overrides).
    ///
    /// # Errors
    /// An unreachable server, a refused config request (a bad credential, an unknown
    /// warehouse), or invalid properties.
    pub async fn connect(config: RestCatalogConfig) -> Result<Self> {
        Self::connect_with_env(config, Arc::new(SystemEnvironment)).await
    }

    /// As [`RestCatalog::connect`], with the clock and UUIDs (idempotency keys) of `env`.
    ///
    /// # Errors
    /// As [`RestCatalog::connect`].
    pub async fn connect_with_env(
        config: RestCatalogConfig,
        env: Arc<dyn Environment>,
    ) -> Result<Self> {
        let uri = config.uri.trim_end_matches('/').to_string();
        let props = &config.properties;
        let mut client = Self::client(&uri, props)?;
        let mut url = client.root_url("config");
        if let Some(warehouse) = props.get(WAREHOUSE) {
            url = format!("{url}?warehouse={}", client::encode_segment(warehouse));
        }
        let operation = "GET /v1/config";
        let answer = client
            .send(client.request(Method::GET, &url).await?, operation)
            .await?;
        if !answer.status.is_success() {
            return Err(answer.refusal(operation));
        }
        let server: CatalogConfig = answer.json(operation)?;
        // A server may move the client elsewhere (Nessie answers a branch URL's config with
        // the catalog's own `uri` and the branch as `prefix`), as Java's client follows.
        let moved = server
            .overrides
            .get("uri")
            .map(|u| u.trim_end_matches('/').to_string())
            .filter(|u| !u.is_empty() && *u != uri);
        let mut properties = server.defaults;
        properties.extend(props.iter().map(|(k, v)| (k.clone(), v.clone())));
        properties.extend(server.overrides);
        let uri = moved.clone().unwrap_or(uri);
        // The merged properties may name another server, token, headers or timeout: rebuild
        // (and only then, so that a fetched OAuth2 token is not fetched again).
        if moved.is_some() || client_settings(&properties) != client_settings(&config.properties) {
            client = Self::client(&uri, &properties)?;
        }
        client.configure(
            properties.get("prefix").map(String::as_str),
            server.endpoints,
        );
        let io_props: HashMap<String, String> = properties
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let io = FileIo::from_properties(&io_props).map_err(|source| Error::Io {
            location: uri.clone(),
            source,
        })?;
        Ok(Self {
            uri,
            client,
            io,
            properties,
            idempotent: server.idempotency_key_lifetime.is_some(),
            env,
            bases: Mutex::new(HashMap::new()),
            vended: Mutex::new(HashMap::new()),
        })
    }

    fn client(uri: &str, props: &BTreeMap<String, String>) -> Result<Client> {
        let get = |k: &str| props.get(k).map(String::as_str);
        let auth = Auth::from_properties(
            uri,
            get(TOKEN),
            get(CREDENTIAL),
            get(SCOPE),
            get(OAUTH2_SERVER_URI),
        )?;
        let timeout = match get(REQUEST_TIMEOUT_MS) {
            None => DEFAULT_TIMEOUT,
            Some(ms) => Duration::from_millis(ms.parse().map_err(|_| Error::InvalidUri {
                uri: uri.to_string(),
                reason: format!("property {REQUEST_TIMEOUT_MS}: `{ms}` is not a number"),
            })?),
        };
        let headers = client::headers(uri, props.iter())?;
        Client::new(uri, headers, timeout, auth)
    }

    /// The server's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The merged catalog properties (secrets included: do not log them).
    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    /// Whether the server honours `Idempotency-Key`, so retried mutations carry one.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    fn remember(&self, location: &str, metadata: Arc<TableMetadata>) {
        let mut bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        if bases.len() >= MAX_BASES {
            bases.clear();
        }
        bases.insert(location.to_string(), metadata);
    }

    /// The IO for the settings `vended` for the table at `table_location`: the one built
    /// before when the settings are the same (so its stores and connections are kept), else
    /// one built from the catalog's properties with `vended` over them.
    fn vended_io_for(
        &self,
        table_location: &str,
        vended: BTreeMap<String, String>,
    ) -> Result<FileIo, iceberg_io::Error> {
        let mut known = self.vended.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((settings, io)) = known.get(table_location)
            && *settings == vended
        {
            return Ok(io.clone());
        }
        let mut properties: HashMap<String, String> = self
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        properties.extend(vended.iter().map(|(k, v)| (k.clone(), v.clone())));
        let io = FileIo::from_properties(&properties)?;
        if known.len() >= MAX_BASES {
            known.clear();
        }
        known.insert(table_location.to_string(), (vended, io.clone()));
        Ok(io)
    }

    /// The IO of the settings vended for the table at `table_location`, if any.
    fn vended_io(&self, table_location: &str) -> Option<FileIo> {
        let known = self.vended.lock().unwrap_or_else(PoisonError::into_inner);
        known.get(table_location).map(|(_, io)| io.clone())
    }

    fn base(&self, location: &str) -> Option<Arc<TableMetadata>> {
        let bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        bases.get(location).cloned()
    }
}
