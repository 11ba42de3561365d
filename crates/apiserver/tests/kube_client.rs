//! kube-rs against the server, over TCP and in-process: Api CRUD, conflicts, watch,
//! watcher, status and scale subresources, a Controller with the finalizer helper.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{eventually, start};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::{Controller, watcher};
use kube::{Client, CustomResource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(group = "example.drydock.dev", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
pub struct WidgetSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct WidgetStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>()},
        "data": {"k": "v"}
    }))
    .expect("configmap")
}

async fn crud_and_conflict(client: Client) {
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api.create(&PostParams::default(), &cm("a", &[("app", "x")])).await.expect("create");
    assert!(created.uid().is_some());
    assert!(created.creation_timestamp().is_some());
    let rv1 = created.resource_version().expect("rv");
    api.create(&PostParams::default(), &cm("b", &[("app", "y")])).await.expect("create b");

    let err = api.create(&PostParams::default(), &cm("a", &[])).await.expect_err("duplicate");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.reason == "AlreadyExists"), "{err:?}");

    let got = api.get("a").await.expect("get");
    assert_eq!(got.data.as_ref().and_then(|d| d.get("k")).map(String::as_str), Some("v"));

    let selected = api.list(&ListParams::default().labels("app in (x, z)")).await.expect("list");
    assert_eq!(selected.items.iter().map(|c| c.name_any()).collect::<Vec<_>>(), vec!["a"]);

    // Update with the current resourceVersion succeeds; the stale one conflicts.
    let mut next = got.clone();
    next.data = Some([("k".to_string(), "w".to_string())].into());
    let updated = api.replace("a", &PostParams::default(), &next).await.expect("replace");
    assert_ne!(updated.resource_version().expect("rv"), rv1);
    let err = api.replace("a", &PostParams::default(), &next).await.expect_err("stale");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.reason == "Conflict"), "{err:?}");

    let patched = api
        .patch("a", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"patched": "yes"}}})))
        .await
        .expect("merge patch");
    assert_eq!(patched.labels().get("patched").map(String::as_str), Some("yes"));
    let patched = api
        .patch("a", &PatchParams::default(), &Patch::Strategic(json!({"data": {"extra": "1"}})))
        .await
        .expect("strategic patch");
    assert_eq!(patched.data.as_ref().map(|d| d.len()), Some(2));

    api.delete("a", &DeleteParams::default()).await.expect("delete");
    let err = api.get("a").await.expect_err("gone");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err:?}");
}

async fn raw_watch(client: Client) {
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let list = api.list(&ListParams::default()).await.expect("list");
    let rv = list.metadata.resource_version.expect("list rv");
    let mut stream = api.watch(&WatchParams::default().timeout(10), &rv).await.expect("watch").boxed();
    api.create(&PostParams::default(), &cm("w1", &[])).await.expect("create");
    api.patch("w1", &PatchParams::default(), &Patch::Merge(json!({"data": {"k": "2"}}))).await.expect("patch");
    api.delete("w1", &DeleteParams::default()).await.expect("delete");
    let mut kinds = Vec::new();
    while kinds.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
            Ok(Ok(Some(WatchEvent::Added(o)))) if o.name_any() == "w1" => kinds.push("ADDED"),
            Ok(Ok(Some(WatchEvent::Modified(o)))) if o.name_any() == "w1" => kinds.push("MODIFIED"),
            Ok(Ok(Some(WatchEvent::Deleted(o)))) if o.name_any() == "w1" => kinds.push("DELETED"),
            Ok(Ok(Some(_))) => {}
            other => panic!("watch ended early: {other:?} after {kinds:?}"),
        }
    }
    assert_eq!(kinds, vec!["ADDED", "MODIFIED", "DELETED"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_crud_conflict_and_watch_over_tcp() {
    let s = start().await;
    crud_and_conflict(s.client().await).await;
    raw_watch(s.client().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_crud_conflict_and_watch_in_process() {
    let s = start().await;
    crud_and_conflict(s.in_process_client()).await;
    raw_watch(s.in_process_client()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_old_watch_is_an_in_stream_410() {
    let s = common::start_with(tempfile::tempdir().expect("tempdir"), |c| c.store.watch_history = 10).await;
    let api: Api<ConfigMap> = Api::namespaced(s.client().await, "default");
    let first = api.create(&PostParams::default(), &cm("old", &[])).await.expect("create");
    let old_rv = first.resource_version().expect("rv");
    for i in 0..30 {
        api.patch("old", &PatchParams::default(), &Patch::Merge(json!({"data": {"i": i.to_string()}})))
            .await
            .expect("patch");
    }
    let mut stream =
        api.watch(&WatchParams::default().timeout(5), &old_rv).await.expect("watch starts with 200").boxed();
    match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Error(status)))) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
            assert!(status.message.contains("too old resource version"), "{}", status.message);
        }
        other => panic!("expected an ERROR 410 event, got {other:?}"),
    }
    // A watch from a retained revision resumes normally.
    let recent = api.get("old").await.expect("get").resource_version().expect("rv");
    let mut stream = api.watch(&WatchParams::default().timeout(5), &recent).await.expect("watch").boxed();
    api.patch("old", &PatchParams::default(), &Patch::Merge(json!({"data": {"i": "last"}}))).await.expect("patch");
    match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Modified(o)))) => {
            assert_eq!(o.data.and_then(|d| d.get("i").cloned()).as_deref(), Some("last"))
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
}

async fn subresources(client: Client) {
    let api: Api<Widget> = Api::namespaced(client, "default");
    let w = Widget::new("w", WidgetSpec { replicas: Some(1), color: Some("red".into()) });
    let created = api.create(&PostParams::default(), &w).await.expect("create widget");
    assert_eq!(created.metadata.generation, Some(1));

    let st = api
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 1, "phase": "Ready"}, "spec": {"replicas": 9}})),
        )
        .await
        .expect("status patch");
    assert_eq!(st.status.as_ref().and_then(|s| s.replicas), Some(1));
    assert_eq!(st.spec.replicas, Some(1), "status writes ignore spec");
    assert_eq!(st.metadata.generation, Some(1), "status writes keep generation");

    let scale = api.get_scale("w").await.expect("get scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(1));
    api.patch_scale("w", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 4}})))
        .await
        .expect("scale");
    let after = api.get("w").await.expect("get");
    assert_eq!(after.spec.replicas, Some(4));
    assert_eq!(after.metadata.generation, Some(2), "spec change bumps generation");
    assert_eq!(after.status.and_then(|s| s.phase).as_deref(), Some("Ready"), "main writes keep status");
    for status in [json!({"phase": "Gone", "replicas": 7}), serde_json::Value::Null] {
        let main = api
            .patch("w", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 5}, "status": status})))
            .await
            .expect("main patch");
        assert_eq!(main.spec.replicas, Some(5));
        let kept = main.status.expect("status kept");
        assert_eq!((kept.phase.as_deref(), kept.replicas), (Some("Ready"), Some(1)), "main patches ignore status");
    }

    let err = api
        .patch("w", &PatchParams::default(), &Patch::Merge(json!({"spec": {"color": "purple"}})))
        .await
        .expect_err("enum violation");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 422 && s.message.contains("spec.color")), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_scale_subresources() {
    let s = start().await;
    subresources(s.client().await).await;
    let s2 = start().await;
    subresources(s2.in_process_client()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_sees_initial_and_live_objects() {
    let s = start().await;
    let api: Api<ConfigMap> = Api::namespaced(s.in_process_client(), "default");
    api.create(&PostParams::default(), &cm("before", &[("t", "1")])).await.expect("create");
    let seen = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let seen2 = seen.clone();
    let watch_api = api.clone();
    let task = tokio::spawn(async move {
        watcher(watch_api, watcher::Config::default().labels("t=1"))
            .for_each(|ev| {
                if let Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) = ev {
                    seen2.lock().push(o.name_any());
                }
                futures::future::ready(())
            })
            .await;
    });
    eventually("initial object", Duration::from_secs(10), || async {
        seen.lock().contains(&"before".to_string()).then_some(())
    })
    .await;
    api.create(&PostParams::default(), &cm("after", &[("t", "1")])).await.expect("create");
    api.create(&PostParams::default(), &cm("other", &[("t", "2")])).await.expect("create");
    eventually("live object", Duration::from_secs(10), || async {
        seen.lock().contains(&"after".to_string()).then_some(())
    })
    .await;
    assert!(!seen.lock().contains(&"other".to_string()), "label selector filters the watch");
    task.abort();
}

#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error(transparent)]
    Finalizer(#[from] Box<kube::runtime::finalizer::Error<kube::Error>>),
}

struct Ctx {
    client: Client,
    cleanups: AtomicUsize,
}

async fn reconcile(w: Arc<Widget>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let api: Api<Widget> = Api::namespaced(ctx.client.clone(), &w.namespace().unwrap_or_default());
    finalizer(&api, "example.drydock.dev/cleanup", w, |ev| async {
        match ev {
            Finalizer::Apply(w) => {
                let status = json!({"status": {"phase": "Reconciled"}});
                api.patch_status(&w.name_any(), &PatchParams::default(), &Patch::Merge(status)).await?;
                Ok(Action::await_change())
            }
            Finalizer::Cleanup(_) => {
                ctx.cleanups.fetch_add(1, Ordering::SeqCst);
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| ReconcileError::Finalizer(Box::new(e)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_with_finalizer_helper() {
    let s = start().await;
    for client in [s.client().await, s.in_process_client()] {
        let api: Api<Widget> = Api::namespaced(client.clone(), "default");
        let ctx = Arc::new(Ctx { client: client.clone(), cleanups: AtomicUsize::new(0) });
        let controller = Controller::new(api.clone(), watcher::Config::default())
            .run(reconcile, |_, _, _| Action::requeue(Duration::from_millis(200)), ctx.clone())
            .for_each(|_| futures::future::ready(()));
        let handle = tokio::spawn(controller);
        let name = format!("f{}", ctx.cleanups.load(Ordering::SeqCst) + rand_suffix());
        api.create(&PostParams::default(), &Widget::new(&name, WidgetSpec::default())).await.expect("create");
        eventually("finalizer and status", Duration::from_secs(15), || {
            let api = api.clone();
            let name = name.clone();
            async move {
                let w = api.get(&name).await.ok()?;
                let done = w.finalizers().iter().any(|f| f == "example.drydock.dev/cleanup")
                    && w.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Reconciled");
                done.then_some(())
            }
        })
        .await;
        api.delete(&name, &DeleteParams::default()).await.expect("delete");
        eventually("cleanup and removal", Duration::from_secs(15), || {
            let api = api.clone();
            let name = name.clone();
            async move { matches!(api.get_opt(&name).await, Ok(None)).then_some(()) }
        })
        .await;
        assert_eq!(ctx.cleanups.load(Ordering::SeqCst), 1);
        handle.abort();
    }
}

fn rand_suffix() -> usize {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as usize % 100_000)
        .unwrap_or(0)
}
