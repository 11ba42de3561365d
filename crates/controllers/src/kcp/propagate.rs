//! In-place propagation (upstream §6.3): `machineTemplate` labels, annotations and node
//! timeouts reach the existing Machines (and the labels and annotations their
//! infrastructure machines and KubeadmConfigs) without replacing anything.
//!
//! On the Machines keys are added or updated, never removed; on their infrastructure
//! machines and KubeadmConfigs they are server-side applied under
//! `capi-kubeadmcontrolplane-metadata`, so removed keys go. Deleting Machines are left
//! alone: they are going. Machines also get the `kcp-cleanup` pre-terminate hook back
//! (see `hook`).

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::core::Machine;
use drydock_api::capi::keys::KCP_CLEANUP_HOOK_ANNOTATION;
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use kube::ResourceExt;

use super::CONTROLLER;
use super::create::{machine_annotations, machine_labels};
use crate::Context;
use crate::framework::Result;
use crate::framework::propagate::{Managers, NodeTimeouts, contains, sync_referenced};

/// What every Machine of the control plane carries.
pub struct Propagated<'a> {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub timeouts: NodeTimeouts<'a>,
}

impl<'a> Propagated<'a> {
    pub fn new(kcp: &'a KubeadmControlPlane, cluster: &str) -> Self {
        let t = &kcp.spec.machine_template;
        Self {
            labels: machine_labels(kcp, cluster),
            annotations: machine_annotations(kcp),
            timeouts: NodeTimeouts::new(
                t.timeouts.node_drain_timeout.as_deref(),
                t.timeouts.node_volume_detach_timeout.as_deref(),
                t.timeouts.node_deletion_timeout.as_deref(),
            ),
        }
    }

    /// True when the Machine has everything already (checked without copying it).
    pub fn is_applied(&self, m: &Machine) -> bool {
        self.timeouts.is_applied(&m.spec)
            && contains(m.metadata.labels.as_ref(), &self.labels)
            && contains(m.metadata.annotations.as_ref(), &self.annotations)
            && m.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION)
    }

    pub fn apply(&self, m: &Machine) -> Machine {
        let mut want = m.clone();
        want.labels_mut().extend(self.labels.clone());
        want.annotations_mut().extend(self.annotations.clone());
        want.annotations_mut().entry(KCP_CLEANUP_HOOK_ANNOTATION.into()).or_default();
        self.timeouts.apply(&mut want.spec);
        want
    }
}

/// Brings every non-deleting Machine, and its infrastructure machine and KubeadmConfig, up
/// to the template. Returns whether a Machine was written.
pub async fn sync(ctx: &Context, kcp: &KubeadmControlPlane, cluster: &str, machines: &[Arc<Machine>]) -> Result<bool> {
    let p = Propagated::new(kcp, cluster);
    let mut wrote = false;
    let who = Managers { controller: CONTROLLER, manager: super::METADATA_MANAGER };
    for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let ns = m.namespace().unwrap_or_default();
        let changed = !p.is_applied(m);
        if changed {
            super::WRITER.apply(&ctx.api::<Machine>(&ns), m.as_ref(), &p.apply(m)).await?;
            wrote = true;
        }
        let refs = std::iter::once(&m.spec.infrastructure_ref).chain(m.spec.bootstrap.config_ref.as_ref());
        for r in refs {
            sync_referenced(ctx, who, &ns, r, &p.labels, &p.annotations, changed).await?;
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
        kcp.spec.machine_template.timeouts.node_drain_timeout = Some("5m".into());
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
