//! Deleting a control plane (upstream §6.9): once the cluster's worker Machines are gone,
//! every control plane Machine loses its pre-terminate hook and is deleted, all at once
//! (the whole cluster is going, so etcd membership does not matter), then the finalizer
//! goes.

use std::sync::Arc;

use crate::framework::requeue::Requeue;
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, KCP_CLEANUP_HOOK_ANNOTATION, KUBEADM_CONTROL_PLANE_FINALIZER,
};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::ResourceExt;
use kube::api::Api;

use super::{CONTROLLER, GONE_RECHECK, State, certificates, hook, is_deleting, kubeconfig};
use crate::framework::Result;
use crate::framework::write::{delete_if_present, remove_finalizer};
use drydock_api::capi::condition_types::{DELETING, RESIZED};
use drydock_api::capi::v1beta2_conditions::names::{
    AVAILABLE, NOT_AVAILABLE_REASON, WAITING_FOR_MACHINE_DELETION_REASON, WAITING_FOR_WORKERS_DELETION_REASON,
};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Recheck while workers are being deleted. Their changes and deletions wake the control
/// plane of a deleting Cluster first; this only bounds the wait if an event is missed.
const WORKERS_RECHECK: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) async fn reconcile(
    s: &State,
    api: &Api<KubeadmControlPlane>,
    kcp: &KubeadmControlPlane,
    cluster: Option<&str>,
) -> Result<Requeue> {
    if !kcp.finalizers().iter().any(|f| f == KUBEADM_CONTROL_PLANE_FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let ns = kcp.namespace().unwrap_or_default();
    let cluster = cluster.map(str::to_string).or_else(|| kcp.labels().get(CLUSTER_NAME_LABEL).cloned());
    let all: Vec<Arc<Machine>> = match &cluster {
        Some(c) => s.machines.machines(&ns, c, &s.ctx.informers.machines.store),
        None => Vec::new(),
    };
    let owned: Vec<&Arc<Machine>> =
        all.iter().filter(|m| drydock_api::capi::owner::is_controlled_by(&m.metadata, kcp)).collect();
    let mut want = kcp.clone();
    if owned.is_empty() {
        remove_finalizer(&mut want, KUBEADM_CONTROL_PLANE_FINALIZER);
        s.writer.forget(kcp);
        s.writer.apply(api, kcp, &want).await?;
        if let Some(c) = &cluster {
            kubeconfig::forget(&s.kubeconfigs, &ns, c);
            certificates::forget(&s.certificates, &ns, c);
        }
        s.pending.lock().remove(&super::key(kcp));
        return Ok(Requeue::await_change());
    }
    let mut workers: Vec<String> =
        all.iter().filter(|m| !m.labels().contains_key(CONTROL_PLANE_LABEL)).map(|m| m.name_any()).collect();
    let now = s.ctx.clock().condition_time();
    let replicas = i32::try_from(owned.len()).unwrap_or(i32::MAX);
    want.status.get_or_insert_with(Default::default).replicas = Some(replicas);
    if !workers.is_empty() {
        workers.sort_unstable();
        let why = (WAITING_FOR_WORKERS_DELETION_REASON, format!("* Worker Machines: {}", name_list(&workers)));
        set_deleting_v1beta2(&mut want, why, &now);
        want.mark_false(RESIZED, DELETING, Severity::Info, "Waiting for worker nodes to be deleted first", now);
        s.write(api, kcp, &want).await?;
        return Ok(Requeue::after(WORKERS_RECHECK));
    }
    let mut names: Vec<String> = owned.iter().map(|m| m.name_any()).collect();
    names.sort_unstable();
    let why = (WAITING_FOR_MACHINE_DELETION_REASON, format!("* Machines: {}", name_list(&names)));
    set_deleting_v1beta2(&mut want, why, &now);
    want.mark_false(RESIZED, DELETING, Severity::Info, "Deleting control plane Machines", now);
    let machines = s.ctx.api::<Machine>(&ns);
    for m in &owned {
        if m.annotations().contains_key(KCP_CLEANUP_HOOK_ANNOTATION) {
            hook::remove(&machines, m).await?;
        }
        if !is_deleting(m) {
            delete_if_present(&machines, CONTROLLER, &m.name_any()).await?;
        }
    }
    s.write(api, kcp, &want).await?;
    Ok(Requeue::after(GONE_RECHECK))
}

/// At most three names, then how many more: `a, b, c, ... (2 more)`.
fn name_list(names: &[String]) -> String {
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, ... ({} more)", names[..3].join(", "), n - 3),
    }
}

/// The v1beta2 conditions of a deleting control plane: what it waits for, and unavailable.
fn set_deleting_v1beta2(kcp: &mut KubeadmControlPlane, why: (&str, String), now: &Time) {
    let deleting = super::v1beta2::deleting(kcp, Some(why));
    kcp.set_v1beta2(deleting, now);
    let message = "* Control plane metadata.deletionTimestamp is set";
    kcp.set_v1beta2(Observed::false_(AVAILABLE, NOT_AVAILABLE_REASON, message), now);
    crate::framework::pause::set_v1beta2_condition(kcp, None, now);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capped() {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].iter().map(|s| s.to_string()).collect();
        assert_eq!(name_list(&names[..2]), "a, b");
        assert_eq!(name_list(&names), "a, b, c, ... (2 more)");
    }
}
