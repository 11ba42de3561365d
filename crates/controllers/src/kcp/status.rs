//! The KCP's status: replica counters, version, the sticky `initialized` and `ready`
//! flags, and the conditions the Cluster and users read (upstream §6.8). Computed from the
//! owned Machines and the workload cluster as observed; when the workload cluster could not
//! be read, what depends on it keeps its previous value instead of flapping.

use std::sync::Arc;

use drydock_api::capi::condition_types::{
    AVAILABLE, CERTIFICATES_AVAILABLE, CONTROL_PLANE_COMPONENTS_HEALTHY, CONTROL_PLANE_COMPONENTS_UNHEALTHY,
    ETCD_CLUSTER_HEALTHY, ETCD_CLUSTER_UNHEALTHY, MACHINE_GENERATION_FAILED, MACHINES_CREATED, MACHINES_READY,
    MACHINES_SPEC_UP_TO_DATE, RESIZED, ROLLING_UPDATE_IN_PROGRESS, SCALING_DOWN, SCALING_UP, WAITING_FOR_KUBEADM_INIT,
};
use drydock_api::capi::conditions::{Condition, HasConditions, READY, STATUS_FALSE, STATUS_TRUE, Severity};
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL};
use drydock_api::capi::kubeadm::v1beta2::{
    KubeadmControlPlane, KubeadmControlPlaneStatus, KubeadmControlPlaneV1Beta1DeprecatedStatus,
};
use drydock_api::capi::version;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::health::Observed;
use super::remediation::last_remediation;
use super::rollout::Outdated;

/// Conditions summarised into Ready, in priority order.
const READY_SUMMARY: &[&str] =
    &[MACHINES_CREATED, MACHINES_SPEC_UP_TO_DATE, RESIZED, MACHINES_READY, AVAILABLE, CERTIFICATES_AVAILABLE];

/// `cluster-name=<c>,control-plane`: the selector of the scale subresource.
pub fn selector(cluster: &str) -> String {
    format!("{CLUSTER_NAME_LABEL}={cluster},{CONTROL_PLANE_LABEL}")
}

/// The lowest Kubernetes version among the Machines.
pub fn lowest_version(machines: &[Arc<Machine>]) -> Option<String> {
    machines
        .iter()
        .filter_map(|m| {
            let v = m.spec.version.as_deref()?;
            Some((version::parse(v).ok(), v))
        })
        .min_by(|a, b| match (&a.0, &b.0) {
            (Some(x), Some(y)) => x.cmp(y),
            // Unparsable versions sort last.
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.1.cmp(b.1),
        })
        .map(|(_, v)| v.to_string())
}

fn rank(c: &Condition) -> u8 {
    match c.status.as_str() {
        STATUS_FALSE => match c.severity() {
            Some(Severity::Error) => 0,
            Some(Severity::Warning) => 1,
            _ => 2,
        },
        STATUS_TRUE => 3,
        _ => 4,
    }
}

/// The Machines' Ready conditions merged (upstream's aggregate): the worst wins, its reason
/// localised to the Machine, and the message counts the ready ones. `None` without Machines.
pub fn aggregate_ready(machines: &[Arc<Machine>], type_: &str, now: Time) -> Option<Condition> {
    let conditions: Vec<(String, Condition)> = machines
        .iter()
        .map(|m| {
            let c = m
                .get_condition(READY)
                .cloned()
                .unwrap_or_else(|| Condition::false_(READY, "WaitingForMachine", Severity::Info, "", now.clone()));
            (m.name_any(), c)
        })
        .collect();
    let (name, worst) = conditions.iter().min_by_key(|(_, c)| rank(c))?;
    let ready = conditions.iter().filter(|(_, c)| c.is_true()).count();
    if worst.is_true() {
        return Some(Condition::true_(type_, now));
    }
    let reason = format!("{} @ Machine/{name}", worst.reason.as_deref().unwrap_or("NotReady"));
    let message = format!("{ready} of {} completed", conditions.len());
    Some(match worst.severity() {
        Some(sev) if worst.is_false() => Condition::false_(type_, &reason, sev, &message, now),
        _ if worst.is_false() => Condition::false_(type_, &reason, Severity::Info, &message, now),
        _ => Condition::unknown(type_, &reason, &message, now),
    })
}

/// What one reconcile learned, for the status.
pub struct Inputs<'a> {
    pub cluster: &'a str,
    pub machines: &'a [Arc<Machine>],
    /// `None` when the workload cluster could not be read (or has no Machines yet).
    pub observed: Option<&'a Observed>,
    /// Message of a failed Machine creation in this reconcile.
    pub creation_failed: Option<String>,
    /// The Machines to roll out.
    pub outdated: &'a Outdated,
    /// Why a needed scale or rollout step waits, if it does.
    pub blocked: Option<&'a str>,
    pub now: Time,
}

/// `message`, plus why the next step waits.
fn with_blocked(message: String, blocked: Option<&str>) -> String {
    match blocked {
        Some(b) => format!("{message}; waiting: {b}"),
        None => message,
    }
}

/// `status.initialization.controlPlaneInitialized`: kubeadm init has completed (never reset).
pub fn is_initialized(kcp: &KubeadmControlPlane) -> bool {
    kcp.status.as_ref().is_some_and(is_initialized_status)
}

fn is_initialized_status(s: &KubeadmControlPlaneStatus) -> bool {
    s.initialization.as_ref().and_then(|i| i.control_plane_initialized) == Some(true)
}

/// The v1beta1 status fields kept for v1beta1 readers (`status.deprecated.v1beta1`).
pub fn deprecated(s: &mut KubeadmControlPlaneStatus) -> &mut KubeadmControlPlaneV1Beta1DeprecatedStatus {
    s.deprecated.get_or_insert_with(Default::default).v1beta1.get_or_insert_with(Default::default)
}

/// Writes the status of `kcp` (a copy that will be diffed against the stored object).
pub fn update(kcp: &mut KubeadmControlPlane, i: &Inputs<'_>) {
    let desired = kcp.spec.replicas.unwrap_or(1);
    let now = i.now.clone();
    let replicas = i32::try_from(i.machines.len()).unwrap_or(i32::MAX);
    let outdated = i.outdated.len();
    // Up to date: neither outdated nor on their way out.
    let updated =
        i.machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none() && !i.outdated.is_outdated(m)).count();
    let updated = i32::try_from(updated).unwrap_or(i32::MAX);
    let last = last_remediation(kcp, i.machines);
    let machines_ready = aggregate_ready(i.machines, MACHINES_READY, now.clone());
    let all_ready = i.machines.iter().all(|m| m.is_condition_true(READY));
    let generation = kcp.metadata.generation;

    let s = kcp.status.get_or_insert_with(Default::default);
    s.selector = Some(selector(i.cluster));
    s.replicas = Some(replicas);
    s.version = lowest_version(i.machines);
    s.observed_generation = generation;
    s.last_remediation = last;
    let newly_initialized = i.observed.is_some_and(|o| o.kubeadm_config);
    let initialized = newly_initialized || is_initialized_status(s);
    if newly_initialized {
        s.initialization.get_or_insert_with(Default::default).control_plane_initialized = Some(true);
    }
    // The v1beta1 counters, with their old meaning (ready = the Node is ready).
    let d = deprecated(s);
    d.updated_replicas = Some(updated);
    let ready = match i.observed {
        Some(o) => i32::try_from(o.ready_nodes()).unwrap_or(i32::MAX),
        // Not read: keep the last count (no Machines, no Nodes).
        None if i.machines.is_empty() => 0,
        None => d.ready_replicas.unwrap_or(0),
    };
    d.ready_replicas = Some(ready);
    d.unavailable_replicas = Some((replicas - ready).max(0));

    // Reconciled this far, the cluster certificates exist.
    kcp.mark_true(CERTIFICATES_AVAILABLE, now.clone());
    if initialized {
        kcp.mark_true(AVAILABLE, now.clone());
    } else {
        kcp.mark_false(AVAILABLE, WAITING_FOR_KUBEADM_INIT, Severity::Info, "Waiting for kubeadm init", now.clone());
    }
    match &i.creation_failed {
        Some(msg) => kcp.mark_false(MACHINES_CREATED, MACHINE_GENERATION_FAILED, Severity::Error, msg, now.clone()),
        None if replicas > 0 => kcp.mark_true(MACHINES_CREATED, now.clone()),
        None => {}
    }
    // Why the next step waits goes with the change it holds: the rollout, else the resize.
    let (rolling_blocked, resize_blocked) = if outdated > 0 { (i.blocked, None) } else { (None, i.blocked) };
    if outdated > 0 {
        let msg = format!("Rolling {outdated} replicas with outdated spec ({updated} replicas up to date)");
        let msg = with_blocked(msg, rolling_blocked);
        kcp.mark_false(MACHINES_SPEC_UP_TO_DATE, ROLLING_UPDATE_IN_PROGRESS, Severity::Warning, &msg, now.clone());
    } else if kcp.get_condition(MACHINES_SPEC_UP_TO_DATE).is_some() || replicas > 0 {
        kcp.mark_true(MACHINES_SPEC_UP_TO_DATE, now.clone());
    }
    if replicas < desired {
        let msg =
            with_blocked(format!("Scaling up control plane to {desired} replicas (actual {replicas})"), resize_blocked);
        kcp.mark_false(RESIZED, SCALING_UP, Severity::Warning, &msg, now.clone());
    } else if replicas > desired {
        let msg = with_blocked(
            format!("Scaling down control plane to {desired} replicas (actual {replicas})"),
            resize_blocked,
        );
        kcp.mark_false(RESIZED, SCALING_DOWN, Severity::Warning, &msg, now.clone());
    } else if all_ready {
        kcp.mark_true(RESIZED, now.clone());
    }
    match machines_ready {
        Some(c) => kcp.set_condition(c),
        None => kcp.delete_condition(MACHINES_READY),
    }
    if initialized && let Some(o) = i.observed {
        health_conditions(kcp, i.machines, o, now.clone());
    }
    kcp.set_ready_summary(READY_SUMMARY, now);
}

/// ControlPlaneComponentsHealthy and EtcdClusterHealthy from the workload cluster.
fn health_conditions(kcp: &mut KubeadmControlPlane, machines: &[Arc<Machine>], o: &Observed, now: Time) {
    let mut components = Vec::new();
    let mut etcd = Vec::new();
    let mut nodes = Vec::new();
    let mut unmapped = false;
    for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let h = o.health(m);
        let Some(node) = h.node.clone() else {
            // Still provisioning: nothing to judge yet.
            unmapped = true;
            continue;
        };
        if !h.components_healthy() {
            components.push(node.clone());
        }
        if !h.etcd_member_healthy {
            etcd.push(node.clone());
        }
        nodes.push(node);
    }
    // A member without a Machine is as bad as a Machine without a member; it can only be
    // told once every Machine's Node is known (a provisioning Machine's member may already
    // exist), and a deleting Machine's member is on its way out.
    let deleting: Vec<String> =
        machines.iter().filter(|m| m.metadata.deletion_timestamp.is_some()).filter_map(|m| o.health(m).node).collect();
    let strays: Vec<&str> = if unmapped {
        Vec::new()
    } else {
        o.membership
            .members
            .iter()
            .filter(|m| !nodes.contains(&m.node) && !deleting.contains(&m.node))
            .map(|m| m.node.as_str())
            .collect()
    };
    if components.is_empty() {
        kcp.mark_true(CONTROL_PLANE_COMPONENTS_HEALTHY, now.clone());
    } else {
        let msg = format!("Following Machines are reporting control plane errors: {}", components.join(", "));
        kcp.mark_false(
            CONTROL_PLANE_COMPONENTS_HEALTHY,
            CONTROL_PLANE_COMPONENTS_UNHEALTHY,
            Severity::Warning,
            &msg,
            now.clone(),
        );
    }
    if etcd.is_empty() && strays.is_empty() {
        kcp.mark_true(ETCD_CLUSTER_HEALTHY, now);
    } else {
        let mut msg = String::new();
        if !etcd.is_empty() {
            msg = format!("Following Machines are reporting etcd member errors: {}", etcd.join(", "));
        }
        if !strays.is_empty() {
            if !msg.is_empty() {
                msg.push_str("; ");
            }
            msg.push_str(&format!("etcd members without a Machine: {}", strays.join(", ")));
        }
        kcp.mark_false(ETCD_CLUSTER_HEALTHY, ETCD_CLUSTER_UNHEALTHY, Severity::Warning, &msg, now);
    }
}

/// Status while the control plane waits for its Cluster (no Machines can exist yet);
/// `certificates` once the cluster certificates exist (from the infrastructure on).
pub fn waiting(kcp: &mut KubeadmControlPlane, cluster: &str, message: &str, certificates: bool, now: Time) {
    let generation = kcp.metadata.generation;
    let s = kcp.status.get_or_insert_with(Default::default);
    s.selector = Some(selector(cluster));
    s.replicas.get_or_insert(0);
    s.observed_generation = generation;
    kcp.mark_false(AVAILABLE, WAITING_FOR_KUBEADM_INIT, Severity::Info, message, now.clone());
    if certificates {
        kcp.mark_true(CERTIFICATES_AVAILABLE, now.clone());
    }
    let v2 = super::v1beta2::Inputs { machines: &[], observed: None, blocked: Some(message), certificates, now: &now };
    super::v1beta2::update(kcp, &v2);
    kcp.set_ready_summary(READY_SUMMARY, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions;

    fn machine(name: &str, version: &str, ready: Option<bool>) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.spec.version = Some(version.into());
        match ready {
            Some(true) => m.mark_true(READY, conditions::time_at(jiff::Timestamp::now())),
            Some(false) => m.mark_false(
                READY,
                "WaitingForInfrastructure",
                Severity::Info,
                "",
                conditions::time_at(jiff::Timestamp::now()),
            ),
            None => {}
        }
        Arc::new(m)
    }

    #[test]
    fn versions_and_selector() {
        let ms = [machine("a", "v1.30.10", None), machine("b", "v1.30.9", None), machine("c", "bogus", None)];
        assert_eq!(lowest_version(&ms).as_deref(), Some("v1.30.9"), "semver order, not text order");
        assert_eq!(lowest_version(&[]), None);
        assert_eq!(selector("c1"), "cluster.x-k8s.io/cluster-name=c1,cluster.x-k8s.io/control-plane");
    }

    #[test]
    fn machines_ready_aggregate() {
        let now = conditions::time_at(jiff::Timestamp::now());
        assert!(aggregate_ready(&[], MACHINES_READY, now.clone()).is_none());
        let all = [machine("a", "v1", Some(true)), machine("b", "v1", Some(true))];
        assert!(aggregate_ready(&all, MACHINES_READY, now.clone()).unwrap().is_true());
        let some = [machine("a", "v1", Some(true)), machine("b", "v1", Some(false)), machine("c", "v1", None)];
        let c = aggregate_ready(&some, MACHINES_READY, now).unwrap();
        assert!(c.is_false());
        assert_eq!(c.reason.as_deref(), Some("WaitingForInfrastructure @ Machine/b"));
        assert_eq!(c.message.as_deref(), Some("1 of 3 completed"));
    }

    #[test]
    fn counters_conditions_and_sticky_flags() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.replicas = Some(3);
        kcp.spec.version = "v1.30.2".into();
        let machines = [machine("a", "v1.30.2", Some(true))];
        let mut observed = Observed::default();
        let none = Outdated::default();
        let inputs = |o: Option<&'static Observed>| Inputs {
            cluster: "c1",
            machines: &machines,
            observed: o,
            creation_failed: None,
            outdated: &none,
            blocked: Some("Machine a is not ready"),
            now: conditions::time_at(jiff::Timestamp::now()),
        };
        update(&mut kcp, &inputs(None));
        let mut s = kcp.status.clone().unwrap();
        assert_eq!(s.replicas, Some(1));
        let d = deprecated(&mut s);
        assert_eq!((d.updated_replicas, d.ready_replicas), (Some(1), Some(0)));
        assert!(!is_initialized(&kcp));
        let resized = kcp.get_condition(RESIZED).unwrap();
        assert_eq!(resized.reason.as_deref(), Some(SCALING_UP));
        assert!(resized.message.as_deref().unwrap().ends_with("; waiting: Machine a is not ready"));
        assert!(kcp.is_condition_false(AVAILABLE));
        assert!(kcp.is_condition_false(READY));

        observed.kubeadm_config = true;
        let observed: &'static Observed = Box::leak(Box::new(observed));
        update(&mut kcp, &inputs(Some(observed)));
        assert!(is_initialized(&kcp));
        assert!(kcp.is_condition_true(AVAILABLE));
        // Not read this time: initialized stays.
        update(&mut kcp, &inputs(None));
        assert!(is_initialized(&kcp));
    }
}

#[cfg(test)]
mod rollout_tests {
    use super::*;
    use drydock_api::capi::conditions;

    #[test]
    fn a_rollout_counts_updated_replicas_and_says_why_it_waits() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.replicas = Some(3);
        kcp.spec.version = "v1.31.0".into();
        let m = |name: &str, v: &str| {
            let mut m = Machine::new(name, Default::default());
            m.spec.version = Some(v.into());
            m.mark_true(READY, conditions::time_at(jiff::Timestamp::now()));
            Arc::new(m)
        };
        let mut going = (*m("d", "v1.30.2")).clone();
        going.metadata.deletion_timestamp = Some(conditions::time_at(jiff::Timestamp::now()));
        let machines = [m("a", "v1.30.2"), m("b", "v1.30.2"), m("c", "v1.31.0"), Arc::new(going)];
        let outdated = Outdated::of(&["a", "b"]);
        update(
            &mut kcp,
            &Inputs {
                cluster: "c1",
                machines: &machines,
                observed: None,
                creation_failed: None,
                outdated: &outdated,
                blocked: Some("Machine c is not ready"),
                now: conditions::time_at(jiff::Timestamp::now()),
            },
        );
        let mut s = kcp.status.clone().unwrap();
        assert_eq!((s.replicas, deprecated(&mut s).updated_replicas), (Some(4), Some(1)));
        let c = kcp.get_condition(MACHINES_SPEC_UP_TO_DATE).unwrap();
        assert_eq!(c.reason.as_deref(), Some(ROLLING_UPDATE_IN_PROGRESS));
        assert_eq!(
            c.message.as_deref(),
            Some("Rolling 2 replicas with outdated spec (1 replicas up to date); waiting: Machine c is not ready")
        );
        let resized = kcp.get_condition(RESIZED).unwrap();
        assert_eq!(resized.message.as_deref(), Some("Scaling down control plane to 3 replicas (actual 4)"));
    }
}
