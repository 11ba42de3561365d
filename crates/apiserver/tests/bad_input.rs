//! Bad input gets the right Status and changes nothing: every malformed or invalid request
//! is answered with a `metav1.Status` carrying the expected code and reason, and the
//! store's revision does not move.

use crate::common;

use serde_json::{Value, json};

struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    content_type: &'static str,
    accept: &'static str,
    body: Vec<u8>,
    code: u16,
    reason: &'static str,
    message: &'static str,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: &str,
    body: impl Into<Vec<u8>>,
    code: u16,
    reason: &'static str,
    message: &'static str,
) -> Case {
    Case {
        name,
        method,
        path: path.to_string(),
        content_type: "application/json",
        accept: "application/json",
        body: body.into(),
        code,
        reason,
        message,
    }
}

async fn send(router: &axum::Router, method: &str, path: &str, ct: &str, accept: &str, body: Vec<u8>) -> (u16, Value) {
    let (code, _, bytes) = common::send_raw(router, method, path, ct, accept, body).await;
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const WIDGETS: &str = "/apis/example.drydock.dev/v1/namespaces/default/widgets";

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_status_and_change_nothing() {
    let s = common::start().await;
    let router = s.server.router();
    // One existing object to aim updates at.
    let (code, _) = send(
        &router,
        "POST",
        WIDGETS,
        "application/json",
        "application/json",
        json!({"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1}})
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(code, 201);
    let revision = s.server.api.store.revision();

    let big = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"big\"}},\"data\":{{\"x\":\"{}\"}}}}",
        "a".repeat(3 * 1024 * 1024 + 10)
    );
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let mut cases = vec![
        case("malformed JSON", "POST", CM, "{\"apiVersion\":", 400, "BadRequest", "couldn't decode"),
        case("JSON array body", "POST", CM, "[1,2]", 400, "BadRequest", "JSON object"),
        case("deeply nested JSON", "POST", CM, deep, 400, "BadRequest", "couldn't decode"),
        case(
            "wrong apiVersion",
            "POST",
            CM,
            r#"{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}"#,
            400,
            "BadRequest",
            "does not match the expected API version",
        ),
        case(
            "wrong kind",
            "POST",
            CM,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}"#,
            400,
            "BadRequest",
            "does not match the kind",
        ),
        case(
            "invalid name",
            "POST",
            CM,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#,
            422,
            "Invalid",
            "metadata.name: Invalid value: \"Bad_Name\"",
        ),
        case(
            "missing name",
            "POST",
            CM,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#,
            422,
            "Invalid",
            "metadata.name: Required value",
        ),
        case(
            "bad label",
            "POST",
            CM,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"not valid!"}}}"#,
            422,
            "Invalid",
            "metadata.labels[a]",
        ),
        case("oversized body", "POST", CM, big, 413, "RequestEntityTooLarge", "limit"),
        case(
            "unknown field under Strict",
            "POST",
            &format!("{WIDGETS}?fieldValidation=Strict"),
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"bogus":1}}"#,
            400,
            "BadRequest",
            "strict decoding error: unknown field \"spec.bogus\"",
        ),
        case(
            "wrong type",
            "POST",
            WIDGETS,
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"replicas":"three"}}"#,
            422,
            "Invalid",
            "spec.replicas in body must be of type integer",
        ),
        case(
            "bad fieldValidation",
            "POST",
            &format!("{CM}?fieldValidation=Loose"),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
            400,
            "BadRequest",
            "fieldValidation",
        ),
        case(
            "missing namespace",
            "POST",
            "/api/v1/namespaces/nope/configmaps",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
            404,
            "NotFound",
            "namespaces \"nope\" not found",
        ),
        case(
            "namespace mismatch",
            "POST",
            CM,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}"#,
            400,
            "BadRequest",
            "namespace of the provided object does not match",
        ),
        case(
            "name differs from URL",
            "PUT",
            &format!("{WIDGETS}/w"),
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"other","resourceVersion":"1"}}"#,
            400,
            "BadRequest",
            "does not match the name on the URL",
        ),
        case(
            "update without resourceVersion",
            "PUT",
            &format!("{WIDGETS}/w"),
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"w"}}"#,
            422,
            "Invalid",
            "must be specified for an update",
        ),
        case(
            "stale resourceVersion",
            "PUT",
            &format!("{WIDGETS}/w"),
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":"1"}}"#,
            409,
            "Conflict",
            "the object has been modified",
        ),
        case(
            "non-numeric resourceVersion in body",
            "PUT",
            &format!("{WIDGETS}/w"),
            r#"{"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":"abc"}}"#,
            400,
            "BadRequest",
            "invalid resource version",
        ),
        case(
            "bad label selector",
            "GET",
            &format!("{CM}?labelSelector=a%20in%20b"),
            "",
            400,
            "BadRequest",
            "unable to parse requirement",
        ),
        case(
            "unsupported field selector",
            "GET",
            &format!("{CM}?fieldSelector=spec.x%3D1"),
            "",
            400,
            "BadRequest",
            "field label not supported: spec.x",
        ),
        case(
            "bad continue token",
            "GET",
            &format!("{CM}?limit=1&continue=!!!"),
            "",
            400,
            "BadRequest",
            "continue key is not valid",
        ),
        case(
            "bad list resourceVersion",
            "GET",
            &format!("{CM}?resourceVersion=abc"),
            "",
            400,
            "BadRequest",
            "invalid resource version",
        ),
        case(
            "bad watch resourceVersion",
            "GET",
            &format!("{CM}?watch=true&resourceVersion=abc"),
            "",
            400,
            "BadRequest",
            "invalid resource version",
        ),
        case("bad limit", "GET", &format!("{CM}?limit=many"), "", 400, "BadRequest", "invalid limit"),
        case(
            "unknown resource",
            "GET",
            "/apis/example.drydock.dev/v1/namespaces/default/gadgets",
            "",
            404,
            "NotFound",
            "could not find the requested resource",
        ),
        case(
            "unknown object",
            "GET",
            &format!("{WIDGETS}/nope"),
            "",
            404,
            "NotFound",
            "widgets.example.drydock.dev \"nope\" not found",
        ),
        case(
            "unknown logical cluster",
            "GET",
            "/clusters/nowhere/api/v1/namespaces",
            "",
            404,
            "NotFound",
            "logical cluster \"nowhere\" not found",
        ),
        case("POST to a named object", "POST", &format!("{WIDGETS}/w"), "{}", 405, "MethodNotAllowed", "not allowed"),
        Case {
            content_type: "application/strategic-merge-patch+json",
            ..case(
                "strategic merge on a custom resource",
                "PATCH",
                &format!("{WIDGETS}/w"),
                r#"{"spec":{"replicas":2}}"#,
                415,
                "UnsupportedMediaType",
                "accepted media types",
            )
        },
        Case {
            content_type: "application/json-patch+json",
            ..case(
                "invalid JSON patch",
                "PATCH",
                &format!("{WIDGETS}/w"),
                r#"{"op":"add"}"#,
                400,
                "BadRequest",
                "invalid JSON patch",
            )
        },
        Case {
            content_type: "application/json-patch+json",
            ..case(
                "failed JSON patch test",
                "PATCH",
                &format!("{WIDGETS}/w"),
                r#"[{"op":"test","path":"/spec/replicas","value":7}]"#,
                422,
                "Invalid",
                "rejected",
            )
        },
        Case {
            content_type: "application/merge-patch+json",
            ..case(
                "negative scale",
                "PATCH",
                &format!("{WIDGETS}/w/scale"),
                r#"{"spec":{"replicas":-1}}"#,
                422,
                "Invalid",
                "spec.replicas",
            )
        },
        case("unknown subresource", "GET", &format!("{WIDGETS}/w/logs"), "", 404, "NotFound", "could not find"),
        case(
            "bad propagation policy",
            "DELETE",
            &format!("{WIDGETS}/w?propagationPolicy=Sideways"),
            "",
            400,
            "BadRequest",
            "propagationPolicy",
        ),
        case(
            "delete precondition",
            "DELETE",
            &format!("{WIDGETS}/w"),
            r#"{"preconditions":{"uid":"not-the-uid"}}"#,
            409,
            "Conflict",
            "Precondition failed",
        ),
    ];
    cases.push(Case {
        content_type: "application/yaml",
        ..case("malformed YAML", "POST", CM, "apiVersion: v1\nkind: [unclosed\n", 400, "BadRequest", "YAML")
    });
    cases.push(Case {
        content_type: "application/vnd.kubernetes.protobuf",
        // Custom resources have no protobuf message (built-in kinds: tests/protobuf.rs).
        ..case("protobuf body", "POST", WIDGETS, "k8s\0", 415, "UnsupportedMediaType", "unknown format")
    });
    cases.push(Case {
        content_type: "application/apply-patch+yaml",
        ..case(
            "apply without apiVersion",
            "PATCH",
            &format!("{WIDGETS}/w?fieldManager=me"),
            "spec: {}",
            400,
            "BadRequest",
            "Incorrect version specified in apply patch",
        )
    });
    cases.push(Case {
        content_type: "application/apply-patch+yaml",
        ..case(
            "apply without field manager",
            "PATCH",
            &format!("{WIDGETS}/w"),
            "spec: {}",
            422,
            "Invalid",
            "fieldManager: Required value",
        )
    });
    cases.push(Case {
        accept: "text/html",
        ..case("only HTML accepted", "GET", CM, "", 406, "NotAcceptable", "media types")
    });

    for c in cases {
        let (code, status) = send(&router, c.method, &c.path, c.content_type, c.accept, c.body).await;
        assert_eq!(code, c.code, "{}: {status}", c.name);
        assert_eq!(status["kind"], "Status", "{}: {status}", c.name);
        assert_eq!(status["code"], c.code, "{}", c.name);
        assert_eq!(status["reason"], c.reason, "{}: {status}", c.name);
        let msg = status["message"].as_str().unwrap_or_default();
        assert!(msg.contains(c.message), "{}: message {msg:?} lacks {:?}", c.name, c.message);
    }
    assert_eq!(s.server.api.store.revision(), revision, "a rejected request changed the store");
    let (code, w) = send(&router, "GET", &format!("{WIDGETS}/w"), "", "application/json", vec![]).await;
    assert_eq!(code, 200);
    assert_eq!(w["spec"]["replicas"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mangled_bodies_never_panic() {
    let s = common::start().await;
    let router = s.server.router();
    let valid = json!({"apiVersion":"example.drydock.dev/v1","kind":"Widget","metadata":{"name":"m","labels":{"a":"b"}},"spec":{"replicas":1,"color":"red"}}).to_string().into_bytes();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2000 {
        let mut body = valid.clone();
        for _ in 0..(next() % 4 + 1) {
            let i = (next() as usize) % body.len();
            match next() % 3 {
                0 => body[i] = (next() % 256) as u8,
                1 => {
                    body.remove(i);
                }
                _ => body.insert(i, b"{}[]\":,0a"[(next() % 9) as usize]),
            }
        }
        let method = ["POST", "PUT", "PATCH"][(next() % 3) as usize];
        let path = if method == "POST" { WIDGETS.to_string() } else { format!("{WIDGETS}/m") };
        let ct = if method == "PATCH" { "application/merge-patch+json" } else { "application/json" };
        let (code, status) = send(&router, method, &path, ct, "application/json", body).await;
        assert!(code < 500, "server error {code}: {status}");
        if code >= 400 {
            assert_eq!(status["kind"], "Status", "{status}");
        }
    }
}

const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const MIB: usize = 1024 * 1024;

async fn send_json(router: &axum::Router, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let ct = if method == "PATCH" { "application/merge-patch+json" } else { "application/json" };
    send(router, method, path, ct, "application/json", body.to_string().into_bytes()).await
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// ConfigMap data + binaryData and Secret data (decoded, stringData included) are limited
/// to 1 MiB, as kube-apiserver's validation does; exactly 1 MiB is fine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_and_secret_data_are_limited_to_one_mebibyte() {
    let s = common::start().await;
    let router = s.server.router();
    let revision = s.server.api.store.revision();
    let cm = |name: &str, extra: Value| {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        v.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        v
    };
    let secret = |extra: Value| {
        let mut v = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"}});
        v.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        v
    };
    let half = "a".repeat(MIB / 2);
    let too_big = [
        (CM, cm("big", json!({"data": {"x": "a".repeat(2 * MIB)}})), "ConfigMap", "[]"),
        (
            CM,
            cm("big", json!({"data": {"x": half}, "binaryData": {"y": b64(&vec![0; MIB / 2 + 1])}})),
            "ConfigMap",
            "[]",
        ),
        (SECRETS, secret(json!({"data": {"x": b64(&vec![0; MIB + 1])}})), "Secret", "data"),
        (
            SECRETS,
            secret(json!({"data": {"x": b64(half.as_bytes())}, "stringData": {"y": format!("{half}!")}})),
            "Secret",
            "data",
        ),
    ];
    for (path, body, kind, field) in too_big {
        let (code, status) = send_json(&router, "POST", path, &body).await;
        assert_eq!(code, 422, "{status}");
        assert_eq!(status["reason"], "Invalid");
        let want = format!("{kind} \"big\" is invalid: {field}: Too long: must have at most 1048576 bytes");
        assert_eq!(status["message"], want.as_str());
        assert_eq!(status["details"]["causes"][0]["reason"], "FieldValueTooLong");
        assert_eq!(status["details"]["causes"][0]["field"], field);
    }
    assert_eq!(s.server.api.store.revision(), revision, "an oversized object was stored");

    let (code, status) = send_json(&router, "POST", CM, &cm("exact", json!({"data": {"x": "a".repeat(MIB)}}))).await;
    assert_eq!(code, 201, "{status}");
    let exact =
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "exact"}, "data": {"x": b64(&vec![0; MIB])}});
    let (code, status) = send_json(&router, "POST", SECRETS, &exact).await;
    assert_eq!(code, 201, "{status}");
    // Growing past the limit later is refused too.
    let (code, status) = send_json(&router, "PATCH", &format!("{CM}/exact"), &json!({"data": {"y": "b"}})).await;
    assert_eq!(code, 422, "{status}");
    let (code, status) =
        send_json(&router, "PATCH", &format!("{SECRETS}/exact"), &json!({"stringData": {"y": "b"}})).await;
    assert_eq!(code, 422, "{status}");
}

/// A deletion left pending is answered with the object, 202 when the client asked
/// `orphanDependents: false`; an object removed at once with a Status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_codes_and_bodies_over_http() {
    let s = common::start().await;
    let router = s.server.router();
    let held = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    assert_eq!(send_json(&router, "POST", CM, &held).await.0, 201);
    let no_orphans = json!({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": false});
    let (code, obj) = send_json(&router, "DELETE", &format!("{CM}/held"), &no_orphans).await;
    assert_eq!(code, 202, "{obj}");
    assert_eq!(obj["kind"], "ConfigMap");
    assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
    let (code, obj) = send(&router, "DELETE", &format!("{CM}/held"), "", "application/json", vec![]).await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(obj["kind"], "ConfigMap");

    let (_, created) = send_json(
        &router,
        "POST",
        WIDGETS,
        &json!({"apiVersion": "example.drydock.dev/v1",
        "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 1}}),
    )
    .await;
    let (code, status) =
        send(&router, "DELETE", &format!("{WIDGETS}/w?orphanDependents=false"), "", "application/json", vec![]).await;
    assert_eq!(code, 200, "{status}");
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "w", "group": "example.drydock.dev", "kind": "widgets", "uid": created["metadata"]["uid"]}})
    );
}
