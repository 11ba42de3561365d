//! Propagating labels, annotations and node timeouts from an owner (a MachineSet or a
//! control plane) to its Machines' infrastructure machines and bootstrap configs.
//!
//! Labels and annotations are added or updated, never removed: without server-side
//! apply's field ownership there is no telling a key a controller once set from one
//! a user or another controller added, and removing the latter would be worse than
//! leaving the former.

use std::collections::BTreeMap;

use drydock_api::capi::core::{DEFAULT_NODE_DELETION_TIMEOUT, MachineSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use serde_json::json;

use crate::context::Context;
use crate::external;
use crate::framework::Result;
use crate::framework::write::merge_patch;

/// The node timeouts a template gives its Machines (MachineSets and control planes alike).
pub struct NodeTimeouts<'a> {
    pub drain: Option<&'a str>,
    pub volume_detach: Option<&'a str>,
    pub deletion: &'a str,
}

impl<'a> NodeTimeouts<'a> {
    pub fn new(drain: Option<&'a str>, volume_detach: Option<&'a str>, deletion: Option<&'a str>) -> Self {
        // Machine admission defaults an unset deletion timeout; wanting the default keeps
        // the two from undoing each other on every reconcile.
        Self { drain, volume_detach, deletion: deletion.unwrap_or(DEFAULT_NODE_DELETION_TIMEOUT) }
    }

    pub fn is_applied(&self, spec: &MachineSpec) -> bool {
        spec.node_drain_timeout.as_deref() == self.drain
            && spec.node_volume_detach_timeout.as_deref() == self.volume_detach
            && spec.node_deletion_timeout.as_deref() == Some(self.deletion)
    }

    pub fn apply(&self, spec: &mut MachineSpec) {
        spec.node_drain_timeout = self.drain.map(str::to_string);
        spec.node_volume_detach_timeout = self.volume_detach.map(str::to_string);
        spec.node_deletion_timeout = Some(self.deletion.to_string());
    }
}

/// Whether `have` holds every entry of `want`.
pub fn contains(have: Option<&BTreeMap<String, String>>, want: &BTreeMap<String, String>) -> bool {
    want.iter().all(|(k, v)| have.and_then(|h| h.get(k)) == Some(v))
}

pub fn merge_into(target: &mut Option<BTreeMap<String, String>>, add: &BTreeMap<String, String>) {
    if add.is_empty() {
        return;
    }
    let t = target.get_or_insert_with(BTreeMap::new);
    for (k, v) in add {
        if t.get(k) != Some(v) {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// Entries of `want` missing from or different in `have`.
pub fn missing(have: Option<&BTreeMap<String, String>>, want: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    want.iter().filter(|(k, v)| have.and_then(|h| h.get(*k)) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A referenced object's metadata as far as the informer caches know it.
enum Cached {
    /// A kind drydock does not cache.
    Unknown,
    /// A cached kind; the object is not (yet) in the cache or is being deleted.
    Absent,
    /// The entries the object lacks.
    Missing(BTreeMap<String, String>, BTreeMap<String, String>),
}

fn lacks(meta: &ObjectMeta, labels: &BTreeMap<String, String>, annotations: &BTreeMap<String, String>) -> Cached {
    if meta.deletion_timestamp.is_some() {
        return Cached::Absent;
    }
    Cached::Missing(missing(meta.labels.as_ref(), labels), missing(meta.annotations.as_ref(), annotations))
}

fn from_cache(
    ctx: &Context,
    namespace: &str,
    r: &ObjectReference,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Cached {
    let group = r.api_version.as_deref().map(drydock_api::capi::owner::api_group).unwrap_or_default();
    let name = r.name.as_deref().unwrap_or_default();
    let i = &ctx.informers;
    match (group, r.kind.as_deref().unwrap_or_default()) {
        ("infrastructure.cluster.x-k8s.io", "InMemoryMachine") => {
            cached(&i.inmemory_machines.store, namespace, name, labels, annotations)
        }
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig") => {
            cached(&i.kubeadm_configs.store, namespace, name, labels, annotations)
        }
        _ => Cached::Unknown,
    }
}

fn cached<K>(
    store: &Store<K>,
    namespace: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Cached
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    store.get(&ObjectRef::new(name).within(namespace)).map_or(Cached::Absent, |o| lacks(o.meta(), labels, annotations))
}

/// Adds the set's labels and annotations to a Machine's infrastructure machine or
/// bootstrap config. Cached kinds are compared from the cache; other kinds are read only
/// when `changed` says the Machine's own metadata was just updated (a change is
/// propagating), so a steady fleet makes no reads for them.
pub async fn sync_referenced(
    ctx: &Context,
    controller: &str,
    namespace: &str,
    r: &ObjectReference,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    changed: bool,
) -> Result<()> {
    let (add_labels, add_annotations) = match from_cache(ctx, namespace, r, labels, annotations) {
        Cached::Missing(l, a) => (l, a),
        Cached::Absent => return Ok(()),
        Cached::Unknown if !changed => return Ok(()),
        Cached::Unknown => match external::get(&ctx.client, namespace, r).await? {
            Some(obj) => match lacks(&obj.metadata, labels, annotations) {
                Cached::Missing(l, a) => (l, a),
                _ => return Ok(()),
            },
            None => return Ok(()),
        },
    };
    if add_labels.is_empty() && add_annotations.is_empty() {
        return Ok(());
    }
    let mut m = serde_json::Map::new();
    if !add_labels.is_empty() {
        m.insert("labels".into(), json!(add_labels));
    }
    if !add_annotations.is_empty() {
        m.insert("annotations".into(), json!(add_annotations));
    }
    let name = r.name.as_deref().unwrap_or_default();
    // Map entries merge key by key, so this needs no resourceVersion precondition.
    match merge_patch(&external::api_for(&ctx.client, namespace, r), controller, name, &json!({"metadata": m})).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_entries() {
        let have: BTreeMap<String, String> = [("a".into(), "1".into()), ("b".into(), "2".into())].into();
        let want: BTreeMap<String, String> =
            [("a".into(), "1".into()), ("b".into(), "3".into()), ("c".into(), "4".into())].into();
        let m = missing(Some(&have), &want);
        assert_eq!(m.len(), 2);
        assert_eq!(m["b"], "3");
        assert!(missing(Some(&want), &want).is_empty());
    }
}
