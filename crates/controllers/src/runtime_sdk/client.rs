//! One HTTP call to an extension: the URL from the ExtensionConfig's `clientConfig`, TLS
//! trusting its `caBundle` only (the public roots when it has none, as upstream's client
//! falls back to Go's defaults), a JSON POST with the handler's timeout. ureq is blocking,
//! so the call runs on tokio's blocking pool.
//!
//! A `service` reference is called at `<name>.<namespace>.svc`, the name its certificate
//! must hold. drydock may run where no cluster DNS answers for that name, so the address
//! comes from the Service's ready endpoints (its EndpointSlices), as kube-apiserver reaches
//! webhook Services; DNS is asked only when the Service has none.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use drydock_api::capi::runtime::{ClientConfig, DEFAULT_SERVICE_PORT, ServiceReference};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams};
use serde_json::Value;
use ureq::tls::{PemItem, RootCerts, TlsConfig};
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// Largest answer read.
const MAX_RESPONSE: u64 = 16 * 1024 * 1024;

/// Where an ExtensionConfig's extension is reached, and the agent that trusts its CA.
pub struct Endpoint {
    base: String,
    agent: ureq::Agent,
}

impl Endpoint {
    /// The endpoint of `cc`, calls to it bounded by `timeout`. A `service` is reached at
    /// `<name>.<namespace>.svc` (HTTPS when a CA bundle is given), as upstream does, at the
    /// Service's endpoints read with `client` (see the module's notes).
    pub async fn resolve(cc: &ClientConfig, timeout: Duration, client: &kube::Client) -> Result<Self, String> {
        let addresses = match &cc.service {
            Some(s) if cc.url.is_none() => service_addresses(client, s).await,
            _ => Vec::new(),
        };
        Self::new(cc, timeout, addresses)
    }

    /// The endpoint of `cc`, connecting to `addresses` when there are any, else to what
    /// DNS says of the URL's host.
    fn new(cc: &ClientConfig, timeout: Duration, addresses: Vec<SocketAddr>) -> Result<Self, String> {
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
        let config = ureq::Agent::config_builder()
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build();
        let agent = if addresses.is_empty() {
            config.into()
        } else {
            ureq::Agent::with_parts(config, DefaultConnector::new(), Pinned(addresses))
        };
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

/// The addresses of the ready endpoints of the Service `s` names, at the target of its
/// port; none when the Service, that port or its endpoints are missing.
async fn service_addresses(client: &kube::Client, s: &ServiceReference) -> Vec<SocketAddr> {
    let port = s.port.unwrap_or(DEFAULT_SERVICE_PORT);
    let service = match Api::<Service>::namespaced(client.clone(), &s.namespace).get_opt(&s.name).await {
        Ok(service) => service,
        Err(e) => {
            tracing::warn!(service = %format!("{}/{}", s.namespace, s.name), error = %e, "reading an extension's Service");
            None
        }
    };
    let ports = service.and_then(|svc| svc.spec?.ports).unwrap_or_default();
    let Some(service_port) = ports.iter().find(|p| p.port == port) else {
        return Vec::new();
    };
    let selector = ListParams::default().labels(&format!("kubernetes.io/service-name={}", s.name));
    let slices = match Api::<EndpointSlice>::namespaced(client.clone(), &s.namespace).list(&selector).await {
        Ok(list) => list.items,
        Err(e) => {
            tracing::warn!(service = %format!("{}/{}", s.namespace, s.name), error = %e, "listing an extension's EndpointSlices");
            Vec::new()
        }
    };
    ready_addresses(&slices, service_port.name.as_deref().unwrap_or_default())
}

/// The addresses of the ready endpoints of `slices` at their port named `port_name` (the
/// Service port's name, empty when it has none).
fn ready_addresses(slices: &[EndpointSlice], port_name: &str) -> Vec<SocketAddr> {
    let mut out = Vec::new();
    for slice in slices {
        let ports = slice.ports.as_deref().unwrap_or_default();
        let port = ports.iter().find(|p| p.name.as_deref().unwrap_or_default() == port_name);
        let Some(port) = port.and_then(|p| p.port).and_then(|p| u16::try_from(p).ok()) else { continue };
        for endpoint in &slice.endpoints {
            // Upstream counts an endpoint whose readiness is unknown as ready.
            if endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(false) {
                continue;
            }
            let ips = endpoint.addresses.iter().filter_map(|a| a.parse::<IpAddr>().ok());
            out.extend(ips.map(|ip| SocketAddr::new(ip, port)));
        }
    }
    out
}

/// Resolves every host to the addresses it was made with: the agent of one endpoint only
/// ever calls that endpoint's host.
#[derive(Debug)]
struct Pinned(Vec<SocketAddr>);

impl Resolver for Pinned {
    fn resolve(
        &self,
        _uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let mut out = self.empty();
        for a in &self.0 {
            if out.try_push(*a).is_err() {
                break;
            }
        }
        if out.is_empty() { Err(ureq::Error::HostNotFound) } else { Ok(out) }
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
    fn a_service_is_reached_at_its_ready_endpoints_on_the_named_port() {
        let slice: EndpointSlice = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ext-1"}, "addressType": "IPv4",
            "ports": [{"name": "metrics", "port": 9090}, {"name": "https", "port": 9443}],
            "endpoints": [
                {"addresses": ["10.0.0.1"], "conditions": {"ready": false}},
                {"addresses": ["10.0.0.2"], "conditions": {"ready": true}},
                {"addresses": ["10.0.0.3"]},
            ],
        }))
        .expect("slice");
        let got = ready_addresses(std::slice::from_ref(&slice), "https");
        let want: Vec<SocketAddr> =
            ["10.0.0.2:9443", "10.0.0.3:9443"].iter().map(|a| a.parse().expect("addr")).collect();
        assert_eq!(got, want, "not-ready endpoints left out, unknown readiness counted as ready");
        assert!(ready_addresses(&[slice], "grpc").is_empty(), "no port of that name");
    }

    #[test]
    fn urls_come_from_the_url_or_the_service() {
        let t = Duration::from_secs(10);
        let e = Endpoint::new(&config(serde_json::json!({"url": "https://ext.example:8443/base/"})), t, Vec::new())
            .expect("url");
        assert_eq!(
            e.url("/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", t),
            "https://ext.example:8443/base/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery?timeout=10s"
        );
        let svc = config(serde_json::json!({"service": {"namespace": "ns", "name": "ext", "path": "/p"}}));
        assert_eq!(
            Endpoint::new(&svc, t, Vec::new()).expect("service").url("/x", t),
            "http://ext.ns.svc:443/p/x?timeout=10s"
        );
        let bad = config(serde_json::json!({"url": "https://x", "caBundle": "bm90IGEgY2VydA=="}));
        assert!(Endpoint::new(&bad, t, Vec::new()).err().is_some_and(|e| e.contains("no PEM certificate")));
    }
}
