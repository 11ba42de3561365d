//! One HTTP call to an extension: the URL from the ExtensionConfig's `clientConfig`, TLS
//! trusting its `caBundle` only (the public roots when it has none, as upstream's client
//! falls back to Go's defaults), a JSON POST with the handler's timeout. ureq is blocking,
//! so the call runs on tokio's blocking pool.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use drydock_api::capi::runtime::{ClientConfig, DEFAULT_SERVICE_PORT};
use serde_json::Value;
use ureq::tls::{PemItem, RootCerts, TlsConfig};

/// Largest answer read.
const MAX_RESPONSE: u64 = 16 * 1024 * 1024;

/// Where an ExtensionConfig's extension is reached, and the agent that trusts its CA.
pub struct Endpoint {
    base: String,
    agent: ureq::Agent,
}

impl Endpoint {
    /// The endpoint of `cc`, calls to it bounded by `timeout`. A `service` is reached at
    /// `<name>.<namespace>.svc` (HTTPS when a CA bundle is given), as upstream does.
    pub fn new(cc: &ClientConfig, timeout: Duration) -> Result<Self, String> {
        let base = match (&cc.url, &cc.service) {
            (Some(url), _) => url.clone(),
            (None, Some(s)) => {
                let scheme = if cc.ca_bundle.is_some() { "https" } else { "http" };
                let port = s.port.unwrap_or(DEFAULT_SERVICE_PORT);
                format!("{scheme}://{}.{}.svc:{port}{}", s.name, s.namespace, s.path.as_deref().unwrap_or_default())
            }
            (None, None) => return Err("clientConfig has neither url nor service".into()),
        };
        let roots = match cc.ca_bundle.as_deref() {
            None => RootCerts::WebPki,
            Some(b64) => RootCerts::Specific(Arc::new(certificates(b64)?)),
        };
        let agent = ureq::Agent::config_builder()
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self { base: base.trim_end_matches('/').to_string(), agent })
    }

    /// The URL of `path` (a hook's path), with the timeout as upstream's client sends it.
    pub fn url(&self, path: &str, timeout: Duration) -> String {
        format!("{}{path}?timeout={}s", self.base, timeout.as_secs())
    }

    /// POSTs `body` to `url` and reads the answer as JSON.
    pub async fn post(&self, url: String, body: Value) -> Result<Value, String> {
        let agent = self.agent.clone();
        let task = tokio::task::spawn_blocking(move || post_blocking(&agent, &url, &body));
        task.await.map_err(|e| format!("the call's task failed: {e}"))?
    }
}

/// The certificates of a base64-encoded PEM bundle.
fn certificates(b64: &str) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| format!("clientConfig.caBundle is not base64: {e}"))?;
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(c)) => Some(c.to_owned()),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err("clientConfig.caBundle holds no PEM certificate".into());
    }
    Ok(certs)
}

fn post_blocking(agent: &ureq::Agent, url: &str, body: &Value) -> Result<Value, String> {
    let bytes = serde_json::to_vec(body).map_err(|e| format!("encoding the request: {e}"))?;
    let mut resp = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .send(&bytes[..])
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
        .map_err(|e| format!("POST {url}: reading the answer: {e}"))?;
    serde_json::from_slice(&text).map_err(|e| {
        let http = if status == 200 { String::new() } else { format!(" (HTTP {status})") };
        format!("POST {url}: the answer is not JSON{http}: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(v: serde_json::Value) -> ClientConfig {
        serde_json::from_value(v).expect("client config")
    }

    #[test]
    fn urls_come_from_the_url_or_the_service() {
        let t = Duration::from_secs(10);
        let e = Endpoint::new(&config(serde_json::json!({"url": "https://ext.example:8443/base/"})), t).expect("url");
        assert_eq!(
            e.url("/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", t),
            "https://ext.example:8443/base/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery?timeout=10s"
        );
        let svc = config(serde_json::json!({"service": {"namespace": "ns", "name": "ext", "path": "/p"}}));
        assert_eq!(Endpoint::new(&svc, t).expect("service").url("/x", t), "http://ext.ns.svc:443/p/x?timeout=10s");
        let bad = config(serde_json::json!({"url": "https://x", "caBundle": "bm90IGEgY2VydA=="}));
        assert!(Endpoint::new(&bad, t).err().is_some_and(|e| e.contains("no PEM certificate")));
    }
}
