//! An in-memory stand-in for the API server's Secrets, for unit tests of code that reads and
//! writes Secrets through a `kube::Client`: get, create (409 when it exists) and merge patch,
//! counting each request, so a test can also assert what was *not* read or written.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::core::v1::Secret;
use kube::client::Body;
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::Clock;

#[derive(Default)]
struct Inner {
    /// By (namespace, name).
    objects: BTreeMap<(String, String), Value>,
    version: u64,
    /// Requests by method.
    counts: HashMap<String, usize>,
    /// Secrets another writer creates just before this client's create of the same name.
    racing: HashMap<(String, String), Secret>,
}

/// The fake Secrets API; [`FakeSecrets::client`] talks to it.
#[derive(Clone, Default)]
pub struct FakeSecrets(Arc<Mutex<Inner>>);

impl FakeSecrets {
    pub fn new() -> Self {
        Self::default()
    }

    /// A client whose requests this fake answers.
    pub fn client(&self) -> kube::Client {
        let fake = self.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let fake = fake.clone();
            async move { Ok::<_, Infallible>(fake.handle(req).await) }
        });
        kube::Client::new(service, "default")
    }

    /// A controller context whose management cluster is this fake, on a paused clock (tests
    /// advance it), reaching workload clusters through `local` when given.
    pub fn context(&self, local: Option<crate::workload::LocalConnector>) -> Arc<crate::Context> {
        let client = self.client();
        let settings = crate::Settings { clock: Clock::paused_at(jiff::Timestamp::now()), ..Default::default() };
        crate::Context::new(client.clone(), crate::workload::WorkloadClients::new(client, local), settings)
    }

    /// A [`FakeSecrets::context`] whose workload cluster `namespace/cluster` answers through
    /// `server`: the Cluster's kubeconfig Secret is stored, naming a local server.
    pub fn workload_context(&self, namespace: &str, cluster: &str, server: kube::Client) -> Arc<crate::Context> {
        let kubeconfig = format!(
            "clusters:\n- name: {cluster}\n  cluster:\n    server: https://127.0.0.1/clusters/{namespace}.{cluster}\n"
        );
        let mut s = Secret {
            data: Some([("value".to_string(), k8s_openapi::ByteString(kubeconfig.into_bytes()))].into()),
            ..Default::default()
        };
        s.metadata.name = Some(crate::workload::kubeconfig_secret_name(cluster));
        s.metadata.namespace = Some(namespace.into());
        self.insert(s);
        self.context(Some(Arc::new(move |_: &str| Some(server.clone()))))
    }

    /// Stores a Secret as if someone had created it.
    pub fn insert(&self, s: Secret) {
        let mut inner = self.0.lock();
        let value = inner.stamp(serde_json::to_value(&s).expect("a Secret serializes"));
        inner.objects.insert(key_of(&s), value);
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<Secret> {
        let inner = self.0.lock();
        let v = inner.objects.get(&(namespace.to_string(), name.to_string()))?;
        Some(serde_json::from_value(v.clone()).expect("a stored Secret"))
    }

    /// Deletes a Secret as if someone else had.
    pub fn remove(&self, namespace: &str, name: &str) {
        self.0.lock().objects.remove(&(namespace.to_string(), name.to_string()));
    }

    /// The next create of `s`'s name finds `s` already created by another writer.
    pub fn race_on_create(&self, s: Secret) {
        self.0.lock().racing.insert(key_of(&s), s);
    }

    /// How many requests of `method` (`GET`, `POST`, `PATCH`) were answered.
    pub fn count(&self, method: &str) -> usize {
        self.0.lock().counts.get(method).copied().unwrap_or(0)
    }

    async fn handle(&self, req: Request<Body>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let body = body.collect_bytes().await.map(|b| b.to_vec()).unwrap_or_default();
        let Some((ns, name)) = route(parts.uri.path()) else {
            return status(StatusCode::NOT_FOUND, "NotFound", "no such resource");
        };
        let mut inner = self.0.lock();
        *inner.counts.entry(parts.method.to_string()).or_default() += 1;
        match (parts.method, name) {
            (Method::GET, Some(name)) => match inner.objects.get(&(ns, name.clone())) {
                Some(v) => ok(StatusCode::OK, v),
                None => status(StatusCode::NOT_FOUND, "NotFound", &format!("secrets \"{name}\" not found")),
            },
            (Method::POST, None) => inner.create(ns, &body),
            (Method::PATCH, Some(name)) => inner.merge_patch(ns, name, &body),
            _ => status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", "not faked"),
        }
    }
}

impl Inner {
    fn stamp(&mut self, mut v: Value) -> Value {
        self.version += 1;
        v["metadata"]["resourceVersion"] = json!(self.version.to_string());
        v
    }

    fn create(&mut self, ns: String, body: &[u8]) -> Response<Body> {
        let Ok(v) = serde_json::from_slice::<Value>(body) else {
            return status(StatusCode::BAD_REQUEST, "BadRequest", "not JSON");
        };
        let name = v["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let key = (ns, name.clone());
        if let Some(first) = self.racing.remove(&key) {
            let first = self.stamp(serde_json::to_value(first).expect("a Secret serializes"));
            self.objects.insert(key.clone(), first);
        }
        if self.objects.contains_key(&key) {
            return status(StatusCode::CONFLICT, "AlreadyExists", &format!("secrets \"{name}\" already exists"));
        }
        let v = self.stamp(v);
        self.objects.insert(key, v.clone());
        ok(StatusCode::CREATED, &v)
    }

    fn merge_patch(&mut self, ns: String, name: String, body: &[u8]) -> Response<Body> {
        let Ok(patch) = serde_json::from_slice::<Value>(body) else {
            return status(StatusCode::BAD_REQUEST, "BadRequest", "not JSON");
        };
        let key = (ns, name.clone());
        let Some(mut current) = self.objects.get(&key).cloned() else {
            return status(StatusCode::NOT_FOUND, "NotFound", &format!("secrets \"{name}\" not found"));
        };
        let wanted = patch.pointer("/metadata/resourceVersion").and_then(Value::as_str);
        if wanted.is_some_and(|rv| Some(rv) != current.pointer("/metadata/resourceVersion").and_then(Value::as_str)) {
            return status(StatusCode::CONFLICT, "Conflict", "the object has been modified");
        }
        merge(&mut current, &patch);
        let v = self.stamp(current);
        self.objects.insert(key, v.clone());
        ok(StatusCode::OK, &v)
    }
}

fn key_of(s: &Secret) -> (String, String) {
    (s.metadata.namespace.clone().unwrap_or_default(), s.metadata.name.clone().unwrap_or_default())
}

/// `/api/v1/namespaces/<ns>/secrets[/<name>]` → (namespace, name).
fn route(path: &str) -> Option<(String, Option<String>)> {
    let rest = path.strip_prefix("/api/v1/namespaces/")?;
    let (ns, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("secrets")?;
    match rest.strip_prefix('/') {
        Some(name) if !name.is_empty() && !name.contains('/') => Some((ns.to_string(), Some(name.to_string()))),
        None if rest.is_empty() => Some((ns.to_string(), None)),
        _ => None,
    }
}

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let t = target.as_object_mut().expect("an object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

fn ok(code: StatusCode, v: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(serde_json::to_vec(v).expect("JSON serializes")));
    *r.status_mut() = code;
    r
}

fn status(code: StatusCode, reason: &str, message: &str) -> Response<Body> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    });
    ok(code, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut v = json!({"a": {"b": 1, "c": 2}, "d": [1]});
        merge(&mut v, &json!({"a": {"b": null, "e": 3}, "d": [2]}));
        assert_eq!(v, json!({"a": {"c": 2, "e": 3}, "d": [2]}));
        assert_eq!(route("/api/v1/namespaces/ns/secrets"), Some(("ns".into(), None)));
        assert_eq!(route("/api/v1/namespaces/ns/secrets/x"), Some(("ns".into(), Some("x".into()))));
        assert_eq!(route("/api/v1/namespaces/ns/configmaps/x"), None);
    }
}
