//! A Machine's Node in its workload cluster: found by providerID, referenced once from
//! `status.nodeRef`, its health summarised into NodeHealthy, and the Machine's node labels
//! and annotations propagated to it with a minimal patch. Nodes are read from the
//! cross-cluster Node store when it covers the workload cluster ([`NodeReader`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineNodeReference};
use drydock_api::capi::keys::{INTERRUPTIBLE_LABEL, NODE_LABELS_FROM_MACHINE_ANNOTATION, NODE_MACHINE_ANNOTATION};
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::names::{
    CONNECTION_DOWN_REASON, INSPECTION_FAILED_REASON, NODE_DELETED_REASON, NODE_DOES_NOT_EXIST_REASON,
    NODE_HEALTHY as V1BETA2_NODE_HEALTHY, NODE_HEALTHY_REASON, NODE_HEALTHY_UNKNOWN_REASON, NODE_NOT_HEALTHY_REASON,
    NODE_NOT_READY_REASON, NODE_READY, NODE_READY_REASON, NODE_READY_UNKNOWN_REASON,
};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::api::core::v1::{Node, NodeCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use serde_json::{Map, Value, json};

use super::{NODE_RECHECK, State};
use crate::framework::events::PendingEvents;
use crate::framework::node_patch;
use crate::framework::node_reader::{NodeReader, node_ref_name, workload_nodes};
use crate::framework::referenced::Referenced;
use crate::framework::{Error, Result};
use drydock_api::capi::condition_types::NODE_HEALTHY;

/// Finds, references, checks and labels the Machine's Node. Returns when to look again.
pub(super) async fn reconcile(
    state: &State,
    m: &mut Machine,
    cluster: &Cluster,
    infra: Option<&Referenced>,
    events: &mut PendingEvents,
) -> Result<Option<Duration>> {
    let now = state.ctx.clock().condition_time();
    if m.spec.provider_id.is_none() {
        m.mark_false(NODE_HEALTHY, "WaitingForNodeRef", Severity::Info, "", now.clone());
        set_node_unknown(m, NODE_DOES_NOT_EXIST_REASON, "Waiting for a Node with spec.providerID to exist", &now);
        return Ok(None);
    }
    let reader = match NodeReader::of(&state.ctx, cluster).await {
        Ok(r) => r,
        Err(e @ Error::WorkloadUnreachable { .. }) => {
            m.mark_unknown(NODE_HEALTHY, "NodeInspectionFailed", &e.to_string(), now.clone());
            set_node_unknown(m, CONNECTION_DOWN_REASON, &e.to_string(), &now);
            return Ok(Some(NODE_RECHECK));
        }
        Err(e) => return Err(e),
    };
    let node_ref = node_ref_name(m).map(str::to_string);
    let node = match reader.of_machine(m).await {
        Ok(Some(n)) => n,
        Ok(None) if node_ref.is_some() => {
            let msg = format!("Node {} not found", node_ref.as_deref().unwrap_or_default());
            m.mark_false(NODE_HEALTHY, "NodeNotFound", Severity::Error, &msg, now.clone());
            for type_ in [NODE_READY, V1BETA2_NODE_HEALTHY] {
                m.set_v1beta2(Observed::false_(type_, NODE_DELETED_REASON, msg.as_str()), &now);
            }
            // With a watch, the Node's return is an event; without, retry with backoff.
            return if reader.is_watched() { Ok(None) } else { Err(Error::Missing(msg)) };
        }
        Ok(None) => {
            let msg = "Waiting for a node with matching ProviderID to exist";
            m.mark_false(NODE_HEALTHY, "NodeProvisioning", Severity::Warning, msg, now.clone());
            set_node_unknown(m, NODE_DOES_NOT_EXIST_REASON, msg, &now);
            return Ok(reader.recheck(NODE_RECHECK));
        }
        Err(e) => {
            m.mark_unknown(NODE_HEALTHY, "NodeInspectionFailed", &e.to_string(), now.clone());
            set_node_unknown(m, INSPECTION_FAILED_REASON, &e.to_string(), &now);
            return Err(e);
        }
    };
    let status = m.status.get_or_insert_with(Default::default);
    if status.node_ref.is_none() {
        status.node_ref = Some(MachineNodeReference { name: node.name_any() });
        events.normal("SuccessfulSetNodeRef", node.name_any());
    }
    status.node_info = node.status.as_ref().and_then(|s| s.node_info.clone());
    let node_conditions = node.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    let health = health(node_conditions);
    m.set_v1beta2(node_ready(node_conditions), &now);
    m.set_v1beta2(node_healthy(&health), &now);
    match health {
        Health::Healthy => m.mark_true(NODE_HEALTHY, now),
        Health::Unhealthy(msg) => m.mark_false(NODE_HEALTHY, "NodeConditionsFailed", Severity::Warning, &msg, now),
        Health::Unknown(msg) => m.mark_unknown(NODE_HEALTHY, "NodeConditionsFailed", &msg, now),
    }
    let interruptible = infra.is_some_and(Referenced::interruptible);
    let written_key = reader.written_key(&node.name_any());
    // A store copy older than this controller's last patch would recompute that patch; the
    // patch's own event brings the Machine back.
    let behind = written_key
        .as_deref()
        .is_some_and(|k| state.nodes_written.is_stale_key(k, node.metadata.resource_version.as_deref()));
    if !behind && let Some(patch) = node_patch(&node, m, interruptible) {
        let api = match &reader {
            NodeReader::Api(api) => (**api).clone(),
            NodeReader::Watched { .. } => workload_nodes(&state.ctx, cluster).await?,
        };
        let patched = state.writer.patch(&api, &node.name_any(), &patch).await?;
        if let Some(key) = written_key {
            let (base, produced) =
                (node.metadata.resource_version.as_deref(), patched.metadata.resource_version.as_deref());
            state.nodes_written.wrote_key(key, base, produced);
        }
    }
    Ok(None)
}

/// v1beta2 `NodeReady` and `NodeHealthy` while the Node cannot be looked at.
fn set_node_unknown(m: &mut Machine, reason: &str, message: &str, now: &Time) {
    for type_ in [NODE_READY, V1BETA2_NODE_HEALTHY] {
        m.set_v1beta2(Observed::unknown(type_, reason, message), now);
    }
}

/// v1beta2 `NodeReady`: the Node's own Ready condition.
fn node_ready(conditions: &[NodeCondition]) -> Observed {
    let ready = conditions.iter().find(|c| c.type_ == "Ready");
    let message = ready.and_then(|c| c.message.clone()).unwrap_or_default();
    match ready.map(|c| c.status.as_str()) {
        Some("True") => Observed::true_(NODE_READY, NODE_READY_REASON),
        Some("False") => Observed::false_(NODE_READY, NODE_NOT_READY_REASON, message),
        _ => Observed::unknown(NODE_READY, NODE_READY_UNKNOWN_REASON, message),
    }
}

/// v1beta2 `NodeHealthy`, from the same verdict as the v1beta1 condition.
fn node_healthy(health: &Health) -> Observed {
    match health {
        Health::Healthy => Observed::true_(V1BETA2_NODE_HEALTHY, NODE_HEALTHY_REASON),
        Health::Unhealthy(msg) => Observed::false_(V1BETA2_NODE_HEALTHY, NODE_NOT_HEALTHY_REASON, msg.as_str()),
        Health::Unknown(msg) => Observed::unknown(V1BETA2_NODE_HEALTHY, NODE_HEALTHY_UNKNOWN_REASON, msg.as_str()),
    }
}

/// NodeHealthy, from the Node's Ready and pressure conditions.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Health {
    Healthy,
    Unhealthy(String),
    Unknown(String),
}

/// A Node is unhealthy when Ready is not True or a pressure condition is not False.
/// Unlike upstream, a Node whose Ready is Unknown (or missing) is reported Unknown rather
/// than healthy: a kubelet that stopped reporting is not known to be healthy.
pub(crate) fn health(conditions: &[NodeCondition]) -> Health {
    let mut bad = Vec::new();
    let mut definite = false;
    let mut unknown = false;
    for (type_, good) in
        [("Ready", "True"), ("MemoryPressure", "False"), ("DiskPressure", "False"), ("PIDPressure", "False")]
    {
        let status = conditions.iter().find(|c| c.type_ == type_).map(|c| c.status.as_str());
        match status {
            Some(s) if s == good => {}
            None if type_ != "Ready" => {}
            None => {
                unknown = true;
                bad.push("Node condition Ready is not reported".to_string());
            }
            Some(s) => {
                if s == "Unknown" {
                    unknown = true;
                } else {
                    definite = true;
                }
                bad.push(format!("Node condition {type_} is {s}"));
            }
        }
    }
    let message = bad.join(". ");
    if definite {
        Health::Unhealthy(message)
    } else if unknown {
        Health::Unknown(message)
    } else {
        Health::Healthy
    }
}

/// Machine labels copied to its Node: `node-role.kubernetes.io/*`,
/// `[*.]node-restriction.kubernetes.io/*` and `[*.]node.cluster.x-k8s.io/*`.
pub(crate) fn is_node_label(key: &str) -> bool {
    let prefix = key.split_once('/').map_or(key, |(p, _)| p);
    let under = |domain: &str| prefix == domain || prefix.strip_suffix(domain).is_some_and(|p| p.ends_with('.'));
    prefix == "node-role.kubernetes.io" || under("node-restriction.kubernetes.io") || under("node.cluster.x-k8s.io")
}

/// The merge patch bringing the Node's labels, annotations and taints in line with its
/// Machine, or `None` when they already are. Labels the Machine stopped carrying are removed
/// only if an earlier sync put them there (tracked in `labels-from-machine`); other labels and
/// annotations on the Node are left alone.
pub(crate) fn node_patch(node: &Node, m: &Machine, interruptible: bool) -> Option<Value> {
    let mut want: BTreeMap<&str, &str> = m
        .metadata
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| is_node_label(k))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if interruptible {
        want.insert(INTERRUPTIBLE_LABEL, "");
    }
    let have_labels = node.metadata.labels.clone().unwrap_or_default();
    let have_annotations = node.metadata.annotations.clone().unwrap_or_default();
    let tracked: BTreeSet<&str> = have_annotations
        .get(NODE_LABELS_FROM_MACHINE_ANNOTATION)
        .map(|v| v.split(',').filter(|k| !k.is_empty()).collect())
        .unwrap_or_default();

    let mut labels = Map::new();
    for (k, v) in &want {
        if have_labels.get(*k).map(String::as_str) != Some(*v) {
            labels.insert((*k).to_string(), json!(v));
        }
    }
    for k in tracked.iter().filter(|k| !want.contains_key(*k) && have_labels.contains_key(**k)) {
        labels.insert((*k).to_string(), Value::Null);
    }

    let keys: Vec<&str> = want.keys().copied().collect();
    let owner = owner::get_controller(&m.metadata);
    let ns = m.namespace().unwrap_or_default();
    let mut annotations =
        node_patch::owner_annotations(&m.spec.cluster_name, &ns, owner.map(|o| (o.kind.as_str(), o.name.as_str())));
    annotations.push((NODE_MACHINE_ANNOTATION, m.name_any()));
    annotations.push((NODE_LABELS_FROM_MACHINE_ANNOTATION, keys.join(",")));
    node_patch::build(node, labels, annotations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::keys::NODE_UNINITIALIZED_TAINT;
    use k8s_openapi::api::core::v1::{NodeSpec, Taint};

    fn cond(type_: &str, status: &str) -> NodeCondition {
        NodeCondition { type_: type_.into(), status: status.into(), ..Default::default() }
    }

    #[test]
    fn health_from_conditions() {
        let ok = [cond("Ready", "True"), cond("MemoryPressure", "False"), cond("DiskPressure", "False")];
        assert_eq!(health(&ok), Health::Healthy);
        let pressure = [cond("Ready", "True"), cond("DiskPressure", "True")];
        assert!(matches!(health(&pressure), Health::Unhealthy(m) if m.contains("DiskPressure is True")));
        assert!(matches!(health(&[cond("Ready", "False")]), Health::Unhealthy(_)));
        assert!(matches!(health(&[cond("Ready", "Unknown")]), Health::Unknown(_)));
        assert!(matches!(health(&[]), Health::Unknown(_)));
        let mixed = [cond("Ready", "Unknown"), cond("PIDPressure", "True")];
        assert!(matches!(health(&mixed), Health::Unhealthy(_)));
    }

    #[test]
    fn node_label_filter() {
        assert!(is_node_label("node-role.kubernetes.io/worker"));
        assert!(is_node_label("node-restriction.kubernetes.io/zone"));
        assert!(is_node_label("example.node-restriction.kubernetes.io/x"));
        assert!(is_node_label("node.cluster.x-k8s.io/pool"));
        assert!(is_node_label("a.b.node.cluster.x-k8s.io/pool"));
        assert!(!is_node_label("xnode.cluster.x-k8s.io/pool"));
        assert!(!is_node_label("cluster.x-k8s.io/cluster-name"));
        assert!(!is_node_label("app"));
        assert!(!is_node_label("kubernetes.io/hostname"));
    }

    fn machine() -> Machine {
        let mut m = Machine::new("m1", Default::default());
        m.metadata.namespace = Some("ns".into());
        m.spec.cluster_name = "c1".into();
        m.metadata.labels = Some(
            [("node-role.kubernetes.io/worker", ""), ("app", "x"), ("node.cluster.x-k8s.io/pool", "a")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        m
    }

    #[test]
    fn node_patch_is_minimal_and_converges() {
        let m = machine();
        let mut node = Node::default();
        node.metadata.name = Some("m1".into());
        node.metadata.resource_version = Some("5".into());
        node.metadata.labels = Some([("kubernetes.io/hostname".to_string(), "m1".to_string())].into());
        node.spec = Some(NodeSpec {
            taints: Some(vec![
                Taint { key: NODE_UNINITIALIZED_TAINT.into(), effect: "NoSchedule".into(), ..Default::default() },
                Taint { key: "keep".into(), effect: "NoExecute".into(), ..Default::default() },
            ]),
            ..Default::default()
        });
        let p = node_patch(&node, &m, false).unwrap();
        assert_eq!(
            p["metadata"]["labels"],
            json!({"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "a"})
        );
        assert_eq!(p["metadata"]["annotations"][NODE_MACHINE_ANNOTATION], "m1");
        assert_eq!(
            p["metadata"]["annotations"][NODE_LABELS_FROM_MACHINE_ANNOTATION],
            "node-role.kubernetes.io/worker,node.cluster.x-k8s.io/pool"
        );
        assert_eq!(p["metadata"]["resourceVersion"], "5");
        assert_eq!(p["spec"]["taints"].as_array().unwrap().len(), 1);

        // Apply the patch by hand: nothing more to do afterwards.
        let mut synced = node.clone();
        let labels = synced.metadata.labels.get_or_insert_with(Default::default);
        for (k, v) in p["metadata"]["labels"].as_object().unwrap() {
            labels.insert(k.clone(), v.as_str().unwrap().to_string());
        }
        let annotations = synced.metadata.annotations.get_or_insert_with(Default::default);
        for (k, v) in p["metadata"]["annotations"].as_object().unwrap() {
            annotations.insert(k.clone(), v.as_str().unwrap().to_string());
        }
        synced.spec.as_mut().unwrap().taints.as_mut().unwrap().retain(|t| t.key == "keep");
        assert_eq!(node_patch(&synced, &m, false), None);

        // A label the Machine no longer has is removed, since an earlier sync added it.
        let mut fewer = m.clone();
        fewer.metadata.labels.as_mut().unwrap().remove("node.cluster.x-k8s.io/pool");
        let p = node_patch(&synced, &fewer, false).unwrap();
        assert_eq!(p["metadata"]["labels"], json!({"node.cluster.x-k8s.io/pool": null}));
        assert_eq!(p["metadata"]["annotations"][NODE_LABELS_FROM_MACHINE_ANNOTATION], "node-role.kubernetes.io/worker");
    }
}
