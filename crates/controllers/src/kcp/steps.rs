//! One step towards the desired number of control plane Machines: create one (once every
//! existing Machine is stable), or remove one (etcd member first, only when quorum holds),
//! or wait. Rollouts will add their steps here.

use std::sync::Arc;
use std::time::Instant;

use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use kube::ResourceExt;
use kube::runtime::controller::Action;

use super::health::{self, Observed};
use super::{CONTROLLER, GONE_RECHECK, Pending, State, UNSTABLE_RECHECK, create, is_deleting, key, scale};
use crate::etcd;
use crate::framework::Error;
use crate::framework::patch::delete_if_present;

/// What a scaling step did.
pub(super) enum Next {
    /// Nothing changed; look again then.
    Wait(Action),
    /// A Machine was created or deleted.
    MachinesChanged(Action),
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

/// One step towards the desired replicas. Returns when to look again.
pub(super) async fn scale_step(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster: &Cluster,
    cluster_name: &str,
    machines: &[Arc<Machine>],
    observed: Option<&Observed>,
) -> Result<Next, Step> {
    let desired = usize::try_from(kcp.spec.replicas.unwrap_or(1)).unwrap_or(0);
    if machines.iter().any(|m| is_deleting(m)) {
        return Ok(Next::Wait(Action::requeue(GONE_RECHECK)));
    }
    let n = machines.len();
    let fds = scale::control_plane_failure_domains(cluster);
    let refs: Vec<&Machine> = machines.iter().map(|m| m.as_ref()).collect();
    if n < desired {
        let init = n == 0;
        if !init {
            let initialized = kcp.status.as_ref().and_then(|s| s.initialized) == Some(true)
                || observed.is_some_and(|o| o.kubeadm_config);
            let problem = if initialized {
                unstable(machines, observed, None)
            } else {
                Some("kubeadm init has not finished".into())
            };
            if let Some(p) = problem {
                tracing::debug!(control_plane = %key(kcp), reason = %p, "waiting before scaling up");
                return Ok(Next::Wait(Action::requeue(UNSTABLE_RECHECK)));
            }
        }
        let fd = scale::next_failure_domain(&fds, &refs, |m| !scale::is_outdated(kcp, m));
        let name = create::create_machine(&s.ctx, CONTROLLER, kcp, cluster_name, init, fd)
            .await
            .map_err(|e| Step::CreateFailed(e.to_string()))?;
        s.expect(kcp, Pending::Created(name.clone(), Instant::now()));
        s.ctx
            .events
            .normal(kcp, "SuccessfulCreate", format!("Created control plane Machine {name} ({} of {desired})", n + 1))
            .await;
        return Ok(Next::MachinesChanged(Action::await_change()));
    }
    if n > desired {
        return scale_down(s, kcp, cluster_name, machines, &refs, &fds, observed).await;
    }
    Ok(Next::Wait(match unstable(machines, observed, None) {
        Some(_) => Action::requeue(UNSTABLE_RECHECK),
        None => Action::await_change(),
    }))
}

/// Removes one Machine: its etcd member first (leadership moved away beforehand), and only
/// when the remaining members keep quorum.
async fn scale_down(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster: &str,
    machines: &[Arc<Machine>],
    refs: &[&Machine],
    fds: &[String],
    observed: Option<&Observed>,
) -> Result<Next, Step> {
    let Some(o) = observed else {
        return Ok(Next::Wait(Action::requeue(UNSTABLE_RECHECK)));
    };
    let victim: Option<&Machine> = {
        let member_removed = |m: &Machine| {
            let h = o.health(m);
            h.node.is_some_and(|n| o.membership.member(&n).is_none())
        };
        let prefs = scale::Preferences {
            outdated: &|m| scale::is_outdated(kcp, m),
            member_removed: &member_removed,
            unhealthy: &|m| !o.health(m).components_healthy(),
        };
        scale::select_for_scale_down(refs, fds, &prefs)
    };
    let Some(victim) = victim else {
        return Ok(Next::Wait(Action::await_change()));
    };
    let victim_name = victim.name_any();
    if let Some(p) = unstable(machines, observed, Some(&victim_name)) {
        tracing::debug!(control_plane = %key(kcp), reason = %p, "waiting before scaling down");
        return Ok(Next::Wait(Action::requeue(UNSTABLE_RECHECK)));
    }
    let ns = kcp.namespace().unwrap_or_default();
    if let Some(node) = o.health(victim).node
        && o.membership.member(&node).is_some()
    {
        if !o.membership.keeps_quorum_without(&node) {
            tracing::info!(control_plane = %key(kcp), node, "scale down would lose etcd quorum; waiting");
            return Ok(Next::Wait(Action::requeue(UNSTABLE_RECHECK)));
        }
        let client = s
            .ctx
            .workload
            .get(&ns, cluster)
            .await
            .map_err(|e| Error::other(format!("reaching the workload cluster: {e}")))?;
        if o.membership.leader.as_deref() == Some(node.as_str()) {
            let successor = newest_healthy_member(machines, o, &victim_name)
                .ok_or_else(|| Error::other(format!("no healthy etcd member to take leadership from {node}")))?;
            let what = format!("moving etcd leadership to {successor}");
            health::bounded(&what, etcd::move_leader(&client, &successor)).await?;
            s.ctx
                .events
                .normal(kcp, "EtcdLeaderMoved", format!("Moved etcd leadership from {node} to {successor}"))
                .await;
        }
        let what = format!("removing the etcd member of {node}");
        health::bounded(&what, etcd::remove_member(&client, &node)).await?;
    }
    delete_if_present(&s.ctx.api::<Machine>(&ns), CONTROLLER, &victim_name).await?;
    s.expect(kcp, Pending::Deleted(victim_name.clone(), Instant::now()));
    s.ctx
        .events
        .normal(kcp, "SuccessfulDelete", format!("Deleted control plane Machine {victim_name} (scaling down)"))
        .await;
    Ok(Next::MachinesChanged(Action::requeue(GONE_RECHECK)))
}

/// The Node of the newest Machine (other than `except`) with a healthy etcd member.
fn newest_healthy_member(machines: &[Arc<Machine>], o: &Observed, except: &str) -> Option<String> {
    machines
        .iter()
        .filter(|m| m.name_any() != except && !is_deleting(m))
        .filter_map(|m| {
            let h = o.health(m);
            h.etcd_member_healthy.then_some((m.metadata.creation_timestamp.clone(), m.name_any(), h.node?))
        })
        .max_by(|a, b| a.0.as_ref().map(|t| t.0).cmp(&b.0.as_ref().map(|t| t.0)).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, _, node)| node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leadership_goes_to_the_newest_healthy_member() {
        use k8s_openapi::api::core::v1::Pod;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let machine = |name: &str, age: i64| {
            let mut m = Machine::new(name, Default::default());
            m.metadata.creation_timestamp = Some(Time(jiff::Timestamp::from_second(10_000 - age).unwrap()));
            m.status = Some(drydock_api::capi::core::MachineStatus {
                node_ref: Some(k8s_openapi::api::core::v1::ObjectReference {
                    name: Some(name.into()),
                    ..Default::default()
                }),
                ..Default::default()
            });
            Arc::new(m)
        };
        let pod = |node: &str, healthy: bool| -> Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": etcd::pod_name(node), "labels": {"component": "etcd"},
                             "annotations": {etcd::MEMBER_ID_ANNOTATION: node, etcd::CLUSTER_ID_ANNOTATION: "c"}},
                "spec": {"nodeName": node, "containers": []},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if healthy {"True"} else {"False"}}]},
            }))
            .unwrap()
        };
        let node = |name: &str| -> k8s_openapi::api::core::v1::Node {
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap()
        };
        let pods = vec![pod("a", true), pod("b", true), pod("c", false)];
        let o = Observed {
            nodes: vec![node("a"), node("b"), node("c")],
            membership: etcd::Membership::from_pods(&pods),
            pods,
            kubeadm_config: true,
        };
        let ms = [machine("a", 30), machine("b", 20), machine("c", 10)];
        assert_eq!(newest_healthy_member(&ms, &o, "a").as_deref(), Some("b"), "c is newest but unhealthy");
        assert_eq!(newest_healthy_member(&ms, &o, "b").as_deref(), Some("a"));
        assert_eq!(newest_healthy_member(&ms[..1], &o, "a"), None);
    }
}
