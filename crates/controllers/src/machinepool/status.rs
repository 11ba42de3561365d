//! A MachinePool's status, from what its bootstrap config, its infrastructure pool and its
//! instances' Nodes show: the replica counters, `status.nodeRefs` and `status.versions`,
//! the phase, and the v1beta2 conditions (BootstrapConfigReady, InfrastructureReady,
//! Available, ScalingUp, ScalingDown, Deleting), with the v1beta1 counters kept under
//! `status.deprecated.v1beta1`.

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::common::StatusVersion;
use drydock_api::capi::core::v1beta2::MachinePool;
use drydock_api::capi::v1beta2_conditions::names::{
    AVAILABLE, AVAILABLE_REASON, BOOTSTRAP_CONFIG_READY, DELETING, DELETING_REASON, INFRASTRUCTURE_READY,
    NOT_AVAILABLE_REASON, NOT_DELETING_REASON, NOT_READY_REASON, NOT_SCALING_DOWN_REASON, NOT_SCALING_UP_REASON,
    READY_REASON, SCALING_DOWN, SCALING_DOWN_REASON, SCALING_UP, SCALING_UP_REASON,
};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::api::core::v1::{Node, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::Infrastructure;

/// What one reconcile saw of the pool's parts.
pub(super) struct Seen<'a> {
    /// The template names a data secret that exists.
    pub bootstrap: bool,
    /// The infrastructure pool, once it exists.
    pub infra: Option<&'a Infrastructure>,
    /// The Nodes of the listed provider IDs that exist.
    pub nodes: &'a [Arc<Node>],
}

fn node_ready(n: &Node) -> bool {
    let conditions = n.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.into_iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True")
}

fn kubelet_version(n: &Node) -> Option<&str> {
    n.status.as_ref()?.node_info.as_ref().map(|i| i.kubelet_version.as_str())
}

fn to_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The lifecycle phase, as upstream names them.
fn phase(desired: i32, replicas: i32, ready: i32, seen: &Seen<'_>) -> &'static str {
    match seen.infra {
        _ if !seen.bootstrap => "Pending",
        Some(i) if i.provisioned => match replicas.cmp(&desired) {
            std::cmp::Ordering::Less => "ScalingUp",
            std::cmp::Ordering::Greater => "ScalingDown",
            std::cmp::Ordering::Equal if ready == desired => "Running",
            std::cmp::Ordering::Equal => "Provisioned",
        },
        _ => "Provisioning",
    }
}

/// Sets the status from what was seen. Returns whether it is settled: every listed
/// instance has a ready Node (otherwise the caller looks again, as Node changes may not
/// wake it).
pub(super) fn set(mp: &mut MachinePool, seen: &Seen<'_>, now: &Time) -> bool {
    let desired = mp.spec.replicas.unwrap_or(1);
    let listed = mp.spec.provider_id_list.as_ref().map_or(0, Vec::len);
    let wanted_version = mp.spec.template.spec.version.clone();
    let ready = to_i32(seen.nodes.iter().filter(|n| node_ready(n)).count());
    let up_to_date = to_i32(
        seen.nodes.iter().filter(|n| wanted_version.as_deref().is_none_or(|v| kubelet_version(n) == Some(v))).count(),
    );
    let replicas = seen.infra.map_or(0, |i| i.replicas);
    let mut versions: BTreeMap<String, i32> = BTreeMap::new();
    for v in seen.nodes.iter().filter_map(|n| kubelet_version(n)) {
        *versions.entry(v.to_string()).or_default() += 1;
    }
    let generation = mp.metadata.generation;
    let phase = phase(desired, replicas, ready, seen);
    let status = mp.status.get_or_insert_with(Default::default);
    status.node_refs = (!seen.nodes.is_empty()).then(|| seen.nodes.iter().map(|n| node_ref(n)).collect());
    status.replicas = Some(replicas);
    status.ready_replicas = Some(ready);
    status.available_replicas = Some(ready);
    status.up_to_date_replicas = Some(up_to_date);
    status.versions = (!versions.is_empty())
        .then(|| versions.into_iter().map(|(version, n)| StatusVersion { version, replicas: Some(n) }).collect());
    status.phase = Some(phase.to_string());
    status.observed_generation = generation;
    let v1 = mp.deprecated_v1beta1_mut();
    v1.ready_replicas = Some(ready);
    v1.available_replicas = Some(ready);
    v1.unavailable_replicas = Some((desired - ready).max(0));
    set_conditions(mp, seen, desired, replicas, ready, now);
    to_i32(listed) == ready
}

fn set_conditions(mp: &mut MachinePool, seen: &Seen<'_>, desired: i32, replicas: i32, ready: i32, now: &Time) {
    let bootstrap = if seen.bootstrap {
        Observed::true_(BOOTSTRAP_CONFIG_READY, READY_REASON)
    } else {
        Observed::false_(BOOTSTRAP_CONFIG_READY, NOT_READY_REASON, "Waiting for the bootstrap data secret")
    };
    let infra = match seen.infra {
        Some(i) if i.provisioned => Observed::true_(INFRASTRUCTURE_READY, READY_REASON),
        Some(_) => {
            Observed::false_(INFRASTRUCTURE_READY, NOT_READY_REASON, "The infrastructure pool is not provisioned")
        }
        None => Observed::false_(INFRASTRUCTURE_READY, NOT_READY_REASON, "The infrastructure pool does not exist"),
    };
    let available = Observed::when(
        AVAILABLE,
        ready >= desired,
        AVAILABLE_REASON,
        NOT_AVAILABLE_REASON,
        if ready >= desired { String::new() } else { format!("{ready} of {desired} replicas are ready") },
    );
    let up = Observed::when(
        SCALING_UP,
        replicas < desired,
        SCALING_UP_REASON,
        NOT_SCALING_UP_REASON,
        if replicas < desired { format!("Scaling up from {replicas} to {desired} replicas") } else { String::new() },
    );
    let down = Observed::when(
        SCALING_DOWN,
        replicas > desired,
        SCALING_DOWN_REASON,
        NOT_SCALING_DOWN_REASON,
        if replicas > desired { format!("Scaling down from {replicas} to {desired} replicas") } else { String::new() },
    );
    let deleting = Observed::false_(DELETING, NOT_DELETING_REASON, "");
    for c in [bootstrap, infra, available, up, down, deleting] {
        mp.set_v1beta2(c, now);
    }
}

/// The Deleting condition and phase of a pool being deleted, naming what it waits for.
pub(super) fn set_deleting(mp: &mut MachinePool, remaining: &[String], now: &Time) {
    let message = if remaining.is_empty() { String::new() } else { format!("Waiting for {}", remaining.join(", ")) };
    mp.set_v1beta2(Observed::true_(DELETING, DELETING_REASON).with_message(message), now);
    mp.status.get_or_insert_with(Default::default).phase = Some("Deleting".into());
}

fn node_ref(n: &Node) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Node".into()),
        name: n.metadata.name.clone(),
        uid: n.metadata.uid.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions::time_at;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeStatus, NodeSystemInfo};

    fn node(name: &str, ready: bool, version: &str) -> Arc<Node> {
        let mut n = Node::default();
        n.metadata.name = Some(name.into());
        let condition = NodeCondition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            ..Default::default()
        };
        let info = NodeSystemInfo { kubelet_version: version.into(), ..Default::default() };
        n.status = Some(NodeStatus { conditions: Some(vec![condition]), node_info: Some(info), ..Default::default() });
        Arc::new(n)
    }

    fn pool(replicas: i32, version: &str, listed: usize) -> MachinePool {
        let mut mp = MachinePool::new("p", Default::default());
        mp.spec.replicas = Some(replicas);
        mp.spec.template.spec.version = Some(version.into());
        mp.spec.provider_id_list = Some((0..listed).map(|i| format!("in-memory://{i}")).collect());
        mp
    }

    fn condition<'a>(mp: &'a MachinePool, type_: &str) -> (&'a str, &'a str) {
        let c = mp.v1beta2_conditions().iter().find(|c| c.type_ == type_).expect(type_);
        (c.status.as_str(), c.reason.as_str())
    }

    #[test]
    fn counts_ready_and_up_to_date_nodes_and_names_the_phase() {
        let now = time_at(jiff::Timestamp::from_second(1_000).expect("time"));
        let infra = Infrastructure { provisioned: true, replicas: 3 };
        let nodes = [node("a", true, "v1.33.0"), node("b", true, "v1.32.0"), node("c", false, "v1.33.0")];
        let mut mp = pool(3, "v1.33.0", 3);
        let settled = set(&mut mp, &Seen { bootstrap: true, infra: Some(&infra), nodes: &nodes }, &now);
        assert!(!settled, "one listed instance is not ready yet");
        let s = mp.status.as_ref().expect("status");
        assert_eq!((s.replicas, s.ready_replicas, s.up_to_date_replicas), (Some(3), Some(2), Some(2)));
        assert_eq!(s.phase.as_deref(), Some("Provisioned"));
        assert_eq!(s.versions.as_ref().map(Vec::len), Some(2));
        assert_eq!(condition(&mp, AVAILABLE), ("False", NOT_AVAILABLE_REASON));

        let nodes = [node("a", true, "v1.33.0")];
        let mut mp = pool(3, "v1.33.0", 1);
        let infra = Infrastructure { provisioned: true, replicas: 1 };
        assert!(set(&mut mp, &Seen { bootstrap: true, infra: Some(&infra), nodes: &nodes }, &now));
        assert_eq!(mp.status.as_ref().and_then(|s| s.phase.as_deref()), Some("ScalingUp"));
        assert_eq!(condition(&mp, SCALING_UP), ("True", SCALING_UP_REASON));

        let mut mp = pool(1, "v1.33.0", 0);
        set(&mut mp, &Seen { bootstrap: false, infra: None, nodes: &[] }, &now);
        assert_eq!(mp.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Pending"));
        assert_eq!(condition(&mp, BOOTSTRAP_CONFIG_READY), ("False", NOT_READY_REASON));
    }
}
