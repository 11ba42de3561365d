//! Namespace termination: a namespace being deleted has its contents deleted, and goes
//! away once it is empty (the `kubernetes` finalizer of kube-controller-manager's namespace
//! controller). Also LogicalCluster lifecycle: a new one gets its default namespaces and
//! then `status.phase: Ready`, a deleted one has its contents removed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use drydock_api::tenancy::{LOGICAL_CLUSTER_PLURAL, LogicalClusterName, TENANCY_GROUP, TENANCY_VERSION};

use super::{LOGICAL_CLUSTER_READY, init_and_mark_ready, wipe_cluster};
use crate::rest::{Api, DeleteOptions, Target};
use crate::store::watch::{All, EventType, Scope};
use crate::store::{Change, Expect, ObjKey};

pub async fn run(api: Arc<Api>) {
    let Some(ns_res) = api.registry.lookup("", "v1", "namespaces").map(|r| r.id) else {
        return;
    };
    let lc_res = api.registry.lookup(TENANCY_GROUP, TENANCY_VERSION, LOGICAL_CLUSTER_PLURAL).map(|r| r.id);
    let after = api.store.revision();
    let Ok(sub) = api.store.hub().subscribe(Scope::Everything, Arc::new(All), after, true) else {
        return;
    };
    let mut terminating: HashSet<(Arc<str>, String)> = HashSet::new();
    for (key, obj) in api.store.scan(None, Some("")) {
        if key.res == ns_res && obj.meta.deleting {
            terminating.insert((key.cluster.clone(), key.name.clone()));
        }
        // Logical clusters created before a restart, or before phases were recorded.
        if Some(key.res) == lc_res && &*key.cluster == LogicalClusterName::ROOT {
            let ready = obj.to_value().is_ok_and(|v| v["status"]["phase"] == LOGICAL_CLUSTER_READY);
            if !ready && !obj.meta.deleting {
                let api = api.clone();
                tokio::spawn(async move {
                    let _ = init_and_mark_ready(&api, &key.name).await;
                });
            }
        }
    }
    let mut rx = sub.rx;
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            ev = rx.recv() => {
                let Some((kind, ev)) = ev else { return };
                if ev.rv() <= after {
                    continue;
                }
                let key = &ev.key;
                if key.res == ns_res {
                    if kind != EventType::Deleted && ev.obj.meta.deleting
                        && terminating.insert((key.cluster.clone(), key.name.clone())) {
                        progress(&api, ns_res, &key.cluster, &key.name).await;
                    }
                } else if Some(key.res) == lc_res && &*key.cluster == LogicalClusterName::ROOT {
                    let api = api.clone();
                    let name = key.name.clone();
                    match kind {
                        EventType::Added => { tokio::spawn(async move { let _ = init_and_mark_ready(&api, &name).await; }); }
                        EventType::Deleted => { tokio::spawn(async move { wipe_cluster(&api, &name).await; }); }
                        EventType::Modified => {}
                    }
                } else if kind == EventType::Deleted && !key.namespace.is_empty()
                    && terminating.contains(&(key.cluster.clone(), key.namespace.clone())) {
                    progress(&api, ns_res, &key.cluster, &key.namespace).await;
                }
            }
            _ = tick.tick() => {
                let list: Vec<_> = terminating.iter().cloned().collect();
                for (cluster, ns) in list {
                    if progress(&api, ns_res, &cluster, &ns).await {
                        terminating.remove(&(cluster, ns));
                    }
                }
            }
        }
    }
}

/// Deletes what remains in a terminating namespace; removes the namespace once empty.
/// Returns true when the namespace is gone.
async fn progress(api: &Arc<Api>, ns_res: u32, cluster: &Arc<str>, ns: &str) -> bool {
    let key = ObjKey { cluster: cluster.clone(), res: ns_res, namespace: String::new(), name: ns.to_string() };
    let Some(nsobj) = api.store.get(&key) else {
        return true;
    };
    let contents = api.store.scan(Some(cluster), Some(ns));
    if contents.is_empty() {
        // Only our `kubernetes` finalizer (in spec) remains: the namespace can go.
        if nsobj.meta.finalizers.is_empty() {
            let _ = api.store.commit(key, Expect::Revision(nsobj.rv), Change::Delete).await;
            return true;
        }
        return false;
    }
    for (k, obj) in contents {
        if obj.meta.deleting {
            continue;
        }
        let Some(res) = api.registries.for_cluster(&k.cluster).get(k.res).cloned() else {
            // Left behind by a CRD no longer served here: nothing can act on it any more.
            let _ = api.store.commit(k, Expect::Revision(obj.rv), Change::Delete).await;
            continue;
        };
        let t = Target {
            cluster: k.cluster.clone(),
            res,
            namespace: Some(k.namespace.clone()),
            name: Some(k.name.clone()),
            sub: None,
        };
        let api = api.clone();
        tokio::spawn(async move {
            let _ = api.delete(&t, &DeleteOptions::default()).await;
        });
    }
    false
}
