//! Draining the Node of a deleting Machine (upstream's §4.6, step 2b): cordon it, evict its
//! pods (deleting them where the workload API has no eviction subresource, as drydock's
//! simulated clusters), and wait until they are gone.
//!
//! Pods left in place: mirror pods of static pods (the kubelet owns them) and DaemonSet pods
//! (their controller would recreate them at once, and they tolerate cordoned Nodes). The
//! others are treated as their label or the MachineDrainRules say ([`super::drain_rules`]):
//! skipped, waited for until they complete (not evicted), or evicted in groups of
//! increasing order, a group only once the one before it is gone. On an unreachable Node
//! (Ready Unknown) pods deleted more than a second ago are not waited for: no kubelet will
//! confirm their end.
//!
//! The drain is skipped with the `machine.cluster.x-k8s.io/exclude-node-draining`
//! annotation, when the Node is gone, and once `spec.nodeDrainTimeout` (when positive) has
//! passed since the drain started (`status.deletion.nodeDrainStartTime`).

use std::collections::BTreeMap;
use std::time::Duration;

use drydock_api::capi::condition_types::{DRAINING, DRAINING_FAILED, DRAINING_SUCCEEDED};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeletionStatus, MachineDrainRule};
use drydock_api::capi::keys::{EXCLUDE_NODE_DRAINING_ANNOTATION, has_annotation};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::{Api, EvictParams, ListParams};
use serde_json::json;

use super::drain_rules::{Behavior, Rules};
use super::{CONTROLLER, State};
use crate::framework::events::PendingEvents;
use crate::framework::node_reader::{NodeReader, workload_nodes};
use crate::framework::write::delete_if_present;
use crate::framework::{Error, Result, metrics};

/// Marks the mirror pod of a static pod.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// How often a drain looks again at pods that are still terminating (or whose eviction a
/// disruption budget refused). Upstream retries every 20s; pods of drydock's simulated
/// clusters vanish at once, so a waiting drain is usually a refused eviction.
const DRAIN_RETRY: Duration = Duration::from_secs(5);
/// Pods on an unreachable Node deleted longer ago than this are not waited for.
const UNREACHABLE_GRACE: Duration = Duration::from_secs(1);

/// Whether deletion may go on.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Drain {
    Done,
    /// Look again after this long.
    Wait(Duration),
}

/// What the drain does with one pod.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PodAction {
    /// Left running on the Node.
    Skip,
    /// Evicted (or deleted).
    Evict,
    /// Already terminating: waited for.
    WaitForExit,
    /// Terminating on an unreachable Node: not waited for.
    Ignore,
    /// Not evicted: waited for until it completes.
    WaitForCompletion,
}

/// What the drain does with `p`, which its label and the rules give `behavior`.
pub(crate) fn classify(p: &Pod, behavior: &Behavior, node_unreachable: bool, now: Timestamp) -> PodAction {
    if p.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(MIRROR_ANNOTATION)) {
        return PodAction::Skip;
    }
    let daemon =
        p.metadata.owner_references.iter().flatten().any(|o| o.controller == Some(true) && o.kind == "DaemonSet");
    if daemon || *behavior == Behavior::Skip {
        return PodAction::Skip;
    }
    if *behavior == Behavior::WaitCompleted && p.metadata.deletion_timestamp.is_none() {
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        return if matches!(phase, Some("Succeeded" | "Failed")) {
            PodAction::Skip
        } else {
            PodAction::WaitForCompletion
        };
    }
    match &p.metadata.deletion_timestamp {
        Some(t) if node_unreachable && now.duration_since(t.0).unsigned_abs() > UNREACHABLE_GRACE && t.0 < now => {
            PodAction::Ignore
        }
        Some(_) => PodAction::WaitForExit,
        None => PodAction::Evict,
    }
}

/// Time left of a positive `timeout` (whole seconds) started at `started`; `None` without a
/// timeout (unset or zero: wait forever) or before it started.
pub(super) fn timeout_left(timeout: Option<i32>, started: Option<&Time>, now: Timestamp) -> Option<Duration> {
    let seconds = u64::try_from(timeout?).ok().filter(|s| *s > 0)?;
    let deadline = started?.0.checked_add(Duration::from_secs(seconds)).ok()?;
    Some(if deadline > now { now.duration_until(deadline).unsigned_abs() } else { Duration::ZERO })
}

/// Time left before the drain gives up, `None` without a timeout.
fn time_left(m: &Machine, now: Timestamp) -> Option<Duration> {
    let started = m.status.as_ref()?.deletion.as_ref()?.node_drain_start_time.as_ref();
    timeout_left(m.spec.deletion.as_ref()?.node_drain_timeout_seconds, started, now)
}

/// Drains the Machine's Node; see the module documentation.
pub(super) async fn run(
    state: &State,
    m: &mut Machine,
    cluster: &Cluster,
    now: &Time,
    events: &mut PendingEvents,
) -> Result<Drain> {
    if has_annotation(m.metadata.annotations.as_ref(), EXCLUDE_NODE_DRAINING_ANNOTATION)
        || m.is_condition_true(DRAINING_SUCCEEDED)
    {
        return Ok(Drain::Done);
    }
    let precise_now = state.ctx.clock().now();
    let left = time_left(m, precise_now);
    if left == Some(Duration::ZERO) {
        tracing::info!(machine = %m.name_any(), "node drain timed out; deleting the machine anyway");
        return Ok(Drain::Done);
    }
    let failed = |m: &mut Machine, e: &Error| {
        let msg = format!("Draining the Node failed: {e}");
        m.mark_false(DRAINING_SUCCEEDED, DRAINING_FAILED, Severity::Warning, &msg, now.clone());
        Drain::Wait(DRAIN_RETRY.min(left.unwrap_or(DRAIN_RETRY)))
    };
    let reader = match NodeReader::of(&state.ctx, cluster).await {
        Ok(r) => r,
        Err(e) => return Ok(failed(m, &e)),
    };
    let node = match reader.of_machine(m).await {
        Ok(Some(n)) => n,
        // No Node, nothing to drain.
        Ok(None) => return Ok(Drain::Done),
        Err(e) => return Ok(failed(m, &e)),
    };
    let node_name = node.name_any();
    let status = m.status.get_or_insert_with(Default::default);
    let deletion = status.deletion.get_or_insert_with(MachineDeletionStatus::default);
    if deletion.node_drain_start_time.is_none() {
        deletion.node_drain_start_time = Some(now.clone());
        let msg = format!("Draining Node {node_name}");
        m.mark_false(DRAINING_SUCCEEDED, DRAINING, Severity::Info, &msg, now.clone());
    }
    let remaining = match evict_pods(state, m, cluster, &node, precise_now).await {
        Ok(r) => r,
        Err(e) => return Ok(failed(m, &e)),
    };
    if remaining.is_empty() {
        m.mark_true(DRAINING_SUCCEEDED, now.clone());
        events.normal("SuccessfulDrainNode", format!("success draining Machine's node {node_name:?}"));
        return Ok(Drain::Done);
    }
    let shown: Vec<&str> = remaining.iter().take(5).map(String::as_str).collect();
    let more = if remaining.len() > shown.len() { ", ..." } else { "" };
    let msg =
        format!("Draining Node {node_name}: waiting for {} pods to go: {}{more}", remaining.len(), shown.join(", "));
    m.mark_false(DRAINING_SUCCEEDED, DRAINING, Severity::Info, &msg, now.clone());
    Ok(Drain::Wait(DRAIN_RETRY.min(left.unwrap_or(DRAIN_RETRY))))
}

/// Whether the Node is unreachable (Ready Unknown): no kubelet confirms anything there.
pub(super) fn unreachable(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "Unknown")
}

/// The pods on a Node, each with what the drain does with it and why.
pub(super) struct PodPlan {
    pub pods: Vec<Pod>,
    /// One per pod: `namespace/name`, the action, the behaviour it follows.
    pub actions: Vec<(String, PodAction, Behavior)>,
}

/// What decides each pod's fate on one Node, read once per reconcile: the rules that select
/// the Machine, the labels of the workload namespaces (when a rule looks at them), and
/// whether the Node is reachable.
pub(super) struct Judge {
    client: kube::Client,
    node: String,
    rules: Rules,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
    unreachable: bool,
    now: Timestamp,
}

impl Judge {
    pub async fn of(state: &State, m: &Machine, cluster: &Cluster, node: &Node, now: Timestamp) -> Result<Self> {
        let client = state.ctx.workload.get(&cluster.namespace().unwrap_or_default(), &cluster.name_any()).await?;
        let rules = rules_for(state, m, cluster).await?;
        let namespaces = if rules.needs_namespaces() {
            let list = Api::<Namespace>::all(client.clone()).list(&ListParams::default()).await?;
            list.items.into_iter().map(|n| (n.name_any(), n.metadata.labels.unwrap_or_default())).collect()
        } else {
            BTreeMap::new()
        };
        Ok(Self { client, node: node.name_any(), rules, namespaces, unreachable: unreachable(node), now })
    }

    /// Lists the pods on the Node and plans each.
    pub async fn plan(&self) -> Result<PodPlan> {
        let on_node = ListParams::default().fields(&format!("spec.nodeName={}", self.node));
        let pods = Api::<Pod>::all(self.client.clone()).list(&on_node).await?.items;
        let none = BTreeMap::new();
        let actions = pods
            .iter()
            .map(|p| {
                let ns = p.namespace().unwrap_or_default();
                let behavior = self.rules.behavior(p, self.namespaces.get(&ns).unwrap_or(&none));
                (format!("{ns}/{}", p.name_any()), classify(p, &behavior, self.unreachable, self.now), behavior)
            })
            .collect();
        Ok(PodPlan { pods, actions })
    }
}

/// Cordons the Node and evicts its pods, the group of the lowest order first. Returns the
/// pods still waited for (`namespace/name`).
async fn evict_pods(state: &State, m: &Machine, cluster: &Cluster, node: &Node, now: Timestamp) -> Result<Vec<String>> {
    let name = node.name_any();
    let nodes = workload_nodes(&state.ctx, cluster).await?;
    if node.spec.as_ref().and_then(|s| s.unschedulable) != Some(true) {
        let cordon = json!({"spec": {"unschedulable": true}});
        state.writer.patch(&nodes, &name, &cordon).await?;
    }
    let judge = Judge::of(state, m, cluster, node, now).await?;
    let planned = judge.plan().await?;
    // The lowest order of the pods still to drain: only that group is evicted now.
    let lowest = planned
        .actions
        .iter()
        .filter(|(_, a, _)| matches!(a, PodAction::Evict | PodAction::WaitForExit))
        .filter_map(|(_, _, b)| if let Behavior::Drain { order } = b { Some(*order) } else { None })
        .min();
    let mut evicted = false;
    for (p, (_, action, behavior)) in planned.pods.iter().zip(&planned.actions) {
        if *action == PodAction::Evict && lowest.is_some_and(|o| *behavior == Behavior::Drain { order: o }) {
            let api: Api<Pod> = Api::namespaced(judge.client.clone(), &p.namespace().unwrap_or_default());
            evicted |= evict(&api, &p.name_any()).await?;
        }
    }
    // Evicted pods may be gone at once; look again rather than wait a retry for nothing.
    let planned = if evicted { judge.plan().await? } else { planned };
    Ok(planned
        .actions
        .into_iter()
        .filter(|(_, a, _)| matches!(a, PodAction::Evict | PodAction::WaitForExit | PodAction::WaitForCompletion))
        .map(|(key, _, _)| key)
        .collect())
}

/// The MachineDrainRules of the Machine's namespace that select it.
async fn rules_for(state: &State, m: &Machine, cluster: &Cluster) -> Result<Rules> {
    let api: Api<MachineDrainRule> = Api::namespaced(state.ctx.client.clone(), &m.namespace().unwrap_or_default());
    let all = api.list(&ListParams::default()).await?.items;
    let empty = BTreeMap::new();
    Ok(Rules::for_machine(
        all,
        m.metadata.labels.as_ref().unwrap_or(&empty),
        cluster.metadata.labels.as_ref().unwrap_or(&empty),
    ))
}

/// Evicts a pod; where the API has no eviction subresource (404, 405) the pod is deleted.
/// Returns false when a disruption budget refused the eviction (retried later).
async fn evict(api: &Api<Pod>, name: &str) -> Result<bool> {
    match api.evict(name, &EvictParams::default()).await {
        Ok(_) => {
            metrics::write(CONTROLLER);
            Ok(true)
        }
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 405 => {
            delete_if_present(api, CONTROLLER, name).await?;
            Ok(true)
        }
        Err(kube::Error::Api(s)) if s.code == 429 => {
            tracing::debug!(pod = name, reason = %s.message, "eviction refused; retrying later");
            Ok(false)
        }
        Err(e) => Err(Error::during(format!("evicting pod {name}"))(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::MachineDeletionSpec;
    use serde_json::Value;

    fn pod(v: Value) -> Pod {
        serde_json::from_value(v).expect("pod")
    }

    #[test]
    fn pods_to_evict() {
        let now = Timestamp::from_second(1_000).expect("ts");
        let drain = Behavior::Drain { order: 0 };
        let classify = |p: &Pod, unreachable| super::classify(p, &drain, unreachable, now);
        let plain = pod(json!({"metadata": {"name": "a"}}));
        assert_eq!(classify(&plain, false), PodAction::Evict);
        let mirror = pod(json!({"metadata": {"name": "m", "annotations": {MIRROR_ANNOTATION: "h"}}}));
        assert_eq!(classify(&mirror, false), PodAction::Skip);
        let daemon = pod(json!({"metadata": {"name": "d", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u", "controller": true}]}}));
        assert_eq!(classify(&daemon, false), PodAction::Skip);
        let owned = pod(json!({"metadata": {"name": "r", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}]}}));
        assert_eq!(classify(&owned, false), PodAction::Evict);
        // The label and the rules decide the behaviour (see drain_rules); classify follows it.
        let skip = pod(json!({"metadata": {"name": "s", "labels": {"cluster.x-k8s.io/drain": "Skip"}}}));
        let behavior = Rules::default().behavior(&skip, &BTreeMap::new());
        assert_eq!(super::classify(&skip, &behavior, false, now), PodAction::Skip);
        let running = pod(json!({"metadata": {"name": "w"}, "status": {"phase": "Running"}}));
        let done = pod(json!({"metadata": {"name": "w"}, "status": {"phase": "Succeeded"}}));
        let wait = Behavior::WaitCompleted;
        assert_eq!(super::classify(&running, &wait, false, now), PodAction::WaitForCompletion);
        assert_eq!(super::classify(&done, &wait, false, now), PodAction::Skip);
        assert_eq!(super::classify(&running, &Behavior::Skip, false, now), PodAction::Skip);
        let going = pod(json!({"metadata": {"name": "g", "deletionTimestamp": "1970-01-01T00:16:30Z"}}));
        assert_eq!(classify(&going, false), PodAction::WaitForExit);
        assert_eq!(classify(&going, true), PodAction::Ignore);
        let just_now = pod(json!({"metadata": {"name": "j", "deletionTimestamp": "1970-01-01T00:16:40Z"}}));
        assert_eq!(classify(&just_now, true), PodAction::WaitForExit);
    }

    #[test]
    fn drain_deadline() {
        let mut m = Machine::new("m", Default::default());
        let at = |s| Timestamp::from_second(s).expect("ts");
        assert_eq!(time_left(&m, at(10)), None);
        m.spec.deletion = Some(MachineDeletionSpec { node_drain_timeout_seconds: Some(30), ..Default::default() });
        assert_eq!(time_left(&m, at(10)), None, "not started");
        let deletion = MachineDeletionStatus { node_drain_start_time: Some(Time(at(100))), ..Default::default() };
        m.status =
            Some(drydock_api::capi::core::v1beta2::MachineStatus { deletion: Some(deletion), ..Default::default() });
        assert_eq!(time_left(&m, at(110)), Some(Duration::from_secs(20)));
        assert_eq!(time_left(&m, at(200)), Some(Duration::ZERO));
        m.spec.deletion = Some(MachineDeletionSpec { node_drain_timeout_seconds: Some(0), ..Default::default() });
        assert_eq!(time_left(&m, at(200)), None, "zero waits forever");
    }
}
