//! API semantics through kube-rs in-process: generateName, dryRun, pagination, finalizers
//! and deletionTimestamp, garbage collection (background, foreground, orphan), namespace
//! and logical cluster deletion, Tables, discovery, Events under both API groups, Secret
//! stringData, and what a delete answers.

use crate::common;

use std::time::Duration;

use futures::StreamExt;

use common::{eventually, start};
use drydock_api::capi::core::Cluster;
use drydock_api::tenancy::{CLUSTER_ANNOTATION, LogicalClusterName};
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, Namespace, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::Discovery;
use kube::{Resource, ResourceExt};
use serde_json::json;

fn cm(v: serde_json::Value) -> ConfigMap {
    serde_json::from_value(v).expect("configmap")
}

async fn gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually(&format!("{name} to be deleted"), Duration::from_secs(10), || {
        let api = api.clone();
        let name = name.to_string();
        async move { matches!(api.get_opt(&name).await, Ok(None)).then_some(()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generate_name_dry_run_and_pagination() {
    let s = start().await;
    let api: Api<ConfigMap> = Api::namespaced(s.in_process_client(), "default");
    let c =
        api.create(&PostParams::default(), &cm(json!({"metadata": {"generateName": "gen-"}}))).await.expect("create");
    assert!(c.name_any().starts_with("gen-") && c.name_any().len() == 9, "{}", c.name_any());

    let before = s.server.api.store.revision();
    let dry = PostParams { dry_run: true, ..Default::default() };
    let d = api.create(&dry, &cm(json!({"metadata": {"name": "dry"}}))).await.expect("dry create");
    assert_eq!(d.name_any(), "dry");
    assert!(api.get_opt("dry").await.expect("get").is_none(), "dry run persisted");
    api.delete(&c.name_any(), &DeleteParams { dry_run: true, ..Default::default() }).await.expect("dry delete");
    assert!(api.get_opt(&c.name_any()).await.expect("get").is_some(), "dry-run delete deleted");
    assert_eq!(s.server.api.store.revision(), before);

    for i in 0..25 {
        api.create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": format!("page-{i:02}"), "labels": {"p": "y"}}})),
        )
        .await
        .expect("create");
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().labels("p=y").limit(10);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.expect("list page");
        pages += 1;
        names.extend(page.items.iter().map(|c| c.name_any()));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).map(|i| format!("page-{i:02}")).collect();
    assert_eq!(names, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_and_deletion_timestamp() {
    let s = start().await;
    let api: Api<ConfigMap> = Api::namespaced(s.in_process_client(), "default");
    api.create(&PostParams::default(), &cm(json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})))
        .await
        .expect("create");
    api.delete("held", &DeleteParams::default()).await.expect("delete");
    let held = api.get("held").await.expect("still there");
    assert!(held.metadata.deletion_timestamp.is_some());
    let err = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}})),
        )
        .await
        .expect_err("new finalizer refused");
    assert!(
        matches!(err, kube::Error::Api(ref e) if e.code == 422 && e.message.contains("no new finalizers")),
        "{err:?}"
    );
    api.delete("held", &DeleteParams::default()).await.expect("second delete is a no-op");
    api.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release");
    gone(&api, "held").await;

    // generation is bumped when deletion starts on a custom resource
    let widgets = Api::<DynamicObject>::namespaced_with(s.in_process_client(), "default", &widget_ar());
    let w: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.drydock.dev/v1", "kind": "Widget",
        "metadata": {"name": "wf", "finalizers": ["example.com/hold"]}, "spec": {"replicas": 1}}))
    .expect("widget");
    widgets.create(&PostParams::default(), &w).await.expect("create widget");
    widgets.delete("wf", &DeleteParams::default()).await.expect("delete");
    let wf = widgets.get("wf").await.expect("get");
    assert_eq!(wf.metadata.generation, Some(2));
}

fn widget_ar() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.drydock.dev", "v1", "Widget"), "widgets")
}

fn owned(name: &str, owner: &ConfigMap, block: bool) -> ConfigMap {
    cm(json!({"metadata": {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
        "name": owner.name_any(), "uid": owner.uid().expect("uid"), "blockOwnerDeletion": block}]}}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_collection_policies() {
    let s = start().await;
    let api: Api<ConfigMap> = Api::namespaced(s.in_process_client(), "default");
    let pp = PostParams::default();

    // Background: dependents follow their deleted owner.
    let owner = api.create(&pp, &cm(json!({"metadata": {"name": "bg-owner"}}))).await.expect("owner");
    api.create(&pp, &owned("bg-dep", &owner, false)).await.expect("dep");
    api.delete("bg-owner", &DeleteParams::background()).await.expect("delete");
    gone(&api, "bg-dep").await;

    // Foreground: the owner stays (with foregroundDeletion) until blocking dependents are gone.
    let owner = api.create(&pp, &cm(json!({"metadata": {"name": "fg-owner"}}))).await.expect("owner");
    api.create(&pp, &cm(json!({"metadata": {"name": "fg-dep", "finalizers": ["example.com/hold"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "fg-owner", "uid": owner.uid(), "blockOwnerDeletion": true}]}})))
        .await
        .expect("dep");
    api.delete("fg-owner", &DeleteParams::foreground()).await.expect("delete");
    eventually("dependent marked for deletion", Duration::from_secs(10), || {
        let api = api.clone();
        async move {
            let d = api.get("fg-dep").await.ok()?;
            d.metadata.deletion_timestamp.is_some().then_some(())
        }
    })
    .await;

    let still = api.get("fg-owner").await.expect("owner waits for its dependent");
    assert!(still.finalizers().contains(&"foregroundDeletion".to_string()));
    api.patch("fg-dep", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release dep");
    gone(&api, "fg-dep").await;
    gone(&api, "fg-owner").await;

    // Orphan: the dependent survives, without the owner reference.
    let owner = api.create(&pp, &cm(json!({"metadata": {"name": "or-owner"}}))).await.expect("owner");
    api.create(&pp, &owned("or-dep", &owner, false)).await.expect("dep");
    let dp = DeleteParams { propagation_policy: Some(PropagationPolicy::Orphan), ..Default::default() };
    api.delete("or-owner", &dp).await.expect("delete");
    gone(&api, "or-owner").await;
    let dep = api.get("or-dep").await.expect("orphan survives");
    assert!(dep.owner_references().is_empty(), "{:?}", dep.owner_references());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_and_logical_cluster_deletion() {
    let s = start().await;
    let client = s.in_process_client();
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "tmp"}})).expect("ns"))
        .await
        .expect("ns");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "tmp");
    for i in 0..5 {
        cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": format!("c{i}")}}))).await.expect("cm");
    }
    cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "slow", "finalizers": ["example.com/hold"]}})))
        .await
        .expect("cm");
    nss.delete("tmp", &DeleteParams::default()).await.expect("delete ns");
    let ns = nss.get("tmp").await.expect("terminating");
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    let err =
        cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "late"}}))).await.expect_err("terminating");
    assert!(matches!(err, kube::Error::Api(ref e) if e.code == 403), "{err:?}");
    eventually("contents deleted", Duration::from_secs(10), || {
        let cms = cms.clone();
        async move { (cms.list(&ListParams::default()).await.ok()?.items.len() == 1).then_some(()) }
    })
    .await;
    cms.patch("slow", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release");
    gone(&nss, "tmp").await;

    // A logical cluster's contents disappear with it.
    let lcs = Api::<DynamicObject>::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster"),
            "logicalclusters",
        ),
    );
    let lc: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "tenancy.drydock.dev/v1alpha1", "kind": "LogicalCluster", "metadata": {"name": "w1"}}),
    )
    .expect("lc");
    lcs.create(&PostParams::default(), &lc).await.expect("create lc");
    let inner = s.client_at("/clusters/w1").await;
    let inner_cms: Api<ConfigMap> = Api::namespaced(inner.clone(), "default");
    inner_cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "x"}}))).await.expect("cm in w1");
    lcs.delete("w1", &DeleteParams::default()).await.expect("delete lc");
    eventually("logical cluster wiped", Duration::from_secs(10), || async {
        s.server.api.store.scan(Some("w1"), None).is_empty().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_tables_and_events() {
    let s = start().await;
    let client = s.client().await;
    let d = Discovery::new(client.clone()).run_aggregated().await.expect("aggregated discovery");
    let (ar, caps) =
        d.resolve_gvk(&GroupVersionKind::gvk("example.drydock.dev", "v1", "Widget")).expect("widget discovered");
    assert_eq!(ar.plural, "widgets");
    assert!(
        caps.subresources.iter().any(|(r, _)| r.plural == "widgets/scale" || r.plural == "scale"),
        "{:?}",
        caps.subresources
    );
    let legacy = Discovery::new(client.clone()).run().await.expect("legacy discovery");
    assert!(legacy.has_group("coordination.k8s.io"));

    // Table
    let req = http::Request::get("/api/v1/namespaces?limit=500")
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
        .body(Vec::new())
        .expect("request");
    let table: serde_json::Value = client.request(req).await.expect("table");
    assert_eq!(table["kind"], "Table");
    let cols: Vec<&str> =
        table["columnDefinitions"].as_array().expect("cols").iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(cols, vec!["Name", "Status", "Age"]);
    assert!(
        table["rows"].as_array().expect("rows").iter().any(|r| r["cells"][0] == "default" && r["cells"][1] == "Active")
    );

    // events.k8s.io/v1 written by kube's Recorder reads back through core/v1 with field selectors.
    let recorder = kube::runtime::events::Recorder::new(
        client.clone(),
        kube::runtime::events::Reporter { controller: "tester".into(), instance: None },
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let target = cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "evented"}}))).await.expect("cm");
    recorder
        .publish(
            &kube::runtime::events::Event {
                type_: kube::runtime::events::EventType::Normal,
                reason: "Tested".into(),
                note: Some("hello".into()),
                action: "Test".into(),
                secondary: None,
            },
            &target.object_ref(&()),
        )
        .await
        .expect("publish event");
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let evs = core
        .list(&ListParams::default().fields("involvedObject.name=evented,involvedObject.kind=ConfigMap"))
        .await
        .expect("events");
    assert_eq!(evs.items.len(), 1);
    assert_eq!(evs.items[0].reason.as_deref(), Some("Tested"));
    assert_eq!(evs.items[0].message.as_deref(), Some("hello"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wildcard_reads_span_logical_clusters() {
    let s = start().await;
    let root = s.in_process_client();
    let lcs = Api::<DynamicObject>::all_with(
        root.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster"),
            "logicalclusters",
        ),
    );
    for name in ["a", "b"] {
        let lc: DynamicObject = serde_json::from_value(
            json!({"apiVersion": "tenancy.drydock.dev/v1alpha1", "kind": "LogicalCluster", "metadata": {"name": name}}),
        )
        .expect("lc");
        lcs.create(&PostParams::default(), &lc).await.expect("create lc");
        let c: Api<ConfigMap> = Api::namespaced(s.server.client(Some(&LogicalClusterName::new(name))), "default");
        c.create(&PostParams::default(), &cm(json!({"metadata": {"name": format!("in-{name}")}}))).await.expect("cm");
    }
    let all: Api<ConfigMap> = Api::all(s.server.client(Some(&LogicalClusterName::wildcard())));
    let list = all.list(&ListParams::default()).await.expect("wildcard list");
    let mut seen: Vec<(String, String)> = list
        .items
        .iter()
        .map(|c| (c.name_any(), c.annotations().get(CLUSTER_ANNOTATION).cloned().unwrap_or_default()))
        .collect();
    seen.sort();
    assert_eq!(seen, vec![("in-a".to_string(), "a".to_string()), ("in-b".to_string(), "b".to_string())]);

    // A watch across clusters names each event's cluster.
    let rv = list.metadata.resource_version.expect("rv");
    let mut stream = all.watch(&kube::api::WatchParams::default().timeout(5), &rv).await.expect("watch").boxed();
    let b: Api<ConfigMap> = Api::namespaced(s.server.client(Some(&LogicalClusterName::new("b"))), "default");
    b.create(&PostParams::default(), &cm(json!({"metadata": {"name": "later"}}))).await.expect("cm");
    match tokio::time::timeout(Duration::from_secs(5), futures::TryStreamExt::try_next(&mut stream)).await {
        Ok(Ok(Some(kube::api::WatchEvent::Added(o)))) => {
            assert_eq!(o.name_any(), "later");
            assert_eq!(o.annotations().get(CLUSTER_ANNOTATION).map(String::as_str), Some("b"));
        }
        other => panic!("expected ADDED from cluster b, got {other:?}"),
    }
    // Writes need a named logical cluster.
    let err = all.create(&PostParams::default(), &cm(json!({"metadata": {"name": "x", "namespace": "default"}}))).await;
    assert!(err.is_err());
}

fn secret(v: serde_json::Value) -> Secret {
    serde_json::from_value(v).expect("secret")
}

/// The decoded data of a Secret, as text.
fn texts(s: &Secret) -> Vec<(String, String)> {
    let data = s.data.clone().unwrap_or_default();
    data.into_iter().map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned())).collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_string_data_is_merged_into_data_and_never_stored() {
    let s = start().await;
    let client = s.in_process_client();
    let api: Api<Secret> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(
            &PostParams::default(),
            &secret(json!({"metadata": {"name": "s"}, "data": {"a": "b2xk", "k": "a2VwdA=="},
                "stringData": {"a": "new", "b": "two"}})),
        )
        .await
        .expect("create");
    assert_eq!(texts(&created), pairs(&[("a", "new"), ("b", "two"), ("k", "kept")]));
    assert!(created.string_data.is_none());
    assert_eq!(created.type_.as_deref(), Some("Opaque"), "type defaults to Opaque");

    // update (PUT): stringData overrides data's key
    let mut current = api.get("s").await.expect("get");
    current.string_data = Some([("b".to_string(), "replaced".to_string())].into());
    let replaced = api.replace("s", &PostParams::default(), &current).await.expect("replace");
    assert_eq!(texts(&replaced), pairs(&[("a", "new"), ("b", "replaced"), ("k", "kept")]));
    assert!(replaced.string_data.is_none());

    // merge and JSON patches
    let patched = api
        .patch("s", &PatchParams::default(), &Patch::Merge(json!({"stringData": {"c": "merged"}})))
        .await
        .expect("merge patch");
    assert_eq!(texts(&patched), pairs(&[("a", "new"), ("b", "replaced"), ("c", "merged"), ("k", "kept")]));
    let patched = api
        .patch(
            "s",
            &PatchParams::default(),
            &Patch::<()>::Json(
                serde_json::from_value(json!([{"op": "add", "path": "/stringData", "value": {"a": "json"}}]))
                    .expect("json patch"),
            ),
        )
        .await
        .expect("json patch");
    assert_eq!(texts(&patched)[0], ("a".to_string(), "json".to_string()));

    // Never returned by a read either.
    let req = http::Request::get("/api/v1/namespaces/default/secrets/s").body(Vec::new()).expect("request");
    let raw: serde_json::Value = client.request(req).await.expect("raw get");
    assert!(raw.get("stringData").is_none(), "{raw}");
    assert_eq!(raw["data"]["a"], "anNvbg==");

    // The type never changes.
    let err = api
        .patch("s", &PatchParams::default(), &Patch::Merge(json!({"type": "kubernetes.io/tls"})))
        .await
        .expect_err("type changed");
    assert!(
        matches!(err, kube::Error::Api(ref e) if e.code == 422 && e.message.contains("type: Invalid value")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_answers_with_a_status_or_the_object_as_kube_apiserver_does() {
    let s = common::start_with_capi().await;
    let client = s.in_process_client();
    let pp = PostParams::default();
    let dp = DeleteParams::default();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // Removed at once: a Status naming the resource (not the kind), as kube-apiserver does.
    let c = cms.create(&pp, &cm(json!({"metadata": {"name": "now"}}))).await.expect("create");
    let status = cms.delete("now", &dp).await.expect("delete").right().expect("a Status");
    assert_eq!(status.status, Some(kube::core::response::StatusSummary::Success));
    let details = status.details.expect("details");
    assert_eq!((details.name.as_str(), details.kind.as_str(), details.group.as_str()), ("now", "configmaps", ""));
    assert_eq!(Some(details.uid), c.uid());

    // Pending on a finalizer: the object, marked for deletion; deleting again answers the same.
    cms.create(&pp, &cm(json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})))
        .await
        .expect("create");
    let held = cms.delete("held", &dp).await.expect("delete").left().expect("the object");
    assert!(held.metadata.deletion_timestamp.is_some());
    let again = cms.delete("held", &dp).await.expect("delete again").left().expect("the object");
    assert_eq!(again.metadata.deletion_timestamp, held.metadata.deletion_timestamp);

    // A Cluster API kind is a custom resource upstream: a Status, with its group.
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), "default");
    let cl: Cluster = serde_json::from_value(json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "c1"}, "spec": {}}))
    .expect("cluster");
    let created = clusters.create(&pp, &cl).await.expect("create cluster");
    let status = clusters.delete("c1", &dp).await.expect("delete cluster").right().expect("a Status");
    let details = status.details.expect("details");
    assert_eq!((details.group.as_str(), details.kind.as_str()), ("cluster.x-k8s.io", "clusters"));
    assert_eq!(Some(details.uid), created.uid());

    // Pods return the deleted object (ReturnDeletedObject).
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
    )
    .expect("pod");
    pods.create(&pp, &pod).await.expect("create pod");
    let deleted = pods.delete("p", &dp).await.expect("delete pod").left().expect("the pod");
    assert_eq!(deleted.name_any(), "p");
    assert!(pods.get_opt("p").await.expect("get").is_none());

    // A dry-run delete answers like the real one and removes nothing.
    cms.create(&pp, &cm(json!({"metadata": {"name": "dry"}}))).await.expect("create");
    let dry = DeleteParams { dry_run: true, ..Default::default() };
    assert!(cms.delete("dry", &dry).await.expect("dry delete").is_right());
    assert!(cms.get_opt("dry").await.expect("get").is_some());

    // deletecollection lists what it deleted, as it was.
    for name in ["l1", "l2"] {
        cms.create(&pp, &cm(json!({"metadata": {"name": name, "labels": {"set": "x"}}}))).await.expect("create");
    }
    let list = cms.delete_collection(&dp, &ListParams::default().labels("set=x")).await.expect("deletecollection");
    let names: Vec<String> = list.left().expect("a list").items.iter().map(ResourceExt::name_any).collect();
    assert_eq!(names, ["l1", "l2"]);
    assert!(cms.list(&ListParams::default().labels("set=x")).await.expect("list").items.is_empty());
}
