//! In-place propagation (upstream §6.3): `machineTemplate` labels, annotations and node
//! timeouts reach the existing Machines (and the labels and annotations their
//! infrastructure machines and KubeadmConfigs) without replacing anything.
//!
//! They are server-side applied (see [`crate::framework::apply`]): to the Machines as
//! `capi-kubeadmcontrolplane`, to their infrastructure machines and KubeadmConfigs as
//! `capi-kubeadmcontrolplane-metadata`, so keys removed from the template go and keys
//! others set stay. Deleting Machines are left alone: they are going. Machines also get
//! the `kcp-cleanup` pre-terminate hook back (see `hook`), merged.

use std::borrow::Cow;
use std::sync::Arc;

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::KCP_CLEANUP_HOOK_ANNOTATION;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::ResourceExt;

use super::create::{machine_annotations, machine_labels};
use super::{CONTROLLER, MANAGER};
use crate::Context;
use crate::framework::Result;
use crate::framework::apply;
use crate::framework::propagate::{MachineFields, Managers, NodeTimeouts, sync_referenced};

/// What every Machine of the control plane carries.
pub fn propagated(kcp: &KubeadmControlPlane, cluster: &str) -> MachineFields {
    MachineFields {
        labels: machine_labels(kcp, cluster),
        annotations: machine_annotations(kcp),
        timeouts: NodeTimeouts::from_seconds(kcp.spec.machine_template.spec.deletion.as_ref()),
        in_place: Default::default(),
    }
}

/// `m` with the `kcp-cleanup` hook, or `None` when it has it.
fn with_hook(m: &Machine) -> Option<Machine> {
    if m.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION) {
        return None;
    }
    let mut want = m.clone();
    want.annotations_mut().insert(KCP_CLEANUP_HOOK_ANNOTATION.into(), String::new());
    Some(want)
}

/// Brings every non-deleting Machine, and its infrastructure machine and KubeadmConfig, up
/// to the template. Returns whether a Machine was written.
pub async fn sync(ctx: &Context, kcp: &KubeadmControlPlane, cluster: &str, machines: &[Arc<Machine>]) -> Result<bool> {
    let p = propagated(kcp, cluster);
    let mut wrote = false;
    let who = Managers { controller: CONTROLLER, manager: super::METADATA_MANAGER };
    for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let ns = m.namespace().unwrap_or_default();
        let api = ctx.api::<Machine>(&ns);
        let mut current = Cow::Borrowed(m.as_ref());
        if let Some(want) = with_hook(m) {
            current = Cow::Owned(super::WRITER.apply(&api, m.as_ref(), &want).await?.or_wanted(&want)?);
            wrote = true;
        }
        let changed = p.would_change(&current, MANAGER);
        if changed {
            apply::apply(&api, CONTROLLER, &current.metadata, MANAGER, &p.config(&current)).await?;
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
    use drydock_api::capi::core::v1beta2::MachineDeletionSpec;
    use drydock_api::capi::keys::{CONTROL_PLANE_LABEL, KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION};

    #[test]
    fn applies_template_metadata_and_timeouts_only() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.machine_template.metadata = Some(ObjectMeta {
            labels: Some([("tier".to_string(), "gold".to_string())].into()),
            annotations: Some([("note".to_string(), "hi".to_string())].into()),
        });
        kcp.spec.machine_template.spec.deletion =
            Some(MachineDeletionSpec { node_drain_timeout_seconds: Some(300), ..Default::default() });
        let mut m = Machine::new("m", Default::default());
        m.metadata.namespace = Some("ns".into());
        m.labels_mut().insert("mine".into(), "x".into());
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), "{}".into());
        m.spec.deletion = Some(MachineDeletionSpec { node_deletion_timeout_seconds: Some(10), ..Default::default() });
        let p = propagated(&kcp, "c1");
        assert!(p.would_change(&m, MANAGER));
        let body = p.config(&m).body().clone();
        assert_eq!(body["metadata"]["labels"]["tier"], "gold");
        assert_eq!(body["metadata"]["labels"][CONTROL_PLANE_LABEL], "");
        assert!(body["metadata"]["labels"].get("mine").is_none());
        assert_eq!(body["metadata"]["annotations"], serde_json::json!({"note": "hi"}));
        assert_eq!(
            body["spec"],
            serde_json::json!({"deletion": {"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 10}})
        );
        // Once applied, nothing more to do; the hook is merged separately.
        let mut applied = m.clone();
        applied.labels_mut().extend(p.labels.clone());
        applied.annotations_mut().extend(p.annotations.clone());
        applied.spec.deletion = kcp
            .spec
            .machine_template
            .spec
            .deletion
            .clone()
            .map(|d| MachineDeletionSpec { node_deletion_timeout_seconds: Some(10), ..d });
        assert!(!p.would_change(&applied, MANAGER));
        let hooked = with_hook(&applied).expect("hook missing");
        assert!(hooked.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION));
        assert!(with_hook(&hooked).is_none());
    }
}
