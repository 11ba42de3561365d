//! Conversion webhooks: a `ConversionReview` (apiextensions.k8s.io/v1) POSTed to the CRD's
//! `clientConfig.url`. Reads and writes are synchronous at this layer, so the call is a
//! small blocking HTTP/1.1 exchange (moved off the async workers when the runtime allows).
//! `service` references cannot be reached: drydock has no cluster network.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::WebhookConversion;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};

/// kube-apiserver's default timeout for conversion webhooks.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Largest review response read.
const MAX_RESPONSE: u64 = 64 * 1024 * 1024;

enum Endpoint {
    Http { host: String, port: u16, path: String },
    Unreachable(String),
}

pub struct Webhook {
    endpoint: Endpoint,
}

impl Webhook {
    pub fn new(cfg: Option<&WebhookConversion>) -> Self {
        let client = cfg.and_then(|c| c.client_config.as_ref());
        let endpoint = match (client.and_then(|c| c.url.as_deref()), client.and_then(|c| c.service.as_ref())) {
            (Some(url), _) => parse_url(url),
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
            Endpoint::Http { host, port, path } => off_the_workers(|| post(host, *port, path, &body)).map_err(fail)?,
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

fn parse_url(url: &str) -> Endpoint {
    let Some(rest) = url.strip_prefix("http://") else {
        return Endpoint::Unreachable(format!("unsupported webhook URL {url:?}: only http:// is supported"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
            Ok(port) => (h.trim_matches(['[', ']']).to_string(), port),
            Err(_) => return Endpoint::Unreachable(format!("invalid port in webhook URL {url:?}")),
        },
        _ => (authority.to_string(), 80),
    };
    Endpoint::Http { host, port, path }
}

/// One POST; the response body of a 200.
fn post(host: &str, port: u16, path: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let target = format!("http://{host}:{port}{path}");
    let err = |e: std::io::Error| format!("Post {target:?}: {e}");
    let addr =
        (host, port).to_socket_addrs().map_err(err)?.next().ok_or_else(|| format!("Post {target:?}: no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(err)?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(err)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(err)?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).map_err(err)?;
    stream.write_all(body).map_err(err)?;
    let mut raw = Vec::new();
    stream.take(MAX_RESPONSE).read_to_end(&mut raw).map_err(err)?;
    let split =
        memchr::memmem::find(&raw, b"\r\n\r\n").ok_or_else(|| format!("Post {target:?}: malformed response"))?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let body = &raw[split + 4..];
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status != "200" {
        return Err(format!("Post {target:?}: the webhook answered HTTP {status}"));
    }
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if chunked {
        dechunk(body).ok_or_else(|| format!("Post {target:?}: malformed chunked body"))
    } else {
        Ok(body.to_vec())
    }
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = memchr::memmem::find(data, b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls_and_chunks() {
        match parse_url("http://127.0.0.1:8443/convert") {
            Endpoint::Http { host, port, path } => {
                assert_eq!((host.as_str(), port, path.as_str()), ("127.0.0.1", 8443, "/convert"))
            }
            Endpoint::Unreachable(why) => panic!("{why}"),
        }
        assert!(matches!(parse_url("https://x/convert"), Endpoint::Unreachable(_)));
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").as_deref(), Some(&b"abcde"[..]));
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
