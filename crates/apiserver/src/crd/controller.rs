//! The CRD controller: for every logical cluster with CustomResourceDefinitions, accepts
//! names (older CRDs win a conflict within a group), sets `NamesAccepted`, `Established`,
//! `Terminating`, `acceptedNames` and `storedVersions`, publishes the established CRDs'
//! resources into the cluster's registry snapshot, and finishes deletions: instances are
//! deleted, then the cleanup finalizer is removed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use super::{FINALIZER, GROUP, PLURAL, resources};
use crate::error::ApiResult;
use crate::registry::Resource;
use crate::rest::meta::now_rfc3339;
use crate::rest::{Api, DeleteOptions, Subresource, Target, WriteOptions};
use crate::store::watch::{All, Scope};
use crate::store::{ListQuery, ObjKey, ResId, Stored};

/// How often terminating CRDs are checked again while their instances go away.
const TERMINATING_RECHECK: Duration = Duration::from_secs(1);

/// Reconciles every logical cluster holding CRDs (at start, before serving).
pub async fn sync_all(api: &Api) {
    for cluster in api.store.clusters() {
        reconcile(api, &cluster).await;
    }
}

/// Follows CRD writes in every logical cluster; reconciles the cluster of each.
pub async fn run(api: Arc<Api>) {
    let crd_id = api.store_id(GROUP, PLURAL);
    let after = api.store.revision();
    let Ok(sub) = api.store.hub().subscribe(Scope::AllClusters(crd_id), Arc::new(All), after, true) else {
        tracing::error!("the CRD controller could not subscribe to CRD events");
        return;
    };
    // Writes between the start-up sync and the subscription.
    sync_all(&api).await;
    let mut rx = sub.rx;
    let mut tick = tokio::time::interval(TERMINATING_RECHECK);
    loop {
        let mut dirty: HashSet<Arc<str>> = HashSet::new();
        tokio::select! {
            ev = rx.recv() => {
                let Some((_, ev)) = ev else { return };
                dirty.insert(ev.key.cluster.clone());
                while let Ok(Some((_, ev))) = tokio::time::timeout(Duration::ZERO, rx.recv()).await {
                    dirty.insert(ev.key.cluster.clone());
                }
            }
            _ = tick.tick() => dirty.extend(terminating_clusters(&api, crd_id)),
        }
        for cluster in dirty {
            reconcile(&api, &cluster).await;
        }
    }
}

fn terminating_clusters(api: &Api, crd_id: ResId) -> Vec<Arc<str>> {
    api.store
        .clusters()
        .into_iter()
        .filter(|c| !api.store.list(&ListQuery::all(c, crd_id), &|_, o: &Stored| o.meta.deleting).items.is_empty())
        .collect()
}

/// One CRD as the controller sees it.
struct Entry {
    obj: Value,
    crd: CustomResourceDefinition,
    conflict: Option<(&'static str, String)>,
}

/// Brings the CRDs of one logical cluster and its registry snapshot up to date.
async fn reconcile(api: &Api, cluster: &str) {
    let crd_id = api.store_id(GROUP, PLURAL);
    let listed = api.store.list(&ListQuery::all(cluster, crd_id), &|_, _| true);
    let mut entries: Vec<Entry> = listed
        .items
        .iter()
        .filter_map(|o| {
            let obj = o.to_value().ok()?;
            match serde_json::from_value::<CustomResourceDefinition>(obj.clone()) {
                Ok(crd) => Some(Entry { obj, crd, conflict: None }),
                Err(e) => {
                    tracing::warn!(cluster, error = %e, "a stored CRD does not parse; not served");
                    None
                }
            }
        })
        .collect();
    // Older CRDs keep their names when a newer one claims them.
    entries.sort_by(|a, b| {
        let created = |e: &Entry| e.obj["metadata"]["creationTimestamp"].as_str().unwrap_or("").to_string();
        created(a).cmp(&created(b)).then_with(|| a.crd.metadata.name.cmp(&b.crd.metadata.name))
    });
    for i in 0..entries.len() {
        let (before, rest) = entries.split_at_mut(i);
        let accepted: Vec<&CustomResourceDefinition> =
            before.iter().filter(|e| e.conflict.is_none()).map(|e| &e.crd).collect();
        rest[0].conflict = names_conflict(&rest[0].crd, &accepted);
    }
    let mut served: Vec<Resource> = Vec::new();
    for e in &entries {
        let terminating = e.crd.metadata.deletion_timestamp.is_some();
        if e.conflict.is_none() {
            match resources(api.registry.ids(), &api.registries, cluster, &e.crd, terminating) {
                Ok(rs) => served.extend(rs),
                Err(err) => tracing::warn!(cluster, crd = ?e.crd.metadata.name, error = %err, "CRD not served"),
            }
        }
    }
    for r in served.iter().filter(|r| r.is_storage_version()) {
        if api.registry.ids().set_selectable(r.id, &r.def.selectable_fields) {
            api.store.reindex(r.id, &r.def.selectable_fields);
        }
    }
    api.registries.set(cluster, served);
    for e in &entries {
        if let Err(err) = write_status(api, cluster, e).await {
            tracing::debug!(cluster, crd = ?e.crd.metadata.name, error = %err, "CRD status not written");
        }
        if e.crd.metadata.deletion_timestamp.is_some()
            && let Err(err) = finish_deletion(api, cluster, e).await
        {
            tracing::debug!(cluster, crd = ?e.crd.metadata.name, error = %err, "CRD deletion not finished yet");
        }
    }
}

/// The first name of `crd` another accepted CRD of its group already uses.
fn names_conflict(
    crd: &CustomResourceDefinition,
    accepted: &[&CustomResourceDefinition],
) -> Option<(&'static str, String)> {
    let n = &crd.spec.names;
    let mut resource_names: HashSet<&str> = HashSet::new();
    let mut kind_names: HashSet<&str> = HashSet::new();
    for other in accepted.iter().filter(|o| o.spec.group == crd.spec.group) {
        let on = &other.spec.names;
        resource_names.insert(&on.plural);
        resource_names.extend(on.singular.as_deref());
        resource_names.extend(on.short_names.iter().flatten().map(String::as_str));
        kind_names.insert(&on.kind);
        kind_names.extend(on.list_kind.as_deref());
    }
    let used = |what: &str| format!("\"{what}\" is already in use");
    if resource_names.contains(n.plural.as_str()) {
        return Some(("PluralConflict", used(&n.plural)));
    }
    if let Some(s) = n.singular.as_deref().filter(|s| resource_names.contains(s)) {
        return Some(("SingularConflict", used(s)));
    }
    if let Some(s) = n.short_names.iter().flatten().find(|s| resource_names.contains(s.as_str())) {
        return Some(("ShortNamesConflict", used(s)));
    }
    if kind_names.contains(n.kind.as_str()) {
        return Some(("KindConflict", used(&n.kind)));
    }
    if let Some(s) = n.list_kind.as_deref().filter(|s| kind_names.contains(s)) {
        return Some(("ListKindConflict", used(s)));
    }
    None
}

/// Sets a condition, keeping its transition time when its status does not change.
fn set_condition(status: &mut Value, type_: &str, state: bool, reason: &str, message: &str) {
    let state = if state { "True" } else { "False" };
    let mut conditions: Vec<Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    let now = now_rfc3339();
    match conditions.iter_mut().find(|c| c["type"] == type_) {
        Some(c) => {
            if c["status"] != state {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!(state);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => conditions.push(json!({
            "type": type_, "status": state, "lastTransitionTime": now, "reason": reason, "message": message,
        })),
    }
    status["conditions"] = Value::Array(conditions);
}

fn desired_status(e: &Entry) -> Value {
    let mut status = e.obj["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    match &e.conflict {
        None => {
            set_condition(&mut status, "NamesAccepted", true, "NoConflicts", "no conflicts found");
            let mut names = serde_json::to_value(&e.crd.spec.names).unwrap_or_else(|_| json!({}));
            if let Some(m) = names.as_object_mut() {
                m.retain(|_, v| !v.is_null());
            }
            status["acceptedNames"] = names;
            set_condition(
                &mut status,
                "Established",
                true,
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
        }
        Some((reason, message)) => {
            set_condition(&mut status, "NamesAccepted", false, reason, message);
            if status["acceptedNames"].is_null() {
                status["acceptedNames"] = json!({"plural": "", "kind": ""});
            }
            set_condition(&mut status, "Established", false, "NotAccepted", "not all names are accepted");
        }
    }
    if e.crd.metadata.deletion_timestamp.is_some() {
        set_condition(
            &mut status,
            "Terminating",
            true,
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
    }
    let mut stored: Vec<Value> = status["storedVersions"].as_array().cloned().unwrap_or_default();
    if let Some(v) = e.crd.spec.versions.iter().find(|v| v.storage)
        && !stored.iter().any(|s| s == v.name.as_str())
    {
        stored.push(json!(v.name));
    }
    status["storedVersions"] = Value::Array(stored);
    status
}

fn crd_target(api: &Api, cluster: &str, name: &str) -> Option<Target> {
    crate::controllers::target(api, cluster, GROUP, PLURAL, None, Some(name))
}

async fn write_status(api: &Api, cluster: &str, e: &Entry) -> ApiResult<()> {
    let status = desired_status(e);
    if status == e.obj["status"] {
        return Ok(());
    }
    let name = e.crd.metadata.name.as_deref().unwrap_or_default();
    let Some(mut t) = crd_target(api, cluster, name) else { return Ok(()) };
    t.sub = Some(Subresource::Status);
    let mut obj = e.obj.clone();
    obj["status"] = status;
    // A conflict means the CRD changed meanwhile: its event reconciles again.
    match api.update(&t, obj, &WriteOptions::by("drydock-apiextensions")).await {
        Err(err) if err.code == 409 || err.code == 404 => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Deletes the instances of a deleted CRD; once none is left, drops the cleanup finalizer.
async fn finish_deletion(api: &Api, cluster: &str, e: &Entry) -> ApiResult<()> {
    let name = e.crd.metadata.name.as_deref().unwrap_or_default();
    let Some(t) = crd_target(api, cluster, name) else { return Ok(()) };
    if !e.crd.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let instances = crd_instances(api, cluster, &e.crd);
    if let Some(res) = instances.res.clone() {
        for (key, obj) in &instances.items {
            let target = Target {
                cluster: key.cluster.clone(),
                res: res.clone(),
                namespace: Some(key.namespace.clone()).filter(|ns| !ns.is_empty()),
                name: Some(key.name.clone()),
                sub: None,
            };
            if !obj.meta.deleting
                && let Err(err) = api.delete(&target, &DeleteOptions::default()).await
                && err.code != 404
            {
                return Err(err);
            }
        }
    }
    if !instances.items.is_empty() {
        return Ok(());
    }
    let mut obj = e.obj.clone();
    let finalizers: Vec<Value> =
        e.crd.metadata.finalizers.iter().flatten().filter(|f| *f != FINALIZER).map(|f| json!(f)).collect();
    obj["metadata"]["finalizers"] = Value::Array(finalizers);
    match api.update(&t, obj, &WriteOptions::by("drydock-apiextensions")).await {
        Err(err) if err.code == 409 || err.code == 404 => Ok(()),
        other => other.map(|_| ()),
    }
}

struct Instances {
    res: Option<Arc<Resource>>,
    items: Vec<(ObjKey, Arc<Stored>)>,
}

fn crd_instances(api: &Api, cluster: &str, crd: &CustomResourceDefinition) -> Instances {
    let id = api.store_id(&crd.spec.group, &crd.spec.names.plural);
    let res = api.registries.for_cluster(cluster).get(id).cloned();
    let items = api.store.scan(Some(cluster), None).into_iter().filter(|(k, _)| k.res == id).collect();
    Instances { res, items }
}
