//! `/openapi/v2` and `/openapi/v3`: what kubectl 1.27 to 1.33 do with them (`explain`,
//! `create -f` and `apply -f` without warnings, at the root and in a logical cluster), the
//! v3 index's hashes, redirects and caching headers, and that every `$ref` resolves.

use crate::common;

use axum::body::Body;
use common::kubectl::Kubectl;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

fn assert_mentions(output: &str, words: &[&str]) {
    for w in words {
        assert!(output.contains(w), "{w:?} missing from:\n{output}");
    }
}

/// `kubectl explain` of a built-in kind, a Cluster API kind and the test's Widget.
fn explain(k: &Kubectl) {
    let cm = k.clean(&["explain", "configmaps"], None);
    assert_mentions(&cm, &["ConfigMap", "binaryData", "immutable", "apiVersion", "metadata"]);
    let containers = k.clean(&["explain", "pods.spec.containers"], None);
    assert_mentions(&containers, &["containers", "image", "livenessProbe", "volumeMounts"]);
    // Descriptions come along, the field's own and those of the nested type's fields.
    assert_mentions(&containers, &["List of containers belonging to the pod", "Container image name"]);
    let resources = k.clean(&["explain", "pods.spec.containers.resources"], None);
    assert_mentions(&resources, &["limits", "requests"]);
    let meta = k.clean(&["explain", "configmaps.metadata"], None);
    assert_mentions(&meta, &["ObjectMeta", "labels", "ownerReferences", "resourceVersion"]);

    let cluster = k.clean(&["explain", "clusters.spec"], None);
    assert_mentions(&cluster, &["cluster.x-k8s.io", "controlPlaneEndpoint", "clusterNetwork", "infrastructureRef"]);
    let template = k.clean(&["explain", "machinedeployments.spec.template"], None);
    assert_mentions(&template, &["MachineDeployment", "metadata", "spec"]);
    let template_spec = k.clean(&["explain", "machinedeployments.spec.template.spec"], None);
    assert_mentions(&template_spec, &["bootstrap", "clusterName", "infrastructureRef"]);

    let widget = k.clean(&["explain", "widgets.spec"], None);
    assert_mentions(&widget, &["Widget", "color", "replicas", "note"]);
    let recursive = k.clean(&["explain", "clusters", "--recursive"], None);
    assert_mentions(&recursive, &["controlPlaneEndpoint", "host", "port", "conditions", "lastTransitionTime"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_reads_real_schemas_at_the_root_and_in_a_logical_cluster() {
    let s = common::start_with_capi().await;
    let root = s.kubeconfig(None);
    for v in ["1.27", "1.33"] {
        tokio::task::block_in_place(|| explain(&Kubectl::new(v, root.clone())));
    }
    let k = Kubectl::new("1.33", root);
    tokio::task::block_in_place(|| {
        k.clean(
            &["create", "-f", "-"],
            Some("apiVersion: tenancy.drydock.dev/v1alpha1\nkind: LogicalCluster\nmetadata:\n  name: team-a\n"),
        )
    });
    let inner = s.kubeconfig(Some("team-a"));
    for v in ["1.27", "1.33"] {
        tokio::task::block_in_place(|| {
            let k = Kubectl::new(v, inner.clone());
            // A workload cluster serves the built-in kinds, not the root's Cluster API CRDs.
            assert_mentions(&k.clean(&["explain", "configmaps"], None), &["binaryData"]);
            assert_mentions(&k.clean(&["explain", "deployments.spec.strategy"], None), &["rollingUpdate"]);
            let err = k.output(&["explain", "clusters.spec"], None);
            assert!(!err.status.success(), "clusters are not served in a workload cluster");
        });
    }
}

const WIDGET: &str = "apiVersion: example.drydock.dev/v1
kind: Widget
metadata:
  name: NAME
spec:
  replicas: 1
  color: red
";

const CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME
data:
  a: \"1\"
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_and_apply_print_no_openapi_warnings() {
    let s = common::start_with_capi().await;
    let root = s.kubeconfig(None);
    for v in ["1.27", "1.28", "1.33"] {
        let name = format!("v{}", v.replace('.', "-"));
        tokio::task::block_in_place(|| {
            let k = Kubectl::new(v, root.clone());
            k.clean(&["create", "-f", "-"], Some(&CONFIGMAP.replace("NAME", &name)));
            k.clean(&["apply", "-f", "-"], Some(&WIDGET.replace("NAME", &name)));
            k.clean(&["apply", "-f", "-"], Some(&WIDGET.replace("NAME", &name).replace("red", "blue")));
            let applied = format!("{name}-applied");
            k.clean(&["apply", "-f", "-"], Some(&CONFIGMAP.replace("NAME", &applied)));
            k.clean(&["apply", "-f", "-"], Some(&CONFIGMAP.replace("NAME", &applied).replace("\"1\"", "\"2\"")));
            assert_eq!(k.clean(&["get", "widget", &name, "-o", "jsonpath={.spec.color}"], None), "blue");
            assert_eq!(k.clean(&["get", "cm", &applied, "-o", "jsonpath={.data.a}"], None), "2");
            // Server-side field validation still rejects unknown fields.
            let bad = WIDGET.replace("NAME", &format!("{name}-bad")).replace("color: red", "colour: red");
            let out = k.output(&["create", "-f", "-"], Some(&bad));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && stderr.contains("colour"), "{v}: {stderr}");
        });
    }
}

struct Answer {
    status: StatusCode,
    headers: http::HeaderMap,
    body: bytes::Bytes,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

async fn get(router: &axum::Router, uri: &str, headers: &[(&str, &str)]) -> Answer {
    let mut req = Request::builder().uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = router.clone().oneshot(req.body(Body::empty()).expect("request")).await.expect("infallible");
    let (parts, body) = resp.into_parts();
    Answer { status: parts.status, headers: parts.headers, body: body.collect().await.expect("body").to_bytes() }
}

fn sha512_hex(body: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA512, body).as_ref().iter().map(|b| format!("{b:02X}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_index_hashes_redirects_and_caching_headers() {
    let s = common::start().await;
    let router = s.server.router();
    let index = get(&router, "/openapi/v3", &[]).await;
    assert_eq!(index.status, StatusCode::OK);
    let index = index.json();
    let url = index["paths"]["api/v1"]["serverRelativeURL"].as_str().expect("api/v1 in the index").to_string();
    assert!(index["paths"]["apis/example.drydock.dev/v1"].is_object(), "{index}");
    let (path, hash) = url.split_once("?hash=").expect("hash in URL");
    assert_eq!(path, "/openapi/v3/api/v1");

    let doc = get(&router, &url, &[]).await;
    assert_eq!(doc.status, StatusCode::OK);
    assert_eq!(sha512_hex(&doc.body), hash, "the hash is the SHA-512 of the document");
    assert_eq!(doc.header("cache-control"), "public, immutable");
    assert_eq!(doc.header("vary"), "Accept");
    assert_eq!(doc.header("etag"), format!("\"{hash}\""));
    let expires = httpdate::parse_http_date(doc.header("expires")).expect("Expires is an HTTP date");
    assert!(expires > std::time::SystemTime::now() + std::time::Duration::from_secs(360 * 24 * 3600));
    assert_eq!(doc.json()["openapi"], "3.0.0");

    let stale = get(&router, &format!("{path}?hash=0123"), &[]).await;
    assert_eq!(stale.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(stale.header("location"), url);

    let unchanged = get(&router, path, &[("if-none-match", doc.header("etag"))]).await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    let unhashed = get(&router, path, &[]).await;
    assert_eq!(unhashed.body, doc.body);
    assert_ne!(unhashed.header("cache-control"), "public, immutable");

    let proto = get(&router, &url, &[("accept", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf")]).await;
    assert_eq!(proto.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(proto.json()["reason"], "NotAcceptable");
    assert_eq!(get(&router, "/openapi/v3/apis/nothing.example/v1", &[]).await.status, StatusCode::NOT_FOUND);

    // In a logical cluster the index points inside it.
    let inner = get(&router, "/clusters/team-b/openapi/v3", &[]).await.json();
    let inner_url = inner["paths"]["api/v1"]["serverRelativeURL"].as_str().expect("api/v1").to_string();
    assert_eq!(inner_url, format!("/clusters/team-b{url}"));
    assert_eq!(get(&router, &inner_url, &[]).await.body, doc.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_is_json_with_an_etag_or_an_empty_protobuf_document() {
    let s = common::start().await;
    let router = s.server.router();
    let v2 = get(&router, "/openapi/v2", &[("accept", "application/json")]).await;
    assert_eq!(v2.status, StatusCode::OK);
    assert_eq!(v2.header("etag"), format!("\"{}\"", sha512_hex(&v2.body)));
    assert_eq!(v2.json()["swagger"], "2.0");
    let again = get(&router, "/openapi/v2", &[("if-none-match", v2.header("etag"))]).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    // kubectl 1.27 and 1.28 ask for protobuf with `@` in the media type.
    for accept in [
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ] {
        let proto = get(&router, "/openapi/v2", &[("accept", accept)]).await;
        assert_eq!(proto.status, StatusCode::OK);
        assert_eq!(proto.header("content-type"), "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
        assert!(proto.body.is_empty());
    }
    let refused = get(&router, "/openapi/v2", &[("accept", "text/html")]).await;
    assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE);
}

/// Every `$ref` under `v` (keys of `properties` are names, so a property called `$ref`
/// is not one).
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    ("properties", Value::Object(props)) => props.values().for_each(|p| refs(p, out)),
                    _ => refs(child, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Every operation's kind has a schema naming that kind, which is how `kubectl explain`
/// finds it.
fn assert_operation_kinds_have_schemas(doc: &Value, schemas: &serde_json::Map<String, Value>, where_: &str) {
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            let Some(gvk) = op.get("x-kubernetes-group-version-kind") else { continue };
            assert!(op["x-kubernetes-action"].is_string(), "{where_} {method} {path}");
            let found = schemas
                .values()
                .any(|s| s["x-kubernetes-group-version-kind"].as_array().is_some_and(|kinds| kinds.contains(gvk)));
            assert!(found, "{where_}: no schema for {gvk} of {method} {path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_resolves_and_every_operation_kind_has_a_schema() {
    let s = common::start_with_capi().await;
    let router = s.server.router();
    let index = get(&router, "/openapi/v3", &[]).await.json();
    let mut documents = 0;
    for (gv, entry) in index["paths"].as_object().expect("paths") {
        let doc = get(&router, entry["serverRelativeURL"].as_str().expect("url"), &[]).await.json();
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(!found.is_empty(), "{gv}");
        for r in found {
            let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{gv}: foreign $ref {r}"));
            assert!(schemas.contains_key(name), "{gv}: {r} does not resolve");
        }
        assert_operation_kinds_have_schemas(&doc, schemas, gv);
        documents += 1;
    }
    assert!(documents >= 5, "{index}");

    let v2 = get(&router, "/openapi/v2", &[]).await.json();
    let definitions = v2["definitions"].as_object().expect("definitions");
    assert!(definitions.contains_key("io.x-k8s.cluster.v1beta1.Cluster"), "{:?}", definitions.keys());
    assert!(definitions.contains_key("io.k8s.api.core.v1.ConfigMapList"));
    let mut found = Vec::new();
    refs(&v2, &mut found);
    for r in found {
        let name = r.strip_prefix("#/definitions/").unwrap_or_else(|| panic!("v2: foreign $ref {r}"));
        assert!(definitions.contains_key(name), "v2: {r} does not resolve");
    }
    assert_operation_kinds_have_schemas(&v2, definitions, "v2");
}
