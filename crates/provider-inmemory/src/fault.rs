//! Fault injection: how tests and users make a simulated machine sick.
//!
//! The annotation [`FAULT_ANNOTATION`] on an InMemoryMachine, once its Node is provisioned:
//!
//! | value | the simulated Node |
//! |---|---|
//! | `node-not-ready` | `Ready` becomes `False` (the kubelet reports a problem) |
//! | `node-unknown` | `Ready` becomes `Unknown` (the kubelet stopped reporting) |
//! | `node-deleted` | is deleted; set from the start, the Node never registers |
//! | `etcd-member-down` | stays Ready, but its etcd member fails: the `etcd-<node>` pod is no longer Ready, and if it led, another healthy member is elected |
//!
//! Removing the annotation heals the machine: `Ready` goes back to `True`, a deleted Node
//! registers again (as a kubelet would) and a failed etcd member is Ready again. Condition changes carry the current time as their
//! `lastTransitionTime`, so health checks time them as real ones. A Ready condition set by a
//! fault has the reason [`FAULT_REASON`]; other changes to the Node are left alone.
//!
//! Unknown values are reported in the logs and otherwise ignored.
//!
//! On a simulated infrastructure cluster (InMemoryCluster, DevCluster), the value
//! [`API_UNREACHABLE`] makes the workload cluster's API server unreachable: its logical
//! cluster answers every request with 503 until the annotation is removed.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, PodCondition};
use serde_json::json;

use drydock_controllers::framework::{Error, Result};

/// The annotation selecting a fault.
pub const FAULT_ANNOTATION: &str = "infrastructure.drydock.dev/fault";
/// The fault of an infrastructure cluster whose API server is out of reach.
pub const API_UNREACHABLE: &str = "api-unreachable";
/// Reason of a Ready condition set by a fault.
pub const FAULT_REASON: &str = "FaultInjected";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    NodeNotReady,
    NodeUnknown,
    NodeDeleted,
    EtcdMemberDown,
}

impl Fault {
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "node-not-ready" => Some(Self::NodeNotReady),
            "node-unknown" => Some(Self::NodeUnknown),
            "node-deleted" => Some(Self::NodeDeleted),
            "etcd-member-down" => Some(Self::EtcdMemberDown),
            _ => None,
        }
    }

    /// The fault an object's annotations ask for.
    pub fn of(annotations: Option<&std::collections::BTreeMap<String, String>>) -> Option<Self> {
        let value = annotations?.get(FAULT_ANNOTATION)?;
        let fault = Self::parse(value);
        if fault.is_none() {
            tracing::warn!(value = %value, "unknown {FAULT_ANNOTATION} value; expected node-not-ready, node-unknown, node-deleted or etcd-member-down");
        }
        fault
    }

    /// The Ready status the fault imposes, if it is about Ready.
    fn ready(self) -> Option<(&'static str, &'static str)> {
        match self {
            Self::NodeNotReady => Some(("False", "kubelet is not ready (injected fault node-not-ready)")),
            Self::NodeUnknown => Some(("Unknown", "Kubelet stopped posting node status (injected fault node-unknown)")),
            Self::NodeDeleted | Self::EtcdMemberDown => None,
        }
    }
}

/// Whether an infrastructure cluster's annotations make its API server unreachable.
pub fn api_unreachable(annotations: &std::collections::BTreeMap<String, String>) -> bool {
    annotations.get(FAULT_ANNOTATION).is_some_and(|v| v.trim() == API_UNREACHABLE)
}

/// What to do to the Node so it reflects `fault`.
#[derive(Debug, PartialEq)]
pub enum Action {
    Nothing,
    /// Delete the Node.
    Delete,
    /// Create the Node again (healthy).
    Recreate,
    /// Write these conditions (a status merge patch).
    SetConditions(serde_json::Value),
}

fn ready_condition(n: &Node) -> Option<&NodeCondition> {
    n.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready")
}

/// The change bringing `node` (`None`: it does not exist) in line with `fault`. `deleted_by_fault`
/// says whether a missing Node was removed by a fault (only then is it recreated).
pub fn plan(node: Option<&Node>, fault: Option<Fault>, deleted_by_fault: bool, now: Timestamp) -> Result<Action> {
    // A failed etcd member leaves its Node alone.
    let fault = fault.filter(|f| *f != Fault::EtcdMemberDown);
    let Some(node) = node.filter(|n| n.metadata.deletion_timestamp.is_none()) else {
        return Ok(match (node, fault) {
            (None, None | Some(Fault::NodeNotReady | Fault::NodeUnknown)) if deleted_by_fault => Action::Recreate,
            _ => Action::Nothing,
        });
    };
    let want = match fault {
        Some(Fault::NodeDeleted) => return Ok(Action::Delete),
        Some(f) => f.ready().map(|(status, message)| (status, FAULT_REASON, message)),
        // Healing: only a Ready condition this module set is put back.
        None if ready_condition(node).and_then(|c| c.reason.as_deref()) == Some(FAULT_REASON) => {
            Some(("True", "KubeletReady", "kubelet is posting ready status"))
        }
        None => None,
    };
    let Some((status, reason, message)) = want else {
        return Ok(Action::Nothing);
    };
    if ready_condition(node).is_some_and(|c| c.status == status && c.reason.as_deref() == Some(reason)) {
        return Ok(Action::Nothing);
    }
    let at = Timestamp::from_second(now.as_second()).unwrap_or(now).to_string();
    let ready = json!({"type": "Ready", "status": status, "reason": reason, "message": message,
                       "lastHeartbeatTime": at, "lastTransitionTime": at});
    // A merge patch replaces the whole list: keep the other conditions as they are.
    let mut conditions: Vec<serde_json::Value> = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.type_ != "Ready")
        .map(serde_json::to_value)
        .collect::<std::result::Result<_, _>>()
        .map_err(Error::from)?;
    conditions.push(ready);
    Ok(Action::SetConditions(json!({
        "metadata": {"resourceVersion": node.metadata.resource_version},
        "status": {"conditions": conditions},
    })))
}

/// The status merge patch bringing an etcd member's pod in line with `down` (the
/// `etcd-member-down` fault), if it needs one: `Ready` and `ContainersReady` go `False`
/// with [`FAULT_REASON`], and back to `True` once healed (only when a fault set them).
pub fn etcd_pod_plan(pod: &Pod, down: bool, now: Timestamp) -> Option<serde_json::Value> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let faulted = |c: &PodCondition| c.reason.as_deref() == Some(FAULT_REASON);
    let affected = |c: &PodCondition| c.type_ == "Ready" || c.type_ == "ContainersReady";
    let stale = conditions.iter().filter(|c| affected(c)).any(|c| if down { c.status != "False" } else { faulted(c) });
    if !stale {
        return None;
    }
    let at = Timestamp::from_second(now.as_second()).unwrap_or(now).to_string();
    let updated: Vec<serde_json::Value> = conditions
        .iter()
        .map(|c| {
            if !affected(c) {
                return serde_json::to_value(c).unwrap_or_default();
            }
            if down {
                json!({"type": c.type_, "status": "False", "reason": FAULT_REASON,
                       "message": "containers with unready status: [etcd] (injected fault etcd-member-down)",
                       "lastTransitionTime": at})
            } else {
                json!({"type": c.type_, "status": "True", "lastTransitionTime": at})
            }
        })
        .collect();
    Some(json!({
        "metadata": {"resourceVersion": pod.metadata.resource_version},
        "status": {"conditions": updated},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabricate::{MachineFacts, node};

    fn healthy() -> Node {
        let f = MachineFacts { name: "m", version: "v1.30.2", control_plane: false };
        node(&f, Timestamp::from_second(1_000).expect("ts")).expect("node")
    }

    fn apply(n: &mut Node, a: &Action) {
        if let Action::SetConditions(p) = a {
            n.status.as_mut().expect("status").conditions =
                Some(serde_json::from_value(p["status"]["conditions"].clone()).expect("conditions"));
        }
    }

    #[test]
    fn sicken_and_heal() {
        let now = Timestamp::from_second(2_000).expect("ts");
        let mut n = healthy();
        assert_eq!(plan(Some(&n), None, false, now).expect("plan"), Action::Nothing);
        let a = plan(Some(&n), Some(Fault::NodeNotReady), false, now).expect("plan");
        apply(&mut n, &a);
        let ready = ready_condition(&n).expect("ready");
        assert_eq!((ready.status.as_str(), ready.reason.as_deref()), ("False", Some(FAULT_REASON)));
        assert_eq!(ready.last_transition_time.as_ref().map(|t| t.0), Some(now));
        assert_eq!(n.status.as_ref().and_then(|s| s.conditions.as_ref()).map(Vec::len), Some(4));
        assert_eq!(plan(Some(&n), Some(Fault::NodeNotReady), false, now).expect("plan"), Action::Nothing);
        let a = plan(Some(&n), Some(Fault::NodeUnknown), false, now).expect("plan");
        apply(&mut n, &a);
        assert_eq!(ready_condition(&n).map(|c| c.status.as_str()), Some("Unknown"));
        let a = plan(Some(&n), None, false, now).expect("plan");
        apply(&mut n, &a);
        assert_eq!(ready_condition(&n).map(|c| c.status.as_str()), Some("True"));
        assert_eq!(plan(Some(&n), None, false, now).expect("plan"), Action::Nothing);
        // A NotReady Node not caused by a fault is left alone.
        let mut other = healthy();
        if let Some(c) = other.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|cs| cs.last_mut()) {
            c.status = "False".into();
            c.reason = Some("KubeletNotReady".into());
        }
        assert_eq!(plan(Some(&other), None, false, now).expect("plan"), Action::Nothing);
    }

    #[test]
    fn delete_and_return() {
        let now = Timestamp::from_second(2_000).expect("ts");
        let n = healthy();
        assert_eq!(plan(Some(&n), Some(Fault::NodeDeleted), false, now).expect("plan"), Action::Delete);
        assert_eq!(plan(None, Some(Fault::NodeDeleted), true, now).expect("plan"), Action::Nothing);
        assert_eq!(plan(None, None, true, now).expect("plan"), Action::Recreate);
        assert_eq!(plan(None, None, false, now).expect("plan"), Action::Nothing, "not ours to bring back");
        assert_eq!(Fault::parse(" node-unknown "), Some(Fault::NodeUnknown));
        assert_eq!(Fault::parse("flaky"), None);
    }

    #[test]
    fn an_etcd_member_fails_and_recovers() {
        let now = Timestamp::from_second(2_000).expect("ts");
        let f = MachineFacts { name: "m", version: "v1.30.2", control_plane: true };
        let at = Timestamp::from_second(1_000).expect("ts");
        let mut pod = crate::fabricate::static_pod(&f, crate::fabricate::ETCD, Default::default(), at).expect("pod");
        assert_eq!(etcd_pod_plan(&pod, false, now), None, "healthy and not faulted");
        let patch = etcd_pod_plan(&pod, true, now).expect("fails");
        pod.status.as_mut().expect("status").conditions =
            Some(serde_json::from_value(patch["status"]["conditions"].clone()).expect("conditions"));
        let status = |p: &Pod, t: &str| {
            let cs = p.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
            cs.into_iter().find(|c| c.type_ == t).map(|c| c.status)
        };
        assert_eq!(status(&pod, "Ready").as_deref(), Some("False"));
        assert_eq!(status(&pod, "ContainersReady").as_deref(), Some("False"));
        assert_eq!(status(&pod, "PodScheduled").as_deref(), Some("True"), "other conditions kept");
        assert_eq!(etcd_pod_plan(&pod, true, now), None, "already down");
        let healed = etcd_pod_plan(&pod, false, now).expect("heals");
        pod.status.as_mut().expect("status").conditions =
            Some(serde_json::from_value(healed["status"]["conditions"].clone()).expect("conditions"));
        assert_eq!(status(&pod, "Ready").as_deref(), Some("True"));
        // The Node of a machine whose etcd member failed stays as it is.
        let n = healthy();
        assert_eq!(plan(Some(&n), Some(Fault::EtcdMemberDown), false, now).expect("plan"), Action::Nothing);
        assert_eq!(Fault::parse("etcd-member-down"), Some(Fault::EtcdMemberDown));
    }
}
