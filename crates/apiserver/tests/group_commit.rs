//! Group commit: writes that queue while a commit runs share the next one, and a busy
//! committer waits `commit_delay` for more to join it; an idle one commits at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use drydock_apiserver::store::{Backend, LoadInfo, LogRow, ResIds, ResourceNames, Store, StoreConfig};
use drydock_apiserver::{Api as RestApi, builtin, http, registry::Registry};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use parking_lot::{Condvar, Mutex};

/// A log that keeps nothing, records the size of every append and can hold them.
#[derive(Default)]
struct Log {
    state: Mutex<LogState>,
    changed: Condvar,
}

#[derive(Default)]
struct LogState {
    hold: bool,
    holding: bool,
    appends: Vec<Vec<String>>,
}

impl Log {
    fn hold(&self, hold: bool) {
        self.state.lock().hold = hold;
        self.changed.notify_all();
    }
    fn appends(&self) -> Vec<Vec<String>> {
        self.state.lock().appends.clone()
    }
}

struct RecordingBackend(Arc<Log>);

impl Backend for RecordingBackend {
    fn load(&mut self, _f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo> {
        Ok(LoadInfo::default())
    }
    fn append(&mut self, rows: &[LogRow]) -> anyhow::Result<()> {
        let mut st = self.0.state.lock();
        while st.hold {
            st.holding = true;
            self.0.changed.wait(&mut st);
        }
        st.holding = false;
        let names = rows.iter().map(|r| r.key.rsplit('/').next().unwrap_or_default().to_string()).collect();
        st.appends.push(names);
        Ok(())
    }
    fn compact(&mut self, _ids: &[u64], _compacted: u64) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A server on the recording log with no loops of its own, so that only the test writes.
fn start(log: Arc<Log>, commit_delay: Duration) -> (Api<Namespace>, Arc<Store>) {
    let ids = ResIds::new();
    let mut b = Registry::builder(ids.clone());
    builtin::register(&mut b);
    let registry = Arc::new(b.build().expect("registry"));
    let names: Arc<dyn ResourceNames> = ids;
    let config = StoreConfig { commit_delay, ..StoreConfig::default() };
    let store = Store::open(Box::new(RecordingBackend(log)), names, config).expect("store");
    let server = Arc::new(http::Server {
        authn: Default::default(),
        policies: Default::default(),
        api: RestApi::new(store.clone(), registry),
        version_minor: "33".into(),
        extra_metrics: Vec::new(),
        bookmark_interval: Duration::from_secs(30),
        stopping: tokio::sync::watch::channel(false).0,
    });
    (Api::all(kube::Client::new(http::router(server), "default")), store)
}

fn ns(name: &str) -> Namespace {
    Namespace {
        metadata: kube::api::ObjectMeta { name: Some(name.into()), ..Default::default() },
        ..Default::default()
    }
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_committer_commits_a_lone_write_at_once() {
    let log = Arc::new(Log::default());
    // A delay no test could wait out: the lone write must not pay it.
    let (api, _store) = start(log.clone(), Duration::from_secs(3600));
    let created = tokio::time::timeout(Duration::from_secs(10), api.create(&PostParams::default(), &ns("lone")))
        .await
        .expect("a lone write on an idle store is committed without the delay")
        .expect("create");
    assert_eq!(created.metadata.name.as_deref(), Some("lone"));
    assert_eq!(log.appends(), vec![vec!["lone".to_string()]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_committer_lets_later_writes_join_the_next_commit() {
    let log = Arc::new(Log::default());
    let (api, store) = start(log.clone(), Duration::from_secs(2));
    let pp = PostParams::default();
    let before = store.revision();

    // The first commit is held in the log; a second write queues behind it.
    log.hold(true);
    let first = tokio::spawn({
        let (api, pp) = (api.clone(), pp.clone());
        async move { api.create(&pp, &ns("first")).await }
    });
    wait_until("the first commit to reach the log", || log.state.lock().holding).await;
    let queued = tokio::spawn({
        let (api, pp) = (api.clone(), pp.clone());
        async move { api.create(&pp, &ns("queued")).await }
    });
    // Applied in memory means queued for the committer.
    wait_until("the second write to be queued", || store.revision() == before + 2).await;
    log.hold(false);
    first.await.expect("task").expect("first create");

    // The committer found the queued write waiting, so it waits before committing it:
    // a write sent after the first commit was answered shares that commit.
    let late_ns = ns("late");
    let late = api.create(&pp, &late_ns);
    let (queued, late) = tokio::join!(queued, late);
    queued.expect("task").expect("queued create");
    late.expect("late create");

    let appends = log.appends();
    assert_eq!(appends.len(), 2, "{appends:?}");
    assert_eq!(appends[0], vec!["first".to_string()]);
    let mut second = appends[1].clone();
    second.sort();
    assert_eq!(second, vec!["late".to_string(), "queued".to_string()]);
}
