//! The v1beta2 conditions and replica counters of a KubeadmControlPlane, and the ones it
//! owns on its Machines (`UpToDate` and the health of each control plane component).
//!
//! Everything here is a pure function of what one reconcile read: the Machines (with the
//! conditions this reconcile gives them), the workload cluster as observed, the control
//! plane's own v1beta1 health conditions (computed just before, mirrored here) and why a
//! step waits. Messages are built in a fixed order, so an unchanged state recomputes the
//! same bytes and costs no write.

use std::collections::BTreeSet;
use std::sync::Arc;

use drydock_api::capi::condition_types::{
    CONTROL_PLANE_COMPONENTS_HEALTHY as V1_COMPONENTS_HEALTHY, ETCD_CLUSTER_HEALTHY as V1_ETCD_HEALTHY,
    OWNER_REMEDIATED as V1_OWNER_REMEDIATED,
};
use drydock_api::capi::conditions::{HasConditions, STATUS_FALSE, STATUS_TRUE};
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::v1beta2_conditions::names::*;
use drydock_api::capi::v1beta2_conditions::{
    self as v2, Condition, HasV1Beta2Conditions, Observed as Cond, Polarity, Reasons,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::health::{Observed, PodState};
use super::remediation::is_unhealthy;
use super::rollout::Outdated;

/// The static pods of a kubeadm control plane node, with the Machine condition of each.
const PODS: [(&str, &str); 4] = [
    (API_SERVER_POD_HEALTHY, "kube-apiserver"),
    (CONTROLLER_MANAGER_POD_HEALTHY, "kube-controller-manager"),
    (SCHEDULER_POD_HEALTHY, "kube-scheduler"),
    (ETCD_POD_HEALTHY, "etcd"),
];

fn is_deleting(m: &Machine) -> bool {
    m.metadata.deletion_timestamp.is_some()
}

/// `it runs v1` → `It runs v1`: the rollout reasons read as sentences in a list.
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// The conditions the control plane owns on Machine `m`. Without a view of the workload
/// cluster the health conditions are left as they are (no flapping on a failed read).
pub fn machine_conditions(
    m: &Machine,
    observed: Option<&Observed>,
    outdated: &Outdated,
    external_etcd: bool,
) -> Vec<Cond> {
    let mut out = Vec::new();
    // A deleting Machine is no longer judged (the rollout skips it); it keeps its verdict.
    if !is_deleting(m) {
        out.push(match outdated.reason(&m.name_any()) {
            Some(why) => Cond::false_(UP_TO_DATE, NOT_UP_TO_DATE_REASON, format!("* {}", sentence(why))),
            None => Cond::true_(UP_TO_DATE, UP_TO_DATE_REASON),
        });
    }
    if let Some(o) = observed {
        out.extend(health_conditions(m, o, external_etcd));
    }
    out
}

/// The pods' and etcd member's conditions of one Machine.
fn health_conditions(m: &Machine, o: &Observed, external_etcd: bool) -> Vec<Cond> {
    let pods = if external_etcd { &PODS[..3] } else { &PODS[..] };
    let member = (!external_etcd).then_some(ETCD_MEMBER_HEALTHY);
    let types = pods.iter().map(|(t, _)| *t).chain(member);
    if is_deleting(m) {
        return types.map(|t| Cond::false_(t, DELETING_REASON, "Machine is deleting")).collect();
    }
    let Some(node) = o.node_of(m).map(|n| n.name_any()) else {
        let why = "Waiting for the Machine's Node to exist";
        return types.map(|t| Cond::unknown(t, INSPECTION_FAILED_REASON, why)).collect();
    };
    let mut out: Vec<Cond> = pods.iter().map(|(t, component)| pod_condition(t, o, component, &node)).collect();
    if member.is_some() {
        out.push(match o.membership.member(&node) {
            Some(mb) if mb.healthy => Cond::true_(ETCD_MEMBER_HEALTHY, HEALTHY_REASON),
            Some(_) => Cond::false_(ETCD_MEMBER_HEALTHY, NOT_HEALTHY_REASON, "Etcd member is not healthy"),
            None => {
                Cond::false_(ETCD_MEMBER_HEALTHY, NOT_HEALTHY_REASON, format!("Etcd has no member for Node {node}"))
            }
        });
    }
    out
}

fn pod_condition(type_: &str, o: &Observed, component: &str, node: &str) -> Cond {
    let pod = format!("{component}-{node}");
    match o.pod_state(component, node) {
        PodState::Running => Cond::true_(type_, POD_RUNNING_REASON),
        PodState::Missing => Cond::false_(type_, POD_DOES_NOT_EXIST_REASON, format!("Pod {pod} does not exist")),
        PodState::Provisioning => Cond::false_(type_, POD_PROVISIONING_REASON, format!("Pod {pod} is provisioning")),
        PodState::NotReady => Cond::false_(type_, POD_FAILED_REASON, format!("Pod {pod} is not ready")),
        PodState::Failed => Cond::false_(type_, POD_FAILED_REASON, format!("Pod {pod} has terminated")),
        PodState::Unknown => Cond::unknown(type_, INSPECTION_FAILED_REASON, format!("Pod {pod} reports no phase")),
    }
}

/// `conditions` with `wanted` set as of `generation`; `None` when nothing would change.
pub fn updated_conditions(
    conditions: &[Condition],
    wanted: Vec<Cond>,
    generation: Option<i64>,
    now: &Time,
) -> Option<Vec<Condition>> {
    let mut out = conditions.to_vec();
    for c in wanted {
        v2::set(&mut out, c, generation, now);
    }
    (out != conditions).then_some(out)
}

/// What the control plane's v1beta2 status is computed from.
pub struct Inputs<'a> {
    /// The owned Machines, carrying the conditions this reconcile gave them.
    pub machines: &'a [Arc<Machine>],
    /// `None` when the workload cluster could not be read.
    pub observed: Option<&'a Observed>,
    /// Why a needed scale step waits, if it does.
    pub blocked: Option<&'a str>,
    /// The cluster certificates are in place (not yet while waiting for the Cluster).
    pub certificates: bool,
    pub now: &'a Time,
}

/// Sets the v1beta2 conditions and counters of `kcp` (its v1beta1 status already updated).
pub fn update(kcp: &mut KubeadmControlPlane, i: &Inputs<'_>) {
    let now = i.now;
    let initialized = super::status::is_initialized(kcp);
    let conditions = [
        Cond::when(INITIALIZED, initialized, INITIALIZED_REASON, NOT_INITIALIZED_REASON, ""),
        certificates(i.certificates),
        mirror_health(kcp, V1_ETCD_HEALTHY, ETCD_CLUSTER_HEALTHY, initialized),
        mirror_health(kcp, V1_COMPONENTS_HEALTHY, CONTROL_PLANE_COMPONENTS_HEALTHY, initialized),
        machines_aggregate(MACHINES_READY, READY, i.machines, Reasons::READY),
        machines_aggregate(MACHINES_UP_TO_DATE, UP_TO_DATE, i.machines, Reasons::UP_TO_DATE),
        rolling_out(i.machines),
        scaling_up(kcp, i.machines.len(), i.blocked),
        scaling_down(kcp, i.machines.len(), i.blocked),
        remediating(i.machines),
        deleting(kcp, None),
        available(kcp, initialized, i),
    ];
    for c in conditions {
        kcp.set_v1beta2(c, now);
    }
    set_counters(kcp, i.machines);
}

fn certificates(available: bool) -> Cond {
    // The cluster certificates are looked up or generated once the infrastructure is ready
    // (a failure sets this condition on its own, see `certificates::mark_failed`).
    let message = if available { "" } else { "Waiting for the Cluster's infrastructure" };
    Cond::when(CERTIFICATES_AVAILABLE, available, AVAILABLE_REASON, NOT_AVAILABLE_REASON, message)
}

/// A v1beta1 health condition of the control plane as its v1beta2 counterpart.
fn mirror_health(kcp: &KubeadmControlPlane, v1: &str, type_: &str, initialized: bool) -> Cond {
    match kcp.get_condition(v1) {
        Some(c) if c.status == STATUS_TRUE => Cond::true_(type_, HEALTHY_REASON),
        Some(c) if c.status == STATUS_FALSE => {
            Cond::false_(type_, NOT_HEALTHY_REASON, c.message.clone().unwrap_or_default())
        }
        _ if !initialized => {
            Cond::unknown(type_, HEALTH_UNKNOWN_REASON, "Waiting for the control plane to be initialized")
        }
        _ => Cond::unknown(type_, HEALTH_UNKNOWN_REASON, "The workload cluster has not been inspected yet"),
    }
}

fn machines_aggregate(type_: &str, source: &str, machines: &[Arc<Machine>], reasons: Reasons) -> Cond {
    let names: Vec<String> = machines.iter().map(|m| m.name_any()).collect();
    let objects = names.iter().map(String::as_str).zip(machines.iter().map(|m| m.v1beta2_conditions()));
    v2::aggregate(type_, source, Polarity::Positive, ("Machine", "Machines"), objects, reasons, NO_REPLICAS_REASON)
}

/// True while a Machine is not up to date, with every distinct reason why.
fn rolling_out(machines: &[Arc<Machine>]) -> Cond {
    let mut count = 0;
    let mut reasons = BTreeSet::new();
    for m in machines {
        let Some(c) = m.v1beta2_condition(UP_TO_DATE).filter(|c| c.status == STATUS_FALSE) else {
            continue;
        };
        count += 1;
        reasons.extend(c.message.lines().filter(|l| !l.is_empty()).map(str::to_string));
    }
    if count == 0 {
        return Cond::false_(ROLLING_OUT, NOT_ROLLING_OUT_REASON, "");
    }
    let mut message = format!("Rolling out {count} not up-to-date replicas");
    for r in reasons {
        message.push('\n');
        message.push_str(&r);
    }
    Cond::new(ROLLING_OUT, v2::Status::True, ROLLING_OUT_REASON, message)
}

/// The desired Machine count: none once the control plane is deleting.
fn desired(kcp: &KubeadmControlPlane) -> usize {
    if kcp.metadata.deletion_timestamp.is_some() {
        return 0;
    }
    usize::try_from(kcp.spec.replicas.unwrap_or(1)).unwrap_or(0)
}

fn blocked_suffix(blocked: Option<&str>) -> String {
    blocked.map(|b| format!(" is blocked because:\n* {b}")).unwrap_or_default()
}

fn scaling_up(kcp: &KubeadmControlPlane, current: usize, blocked: Option<&str>) -> Cond {
    let want = desired(kcp);
    if current >= want {
        return Cond::false_(SCALING_UP, NOT_SCALING_UP_REASON, "");
    }
    let message = format!("Scaling up from {current} to {want} replicas{}", blocked_suffix(blocked));
    Cond::new(SCALING_UP, v2::Status::True, SCALING_UP_REASON, message)
}

fn scaling_down(kcp: &KubeadmControlPlane, current: usize, blocked: Option<&str>) -> Cond {
    let want = desired(kcp);
    if current <= want {
        return Cond::false_(SCALING_DOWN, NOT_SCALING_DOWN_REASON, "");
    }
    let message = format!("Scaling down from {current} to {want} replicas{}", blocked_suffix(blocked));
    Cond::new(SCALING_DOWN, v2::Status::True, SCALING_DOWN_REASON, message)
}

/// True while a MachineHealthCheck marked Machines the control plane is to remediate.
fn remediating(machines: &[Arc<Machine>]) -> Cond {
    let mut lines = Vec::new();
    for m in machines.iter().filter(|m| is_unhealthy(m)) {
        let detail = m.get_condition(V1_OWNER_REMEDIATED).and_then(|c| c.message.clone()).unwrap_or_default();
        let detail = if detail.is_empty() { "Waiting for remediation".to_string() } else { detail };
        lines.push(format!("* Machine {}: {detail}", m.name_any()));
    }
    if lines.is_empty() {
        return Cond::false_(REMEDIATING, NOT_REMEDIATING_REASON, "");
    }
    lines.sort();
    Cond::new(REMEDIATING, v2::Status::True, REMEDIATING_REASON, lines.join("\n"))
}

/// `Deleting`: False while the control plane is not deleting, else `(reason, message)`.
pub fn deleting(kcp: &KubeadmControlPlane, why: Option<(&str, String)>) -> Cond {
    match why {
        Some((reason, message)) if kcp.metadata.deletion_timestamp.is_some() => {
            Cond::new(DELETING, v2::Status::True, reason, message)
        }
        _ => Cond::false_(DELETING, NOT_DELETING_REASON, ""),
    }
}

/// Whether a Machine's control plane components (and its etcd, when stacked) are healthy.
fn serves(m: &Machine, external_etcd: bool) -> bool {
    let types = [
        API_SERVER_POD_HEALTHY,
        CONTROLLER_MANAGER_POD_HEALTHY,
        SCHEDULER_POD_HEALTHY,
        ETCD_POD_HEALTHY,
        ETCD_MEMBER_HEALTHY,
    ];
    let needed = if external_etcd { &types[..3] } else { &types[..] };
    needed.iter().all(|t| m.is_v1beta2_true(t))
}

/// Stacked etcd members and how many are healthy: from the workload cluster when read,
/// else from what the Machines last reported.
fn etcd_members(i: &Inputs<'_>) -> (usize, usize) {
    match i.observed {
        Some(o) => (o.membership.members.len(), o.membership.healthy()),
        None => {
            let reported = i.machines.iter().filter_map(|m| m.v1beta2_condition(ETCD_MEMBER_HEALTHY));
            reported.fold((0, 0), |(n, h), c| (n + 1, h + usize::from(c.status == STATUS_TRUE)))
        }
    }
}

/// `Available`: initialized, not deleting, certificates in place, etcd in quorum (when
/// stacked) and at least one Machine serving the Kubernetes control plane.
fn available(kcp: &KubeadmControlPlane, initialized: bool, i: &Inputs<'_>) -> Cond {
    if !initialized {
        return Cond::false_(AVAILABLE, NOT_AVAILABLE_REASON, "Control plane not yet initialized");
    }
    let external = kcp.spec.has_external_etcd();
    let provisioned: Vec<&Arc<Machine>> = i.machines.iter().filter(|m| m.spec.provider_id.is_some()).collect();
    let serving = provisioned.iter().filter(|m| serves(m, external)).count();
    let (members, healthy) = if external { (0, 0) } else { etcd_members(i) };
    let quorum = members / 2 + 1;
    let etcd_ok = external || healthy >= quorum;
    let deleting = kcp.metadata.deletion_timestamp.is_some();
    let etcd_line = || match healthy {
        0 => format!("* There are no healthy etcd members, at least {quorum} required for etcd quorum"),
        1 => format!("* 1 of {members} etcd members is healthy, at least {quorum} required for etcd quorum"),
        h => format!("* {h} of {members} etcd members are healthy, at least {quorum} required for etcd quorum"),
    };
    let mut lines = Vec::new();
    if !deleting && etcd_ok && serving >= 1 && i.certificates {
        // Available, with what is degraded.
        if !external && healthy < members {
            lines.push(etcd_line());
        }
        if serving < i.machines.len() {
            lines.push(format!(
                "* {serving} of {} Machines have healthy control plane components, at least 1 required",
                i.machines.len()
            ));
        }
        return Cond::new(AVAILABLE, v2::Status::True, AVAILABLE_REASON, lines.join("\n"));
    }
    if deleting {
        lines.push("* Control plane metadata.deletionTimestamp is set".to_string());
    }
    if !i.certificates {
        lines.push("* Control plane certificates are not available".to_string());
    }
    if !etcd_ok {
        lines.push(etcd_line());
    }
    if serving == 0 {
        lines.push("* There are no Machines with healthy control plane components, at least 1 required".to_string());
    }
    Cond::false_(AVAILABLE, NOT_AVAILABLE_REASON, lines.join("\n"))
}

/// `status.{ready,available,upToDate}Replicas`: Machines whose v1beta2 `Ready`,
/// `Available`, `UpToDate` are True.
fn set_counters(kcp: &mut KubeadmControlPlane, machines: &[Arc<Machine>]) {
    let count = |t: &str| i32::try_from(machines.iter().filter(|m| m.is_v1beta2_true(t)).count()).unwrap_or(i32::MAX);
    let (ready, available, up_to_date) = (count(READY), count(AVAILABLE), count(UP_TO_DATE));
    let v = kcp.status.get_or_insert_with(Default::default);
    v.ready_replicas = Some(ready);
    v.available_replicas = Some(available);
    v.up_to_date_replicas = Some(up_to_date);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etcd;
    use drydock_api::capi::conditions::{Severity, time_at};
    use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlaneInitializationStatus;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    fn now() -> Time {
        time_at(jiff::Timestamp::from_second(1_700_000_000).unwrap())
    }

    fn machine(name: &str) -> Machine {
        let mut m = Machine::new(name, Default::default());
        m.spec.provider_id = Some(format!("inmemory://{name}"));
        m.status = Some(drydock_api::capi::core::v1beta2::MachineStatus {
            node_ref: Some(drydock_api::capi::core::v1beta2::MachineNodeReference { name: name.into() }),
            ..Default::default()
        });
        m
    }

    /// A workload cluster where each `(node, healthy)` has its static pods and etcd member;
    /// an unhealthy one has a scheduler that is not ready and an unhealthy member.
    fn observed(nodes: &[(&str, bool)]) -> Observed {
        let pod = |component: &str, node: &str, ready: bool| -> Pod {
            let mut meta = json!({"name": format!("{component}-{node}"), "labels": {"component": component}});
            if component == "etcd" {
                meta["annotations"] = json!({etcd::MEMBER_ID_ANNOTATION: node, etcd::CLUSTER_ID_ANNOTATION: "c"});
            }
            serde_json::from_value(json!({
                "metadata": meta,
                "spec": {"nodeName": node, "containers": []},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]},
            }))
            .unwrap()
        };
        let mut pods = Vec::new();
        for (n, healthy) in nodes {
            pods.push(pod("kube-apiserver", n, true));
            pods.push(pod("kube-controller-manager", n, true));
            pods.push(pod("kube-scheduler", n, *healthy));
            pods.push(pod("etcd", n, *healthy));
        }
        let nodes: Vec<Node> =
            nodes.iter().map(|(n, _)| serde_json::from_value(json!({"metadata": {"name": n}})).unwrap()).collect();
        Observed { nodes, membership: etcd::Membership::from_pods(&pods), pods, kubeadm_config: true }
    }

    /// The Machine as the control plane and the Machine controller would leave it.
    fn with_conditions(mut m: Machine, o: Option<&Observed>, outdated: &Outdated, ready: bool) -> Arc<Machine> {
        let mut wanted = machine_conditions(&m, o, outdated, false);
        wanted.push(Cond::when(READY, ready, READY_REASON, NOT_READY_REASON, if ready { "" } else { "booting" }));
        if let Some(c) = updated_conditions(m.v1beta2_conditions(), wanted, Some(1), &now()) {
            *m.v1beta2_conditions_mut() = c;
        }
        Arc::new(m)
    }

    fn condition<'a>(kcp: &'a KubeadmControlPlane, t: &str) -> (&'a str, &'a str, &'a str) {
        let c = kcp.v1beta2_condition(t).unwrap_or_else(|| panic!("{t} not set"));
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
    }

    fn initialized_kcp(replicas: i32) -> KubeadmControlPlane {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.replicas = Some(replicas);
        kcp.status.get_or_insert_with(Default::default).initialization =
            Some(KubeadmControlPlaneInitializationStatus { control_plane_initialized: Some(true) });
        kcp
    }

    #[test]
    fn machine_conditions_follow_pods_members_and_rollout() {
        let o = observed(&[("a", true), ("b", false)]);
        let outdated = Outdated::of(&["b"]);
        let a = machine_conditions(&machine("a"), Some(&o), &outdated, false);
        assert!(a.iter().all(|c| c.status == v2::Status::True), "{a:?}");
        assert_eq!(a.len(), 6, "UpToDate, four pods, the etcd member");
        let b = machine_conditions(&machine("b"), Some(&o), &outdated, false);
        let get = |t: &str| b.iter().find(|c| c.type_ == t).unwrap();
        assert_eq!(get(UP_TO_DATE).message, "* Test");
        assert_eq!(get(SCHEDULER_POD_HEALTHY).reason, POD_FAILED_REASON);
        assert_eq!(get(SCHEDULER_POD_HEALTHY).message, "Pod kube-scheduler-b is not ready");
        assert_eq!(get(ETCD_MEMBER_HEALTHY).reason, NOT_HEALTHY_REASON);
        assert_eq!(get(API_SERVER_POD_HEALTHY).status, v2::Status::True);

        let missing = machine_conditions(&machine("c"), Some(&o), &outdated, true);
        assert_eq!(missing.len(), 4, "external etcd: no etcd conditions");
        assert!(missing[1..].iter().all(|c| c.status == v2::Status::Unknown && c.reason == INSPECTION_FAILED_REASON));
        // Without a view of the workload cluster only UpToDate is judged.
        assert_eq!(machine_conditions(&machine("a"), None, &outdated, false).len(), 1);
        // A second pass changes nothing.
        let m = with_conditions(machine("a"), Some(&o), &outdated, true);
        let again = machine_conditions(&m, Some(&o), &outdated, false);
        assert_eq!(updated_conditions(m.v1beta2_conditions(), again, Some(1), &now()), None);
    }

    #[test]
    fn conditions_and_counters_of_a_healthy_control_plane() {
        let o = observed(&[("a", true), ("b", true), ("c", true)]);
        let none = Outdated::default();
        let machines: Vec<Arc<Machine>> =
            ["a", "b", "c"].iter().map(|n| with_conditions(machine(n), Some(&o), &none, true)).collect();
        let mut kcp = initialized_kcp(3);
        kcp.mark_true(V1_ETCD_HEALTHY, now());
        kcp.mark_true(V1_COMPONENTS_HEALTHY, now());
        let i = Inputs { machines: &machines, observed: Some(&o), blocked: None, certificates: true, now: &now() };
        update(&mut kcp, &i);
        for t in [INITIALIZED, CERTIFICATES_AVAILABLE, MACHINES_READY, MACHINES_UP_TO_DATE] {
            assert_eq!(condition(&kcp, t).0, "True", "{t}");
        }
        assert_eq!(condition(&kcp, AVAILABLE), ("True", AVAILABLE_REASON, ""));
        assert_eq!(condition(&kcp, ETCD_CLUSTER_HEALTHY), ("True", HEALTHY_REASON, ""));
        for t in [ROLLING_OUT, SCALING_UP, SCALING_DOWN, REMEDIATING, DELETING] {
            assert_eq!(condition(&kcp, t).0, "False", "{t}");
        }
        let v = kcp.status.clone().unwrap();
        assert_eq!((v.ready_replicas, v.available_replicas, v.up_to_date_replicas), (Some(3), Some(0), Some(3)));
        let before = kcp.clone();
        update(&mut kcp, &i);
        assert_eq!(kcp, before, "recomputing changes nothing");
    }

    #[test]
    fn rollout_scaling_and_lost_quorum() {
        // Two of three etcd members unhealthy: etcd has lost quorum.
        let o = observed(&[("a", true), ("b", false), ("c", false)]);
        let outdated = Outdated::of(&["b", "c"]);
        let machines: Vec<Arc<Machine>> = [("a", true), ("b", false), ("c", true)]
            .iter()
            .map(|(n, r)| with_conditions(machine(n), Some(&o), &outdated, *r))
            .collect();
        let mut kcp = initialized_kcp(4);
        kcp.mark_false(V1_ETCD_HEALTHY, "EtcdClusterUnhealthy", Severity::Warning, "members b, c", now());
        let blocked = Some("Machine b is not ready");
        let i = Inputs { machines: &machines, observed: Some(&o), blocked, certificates: true, now: &now() };
        update(&mut kcp, &i);
        assert_eq!(
            condition(&kcp, ROLLING_OUT),
            ("True", ROLLING_OUT_REASON, "Rolling out 2 not up-to-date replicas\n* Test")
        );
        assert_eq!(
            condition(&kcp, SCALING_UP),
            (
                "True",
                SCALING_UP_REASON,
                "Scaling up from 3 to 4 replicas is blocked because:\n* Machine b is not ready"
            )
        );
        assert_eq!(condition(&kcp, ETCD_CLUSTER_HEALTHY), ("False", NOT_HEALTHY_REASON, "members b, c"));
        assert_eq!(
            condition(&kcp, AVAILABLE),
            ("False", NOT_AVAILABLE_REASON, "* 1 of 3 etcd members is healthy, at least 2 required for etcd quorum")
        );
        assert_eq!(condition(&kcp, MACHINES_READY), ("False", NOT_READY_REASON, "* Machine b: booting"));
        assert_eq!(condition(&kcp, MACHINES_UP_TO_DATE).0, "False");
        let v = kcp.status.clone().unwrap();
        assert_eq!((v.ready_replicas, v.up_to_date_replicas), (Some(2), Some(1)));
    }

    #[test]
    fn waiting_and_uninitialized_control_planes() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.replicas = Some(3);
        let blocked = Some("Waiting for the cluster's infrastructure");
        update(&mut kcp, &Inputs { machines: &[], observed: None, blocked, certificates: false, now: &now() });
        assert_eq!(condition(&kcp, INITIALIZED), ("False", NOT_INITIALIZED_REASON, ""));
        assert_eq!(condition(&kcp, AVAILABLE), ("False", NOT_AVAILABLE_REASON, "Control plane not yet initialized"));
        assert_eq!(condition(&kcp, MACHINES_READY), ("True", NO_REPLICAS_REASON, ""));
        assert_eq!(condition(&kcp, ETCD_CLUSTER_HEALTHY).1, HEALTH_UNKNOWN_REASON);
        assert_eq!(condition(&kcp, CERTIFICATES_AVAILABLE).0, "False");
        assert!(condition(&kcp, SCALING_UP).2.starts_with("Scaling up from 0 to 3 replicas is blocked because:"));
        assert_eq!(deleting(&kcp, Some(("x", "y".into()))).reason, NOT_DELETING_REASON, "not deleting");
    }
}
