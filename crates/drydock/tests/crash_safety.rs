//! SIGKILL during a write storm loses no acknowledged write: after a restart on the same
//! data dir every acknowledged object is there with the resourceVersion it was acknowledged
//! with, nothing is duplicated, and a watch from a pre-crash revision resumes or gets 410.
//! Nor anything a reader or watcher saw: every object version read before the kill is
//! still readable at its revision (or superseded by a later one), revisions go on past
//! everything seen, and a watch resumed from the last revision a watcher saw gets every
//! later event exactly once.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use parking_lot::Mutex;
use serde_json::json;

fn start(dir: &Path) -> common::Process {
    common::spawn_drydock(dir, "127.0.0.1:0")
}

/// Waits for the kubeconfig the server writes once it listens, and returns a client.
async fn client(dir: &Path) -> kube::Client {
    common::process_client(dir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_write_storm_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = start(dir.path());
    let api: Api<ConfigMap> = Api::namespaced(client(dir.path()).await, "default");
    // Wait until the server answers.
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "server not answering");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let start_rv = api.list(&ListParams::default()).await.expect("list").metadata.resource_version.expect("rv");
    let acked = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let seen = Arc::new(Seen::default());
    let mut writers = Vec::new();
    for w in 0..16 {
        writers.push(tokio::spawn(write_storm(api.clone(), w, acked.clone())));
    }
    let readers = [
        tokio::spawn(list_storm(api.clone(), seen.clone())),
        tokio::spawn(get_storm(api.clone(), acked.clone(), seen.clone())),
    ];
    let watcher = tokio::spawn(watch_storm(api.clone(), start_rv, seen.clone()));
    // Let the storm run, then kill the server mid-flight.
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.lock().len() < 2000 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    for w in writers {
        let _ = w.await;
    }
    for r in readers {
        let _ = r.await;
    }
    let watched_upto = watcher.await.expect("watcher task");
    // The latest acknowledged version of each name (updates follow creates).
    let acked: Vec<(String, String)> = {
        let all = acked.lock().clone();
        let latest: HashMap<String, String> = all.into_iter().collect();
        latest.into_iter().collect()
    };
    assert!(acked.len() >= 100, "too few writes acknowledged before the kill: {}", acked.len());

    let mut child = start(dir.path());
    let api: Api<ConfigMap> = Api::namespaced(client(dir.path()).await, "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    let list = loop {
        match api.list(&ListParams::default()).await {
            Ok(l) => break l,
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => panic!("server not answering after restart: {e}"),
        }
    };
    let stored: std::collections::HashMap<String, String> =
        list.items.iter().map(|c| (c.name_any(), c.resource_version().unwrap_or_default())).collect();
    assert_eq!(stored.len(), list.items.len(), "duplicate names after restart");
    let mut rvs: Vec<&String> = stored.values().collect();
    rvs.sort();
    rvs.dedup();
    assert_eq!(rvs.len(), stored.len(), "two objects share a resourceVersion");
    for (name, rv) in &acked {
        // An update in flight at the kill may be durable without having been acknowledged.
        let now = stored.get(name).map(|s| s.parse::<u64>().expect("numeric rv"));
        assert!(now >= Some(rv.parse().expect("numeric rv")), "acknowledged write {name}@{rv} lost ({now:?} stored)");
    }
    let current: u64 = list.metadata.resource_version.as_deref().expect("rv").parse().expect("numeric rv");
    check_seen(&api, &seen, &stored, current).await;
    check_resumed_watch(&api, watched_upto, &stored, current).await;

    // A watch from a pre-crash revision resumes (events after it) or is told it expired.
    let (_, mid_rv) = &acked[acked.len() / 2];
    let mut stream = api.watch(&WatchParams::default().timeout(5), mid_rv).await.expect("watch starts").boxed();
    match tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Added(o) | WatchEvent::Modified(o)))) => {
            let rv: u64 = o.resource_version().unwrap_or_default().parse().expect("numeric rv");
            assert!(rv > mid_rv.parse::<u64>().expect("numeric"), "replayed an event at or before the start revision");
        }
        Ok(Ok(Some(WatchEvent::Error(status)))) => assert_eq!(status.code, 410),
        other => panic!("expected a replayed event or 410, got {other:?}"),
    }
    child.kill().expect("kill");
    child.wait().expect("reap");
}

/// Everything readers and watchers were shown before the kill.
#[derive(Default)]
struct Seen {
    /// (name, resourceVersion) of every object version read or watched.
    versions: Mutex<Vec<(String, u64)>>,
    /// The highest revision shown anywhere (objects, list revisions).
    max_rv: Mutex<u64>,
}

impl Seen {
    fn object(&self, c: &ConfigMap) {
        let rv = rv_of(c);
        self.versions.lock().push((c.name_any(), rv));
        self.revision(rv);
    }
    fn revision(&self, rv: u64) {
        let mut m = self.max_rv.lock();
        *m = (*m).max(rv);
    }
}

fn rv_of(c: &ConfigMap) -> u64 {
    c.resource_version().unwrap_or_default().parse().expect("numeric rv")
}

/// Creates objects until the server goes away, updating every third one once.
async fn write_storm(api: Api<ConfigMap>, w: usize, acked: Arc<Mutex<Vec<(String, String)>>>) {
    for i in 0.. {
        let name = format!("w{w}-{i}");
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": name}, "data": {"i": i.to_string()}})).expect("cm");
        let Ok(mut c) = api.create(&PostParams::default(), &cm).await else { break };
        acked.lock().push((name.clone(), c.resource_version().expect("rv")));
        if i % 3 == 0 {
            c.data = Some([("i".to_string(), format!("{i}-updated"))].into());
            let Ok(c) = api.replace(&name, &PostParams::default(), &c).await else { break };
            acked.lock().push((name, c.resource_version().expect("rv")));
        }
    }
}

/// Lists everything until the server goes away.
async fn list_storm(api: Api<ConfigMap>, seen: Arc<Seen>) {
    while let Ok(list) = api.list(&ListParams::default()).await {
        for c in &list.items {
            seen.object(c);
        }
        seen.revision(list.metadata.resource_version.as_deref().unwrap_or("0").parse().expect("numeric rv"));
    }
}

/// Gets recently acknowledged objects until the server goes away.
async fn get_storm(api: Api<ConfigMap>, acked: Arc<Mutex<Vec<(String, String)>>>, seen: Arc<Seen>) {
    loop {
        let name = {
            let a = acked.lock();
            a.len().checked_sub(1 + a.len() % 7).and_then(|i| a.get(i)).map(|(n, _)| n.clone())
        };
        let Some(name) = name else {
            tokio::task::yield_now().await;
            continue;
        };
        match api.get(&name).await {
            Ok(c) => seen.object(&c),
            Err(kube::Error::Api(_)) => {}
            Err(_) => return,
        }
    }
}

/// Watches from `from` until the server goes away; returns the last revision seen.
async fn watch_storm(api: Api<ConfigMap>, from: String, seen: Arc<Seen>) -> String {
    let mut last = from;
    let Ok(stream) = api.watch(&WatchParams::default().timeout(60), &last).await else { return last };
    let mut stream = stream.boxed();
    while let Ok(Some(ev)) = stream.try_next().await {
        match ev {
            WatchEvent::Added(c) | WatchEvent::Modified(c) | WatchEvent::Deleted(c) => {
                seen.object(&c);
                last = c.resource_version().expect("rv");
            }
            WatchEvent::Bookmark(b) => last = b.metadata.resource_version,
            WatchEvent::Error(_) => break,
        }
    }
    last
}

/// Every version seen is the stored one, or a later one is stored and the seen one is
/// readable at its revision; revisions go on past everything seen.
async fn check_seen(api: &Api<ConfigMap>, seen: &Seen, stored: &HashMap<String, String>, current: u64) {
    let versions = seen.versions.lock().clone();
    assert!(!versions.is_empty(), "readers and watchers saw nothing before the kill");
    let max_seen = *seen.max_rv.lock();
    assert!(current >= max_seen, "revision went back: {current} after {max_seen} was seen");
    let mut superseded = Vec::new();
    for (name, rv) in &versions {
        let now: u64 =
            stored.get(name).unwrap_or_else(|| panic!("{name}@{rv} was seen, then lost")).parse().expect("rv");
        assert!(now >= *rv, "{name}@{rv} was seen, but {name}@{now} is stored");
        if now > *rv {
            superseded.push((name.clone(), *rv));
        }
    }
    superseded.sort();
    superseded.dedup();
    for (name, rv) in superseded.iter().take(200) {
        let lp = ListParams::default()
            .fields(&format!("metadata.name={name}"))
            .at(&rv.to_string())
            .matching(kube::api::VersionMatch::Exact);
        let list = api.list(&lp).await.expect("exact list of a seen revision");
        let got: Vec<u64> = list.items.iter().map(rv_of).collect();
        assert_eq!(got, [*rv], "{name}@{rv} was seen but is not in the history");
    }
    let next = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "after-restart"}})).expect("cm"),
        )
        .await
        .expect("write after restart");
    assert!(rv_of(&next) > max_seen, "revision {} reused after {max_seen} was seen", rv_of(&next));
}

/// A watch resumed from `from` replays each later change once, in order, ending at the
/// stored state.
async fn check_resumed_watch(api: &Api<ConfigMap>, from: String, stored: &HashMap<String, String>, current: u64) {
    let from: u64 = from.parse().expect("numeric rv");
    let mut stream =
        api.watch(&WatchParams::default().timeout(10), &from.to_string()).await.expect("resumed watch").boxed();
    let mut last = from;
    let mut latest: HashMap<String, u64> = HashMap::new();
    while last < current {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await {
            Ok(Ok(Some(WatchEvent::Added(c) | WatchEvent::Modified(c)))) => {
                let rv = rv_of(&c);
                assert!(rv > last, "event {rv} replayed after {last}: twice or out of order");
                last = rv;
                latest.insert(c.name_any(), rv);
            }
            other => panic!("resumed watch from {from}: expected events up to {current}, got {other:?} after {last}"),
        }
    }
    for (name, rv) in stored {
        let rv: u64 = rv.parse().expect("rv");
        if rv > from {
            assert_eq!(latest.get(name), Some(&rv), "the resumed watch missed {name}@{rv}");
        }
    }
}
