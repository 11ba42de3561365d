//! CustomResourceDefinitions served at runtime: established and served (kubectl 1.33 and
//! kube-rs), name conflicts, validation, several versions with None and webhook conversion,
//! deprecation warnings, logical-cluster isolation, deletion, restart, drydock's own kinds.

use crate::common;

use std::time::Duration;

use common::eventually;
use common::kubectl::Kubectl;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

const GADGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: gadgets
    singular: gadget
    kind: Gadget
    shortNames: [gd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: string
      jsonPath: .spec.size
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

const GADGET: &str = "apiVersion: example.com/v1
kind: Gadget
metadata:
  name: g1
spec:
  size: large
  replicas: 1
";

fn condition(crd: &Value, type_: &str) -> Option<(String, String)> {
    crd["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| (c["status"].as_str().unwrap_or("").to_string(), c["reason"].as_str().unwrap_or("").to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_a_crd_and_serves_its_instances() {
    let s = common::start().await;
    let k = Kubectl::new("1.33", s.kubeconfig(None));
    tokio::task::block_in_place(|| {
        k.run_in(&["apply", "-f", "-"], Some(GADGET_CRD));
        k.run(&["wait", "--for=condition=established", "crd/gadgets.example.com", "--timeout=20s"]);
        let crd = k.json(&["get", "crd", "gadgets.example.com"]);
        assert_eq!(condition(&crd, "NamesAccepted"), Some(("True".into(), "NoConflicts".into())));
        assert_eq!(crd["status"]["acceptedNames"]["kind"], "Gadget");
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        let resources = k.run(&["api-resources", "--api-group=example.com"]);
        assert!(resources.contains("gadgets") && resources.contains("gd"), "{resources}");

        k.run_in(&["create", "-f", "-"], Some(GADGET));
        let table = k.run(&["get", "gd", "g1"]);
        assert!(table.contains("SIZE") && table.contains("large"), "{table}");
        k.run(&["scale", "gadget", "g1", "--replicas=3"]);
        assert_eq!(k.json(&["get", "gadget", "g1"])["spec"]["replicas"], 3);
        k.run(&["patch", "gadget", "g1", "--subresource=status", "--type=merge", "-p", r#"{"status":{"replicas":3}}"#]);
        let g = k.json(&["get", "gadget", "g1"]);
        assert_eq!(g["status"]["replicas"], 3);
        let listed = k.json(&["get", "gadgets"]);
        assert_eq!(listed["items"].as_array().map(Vec::len), Some(1));
        k.run(&["delete", "gadget", "g1", "--wait=true", "--timeout=20s"]);
        assert!(k.fails(&["get", "gadget", "g1"]).contains("NotFound"));
    });
}

fn gadget_ar(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", version, "Gadget"), "gadgets")
}

fn dynamic(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("object")
}

async fn create_crd(client: &kube::Client, crd: Value) -> Api<CustomResourceDefinition> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &serde_json::from_value(crd).expect("crd")).await.expect("create crd");
    crds
}

async fn established(crds: &Api<CustomResourceDefinition>, name: &str) -> Value {
    eventually("CRD established", WAIT, || async {
        let crd = serde_json::to_value(crds.get(name).await.ok()?).ok()?;
        (condition(&crd, "Established").map(|c| c.0) == Some("True".into())).then_some(crd)
    })
    .await
}

fn gadget_crd_json() -> Value {
    let v: Value = serde_saphyr::from_str(GADGET_CRD).expect("yaml");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_watches_instances_of_a_new_crd() {
    let s = common::start().await;
    let client = s.client().await;
    let crds = create_crd(&client, gadget_crd_json()).await;
    established(&crds, "gadgets.example.com").await;
    let gadgets = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v1"));
    let mut stream = gadgets.watch(&WatchParams::default(), "0").await.expect("watch").boxed();
    gadgets
        .create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "w1"}, "spec": {"size": "s", "unknown": 1}})),
        )
        .await
        .expect("create");
    let added = tokio::time::timeout(WAIT, async {
        while let Some(ev) = stream.try_next().await.expect("event") {
            if let WatchEvent::Added(o) = ev {
                return o;
            }
        }
        panic!("watch ended");
    })
    .await
    .expect("ADDED in time");
    assert_eq!(added.data["spec"]["size"], "s");
    assert!(added.data["spec"].get("unknown").is_none(), "unknown fields are pruned");
    assert_eq!(gadgets.list(&ListParams::default()).await.expect("list").items.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicting_names_are_not_accepted_and_invalid_crds_are_refused() {
    let s = common::start().await;
    let client = s.client().await;
    let crds = create_crd(&client, gadget_crd_json()).await;
    established(&crds, "gadgets.example.com").await;
    let mut other = gadget_crd_json();
    other["metadata"]["name"] = json!("gizmos.example.com");
    other["spec"]["names"] = json!({"plural": "gizmos", "kind": "Gizmo", "shortNames": ["gd"]});
    crds.create(&PostParams::default(), &serde_json::from_value(other).expect("crd")).await.expect("create");
    let crd = eventually("names rejected", WAIT, || async {
        let crd = serde_json::to_value(crds.get("gizmos.example.com").await.ok()?).ok()?;
        condition(&crd, "NamesAccepted").is_some().then_some(crd)
    })
    .await;
    assert_eq!(condition(&crd, "NamesAccepted"), Some(("False".into(), "ShortNamesConflict".into())));
    assert_eq!(condition(&crd, "Established").map(|c| c.0), Some("False".into()));
    let path = "/apis/example.com/v1/namespaces/default/gizmos";
    assert_eq!(status_of(&s, path).await, 404, "a CRD whose names are not accepted is not served");

    let mut bad = gadget_crd_json();
    bad["metadata"]["name"] = json!("things.example.com");
    bad["spec"]["names"] = json!({"plural": "Things", "kind": "Thing"});
    bad["spec"]["versions"][0]["storage"] = json!(false);
    let err =
        crds.create(&PostParams::default(), &serde_json::from_value(bad).expect("crd")).await.expect_err("invalid");
    let kube::Error::Api(status) = err else { panic!("{err:?}") };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    for field in ["metadata.name", "spec.names.plural", "spec.versions"] {
        assert!(status.message.contains(field), "{field} missing: {}", status.message);
    }
}

/// Status code of a GET of `path`, whatever the body.
async fn status_of(s: &common::TestServer, path: &str) -> u16 {
    let req = http::Request::get(path).body(Vec::new()).expect("request");
    s.client().await.send(req.map(kube::client::Body::from)).await.map_or(0, |r| r.status().as_u16())
}

fn two_versions(conversion: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "conversion": conversion,
            "versions": [
                {"name": "v1", "served": true, "storage": false, "deprecated": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "string"}}}}}}},
                {"name": "v2", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string"}, "color": {"type": "string", "default": "blue"}}}}}}}
            ]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_convert_with_none_and_warn_when_deprecated() {
    let s = common::start().await;
    let client = s.client().await;
    let crds = create_crd(&client, two_versions(json!({"strategy": "None"}))).await;
    established(&crds, "gadgets.example.com").await;
    let v1 = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v1"));
    let v2 = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v2"));
    v1.create(
        &PostParams::default(),
        &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "old"}, "spec": {"size": "s"}})),
    )
    .await
    .expect("create through v1");
    let as_v2 = v2.get("old").await.expect("get v2");
    assert_eq!(as_v2.types.as_ref().map(|t| t.api_version.as_str()), Some("example.com/v2"));
    assert_eq!(as_v2.data["spec"]["color"], "blue", "read defaults of the storage version");
    v2.patch("old", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(json!({"spec": {"color": "red"}})))
        .await
        .expect("patch v2");
    let as_v1 = v1.get("old").await.expect("get v1");
    assert_eq!(as_v1.types.as_ref().map(|t| t.api_version.as_str()), Some("example.com/v1"));
    assert!(as_v1.data["spec"].get("color").is_none(), "pruned by v1's schema: {:?}", as_v1.data);
    assert_eq!(as_v1.data["spec"]["size"], "s");
    let stored = s.server.api.store.scan(Some("root"), Some("default"));
    let raw = stored.iter().find(|(k, _)| k.name == "old").expect("stored").1.to_value().expect("json");
    assert_eq!(raw["apiVersion"], "example.com/v2", "stored at the storage version");

    let k = Kubectl::new("1.33", s.kubeconfig(None));
    tokio::task::block_in_place(|| {
        let out = k.output(&["get", "gadgets.v1.example.com", "old"], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("example.com/v1 Gadget is deprecated; use example.com/v2 Gadget"),
            "deprecation warning: {stderr}"
        );
    });
}

/// A conversion webhook: answers each review by rewriting apiVersion (and trying to change
/// the generation, which the server must undo); fails when asked to by the object.
async fn convert(body: axum::body::Bytes) -> ([(http::header::HeaderName, &'static str); 1], String) {
    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
    let req = &review["request"];
    let desired = req["desiredAPIVersion"].as_str().unwrap_or("").to_string();
    let mut fail = None;
    let converted: Vec<Value> = req["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let mut o = o.clone();
            if o["spec"]["size"] == "refuse" {
                fail = Some("size refuse cannot be converted");
            }
            o["apiVersion"] = json!(desired);
            o["metadata"]["generation"] = json!(999);
            o
        })
        .collect();
    let result = match fail {
        None => json!({"status": "Success"}),
        Some(m) => json!({"status": "Failure", "message": m}),
    };
    let reply = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": req["uid"], "convertedObjects": converted, "result": result}});
    ([(http::header::CONTENT_TYPE, "application/json")], reply.to_string())
}

fn webhook_router() -> axum::Router {
    axum::Router::new().route("/convert", axum::routing::post(convert))
}

/// The webhook over plain HTTP; returns its URL.
async fn conversion_webhook() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/convert", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, webhook_router()).await });
    url
}

/// The webhook over HTTPS with a certificate for `localhost` signed by a fresh CA; returns
/// its URL and the CA's PEM.
async fn tls_conversion_webhook() -> (String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("ca key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca_params.self_signed(&ca_key).expect("ca").pem();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec!["localhost".to_string()]).expect("params").signed_by(&key, &issuer);
    let cert = cert.expect("signed");
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key der");
    let config = rustls::ServerConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key_der)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("https://localhost:{}/convert", listener.local_addr().expect("addr").port());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper_util::service::TowerToHyperService::new(webhook_router());
                let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (url, ca_pem)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_conversion_is_called_and_its_failures_reported() {
    let s = common::start().await;
    let client = s.client().await;
    let url = conversion_webhook().await;
    let conversion =
        json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": url}}});
    let crds = create_crd(&client, two_versions(conversion)).await;
    established(&crds, "gadgets.example.com").await;
    let v1 = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v1"));
    let v2 = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v2"));
    let created = v1
        .create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "hooked"}, "spec": {"size": "m"}})),
        )
        .await
        .expect("create through v1");
    assert_eq!(created.types.as_ref().map(|t| t.api_version.as_str()), Some("example.com/v1"));
    assert_ne!(created.metadata.generation, Some(999), "metadata other than labels is the server's");
    let got = v2.get("hooked").await.expect("get v2");
    assert_eq!(got.data["spec"]["size"], "m");
    v2.create(
        &PostParams::default(),
        &dynamic(json!({"apiVersion": "example.com/v2", "kind": "Gadget",
        "metadata": {"name": "stubborn"}, "spec": {"size": "refuse"}})),
    )
    .await
    .expect("create at the storage version needs no conversion");
    let err = v1.get("stubborn").await.expect_err("conversion fails");
    let kube::Error::Api(status) = err else { panic!("{err:?}") };
    assert_eq!(status.code, 500);
    assert!(status.message.contains("conversion webhook for example.com/v2, Kind=Gadget"), "{}", status.message);
    assert!(status.message.contains("size refuse cannot be converted"), "{}", status.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_is_served_only_in_its_logical_cluster() {
    let s = common::start().await;
    let root = s.client().await;
    let lcs = Api::<DynamicObject>::all_with(
        root.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster"),
            "logicalclusters",
        ),
    );
    lcs.create(
        &PostParams::default(),
        &dynamic(json!({"apiVersion": "tenancy.drydock.dev/v1alpha1",
        "kind": "LogicalCluster", "metadata": {"name": "team-b"}})),
    )
    .await
    .expect("logical cluster");
    let inner = s.client_at("/clusters/team-b").await;
    let crds = create_crd(&inner, gadget_crd_json()).await;
    established(&crds, "gadgets.example.com").await;
    let gadgets = Api::<DynamicObject>::namespaced_with(inner, "default", &gadget_ar("v1"));
    gadgets
        .create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "x"}})),
        )
        .await
        .expect("served in team-b");
    let in_root = Api::<DynamicObject>::namespaced_with(root.clone(), "default", &gadget_ar("v1"));
    let err = in_root.list(&ListParams::default()).await.expect_err("not served in root");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err:?}");
    let root_crds: Api<CustomResourceDefinition> = Api::all(root);
    assert!(root_crds.get_opt("gadgets.example.com").await.expect("get").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_crd_deletes_its_instances_first() {
    let s = common::start().await;
    let client = s.client().await;
    let crds = create_crd(&client, gadget_crd_json()).await;
    established(&crds, "gadgets.example.com").await;
    let gadgets = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v1"));
    let held = dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}));
    gadgets.create(&PostParams::default(), &held).await.expect("create");
    crds.delete("gadgets.example.com", &DeleteParams::default()).await.expect("delete crd");
    let crd = eventually("CRD terminating", WAIT, || async {
        let crd = serde_json::to_value(crds.get("gadgets.example.com").await.ok()?).ok()?;
        (condition(&crd, "Terminating").map(|c| c.0) == Some("True".into())).then_some(crd)
    })
    .await;
    assert_eq!(condition(&crd, "Terminating").map(|c| c.1), Some("InstanceDeletionInProgress".into()));
    eventually("instance deleting", WAIT, || async {
        gadgets.get("held").await.ok()?.metadata.deletion_timestamp.map(|_| ())
    })
    .await;
    let err = gadgets
        .create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "late"}})),
        )
        .await
        .expect_err("create refused");
    let kube::Error::Api(status) = err else { panic!("{err:?}") };
    assert_eq!(status.code, 403);
    assert!(
        status.message.contains("create not allowed while custom resource definition is terminating"),
        "{}",
        status.message
    );
    gadgets
        .patch(
            "held",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    eventually("CRD gone", WAIT, || async { crds.get_opt("gadgets.example.com").await.ok()?.is_none().then_some(()) })
        .await;
    let path = "/apis/example.com/v1/namespaces/default/gadgets";
    eventually("endpoint gone", WAIT, || async { (status_of(&s, path).await == 404).then_some(()) }).await;
    let crds = create_crd(&client, gadget_crd_json()).await;
    established(&crds, "gadgets.example.com").await;
    assert!(gadgets.list(&ListParams::default()).await.expect("list").items.is_empty(), "re-created CRD starts empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_serves_its_crds_and_instances() {
    let s = common::start().await;
    let client = s.client().await;
    let mut crd = gadget_crd_json();
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.size"}]);
    let crds = create_crd(&client, crd).await;
    established(&crds, "gadgets.example.com").await;
    let gadgets = Api::<DynamicObject>::namespaced_with(client, "default", &gadget_ar("v1"));
    for (name, size) in [("kept", "xl"), ("other", "s")] {
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": name}, "spec": {"size": size}});
        gadgets.create(&PostParams::default(), &dynamic(obj)).await.expect("create");
    }
    let s = s.restart().await;
    let gadgets = Api::<DynamicObject>::namespaced_with(s.client().await, "default", &gadget_ar("v1"));
    let kept = gadgets.get("kept").await.expect("served after restart");
    assert_eq!(kept.data["spec"]["size"], "xl");
    let selected = gadgets.list(&ListParams::default().fields("spec.size=xl")).await.expect("field selector");
    let names: Vec<_> = selected.items.iter().filter_map(|o| o.metadata.name.clone()).collect();
    assert_eq!(names, ["kept"], "selectable fields of a CRD work on objects replayed from the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drydock_kinds_are_established_crds() {
    let s = common::start().await;
    let k = Kubectl::new("1.33", s.kubeconfig(None));
    tokio::task::block_in_place(|| {
        let crd = k.json(&["get", "crd", "widgets.example.drydock.dev"]);
        assert_eq!(condition(&crd, "Established").map(|c| c.0), Some("True".into()));
        let names = k.run(&["get", "crds", "-o", "name"]);
        assert!(names.contains("widgets.example.drydock.dev"), "{names}");
        assert!(!names.contains("configmaps"), "built-in kinds are not CRDs: {names}");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_conversion_over_https_trusts_the_crd_ca_bundle() {
    use base64::Engine;
    let s = common::start().await;
    let client = s.client().await;
    let (url, ca_pem) = tls_conversion_webhook().await;
    let bundle = base64::engine::general_purpose::STANDARD.encode(&ca_pem);
    let webhook = |bundle: &str| {
        json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"url": url, "caBundle": bundle}}})
    };
    let crds = create_crd(&client, two_versions(webhook(&bundle))).await;
    established(&crds, "gadgets.example.com").await;
    let v1 = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &gadget_ar("v1"));
    let created = v1
        .create(
            &PostParams::default(),
            &dynamic(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "secure"}, "spec": {"size": "l"}})),
        )
        .await
        .expect("create through v1, converted by the HTTPS webhook");
    assert_eq!(created.data["spec"]["size"], "l");

    // A bundle of another CA: the webhook's certificate is not trusted.
    let (_, other_ca) = tls_conversion_webhook().await;
    let other = base64::engine::general_purpose::STANDARD.encode(&other_ca);
    let mut crd = crds.get("gadgets.example.com").await.expect("crd");
    crd.spec.conversion = serde_json::from_value(webhook(&other)).ok();
    crds.replace("gadgets.example.com", &PostParams::default(), &crd).await.expect("update crd");
    let status = eventually("the untrusted CA to take effect", Duration::from_secs(20), || {
        let v1 = v1.clone();
        async move {
            match v1.get("secure").await {
                Err(kube::Error::Api(s)) => Some(s),
                _ => None,
            }
        }
    })
    .await;
    assert_eq!(status.code, 500);
    assert!(status.message.contains("conversion webhook for example.com/v2, Kind=Gadget"), "{}", status.message);
    assert!(status.message.contains("certificate"), "names the TLS failure: {}", status.message);
}
