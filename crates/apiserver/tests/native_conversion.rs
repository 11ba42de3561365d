//! drydock's own kinds served in several versions: an object written in one version reads
//! in every other, admission runs whatever version a client writes, the deprecated version
//! warns, and `POST /convert` answers ConversionReviews as a conversion webhook does.

use crate::common;

use serde_json::{Value, json};

const V1: &str = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinedrainrules";
const V2: &str = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedrainrules";

fn rule(api_version: &str, name: &str, order: i64) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": "MachineDrainRule",
        "metadata": {"name": name},
        "spec": {"drain": {"behavior": "Drain", "order": order}, "pods": [{"selector": {"matchLabels": {"app": "db"}}}]},
    })
}

async fn send(router: &axum::Router, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let (code, body, _) = send_with_warnings(router, method, path, body).await;
    (code, body)
}

async fn send_with_warnings(
    router: &axum::Router,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value, Vec<String>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let bytes = body.map(|b| serde_json::to_vec(b).expect("json")).unwrap_or_default();
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(bytes))
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let code = resp.status().as_u16();
    let warnings =
        resp.headers().get_all("warning").iter().map(|v| v.to_str().unwrap_or_default().to_string()).collect();
    let out = resp.into_body().collect().await.expect("body").to_bytes();
    (code, serde_json::from_slice(&out).unwrap_or(Value::Null), warnings)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_object_written_in_one_version_reads_in_the_other() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let (code, created) = send(&router, "POST", V1, Some(&rule("cluster.x-k8s.io/v1beta1", "old", 5))).await;
    assert_eq!(code, 201, "{created}");
    let (code, read) = send(&router, "GET", &format!("{V2}/old"), None).await;
    assert_eq!(code, 200, "{read}");
    assert_eq!(read["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(read["spec"], created["spec"]);
    assert_eq!(read["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);

    let (code, created) = send(&router, "POST", V2, Some(&rule("cluster.x-k8s.io/v1beta2", "new", -1))).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["apiVersion"], "cluster.x-k8s.io/v1beta2");
    let (code, list) = send(&router, "GET", V1, None).await;
    assert_eq!(code, 200);
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|i| i["apiVersion"] == "cluster.x-k8s.io/v1beta1"), "{list}");
    let new = items.iter().find(|i| i["metadata"]["name"] == "new").expect("new");
    assert_eq!(new["spec"]["drain"]["order"], -1);
}

#[tokio::test(flavor = "multi_thread")]
async fn admission_runs_on_writes_of_either_version() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let mut bad = rule("cluster.x-k8s.io/v1beta2", "bad", 0);
    bad["spec"]["drain"] = json!({"behavior": "Skip", "order": 3});
    let (code, status) = send(&router, "POST", V2, Some(&bad)).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert!(status["message"].as_str().unwrap_or_default().contains("spec.drain.order"), "{status}");
}

/// v1beta2 holds durations as whole seconds: a v1beta1 duration that does not parse has no
/// v1beta2 form, so the write is refused (naming the field as the client wrote it) and
/// nothing is stored, instead of the value being dropped on the way to storage.
#[tokio::test(flavor = "multi_thread")]
async fn an_unconvertible_v1beta1_duration_is_refused_and_nothing_stored() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let mhcs = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinehealthchecks";
    let mhc = |timeout: &str| {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineHealthCheck",
            "metadata": {"name": "workers"},
            "spec": {"clusterName": "c", "selector": {"matchLabels": {"pool": "a"}},
                     "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": timeout}]},
        })
    };
    let (code, status) = send(&router, "POST", mhcs, Some(&mhc("five minutes"))).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.unhealthyConditions[0].timeout") && message.contains("invalid duration"),
        "{status}"
    );
    let (code, _) = send(&router, "GET", &format!("{mhcs}/workers"), None).await;
    assert_eq!(code, 404, "nothing was stored");

    let (code, created) = send(&router, "POST", mhcs, Some(&mhc("5m"))).await;
    assert_eq!(code, 201, "{created}");
    let (_, read) =
        send(&router, "GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinehealthchecks/workers", None)
            .await;
    assert_eq!(read["spec"]["checks"]["unhealthyNodeConditions"][0]["timeoutSeconds"], 300, "{read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deprecated_version_warns() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let (code, _, warnings) = send_with_warnings(&router, "GET", V1, None).await;
    assert_eq!(code, 200);
    assert!(
        warnings.iter().any(|w| w.contains("cluster.x-k8s.io/v1beta1 MachineDrainRule is deprecated")),
        "{warnings:?}"
    );
    let (_, _, warnings) = send_with_warnings(&router, "GET", V2, None).await;
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn convert_answers_conversion_reviews() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let review = |objects: Vec<Value>, desired: &str| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": objects},
        })
    };
    let objects = vec![rule("cluster.x-k8s.io/v1beta1", "a", 1), rule("cluster.x-k8s.io/v1beta1", "b", 2)];
    let (code, out) = send(&router, "POST", "/convert", Some(&review(objects, "cluster.x-k8s.io/v1beta2"))).await;
    assert_eq!(code, 200, "{out}");
    let resp = &out["response"];
    assert_eq!((resp["uid"].as_str(), resp["result"]["status"].as_str()), (Some("u-1"), Some("Success")), "{out}");
    let converted = resp["convertedObjects"].as_array().expect("objects");
    assert_eq!(converted.len(), 2);
    assert_eq!(converted[1]["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(converted[1]["spec"]["drain"]["order"], 2);

    let foreign = vec![json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})];
    let (code, out) = send(&router, "POST", "/convert", Some(&review(foreign, "example.com/v2"))).await;
    assert_eq!(code, 200);
    assert_eq!(out["response"]["result"]["status"], "Failure", "{out}");
    assert!(out["response"]["result"]["message"].as_str().unwrap_or_default().contains("does not convert"), "{out}");

    let (code, status) = send(&router, "POST", "/convert", Some(&json!({"kind": "Pod"}))).await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(status["kind"], "Status");
}

/// A merge patch of a Machine's status (as the controllers send), with the manager of a
/// field seen in v1beta1 (in v1beta2 the same field lives elsewhere).
async fn patch_status(router: &axum::Router, version: &str, manager: &str, body: &Value) -> (u16, Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let path = format!("/apis/cluster.x-k8s.io/{version}/namespaces/default/machines/m/status?fieldManager={manager}");
    let req = http::Request::builder()
        .method("PATCH")
        .uri(path)
        .header("content-type", "application/merge-patch+json")
        .body(axum::body::Body::from(serde_json::to_vec(body).expect("json")))
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let code = resp.status().as_u16();
    let out = resp.into_body().collect().await.expect("body").to_bytes();
    (code, serde_json::from_slice(&out).unwrap_or(Value::Null))
}

fn fields_of(obj: &Value, manager: &str) -> Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["manager"] == manager))
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

/// Writes through the status leave the spec as stored and the other way round (the server
/// then does not parse what a write cannot change); a manager recorded in another version
/// still loses what the write changed as that version sees it, which needs the whole object.
#[tokio::test(flavor = "multi_thread")]
async fn writes_through_one_part_keep_the_other_and_managers_of_other_versions() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let machines = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines";
    let machine = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": {"name": "m"},
        "spec": {"clusterName": "c", "bootstrap": {"dataSecretName": "d"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachine", "name": "m"}},
    });
    let (code, created) = send(&router, "POST", machines, Some(&machine)).await;
    assert_eq!(code, 201, "{created}");

    let ready = |status: &str, at: &str| json!([{"type": "Ready", "status": status, "lastTransitionTime": at}]);
    let (code, old) = patch_status(
        &router,
        "v1beta1",
        "old",
        &json!({"status": {"conditions": ready("False", "2026-01-01T00:00:00Z")}}),
    )
    .await;
    assert_eq!(code, 200, "{old}");
    // v1beta1's conditions are an atomic list, owned whole.
    assert!(fields_of(&old, "old")["f:status"]["f:conditions"].is_object(), "{old}");

    let body = json!({"status": {"phase": "Running",
        "deprecated": {"v1beta1": {"conditions": ready("True", "2026-01-02T00:00:00Z")}}}});
    let (code, new) = patch_status(&router, "v1beta2", "new", &body).await;
    assert_eq!(code, 200, "{new}");
    assert_eq!(new["spec"], created["spec"], "the spec is as stored");
    assert_eq!(new["metadata"]["generation"], created["metadata"]["generation"]);
    assert_eq!(new["status"]["phase"], "Running");
    assert_eq!(new["status"]["deprecated"]["v1beta1"]["conditions"][0]["status"], "True");
    // v1beta1 sees the write change its status.conditions: "old" no longer owns them.
    assert!(fields_of(&new, "old")["f:status"]["f:conditions"].is_null(), "{new}");
    assert!(fields_of(&new, "new")["f:status"]["f:phase"].is_object(), "{new}");

    // A write of the main resource keeps the status as stored, and bumps the generation.
    let req = http::Request::builder()
        .method("PATCH")
        .uri(format!("{machines}/m?fieldManager=spec-writer"))
        .header("content-type", "application/merge-patch+json")
        .body(axum::body::Body::from(
            json!({"metadata": {"labels": {"l": "1"}}, "spec": {"clusterName": "c", "minReadySeconds": 5},
                   "status": {"phase": "Ignored"}})
            .to_string(),
        ))
        .expect("request");
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let resp = router.clone().oneshot(req).await.expect("infallible");
    assert_eq!(resp.status().as_u16(), 200);
    let spec_written: Value =
        serde_json::from_slice(&resp.into_body().collect().await.expect("body").to_bytes()).expect("json");
    assert_eq!(spec_written["status"], new["status"], "the status is as stored");
    assert_eq!(spec_written["spec"]["minReadySeconds"], 5);
    assert_eq!(spec_written["metadata"]["labels"]["l"], "1");
    let generation = |o: &Value| o["metadata"]["generation"].as_i64().unwrap_or_default();
    assert_eq!(generation(&spec_written), generation(&new) + 1);
    let (_, read) = send(&router, "GET", &format!("{machines}/m"), None).await;
    assert_eq!(read, spec_written, "what was answered is what is stored");
}
