//! The etcd store's semantics, through API servers in this process on a real etcd member:
//! preconditions are etcd's, a replica that restarts loads what etcd holds, writes under
//! another prefix (another drydock, another application) never hold reads up, and a
//! replica whose watch moved to another member still reads every write.

use crate::common;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};

use common::etcd::{EtcdCluster, Tls};
use drydock_apiserver::store::EtcdOptions;
use drydock_apiserver::{ApiServer, Config};

async fn server(etcd: &EtcdCluster, prefix: &str) -> ApiServer {
    let mut opts = EtcdOptions::from_url(&etcd.store_url()).expect("store URL");
    opts.prefix = prefix.into();
    ApiServer::start(Config { etcd: Some(opts), ..Config::default() }, Vec::new(), Vec::new())
        .await
        .expect("server on etcd")
}

fn config_maps(s: &ApiServer) -> Api<ConfigMap> {
    Api::namespaced(s.client(None), "default")
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "data": {"value": value}}))
        .expect("ConfigMap")
}

fn code(e: kube::Error) -> u16 {
    match e {
        kube::Error::Api(s) => s.code,
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preconditions_are_checked_by_etcd_across_replicas() {
    let etcd = EtcdCluster::start(1).await;
    let (a, b) = (server(&etcd, "/t").await, server(&etcd, "/t").await);
    let (on_a, on_b) = (config_maps(&a), config_maps(&b));

    let made = on_a.create(&PostParams::default(), &config_map("one", "1")).await.expect("create through a");
    let again = on_b.create(&PostParams::default(), &config_map("one", "1")).await.expect_err("second create");
    assert_eq!(code(again), 409, "AlreadyExists through the other replica");

    let mut newer = on_b.get("one").await.expect("read through b");
    newer.data = Some([("value".to_string(), "2".to_string())].into());
    let updated = on_b.replace("one", &PostParams::default(), &newer).await.expect("update through b");
    assert_ne!(updated.metadata.resource_version, made.metadata.resource_version);

    // a's copy is at the first revision: etcd refuses it even if a has not seen b's write.
    let mut stale = made.clone();
    stale.data = Some([("value".to_string(), "3".to_string())].into());
    let refused = on_a.replace("one", &PostParams::default(), &stale).await.expect_err("stale update");
    assert_eq!(code(refused), 409, "Conflict on a stale resourceVersion");
    assert_eq!(on_a.get("one").await.expect("read").data, updated.data, "the refused write changed nothing");

    on_a.delete("one", &DeleteParams::default()).await.expect("delete through a");
    assert!(on_b.get_opt("one").await.expect("read through b").is_none());
    let gone = on_b.replace("one", &PostParams::default(), &updated).await.expect_err("update of a deleted object");
    assert_eq!(code(gone), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_replica_serves_what_etcd_holds() {
    let etcd = EtcdCluster::start(1).await;
    let first = server(&etcd, "/r").await;
    let on_first = config_maps(&first);
    let mut versions = Vec::new();
    for i in 0..5 {
        let cm = on_first.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "x")).await.expect("create");
        versions.push(cm.metadata.resource_version);
    }
    let before = on_first.list(&ListParams::default()).await.expect("list").metadata.resource_version;
    drop(on_first);
    drop(first);

    let again = server(&etcd, "/r").await;
    let on_again = config_maps(&again);
    let listed = on_again.list(&ListParams::default()).await.expect("list after restart");
    let names_versions: Vec<_> = listed.items.iter().map(|c| c.metadata.resource_version.clone()).collect();
    assert_eq!(names_versions, versions, "every object, at its revision");

    // Its watch history starts at the revision it loaded: older revisions are expired.
    let old = versions[0].clone().expect("revision");
    let mut stream = Box::pin(on_again.watch(&WatchParams::default(), &old).await.expect("watch"));
    match stream.try_next().await.expect("watch event") {
        Some(WatchEvent::Error(e)) => assert_eq!(e.code, 410, "{e:?}"),
        other => panic!("a watch from before the restart's load is expired (410), got {other:?}"),
    }
    let from = before.expect("list revision");
    let mut stream = Box::pin(on_again.watch(&WatchParams::default(), &from).await.expect("watch"));
    on_again.create(&PostParams::default(), &config_map("after", "y")).await.expect("create after restart");
    match stream.try_next().await.expect("watch event") {
        Some(WatchEvent::Added(cm)) => assert_eq!(cm.metadata.name.as_deref(), Some("after")),
        other => panic!("the write after the restart is watched, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_under_another_prefix_move_the_revision_without_holding_reads_up() {
    let etcd = EtcdCluster::start(1).await;
    let (ours, theirs) = (server(&etcd, "/ours").await, server(&etcd, "/theirs").await);
    let (on_ours, on_theirs) = (config_maps(&ours), config_maps(&theirs));
    on_ours.create(&PostParams::default(), &config_map("mine", "1")).await.expect("create");
    let mut last = 0u64;
    for i in 0..20 {
        let cm = on_theirs.create(&PostParams::default(), &config_map(&format!("t-{i}"), "1")).await.expect("create");
        last = cm.metadata.resource_version.and_then(|v| v.parse().ok()).expect("numeric resourceVersion");
    }
    // A consistent list waits for etcd's current revision, which only writes outside this
    // server's prefix moved: the watch learns it is there from a barrier write.
    let listed = on_ours.list(&ListParams::default()).await.expect("list");
    let at: u64 = listed.metadata.resource_version.and_then(|v| v.parse().ok()).expect("list revision");
    assert!(at >= last, "the list is at etcd's revision {last} or later, not {at}");
    let names: Vec<_> = listed.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["mine"], "only this server's objects");
}

/// The member a replica's watch is on dies; while the watch resumes on another member from
/// where it stopped, etcd's revision keeps moving (writes through another replica, and
/// under another prefix). Every read through the replica is consistent all along: it sees
/// the write made just before it through the other replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_watch_moved_to_another_member_reads_every_write() {
    let mut etcd = EtcdCluster::start(3).await;
    let (a, b, other) = (server(&etcd, "/r").await, server(&etcd, "/r").await, server(&etcd, "/other").await);
    let (on_a, on_b, on_other) = (config_maps(&a), config_maps(&b), config_maps(&other));
    on_a.create(&PostParams::default(), &config_map("before", "1")).await.expect("create");
    assert!(on_b.get_opt("before").await.expect("get through b").is_some(), "b follows a");

    etcd.kill(0);
    for i in 0..60 {
        let name = format!("cm-{i}");
        on_a.create(&PostParams::default(), &config_map(&name, "1")).await.expect("create through a");
        on_other.create(&PostParams::default(), &config_map(&name, "1")).await.expect("create under /other");
        let read = on_b.get_opt(&name).await.expect("get through b");
        assert!(read.is_some(), "{name}, written through a, is read through b");
    }
    let listed = on_b.list(&ListParams::default()).await.expect("list through b");
    assert_eq!(listed.items.len(), 61, "b lists every write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_over_tls_with_a_client_certificate() {
    let tls = Tls::generate();
    let etcd = EtcdCluster::start_with(1, Some(&tls)).await;
    let mut opts = EtcdOptions::from_url(&etcd.store_url()).expect("store URL");
    opts.prefix = "/tls".into();
    opts.ca_file = Some(tls.ca.clone());

    // etcd asks for a client certificate: without one, the store does not open.
    let refused = ApiServer::start(Config { etcd: Some(opts.clone()), ..Config::default() }, Vec::new(), Vec::new())
        .await
        .err()
        .expect("no client certificate");
    assert!(format!("{refused:#}").contains("etcd"), "the error names etcd: {refused:#}");

    opts.cert_file = Some(tls.client_cert.clone());
    opts.key_file = Some(tls.client_key.clone());
    let s = ApiServer::start(Config { etcd: Some(opts), ..Config::default() }, Vec::new(), Vec::new())
        .await
        .expect("server on etcd over TLS");
    let made = config_maps(&s).create(&PostParams::default(), &config_map("secure", "1")).await.expect("create");
    let read = config_maps(&s).get("secure").await.expect("read");
    assert_eq!(read.metadata.resource_version, made.metadata.resource_version);
}
