//! The `kcp-cleanup` pre-terminate hook (upstream §6.6). Every control plane Machine
//! carries the hook annotation (set at creation, re-added in place), so its deletion stops
//! after the drain, before its infrastructure goes; this controller then removes its etcd
//! member (leadership moved away first) and the annotation, and the deletion goes on.
//! The member thus leaves only once the Node's workloads have moved.
//!
//! One Machine at a time, the one deleted first. From Kubernetes 1.31 other pre-terminate
//! hooks go first (kubeadm's own checks run on the node before it leaves). A Machine
//! deleted when it is the control plane's only one keeps its member (there is no etcd to
//! leave). When the control plane itself is deleted the hooks are just removed (`delete`).

use std::sync::Arc;

use drydock_api::capi::condition_types::{PRE_TERMINATE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{KCP_CLEANUP_HOOK_ANNOTATION, PRE_TERMINATE_DELETE_HOOK_PREFIX};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::version;
use kube::ResourceExt;
use kube::api::Api;
use serde_json::json;

use super::health::Observed;
use super::{State, is_deleting, members};
use crate::framework::{Error, Result};

fn has_hook(m: &Machine) -> bool {
    m.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION)
}

/// Whether other pre-terminate hooks must go first (Kubernetes 1.31 and later).
fn others_first(m: &Machine) -> bool {
    let newer =
        m.spec.version.as_deref().and_then(|v| version::parse(v).ok()).is_some_and(|v| (v.major, v.minor) >= (1, 31));
    newer
        && m.annotations()
            .keys()
            .any(|k| k.starts_with(PRE_TERMINATE_DELETE_HOOK_PREFIX) && k != KCP_CLEANUP_HOOK_ANNOTATION)
}

/// The deleting Machine whose hook runs now, if one is ready for it: the one deleted
/// first, once the Machine controller waits on the hooks.
pub fn ready(machines: &[Arc<Machine>]) -> Option<&Arc<Machine>> {
    let first = machines
        .iter()
        .filter(|m| is_deleting(m) && has_hook(m))
        .min_by_key(|m| (m.metadata.deletion_timestamp.as_ref().map(|t| t.0), m.name_any()))?;
    let waiting = first
        .get_condition(PRE_TERMINATE_HOOK_SUCCEEDED)
        .is_some_and(|c| c.is_false() && c.reason.as_deref() == Some(WAITING_EXTERNAL_HOOK));
    (waiting && !others_first(first)).then_some(first)
}

/// Removes the hook annotation from a Machine.
pub async fn remove(api: &Api<Machine>, m: &Machine) -> Result<()> {
    let p = json!({"metadata": {"annotations": {KCP_CLEANUP_HOOK_ANNOTATION: null}}});
    match super::WRITER.patch(api, &m.name_any(), &p).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Runs the hook of one deleting Machine if one is ready. Returns whether it did.
pub(super) async fn reconcile(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster: &str,
    machines: &[Arc<Machine>],
    observed: Option<&Observed>,
) -> Result<bool> {
    let Some(m) = ready(machines) else {
        return Ok(false);
    };
    let external_etcd = kcp.spec.has_external_etcd();
    if machines.len() > 1 && !external_etcd {
        let o = observed.ok_or_else(|| Error::WorkloadUnreachable {
            cluster: cluster.to_string(),
            reason: format!("cannot remove the etcd member of Machine {}", m.name_any()),
        })?;
        members::remove_member(s, kcp, cluster, machines, o, m).await?;
    }
    remove(&s.ctx.api(&m.namespace().unwrap_or_default()), m).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions::Severity;

    fn now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn deleting(name: &str, at: i64, waiting: bool) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.spec.version = Some("v1.31.2".into());
        m.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::from_second(at).unwrap()));
        m.annotations_mut().insert(KCP_CLEANUP_HOOK_ANNOTATION.into(), String::new());
        if waiting {
            m.mark_false(PRE_TERMINATE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK, Severity::Info, "", now());
        }
        Arc::new(m)
    }

    #[test]
    fn the_first_deleted_machine_once_the_machine_controller_waits() {
        let live = Arc::new(Machine::new("live", Default::default()));
        assert!(ready(std::slice::from_ref(&live)).is_none());
        let (a, b) = (deleting("a", 20, true), deleting("b", 10, false));
        assert!(ready(&[live.clone(), a.clone(), b.clone()]).is_none(), "b went first and is not waiting yet");
        let b = deleting("b", 10, true);
        assert_eq!(ready(&[live.clone(), a.clone(), b]).unwrap().name_any(), "b");
        // Other pre-terminate hooks go first from 1.31; before, this one does not wait.
        let mut other = (*a).clone();
        other.annotations_mut().insert(format!("{PRE_TERMINATE_DELETE_HOOK_PREFIX}/backup"), String::new());
        assert!(ready(&[Arc::new(other.clone())]).is_none());
        other.spec.version = Some("v1.30.4".into());
        assert!(ready(&[Arc::new(other)]).is_some());
        // Without the hook there is nothing to do.
        let mut gone = (*a).clone();
        gone.annotations_mut().remove(KCP_CLEANUP_HOOK_ANNOTATION);
        assert!(ready(&[Arc::new(gone)]).is_none());
    }
}
