//! Metadata-only reads and writes (`as=PartialObjectMetadata[List]`), through kube-rs'
//! metadata API (`get_metadata`, `list_metadata`, `patch_metadata`, `metadata_watcher`),
//! over TCP and in-process, and raw for negotiation: protobuf, v1beta1, mismatches.

use crate::common;
use crate::kube_client::{Widget, WidgetSpec};

use std::time::Duration;

use common::start;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PartialObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// A ConfigMap named `name`, labelled with `labels`.
fn config_map(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    if !labels.is_empty() {
        cm.metadata.labels = Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    }
    cm
}

async fn metadata_api(client: Client) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut cm = config_map("meta", &[("app", "x")]);
    cm.data = Some([("k".to_string(), "v".to_string())].into());
    let created = cms.create(&PostParams::default(), &cm).await.expect("create");

    let got = cms.get_metadata("meta").await.expect("get_metadata");
    let types = got.types.as_ref().expect("typed");
    assert_eq!((types.kind.as_str(), types.api_version.as_str()), ("PartialObjectMetadata", "meta.k8s.io/v1"));
    assert_eq!(got.name_any(), "meta");
    assert_eq!(got.labels().get("app").map(String::as_str), Some("x"));
    assert_eq!(got.resource_version(), created.resource_version());
    assert_eq!(got.uid(), created.uid());

    let list = cms.list_metadata(&ListParams::default().labels("app=x")).await.expect("list_metadata");
    assert_eq!(list.items.iter().map(|m| m.name_any()).collect::<Vec<_>>(), ["meta"]);
    assert_eq!(list.types.kind, "PartialObjectMetadataList");
    assert!(list.metadata.resource_version.is_some());

    let patched = cms
        .patch_metadata("meta", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"tier": "db"}}})))
        .await
        .expect("patch_metadata");
    assert_eq!(patched.labels().get("tier").map(String::as_str), Some("db"));
    assert_ne!(patched.resource_version(), created.resource_version());
    let whole = cms.get("meta").await.expect("get");
    assert_eq!(whole.data.as_ref().and_then(|d| d.get("k")).map(String::as_str), Some("v"), "data kept");
    assert_eq!(whole.resource_version(), patched.resource_version());

    // A custom resource answers metadata the same way.
    let widgets: Api<Widget> = Api::namespaced(client, "default");
    let w = Widget::new("meta-w", WidgetSpec { replicas: Some(2), color: None });
    widgets.create(&PostParams::default(), &w).await.expect("create widget");
    let wm = widgets.get_metadata("meta-w").await.expect("widget metadata");
    assert_eq!(wm.metadata.generation, Some(1));
    let all = widgets.list_metadata(&ListParams::default()).await.expect("widget list");
    assert!(all.items.iter().any(|m| m.name_any() == "meta-w"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_metadata_api_over_tcp_and_in_process() {
    let s = start().await;
    metadata_api(s.client().await).await;
    let s2 = start().await;
    metadata_api(s2.in_process_client()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_watcher_sees_initial_and_live_objects() {
    let s = start().await;
    let client = s.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("before", &[])).await.expect("create");
    // kube-rs reads `PartialObjectMeta<K>` through metadata-only lists and watches.
    let metas: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(client, "default");
    let mut seen = watcher(metas, watcher::Config::default()).touched_objects().boxed();
    let mut names = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !names.contains(&"after".to_string()) {
        let m = tokio::time::timeout_at(deadline, seen.next())
            .await
            .unwrap_or_else(|_| panic!("both objects seen through the metadata watch; saw {names:?}"))
            .expect("stream open")
            .expect("watch event");
        assert_eq!(m.types.as_ref().map(|t| t.kind.as_str()), Some("PartialObjectMetadata"));
        names.push(m.name_any());
        if names.len() == 1 {
            cms.create(&PostParams::default(), &config_map("after", &[])).await.expect("create after");
        }
    }
    assert_eq!(names.first().map(String::as_str), Some("before"), "{names:?}");
}

/// A GET with `accept`, answered as (status, content type, body).
async fn get_as(client: &Client, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    send_as(client, http::Method::GET, path, accept).await
}

async fn send_as(client: &Client, method: http::Method, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .expect("request");
    let resp = client.send(req.map(kube::client::Body::from)).await.expect("send");
    let status = resp.status().as_u16();
    let ct = resp.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let body = http_body_util::BodyExt::collect(resp.into_body()).await.expect("body").to_bytes().to_vec();
    (status, ct, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_of_metadata_answers() {
    let s = start().await;
    let client = s.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("n", &[])).await.expect("create");
    let one = "/api/v1/namespaces/default/configmaps/n";
    let all = "/api/v1/namespaces/default/configmaps";

    // v1beta1, and the metadata range preferred over a plain JSON fallback.
    let accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json";
    let (code, _, body) = get_as(&client, one, accept).await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        (code, v["apiVersion"].as_str(), v["kind"].as_str()),
        (200, Some("meta.k8s.io/v1beta1"), Some("PartialObjectMetadata"))
    );
    assert_eq!(v["metadata"]["name"], "n");

    // Protobuf, as client-go's metadata client asks first.
    let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    let (code, ct, body) = get_as(&client, one, accept).await;
    assert_eq!((code, ct.as_str()), (200, "application/vnd.kubernetes.protobuf"));
    assert!(body.starts_with(b"k8s\0"), "a protobuf envelope");
    assert!(body.windows(b"PartialObjectMetadata".len()).any(|w| w == b"PartialObjectMetadata"));

    // An object asked for as a list, and a list as an object: 406, as kube-apiserver answers.
    let (code, _, body) =
        get_as(&client, one, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").await;
    let v: Value = serde_json::from_slice(&body).expect("status");
    assert_eq!((code, v["reason"].as_str()), (406, Some("NotAcceptable")), "{v}");
    let (code, _, body) = get_as(&client, all, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").await;
    let v: Value = serde_json::from_slice(&body).expect("status");
    assert_eq!(code, 406, "{v}");
    assert!(v["message"].as_str().is_some_and(|m| m.contains("is a list")), "{v}");

    // A deleted collection answers its items' metadata.
    for name in ["gone-1", "gone-2"] {
        cms.create(&PostParams::default(), &config_map(name, &[("del", "yes")])).await.expect("create");
    }
    let accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let (code, _, body) =
        send_as(&client, http::Method::DELETE, &format!("{all}?labelSelector=del%3Dyes"), accept).await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!((code, v["kind"].as_str()), (200, Some("PartialObjectMetadataList")), "{v}");
    let mut names: Vec<&str> =
        v["items"].as_array().expect("items").iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["gone-1", "gone-2"]);
    assert!(cms.get_opt("gone-1").await.expect("get").is_none());

    // An unknown transform is skipped for the next range.
    let (code, _, body) = get_as(&client, one, "application/json;as=Other;g=meta.k8s.io;v=v1,application/json").await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!((code, v["kind"].as_str()), (200, Some("ConfigMap")));
}
