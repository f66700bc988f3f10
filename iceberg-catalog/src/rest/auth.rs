//! Authentication of REST requests: a static bearer `token`, or an OAuth2 client-credentials
//! `credential` exchanged for a token that is fetched again before it expires.

use std::time::{Duration, Instant};

use reqwest::header::HeaderValue;
use tokio::sync::Mutex;

use super::client::Client;
use crate::error::{Error, Result};

/// How requests are authenticated.
#[derive(Debug)]
pub(crate) enum Auth {
    /// No `Authorization` header.
    None,
    /// `Authorization: Bearer <token>`.
    Token(HeaderValue),
    /// OAuth2 client credentials, with the current token cached.
    ClientCredentials(Box<ClientCredentials>),
}

/// An OAuth2 client-credentials grant and its current token.
#[derive(Debug)]
pub(crate) struct ClientCredentials {
    pub(crate) server_uri: String,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: String,
    pub(crate) scope: String,
    /// The header and when to fetch a new token.
    pub(crate) current: Mutex<Option<(HeaderValue, Instant)>>,
}

/// Tokens without `expires_in` are fetched again after this long.
const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

impl Auth {
    /// From the merged catalog properties: `token`, else `credential` (`id:secret` or
    /// `secret`) with `scope` (default `catalog`) and `oauth2-server-uri` (see
    /// [`token_endpoint`]).
    ///
    /// # Errors
    /// [`Error::InvalidUri`] for a token that is not a valid header value.
    pub(crate) fn from_properties(
        uri: &str,
        token: Option<&str>,
        credential: Option<&str>,
        scope: Option<&str>,
        server_uri: Option<&str>,
    ) -> Result<Self> {
        if let Some(token) = token {
            let value = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
                Error::InvalidUri {
                    uri: uri.to_string(),
                    reason: "property token: not a valid HTTP header value".into(),
                }
            })?;
            return Ok(Self::Token(value));
        }
        let Some(credential) = credential else {
            return Ok(Self::None);
        };
        let (client_id, client_secret) = match credential.split_once(':') {
            Some((id, secret)) => (Some(id.to_string()), secret.to_string()),
            None => (None, credential.to_string()),
        };
        Ok(Self::ClientCredentials(Box::new(ClientCredentials {
            server_uri: token_endpoint(uri, server_uri),
            client_id,
            client_secret,
            scope: scope.unwrap_or("catalog").to_string(),
            current: Mutex::new(None),
        })))
    }

    /// The `Authorization` header for the next request, fetching a token when the cached one
    /// is missing or near its expiry.
    pub(crate) async fn header(&self, http: &reqwest::Client) -> Result<Option<HeaderValue>> {
        match self {
            Self::None => Ok(None),
            Self::Token(value) => Ok(Some(value.clone())),
            Self::ClientCredentials(grant) => {
                let mut current = grant.current.lock().await;
                if let Some((value, refresh_at)) = current.as_ref()
                    && Instant::now() < *refresh_at
                {
                    return Ok(Some(value.clone()));
                }
                let mut form = vec![
                    ("grant_type", "client_credentials"),
                    ("client_secret", grant.client_secret.as_str()),
                    ("scope", grant.scope.as_str()),
                ];
                if let Some(id) = &grant.client_id {
                    form.push(("client_id", id.as_str()));
                }
                let token = Client::fetch_token(http, &grant.server_uri, &form).await?;
                let value = HeaderValue::try_from(format!("Bearer {}", token.access_token))
                    .map_err(|_| Error::InvalidResponse {
                        operation: format!("token from {}", grant.server_uri),
                        reason: "the access token is not a valid header value".into(),
                    })?;
                // Fetched again at 90% of its lifetime, so no request carries an expired one.
                let lifetime = token
                    .expires_in
                    .map_or(DEFAULT_TOKEN_LIFETIME, Duration::from_secs);
                *current = Some((value.clone(), Instant::now() + lifetime.mul_f64(0.9)));
                Ok(Some(value))
            }
        }
    }
}

/// Where tokens are fetched: `oauth2-server-uri` when absolute, relative to the catalog's
/// `uri` when not (as Java's HTTP client resolves every path), and by default
/// `{uri}/v1/oauth/tokens`, the spec's deprecated endpoint.
fn token_endpoint(uri: &str, server_uri: Option<&str>) -> String {
    let base = uri.trim_end_matches('/');
    match server_uri {
        Some(s) if s.starts_with("http://") || s.starts_with("https://") => s.to_string(),
        Some(relative) => format!("{base}/{}", relative.trim_start_matches('/')),
        None => format!("{base}/v1/oauth/tokens"),
    }
}

#[cfg(test)]
mod tests {
    use super::token_endpoint;

    #[test]
    fn the_token_endpoint_is_absolute_or_under_the_catalog_uri() {
        let uri = "http://cat:8181/api/";
        assert_eq!(
            token_endpoint(uri, None),
            "http://cat:8181/api/v1/oauth/tokens"
        );
        assert_eq!(
            token_endpoint(uri, Some("https://idp/token")),
            "https://idp/token"
        );
        assert_eq!(
            token_endpoint(uri, Some("oauth/token")),
            "http://cat:8181/api/oauth/token"
        );
    }
}
