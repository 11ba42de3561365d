//! SIGKILL during a write storm loses no acknowledged write: after a restart on the same
//! data dir every acknowledged object is there with the resourceVersion it was acknowledged
//! with, nothing is duplicated, and a watch from a pre-crash revision resumes or gets 410.

mod common;

use std::path::Path;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn start(dir: &Path) -> Child {
    common::spawn_drydock(dir, "127.0.0.1:0")
}

/// Waits for the kubeconfig the server writes once it listens, and returns a client.
async fn client(dir: &Path) -> kube::Client {
    let path = dir.join("kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Some(server) = text.lines().find_map(|l| l.trim().strip_prefix("server: "))
        {
            let config = kube::Config::new(server.parse().expect("server url"));
            return kube::Client::try_from(config).expect("client");
        }
        assert!(Instant::now() < deadline, "drydock did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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

    let acked = Arc::new(parking_lot::Mutex::new(Vec::<(String, String)>::new()));
    let mut writers = Vec::new();
    for w in 0..16 {
        let api = api.clone();
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let name = format!("w{w}-{i}");
                let cm: ConfigMap =
                    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"i": i.to_string()}}))
                        .expect("cm");
                match api.create(&PostParams::default(), &cm).await {
                    Ok(c) => acked.lock().push((name, c.resource_version().expect("rv"))),
                    Err(_) => break,
                }
            }
        }));
    }
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
    let acked = acked.lock().clone();
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
        assert_eq!(stored.get(name), Some(rv), "acknowledged write {name}@{rv} lost or changed");
    }

    // A watch from a pre-crash revision resumes (events after it) or is told it expired.
    let (_, mid_rv) = &acked[acked.len() / 2];
    let mut stream = api.watch(&WatchParams::default().timeout(5), mid_rv).await.expect("watch starts").boxed();
    match tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await {
        Ok(Ok(Some(WatchEvent::Added(o)))) => {
            let rv: u64 = o.resource_version().unwrap_or_default().parse().expect("numeric rv");
            assert!(rv > mid_rv.parse::<u64>().expect("numeric"), "replayed an event at or before the start revision");
        }
        Ok(Ok(Some(WatchEvent::Error(status)))) => assert_eq!(status.code, 410),
        other => panic!("expected a replayed event or 410, got {other:?}"),
    }
    child.kill().expect("kill");
    child.wait().expect("reap");
}
