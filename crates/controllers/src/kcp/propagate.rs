//! In-place propagation (upstream §6.3): `machineTemplate` labels, annotations and node
//! timeouts reach the existing Machines (and the labels and annotations their
//! infrastructure machines and KubeadmConfigs) without replacing anything.
//!
//! As for MachineSets, keys are added or updated, never removed: without server-side
//! apply's field ownership a key this controller once set cannot be told from one another
//! actor added. Deleting Machines are left alone: they are going. Machines also get the
//! `kcp-cleanup` pre-terminate hook back (see `hook`).

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::core::{DEFAULT_NODE_DELETION_TIMEOUT, Machine};
use drydock_api::capi::keys::KCP_CLEANUP_HOOK_ANNOTATION;
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use kube::ResourceExt;

use super::CONTROLLER;
use super::create::{machine_annotations, machine_labels};
use crate::Context;
use crate::framework::Result;
use crate::framework::patch::apply_changes;
use crate::machineset::propagate::sync_referenced;

/// What every Machine of the control plane carries.
pub struct Propagated<'a> {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub node_drain_timeout: Option<&'a str>,
    pub node_volume_detach_timeout: Option<&'a str>,
    pub node_deletion_timeout: &'a str,
}

impl<'a> Propagated<'a> {
    pub fn new(kcp: &'a KubeadmControlPlane, cluster: &str) -> Self {
        let t = &kcp.spec.machine_template;
        Self {
            labels: machine_labels(kcp, cluster),
            annotations: machine_annotations(kcp),
            node_drain_timeout: t.node_drain_timeout.as_deref(),
            node_volume_detach_timeout: t.node_volume_detach_timeout.as_deref(),
            // Machine admission defaults an unset timeout; wanting the default keeps the
            // two from undoing each other.
            node_deletion_timeout: t.node_deletion_timeout.as_deref().unwrap_or(DEFAULT_NODE_DELETION_TIMEOUT),
        }
    }

    /// True when the Machine has everything already (checked without copying it).
    pub fn is_applied(&self, m: &Machine) -> bool {
        let s = &m.spec;
        s.node_drain_timeout.as_deref() == self.node_drain_timeout
            && s.node_volume_detach_timeout.as_deref() == self.node_volume_detach_timeout
            && s.node_deletion_timeout.as_deref() == Some(self.node_deletion_timeout)
            && contains(m.metadata.labels.as_ref(), &self.labels)
            && contains(m.metadata.annotations.as_ref(), &self.annotations)
            && m.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION)
    }

    pub fn apply(&self, m: &Machine) -> Machine {
        let mut want = m.clone();
        want.labels_mut().extend(self.labels.clone());
        want.annotations_mut().extend(self.annotations.clone());
        want.annotations_mut().entry(KCP_CLEANUP_HOOK_ANNOTATION.into()).or_default();
        want.spec.node_drain_timeout = self.node_drain_timeout.map(str::to_string);
        want.spec.node_volume_detach_timeout = self.node_volume_detach_timeout.map(str::to_string);
        want.spec.node_deletion_timeout = Some(self.node_deletion_timeout.to_string());
        want
    }
}

fn contains(have: Option<&BTreeMap<String, String>>, want: &BTreeMap<String, String>) -> bool {
    want.iter().all(|(k, v)| have.and_then(|h| h.get(k)) == Some(v))
}

/// Brings every non-deleting Machine, and its infrastructure machine and KubeadmConfig, up
/// to the template. Returns whether a Machine was written.
pub async fn sync(ctx: &Context, kcp: &KubeadmControlPlane, cluster: &str, machines: &[Arc<Machine>]) -> Result<bool> {
    let p = Propagated::new(kcp, cluster);
    let mut wrote = false;
    for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let ns = m.namespace().unwrap_or_default();
        let changed = !p.is_applied(m);
        if changed {
            apply_changes(&ctx.api::<Machine>(&ns), CONTROLLER, m.as_ref(), &p.apply(m)).await?;
            wrote = true;
        }
        let refs = std::iter::once(&m.spec.infrastructure_ref).chain(m.spec.bootstrap.config_ref.as_ref());
        for r in refs {
            sync_referenced(ctx, CONTROLLER, &ns, r, &p.labels, &p.annotations, changed).await?;
        }
    }
    Ok(wrote)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::common::ObjectMeta;
    use drydock_api::capi::keys::{CONTROL_PLANE_LABEL, KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION};

    #[test]
    fn adds_template_metadata_and_timeouts_and_keeps_the_rest() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.machine_template.metadata = Some(ObjectMeta {
            labels: Some([("tier".to_string(), "gold".to_string())].into()),
            annotations: Some([("note".to_string(), "hi".to_string())].into()),
        });
        kcp.spec.machine_template.node_drain_timeout = Some("5m".into());
        let mut m = Machine::new("m", Default::default());
        m.labels_mut().insert("mine".into(), "x".into());
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), "{}".into());
        m.spec.node_deletion_timeout = Some("10s".into());
        let p = Propagated::new(&kcp, "c1");
        assert!(!p.is_applied(&m));
        let want = p.apply(&m);
        assert!(p.is_applied(&want));
        assert_eq!(want.labels()["tier"], "gold");
        assert_eq!(want.labels()["mine"], "x");
        assert!(want.labels().contains_key(CONTROL_PLANE_LABEL));
        assert_eq!(want.annotations()["note"], "hi");
        assert!(want.annotations().contains_key(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION));
        assert!(want.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION));
        assert_eq!(want.spec.node_drain_timeout.as_deref(), Some("5m"));
        assert_eq!(p.apply(&want), want, "idempotent");
    }
}
