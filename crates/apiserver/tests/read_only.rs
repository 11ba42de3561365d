//! A commit that fails turns the store read-only: the failed writes (the failed group and
//! every write queued behind it) are reverted, so get, list and watch serve the last
//! durable state; every later write is refused with a Status naming the cause; reads keep
//! working; /readyz, /livez and /healthz fail naming the cause.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use drydock_apiserver::http::{self, Server};
use drydock_apiserver::store::{Backend, LoadInfo, LogRow, ResIds, ResourceNames, Store, StoreConfig};
use drydock_apiserver::{Api as RestApi, builtin, controllers, registry::Registry};
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use parking_lot::{Condvar, Mutex};
use serde_json::json;
use tower::ServiceExt;

const CAUSE: &str = "No space left on device (injected)";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Pass,
    /// `append` blocks until the mode changes, so later writes queue behind it.
    Hold,
    Fail,
}

/// A log that keeps nothing and, on demand, holds or fails its commits.
#[derive(Default)]
struct Gate {
    mode: Mutex<Option<Mode>>,
    changed: Condvar,
    holding: AtomicBool,
}

impl Gate {
    fn set(&self, m: Mode) {
        *self.mode.lock() = Some(m);
        self.changed.notify_all();
    }
}

struct GatedBackend(Arc<Gate>);

impl Backend for GatedBackend {
    fn load(&mut self, _f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo> {
        Ok(LoadInfo::default())
    }
    fn append(&mut self, _rows: &[LogRow]) -> anyhow::Result<()> {
        let mut mode = self.0.mode.lock();
        while *mode == Some(Mode::Hold) {
            self.0.holding.store(true, Ordering::Release);
            self.0.changed.wait(&mut mode);
        }
        match *mode {
            Some(Mode::Fail) => Err(anyhow::anyhow!(CAUSE)),
            _ => Ok(()),
        }
    }
    fn compact(&mut self, _ids: &[u64], _compacted: u64) -> anyhow::Result<()> {
        Ok(())
    }
}

async fn start(gate: Arc<Gate>) -> (RestApi, axum::Router) {
    let ids = ResIds::new();
    let mut b = Registry::builder(ids.clone());
    builtin::register(&mut b);
    let registry = Arc::new(b.build().expect("registry"));
    let names: Arc<dyn ResourceNames> = ids;
    let store = Store::open(Box::new(GatedBackend(gate)), names, StoreConfig::default()).expect("store");
    let api = RestApi::new(store, registry);
    controllers::bootstrap(&api, &[]).await.expect("bootstrap");
    let server = Arc::new(Server {
        authn: Default::default(),
        policies: Default::default(),
        api: api.clone(),
        version_minor: "33".into(),
        extra_metrics: Vec::new(),
        bookmark_interval: Duration::from_secs(30),
        stopping: tokio::sync::watch::channel(false).0,
    });
    (api, http::router(server))
}

fn cm(name: &str, v: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": v}})).expect("configmap")
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn assert_read_only(what: &str, r: Result<impl std::fmt::Debug, kube::Error>) {
    match r {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (500, "InternalError"), "{what}: {s:?}");
            assert!(s.message.contains("read-only") && s.message.contains(CAUSE), "{what}: {}", s.message);
            assert!(s.message.contains("restart"), "{what}: {}", s.message);
        }
        other => panic!("{what}: expected a refused write, got {other:?}"),
    }
}

async fn get_text(router: &axum::Router, uri: &str) -> (u16, String) {
    let req = axum::http::Request::get(uri).body(Body::empty()).expect("request");
    let resp = router.clone().oneshot(req).await.expect("response");
    let code = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20).await.expect("body");
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_reverts_its_writes_and_turns_the_store_read_only() {
    let gate = Arc::new(Gate::default());
    let (rest, router) = start(gate.clone()).await;
    let store = rest.store.clone();
    let api: Api<ConfigMap> = Api::namespaced(kube::Client::new(router.clone(), "default"), "default");
    let pp = PostParams::default();
    let upd = api.create(&pp, &cm("upd", "1")).await.expect("create upd");
    let del = api.create(&pp, &cm("del", "1")).await.expect("create del");
    let before = store.revision();
    assert_eq!(get_text(&router, "/readyz").await, (200, "ok".into()));

    // The first write blocks in the log; three more queue behind it.
    gate.set(Mode::Hold);
    let first = tokio::spawn({
        let api = api.clone();
        async move { api.create(&PostParams::default(), &cm("new1", "1")).await }
    });
    wait_until("the first write to reach the log", || gate.holding.load(Ordering::Acquire)).await;
    let mut changed = upd.clone();
    changed.data = Some([("v".to_string(), "2".to_string())].into());
    let queued = tokio::spawn({
        let api = api.clone();
        async move {
            let (pp, dp, new2) = (PostParams::default(), DeleteParams::default(), cm("new2", "1"));
            tokio::join!(api.replace("upd", &pp, &changed), api.delete("del", &dp), api.create(&pp, &new2))
        }
    });
    wait_until("all four writes to be applied in memory", || store.revision() == before + 4).await;

    gate.set(Mode::Fail);
    assert_read_only("create in the failed group", first.await.expect("task"));
    let (update, delete, create) = queued.await.expect("task");
    assert_read_only("queued update", update);
    assert_read_only("queued delete", delete);
    assert_read_only("queued create", create);

    // Nothing that failed is served: the previous state is, at the previous revision.
    assert_eq!(store.revision(), before);
    let got = api.get("upd").await.expect("get upd");
    assert_eq!((&got.data, got.resource_version()), (&upd.data, upd.resource_version()));
    let got = api.get("del").await.expect("get del");
    assert_eq!(got.resource_version(), del.resource_version());
    assert!(api.get_opt("new1").await.expect("get new1").is_none());
    assert!(api.get_opt("new2").await.expect("get new2").is_none());
    let list = api.list(&ListParams::default()).await.expect("list");
    let mut listed: Vec<(String, Option<String>)> =
        list.items.iter().map(|c| (c.name_any(), c.resource_version())).collect();
    listed.sort();
    assert_eq!(listed, vec![("del".into(), del.resource_version()), ("upd".into(), upd.resource_version())]);
    assert_eq!(list.metadata.resource_version, Some(before.to_string()));

    // No watch event was sent for them: a watch from before the failure replays nothing.
    assert_eq!(store.hub().published(), before);
    let since = del.resource_version().expect("rv");
    let events: Vec<_> = api
        .watch(&WatchParams::default().timeout(1), &since)
        .await
        .expect("watch")
        .try_collect()
        .await
        .expect("watch events");
    assert!(events.iter().all(|e| matches!(e, WatchEvent::Bookmark(_))), "events of failed writes: {events:?}");

    // Every later write is refused, even one the log would now accept; reads keep working.
    gate.set(Mode::Pass);
    assert_read_only("create after", api.create(&pp, &cm("later", "1")).await);
    assert_read_only("update after", api.replace("upd", &pp, &upd).await);
    assert_read_only("delete after", api.delete("upd", &DeleteParams::default()).await);
    assert_eq!(api.list(&ListParams::default()).await.expect("list").items.len(), 2);
    assert_eq!(store.revision(), before);

    for endpoint in ["/readyz", "/livez", "/healthz", "/readyz?verbose"] {
        let (code, text) = get_text(&router, endpoint).await;
        assert_eq!(code, 500, "{endpoint}: {text}");
        assert!(text.contains("[-]storage failed: ") && text.contains(CAUSE), "{endpoint}: {text}");
    }
    assert!(!store.healthy());
    let failure = store.failure().expect("the failure is recorded");
    assert!(failure.contains("durable log") && failure.contains(CAUSE), "{failure}");
}

/// A write whose commit is held is in memory but not durable: readers wait for it, and
/// when the commit fails they answer without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_never_shows_a_write_whose_commit_fails() {
    let gate = Arc::new(Gate::default());
    let (rest, router) = start(gate.clone()).await;
    let store = rest.store.clone();
    let api: Api<ConfigMap> = Api::namespaced(kube::Client::new(router.clone(), "default"), "default");
    api.create(&PostParams::default(), &cm("kept", "1")).await.expect("create");
    let before = store.revision();

    gate.set(Mode::Hold);
    let write = tokio::spawn({
        let api = api.clone();
        async move { api.create(&PostParams::default(), &cm("doomed", "1")).await }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(gate.holding.load(Ordering::Acquire) && store.revision() == before + 1) {
        assert!(Instant::now() < deadline, "the write never reached the log");
        tokio::task::yield_now().await;
    }
    // The write is in memory but not durable: readers wait for it.
    let get = tokio::spawn({
        let router = router.clone();
        async move { get_text(&router, "/api/v1/namespaces/default/configmaps/doomed").await }
    });
    let list = tokio::spawn({
        let router = router.clone();
        async move { get_text(&router, "/api/v1/namespaces/default/configmaps").await }
    });
    let hold_until = Instant::now() + Duration::from_millis(200);
    while Instant::now() < hold_until {
        assert!(!get.is_finished() && !list.is_finished(), "a read answered with a write that is not durable");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gate.set(Mode::Fail);
    assert!(write.await.expect("task").is_err());
    let (code, _) = get.await.expect("task");
    assert_eq!(code, 404);
    let (code, list) = list.await.expect("task");
    assert_eq!(code, 200);
    let list: serde_json::Value = serde_json::from_str(&list).expect("list json");
    let names: Vec<&str> =
        list["items"].as_array().into_iter().flatten().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["kept"]);
    assert_eq!(list["metadata"]["resourceVersion"], before.to_string());
}
