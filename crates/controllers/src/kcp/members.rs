//! etcd membership changes for a control plane Machine that leaves: leadership moves to
//! the newest healthy member before the Machine is deleted, and its member is removed in
//! the pre-terminate hook (see `hook`), once the Machine is drained.

use std::sync::Arc;

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use kube::ResourceExt;

use super::health::{self, Observed};
use super::{State, is_deleting};
use crate::etcd;
use crate::framework::Error;

async fn workload(s: &State, kcp: &KubeadmControlPlane, cluster: &str) -> Result<kube::Client, Error> {
    let ns = kcp.namespace().unwrap_or_default();
    s.ctx.workload.get(&ns, cluster).await.map_err(Error::during("reaching the workload cluster"))
}

/// The Node of `m` when it runs an etcd member.
fn member_node(o: &Observed, m: &Machine) -> Option<String> {
    o.health(m).node.filter(|n| o.membership.member(n).is_some())
}

/// Moves etcd leadership to the newest healthy member of another Machine if `leaving`
/// leads. Fails when no such member exists.
pub(super) async fn move_leadership_away(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster: &str,
    machines: &[Arc<Machine>],
    o: &Observed,
    leaving: &Machine,
) -> Result<(), Error> {
    let Some(node) = member_node(o, leaving).filter(|n| o.membership.leader.as_deref() == Some(n.as_str())) else {
        return Ok(());
    };
    let successor = newest_healthy_member(machines, o, &leaving.name_any())
        .ok_or_else(|| Error::Missing(format!("a healthy etcd member to take leadership from {node}")))?;
    let client = workload(s, kcp, cluster).await?;
    let what = format!("moving etcd leadership to {successor}");
    health::bounded(&what, etcd::move_leader(&client, &successor)).await?;
    s.ctx.events.normal(kcp, "EtcdLeaderMoved", format!("Moved etcd leadership from {node} to {successor}")).await;
    Ok(())
}

/// Removes the etcd member of a leaving Machine, leadership moved away first. Nothing to
/// do without a member.
pub(super) async fn remove_member(
    s: &State,
    kcp: &KubeadmControlPlane,
    cluster: &str,
    machines: &[Arc<Machine>],
    o: &Observed,
    leaving: &Machine,
) -> Result<(), Error> {
    let Some(node) = member_node(o, leaving) else {
        return Ok(());
    };
    move_leadership_away(s, kcp, cluster, machines, o, leaving).await?;
    let client = workload(s, kcp, cluster).await?;
    let what = format!("removing the etcd member of {node}");
    health::bounded(&what, etcd::remove_member(&client, &node)).await?;
    s.ctx.events.normal(kcp, "EtcdMemberRemoved", format!("Removed the etcd member of {node}")).await;
    Ok(())
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
            m.status = Some(drydock_api::capi::core::v1beta2::MachineStatus {
                node_ref: Some(drydock_api::capi::core::v1beta2::MachineNodeReference { name: name.into() }),
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
