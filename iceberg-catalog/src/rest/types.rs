//! The REST catalog's request and response bodies (`open-api/rest-catalog-open-api.yaml` in
//! apache/iceberg), as far as this client sends or reads them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON null as the type's default: servers generated from some models write `null` for
/// an empty map or list, which Java's parsers take (`hasNonNull`).
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A string map that may be null or hold null values (left out), as Java's
/// `getStringMapNullableValues` reads it.
fn string_map<'de, D>(d: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let map: Option<BTreeMap<String, Option<String>>> = Option::deserialize(d)?;
    Ok(map
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect())
}

/// `GET /v1/config`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct CatalogConfig {
    #[serde(default, deserialize_with = "string_map")]
    pub(crate) defaults: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "string_map")]
    pub(crate) overrides: BTreeMap<String, String>,
    /// `None`: the server did not say, so the spec's default set applies.
    #[serde(default)]
    pub(crate) endpoints: Option<Vec<String>>,
    /// Present only when the server honours `Idempotency-Key`.
    #[serde(default)]
    pub(crate) idempotency_key_lifetime: Option<String>,
}

/// The `error` member of every failed response.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorResponse {
    pub(crate) error: ErrorModel,
}

/// A server's description of what failed.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorModel {
    #[serde(default)]
    pub(crate) message: String,
    #[serde(default, rename = "type")]
    pub(crate) kind: String,
}

/// A table's name on the wire.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TableIdentifier {
    pub(crate) namespace: Vec<String>,
    pub(crate) name: String,
}

/// `GET .../namespaces`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct ListNamespacesResponse {
    #[serde(default)]
    pub(crate) namespaces: Vec<Vec<String>>,
    #[serde(default)]
    pub(crate) next_page_token: Option<String>,
}

/// `GET .../namespaces/{namespace}/tables`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct ListTablesResponse {
    #[serde(default)]
    pub(crate) identifiers: Vec<TableIdentifier>,
    #[serde(default)]
    pub(crate) next_page_token: Option<String>,
}

/// `POST .../namespaces`.
#[derive(Debug, Serialize)]
pub(crate) struct CreateNamespaceRequest<'a> {
    pub(crate) namespace: &'a [String],
    pub(crate) properties: &'a BTreeMap<String, String>,
}

/// `GET .../namespaces/{namespace}`.
#[derive(Debug, Deserialize)]
pub(crate) struct GetNamespaceResponse {
    #[serde(default)]
    pub(crate) properties: Option<BTreeMap<String, String>>,
}

/// `POST .../namespaces/{namespace}/properties`.
#[derive(Debug, Serialize)]
pub(crate) struct UpdateNamespacePropertiesRequest<'a> {
    pub(crate) removals: &'a [String],
    pub(crate) updates: &'a BTreeMap<String, String>,
}

/// `POST .../namespaces/{namespace}/tables`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct CreateTableRequest<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) location: Option<&'a str>,
    pub(crate) schema: Value,
    pub(crate) partition_spec: &'a iceberg_spec::PartitionSpec,
    pub(crate) write_order: &'a iceberg_spec::SortOrder,
    pub(crate) stage_create: bool,
    pub(crate) properties: BTreeMap<String, String>,
}

/// `POST .../namespaces/{namespace}/register`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct RegisterTableRequest<'a> {
    pub(crate) name: &'a str,
    pub(crate) metadata_location: &'a str,
}

/// `POST .../tables/rename`.
#[derive(Debug, Serialize)]
pub(crate) struct RenameTableRequest {
    pub(crate) source: TableIdentifier,
    pub(crate) destination: TableIdentifier,
}

/// A loaded, created or committed table: `LoadTableResult` and `CommitTableResponse`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct LoadTableResponse {
    /// Absent only for a staged create.
    #[serde(default)]
    pub(crate) metadata_location: Option<String>,
    /// Kept as text: [`iceberg_spec::TableMetadata::from_json`] parses and validates it.
    pub(crate) metadata: Box<RawValue>,
    /// Table-specific client settings (vended `s3.access-key-id`, `s3.session-token`, ...).
    #[serde(default, deserialize_with = "string_map")]
    pub(crate) config: BTreeMap<String, String>,
    /// Vended credentials by storage prefix; the longest prefix of a path applies.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) storage_credentials: Vec<StorageCredential>,
}

/// One vended credential: settings for the paths below `prefix`.
#[derive(Debug, Deserialize)]
pub(crate) struct StorageCredential {
    pub(crate) prefix: String,
    #[serde(default, deserialize_with = "string_map")]
    pub(crate) config: BTreeMap<String, String>,
}

/// `POST .../namespaces/{namespace}/tables/{table}`.
#[derive(Debug, Serialize)]
pub(crate) struct CommitTableRequest<'a> {
    pub(crate) identifier: TableIdentifier,
    pub(crate) requirements: &'a [super::updates::Requirement],
    pub(crate) updates: &'a [super::updates::Update],
}

/// `POST {oauth2-server-uri}` with the client-credentials grant.
#[derive(Debug, Deserialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    #[serde(default)]
    pub(crate) expires_in: Option<u64>,
}
