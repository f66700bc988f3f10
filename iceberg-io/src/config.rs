//! Iceberg IO properties (the names Java and PyIceberg use), parsed once into typed structs.
//!
//! Unknown keys are ignored: table and catalog properties carry much more than IO settings.
//! Bad values are [`Error::InvalidProperty`] naming the key. Secrets are redacted from `Debug`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::error::{Error, Result};

/// S3 endpoint URL, e.g. `http://localhost:9000`; an `http://` endpoint allows plain HTTP.
pub const S3_ENDPOINT: &str = "s3.endpoint";
/// S3 access key id.
pub const S3_ACCESS_KEY_ID: &str = "s3.access-key-id";
/// S3 secret access key.
pub const S3_SECRET_ACCESS_KEY: &str = "s3.secret-access-key";
/// S3 session token for temporary credentials.
pub const S3_SESSION_TOKEN: &str = "s3.session-token";
/// S3 region; takes precedence over [`CLIENT_REGION`].
pub const S3_REGION: &str = "s3.region";
/// Region for any client, used when [`S3_REGION`] is absent.
pub const CLIENT_REGION: &str = "client.region";
/// `true` for path-style requests (`endpoint/bucket/key`), `false` for virtual-hosted style.
pub const S3_PATH_STYLE_ACCESS: &str = "s3.path-style-access";
/// `true` to allow plain HTTP; defaults to whether [`S3_ENDPOINT`] starts with `http://`.
pub const S3_ALLOW_HTTP: &str = "s3.allow-http";
/// Part size of streaming (multipart) uploads, in bytes; applies to every store.
pub const S3_MULTIPART_PART_SIZE_BYTES: &str = "s3.multipart.part-size-bytes";
/// How many parts of one streaming upload may be in flight at once; applies to every store.
pub const S3_MULTIPART_NUM_THREADS: &str = "s3.multipart.num-threads";

/// GCP project id (accepted for compatibility; object_store does not need it).
pub const GCS_PROJECT_ID: &str = "gcs.project-id";
/// A GCS OAuth2 bearer token.
pub const GCS_OAUTH2_TOKEN: &str = "gcs.oauth2.token";
/// A GCS service account key, as JSON text.
pub const GCS_SERVICE_ACCOUNT_KEY: &str = "gcs.service-account-key";
/// Path to a GCS service account key file.
pub const GCS_SERVICE_ACCOUNT_PATH: &str = "gcs.service-account-path";
/// GCS endpoint, e.g. for an emulator.
pub const GCS_SERVICE_HOST: &str = "gcs.service.host";

/// Azure storage account name.
pub const ADLS_ACCOUNT_NAME: &str = "adls.account-name";
/// Azure storage account key.
pub const ADLS_ACCOUNT_KEY: &str = "adls.account-key";
/// Azure shared access signature (the query string, with or without a leading `?`).
pub const ADLS_SAS_TOKEN: &str = "adls.sas-token";
/// Prefix of one storage account's shared access signature: `adls.sas-token.<host>`, the
/// host as in `abfss://container@<host>/...` (how REST servers vend them, as Java reads
/// them).
pub const ADLS_SAS_TOKEN_PREFIX: &str = "adls.sas-token.";
/// Azure AD tenant id for client-secret authentication.
pub const ADLS_TENANT_ID: &str = "adls.tenant-id";
/// Azure AD client id for client-secret authentication.
pub const ADLS_CLIENT_ID: &str = "adls.client-id";
/// Azure AD client secret for client-secret authentication.
pub const ADLS_CLIENT_SECRET: &str = "adls.client-secret";

/// Default part size of streaming uploads.
pub const DEFAULT_PART_SIZE_BYTES: usize = 8 * 1024 * 1024;
/// Smallest part size S3 accepts (except for the last part).
pub const MIN_PART_SIZE_BYTES: usize = 5 * 1024 * 1024;
/// Largest part size S3 accepts.
pub const MAX_PART_SIZE_BYTES: usize = 5 * 1024 * 1024 * 1024;
/// Default number of parts of one upload in flight at once.
pub const DEFAULT_MAX_CONCURRENT_PARTS: usize = 4;

/// All IO settings, parsed from Iceberg properties.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileIoConfig {
    /// S3 settings.
    pub s3: S3Config,
    /// Google Cloud Storage settings.
    pub gcs: GcsConfig,
    /// Azure settings.
    pub azure: AzureConfig,
    /// Streaming-write settings.
    pub write: WriteConfig,
}

impl FileIoConfig {
    /// Parses the IO properties out of `properties`, ignoring unrelated keys.
    ///
    /// # Errors
    /// [`Error::InvalidProperty`] for a value that cannot be parsed or is out of range.
    pub fn from_properties(properties: &HashMap<String, String>) -> Result<Self> {
        let p = Props(properties);
        Ok(Self {
            s3: S3Config {
                endpoint: p.string(S3_ENDPOINT),
                access_key_id: p.string(S3_ACCESS_KEY_ID),
                secret_access_key: p.string(S3_SECRET_ACCESS_KEY),
                session_token: p.string(S3_SESSION_TOKEN),
                region: p.string(S3_REGION).or_else(|| p.string(CLIENT_REGION)),
                path_style_access: p.bool(S3_PATH_STYLE_ACCESS)?,
                allow_http: p.bool(S3_ALLOW_HTTP)?,
            },
            gcs: GcsConfig {
                project_id: p.string(GCS_PROJECT_ID),
                oauth2_token: p.string(GCS_OAUTH2_TOKEN),
                service_account_key: p.string(GCS_SERVICE_ACCOUNT_KEY),
                service_account_path: p.string(GCS_SERVICE_ACCOUNT_PATH),
                service_host: p.string(GCS_SERVICE_HOST),
            },
            azure: AzureConfig {
                account_name: p.string(ADLS_ACCOUNT_NAME),
                account_key: p.string(ADLS_ACCOUNT_KEY),
                sas_token: p.string(ADLS_SAS_TOKEN),
                sas_tokens: properties
                    .iter()
                    .filter_map(|(k, v)| {
                        let host = k.strip_prefix(ADLS_SAS_TOKEN_PREFIX)?;
                        (!host.is_empty()).then(|| (host.to_string(), v.clone()))
                    })
                    .collect(),
                tenant_id: p.string(ADLS_TENANT_ID),
                client_id: p.string(ADLS_CLIENT_ID),
                client_secret: p.string(ADLS_CLIENT_SECRET),
            },
            write: WriteConfig {
                part_size_bytes: p
                    .usize_in(
                        S3_MULTIPART_PART_SIZE_BYTES,
                        MIN_PART_SIZE_BYTES..=MAX_PART_SIZE_BYTES,
                    )?
                    .unwrap_or(DEFAULT_PART_SIZE_BYTES),
                max_concurrent_parts: p
                    .usize_in(S3_MULTIPART_NUM_THREADS, 1..=1024)?
                    .unwrap_or(DEFAULT_MAX_CONCURRENT_PARTS),
            },
        })
    }
}

/// S3 settings; `None` leaves the object_store default (or the `AWS_*` environment) in place.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3Config {
    /// [`S3_ENDPOINT`].
    pub endpoint: Option<String>,
    /// [`S3_ACCESS_KEY_ID`].
    pub access_key_id: Option<String>,
    /// [`S3_SECRET_ACCESS_KEY`].
    pub secret_access_key: Option<String>,
    /// [`S3_SESSION_TOKEN`].
    pub session_token: Option<String>,
    /// [`S3_REGION`], else [`CLIENT_REGION`].
    pub region: Option<String>,
    /// [`S3_PATH_STYLE_ACCESS`].
    pub path_style_access: Option<bool>,
    /// [`S3_ALLOW_HTTP`].
    pub allow_http: Option<bool>,
}

impl S3Config {
    /// Whether plain HTTP is allowed: as configured, else whether the endpoint is `http://`.
    pub fn allows_http(&self) -> bool {
        self.allow_http.unwrap_or_else(|| {
            self.endpoint
                .as_deref()
                .is_some_and(|e| e.to_ascii_lowercase().starts_with("http://"))
        })
    }
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &redact(&self.secret_access_key))
            .field("session_token", &redact(&self.session_token))
            .field("region", &self.region)
            .field("path_style_access", &self.path_style_access)
            .field("allow_http", &self.allow_http)
            .finish()
    }
}

/// Google Cloud Storage settings.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcsConfig {
    /// [`GCS_PROJECT_ID`].
    pub project_id: Option<String>,
    /// [`GCS_OAUTH2_TOKEN`].
    pub oauth2_token: Option<String>,
    /// [`GCS_SERVICE_ACCOUNT_KEY`].
    pub service_account_key: Option<String>,
    /// [`GCS_SERVICE_ACCOUNT_PATH`].
    pub service_account_path: Option<String>,
    /// [`GCS_SERVICE_HOST`].
    pub service_host: Option<String>,
}

impl fmt::Debug for GcsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcsConfig")
            .field("project_id", &self.project_id)
            .field("oauth2_token", &redact(&self.oauth2_token))
            .field("service_account_key", &redact(&self.service_account_key))
            .field("service_account_path", &self.service_account_path)
            .field("service_host", &self.service_host)
            .finish()
    }
}

/// Azure Blob Storage / ADLS Gen2 settings.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AzureConfig {
    /// [`ADLS_ACCOUNT_NAME`].
    pub account_name: Option<String>,
    /// [`ADLS_ACCOUNT_KEY`].
    pub account_key: Option<String>,
    /// [`ADLS_SAS_TOKEN`].
    pub sas_token: Option<String>,
    /// Shared access signatures by storage account host ([`ADLS_SAS_TOKEN_PREFIX`]).
    pub sas_tokens: BTreeMap<String, String>,
    /// [`ADLS_TENANT_ID`].
    pub tenant_id: Option<String>,
    /// [`ADLS_CLIENT_ID`].
    pub client_id: Option<String>,
    /// [`ADLS_CLIENT_SECRET`].
    pub client_secret: Option<String>,
}

impl AzureConfig {
    /// The shared access signature for the container `bucket` (`container@host` as in
    /// `abfss://`, or `container`): the account's own ([`ADLS_SAS_TOKEN_PREFIX`], by host or
    /// by account name), else [`ADLS_SAS_TOKEN`].
    pub fn sas_token_for(&self, bucket: &str) -> Option<&str> {
        let host = bucket.split_once('@').map(|(_, host)| host);
        let account = host
            .and_then(|h| h.split('.').next())
            .or(self.account_name.as_deref());
        host.and_then(|h| self.sas_tokens.get(h))
            .or_else(|| account.and_then(|a| self.sas_tokens.get(a)))
            .or_else(|| {
                // `az://container` names no host: the account's token by its name.
                account.and_then(|a| {
                    self.sas_tokens
                        .iter()
                        .find(|(h, _)| h.split('.').next() == Some(a))
                        .map(|(_, v)| v)
                })
            })
            .or(self.sas_token.as_ref())
            .map(String::as_str)
    }
}

impl fmt::Debug for AzureConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureConfig")
            .field("account_name", &self.account_name)
            .field("account_key", &redact(&self.account_key))
            .field("sas_token", &redact(&self.sas_token))
            .field("sas_tokens", &self.sas_tokens.keys().collect::<Vec<_>>())
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("client_secret", &redact(&self.client_secret))
            .finish()
    }
}

/// How [`FileWriter`](crate::FileWriter) uploads: part size and parallelism.
///
/// A writer holds at most about `part_size_bytes * (max_concurrent_parts + 1)` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteConfig {
    /// Bytes buffered before a multipart upload starts, and the size of each part.
    pub part_size_bytes: usize,
    /// Parts uploaded in parallel before `write` waits.
    pub max_concurrent_parts: usize,
}

impl Default for WriteConfig {
    fn default() -> Self {
        Self {
            part_size_bytes: DEFAULT_PART_SIZE_BYTES,
            max_concurrent_parts: DEFAULT_MAX_CONCURRENT_PARTS,
        }
    }
}

impl WriteConfig {
    /// Sets [`WriteConfig::part_size_bytes`] (at least 1; S3 needs at least
    /// [`MIN_PART_SIZE_BYTES`] for all but the last part).
    pub fn with_part_size_bytes(mut self, part_size_bytes: usize) -> Self {
        self.part_size_bytes = part_size_bytes.max(1);
        self
    }

    /// Sets [`WriteConfig::max_concurrent_parts`] (at least 1).
    pub fn with_max_concurrent_parts(mut self, max_concurrent_parts: usize) -> Self {
        self.max_concurrent_parts = max_concurrent_parts.max(1);
        self
    }
}

fn redact(secret: &Option<String>) -> Option<&'static str> {
    secret.as_ref().map(|_| "<redacted>")
}

/// Typed lookups in a property map.
struct Props<'a>(&'a HashMap<String, String>);

impl Props<'_> {
    fn string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }

    fn bool(&self, key: &str) -> Result<Option<bool>> {
        let Some(value) = self.0.get(key) else {
            return Ok(None);
        };
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            _ => Err(invalid(key, value, "expected `true` or `false`")),
        }
    }

    fn usize_in(&self, key: &str, range: std::ops::RangeInclusive<usize>) -> Result<Option<usize>> {
        let Some(value) = self.0.get(key) else {
            return Ok(None);
        };
        let n: usize = value
            .trim()
            .parse()
            .map_err(|_| invalid(key, value, "expected a non-negative integer"))?;
        if !range.contains(&n) {
            let reason = format!("must be between {} and {}", range.start(), range.end());
            return Err(invalid(key, value, &reason));
        }
        Ok(Some(n))
    }
}

fn invalid(key: &str, value: &str, reason: &str) -> Error {
    Error::InvalidProperty {
        key: key.to_owned(),
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// Vended per-account SAS tokens (`adls.sas-token.<host>`, as Polaris and Lakekeeper
    /// send them) are used for that account's containers; the plain key for the rest.
    #[test]
    fn sas_tokens_per_account_win_for_their_account() {
        let config = FileIoConfig::from_properties(&props(&[
            ("adls.sas-token.acct.dfs.core.windows.net", "sv=acct"),
            (
                "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
                "1",
            ),
            (ADLS_SAS_TOKEN, "sv=any"),
        ]))
        .unwrap();
        let azure = &config.azure;
        assert_eq!(azure.sas_tokens.len(), 1, "{azure:?}");
        assert_eq!(
            azure.sas_token_for("c@acct.dfs.core.windows.net"),
            Some("sv=acct")
        );
        assert_eq!(
            azure.sas_token_for("c@other.dfs.core.windows.net"),
            Some("sv=any")
        );
        let named = AzureConfig {
            account_name: Some("acct".into()),
            ..azure.clone()
        };
        assert_eq!(named.sas_token_for("c"), Some("sv=acct"));
        assert!(
            !format!("{azure:?}").contains("sv="),
            "secrets stay out of Debug"
        );
    }

    #[test]
    fn empty_properties_give_defaults() {
        let config = FileIoConfig::from_properties(&HashMap::new()).unwrap();
        assert_eq!(config, FileIoConfig::default());
        assert_eq!(config.write.part_size_bytes, DEFAULT_PART_SIZE_BYTES);
        assert!(!config.s3.allows_http());
    }

    #[test]
    fn parses_s3_properties_and_ignores_unrelated_keys() {
        let config = FileIoConfig::from_properties(&props(&[
            (S3_ENDPOINT, "http://127.0.0.1:9000"),
            (S3_ACCESS_KEY_ID, "ak"),
            (S3_SECRET_ACCESS_KEY, "sk"),
            (S3_PATH_STYLE_ACCESS, "TRUE"),
            (CLIENT_REGION, "eu-west-1"),
            (S3_MULTIPART_PART_SIZE_BYTES, "5242880"),
            ("write.format.default", "parquet"),
        ]))
        .unwrap();
        assert_eq!(config.s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(config.s3.region.as_deref(), Some("eu-west-1"));
        assert_eq!(config.s3.path_style_access, Some(true));
        assert!(config.s3.allows_http(), "http endpoint allows http");
        assert_eq!(config.write.part_size_bytes, 5 * 1024 * 1024);
    }

    #[test]
    fn s3_region_wins_over_client_region_and_allow_http_can_be_forced_off() {
        let config = FileIoConfig::from_properties(&props(&[
            (S3_REGION, "us-east-1"),
            (CLIENT_REGION, "eu-west-1"),
            (S3_ENDPOINT, "http://x"),
            (S3_ALLOW_HTTP, "false"),
        ]))
        .unwrap();
        assert_eq!(config.s3.region.as_deref(), Some("us-east-1"));
        assert!(!config.s3.allows_http());
    }

    #[test]
    fn bad_values_name_the_property() {
        for (key, value) in [
            (S3_PATH_STYLE_ACCESS, "maybe"),
            (S3_ALLOW_HTTP, "1"),
            (S3_MULTIPART_PART_SIZE_BYTES, "-5"),
            (S3_MULTIPART_PART_SIZE_BYTES, "1024"),
            (S3_MULTIPART_NUM_THREADS, "0"),
        ] {
            let err = FileIoConfig::from_properties(&props(&[(key, value)])).unwrap_err();
            match &err {
                Error::InvalidProperty {
                    key: k, value: v, ..
                } => {
                    assert_eq!((k.as_str(), v.as_str()), (key, value));
                }
                other => panic!("expected InvalidProperty, got {other:?}"),
            }
            assert!(err.to_string().contains(key), "{err}");
        }
    }

    #[test]
    fn debug_redacts_secrets() {
        let config = FileIoConfig::from_properties(&props(&[
            (S3_SECRET_ACCESS_KEY, "very-secret"),
            (S3_SESSION_TOKEN, "tok-secret"),
            (GCS_OAUTH2_TOKEN, "gcs-secret"),
            (ADLS_ACCOUNT_KEY, "adls-secret"),
        ]))
        .unwrap();
        let debug = format!("{config:?}");
        for secret in ["very-secret", "tok-secret", "gcs-secret", "adls-secret"] {
            assert!(!debug.contains(secret), "{debug}");
        }
        assert!(debug.contains("<redacted>"));
    }
}
