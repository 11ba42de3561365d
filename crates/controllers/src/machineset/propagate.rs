//! In-place propagation from a MachineSet to its existing Machines and their
//! infrastructure machines and bootstrap configs: labels, annotations and the node
//! timeouts change without replacing anything.
//!
//! Labels and annotations are added or updated, never removed: without server-side
//! apply's field ownership there is no telling a key this controller once set from one
//! a user or another controller added, and removing the latter would be worse than
//! leaving the former.

use std::collections::BTreeMap;

use drydock_api::capi::core::{DEFAULT_NODE_DELETION_TIMEOUT, Machine, MachineSet, MachineSpec};
use drydock_api::capi::keys::MACHINE_FINALIZER;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use serde_json::json;

use crate::context::Context;
use crate::external;
use crate::framework::{Result, metrics, patch};

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

/// What the set propagates to each of its Machines, computed once per reconcile.
pub struct Propagated<'a> {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub timeouts: NodeTimeouts<'a>,
}

impl<'a> Propagated<'a> {
    pub fn new(ms: &'a MachineSet) -> Self {
        let tpl = &ms.spec.template.spec;
        Self {
            labels: super::machines::machine_labels(ms),
            annotations: super::machines::machine_annotations(ms),
            timeouts: NodeTimeouts::new(
                tpl.node_drain_timeout.as_deref(),
                tpl.node_volume_detach_timeout.as_deref(),
                tpl.node_deletion_timeout.as_deref(),
            ),
        }
    }

    /// True when the Machine already has everything (checked without copying it: this
    /// runs for every Machine on every reconcile).
    pub fn is_applied(&self, m: &Machine) -> bool {
        let timeouts = self.timeouts.is_applied(&m.spec);
        if m.metadata.deletion_timestamp.is_some() {
            return timeouts;
        }
        timeouts
            && contains(m.metadata.labels.as_ref(), &self.labels)
            && contains(m.metadata.annotations.as_ref(), &self.annotations)
            && m.metadata.finalizers.iter().flatten().any(|f| f == MACHINE_FINALIZER)
    }

    /// The Machine as the set wants it. A deleting Machine only gets the timeouts (they
    /// govern its deletion); others also get the labels, annotations and finalizer.
    pub fn apply(&self, m: &Machine) -> Machine {
        let mut want = m.clone();
        if m.metadata.deletion_timestamp.is_none() {
            merge_into(&mut want.metadata.labels, &self.labels);
            merge_into(&mut want.metadata.annotations, &self.annotations);
            patch::add_finalizer(&mut want, MACHINE_FINALIZER);
        }
        self.timeouts.apply(&mut want.spec);
        want
    }
}

/// Whether `have` holds every entry of `want`.
pub fn contains(have: Option<&BTreeMap<String, String>>, want: &BTreeMap<String, String>) -> bool {
    want.iter().all(|(k, v)| have.and_then(|h| h.get(k)) == Some(v))
}

fn merge_into(target: &mut Option<BTreeMap<String, String>>, add: &BTreeMap<String, String>) {
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
    let found = match (group, r.kind.as_deref().unwrap_or_default()) {
        ("infrastructure.cluster.x-k8s.io", "InMemoryMachine") => ctx
            .informers
            .inmemory_machines
            .store
            .get(&ObjectRef::new(name).within(namespace))
            .map(|o| lacks(&o.metadata, labels, annotations)),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig") => ctx
            .informers
            .kubeadm_configs
            .store
            .get(&ObjectRef::new(name).within(namespace))
            .map(|o| lacks(&o.metadata, labels, annotations)),
        _ => return Cached::Unknown,
    };
    found.unwrap_or(Cached::Absent)
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
    match external::api_for(&ctx.client, namespace, r)
        .patch(name, &PatchParams::default(), &Patch::Merge(&json!({"metadata": m})))
        .await
    {
        Ok(_) => {
            metrics::write(controller);
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::{MachineSetSpec, MachineSpec};
    use drydock_api::capi::keys::SET_NAME_LABEL;

    fn ms() -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec { cluster_name: "c1".into(), ..Default::default() });
        ms.spec.template.metadata.labels = Some([("role".to_string(), "worker".to_string())].into());
        ms.spec.template.spec.node_drain_timeout = Some("5m".into());
        ms
    }

    #[test]
    fn adds_labels_keeps_foreign_ones_and_sets_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.labels = Some([("user".to_string(), "mine".to_string())].into());
        m.spec.node_volume_detach_timeout = Some("1m".into());
        let p = Propagated::new(&ms);
        assert!(!p.is_applied(&m));
        let want = p.apply(&m);
        assert!(p.is_applied(&want));
        let labels = want.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["user"], "mine");
        assert_eq!(labels["role"], "worker");
        assert_eq!(labels[SET_NAME_LABEL], "ms");
        assert_eq!(want.metadata.finalizers, Some(vec![MACHINE_FINALIZER.to_string()]));
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
        assert_eq!(want.spec.node_volume_detach_timeout, None);
        assert_eq!(want.spec.node_deletion_timeout.as_deref(), Some("10s"));
        // Propagating again changes nothing.
        assert_eq!(p.apply(&want), want);
    }

    #[test]
    fn deleting_machines_only_get_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.deletion_timestamp = Some(drydock_api::capi::conditions::time_at(jiff::Timestamp::now()));
        let p = Propagated::new(&ms);
        let want = p.apply(&m);
        assert!(p.is_applied(&want));
        assert_eq!(want.metadata.labels, None);
        assert_eq!(want.metadata.finalizers, None);
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
    }

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
