//! kube-rs against the general API server: typed clients on built-in kinds beyond the core
//! ones, a CRD installed at runtime used through discovery and `DynamicObject`, and
//! watchers on streaming lists (watch-list) for both.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::eventually;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::runtime::watcher;
use serde_json::json;

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}
        }
    }))
    .expect("deployment")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_clients_on_apps_and_services() {
    let s = common::start().await;
    let client = s.client().await;
    let deploys: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d = deploys.create(&PostParams::default(), &deployment("web")).await.expect("create");
    let spec = d.spec.expect("spec");
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.revision_history_limit, Some(10));
    assert_eq!(spec.progress_deadline_seconds, Some(600));
    let pod = spec.template.spec.expect("pod spec");
    assert_eq!(pod.restart_policy.as_deref(), Some("Always"));
    assert_eq!(pod.containers[0].image_pull_policy.as_deref(), Some("IfNotPresent"));

    let scale = deploys
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 3}})))
        .await
        .expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(deploys.get("web").await.expect("get").spec.and_then(|s| s.replicas), Some(3));

    let services: Api<Service> = Api::namespaced(client, "default");
    let svc: Service = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    }))
    .expect("service");
    let created = services.create(&PostParams::default(), &svc).await.expect("create service");
    let spec = created.spec.expect("spec");
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    let ip: std::net::Ipv4Addr = spec.cluster_ip.as_deref().expect("clusterIP").parse().expect("an IPv4 address");
    assert!(ip.octets()[0] == 10, "{ip}");
    assert_eq!(spec.cluster_ips, Some(vec![ip.to_string()]));
}

const GIZMO_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "gizmos.rs.example.com"},
  "spec": {"group": "rs.example.com", "scope": "Namespaced",
    "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"level": {"type": "integer", "default": 3}}}}}}}]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_objects_of_a_runtime_crd_and_streaming_watchers() {
    let s = common::start().await;
    let client = s.client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_str(GIZMO_CRD).expect("crd");
    crds.create(&PostParams::default(), &crd).await.expect("create crd");
    let gvk = GroupVersionKind::gvk("rs.example.com", "v1", "Gizmo");
    let ar = eventually("the CRD to be discoverable", Duration::from_secs(20), || {
        let client = client.clone();
        let gvk = gvk.clone();
        async move { kube::discovery::pinned_kind(&client, &gvk).await.ok().map(|(ar, _)| ar) }
    })
    .await;
    let gizmos: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);

    // A streaming-list watcher: the initial objects, then changes.
    let cfg = watcher::Config::default().streaming_lists();
    let mut stream = watcher(gizmos.clone(), cfg).boxed();
    let first: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rs.example.com/v1", "kind": "Gizmo", "metadata": {"name": "a"}, "spec": {}
    }))
    .expect("gizmo");
    let created = gizmos.create(&PostParams::default(), &first).await.expect("create gizmo");
    assert_eq!(created.data["spec"]["level"], 3, "defaulted from the CRD schema");
    let mut seen = BTreeSet::new();
    let mut initialized = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !(initialized && seen.contains("a")) {
        let ev = tokio::time::timeout_at(deadline, stream.next()).await.expect("watcher in time");
        match ev.expect("stream open").expect("watcher event") {
            watcher::Event::InitApply(o) | watcher::Event::Apply(o) => {
                seen.insert(o.metadata.name.unwrap_or_default());
            }
            watcher::Event::InitDone => initialized = true,
            _ => {}
        }
    }
    gizmos.delete("a", &DeleteParams::default()).await.expect("delete");

    // The same on a built-in kind.
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut stream = watcher(cms.clone(), watcher::Config::default().streaming_lists()).boxed();
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "streamed"}})).expect("cm");
    cms.create(&PostParams::default(), &cm).await.expect("create cm");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ev = tokio::time::timeout_at(deadline, stream.next()).await.expect("watcher in time");
        if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) = ev.expect("open").expect("event")
            && o.metadata.name.as_deref() == Some("streamed")
        {
            break;
        }
    }
}
