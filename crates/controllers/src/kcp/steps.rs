//! One step towards the desired control plane: create one Machine (once every existing
//! one is stable), or delete one (only while etcd keeps quorum without it, leadership
//! moved away first; its member goes in the pre-terminate hook), or wait and say why.
//!
//! While Machines are outdated (see [`super::rollout`]) the step rolls them (upstream's
//! `upgradeControlPlane`): below `replicas + maxSurge` Machines it creates an up-to-date
//! one, at that count it removes an outdated one. With maxSurge 1 that is new, old, new,
//! old...; with maxSurge 0 (3 or more replicas) old, new, old, new... Every step waits
//! for the previous one to settle: no Machine deleting, every Machine (but the one
//! leaving) Ready with ready static pods and a healthy etcd member.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::framework::requeue::Requeue;
use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::intstr;
use drydock_api::capi::keys::REMEDIATION_IN_PROGRESS_ANNOTATION;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;
use kube::api::Api;

use super::health::Observed;
use super::members;
use super::rollout::Outdated;
use super::{CONTROLLER, GONE_RECHECK, Pending, State, UNSTABLE_RECHECK, create, is_deleting, key, scale};
use crate::framework::Error;
use crate::framework::write::delete_if_present;

/// What a scaling step did.
pub(super) enum Next {
    /// Nothing changed; look again after `after` (or at the next event). `blocked` says
    /// why a needed change waits.
    Wait { after: Option<Duration>, blocked: Option<String> },
    /// A Machine was created or deleted.
    MachinesChanged(Requeue),
}

impl Next {
    fn blocked(after: Duration, why: String) -> Self {
        Next::Wait { after: Some(after), blocked: Some(why) }
    }
}

/// How a scaling step failed.
pub(super) enum Step {
    /// Creating a Machine failed (reported in MachinesCreated, then retried).
    CreateFailed(String),
    Failed(Error),
}

impl From<Error> for Step {
    fn from(e: Error) -> Self {
        Step::Failed(e)
    }
}

/// Why the control plane is not stable enough to change, if it is not: every Machine
/// (but `except`) must be Ready with a ready Node, ready static pods and a healthy etcd
/// member (upstream's preflight checks).
fn unstable(machines: &[Arc<Machine>], observed: Option<&Observed>, except: Option<&str>) -> Option<String> {
    let Some(o) = observed else {
        return Some("the workload cluster cannot be read".into());
    };
    machines.iter().filter(|m| Some(m.name_any().as_str()) != except).find_map(|m| o.health(m).problem(m))
}

/// Extra Machines a rollout may add: `rollout.strategy.rollingUpdate.maxSurge`, default 1.
pub fn max_surge(kcp: &KubeadmControlPlane) -> usize {
    let desired = kcp.spec.replicas.unwrap_or(1);
    let strategy = kcp.spec.rollout.as_ref().and_then(|r| r.strategy.as_ref());
    let surge = strategy.and_then(|s| s.rolling_update.as_ref()?.max_surge.clone());
    let v = surge.unwrap_or(IntOrString::Int(1));
    usize::try_from(intstr::scaled_value(&v, desired, true).unwrap_or(1)).unwrap_or(0)
}

/// What one step looks at.
pub(super) struct Inputs<'a> {
    pub kcp: &'a KubeadmControlPlane,
    pub cluster: &'a Cluster,
    pub cluster_name: &'a str,
    pub machines: &'a [Arc<Machine>],
    pub observed: Option<&'a Observed>,
    pub outdated: &'a Outdated,
}

/// One step towards the desired replicas and spec. Returns when to look again.
pub(super) async fn scale_step(s: &State, api: &Api<KubeadmControlPlane>, i: &Inputs<'_>) -> Result<Next, Step> {
    let desired = usize::try_from(i.kcp.spec.replicas.unwrap_or(1)).unwrap_or(0);
    if let Some(d) = i.machines.iter().find(|m| is_deleting(m)) {
        return Ok(Next::blocked(GONE_RECHECK, format!("waiting for Machine {} to be deleted", d.name_any())));
    }
    let n = i.machines.len();
    if !i.outdated.is_empty() {
        return if n < desired + max_surge(i.kcp) {
            scale_up(s, api, i, "to replace outdated Machines").await
        } else {
            scale_down(s, i).await
        };
    }
    if n < desired {
        return scale_up(s, api, i, "scaling up").await;
    }
    if n > desired {
        return scale_down(s, i).await;
    }
    // Stable or not, nothing to change; an unstable control plane is looked at again, as
    // the workload cluster's recovery brings no event here.
    let after = unstable(i.machines, i.observed, None).map(|_| UNSTABLE_RECHECK);
    Ok(Next::Wait { after, blocked: None })
}

/// Creates one Machine: the first runs kubeadm init; later ones join once the control
/// plane is initialized and stable.
async fn scale_up(s: &State, api: &Api<KubeadmControlPlane>, i: &Inputs<'_>, why: &str) -> Result<Next, Step> {
    let kcp = i.kcp;
    let n = i.machines.len();
    let init = n == 0;
    if !init {
        let initialized = super::status::is_initialized(kcp) || i.observed.is_some_and(|o| o.kubeadm_config);
        let problem = if initialized {
            unstable(i.machines, i.observed, None)
        } else {
            Some("kubeadm init has not finished".into())
        };
        if let Some(p) = problem {
            tracing::debug!(control_plane = %key(kcp), reason = %p, "waiting before scaling up");
            return Ok(Next::blocked(UNSTABLE_RECHECK, p));
        }
    }
    let fds = scale::control_plane_failure_domains(i.cluster);
    let refs: Vec<&Machine> = i.machines.iter().map(|m| m.as_ref()).collect();
    let fd = scale::next_failure_domain(&fds, &refs, |m| !i.outdated.is_outdated(m));
    let name = create::create_machine(&s.ctx, CONTROLLER, kcp, i.cluster_name, init, fd)
        .await
        .map_err(|e| Step::CreateFailed(e.to_string()))?;
    s.expect(kcp, Pending::Created(name.clone(), Instant::now()));
    s.ctx.events.normal(kcp, "SuccessfulCreate", format!("Created control plane Machine {name} ({why})")).await;
    // The replacement of a remediated Machine exists: the remediation is over.
    if kcp.annotations().contains_key(REMEDIATION_IN_PROGRESS_ANNOTATION) {
        let mut want = kcp.clone();
        want.annotations_mut().remove(REMEDIATION_IN_PROGRESS_ANNOTATION);
        s.write(api, kcp, &want).await?;
    }
    Ok(Next::MachinesChanged(Requeue::await_change()))
}

/// Deletes one Machine (outdated ones first), only when the other members keep quorum,
/// leadership moved away beforehand.
async fn scale_down(s: &State, i: &Inputs<'_>) -> Result<Next, Step> {
    let kcp = i.kcp;
    let Some(o) = i.observed else {
        return Ok(Next::blocked(UNSTABLE_RECHECK, "the workload cluster cannot be read".into()));
    };
    let fds = scale::control_plane_failure_domains(i.cluster);
    let refs: Vec<&Machine> = i.machines.iter().map(|m| m.as_ref()).collect();
    let victim: Option<&Machine> = {
        let member_removed = |m: &Machine| {
            let h = o.health(m);
            h.node.is_some_and(|n| o.membership.member(&n).is_none())
        };
        let prefs = scale::Preferences {
            outdated: &|m| i.outdated.is_outdated(m),
            member_removed: &member_removed,
            unhealthy: &|m| !o.health(m).components_healthy(),
        };
        scale::select_for_scale_down(&refs, &fds, &prefs)
    };
    let Some(victim) = victim else {
        return Ok(Next::Wait { after: None, blocked: None });
    };
    let victim_name = victim.name_any();
    if let Some(p) = unstable(i.machines, i.observed, Some(&victim_name)) {
        tracing::debug!(control_plane = %key(kcp), reason = %p, "waiting before scaling down");
        return Ok(Next::blocked(UNSTABLE_RECHECK, p));
    }
    if let Some(node) = o.health(victim).node
        && o.membership.member(&node).is_some()
        && !o.membership.keeps_quorum_without(&node)
    {
        tracing::info!(control_plane = %key(kcp), node, "scale down would lose etcd quorum; waiting");
        return Ok(Next::blocked(
            UNSTABLE_RECHECK,
            format!("removing the etcd member of Machine {victim_name} would lose etcd quorum"),
        ));
    }
    // The member itself goes in the pre-terminate hook, once the Machine is drained.
    members::move_leadership_away(s, kcp, i.cluster_name, i.machines, o, victim).await?;
    let ns = kcp.namespace().unwrap_or_default();
    delete_if_present(&s.ctx.api::<Machine>(&ns), CONTROLLER, &victim_name).await?;
    s.expect(kcp, Pending::Deleted(victim_name.clone(), Instant::now()));
    let why = if i.outdated.is_outdated(victim) { "outdated" } else { "scaling down" };
    s.ctx.events.normal(kcp, "SuccessfulDelete", format!("Deleted control plane Machine {victim_name} ({why})")).await;
    Ok(Next::MachinesChanged(Requeue::after(GONE_RECHECK)))
}
