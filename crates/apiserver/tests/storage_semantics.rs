//! Storage, list and watch semantics as etcd and kube-apiserver give them: revisions the
//! store has not reached (504 after a bounded wait), exact lists of past revisions, continue
//! tokens that keep their snapshot and expire with the history, the option combinations
//! kube-apiserver refuses, watch-list (initial events and their end bookmark), and reads
//! that never show a write that is not durable.

use crate::common;

use std::time::{Duration, Instant};

use axum::body::Body;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher;
use serde_json::{Value, json};
use tower::ServiceExt;

fn cm(name: &str, v: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": v}})).expect("configmap")
}

/// A GET through the router: status code and body parsed as JSON.
async fn get_json(router: &axum::Router, uri: &str) -> (u16, Value) {
    let req = axum::http::Request::get(uri).body(Body::empty()).expect("request");
    let resp = router.clone().oneshot(req).await.expect("response");
    let code = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), 16 << 20).await.expect("body");
    (code, serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into())))
}

/// Reads watch events from a streamed response until `stop` holds for one (inclusive).
async fn watch_until(router: &axum::Router, uri: &str, mut stop: impl FnMut(&Value) -> bool) -> Vec<Value> {
    let req = axum::http::Request::get(uri).body(Body::empty()).expect("request");
    let resp = router.clone().oneshot(req).await.expect("response");
    assert_eq!(resp.status().as_u16(), 200, "{uri}");
    let mut body = resp.into_body().into_data_stream();
    let (mut buf, mut events) = (Vec::new(), Vec::new());
    let read = async {
        while let Some(chunk) = body.next().await {
            buf.extend_from_slice(&chunk.expect("chunk"));
            while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                let ev: Value = serde_json::from_slice(&line).expect("event");
                let done = stop(&ev);
                events.push(ev);
                if done {
                    return;
                }
            }
        }
        panic!("the watch ended before the expected event: {events:?}");
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("expected watch event in time");
    events
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().expect("items").iter().map(|i| i["metadata"]["name"].as_str().unwrap().into()).collect()
}

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"].as_str().expect("rv").parse().expect("numeric rv")
}

fn assert_status(got: &(u16, Value), code: u16, reason: &str, message: &str) {
    assert_eq!(got.0, code, "{:?}", got.1);
    assert_eq!(got.1["kind"], "Status", "{:?}", got.1);
    assert_eq!(got.1["reason"], reason, "{:?}", got.1);
    assert_eq!(got.1["message"], message, "{:?}", got.1);
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_ahead_of_the_store_waits_then_answers_504() {
    let wait = Duration::from_millis(400);
    let srv = common::start_with(tempfile::tempdir().expect("tempdir"), |c| c.store.future_rv_wait = wait).await;
    let router = srv.server.router();
    let api: Api<ConfigMap> = Api::namespaced(srv.in_process_client(), "default");
    let first = api.create(&PostParams::default(), &cm("a", "1")).await.expect("create");
    let current: u64 = first.resource_version().expect("rv").parse().expect("rv");
    let ahead = current + 100;
    let message = format!("Timeout: Too large resource version: {ahead}, current: {current}");
    for uri in [format!("{CMS}?resourceVersion={ahead}"), format!("{CMS}/a?resourceVersion={ahead}")] {
        let started = Instant::now();
        let got = get_json(&router, &uri).await;
        assert!(started.elapsed() >= wait, "{uri} answered before the wait ended");
        assert_status(&got, 504, "Timeout", &message);
        assert_eq!(got.1["details"]["retryAfterSeconds"], 1);
        assert_eq!(got.1["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
    }
    // A watch gets the same Status as its one ERROR event.
    let events = watch_until(&router, &format!("{CMS}?watch=true&resourceVersion={ahead}"), |_| true).await;
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 504);
    assert_eq!(events[0]["object"]["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");

    // A revision reached within the wait is served.
    let next = current + 1;
    let uri = format!("{CMS}?resourceVersion={next}");
    let (list, _) = tokio::join!(get_json(&router, &uri), async {
        api.create(&PostParams::default(), &cm("b", "1")).await.expect("create b")
    });
    assert_eq!(list.0, 200, "{:?}", list.1);
    assert!(rv_of(&list.1) >= next);
    assert_eq!(names(&list.1), ["a", "b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_list_shows_a_past_revision() {
    let srv = common::start().await;
    let router = srv.server.router();
    let api: Api<ConfigMap> = Api::namespaced(srv.in_process_client(), "default");
    let pp = PostParams::default();
    api.create(&pp, &cm("gone", "1")).await.expect("create");
    let kept = api.create(&pp, &cm("kept", "old")).await.expect("create");
    let past = rv_of(&get_json(&router, CMS).await.1);
    api.delete("gone", &DeleteParams::default()).await.expect("delete");
    let mut changed = kept.clone();
    changed.data = Some([("v".to_string(), "new".to_string())].into());
    api.replace("kept", &pp, &changed).await.expect("update");
    api.create(&pp, &cm("later", "1")).await.expect("create");

    for q in [format!("resourceVersionMatch=Exact&resourceVersion={past}"), format!("limit=10&resourceVersion={past}")]
    {
        let (code, list) = get_json(&router, &format!("{CMS}?{q}")).await;
        assert_eq!(code, 200, "{q}: {list}");
        assert_eq!(rv_of(&list), past, "{q}");
        assert_eq!(names(&list), ["gone", "kept"], "{q}");
        assert_eq!(list["items"][1]["data"]["v"], "old", "{q}");
        assert_eq!(list["items"][1]["metadata"]["resourceVersion"], json!(kept.resource_version()), "{q}");
    }
    // NotOlderThan is served the latest state.
    let (_, list) = get_json(&router, &format!("{CMS}?resourceVersionMatch=NotOlderThan&resourceVersion={past}")).await;
    assert_eq!(names(&list), ["kept", "later"]);
    assert!(rv_of(&list) > past);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_pages_keep_their_snapshot_and_expire_with_the_history() {
    let history = 24;
    let srv = common::start_with(tempfile::tempdir().expect("tempdir"), |c| c.store.watch_history = history).await;
    let router = srv.server.router();
    let api: Api<ConfigMap> = Api::namespaced(srv.in_process_client(), "default");
    let pp = PostParams::default();
    for i in 0..5 {
        api.create(&pp, &cm(&format!("c{i}"), "1")).await.expect("create");
    }
    let (_, page1) = get_json(&router, &format!("{CMS}?limit=2")).await;
    assert_eq!(names(&page1), ["c0", "c1"]);
    assert_eq!(page1["metadata"]["remainingItemCount"], 3);
    let snapshot = rv_of(&page1);
    // Concurrent writes after the first page: none of them shows on later pages.
    api.delete("c3", &DeleteParams::default()).await.expect("delete");
    api.create(&pp, &cm("c2a", "1")).await.expect("create");
    let mut seen = names(&page1);
    let mut token = page1["metadata"]["continue"].as_str().expect("continue").to_string();
    loop {
        let (code, page) = get_json(&router, &format!("{CMS}?limit=2&continue={token}")).await;
        assert_eq!(code, 200, "{page}");
        assert_eq!(rv_of(&page), snapshot);
        seen.extend(names(&page));
        match page["metadata"]["continue"].as_str() {
            Some(t) => token = t.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, ["c0", "c1", "c2", "c3", "c4"]);

    // Once the history no longer reaches the snapshot: 410 with a token going on from the latest.
    let (_, page1) = get_json(&router, &format!("{CMS}?limit=2")).await;
    let token = page1["metadata"]["continue"].as_str().expect("continue").to_string();
    for i in 0..=history {
        api.create(&pp, &cm(&format!("z{i}"), "1")).await.expect("create");
    }
    let expired = get_json(&router, &format!("{CMS}?limit=2&continue={token}")).await;
    assert_eq!((expired.0, &expired.1["reason"]), (410, &json!("Expired")), "{:?}", expired.1);
    assert!(expired.1["message"].as_str().unwrap().starts_with("The provided continue parameter is too old"));
    let latest = expired.1["metadata"]["continue"].as_str().expect("new continue token");
    let (code, rest) = get_json(&router, &format!("{CMS}?limit=100&continue={latest}")).await;
    assert_eq!(code, 200, "{rest}");
    assert_eq!(names(&rest).first().map(String::as_str), Some("c2"));
    assert!(rv_of(&rest) > snapshot);

    // The same for an exact list of a revision the history no longer holds.
    let old = get_json(&router, &format!("{CMS}?resourceVersionMatch=Exact&resourceVersion={snapshot}")).await;
    assert_status(&old, 410, "Expired", "The resourceVersion for the provided list is too old.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_option_combinations() {
    let srv = common::start().await;
    let router = srv.server.router();
    let token = get_json(&router, &format!("{CMS}?limit=1")).await;
    assert_eq!(token.0, 200);
    let invalid = |detail: &str| format!("ListOptions.meta.k8s.io \"\" is invalid: {detail}");
    let cases = [
        (
            "resourceVersionMatch=Exact",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ),
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ),
        ),
        (
            "resourceVersionMatch=Exact&resourceVersion=0",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ),
        ),
        (
            "resourceVersionMatch=Newest&resourceVersion=1",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
            ),
        ),
        (
            "sendInitialEvents=true",
            422,
            "Invalid",
            invalid("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
        ),
        (
            "continue=abc&resourceVersion=5",
            400,
            "BadRequest",
            "specifying resource version is not allowed when using continue".into(),
        ),
        (
            "watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ),
        ),
        (
            "watch=true&sendInitialEvents=true",
            422,
            "Invalid",
            invalid(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ),
        ),
        ("resourceVersion=abc", 400, "BadRequest", "invalid resource version: \"abc\"".into()),
    ];
    for (q, code, reason, message) in cases {
        let got = get_json(&router, &format!("{CMS}?{q}")).await;
        assert_status(&got, code, reason, &message);
    }
    let bad = get_json(&router, &format!("{CMS}?continue=notatoken")).await;
    assert_eq!((bad.0, &bad.1["reason"]), (400, &json!("BadRequest")));
    assert!(bad.1["message"].as_str().unwrap().starts_with("invalid continue token: continue key is not valid"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_streams_the_snapshot_sorted_then_an_end_bookmark_then_changes() {
    let srv = common::start().await;
    let router = srv.server.router();
    let api: Api<ConfigMap> = Api::namespaced(srv.in_process_client(), "default");
    let pp = PostParams::default();
    for name in ["b", "c", "a"] {
        api.create(&pp, &cm(name, "1")).await.expect("create");
    }
    let snapshot = rv_of(&get_json(&router, CMS).await.1);
    let uri = "/api/v1/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0";
    let events = watch_until(&router, uri, |e| e["type"] == "BOOKMARK").await;
    let (added, end) = events.split_at(events.len() - 1);
    let keys: Vec<(String, String)> = added
        .iter()
        .map(|e| {
            assert_eq!(e["type"], "ADDED");
            let m = &e["object"]["metadata"];
            (m["namespace"].as_str().unwrap().into(), m["name"].as_str().unwrap().into())
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "initial events sorted by namespace/name");
    assert!(keys.contains(&("default".into(), "a".into())) && keys.contains(&("default".into(), "c".into())));
    let bookmark = &end[0]["object"];
    assert_eq!(bookmark["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    assert!(rv_of(bookmark) >= snapshot);
    let blueprint = bookmark["metadata"]["annotations"]["kubernetes.io/initial-events-list-blueprint"].as_str();
    let blueprint: Value = {
        use base64::Engine;
        let raw = base64::engine::general_purpose::STANDARD.decode(blueprint.expect("blueprint")).expect("base64");
        serde_json::from_slice(&raw).expect("json")
    };
    assert_eq!((&blueprint["kind"], &blueprint["apiVersion"]), (&json!("ConfigMapList"), &json!("v1")));

    // A watch-list from a revision ends its initial events the same way and then goes on.
    let uri = format!(
        "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion={snapshot}"
    );
    let events = watch_until(&router, &uri, |e| {
        // Written once the initial events are out: it must follow them as a change.
        if e["type"] == "BOOKMARK" {
            let api = api.clone();
            tokio::spawn(async move { api.create(&PostParams::default(), &cm("d", "1")).await.expect("create d") });
        }
        e["type"] == "ADDED" && e["object"]["metadata"]["name"] == "d"
    })
    .await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let n = types.len();
    assert!(n >= 5 && types[..n - 2].iter().all(|t| *t == "ADDED"), "{types:?}");
    assert_eq!(types[n - 2..], ["BOOKMARK", "ADDED"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_streaming_lists_work() {
    let srv = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(srv.client().await, "default");
    let pp = PostParams::default();
    api.create(&pp, &cm("before", "1")).await.expect("create");
    let mut stream = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut initial = Vec::new();
    let deadline = Duration::from_secs(10);
    loop {
        match tokio::time::timeout(deadline, stream.try_next()).await.expect("event in time").expect("event") {
            Some(watcher::Event::Init) => {}
            Some(watcher::Event::InitApply(o)) => initial.push(o.name_any()),
            Some(watcher::Event::InitDone) => break,
            other => panic!("unexpected event before InitDone: {other:?}"),
        }
    }
    assert_eq!(initial, ["before"]);
    api.create(&pp, &cm("after", "1")).await.expect("create");
    match tokio::time::timeout(deadline, stream.try_next()).await.expect("event in time").expect("event") {
        Some(watcher::Event::Apply(o)) => assert_eq!(o.name_any(), "after"),
        other => panic!("expected the new object, got {other:?}"),
    }
}
