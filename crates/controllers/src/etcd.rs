//! The simulated etcd of an in-memory workload cluster, as the control plane sees it.
//!
//! Members are the `etcd-<node>` static pods in `kube-system`, described by annotations
//! (as upstream's in-memory provider does): cluster id, member id, since when a member is
//! leader (the leader is the member with the latest `leader-from`), and whether it was
//! removed. The provider creates the pods; the control plane controller reads membership,
//! moves leadership and removes members through these functions.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use crate::framework::Result;

pub const CLUSTER_ID_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/cluster-id";
pub const MEMBER_ID_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/member-id";
pub const LEADER_FROM_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/leader-from";
pub const MEMBER_REMOVED_ANNOTATION: &str = "etcd.inmemory.infrastructure.cluster.x-k8s.io/member-removed";

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
        let healthy_after = self.members.iter().filter(|m| m.healthy && m.node != removing).count();
        let total_after = total - usize::from(self.members.iter().any(|m| m.node == removing));
        total_after == 0 || healthy_after > total_after / 2
    }
}

fn pods(client: &kube::Client) -> Api<Pod> {
    Api::namespaced(client.clone(), "kube-system")
}

/// The etcd member pods of every workload cluster whose health or leadership changed (a
/// member failing, recovering, taking the lead), through one watch across logical clusters
/// (`all_clusters` addresses `/clusters/*`). The control plane reads membership when it
/// reconciles; this is what wakes it when etcd changes on its own. A member's first sight
/// wakes nothing (its Machine's progress does), nor does its removal (the control plane's
/// own doing). Ends quietly on an API server without the cross-cluster path.
pub fn member_changes(all_clusters: kube::Client) -> impl Stream<Item = Arc<Pod>> + Send + 'static {
    let api: Api<Pod> = Api::all(all_clusters);
    // (logical cluster, pod) → (healthy, leader-from) as last seen.
    let mut seen: HashMap<(String, String), (bool, Option<String>)> = HashMap::new();
    watcher(api, watcher::Config::default().labels(ETCD_SELECTOR))
        .default_backoff()
        .take_while(|r| std::future::ready(!matches!(r, Err(e) if crate::framework::nodes::not_served(e))))
        .filter_map(move |r| {
            let changed = match r {
                Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p)) => {
                    let lc = crate::framework::nodes::lc_annotation(&p.metadata).unwrap_or_default();
                    let key = (lc.to_string(), p.metadata.name.clone().unwrap_or_default());
                    let state = Membership::from_pods(std::slice::from_ref(&p))
                        .members
                        .first()
                        .map(|m| (m.healthy, m.leader_from.clone()));
                    let before = match state {
                        Some(now) => seen.insert(key, now.clone()).filter(|b| *b != now),
                        None => seen.remove(&key).and(None),
                    };
                    before.map(|_| Arc::new(p))
                }
                Ok(watcher::Event::Delete(p)) => {
                    let lc = crate::framework::nodes::lc_annotation(&p.metadata).unwrap_or_default();
                    seen.remove(&(lc.to_string(), p.metadata.name.clone().unwrap_or_default()));
                    None
                }
                _ => None,
            };
            std::future::ready(changed)
        })
}

/// Reads the membership of a workload cluster's etcd.
pub async fn membership(client: &kube::Client) -> Result<Membership> {
    let list = pods(client).list(&ListParams::default().labels(ETCD_SELECTOR)).await?;
    Ok(Membership::from_pods(&list.items))
}

impl Membership {
    /// Membership described by the `etcd-<node>` pods among `pods` (other pods are ignored,
    /// so a list of every control plane pod can be passed).
    pub fn from_pods(pods: &[Pod]) -> Self {
        let mut members = Vec::new();
        for p in pods {
            let labels = p.metadata.labels.as_ref();
            if labels.and_then(|l| l.get("component")).map(String::as_str) != Some("etcd") {
                continue;
            }
            let Some(ann) = p.metadata.annotations.as_ref() else {
                continue;
            };
            if ann.contains_key(MEMBER_REMOVED_ANNOTATION) || p.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Some(id) = ann.get(MEMBER_ID_ANNOTATION).cloned() else {
                continue;
            };
            let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
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
        // Compare instants, not strings: RFC 3339 texts with different fractional digits
        // do not sort chronologically.
        let leader = members
            .iter()
            .filter_map(|m| Some((parse_time(m.leader_from.as_deref()?)?, m)))
            .max_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.node.cmp(&b.1.node)))
            .map(|(_, m)| m.node.clone());
        Membership { members, leader }
    }

    /// The member running on `node`.
    pub fn member(&self, node: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.node == node)
    }

    /// The cluster id shared by the current members, if there are any.
    pub fn cluster_id(&self) -> Option<&str> {
        self.members.iter().map(|m| m.cluster_id.as_str()).find(|c| !c.is_empty())
    }
}

fn parse_time(s: &str) -> Option<jiff::Timestamp> {
    s.parse().ok()
}

/// Annotations of a new member's pod (etcd MemberAdd, as kubeadm join does). The first
/// member founds the cluster (`new_cluster_id`) and becomes leader; later ones join the
/// existing cluster as followers.
pub fn new_member_annotations(
    existing: &Membership,
    member_id: u32,
    new_cluster_id: u32,
    now: jiff::Timestamp,
) -> BTreeMap<String, String> {
    let mut a = BTreeMap::new();
    a.insert(MEMBER_ID_ANNOTATION.to_string(), format!("{member_id:x}"));
    match existing.cluster_id() {
        Some(id) => {
            a.insert(CLUSTER_ID_ANNOTATION.to_string(), id.to_string());
        }
        None => {
            a.insert(CLUSTER_ID_ANNOTATION.to_string(), format!("{new_cluster_id:x}"));
            a.insert(LEADER_FROM_ANNOTATION.to_string(), now.to_string());
        }
    }
    a
}

/// Marks a member removed (etcd MemberRemove).
pub async fn remove_member(client: &kube::Client, node: &str) -> Result<()> {
    let patch = json!({"metadata": {"annotations": {MEMBER_REMOVED_ANNOTATION: jiff::Timestamp::now().to_string()}}});
    match pods(client).patch(&pod_name(node), &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Makes `node`'s member the leader (etcd MoveLeader).
pub async fn move_leader(client: &kube::Client, node: &str) -> Result<()> {
    pods(client).patch(&pod_name(node), &PatchParams::default(), &Patch::Merge(&leader_patch())).await?;
    Ok(())
}

/// The merge patch making the member whose pod it is applied to the leader from now on.
pub fn leader_patch() -> serde_json::Value {
    json!({"metadata": {"annotations": {LEADER_FROM_ANNOTATION: jiff::Timestamp::now().to_string()}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(node: &str, healthy: bool) -> Member {
        Member { node: node.into(), id: node.into(), cluster_id: "c".into(), leader_from: None, healthy }
    }

    #[test]
    fn quorum_arithmetic() {
        let three = Membership { members: vec![m("a", true), m("b", true), m("c", true)], leader: None };
        assert!(three.keeps_quorum_without("a"));
        let degraded = Membership { members: vec![m("a", true), m("b", false), m("c", true)], leader: None };
        assert!(!degraded.keeps_quorum_without("a"), "2 of 3 healthy: removing a healthy one leaves 1 of 2");
        assert!(degraded.keeps_quorum_without("b"), "removing the unhealthy one leaves 2 of 2");
    }

    fn pod(node: &str, ann: &[(&str, &str)], ready: bool) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": pod_name(node), "namespace": "kube-system",
                         "labels": {"component": "etcd", "tier": "control-plane"},
                         "annotations": ann.iter().cloned().collect::<BTreeMap<_, _>>()},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        }))
        .unwrap()
    }

    #[test]
    fn membership_from_pods() {
        let pods = vec![
            // Whole seconds sort after fractions as text; the instants decide.
            pod(
                "b",
                &[
                    (MEMBER_ID_ANNOTATION, "2"),
                    (CLUSTER_ID_ANNOTATION, "c1"),
                    (LEADER_FROM_ANNOTATION, "2024-01-01T00:00:01.5Z"),
                ],
                true,
            ),
            pod(
                "a",
                &[
                    (MEMBER_ID_ANNOTATION, "1"),
                    (CLUSTER_ID_ANNOTATION, "c1"),
                    (LEADER_FROM_ANNOTATION, "2024-01-01T00:00:01Z"),
                ],
                true,
            ),
            pod("c", &[(MEMBER_ID_ANNOTATION, "3"), (CLUSTER_ID_ANNOTATION, "c1")], false),
            pod("d", &[(MEMBER_ID_ANNOTATION, "4"), (MEMBER_REMOVED_ANNOTATION, "x")], true),
            pod("e", &[], true),
        ];
        let m = Membership::from_pods(&pods);
        let nodes: Vec<_> = m.members.iter().map(|m| m.node.as_str()).collect();
        assert_eq!(nodes, ["a", "b", "c"], "removed members and pods without an id are not members");
        assert_eq!(m.leader.as_deref(), Some("b"));
        assert_eq!(m.healthy(), 2);
        assert!(!m.member("c").unwrap().healthy);
        assert_eq!(m.cluster_id(), Some("c1"));
    }

    #[test]
    fn first_member_founds_and_leads() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let first = new_member_annotations(&Membership::default(), 0xab, 0xcd, now);
        assert_eq!(first[CLUSTER_ID_ANNOTATION], "cd");
        assert_eq!(first[MEMBER_ID_ANNOTATION], "ab");
        assert!(first.contains_key(LEADER_FROM_ANNOTATION));
        let existing = Membership::from_pods(&[pod(
            "a",
            &[
                (MEMBER_ID_ANNOTATION, "ab"),
                (CLUSTER_ID_ANNOTATION, "cd"),
                (LEADER_FROM_ANNOTATION, "2024-01-01T00:00:00Z"),
            ],
            true,
        )]);
        let second = new_member_annotations(&existing, 0xef, 0x99, now);
        assert_eq!(second[CLUSTER_ID_ANNOTATION], "cd", "joins the existing cluster");
        assert!(!second.contains_key(LEADER_FROM_ANNOTATION), "joins as a follower");
    }
}
