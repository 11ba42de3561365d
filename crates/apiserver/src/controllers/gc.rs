//! Garbage collection by ownerReferences, as kube-controller-manager's garbage collector:
//! when every owner of an object is gone, the object is deleted (background propagation);
//! an owner being deleted with `foregroundDeletion` waits for its blocking dependents;
//! one deleted with `orphan` has its dependents released first.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::patch::{PatchBody, PatchType};
use crate::rest::{Api, DeleteOptions, Target, WriteOptions};
use crate::store::watch::{All, EventType, Scope};
use crate::store::{ObjKey, Stored};

type Uid = (Arc<str>, String);

#[derive(Default)]
struct Graph {
    /// Live objects by (cluster, uid).
    objects: HashMap<Uid, ObjKey>,
    /// Owner (cluster, uid) → dependents.
    dependents: HashMap<Uid, HashSet<ObjKey>>,
    /// Each dependent's owner uids, to unlink on change.
    owners: HashMap<ObjKey, Vec<String>>,
}

impl Graph {
    /// Records an object; returns the owner uids it no longer references.
    fn upsert(&mut self, key: &ObjKey, obj: &Stored) -> Vec<String> {
        let id = (key.cluster.clone(), obj.meta.uid.clone());
        // Most writes (every status write) keep the owners: nothing to relink.
        let same_owners = match self.owners.get(key) {
            Some(old) => old.iter().eq(obj.meta.owners.iter().map(|o| &o.uid)),
            None => obj.meta.owners.is_empty(),
        };
        if same_owners && self.objects.get(&id) == Some(key) {
            return Vec::new();
        }
        self.objects.insert(id, key.clone());
        let new: Vec<String> = obj.meta.owners.iter().map(|o| o.uid.clone()).collect();
        let old = self.owners.remove(key).unwrap_or_default();
        for uid in old.iter().filter(|u| !new.contains(u)) {
            if let Some(set) = self.dependents.get_mut(&(key.cluster.clone(), uid.clone())) {
                set.remove(key);
            }
        }
        for uid in &new {
            self.dependents.entry((key.cluster.clone(), uid.clone())).or_default().insert(key.clone());
        }
        if !new.is_empty() {
            self.owners.insert(key.clone(), new.clone());
        }
        old.into_iter().filter(|u| !new.contains(u)).collect()
    }

    fn remove(&mut self, key: &ObjKey, uid: &str) {
        self.objects.remove(&(key.cluster.clone(), uid.to_string()));
        for o in self.owners.remove(key).unwrap_or_default() {
            if let Some(set) = self.dependents.get_mut(&(key.cluster.clone(), o)) {
                set.remove(key);
            }
        }
    }

    /// Whether an owner reference of `dependent` points at a live object it may be owned by.
    fn owner_alive(&self, dependent: &ObjKey, uid: &str) -> bool {
        match self.objects.get(&(dependent.cluster.clone(), uid.to_string())) {
            // A namespaced owner must share the dependent's namespace.
            Some(owner) => owner.namespace.is_empty() || owner.namespace == dependent.namespace,
            None => false,
        }
    }
}

pub async fn run(api: Arc<Api>) {
    let after = api.store.revision();
    let sub = match api.store.hub().subscribe(Scope::Everything, Arc::new(All), after, true) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(oldest = e.oldest, "garbage collector could not subscribe");
            return;
        }
    };
    let mut graph = Graph::default();
    let snapshot = api.store.scan(None, None);
    for (key, obj) in &snapshot {
        graph.upsert(key, obj);
    }
    // Objects orphaned while the server was down.
    for (key, obj) in &snapshot {
        check(&api, &graph, key, obj);
    }
    let mut rx = sub.rx;
    let mut last = after;
    for (_, ev) in sub.replay {
        last = last.max(ev.rv());
        handle(&api, &mut graph, ev.kind, &ev.key, &ev.obj);
    }
    while let Some((kind, ev)) = rx.recv().await {
        if ev.rv() <= last {
            continue;
        }
        handle(&api, &mut graph, kind, &ev.key, &ev.obj);
    }
}

fn handle(api: &Arc<Api>, graph: &mut Graph, kind: EventType, key: &ObjKey, obj: &Arc<Stored>) {
    match kind {
        EventType::Deleted => {
            graph.remove(key, &obj.meta.uid);
            let deps: Vec<ObjKey> = graph
                .dependents
                .remove(&(key.cluster.clone(), obj.meta.uid.clone()))
                .map(|s| s.into_iter().collect())
                .unwrap_or_default();
            for dep in deps {
                if let Some(d) = api.store.get(&dep) {
                    check(api, graph, &dep, &d);
                }
            }
            // An owner waiting in foreground deletion may now be free.
            for o in &obj.meta.owners {
                if let Some(owner_key) = graph.objects.get(&(key.cluster.clone(), o.uid.clone())).cloned()
                    && let Some(owner) = api.store.get(&owner_key)
                {
                    check_deleting_owner(api, graph, &owner_key, &owner);
                }
            }
        }
        EventType::Added | EventType::Modified => {
            let released = graph.upsert(key, obj);
            check(api, graph, key, obj);
            check_deleting_owner(api, graph, key, obj);
            // An owner being deleted may have been waiting for this dependent to let go.
            for uid in released {
                if let Some(owner_key) = graph.objects.get(&(key.cluster.clone(), uid)).cloned()
                    && let Some(owner) = api.store.get(&owner_key)
                {
                    check_deleting_owner(api, graph, &owner_key, &owner);
                }
            }
        }
    }
}

/// Deletes `obj` if it has owners and none of them is alive.
fn check(api: &Arc<Api>, graph: &Graph, key: &ObjKey, obj: &Stored) {
    if obj.meta.owners.is_empty() || obj.meta.deleting {
        return;
    }
    if obj.meta.owners.iter().any(|o| graph.owner_alive(key, &o.uid)) {
        return;
    }
    spawn_delete(api, key.clone(), obj.meta.uid.clone());
}

/// Progresses an owner that carries the `foregroundDeletion` or `orphan` finalizer.
fn check_deleting_owner(api: &Arc<Api>, graph: &Graph, key: &ObjKey, obj: &Stored) {
    if !obj.meta.deleting {
        return;
    }
    let deps: Vec<ObjKey> = graph
        .dependents
        .get(&(key.cluster.clone(), obj.meta.uid.clone()))
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    let fin = |f: &str| obj.meta.finalizers.iter().any(|x| x == f);
    if fin("orphan") {
        for dep in &deps {
            spawn_unlink(api, dep.clone(), obj.meta.uid.clone());
        }
        if deps.is_empty() {
            spawn_remove_finalizer(api, key.clone(), "orphan");
        }
    } else if fin("foregroundDeletion") {
        let mut blocking = false;
        for dep in &deps {
            if let Some(d) = api.store.get(dep) {
                if d.meta.owners.iter().any(|o| o.uid == obj.meta.uid && o.block_owner_deletion) {
                    blocking = true;
                }
                if !d.meta.deleting {
                    spawn_delete(api, dep.clone(), d.meta.uid.clone());
                }
            }
        }
        if !blocking {
            spawn_remove_finalizer(api, key.clone(), "foregroundDeletion");
        }
    }
}

fn target_of(api: &Api, key: &ObjKey) -> Option<Target> {
    let res = api.registries.for_cluster(&key.cluster).get(key.res)?.clone();
    Some(Target {
        cluster: key.cluster.clone(),
        namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
        name: Some(key.name.clone()),
        res,
        sub: None,
    })
}

fn spawn_delete(api: &Arc<Api>, key: ObjKey, uid: String) {
    let api = api.clone();
    tokio::spawn(async move {
        let Some(t) = target_of(&api, &key) else {
            return;
        };
        let opts = DeleteOptions { precondition_uid: Some(uid), ..Default::default() };
        match api.delete(&t, &opts).await {
            Ok(_) => tracing::debug!(object = %key.name, "garbage collected"),
            Err(e) if e.code == 404 || e.code == 409 => {}
            Err(e) => tracing::warn!(object = %key.name, error = %e, "garbage collection failed"),
        }
    });
}

/// Removes the owner reference to `owner_uid` from a dependent (orphaning it).
fn spawn_unlink(api: &Arc<Api>, key: ObjKey, owner_uid: String) {
    let api = api.clone();
    tokio::spawn(async move {
        let Some(t) = target_of(&api, &key) else {
            return;
        };
        let Ok(cur) = api.get(&t) else { return };
        let refs: Vec<Value> = cur
            .meta
            .owners
            .iter()
            .filter(|o| o.uid != owner_uid)
            .map(|o| {
                json!({"apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
                "controller": o.controller, "blockOwnerDeletion": o.block_owner_deletion})
            })
            .collect();
        let patch = json!({"metadata": {"ownerReferences": if refs.is_empty() { Value::Null } else { Value::Array(refs) },
            "resourceVersion": cur.rv.to_string()}});
        if let Err(e) = api
            .patch(&t, PatchType::Merge, PatchBody::value(patch), &WriteOptions::by("drydock-garbage-collector"))
            .await
            && e.code != 404
        {
            tracing::debug!(object = %key.name, error = %e, "orphaning dependent failed; will retry on next event");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
}

fn spawn_remove_finalizer(api: &Arc<Api>, key: ObjKey, finalizer: &'static str) {
    let api = api.clone();
    tokio::spawn(async move {
        let Some(t) = target_of(&api, &key) else {
            return;
        };
        let Ok(cur) = api.get(&t) else { return };
        let fins: Vec<&String> = cur.meta.finalizers.iter().filter(|f| *f != finalizer).collect();
        let patch = json!({"metadata": {"finalizers": fins, "resourceVersion": cur.rv.to_string()}});
        if let Err(e) = api
            .patch(&t, PatchType::Merge, PatchBody::value(patch), &WriteOptions::by("drydock-garbage-collector"))
            .await
            && e.code != 404
            && e.code != 409
        {
            tracing::warn!(object = %key.name, error = %e, "removing finalizer failed");
        }
    });
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::json;

    use super::*;

    fn stored(uid: &str, owners: &[&str]) -> Stored {
        let refs: Vec<Value> =
            owners.iter().map(|u| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": u, "uid": u})).collect();
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": uid, "namespace": "ns", "uid": uid, "ownerReferences": refs}});
        Stored::from_bytes(1, Bytes::from(serde_json::to_vec(&obj).expect("json")), &[]).expect("stored")
    }

    #[test]
    fn dependents_follow_their_owner_references() {
        let key = |name: &str| ObjKey { cluster: Arc::from(""), res: 1, namespace: "ns".into(), name: name.into() };
        let dependents_of = |g: &Graph, uid: &str| -> Vec<String> {
            let mut names: Vec<String> = g
                .dependents
                .get(&(Arc::from(""), uid.to_string()))
                .map(|s| s.iter().map(|k| k.name.clone()).collect())
                .unwrap_or_default();
            names.sort();
            names
        };
        let mut g = Graph::default();
        assert!(g.upsert(&key("a"), &stored("a", &[])).is_empty());
        assert!(g.upsert(&key("d"), &stored("d", &["a"])).is_empty());
        assert_eq!(dependents_of(&g, "a"), ["d"]);
        // Written again with the same owners (a status write): nothing changes.
        assert!(g.upsert(&key("d"), &stored("d", &["a"])).is_empty());
        assert_eq!(dependents_of(&g, "a"), ["d"]);
        assert_eq!(g.owners[&key("d")], ["a"]);
        // Moved to another owner: the first is released.
        assert_eq!(g.upsert(&key("d"), &stored("d", &["b"])), ["a"]);
        assert!(dependents_of(&g, "a").is_empty());
        assert_eq!(dependents_of(&g, "b"), ["d"]);
        // No owner left.
        assert_eq!(g.upsert(&key("d"), &stored("d", &[])), ["b"]);
        assert!(dependents_of(&g, "b").is_empty());
        assert!(!g.owners.contains_key(&key("d")));
        // Recreated under the same name with a new uid: known by the new one.
        assert!(g.upsert(&key("d"), &stored("d2", &["a"])).is_empty());
        assert_eq!(g.objects.get(&(Arc::from(""), "d2".to_string())), Some(&key("d")));
        assert_eq!(dependents_of(&g, "a"), ["d"]);
    }
}
