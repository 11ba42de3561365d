//! Kubernetes protobuf bodies: kubectl 1.32/1.33 typed commands (which send protobuf), a raw
//! protobuf client doing create/get/list/update/watch, errors as protobuf `Status`, garbage
//! bodies, and custom resources (no protobuf message) answering JSON or 406.

use crate::common;

use std::time::Duration;

use axum::body::Body;
use common::kubectl::Kubectl;
use drydock_apiserver::http::protobuf::{self, MAGIC};
use http::Request;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const PB: &str = "application/vnd.kubernetes.protobuf";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const WIDGETS: &str = "/apis/example.drydock.dev/v1/namespaces/default/widgets";

struct Answer {
    code: u16,
    content_type: String,
    body: Vec<u8>,
}

impl Answer {
    /// The body as JSON, decoding it from protobuf when the server answered protobuf.
    fn value(&self) -> Value {
        if self.content_type == PB {
            assert!(self.body.starts_with(&MAGIC), "protobuf answer without the k8s prefix");
            protobuf::decode_object(&self.body).expect("protobuf answer decodes")
        } else {
            serde_json::from_slice(&self.body).unwrap_or(Value::Null)
        }
    }

    /// A protobuf Status with this code and reason.
    fn assert_status(&self, code: u16, reason: &str) -> Value {
        assert_eq!(self.code, code, "{:?}", self.value());
        assert_eq!(self.content_type, PB, "errors come back in the client's protobuf");
        let s = self.value();
        assert_eq!((s["kind"].as_str(), s["apiVersion"].as_str()), (Some("Status"), Some("v1")), "{s}");
        assert_eq!(s["code"], code, "{s}");
        assert_eq!(s["reason"], reason, "{s}");
        assert_eq!(s["status"], "Failure", "{s}");
        s
    }
}

async fn send(router: &axum::Router, method: &str, path: &str, ct: &str, accept: &str, body: Vec<u8>) -> Answer {
    let (code, content_type, body) = common::send_raw(router, method, path, ct, accept, body).await;
    Answer { code, content_type, body }
}

fn pb(v: &Value) -> Vec<u8> {
    protobuf::encode_object(v).expect("encodes")
}

fn configmap(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "pb"}}, "data": data})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_protobuf_client_creates_reads_lists_and_updates() {
    let s = common::start().await;
    let r = s.server.router();
    let cm = configmap("pb", json!({"a": "1", "empty": ""}));
    let created = send(&r, "POST", CMS, PB, PB, pb(&cm)).await;
    assert_eq!(created.code, 201, "{:?}", created.value());
    assert_eq!(created.content_type, PB);
    let created = created.value();
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["data"], json!({"a": "1", "empty": ""}));
    assert_eq!(created["metadata"]["labels"], json!({"app": "pb"}));
    let rv = created["metadata"]["resourceVersion"].as_str().expect("resourceVersion").to_string();
    assert!(created["metadata"]["creationTimestamp"].as_str().is_some_and(|t| t.ends_with('Z')));

    // What a JSON client reads back is what the protobuf client was told.
    let json_read = send(&r, "GET", &format!("{CMS}/pb"), "", "application/json", vec![]).await;
    assert_eq!(json_read.content_type, "application/json");
    assert_eq!(json_read.value(), created);

    // Accept negotiation: protobuf when preferred, JSON otherwise.
    for (accept, want) in [
        (PB, PB),
        ("application/vnd.kubernetes.protobuf,application/json", PB),
        ("application/vnd.kubernetes.protobuf, */*", PB),
        ("application/json;q=0.9,application/vnd.kubernetes.protobuf;q=0.5", "application/json"),
        ("application/vnd.kubernetes.protobuf;q=0,application/json", "application/json"),
        ("*/*", "application/json"),
    ] {
        let got = send(&r, "GET", &format!("{CMS}/pb"), "", accept, vec![]).await;
        assert_eq!((got.code, got.content_type.as_str()), (200, want), "Accept: {accept}");
        assert_eq!(got.value(), created, "Accept: {accept}");
    }

    let other = send(&r, "POST", CMS, PB, PB, pb(&configmap("pb2", json!({"b": "2"})))).await;
    assert_eq!(other.code, 201);
    let list = send(&r, "GET", CMS, "", PB, vec![]).await;
    assert_eq!((list.code, list.content_type.as_str()), (200, PB));
    let list = list.value();
    assert_eq!(list["kind"], "ConfigMapList");
    assert!(list["metadata"]["resourceVersion"].as_str().is_some());
    let names: Vec<&str> =
        list["items"].as_array().expect("items").iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert!(names.contains(&"pb") && names.contains(&"pb2"), "{names:?}");

    let mut changed = created.clone();
    changed["data"] = json!({"a": "changed"});
    let updated = send(&r, "PUT", &format!("{CMS}/pb"), PB, PB, pb(&changed)).await;
    assert_eq!(updated.code, 200, "{:?}", updated.value());
    let updated = updated.value();
    assert_eq!(updated["data"], json!({"a": "changed"}));
    assert_ne!(updated["metadata"]["resourceVersion"].as_str(), Some(rv.as_str()));

    // A protobuf Accept on a JSON merge patch answers protobuf; the patch stays JSON.
    let patched =
        send(&r, "PATCH", &format!("{CMS}/pb"), "application/merge-patch+json", PB, br#"{"data":{"p":"q"}}"#.to_vec())
            .await;
    assert_eq!((patched.code, patched.content_type.as_str()), (200, PB));
    assert_eq!(patched.value()["data"]["p"], "q");

    let deleted = send(&r, "DELETE", &format!("{CMS}/pb2"), "", PB, vec![]).await;
    assert_eq!((deleted.code, deleted.content_type.as_str()), (200, PB));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_carry_bytes_and_namespaces_are_cluster_scoped() {
    let s = common::start().await;
    let r = s.server.router();
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                        "type": "Opaque", "immutable": true, "data": {"k": "AAEC/w==", "e": ""}});
    let created = send(&r, "POST", "/api/v1/namespaces/default/secrets", PB, PB, pb(&secret)).await;
    assert_eq!(created.code, 201, "{:?}", created.value());
    let read = send(&r, "GET", "/api/v1/namespaces/default/secrets/s", "", "application/json", vec![]).await.value();
    assert_eq!(read["data"], json!({"k": "AAEC/w==", "e": ""}));
    assert_eq!((read["type"].as_str(), read["immutable"].as_bool()), (Some("Opaque"), Some(true)));

    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pb-ns"}});
    let created = send(&r, "POST", "/api/v1/namespaces", PB, PB, pb(&ns)).await;
    assert_eq!(created.code, 201, "{:?}", created.value());
    assert_eq!(created.value()["status"]["phase"], "Active");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_protobuf_statuses() {
    let s = common::start().await;
    let r = s.server.router();
    send(&r, "GET", &format!("{CMS}/missing"), "", PB, vec![]).await.assert_status(404, "NotFound");
    let cm = pb(&configmap("dup", json!({})));
    assert_eq!(send(&r, "POST", CMS, PB, PB, cm.clone()).await.code, 201);
    let conflict = send(&r, "POST", CMS, PB, PB, cm).await.assert_status(409, "AlreadyExists");
    assert_eq!(conflict["details"]["name"], "dup");
    let invalid = send(&r, "POST", CMS, PB, PB, pb(&configmap("Not_Valid", json!({})))).await;
    let invalid = invalid.assert_status(422, "Invalid");
    assert_eq!(invalid["details"]["causes"][0]["field"], "metadata.name", "{invalid}");

    // The envelope's kind must be the URL's.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}});
    send(&r, "POST", CMS, PB, PB, pb(&secret)).await.assert_status(400, "BadRequest");
    // client-go sends DeleteOptions as protobuf too, typed in the resource's group version.
    let opts = |uid: &str| pb(&json!({"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}));
    send(&r, "DELETE", &format!("{CMS}/dup"), PB, PB, opts("not-the-uid")).await.assert_status(409, "Conflict");
    let uid = send(&r, "GET", &format!("{CMS}/dup"), "", PB, vec![]).await.value()["metadata"]["uid"].clone();
    let deleted = send(&r, "DELETE", &format!("{CMS}/dup"), PB, PB, opts(uid.as_str().expect("uid"))).await;
    assert_eq!(deleted.code, 200, "{:?}", deleted.value());
    // A JSON client gets its errors in JSON.
    let json_err = send(&r, "GET", &format!("{CMS}/missing"), "", "application/json", vec![]).await;
    assert_eq!((json_err.code, json_err.content_type.as_str()), (404, "application/json"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_protobuf_bodies_answer_400() {
    let s = common::start().await;
    let r = s.server.router();
    for body in [&b"not protobuf"[..], b"k8s\0\xff\xff\xff", b"k8s\0\x0a\x05\x0a\x02v1", b"k8s\0\x12\x04\x0a\x02\x0a"] {
        let st = send(&r, "POST", CMS, PB, PB, body.to_vec()).await.assert_status(400, "BadRequest");
        assert!(st["message"].as_str().is_some_and(|m| m.contains("protobuf")), "{st}");
    }
    // Every truncation of a valid body: never a 500, always a Status or the object.
    let valid = pb(&configmap("cut", json!({"key": "value", "other": "x"})));
    for n in 0..valid.len() {
        let got = send(&r, "POST", CMS, PB, PB, valid[..n].to_vec()).await;
        assert!(got.code < 500, "truncated at {n}: {} {:?}", got.code, got.value());
        let v = got.value();
        assert!(v["kind"] == "Status" || v["kind"] == "ConfigMap", "truncated at {n}: {v}");
        if got.code == 201 {
            let name = v["metadata"]["name"].as_str().expect("name").to_string();
            send(&r, "DELETE", &format!("{CMS}/{name}"), "", PB, vec![]).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_stay_json() {
    let s = common::start().await;
    let r = s.server.router();
    let w = json!({"apiVersion": "example.drydock.dev/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 1}});
    let created = send(&r, "POST", WIDGETS, "application/json", "application/json", w.to_string().into_bytes()).await;
    assert_eq!(created.code, 201);
    let both =
        send(&r, "GET", &format!("{WIDGETS}/w"), "", "application/vnd.kubernetes.protobuf,application/json", vec![])
            .await;
    assert_eq!((both.code, both.content_type.as_str()), (200, "application/json"));
    assert_eq!(both.value()["spec"]["replicas"], 1);
    let st = send(&r, "GET", &format!("{WIDGETS}/w"), "", PB, vec![]).await.assert_status(406, "NotAcceptable");
    assert!(st["message"].as_str().is_some_and(|m| m.contains("protobuf")), "{st}");
    let list = send(&r, "GET", WIDGETS, "", "application/vnd.kubernetes.protobuf,application/json", vec![]).await;
    assert_eq!((list.code, list.content_type.as_str()), (200, "application/json"));
    // A protobuf body for a kind without a message is an unsupported media type.
    let both = "application/vnd.kubernetes.protobuf,application/json";
    let st = send(&r, "POST", WIDGETS, PB, both, pb(&configmap("x", json!({})))).await;
    st.assert_status(415, "UnsupportedMediaType");
    // Tables stay JSON even for protobuf-first clients.
    let table_accept = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let table = send(&r, "GET", CMS, "", table_accept, vec![]).await;
    assert_eq!(
        (table.code, table.content_type.as_str(), table.value()["kind"].as_str()),
        (200, "application/json", Some("Table"))
    );
}

/// Reads length-prefixed WatchEvent frames off a protobuf watch stream.
struct Frames {
    body: Body,
    buf: Vec<u8>,
}

impl Frames {
    async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if self.buf.len() >= 4 {
                let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
                if self.buf.len() >= 4 + len {
                    let frame: Vec<u8> = self.buf.drain(..4 + len).skip(4).collect();
                    let desc = protobuf::message("meta.k8s.io/v1", "WatchEvent").expect("WatchEvent");
                    return protobuf::decode_message(desc, &frame, 0).expect("watch event decodes");
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.frame()).await.expect("a watch frame in time");
            let chunk = chunk.expect("stream open").expect("chunk");
            if let Ok(data) = chunk.into_data() {
                self.buf.extend_from_slice(&data);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_watch_streams_events_and_bookmarks() {
    let s = common::start().await;
    let r = s.server.router();
    let rv0 = send(&r, "GET", CMS, "", PB, vec![]).await.value()["metadata"]["resourceVersion"].clone();
    let rv0 = rv0.as_str().expect("list resourceVersion").to_string();
    assert_eq!(send(&r, "POST", CMS, PB, PB, pb(&configmap("before", json!({"x": "1"})))).await.code, 201);
    // From a revision before "before": its creation is replayed.
    let req = Request::builder()
        .uri(format!("{CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=20&resourceVersion={rv0}"))
        .header("accept", "application/vnd.kubernetes.protobuf,application/json")
        .body(Body::empty())
        .expect("request");
    let resp = r.clone().oneshot(req).await.expect("infallible");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/vnd.kubernetes.protobuf;stream=watch");
    let mut frames = Frames { body: resp.into_body(), buf: Vec::new() };

    let first = frames.next().await;
    assert_eq!(first["type"], "ADDED");
    assert_eq!(
        (first["object"]["kind"].as_str(), first["object"]["metadata"]["name"].as_str()),
        (Some("ConfigMap"), Some("before"))
    );
    assert_eq!(first["object"]["data"], json!({"x": "1"}));

    let json_cm = configmap("after", json!({"y": "2"}));
    let created = send(&r, "POST", CMS, "application/json", "application/json", json_cm.to_string().into_bytes()).await;
    assert_eq!(created.code, 201);
    let ev = frames.next().await;
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"], created.value());

    // A write elsewhere moves the revision on; the next bookmark (every second in tests)
    // carries it, with the kind and nothing else.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "elsewhere"}});
    let other = send(&r, "POST", "/api/v1/namespaces/default/secrets", PB, PB, pb(&secret)).await.value();
    let moved = other["metadata"]["resourceVersion"].clone();
    loop {
        let ev = frames.next().await;
        if ev["type"] == "BOOKMARK" {
            assert_eq!(ev["object"]["kind"], "ConfigMap");
            assert_eq!(ev["object"]["metadata"]["resourceVersion"], moved, "{ev}");
            assert!(ev["object"].get("data").is_none(), "{ev}");
            break;
        }
    }
}

/// kubectl binaries that send protobuf for typed `create` subcommands.
const PROTOBUF_KUBECTLS: &[&str] = &["1.32", "1.33"];

/// The parts of an object a client chose (server-set metadata differs between two creates).
fn chosen(v: &Value) -> Value {
    json!({
        "kind": v["kind"], "apiVersion": v["apiVersion"], "data": v["data"], "binaryData": v["binaryData"],
        "type": v["type"], "immutable": v["immutable"], "labels": v["metadata"]["labels"],
        "annotations": v["metadata"]["annotations"], "spec": v["spec"], "status": v["status"],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_typed_creates_send_protobuf_and_match_json() {
    let s = common::start().await;
    let kubeconfig = s.kubeconfig(None);
    let binary = s.dir.path().join("blob.bin");
    std::fs::write(&binary, [0u8, 1, 2, 0xff, 0xfe]).expect("write binary file");
    let from_file = format!("--from-file=blob={}", binary.display());
    let client = s.client().await;
    let get = |path: String| {
        let client = client.clone();
        async move {
            let req = http::Request::get(path).body(Vec::new()).expect("request");
            client.request::<Value>(req).await.expect("read back")
        }
    };
    // kubectl 1.30 sends JSON: its objects are the reference.
    for version in ["1.30"].iter().chain(PROTOBUF_KUBECTLS) {
        let v = version.replace('.', "-");
        let kubectl = Kubectl::new(version, kubeconfig.clone());
        let k = |args: &[&str]| kubectl.run(args);
        k(&["create", "namespace", &format!("ns-{v}")]);
        k(&["create", "configmap", &format!("cm-{v}"), "--from-literal=a=1", "--from-literal=empty=", &from_file]);
        k(&["create", "secret", "generic", &format!("sec-{v}"), "--from-literal=user=admin", "--type=Opaque"]);
        k(&["create", "configmap", &format!("labelled-{v}"), "--from-literal=x=y", "--dry-run=client", "-o", "json"]);
        // describe reads through the typed (protobuf-first) client.
        let described = k(&["describe", "configmap", &format!("cm-{v}")]);
        assert!(described.contains("empty"), "{described}");
    }
    for version in PROTOBUF_KUBECTLS {
        let v = version.replace('.', "-");
        for (path, reference) in [
            (format!("/api/v1/namespaces/ns-{v}"), "/api/v1/namespaces/ns-1-30".to_string()),
            (format!("{CMS}/cm-{v}"), format!("{CMS}/cm-1-30")),
            (
                format!("/api/v1/namespaces/default/secrets/sec-{v}"),
                "/api/v1/namespaces/default/secrets/sec-1-30".into(),
            ),
        ] {
            let (got, want) = (get(path.clone()).await, get(reference).await);
            assert_eq!(chosen(&got), chosen(&want), "{path}");
            assert!(got["metadata"]["creationTimestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{got}");
            assert!(got["metadata"]["uid"].as_str().is_some(), "{got}");
        }
    }
    let cm = get(format!("{CMS}/cm-1-33")).await;
    assert_eq!(cm["data"], json!({"a": "1", "empty": ""}));
    assert_eq!(cm["binaryData"], json!({"blob": "AAEC//4="}));
    let secret = get("/api/v1/namespaces/default/secrets/sec-1-33".into()).await;
    assert_eq!(secret["data"], json!({"user": "YWRtaW4="}));
    assert_eq!(secret["type"], "Opaque");
}
