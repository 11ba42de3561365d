//! In-place propagation from a MachineSet to its existing Machines and their
//! infrastructure machines and bootstrap configs: labels, annotations and the node
//! timeouts change without replacing anything.
//!
//! Labels and annotations are added or updated, never removed: without server-side
//! apply's field ownership there is no telling a key this controller once set from one
//! a user or another controller added, and removing the latter would be worse than
//! leaving the former.

use std::collections::BTreeMap;

use drydock_api::capi::core::{DEFAULT_NODE_DELETION_TIMEOUT, Machine, MachineSet};
use drydock_api::capi::keys::MACHINE_FINALIZER;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use serde_json::json;

use super::machines::{machine_annotations, machine_labels};
use crate::context::Context;
use crate::external;
use crate::framework::{Result, metrics, patch};

/// The Machine as the set wants it. A deleting Machine only gets the timeouts (they
/// govern its deletion); others also get the set's labels, annotations and finalizer.
pub fn desired_machine(ms: &MachineSet, m: &Machine) -> Machine {
    let mut want = m.clone();
    if m.metadata.deletion_timestamp.is_none() {
        merge_into(&mut want.metadata.labels, machine_labels(ms));
        merge_into(&mut want.metadata.annotations, machine_annotations(ms));
        patch::add_finalizer(&mut want, MACHINE_FINALIZER);
    }
    let tpl = &ms.spec.template.spec;
    want.spec.node_drain_timeout = tpl.node_drain_timeout.clone();
    want.spec.node_volume_detach_timeout = tpl.node_volume_detach_timeout.clone();
    // Machine admission defaults an unset deletion timeout; wanting the default keeps
    // the two from undoing each other on every reconcile.
    want.spec.node_deletion_timeout = Some(
        tpl.node_deletion_timeout
            .clone()
            .unwrap_or_else(|| DEFAULT_NODE_DELETION_TIMEOUT.to_string()),
    );
    want
}

fn merge_into(target: &mut Option<BTreeMap<String, String>>, add: BTreeMap<String, String>) {
    if add.is_empty() {
        return;
    }
    let t = target.get_or_insert_with(BTreeMap::new);
    for (k, v) in add {
        if t.get(&k) != Some(&v) {
            t.insert(k, v);
        }
    }
}

/// Entries of `want` missing from or different in `have`.
pub fn missing(
    have: Option<&BTreeMap<String, String>>,
    want: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    want.iter()
        .filter(|(k, v)| have.and_then(|h| h.get(*k)) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Metadata of a referenced object from the informer caches, for the kinds drydock
/// caches. `Some(None)` means a cached kind whose object is not (yet) cached.
fn cached_metadata(
    ctx: &Context,
    namespace: &str,
    r: &ObjectReference,
) -> Option<Option<ObjectMeta>> {
    let group = r
        .api_version
        .as_deref()
        .map(drydock_api::capi::owner::api_group)
        .unwrap_or_default();
    let name = r.name.as_deref().unwrap_or_default();
    match (group, r.kind.as_deref().unwrap_or_default()) {
        ("infrastructure.cluster.x-k8s.io", "InMemoryMachine") => Some(
            ctx.informers
                .inmemory_machines
                .store
                .get(&ObjectRef::new(name).within(namespace))
                .map(|o| o.metadata.clone()),
        ),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig") => Some(
            ctx.informers
                .kubeadm_configs
                .store
                .get(&ObjectRef::new(name).within(namespace))
                .map(|o| o.metadata.clone()),
        ),
        _ => None,
    }
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
    let meta = match cached_metadata(ctx, namespace, r) {
        Some(Some(meta)) => meta,
        Some(None) => return Ok(()),
        None if !changed => return Ok(()),
        None => match external::get(&ctx.client, namespace, r).await? {
            Some(obj) => obj.metadata,
            None => return Ok(()),
        },
    };
    if meta.deletion_timestamp.is_some() {
        return Ok(());
    }
    let add_labels = missing(meta.labels.as_ref(), labels);
    let add_annotations = missing(meta.annotations.as_ref(), annotations);
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
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": m})),
        )
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
        let mut ms = MachineSet::new(
            "ms",
            MachineSetSpec {
                cluster_name: "c1".into(),
                ..Default::default()
            },
        );
        ms.spec.template.metadata.labels =
            Some([("role".to_string(), "worker".to_string())].into());
        ms.spec.template.spec.node_drain_timeout = Some("5m".into());
        ms
    }

    #[test]
    fn adds_labels_keeps_foreign_ones_and_sets_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.labels = Some([("user".to_string(), "mine".to_string())].into());
        m.spec.node_volume_detach_timeout = Some("1m".into());
        let want = desired_machine(&ms, &m);
        let labels = want.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["user"], "mine");
        assert_eq!(labels["role"], "worker");
        assert_eq!(labels[SET_NAME_LABEL], "ms");
        assert_eq!(
            want.metadata.finalizers,
            Some(vec![MACHINE_FINALIZER.to_string()])
        );
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
        assert_eq!(want.spec.node_volume_detach_timeout, None);
        assert_eq!(want.spec.node_deletion_timeout.as_deref(), Some("10s"));
        // Propagating again changes nothing.
        assert_eq!(desired_machine(&ms, &want), want);
    }

    #[test]
    fn deleting_machines_only_get_timeouts() {
        let ms = ms();
        let mut m = Machine::new("m", MachineSpec::default());
        m.metadata.deletion_timestamp = Some(drydock_api::capi::conditions::now());
        let want = desired_machine(&ms, &m);
        assert_eq!(want.metadata.labels, None);
        assert_eq!(want.metadata.finalizers, None);
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
    }

    #[test]
    fn missing_entries() {
        let have: BTreeMap<String, String> =
            [("a".into(), "1".into()), ("b".into(), "2".into())].into();
        let want: BTreeMap<String, String> = [
            ("a".into(), "1".into()),
            ("b".into(), "3".into()),
            ("c".into(), "4".into()),
        ]
        .into();
        let m = missing(Some(&have), &want);
        assert_eq!(m.len(), 2);
        assert_eq!(m["b"], "3");
        assert!(missing(Some(&want), &want).is_empty());
    }
}
