//! Conversion webhooks: a `ConversionReview` (apiextensions.k8s.io/v1) POSTed to the CRD's
//! `clientConfig.url`, over HTTPS trusting the CRD's `caBundle` (or the public roots when it
//! has none), or plain HTTP. Reads and writes are synchronous at this layer, so the call is
//! a blocking request (moved off the async workers when the runtime allows). `service`
//! references cannot be reached: drydock has no cluster network.

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{PemItem, RootCerts, TlsConfig};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::WebhookConversion;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};

/// kube-apiserver's default timeout for conversion webhooks.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Largest review response read.
const MAX_RESPONSE: u64 = 64 * 1024 * 1024;

enum Endpoint {
    Url { url: String, agent: ureq::Agent },
    Unreachable(String),
}

pub struct Webhook {
    endpoint: Endpoint,
}

impl Webhook {
    pub fn new(cfg: Option<&WebhookConversion>) -> Self {
        let client = cfg.and_then(|c| c.client_config.as_ref());
        let endpoint = match (client.and_then(|c| c.url.as_deref()), client.and_then(|c| c.service.as_ref())) {
            (Some(url), _) => endpoint(url, client.and_then(|c| c.ca_bundle.as_ref()).map(|b| b.0.as_slice())),
            (None, Some(s)) => Endpoint::Unreachable(format!(
                "service {}/{} cannot be reached: drydock has no cluster network, use clientConfig.url",
                s.namespace, s.name
            )),
            (None, None) => Endpoint::Unreachable("the webhook has no clientConfig".into()),
        };
        Self { endpoint }
    }

    /// Converts one object to `desired` (`group/version`).
    pub fn convert(&self, obj: Value, desired: &str) -> ApiResult<Value> {
        let gvk = gvk_of(&obj);
        let fail = |why: String| internal(format!("conversion webhook for {gvk} failed: {why}"));
        let uid = crate::rest::meta::new_uid();
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]},
        });
        let body = serde_json::to_vec(&review).map_err(|e| fail(e.to_string()))?;
        let reply = match &self.endpoint {
            Endpoint::Unreachable(why) => return Err(fail(why.clone())),
            Endpoint::Url { url, agent } => off_the_workers(|| post(agent, url, &body)).map_err(fail)?,
        };
        let reply: Value =
            serde_json::from_slice(&reply).map_err(|e| fail(format!("the response is not a ConversionReview: {e}")))?;
        let resp = &reply["response"];
        if resp["uid"].as_str() != Some(uid.as_str()) {
            return Err(fail(format!("expected response uid {uid:?}, got {:?}", resp["uid"].as_str().unwrap_or(""))));
        }
        if resp["result"]["status"].as_str() != Some("Success") {
            let msg = resp["result"]["message"].as_str().unwrap_or("");
            return Err(internal(format!("conversion webhook for {gvk} returned failure: {msg}")));
        }
        let converted = resp["convertedObjects"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let [out] = converted else {
            return Err(fail(format!("expected 1 converted object, got {}", converted.len())));
        };
        let original = &review["request"]["objects"][0];
        check_converted(original, out, desired).map_err(fail)?;
        Ok(restore_metadata(original, out.clone()))
    }
}

/// A 500 worded as kube-apiserver words internal errors.
fn internal(msg: String) -> ApiError {
    ApiError::internal(format!("Internal error occurred: {msg}"))
}

/// `group/version, Kind=Kind`, as conversion errors name the source object.
fn gvk_of(obj: &Value) -> String {
    let av = obj["apiVersion"].as_str().unwrap_or("");
    format!("{av}, Kind={}", obj["kind"].as_str().unwrap_or(""))
}

/// A converted object must be the same object at the desired version.
fn check_converted(original: &Value, out: &Value, desired: &str) -> Result<(), String> {
    if out["apiVersion"].as_str() != Some(desired) {
        return Err(format!(
            "invalid converted object: expected apiVersion {desired:?}, got {:?}",
            out["apiVersion"].as_str().unwrap_or("")
        ));
    }
    for (what, path) in [("kind", &["kind"][..]), ("metadata.name", &["metadata", "name"][..])]
        .into_iter()
        .chain([("metadata.namespace", &["metadata", "namespace"][..]), ("metadata.uid", &["metadata", "uid"][..])])
    {
        let get = |v: &Value| path.iter().fold(v.clone(), |v, k| v[*k].clone());
        if get(original) != get(out) {
            return Err(format!("invalid converted object: {what} changed"));
        }
    }
    Ok(())
}

/// Metadata other than labels and annotations is the server's: taken from the original.
fn restore_metadata(original: &Value, mut out: Value) -> Value {
    let mut meta = original["metadata"].clone();
    for key in ["labels", "annotations"] {
        match out["metadata"].get(key) {
            Some(v) => meta[key] = v.clone(),
            None => {
                if let Some(m) = meta.as_object_mut() {
                    m.remove(key);
                }
            }
        }
    }
    out["metadata"] = meta;
    out
}

/// Runs blocking I/O without stalling the other tasks of a multi-threaded runtime.
fn off_the_workers<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The client for `url`: HTTPS trusts `ca_bundle` (PEM) when given, else the public roots.
fn endpoint(url: &str, ca_bundle: Option<&[u8]>) -> Endpoint {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Endpoint::Unreachable(format!("unsupported webhook URL {url:?}: use https:// or http://"));
    }
    let roots = match ca_bundle.filter(|b| !b.is_empty()) {
        None => RootCerts::WebPki,
        Some(pem) => {
            let certs: Vec<_> = ureq::tls::parse_pem(pem)
                .filter_map(|item| match item {
                    Ok(PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                return Endpoint::Unreachable("clientConfig.caBundle holds no PEM certificate".into());
            }
            RootCerts::Specific(Arc::new(certs))
        }
    };
    let agent = ureq::Agent::config_builder()
        .tls_config(TlsConfig::builder().root_certs(roots).build())
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    Endpoint::Url { url: url.to_string(), agent }
}

/// One POST; the response body of a 200.
fn post(agent: &ureq::Agent, url: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut resp = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .send(body)
        .map_err(|e| format!("Post {url:?}: {e}"))?;
    let status = resp.status();
    if status != 200 {
        return Err(format!("Post {url:?}: the webhook answered HTTP {}", status.as_u16()));
    }
    resp.body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
        .map_err(|e| format!("Post {url:?}: reading the response: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_need_a_scheme_and_a_certificate_in_the_bundle() {
        assert!(matches!(endpoint("http://127.0.0.1:8443/convert", None), Endpoint::Url { .. }));
        assert!(matches!(endpoint("https://hooks.example/convert", None), Endpoint::Url { .. }));
        assert!(matches!(endpoint("ftp://x/convert", None), Endpoint::Unreachable(_)));
        let bad = endpoint("https://x/convert", Some(b"not a certificate"));
        assert!(matches!(bad, Endpoint::Unreachable(why) if why.contains("caBundle")));
    }

    #[test]
    fn metadata_is_restored_but_labels_taken() {
        let orig = json!({"metadata": {"name": "a", "uid": "u", "labels": {"x": "1"}, "generation": 3}});
        let out = json!({"metadata": {"name": "a", "uid": "u", "labels": {"y": "2"}, "generation": 9}});
        let back = restore_metadata(&orig, out);
        assert_eq!(back["metadata"]["generation"], 3);
        assert_eq!(back["metadata"]["labels"], json!({"y": "2"}));
    }
}
