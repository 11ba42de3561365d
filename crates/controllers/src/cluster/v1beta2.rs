//! The Cluster's v1beta2 conditions and replica counters, computed from what one reconcile
//! read: the infrastructure cluster and control plane (their own v1beta2 conditions when
//! they report them, else their v1beta1 contract fields), the Cluster's Machines,
//! MachineDeployments and stand-alone MachineSets from the shared stores, and the deletion
//! stage. Pure functions: an unchanged state recomputes the same bytes.

use std::sync::Arc;

use drydock_api::capi::condition_types::CONTROL_PLANE_INITIALIZED as V1_CONTROL_PLANE_INITIALIZED;
use drydock_api::capi::conditions::{HasConditions, READY as V1_READY, STATUS_TRUE, STATUS_UNKNOWN};
use drydock_api::capi::core::v1beta2::{
    Cluster, ClusterReplicasStatus as ClusterReplicaCounters, Machine, MachineDeployment, MachineSet,
};
use drydock_api::capi::v1beta2_conditions::names::*;
use drydock_api::capi::v1beta2_conditions::{
    self as v2, Condition, HasV1Beta2Conditions, Input, Observed as Cond, Polarity, Reasons, Status,
};
use drydock_api::time::rfc3339;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use serde_json::Value;

use super::probe::Verdict;
use crate::framework::referenced::Referenced;

/// What the Cluster's v1beta2 status is computed from.
pub(super) struct Inputs<'a> {
    /// The infrastructure cluster and control plane as read; `None` when missing.
    pub infra: Option<&'a Referenced>,
    pub control_plane: Option<&'a Referenced>,
    pub control_plane_machines: &'a [Arc<Machine>],
    /// Machines that are not control plane Machines (MachinePool Machines left out).
    pub worker_machines: &'a [Arc<Machine>],
    pub machine_deployments: &'a [Arc<MachineDeployment>],
    /// MachineSets the Cluster owns directly (not through a MachineDeployment).
    pub machine_sets: &'a [Arc<MachineSet>],
    /// While deleting: the `Deleting` reason and message.
    pub deleting: Option<(&'a str, String)>,
    /// What the probes of the workload cluster's API server found.
    pub probe: Verdict,
}

/// Sets every v1beta2 condition but `Paused`, and the replica counters.
pub(super) fn update(c: &mut Cluster, i: &Inputs<'_>, now: &Time) {
    let cp_conditions = i.control_plane.and_then(reported_conditions);
    let conditions = [
        infrastructure_ready(c, i.infra),
        control_plane_available(c, i.control_plane, cp_conditions.as_deref()),
        control_plane_initialized(c, i.control_plane.is_none()),
        workers_available(i.machine_deployments),
        machines(CONTROL_PLANE_MACHINES_READY, READY, i.control_plane_machines, Reasons::READY, false),
        machines(WORKER_MACHINES_READY, READY, i.worker_machines, Reasons::READY, false),
        machines(CONTROL_PLANE_MACHINES_UP_TO_DATE, UP_TO_DATE, i.control_plane_machines, Reasons::UP_TO_DATE, true),
        machines(WORKER_MACHINES_UP_TO_DATE, UP_TO_DATE, i.worker_machines, Reasons::UP_TO_DATE, true),
        remote_connection_probe(c, i.probe),
        deleting(i.deleting.clone()),
    ];
    for cond in conditions {
        c.set_v1beta2(cond, now);
    }
    let sources = rollup_sources(c, i.control_plane, cp_conditions.as_deref(), i.machine_deployments);
    let rollups = [
        rollup(ROLLING_OUT, &sources, (ROLLING_OUT_REASON, NOT_ROLLING_OUT_REASON, Some(ROLLING_OUT_UNKNOWN_REASON))),
        rollup(SCALING_UP, &sources, (SCALING_UP_REASON, NOT_SCALING_UP_REASON, Some(SCALING_UP_UNKNOWN_REASON))),
        rollup(
            SCALING_DOWN,
            &sources,
            (SCALING_DOWN_REASON, NOT_SCALING_DOWN_REASON, Some(SCALING_DOWN_UNKNOWN_REASON)),
        ),
        rollup(REMEDIATING, &sources, (REMEDIATING_REASON, NOT_REMEDIATING_REASON, None)),
    ];
    for cond in rollups {
        c.set_v1beta2(cond, now);
    }
    let available = available(c);
    c.set_v1beta2(available, now);
    set_counters(c, i);
}

fn kind_of(r: Option<&drydock_api::capi::common::ContractVersionedObjectReference>) -> String {
    r.map(|r| r.kind.clone()).unwrap_or_default()
}

/// The v1beta2 conditions an object reports, if it reports any: a KubeadmControlPlane's
/// own; for other kinds `status.v1beta2.conditions` (v1beta1 contract), or `status.conditions`
/// of an object in the v1beta2 shape (it has `status.initialization` or `.deprecated`).
pub(super) fn reported_conditions(obj: &Referenced) -> Option<Vec<Condition>> {
    match obj {
        Referenced::KubeadmControlPlane(o) => {
            let c = o.v1beta2_conditions();
            (!c.is_empty()).then(|| c.to_vec())
        }
        Referenced::Dynamic(o) => {
            let status = o.data.get("status")?;
            let list = match status.get("v1beta2").and_then(|v| v.get("conditions")) {
                Some(l) => l,
                None if status.get("initialization").is_some() || status.get("deprecated").is_some() => {
                    status.get("conditions")?
                }
                None => return None,
            };
            serde_json::from_value(list.clone()).ok()
        }
        _ => None,
    }
}

/// `type_` mirroring the `source` condition an object reports, else `fallback`.
fn mirror(type_: &str, reported: Option<&[Condition]>, source: &str, fine: &str, fallback: Cond) -> Cond {
    let Some(s) = reported.and_then(|r| v2::get(r, source)) else {
        return fallback;
    };
    let status = Status::parse(&s.status);
    let reason = match (s.reason.as_str(), status) {
        ("", Status::True) => fine,
        ("", _) => INVALID_CONDITION_REPORTED_REASON,
        (r, _) => r,
    };
    Cond::new(type_, status, reason, s.message.clone())
}

/// A referenced object that is missing: never there yet, or gone.
fn missing(type_: &str, c: &Cluster, kind: &str, was_ready: bool) -> Cond {
    match (was_ready, c.metadata.deletion_timestamp.is_some()) {
        (true, true) => Cond::unknown(type_, OBJECT_DELETED_REASON, format!("{kind} has been deleted")),
        (true, false) => Cond::unknown(
            type_,
            OBJECT_DELETED_REASON,
            format!("{kind} has been deleted while the cluster still exists"),
        ),
        (false, _) => Cond::unknown(type_, OBJECT_DOES_NOT_EXIST_REASON, format!("{kind} does not exist")),
    }
}

/// The v1beta1 Ready condition's message of a provider object, for a fallback.
fn v1beta1_ready_message(obj: &Referenced) -> Option<String> {
    let conditions = obj.conditions();
    let c = conditions.iter().find(|c| c.type_ == V1_READY)?;
    c.message.clone().filter(|m| !m.is_empty())
}

fn infrastructure_ready(c: &Cluster, infra: Option<&Referenced>) -> Cond {
    let Some(r) = c.spec.infrastructure_ref.as_ref() else {
        if c.spec.topology.is_some() {
            let msg = if c.metadata.deletion_timestamp.is_none() {
                "Waiting for cluster topology to be reconciled"
            } else {
                ""
            };
            return Cond::unknown(INFRASTRUCTURE_READY, OBJECT_DOES_NOT_EXIST_REASON, msg);
        }
        // No infrastructure cluster (managed control planes): nothing to wait for.
        return Cond::true_(INFRASTRUCTURE_READY, READY_REASON);
    };
    let kind = kind_of(Some(r));
    let was_ready = c.infrastructure_provisioned();
    let Some(obj) = infra else {
        return missing(INFRASTRUCTURE_READY, c, &kind, was_ready);
    };
    let fallback = if obj.provisioned() {
        Cond::true_(INFRASTRUCTURE_READY, READY_REASON)
    } else {
        let msg = v1beta1_ready_message(obj).unwrap_or_else(|| format!("{kind} is not provisioned yet"));
        Cond::false_(INFRASTRUCTURE_READY, NOT_READY_REASON, msg)
    };
    mirror(INFRASTRUCTURE_READY, reported_conditions(obj).as_deref(), READY, READY_REASON, fallback)
}

fn control_plane_available(c: &Cluster, cp: Option<&Referenced>, reported: Option<&[Condition]>) -> Cond {
    let Some(r) = c.spec.control_plane_ref.as_ref() else {
        if c.spec.topology.is_some() {
            let msg = if c.metadata.deletion_timestamp.is_none() {
                "Waiting for cluster topology to be reconciled"
            } else {
                ""
            };
            return Cond::unknown(CONTROL_PLANE_AVAILABLE, OBJECT_DOES_NOT_EXIST_REASON, msg);
        }
        // Stand-alone control plane Machines: the control plane serves once the first of
        // them has a Node (what initializes it).
        let initialized = c.control_plane_initialized();
        let msg = if initialized { "" } else { "Waiting for the first control plane Machine to have a Node" };
        return Cond::when(CONTROL_PLANE_AVAILABLE, initialized, AVAILABLE_REASON, NOT_AVAILABLE_REASON, msg);
    };
    let kind = kind_of(Some(r));
    let was_ready = c.control_plane_initialized();
    let Some(obj) = cp else {
        return missing(CONTROL_PLANE_AVAILABLE, c, &kind, was_ready);
    };
    let fallback = if obj.control_plane_ready() {
        Cond::true_(CONTROL_PLANE_AVAILABLE, AVAILABLE_REASON)
    } else {
        let msg = v1beta1_ready_message(obj).unwrap_or_else(|| format!("{kind} is not ready yet"));
        Cond::false_(CONTROL_PLANE_AVAILABLE, NOT_AVAILABLE_REASON, msg)
    };
    mirror(CONTROL_PLANE_AVAILABLE, reported, AVAILABLE, AVAILABLE_REASON, fallback)
}

/// Mirrors the v1beta1 `ControlPlaneInitialized` the reconcile computed (from the control
/// plane object, or from the first control plane Node); sticky once True.
fn control_plane_initialized(c: &Cluster, control_plane_missing: bool) -> Cond {
    if c.control_plane_initialized() {
        return Cond::true_(CONTROL_PLANE_INITIALIZED, INITIALIZED_REASON);
    }
    if let Some(r) = c.spec.control_plane_ref.as_ref().filter(|_| control_plane_missing) {
        let kind = kind_of(Some(r));
        return Cond::unknown(
            CONTROL_PLANE_INITIALIZED,
            OBJECT_DOES_NOT_EXIST_REASON,
            format!("{kind} does not exist"),
        );
    }
    let message = c
        .get_condition(V1_CONTROL_PLANE_INITIALIZED)
        .and_then(|c| c.message.clone())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "Waiting for the control plane to be initialized".to_string());
    Cond::false_(CONTROL_PLANE_INITIALIZED, NOT_INITIALIZED_REASON, message)
}

fn workers_available(mds: &[Arc<MachineDeployment>]) -> Cond {
    let names: Vec<String> = mds.iter().map(|m| m.name_any()).collect();
    let objects = names.iter().map(String::as_str).zip(mds.iter().map(|m| m.v1beta2_conditions()));
    let kind = ("MachineDeployment", "MachineDeployments");
    v2::aggregate(
        WORKERS_AVAILABLE,
        AVAILABLE,
        Polarity::Positive,
        kind,
        objects,
        Reasons::AVAILABLE,
        NO_WORKERS_REASON,
    )
}

/// `type_` aggregating `source` over `machines`. `reporting_only`: only Machines that report
/// `source` count (`UpToDate` is set by a Machine's owner, and a Machine without one has
/// none, or is too new to have it yet).
fn machines(type_: &str, source: &str, machines: &[Arc<Machine>], reasons: Reasons, reporting_only: bool) -> Cond {
    let counted: Vec<&Arc<Machine>> =
        machines.iter().filter(|m| !reporting_only || m.v1beta2_condition(source).is_some()).collect();
    let names: Vec<String> = counted.iter().map(|m| m.name_any()).collect();
    let objects = names.iter().map(String::as_str).zip(counted.iter().map(|m| m.v1beta2_conditions()));
    v2::aggregate(type_, source, Polarity::Positive, ("Machine", "Machines"), objects, reasons, NO_REPLICAS_REASON)
}

/// `RemoteConnectionProbe` from the probes' verdict (see `probe`). Until they can say,
/// it keeps what it said, or says the connection is not established yet.
fn remote_connection_probe(c: &Cluster, probe: Verdict) -> Cond {
    match probe {
        Verdict::Succeeded => Cond::true_(REMOTE_CONNECTION_PROBE, PROBE_SUCCEEDED_REASON),
        Verdict::Failed { last_success: None } => {
            Cond::false_(REMOTE_CONNECTION_PROBE, PROBE_FAILED_REASON, "Remote connection probe failed")
        }
        Verdict::Failed { last_success: Some(t) } => Cond::false_(
            REMOTE_CONNECTION_PROBE,
            PROBE_FAILED_REASON,
            format!("Remote connection probe failed, probe last succeeded at {}", rfc3339(t)),
        ),
        Verdict::NotYet => match c.v1beta2_condition(REMOTE_CONNECTION_PROBE) {
            Some(kept) => Cond::new(REMOTE_CONNECTION_PROBE, Status::parse(&kept.status), &kept.reason, &kept.message),
            None => Cond::false_(REMOTE_CONNECTION_PROBE, PROBE_FAILED_REASON, "Remote connection not established yet"),
        },
    }
}

/// `Deleting`: False while the Cluster is not deleting, else the stage's reason and message.
pub(super) fn deleting(why: Option<(&str, String)>) -> Cond {
    match why {
        Some((reason, message)) => Cond::new(DELETING, Status::True, reason, message),
        None => Cond::false_(DELETING, NOT_DELETING_REASON, ""),
    }
}

/// The objects whose `RollingOut`, `ScalingUp`, `ScalingDown`, `Remediating` the Cluster's
/// conditions of the same name combine: the control plane, then MachineDeployments by name.
fn rollup_sources(
    c: &Cluster,
    cp: Option<&Referenced>,
    cp_conditions: Option<&[Condition]>,
    mds: &[Arc<MachineDeployment>],
) -> Vec<(String, Vec<Condition>)> {
    let mut out = Vec::new();
    if let (Some(obj), Some(conds)) = (cp, cp_conditions) {
        out.push((
            format!("{} {}", kind_of(c.spec.control_plane_ref.as_ref()), obj.meta().name.clone().unwrap_or_default()),
            conds.to_vec(),
        ));
    }
    let mut mds: Vec<&Arc<MachineDeployment>> = mds.iter().collect();
    mds.sort_by_key(|m| m.name_any());
    out.extend(
        mds.into_iter().map(|m| (format!("MachineDeployment {}", m.name_any()), m.v1beta2_conditions().to_vec())),
    );
    out
}

/// `* subject: detail`, a multi-line detail indented under it.
fn bullet(subject: &str, detail: &str) -> String {
    let mut lines = detail.lines();
    match (lines.next(), lines.clone().next()) {
        (Some(one), None) => format!("* {subject}: {one}"),
        (Some(first), Some(_)) => {
            std::iter::once(first).chain(lines).fold(format!("* {subject}:"), |acc, l| format!("{acc}\n  {l}"))
        }
        (None, _) => format!("* {subject}"),
    }
}

/// `type_` True while any source's condition of that type is True (naming each), else
/// Unknown when one is Unknown and `reasons.2` gives a reason for it, else False. Sources
/// that do not report the type are left out.
fn rollup(type_: &str, sources: &[(String, Vec<Condition>)], reasons: (&str, &str, Option<&str>)) -> Cond {
    let lines = |status: &str| -> Vec<String> {
        sources
            .iter()
            .filter_map(|(subject, conds)| {
                let c = v2::get(conds, type_).filter(|c| c.status == status)?;
                Some(bullet(subject, if c.message.is_empty() { &c.reason } else { &c.message }))
            })
            .collect()
    };
    let active = lines(STATUS_TRUE);
    if !active.is_empty() {
        return Cond::new(type_, Status::True, reasons.0, active.join("\n"));
    }
    if let Some(unknown_reason) = reasons.2 {
        let unknown = lines(STATUS_UNKNOWN);
        if !unknown.is_empty() {
            return Cond::unknown(type_, unknown_reason, unknown.join("\n"));
        }
    }
    Cond::false_(type_, reasons.1, "")
}

/// `Available`: not deleting, the workload cluster reachable, infrastructure ready, control
/// plane and workers available, the topology reconciled (when reported) and every
/// availability gate True.
pub(super) fn available(c: &Cluster) -> Cond {
    let gates: Vec<String> = c.spec.availability_gates.iter().flatten().map(|g| g.condition_type.clone()).collect();
    let mut inputs = vec![
        Input::negative(DELETING),
        Input::positive(REMOTE_CONNECTION_PROBE),
        Input::positive(INFRASTRUCTURE_READY),
        Input::positive(CONTROL_PLANE_AVAILABLE),
        Input::positive(WORKERS_AVAILABLE),
        Input::positive(TOPOLOGY_RECONCILED).optional(),
    ];
    inputs.extend(gates.iter().map(|g| Input::positive(g)));
    v2::summary(AVAILABLE, c.v1beta2_conditions(), &inputs, Reasons::AVAILABLE)
}

fn sum(a: Option<i32>, b: Option<i32>) -> Option<i32> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

fn count(n: usize) -> Option<i32> {
    Some(i32::try_from(n).unwrap_or(i32::MAX))
}

/// Counters of Machines counted one by one (stand-alone Machines: each one desired).
fn machine_counters(machines: &[&Arc<Machine>]) -> ClusterReplicaCounters {
    let with = |t: &str| count(machines.iter().filter(|m| m.is_v1beta2_true(t)).count());
    ClusterReplicaCounters {
        desired_replicas: count(machines.len()),
        replicas: count(machines.len()),
        ready_replicas: with(READY),
        available_replicas: with(AVAILABLE),
        up_to_date_replicas: with(UP_TO_DATE),
        ..Default::default()
    }
}

fn add(into: &mut ClusterReplicaCounters, more: &ClusterReplicaCounters) {
    into.desired_replicas = sum(into.desired_replicas, more.desired_replicas);
    into.replicas = sum(into.replicas, more.replicas);
    into.ready_replicas = sum(into.ready_replicas, more.ready_replicas);
    into.available_replicas = sum(into.available_replicas, more.available_replicas);
    into.up_to_date_replicas = sum(into.up_to_date_replicas, more.up_to_date_replicas);
}

fn json_i32(v: &Value, path: &[&str]) -> Option<i32> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok())
}

/// What a control plane object reports of its replicas (the contract's optional fields).
fn control_plane_counters(obj: &Referenced) -> ClusterReplicaCounters {
    match obj {
        Referenced::KubeadmControlPlane(o) => {
            let s = o.status.as_ref();
            ClusterReplicaCounters {
                desired_replicas: Some(o.spec.replicas.unwrap_or(1)),
                replicas: s.and_then(|s| s.replicas),
                ready_replicas: s.and_then(|s| s.ready_replicas),
                available_replicas: s.and_then(|s| s.available_replicas),
                up_to_date_replicas: s.and_then(|s| s.up_to_date_replicas),
                ..Default::default()
            }
        }
        Referenced::Dynamic(o) => {
            let d = &o.data;
            // v1beta1 contract: the v1beta2 counters under status.v1beta2; v1beta2: in status.
            let v1beta2 = d.get("status").and_then(|s| s.get("v1beta2")).is_some();
            let at = |field: &str| {
                if v1beta2 { json_i32(d, &["status", "v1beta2", field]) } else { json_i32(d, &["status", field]) }
            };
            ClusterReplicaCounters {
                desired_replicas: json_i32(d, &["spec", "replicas"]),
                replicas: json_i32(d, &["status", "replicas"]),
                ready_replicas: at("readyReplicas"),
                available_replicas: at("availableReplicas"),
                up_to_date_replicas: at("upToDateReplicas"),
                ..Default::default()
            }
        }
        _ => ClusterReplicaCounters::default(),
    }
}

/// `status.controlPlane` and `.workers`.
fn set_counters(c: &mut Cluster, i: &Inputs<'_>) {
    let control_plane = if c.spec.control_plane_ref.is_some() {
        i.control_plane.map(control_plane_counters).unwrap_or_default()
    } else {
        machine_counters(&i.control_plane_machines.iter().collect::<Vec<_>>())
    };
    let mut workers = ClusterReplicaCounters::default();
    for md in i.machine_deployments {
        let v = md.status.as_ref();
        add(
            &mut workers,
            &ClusterReplicaCounters {
                desired_replicas: md.spec.replicas,
                replicas: Some(md.status.as_ref().and_then(|s| s.replicas).unwrap_or(0)),
                ready_replicas: v.and_then(|v| v.ready_replicas),
                available_replicas: v.and_then(|v| v.available_replicas),
                up_to_date_replicas: v.and_then(|v| v.up_to_date_replicas),
                ..Default::default()
            },
        );
    }
    for ms in i.machine_sets {
        let v = ms.status.as_ref();
        add(
            &mut workers,
            &ClusterReplicaCounters {
                desired_replicas: ms.spec.replicas,
                replicas: Some(ms.status.as_ref().and_then(|s| s.replicas).unwrap_or(0)),
                ready_replicas: v.and_then(|v| v.ready_replicas),
                available_replicas: v.and_then(|v| v.available_replicas),
                up_to_date_replicas: v.and_then(|v| v.up_to_date_replicas),
                ..Default::default()
            },
        );
    }
    let standalone: Vec<&Arc<Machine>> =
        i.worker_machines.iter().filter(|m| m.owner_references().iter().any(|o| o.kind == "Cluster")).collect();
    if !standalone.is_empty() {
        add(&mut workers, &machine_counters(&standalone));
    }
    let s = c.status.get_or_insert_with(Default::default);
    // The upgrade plans are the topology controller's.
    let mut control_plane = control_plane;
    control_plane.upgrade_plan = s.control_plane.as_ref().and_then(|c| c.upgrade_plan.clone());
    workers.upgrade_plan = s.workers.as_ref().and_then(|w| w.upgrade_plan.clone());
    s.control_plane = Some(control_plane);
    s.workers = Some(workers);
}

/// A condition as far as it wakes a Cluster: type, status, reason.
pub(super) type GateCondition = (String, String, String);

/// What a Cluster follows of a control plane or MachineDeployment: conditions and counters.
pub(super) type Gate = (Vec<GateCondition>, [Option<i32>; 5]);

/// The v1beta2 conditions of `types` an object reports, as far as they wake the Cluster:
/// type, status and reason. Messages change with every step of a rollout or provisioning
/// (they name Machines and count replicas); following each would rewrite every Cluster
/// many times over while its aggregates say nothing new. A message is picked up with the
/// next change that does wake the Cluster.
pub(super) fn gate_conditions(
    conditions: &[drydock_api::capi::v1beta2_conditions::Condition],
    types: &[&str],
) -> Vec<GateCondition> {
    conditions
        .iter()
        .filter(|c| types.contains(&c.type_.as_str()))
        .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone()))
        .collect()
}

/// What a Cluster reads of its control plane's and MachineDeployments' v1beta2 status.
pub(super) const ROLLUP_TYPES: &[&str] = &[AVAILABLE, ROLLING_OUT, SCALING_UP, SCALING_DOWN, REMEDIATING];

pub(super) fn replica_gate(md: &MachineDeployment) -> [Option<i32>; 5] {
    let s = md.status.as_ref();
    [
        md.spec.replicas,
        s.and_then(|s| s.replicas),
        s.and_then(|s| s.ready_replicas),
        s.and_then(|s| s.available_replicas),
        s.and_then(|s| s.up_to_date_replicas),
    ]
}

/// What a Cluster's v1beta2 status aggregates, from the stores.
#[derive(Default)]
pub(super) struct Family {
    pub(super) control_plane_machines: Vec<Arc<Machine>>,
    pub(super) worker_machines: Vec<Arc<Machine>>,
    pub(super) machine_deployments: Vec<Arc<MachineDeployment>>,
    pub(super) machine_sets: Vec<Arc<MachineSet>>,
}

impl super::State {
    /// The Cluster's Machines (control plane and workers; MachinePool Machines left out),
    /// MachineDeployments and the MachineSets it owns directly, from the stores.
    pub(super) fn family(&self, c: &Cluster) -> Family {
        let ns = super::namespace(c);
        let name = c.name_any();
        let i = &self.ctx.informers;
        let mut f = Family::default();
        for m in self.machines.members(&ns, &name, |n| super::in_store(&i.machines.store, &ns, n).is_some()) {
            let Some(m) = super::in_store(&i.machines.store, &ns, &m).filter(|m| m.spec.cluster_name == name) else {
                continue;
            };
            if m.labels().contains_key(drydock_api::capi::keys::POOL_NAME_LABEL) {
                continue;
            }
            if crate::framework::objects::is_control_plane(&m) {
                f.control_plane_machines.push(m);
            } else {
                f.worker_machines.push(m);
            }
        }
        let store = &i.machine_deployments.store;
        for md in self.machine_deployments.members(&ns, &name, |n| super::in_store(store, &ns, n).is_some()) {
            if let Some(md) = super::in_store(store, &ns, &md).filter(|o| o.spec.cluster_name == name) {
                f.machine_deployments.push(md);
            }
        }
        let store = &i.machine_sets.store;
        for ms in self.machine_sets.members(&ns, &name, |n| super::in_store(store, &ns, n).is_some()) {
            if let Some(ms) = super::in_store(store, &ns, &ms)
                .filter(|o| o.spec.cluster_name == name && o.owner_references().iter().any(|r| r.kind == "Cluster"))
            {
                f.machine_sets.push(ms);
            }
        }
        f
    }
}

#[cfg(test)]
mod tests;
