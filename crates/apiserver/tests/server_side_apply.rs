//! Server-side apply over HTTP, checked against what kube-apiserver's field manager
//! produces: golden examples on a Widget CRD with atomic, set and map lists and an atomic
//! map (E1-E10 and the one-line cases), the request rules, Update tracking (manager names,
//! reset, the cap of ten Update entries, one entry per version for updaters), subresources
//! and apply on built-in kinds. Every assertion compares parsed managedFields exactly.

use crate::common;

use std::time::Duration;

use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";
const JSON: &str = "application/json";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const WIDGET_VERSION: &str = "example.com/v1";

/// The Widget of the reference's golden examples: no status subresource, one field of
/// each merge kind (the unit tests of `managed` use its schema too).
const WIDGET_CRD: &str = include_str!("data/widget-crd.json");

/// One answer: status code and parsed JSON body.
struct Resp {
    code: u16,
    body: Value,
}

/// A server with the golden Widget CRD installed and served.
struct Fixture {
    _server: common::TestServer,
    router: axum::Router,
}

impl Fixture {
    async fn new() -> Self {
        let server = common::start().await;
        let router = server.server.router();
        let f = Fixture { _server: server, router };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let r = f.send("POST", crds, JSON, None, WIDGET_CRD.as_bytes().to_vec()).await;
        assert_eq!(r.code, 201, "{}", r.body);
        common::eventually("the Widget CRD served", Duration::from_secs(20), || async {
            (f.send("GET", WIDGETS, JSON, None, Vec::new()).await.code == 200).then_some(())
        })
        .await;
        f
    }

    async fn send(&self, method: &str, path: &str, ct: &str, user_agent: Option<&str>, body: Vec<u8>) -> Resp {
        send(&self.router, method, path, ct, user_agent, body).await
    }

    /// Applies `body` to widget `w` as `manager`, with extra query parameters `query`.
    async fn apply_q(&self, manager: &str, query: &str, body: &Value) -> Resp {
        let path = format!("{WIDGETS}/w?fieldManager={manager}{query}");
        self.send("PATCH", &path, APPLY, None, body.to_string().into_bytes()).await
    }

    async fn apply(&self, manager: &str, body: &Value) -> Resp {
        self.apply_q(manager, "", body).await
    }

    /// Applies, expecting success; returns the object.
    async fn applied(&self, manager: &str, body: &Value) -> Value {
        let r = self.apply(manager, body).await;
        assert!(r.code == 200 || r.code == 201, "{manager} applies {body}: {} {}", r.code, r.body);
        r.body
    }

    async fn get(&self) -> Value {
        let r = self.send("GET", &format!("{WIDGETS}/w"), JSON, None, Vec::new()).await;
        assert_eq!(r.code, 200, "{}", r.body);
        r.body
    }

    /// Reads widget `w`, lets `edit` change it, and PUTs it back as `manager`.
    async fn put(&self, manager: &str, edit: impl FnOnce(&mut Value)) -> Value {
        let mut obj = self.get().await;
        edit(&mut obj);
        let path = format!("{WIDGETS}/w?fieldManager={manager}");
        let r = self.send("PUT", &path, JSON, None, obj.to_string().into_bytes()).await;
        assert_eq!(r.code, 200, "{manager} PUT: {}", r.body);
        r.body
    }

    async fn merge(&self, query: &str, patch: &Value) -> Resp {
        self.send("PATCH", &format!("{WIDGETS}/w?{query}"), MERGE, None, patch.to_string().into_bytes()).await
    }
}

async fn send(
    router: &axum::Router,
    method: &str,
    path: &str,
    ct: &str,
    user_agent: Option<&str>,
    body: Vec<u8>,
) -> Resp {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .header("accept", "application/json");
    if let Some(ua) = user_agent {
        req = req.header("user-agent", ua);
    }
    let req = req.body(axum::body::Body::from(body)).expect("request");
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    Resp { code, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

/// A Widget named `w` in `default` with `fields` beside its identity (`metadata` merged).
fn widget(fields: Value) -> Value {
    with_identity(WIDGET_VERSION, "Widget", "w", fields)
}

fn with_identity(api_version: &str, kind: &str, name: &str, fields: Value) -> Value {
    let mut obj = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}});
    if let Value::Object(m) = fields {
        for (k, v) in m {
            match (k.as_str(), v) {
                ("metadata", Value::Object(meta)) => {
                    for (mk, mv) in meta {
                        obj["metadata"][mk] = mv;
                    }
                }
                (_, v) => obj[k] = v,
            }
        }
    }
    obj
}

fn entries(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"].as_array().cloned().unwrap_or_default()
}

/// Asserts the object's managedFields are exactly `want` (manager, operation, fieldsV1),
/// each on `api_version` for the main resource, Apply entries first.
fn assert_managed(obj: &Value, api_version: &str, want: &[(&str, &str, Value)]) {
    let got = entries(obj);
    let mut got_triples: Vec<(String, String, Value)> = got
        .iter()
        .map(|e| {
            assert_eq!(e["apiVersion"], api_version, "apiVersion of {e}");
            assert_eq!(e["fieldsType"], "FieldsV1", "{e}");
            assert!(e.get("subresource").is_none(), "main resource entry has no subresource: {e}");
            // A manager that joined through an apply changing nothing has no time yet.
            if let Some(time) = e.get("time") {
                let time = time.as_str().unwrap_or_default();
                assert!(time.ends_with('Z') && time.len() == 20, "RFC 3339 seconds in UTC: {e}");
            }
            (
                e["manager"].as_str().unwrap_or_default().to_string(),
                e["operation"].as_str().unwrap_or_default().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect();
    let ops: Vec<&str> = got.iter().map(|e| e["operation"].as_str().unwrap_or_default()).collect();
    assert!(ops.windows(2).all(|w| !(w[0] == "Update" && w[1] == "Apply")), "Apply entries sort first: {ops:?}");
    let mut want: Vec<(String, String, Value)> =
        want.iter().map(|(m, o, f)| (m.to_string(), o.to_string(), f.clone())).collect();
    got_triples.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    want.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(got_triples, want, "managedFields of {}", obj["metadata"]["name"]);
}

/// Asserts a 409 apply conflict with exactly this message and these (manager, field) causes.
fn assert_conflict(r: &Resp, message: &str, causes: &[(&str, &str)]) {
    assert_eq!(r.code, 409, "{}", r.body);
    let b = &r.body;
    assert_eq!(b["kind"], "Status", "{b}");
    assert_eq!(b["status"], "Failure", "{b}");
    assert_eq!(b["reason"], "Conflict", "{b}");
    assert_eq!(b["code"], 409, "{b}");
    assert_eq!(b["message"], message, "{b}");
    assert!(b["details"].get("name").is_none() && b["details"].get("kind").is_none(), "no name/kind: {b}");
    let mut got: Vec<Value> = b["details"]["causes"].as_array().cloned().unwrap_or_default();
    let mut want: Vec<Value> = causes
        .iter()
        .map(|(m, f)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": f}))
        .collect();
    let key = |v: &Value| v.to_string();
    got.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(got, want, "causes of {b}");
}

/// Asserts an error Status with this code and reason whose message contains `fragment`.
fn assert_status(r: &Resp, code: u16, reason: &str, fragment: &str) {
    assert_eq!(r.code, code, "{}", r.body);
    assert_eq!(r.body["kind"], "Status", "{}", r.body);
    assert_eq!(r.body["reason"], reason, "{}", r.body);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(fragment), "message should contain {fragment:?}: {message}");
}

// ---- golden examples ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_apply_creates_the_object() {
    let f = Fixture::new().await;
    let r = f
        .apply("alice", &widget(json!({"metadata": {"labels": {"test-label": "test"}}, "data": {"key": "some value"}})))
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let obj = f.get().await;
    assert_eq!(obj["metadata"]["labels"], json!({"test-label": "test"}));
    assert_eq!(obj["data"], json!({"key": "some value"}));
    let fields = json!({"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}});
    assert_managed(&obj, WIDGET_VERSION, &[("alice", "Apply", fields)]);
    assert_eq!(r.body["metadata"]["managedFields"], obj["metadata"]["managedFields"], "the answer shows them too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2_post_create_is_an_update() {
    let f = Fixture::new().await;
    let body = widget(json!({
        "metadata": {"labels": {"app": "web"}, "finalizers": ["example.com/f"]},
        "spec": {"replicas": 3, "containers": [{"name": "nginx", "image": "nginx:1.27"}]}
    }));
    let r =
        f.send("POST", &format!("{WIDGETS}?fieldManager=kubectl-create"), JSON, None, body.to_string().into()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let fields = json!({
        "f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/f\"": {}}, "f:labels": {".": {}, "f:app": {}}},
        "f:spec": {".": {}, "f:containers": {".": {}, "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}},
                   "f:replicas": {}}
    });
    assert_managed(&f.get().await, WIDGET_VERSION, &[("kubectl-create", "Update", fields)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e3_same_value_is_shared_then_a_change_conflicts() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"data": {"key": "v1"}}))).await;
    f.applied("bob", &widget(json!({"data": {"key": "v1"}}))).await;
    let r = f.apply("alice", &widget(json!({"data": {"key": "v2"}}))).await;
    assert_conflict(&r, "Apply failed with 1 conflict: conflict with \"bob\": .data.key", &[("\"bob\"", ".data.key")]);
    let obj = f.get().await;
    assert_eq!(obj["data"]["key"], "v1");
    let key = json!({"f:data": {"f:key": {}}});
    assert_managed(&obj, WIDGET_VERSION, &[("alice", "Apply", key.clone()), ("bob", "Apply", key)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e4_an_update_takes_a_field_apply_conflicts_then_forces() {
    let f = Fixture::new().await;
    let config = widget(json!({"spec": {"replicas": 3, "paused": false}}));
    f.applied("alice", &config).await;
    let obj = f.put("hpa-controller", |o| o["spec"]["replicas"] = json!(5)).await;
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:paused": {}}})),
            ("hpa-controller", "Update", json!({"f:spec": {"f:replicas": {}}})),
        ],
    );
    let r = f.apply("alice", &config).await;
    let manager = "\"hpa-controller\" using example.com/v1";
    let message = format!("Apply failed with 1 conflict: conflict with {manager}: .spec.replicas");
    assert_conflict(&r, &message, &[(manager, ".spec.replicas")]);
    assert_eq!(f.get().await["spec"]["replicas"], 5, "a refused apply changes nothing");

    let r = f.apply_q("alice", "&force=true", &config).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = f.get().await;
    assert_eq!(obj["spec"]["replicas"], 3);
    assert_managed(&obj, WIDGET_VERSION, &[("alice", "Apply", json!({"f:spec": {"f:paused": {}, "f:replicas": {}}}))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_dropping_a_sole_owned_field_deletes_it() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3, "paused": true}}))).await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3}}))).await;
    let obj = f.get().await;
    assert_eq!(obj["spec"], json!({"replicas": 3}));
    assert_managed(&obj, WIDGET_VERSION, &[("alice", "Apply", json!({"f:spec": {"f:replicas": {}}}))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e6_dropping_a_shared_field_keeps_it() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3, "paused": true}}))).await;
    f.applied("bob", &widget(json!({"spec": {"paused": true}}))).await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3}}))).await;
    let obj = f.get().await;
    assert_eq!(obj["spec"], json!({"replicas": 3, "paused": true}));
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:replicas": {}}})),
            ("bob", "Apply", json!({"f:spec": {"f:paused": {}}})),
        ],
    );
}

fn containers(list: &[(&str, &str)]) -> Value {
    Value::Array(list.iter().map(|(n, i)| json!({"name": n, "image": i})).collect())
}

fn item(key: &str) -> Value {
    json!({key: {".": {}, "f:image": {}, "f:name": {}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e7_list_map_items_are_owned_per_key() {
    let f = Fixture::new().await;
    let c = |list: &[(&str, &str)]| widget(json!({"spec": {"containers": containers(list)}}));
    f.applied("alice", &c(&[("nginx", "nginx:1.27"), ("logger", "busybox")])).await;
    f.applied("bob", &c(&[("sidecar", "envoy:1")])).await;
    f.applied("alice", &c(&[("nginx", "nginx:1.28")])).await;
    let obj = f.get().await;
    assert_eq!(obj["spec"]["containers"], containers(&[("nginx", "nginx:1.28"), ("sidecar", "envoy:1")]));
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:containers": item("k:{\"name\":\"nginx\"}")}})),
            ("bob", "Apply", json!({"f:spec": {"f:containers": item("k:{\"name\":\"sidecar\"}")}})),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e8_finalizers_are_a_set() {
    let f = Fixture::new().await;
    let fin = |list: Value| widget(json!({"metadata": {"finalizers": list}}));
    f.applied("alice", &fin(json!(["a.example.com/x", "b.example.com/y"]))).await;
    f.applied("bob", &fin(json!(["c.example.com/z"]))).await;
    f.applied("alice", &fin(json!(["a.example.com/x"]))).await;
    let obj = f.get().await;
    assert_eq!(obj["metadata"]["finalizers"], json!(["a.example.com/x", "c.example.com/z"]));
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:metadata": {"f:finalizers": {"v:\"a.example.com/x\"": {}}}})),
            ("bob", "Apply", json!({"f:metadata": {"f:finalizers": {"v:\"c.example.com/z\"": {}}}})),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e9_atomic_lists_and_maps_are_owned_whole() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"args": ["--a", "--b"]}}))).await;
    let more = widget(json!({"spec": {"args": ["--a", "--b", "--c"]}}));
    let r = f.apply("bob", &more).await;
    assert_conflict(
        &r,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.args",
        &[("\"alice\"", ".spec.args")],
    );
    let r = f.apply_q("bob", "&force=true", &more).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = f.get().await;
    assert_eq!(obj["spec"]["args"], json!(["--a", "--b", "--c"]));
    assert_managed(&obj, WIDGET_VERSION, &[("bob", "Apply", json!({"f:spec": {"f:args": {}}}))]);

    // The atomic map: equal values are shared, a changed map conflicts as a whole.
    let selector = |s: Value| widget(json!({"spec": {"args": ["--a", "--b", "--c"], "selector": s}}));
    f.applied("alice", &widget(json!({"spec": {"selector": {"app": "web"}}}))).await;
    f.applied("bob", &selector(json!({"app": "web"}))).await;
    let obj = f.get().await;
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:selector": {}}})),
            ("bob", "Apply", json!({"f:spec": {"f:args": {}, "f:selector": {}}})),
        ],
    );
    let r = f.apply("bob", &selector(json!({"app": "web", "tier": "fe"}))).await;
    assert_conflict(
        &r,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.selector",
        &[("\"alice\"", ".spec.selector")],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e10_reset_then_before_first_apply() {
    let f = Fixture::new().await;
    let body = widget(json!({"spec": {"replicas": 1, "paused": false}}));
    let r = f.send("POST", &format!("{WIDGETS}?fieldManager=creator"), JSON, None, body.to_string().into()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(entries(&r.body).len(), 1, "create is tracked: {}", r.body);
    let r = f.merge("", &json!({"metadata": {"managedFields": [{}]}})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert!(entries(&r.body).is_empty(), "[{{}}] clears every entry: {}", r.body);
    let obj = f.put("kubectl-edit", |o| o["spec"]["replicas"] = json!(2)).await;
    assert!(entries(&obj).is_empty(), "an object without managedFields is not tracked by updates: {obj}");

    let r = f.apply("alice", &widget(json!({"spec": {"replicas": 4}}))).await;
    let manager = "\"before-first-apply\" using example.com/v1";
    let message = format!("Apply failed with 1 conflict: conflict with {manager}: .spec.replicas");
    assert_conflict(&r, &message, &[(manager, ".spec.replicas")]);
    assert!(entries(&f.get().await).is_empty(), "a refused apply records nothing");

    f.applied("alice", &widget(json!({"spec": {"replicas": 2}}))).await;
    let obj = f.get().await;
    assert_eq!(obj["spec"], json!({"replicas": 2, "paused": false}));
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:replicas": {}}})),
            ("before-first-apply", "Update", json!({"f:spec": {".": {}, "f:paused": {}, "f:replicas": {}}})),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_key_map_items_conflict_per_field() {
    let f = Fixture::new().await;
    let ports = |p: Value| widget(json!({"spec": {"ports": p}}));
    f.applied(
        "alice",
        &ports(json!([
            {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"},
            {"containerPort": 53, "protocol": "UDP", "name": "dns"}
        ])),
    )
    .await;
    let r = f.apply("bob", &ports(json!([{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}]))).await;
    let field = ".spec.ports[containerPort=53,protocol=\"UDP\"].name";
    let message = format!("Apply failed with 1 conflict: conflict with \"alice\": {field}");
    assert_conflict(&r, &message, &[("\"alice\"", field)]);
    let port = json!({".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}});
    let fields = json!({"f:spec": {"f:ports": {
        "k:{\"containerPort\":53,\"protocol\":\"TCP\"}": port,
        "k:{\"containerPort\":53,\"protocol\":\"UDP\"}": port
    }}});
    assert_managed(&f.get().await, WIDGET_VERSION, &[("alice", "Apply", fields)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_removing_a_field_removes_it_from_every_manager() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3, "paused": true}}))).await;
    let obj = f
        .put("editor", |o| {
            o["spec"].as_object_mut().expect("spec").remove("paused");
        })
        .await;
    assert_eq!(obj["spec"], json!({"replicas": 3}));
    assert_managed(&obj, WIDGET_VERSION, &[("alice", "Apply", json!({"f:spec": {"f:replicas": {}}}))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_inside_a_list_item_takes_only_that_field() {
    let f = Fixture::new().await;
    let nginx = |image: &str| widget(json!({"spec": {"containers": containers(&[("nginx", image)])}}));
    f.applied("alice", &nginx("nginx:1.27")).await;
    let obj = f.put("kubectl-set-image", |o| o["spec"]["containers"][0]["image"] = json!("nginx:1.28")).await;
    let key = "k:{\"name\":\"nginx\"}";
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:spec": {"f:containers": {key: {".": {}, "f:name": {}}}}})),
            ("kubectl-set-image", "Update", json!({"f:spec": {"f:containers": {key: {"f:image": {}}}}})),
        ],
    );
    let r = f.apply("alice", &nginx("nginx:1.27")).await;
    let manager = "\"kubectl-set-image\" using example.com/v1";
    let field = ".spec.containers[name=\"nginx\"].image";
    assert_conflict(
        &r,
        &format!("Apply failed with 1 conflict: conflict with {manager}: {field}"),
        &[(manager, field)],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_conflicts_are_grouped_per_manager() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 3, "paused": true}}))).await;
    let r = f.apply("bob", &widget(json!({"spec": {"replicas": 4, "paused": false}}))).await;
    assert_conflict(
        &r,
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.paused\n- .spec.replicas",
        &[("\"alice\"", ".spec.paused"), ("\"alice\"", ".spec.replicas")],
    );
}

// ---- request rules ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_rules_refuse_bad_apply_requests() {
    let f = Fixture::new().await;
    let body = widget(json!({"data": {"key": "v"}}));
    let r = f.send("PATCH", &format!("{WIDGETS}/w"), APPLY, None, body.to_string().into()).await;
    assert_status(&r, 422, "Invalid", "fieldManager: Required value: is required for apply patch");
    assert_eq!(
        (&r.body["details"]["group"], &r.body["details"]["kind"]),
        (&json!("meta.k8s.io"), &json!("PatchOptions"))
    );
    assert!(r.body["message"].as_str().unwrap_or_default().starts_with("PatchOptions.meta.k8s.io"), "{}", r.body);

    let mut other = body.clone();
    other["apiVersion"] = json!("example.com/v2");
    let r = f.apply("alice", &other).await;
    assert_status(
        &r,
        400,
        "BadRequest",
        "Incorrect version specified in apply patch. Specified patch version: example.com/v2, expected: example.com/v1",
    );

    let mut carrying = body.clone();
    carrying["metadata"]["managedFields"] = json!([{"manager": "mallory", "operation": "Apply", "apiVersion": "example.com/v1",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}]);
    let r = f.apply("alice", &carrying).await;
    assert_status(&r, 400, "BadRequest", "metadata.managedFields must be nil");

    let r = f.apply_q("alice", "&fieldValidation=Strict", &widget(json!({"spec": {"bogus": 1}}))).await;
    assert_status(&r, 400, "BadRequest", "bogus");
    assert_eq!(f.send("GET", &format!("{WIDGETS}/w"), JSON, None, Vec::new()).await.code, 404, "nothing was created");

    // force belongs to apply only.
    f.applied("alice", &body).await;
    let r = f.merge("fieldManager=bob&force=true", &json!({"data": {"key": "w"}})).await;
    assert_status(&r, 422, "Invalid", "force: Forbidden: may not be specified for non-apply patch");
    assert_eq!(f.get().await["data"]["key"], "v");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_validation_refuses_a_duplicate_field() {
    let f = Fixture::new().await;
    let duplicate = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\ndata:\n  key: a\n  key: b\n";
    let path = format!("{WIDGETS}/w?fieldManager=alice&fieldValidation=Strict");
    let r = f.send("PATCH", &path, APPLY, None, duplicate.into()).await;
    assert_status(&r, 400, "BadRequest", "strict decoding");
    assert_eq!(f.send("GET", &format!("{WIDGETS}/w"), JSON, None, Vec::new()).await.code, 404, "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_applies_fully_and_stores_nothing() {
    let f = Fixture::new().await;
    let body = widget(json!({"data": {"key": "v1"}}));
    let r = f.apply_q("alice", "&dryRun=All", &body).await;
    assert!(r.code == 200 || r.code == 201, "{}", r.body);
    assert_eq!(r.body["data"]["key"], "v1");
    assert_managed(&r.body, WIDGET_VERSION, &[("alice", "Apply", json!({"f:data": {"f:key": {}}}))]);
    assert_eq!(
        f.send("GET", &format!("{WIDGETS}/w"), JSON, None, Vec::new()).await.code,
        404,
        "dry run stores nothing"
    );

    f.applied("bob", &body).await;
    let changed = widget(json!({"data": {"key": "v2"}}));
    let r = f.apply_q("alice", "&dryRun=All", &changed).await;
    assert_conflict(&r, "Apply failed with 1 conflict: conflict with \"bob\": .data.key", &[("\"bob\"", ".data.key")]);
    let r = f.apply_q("alice", "&dryRun=All&force=true", &changed).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_managed(&r.body, WIDGET_VERSION, &[("alice", "Apply", json!({"f:data": {"f:key": {}}}))]);
    let obj = f.get().await;
    assert_eq!(obj["data"]["key"], "v1");
    assert_managed(&obj, WIDGET_VERSION, &[("bob", "Apply", json!({"f:data": {"f:key": {}}}))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_version_in_the_config_is_a_precondition() {
    let f = Fixture::new().await;
    let created = f.applied("alice", &widget(json!({"data": {"key": "v1"}}))).await;
    let rv = created["metadata"]["resourceVersion"].as_str().expect("resourceVersion").to_string();
    let r = f.apply("alice", &widget(json!({"metadata": {"resourceVersion": rv}, "data": {"key": "v2"}}))).await;
    assert_eq!(r.code, 200, "the current revision passes: {}", r.body);
    let r = f.apply("alice", &widget(json!({"metadata": {"resourceVersion": rv}, "data": {"key": "v3"}}))).await;
    assert_status(&r, 409, "Conflict", "the object has been modified");
    assert_eq!(f.get().await["data"]["key"], "v2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yaml_and_json_bodies_are_both_accepted() {
    let f = Fixture::new().await;
    let yaml = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  replicas: 2\n  args:\n  - --v\n";
    let r = f.send("PATCH", &format!("{WIDGETS}/w?fieldManager=yaml"), APPLY, None, yaml.into()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let body = widget(json!({"spec": {"replicas": 2, "paused": true}}));
    let pretty = serde_json::to_vec_pretty(&body).expect("json");
    let r = f.send("PATCH", &format!("{WIDGETS}/w?fieldManager=json"), APPLY, None, pretty).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = f.get().await;
    assert_eq!(obj["spec"], json!({"replicas": 2, "args": ["--v"], "paused": true}));
    assert_managed(
        &obj,
        WIDGET_VERSION,
        &[
            ("yaml", "Apply", json!({"f:spec": {"f:args": {}, "f:replicas": {}}})),
            ("json", "Apply", json!({"f:spec": {"f:paused": {}, "f:replicas": {}}})),
        ],
    );
}

// ---- Update tracking ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_are_named_by_field_manager_then_user_agent_then_unknown() {
    let f = Fixture::new().await;
    let body = widget(json!({"spec": {"replicas": 1}}));
    let ua = Some("kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0");
    let r = f.send("POST", WIDGETS, JSON, ua, body.to_string().into()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let patch = |p: Value| p.to_string().into_bytes();
    let path = format!("{WIDGETS}/w");
    let r = f.send("PATCH", &path, MERGE, None, patch(json!({"spec": {"paused": true}}))).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let explicit = format!("{path}?fieldManager=explicit");
    let r = f.send("PATCH", &explicit, MERGE, Some("curl/8.5.0"), patch(json!({"spec": {"args": ["x"]}}))).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_managed(
        &f.get().await,
        WIDGET_VERSION,
        &[
            ("kubectl", "Update", json!({"f:spec": {".": {}, "f:replicas": {}}})),
            ("unknown", "Update", json!({"f:spec": {"f:paused": {}}})),
            ("explicit", "Update", json!({"f:spec": {"f:args": {}}})),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_empty_managed_fields_resets_them() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"data": {"key": "v"}}))).await;
    // Omitting managedFields keeps them.
    let r = f.merge("fieldManager=bob", &json!({"data": {"other": "x"}})).await;
    assert_eq!(entries(&r.body).len(), 2, "{}", r.body);
    // `[]` clears them, and the resetting write itself is not recorded.
    let r = f.merge("fieldManager=bob", &json!({"metadata": {"managedFields": []}, "data": {"third": "y"}})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = f.get().await;
    assert_eq!(obj["data"], json!({"key": "v", "other": "x", "third": "y"}));
    assert!(entries(&obj).is_empty(), "{obj}");
    // The next apply records the rest as before-first-apply.
    f.applied("alice", &widget(json!({"data": {"key": "v"}}))).await;
    assert_managed(
        &f.get().await,
        WIDGET_VERSION,
        &[
            ("alice", "Apply", json!({"f:data": {"f:key": {}}})),
            ("before-first-apply", "Update", json!({"f:data": {".": {}, "f:key": {}, "f:other": {}, "f:third": {}}})),
        ],
    );
    // `[{}]` clears them too, on a PUT.
    let obj = f.put("carol", |o| o["metadata"]["managedFields"] = json!([{}])).await;
    assert!(entries(&obj).is_empty(), "{obj}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_than_ten_updaters_are_merged_into_ancient_changes() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"metadata": {"labels": {"owner": "alice"}}}))).await;
    // Zero-padded names sort like the writes, so the order holds whether or not a second ticks.
    let names: Vec<String> = (0..11).map(|i| format!("m{i:02}")).collect();
    for name in &names {
        let r = f.merge(&format!("fieldManager={name}"), &json!({"metadata": {"labels": {name.as_str(): "x"}}})).await;
        assert_eq!(r.code, 200, "{}", r.body);
    }
    let obj = f.get().await;
    let label = |n: &str| json!({"f:metadata": {"f:labels": {format!("f:{n}"): {}}}});
    let mut want = vec![
        ("alice".to_string(), "Apply", label("owner")),
        ("ancient-changes".to_string(), "Update", json!({"f:metadata": {"f:labels": {"f:m00": {}, "f:m01": {}}}})),
    ];
    want.extend(names[2..].iter().map(|n| (n.clone(), "Update", label(n))));
    let want: Vec<(&str, &str, Value)> = want.iter().map(|(m, o, v)| (m.as_str(), *o, v.clone())).collect();
    assert_managed(&obj, WIDGET_VERSION, &want);
    assert_eq!(entries(&obj).iter().filter(|e| e["operation"] == "Update").count(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_write_is_recorded_with_its_subresource() {
    // The shared test Widget (example.drydock.dev) has a status subresource.
    let s = common::start().await;
    let router = s.server.router();
    let base = "/apis/example.drydock.dev/v1/namespaces/default/widgets";
    let body = json!({"apiVersion": "example.drydock.dev/v1", "kind": "Widget",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {"replicas": 1}, "status": {"phase": "ignored"}});
    let r = send(&router, "PATCH", &format!("{base}/s?fieldManager=alice"), APPLY, None, body.to_string().into()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(
        r.body.get("status").is_none_or(|st| st.get("phase").is_none()),
        "the main resource ignores status: {}",
        r.body
    );
    let patch = json!({"status": {"replicas": 1}}).to_string().into_bytes();
    let path = format!("{base}/s/status?fieldManager=status-writer");
    let r = send(&router, "PATCH", &path, MERGE, None, patch).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let got = send(&router, "GET", &format!("{base}/s"), JSON, None, Vec::new()).await.body;
    let mut list = entries(&got);
    list.iter_mut().for_each(|e| {
        e.as_object_mut().expect("entry").remove("time");
    });
    assert_eq!(
        list,
        vec![
            json!({"manager": "alice", "operation": "Apply", "apiVersion": "example.drydock.dev/v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}),
            json!({"manager": "status-writer", "operation": "Update", "apiVersion": "example.drydock.dev/v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {".": {}, "f:replicas": {}}},
                   "subresource": "status"}),
        ]
    );
}

// ---- built-in kinds ----

/// Applies `fields` to the built-in object at `path` as `manager`, expecting success.
async fn apply_builtin(router: &axum::Router, path: &str, manager: &str, body: &Value) -> Value {
    let r =
        send(router, "PATCH", &format!("{path}?fieldManager={manager}"), APPLY, None, body.to_string().into()).await;
    assert!(r.code == 200 || r.code == 201, "{manager} applies {body}: {} {}", r.code, r.body);
    r.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_map_data_and_finalizers_merge_per_key() {
    let s = common::start().await;
    let router = s.server.router();
    let path = "/api/v1/namespaces/default/configmaps/cfg";
    let cm = |data: Value, finalizers: Value| {
        with_identity("v1", "ConfigMap", "cfg", json!({"metadata": {"finalizers": finalizers}, "data": data}))
    };
    apply_builtin(
        &router,
        path,
        "alice",
        &cm(json!({"a": "1", "b": "2"}), json!(["a.example.com/x", "b.example.com/y"])),
    )
    .await;
    apply_builtin(&router, path, "bob", &cm(json!({"c": "3"}), json!(["c.example.com/z"]))).await;
    apply_builtin(&router, path, "alice", &cm(json!({"a": "1"}), json!(["a.example.com/x"]))).await;
    let obj = send(&router, "GET", path, JSON, None, Vec::new()).await.body;
    assert_eq!(obj["data"], json!({"a": "1", "c": "3"}));
    assert_eq!(obj["metadata"]["finalizers"], json!(["a.example.com/x", "c.example.com/z"]));
    let owned = |key: &str, fin: &str| json!({"f:data": {format!("f:{key}"): {}}, "f:metadata": {"f:finalizers": {format!("v:\"{fin}\""): {}}}});
    assert_managed(
        &obj,
        "v1",
        &[("alice", "Apply", owned("a", "a.example.com/x")), ("bob", "Apply", owned("c", "c.example.com/z"))],
    );
    let r = send(
        &router,
        "PATCH",
        &format!("{path}?fieldManager=bob"),
        APPLY,
        None,
        cm(json!({"a": "9", "c": "3"}), json!(["c.example.com/z"])).to_string().into(),
    )
    .await;
    assert_conflict(&r, "Apply failed with 1 conflict: conflict with \"alice\": .data.a", &[("\"alice\"", ".data.a")]);
}

fn deployment(containers: Value) -> Value {
    with_identity(
        "apps/v1",
        "Deployment",
        "web",
        json!({"spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}
        }}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_containers_are_keyed_by_name() {
    let s = common::start().await;
    let router = s.server.router();
    let path = "/apis/apps/v1/namespaces/default/deployments/web";
    let main = json!({"name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}]});
    apply_builtin(&router, path, "alice", &deployment(json!([main, {"name": "logger", "image": "busybox"}]))).await;
    let sidecar = with_identity(
        "apps/v1",
        "Deployment",
        "web",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy:1"}]}}}}),
    );
    apply_builtin(&router, path, "bob", &sidecar).await;
    apply_builtin(&router, path, "alice", &deployment(json!([main]))).await;

    let obj = send(&router, "GET", path, JSON, None, Vec::new()).await.body;
    let names: Vec<&str> = obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["main", "sidecar"], "logger removed, bob's sidecar kept: {obj}");
    assert_eq!(obj["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"], "TCP", "defaulted");
    let alice = json!({"f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}
            }}}
        }
    }});
    let bob = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
        "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}
    }}}}});
    assert_managed(&obj, "apps/v1", &[("alice", "Apply", alice), ("bob", "Apply", bob)]);

    // The status subresource of a built-in kind is tracked apart from the main resource.
    let status = json!({"status": {"replicas": 2}}).to_string().into_bytes();
    let r = send(&router, "PATCH", &format!("{path}/status?fieldManager=controller"), MERGE, None, status).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = send(&router, "GET", path, JSON, None, Vec::new()).await.body;
    let entry = entries(&obj).into_iter().find(|e| e["manager"] == "controller").expect("controller entry");
    assert_eq!(entry["subresource"], "status", "{entry}");
    assert_eq!(entry["operation"], "Update", "{entry}");
    assert_eq!(entry["apiVersion"], "apps/v1", "{entry}");
    assert_eq!(entry["fieldsV1"]["f:status"]["f:replicas"], json!({}), "{entry}");
}

/// The entry of `manager`, without its time.
fn entry_of(obj: &Value, manager: &str) -> Value {
    let mut e = entries(obj).into_iter().find(|e| e["manager"] == manager).unwrap_or(Value::Null);
    if let Some(m) = e.as_object_mut() {
        m.remove("time");
    }
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_and_status_writers_own_fields_with_their_subresource() {
    let s = common::start().await;
    let router = s.server.router();
    let v = "example.drydock.dev/v1";
    let base = "/apis/example.drydock.dev/v1/namespaces/default/widgets";
    let obj = |fields: Value| with_identity(v, "Widget", "s", fields);
    let apply = |path: String, manager: &str, body: Value| {
        let path = format!("{path}?fieldManager={manager}");
        let router = router.clone();
        async move { send(&router, "PATCH", &path, APPLY, None, body.to_string().into()).await }
    };
    let spec = obj(json!({"spec": {"replicas": 1, "color": "red"}}));
    assert_eq!(apply(format!("{base}/s"), "alice", spec.clone()).await.code, 201);

    // A /scale write takes the replicas path; alice's next apply conflicts with it.
    let scale = json!({"spec": {"replicas": 5}}).to_string().into_bytes();
    let r = send(&router, "PATCH", &format!("{base}/s/scale?fieldManager=scaler"), MERGE, None, scale).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let got = send(&router, "GET", &format!("{base}/s"), JSON, None, Vec::new()).await.body;
    assert_eq!(got["spec"]["replicas"], 5);
    let scaler = entry_of(&got, "scaler");
    assert_eq!((&scaler["operation"], &scaler["subresource"]), (&json!("Update"), &json!("scale")), "{got}");
    assert_eq!(scaler["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}), "{got}");
    assert_eq!(entry_of(&got, "alice")["fieldsV1"], json!({"f:spec": {"f:color": {}}}), "{got}");
    let r = apply(format!("{base}/s"), "alice", spec).await;
    assert_eq!(r.code, 409, "{}", r.body);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("conflict with \"scaler\" with subresource \"scale\""), "{message}");
    assert_eq!(r.body["details"]["causes"][0]["field"], ".spec.replicas", "{}", r.body);

    // Apply through /status is an Apply entry with subresource status; an Update through
    // /status then conflicts with the applier, named with its subresource and version.
    let status = |phase: &str| obj(json!({"status": {"phase": phase}}));
    let r = apply(format!("{base}/s/status"), "status-applier", status("Running")).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        entry_of(&r.body, "status-applier"),
        json!({"manager": "status-applier", "operation": "Apply", "apiVersion": v, "fieldsType": "FieldsV1",
               "fieldsV1": {"f:status": {"f:phase": {}}}, "subresource": "status"})
    );
    let patch = json!({"status": {"phase": "Failed"}}).to_string().into_bytes();
    let path = format!("{base}/s/status?fieldManager=status-writer");
    assert_eq!(send(&router, "PATCH", &path, MERGE, None, patch).await.code, 200);
    let r = apply(format!("{base}/s/status"), "status-applier", status("Running")).await;
    let manager = format!("\"status-writer\" with subresource \"status\" using {v}");
    let message = format!("Apply failed with 1 conflict: conflict with {manager}: .status.phase");
    assert_conflict(&r, &message, &[(manager.as_str(), ".status.phase")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managers_names_no_op_updates_and_validation_after_merge() {
    let f = Fixture::new().await;
    f.applied("alice", &widget(json!({"spec": {"replicas": 1}}))).await;
    let long = "m".repeat(129);
    let r = f.apply(&long, &widget(json!({"spec": {"paused": true}}))).await;
    assert_eq!(r.code, 422, "a manager name over 128 characters: {}", r.body);
    assert_eq!(r.body["reason"], "Invalid", "{}", r.body);
    let at_limit = "m".repeat(128);
    f.applied(&at_limit, &widget(json!({"spec": {"paused": true}}))).await;

    // An Update that changes nothing adds no entry.
    let obj = f.put("noop", |_| {}).await;
    assert!(entries(&obj).iter().all(|e| e["manager"] != "noop"), "{obj}");

    // The merged result is validated: a wrong type is refused and nothing changes.
    let r = f.apply("alice", &widget(json!({"spec": {"replicas": "many"}}))).await;
    assert_status(&r, 422, "Invalid", "spec.replicas");
    assert_eq!(f.get().await["spec"], json!({"replicas": 1, "paused": true}));
}

/// A CRD served at v1 and v2 with the same schema and no conversion.
const GIZMO_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "gizmos.example.com"},
  "spec": {
    "group": "example.com", "scope": "Namespaced",
    "names": {"plural": "gizmos", "kind": "Gizmo"},
    "conversion": {"strategy": "None"},
    "versions": [
      {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
        "properties": {"spec": {"type": "object", "additionalProperties": {"type": "string"}}}}}},
      {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object",
        "properties": {"spec": {"type": "object", "additionalProperties": {"type": "string"}}}}}}
    ]
  }
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updater_has_an_entry_per_version_an_applier_one() {
    let f = Fixture::new().await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(f.send("POST", crds, JSON, None, GIZMO_CRD.as_bytes().to_vec()).await.code, 201);
    let path = |v: &str| format!("/apis/example.com/{v}/namespaces/default/gizmos");
    common::eventually("both Gizmo versions served", Duration::from_secs(20), || async {
        let v1 = f.send("GET", &path("v1"), JSON, None, Vec::new()).await.code;
        let v2 = f.send("GET", &path("v2"), JSON, None, Vec::new()).await.code;
        (v1 == 200 && v2 == 200).then_some(())
    })
    .await;
    let gizmo = |v: &str, spec: Value| {
        json!({"apiVersion": format!("example.com/{v}"), "kind": "Gizmo",
               "metadata": {"name": "g", "namespace": "default"}, "spec": spec})
    };
    for v in ["v1", "v2"] {
        let url = format!("{}/g?fieldManager=alice", path(v));
        let r = f.send("PATCH", &url, APPLY, None, gizmo(v, json!({"a": "1"})).to_string().into()).await;
        assert!(r.code == 200 || r.code == 201, "{}", r.body);
    }
    for (v, key) in [("v1", "b"), ("v2", "c")] {
        let url = format!("{}/g?fieldManager=updater", path(v));
        let r = f.send("PATCH", &url, MERGE, None, json!({"spec": {key: "x"}}).to_string().into()).await;
        assert_eq!(r.code, 200, "{}", r.body);
    }
    let obj = f.send("GET", &format!("{}/g", path("v1")), JSON, None, Vec::new()).await.body;
    let mut got: Vec<(String, String, String, Value)> = entries(&obj)
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("manager"), s("operation"), s("apiVersion"), e["fieldsV1"].clone())
        })
        .collect();
    got.sort_by(|a, b| (&a.0, &a.2).cmp(&(&b.0, &b.2)));
    let own = |key: &str| json!({"f:spec": {format!("f:{key}"): {}}});
    assert_eq!(
        got,
        [
            ("alice".into(), "Apply".into(), "example.com/v2".into(), own("a")),
            ("updater".into(), "Update".into(), "example.com/v1".into(), own("b")),
            ("updater".into(), "Update".into(), "example.com/v2".into(), own("c")),
        ],
        "{obj}"
    );
}
