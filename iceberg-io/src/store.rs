//! Building the object store for one scheme family and bucket from the typed config.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;

use crate::config::FileIoConfig;
use crate::error::{Error, Result};
use crate::location::{Family, Location};

/// Builds the store serving `location`; `raw` is the location as the caller wrote it.
///
/// # Errors
/// [`Error::UnsupportedScheme`] for a scheme without a (compiled-in) backend;
/// [`Error::Store`] if the object_store builder rejects the configuration.
pub(crate) fn build(
    raw: &str,
    location: &Location,
    config: &FileIoConfig,
) -> Result<Arc<dyn ObjectStore>> {
    match &location.store.family {
        Family::File => Ok(Arc::new(LocalFileSystem::new())),
        Family::Memory => Ok(Arc::new(InMemory::new())),
        Family::S3 => s3(raw, location, config),
        Family::Gcs => gcs(raw, location, config),
        Family::Azure => azure(raw, location, config),
        Family::Other(_) => Err(unsupported(raw, location)),
    }
}

fn unsupported(raw: &str, location: &Location) -> Error {
    Error::UnsupportedScheme {
        scheme: location.scheme.clone(),
        location: raw.to_owned(),
    }
}

#[cfg(feature = "s3")]
fn s3(raw: &str, location: &Location, config: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, S3ConditionalPut};

    let c = &config.s3;
    // Environment credentials first; explicit properties override them.
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(&location.store.bucket)
        // `PutMode::Create` sends `If-None-Match: *`.
        .with_conditional_put(S3ConditionalPut::ETagMatch);
    if let Some(endpoint) = &c.endpoint {
        // `AWS_ENDPOINT_URL_S3` would otherwise take precedence over `with_endpoint`.
        builder = builder
            .with_endpoint(endpoint)
            .with_config(AmazonS3ConfigKey::S3Endpoint, endpoint);
    }
    if let Some(key) = &c.access_key_id {
        builder = builder.with_access_key_id(key);
    }
    if let Some(secret) = &c.secret_access_key {
        builder = builder.with_secret_access_key(secret);
    }
    if let Some(token) = &c.session_token {
        builder = builder.with_token(token);
    }
    if let Some(region) = &c.region {
        builder = builder.with_region(region);
    }
    if let Some(path_style) = c.path_style_access {
        builder = builder.with_virtual_hosted_style_request(!path_style);
    }
    if c.allow_http.is_some() || c.endpoint.is_some() {
        builder = builder.with_allow_http(c.allows_http());
    }
    let store = builder.build().map_err(|e| Error::from_store(raw, e))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "s3"))]
fn s3(raw: &str, location: &Location, _: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    Err(unsupported(raw, location))
}

#[cfg(feature = "gcs")]
fn gcs(raw: &str, location: &Location, config: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    use object_store::gcp::GoogleCloudStorageBuilder;

    let c = &config.gcs;
    let mut builder =
        GoogleCloudStorageBuilder::from_env().with_bucket_name(&location.store.bucket);
    if let Some(token) = &c.oauth2_token {
        // A fixed token (`gcs.oauth2.token`); object_store 0.13 takes it as a static
        // credential provider.
        let credential = object_store::gcp::GcpCredential {
            bearer: token.clone(),
        };
        builder = builder.with_credentials(Arc::new(object_store::StaticCredentialProvider::new(
            credential,
        )));
    }
    if let Some(key) = &c.service_account_key {
        builder = builder.with_service_account_key(key);
    }
    if let Some(path) = &c.service_account_path {
        builder = builder.with_service_account_path(path);
    }
    if let Some(host) = &c.service_host {
        builder = builder.with_base_url(host);
    }
    let store = builder.build().map_err(|e| Error::from_store(raw, e))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "gcs"))]
fn gcs(raw: &str, location: &Location, _: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    Err(unsupported(raw, location))
}

#[cfg(feature = "azure")]
fn azure(raw: &str, location: &Location, config: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};

    let c = &config.azure;
    // `with_url` understands both `az://container` and `abfss://container@account.dfs...`.
    let mut builder = MicrosoftAzureBuilder::from_env().with_url(location.store_url());
    if let Some(account) = &c.account_name {
        builder = builder.with_account(account);
    }
    if let Some(key) = &c.account_key {
        builder = builder.with_access_key(key);
    }
    if let Some(sas) = c.sas_token_for(&location.store.bucket) {
        builder = builder.with_config(AzureConfigKey::SasKey, sas.trim_start_matches('?'));
    }
    if let Some(tenant) = &c.tenant_id {
        builder = builder.with_tenant_id(tenant);
    }
    if let Some(client) = &c.client_id {
        builder = builder.with_client_id(client);
    }
    if let Some(secret) = &c.client_secret {
        builder = builder.with_client_secret(secret);
    }
    let store = builder.build().map_err(|e| Error::from_store(raw, e))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "azure"))]
fn azure(raw: &str, location: &Location, _: &FileIoConfig) -> Result<Arc<dyn ObjectStore>> {
    Err(unsupported(raw, location))
}
