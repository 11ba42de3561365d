//! The simulated etcd of an in-memory workload cluster, as the control plane sees it.
//!
//! Members are the `etcd-<node>` static pods in `kube-system`, described by annotations
//! (as upstream's in-memory provider does): cluster id, member id, since when a member is
//! leader (the leader is the member with the latest `leader-from`), and whether it was
//! removed. The provider creates the pods; the control plane controller reads membership,
//! moves leadership and removes members through these functions.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::framework::Result;

pub const CLUSTER_ID_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/cluster-id";
pub const MEMBER_ID_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/member-id";
pub const LEADER_FROM_ANNOTATION: &str =
    "etcd.inmemory.infrastructure.cluster.x-k8s.io/leader-from";
pub const MEMBER_REMOVED_ANNOTATION: &str =
    "etcd.inmemory.infrastructure.cluster.x-k8s.io/member-removed";

/// Label selecting the etcd static pods.
pub const ETCD_SELECTOR: &str = "component=etcd,tier=control-plane";

/// Name of the etcd static pod on a node.
pub fn pod_name(node: &str) -> String {
    format!("etcd-{node}")
}

/// One etcd member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The node (and machine) the member runs on.
    pub node: String,
    pub id: String,
    pub cluster_id: String,
    pub leader_from: Option<String>,
    /// The pod is Running and Ready.
    pub healthy: bool,
}

/// Membership as the workload cluster reports it.
#[derive(Clone, Debug, Default)]
pub struct Membership {
    pub members: Vec<Member>,
    /// Node of the current leader.
    pub leader: Option<String>,
}

impl Membership {
    pub fn healthy(&self) -> usize {
        self.members.iter().filter(|m| m.healthy).count()
    }

    /// Whether losing one more healthy member (or `removing` a specific one) keeps quorum.
    pub fn keeps_quorum_without(&self, removing: &str) -> bool {
        let total = self.members.len();
        let healthy_after = self
            .members
            .iter()
            .filter(|m| m.healthy && m.node != removing)
            .count();
        let total_after = total - usize::from(self.members.iter().any(|m| m.node == removing));
        total_after == 0 || healthy_after > total_after / 2
    }
}

fn pods(client: &kube::Client) -> Api<Pod> {
    Api::namespaced(client.clone(), "kube-system")
}

/// Reads the membership of a workload cluster's etcd.
pub async fn membership(client: &kube::Client) -> Result<Membership> {
    let list = pods(client)
        .list(&ListParams::default().labels(ETCD_SELECTOR))
        .await?;
    let mut members = Vec::new();
    for p in list.items {
        let ann: BTreeMap<String, String> = p.metadata.annotations.clone().unwrap_or_default();
        if ann.contains_key(MEMBER_REMOVED_ANNOTATION) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(id) = ann.get(MEMBER_ID_ANNOTATION).cloned() else {
            continue;
        };
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let status = p.status.as_ref();
        let running = status.and_then(|s| s.phase.as_deref()) == Some("Running");
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        members.push(Member {
            node,
            id,
            cluster_id: ann.get(CLUSTER_ID_ANNOTATION).cloned().unwrap_or_default(),
            leader_from: ann.get(LEADER_FROM_ANNOTATION).cloned(),
            healthy: running && ready,
        });
    }
    members.sort_by(|a, b| a.node.cmp(&b.node));
    let leader = members
        .iter()
        .filter(|m| m.leader_from.is_some())
        .max_by(|a, b| a.leader_from.cmp(&b.leader_from))
        .map(|m| m.node.clone());
    Ok(Membership { members, leader })
}

/// Marks a member removed (etcd MemberRemove).
pub async fn remove_member(client: &kube::Client, node: &str) -> Result<()> {
    let patch = json!({"metadata": {"annotations": {MEMBER_REMOVED_ANNOTATION: jiff::Timestamp::now().to_string()}}});
    match pods(client)
        .patch(
            &pod_name(node),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Makes `node`'s member the leader (etcd MoveLeader).
pub async fn move_leader(client: &kube::Client, node: &str) -> Result<()> {
    let patch = json!({"metadata": {"annotations": {LEADER_FROM_ANNOTATION: jiff::Timestamp::now().to_string()}}});
    pods(client)
        .patch(
            &pod_name(node),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(node: &str, healthy: bool) -> Member {
        Member {
            node: node.into(),
            id: node.into(),
            cluster_id: "c".into(),
            leader_from: None,
            healthy,
        }
    }

    #[test]
    fn quorum_arithmetic() {
        let three = Membership {
            members: vec![m("a", true), m("b", true), m("c", true)],
            leader: None,
        };
        assert!(three.keeps_quorum_without("a"));
        let degraded = Membership {
            members: vec![m("a", true), m("b", false), m("c", true)],
            leader: None,
        };
        assert!(
            !degraded.keeps_quorum_without("a"),
            "2 of 3 healthy: removing a healthy one leaves 1 of 2"
        );
        assert!(
            degraded.keeps_quorum_without("b"),
            "removing the unhealthy one leaves 2 of 2"
        );
    }
}
