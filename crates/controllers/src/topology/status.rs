//! `TopologyReconciled`, with upstream's reasons, in v1beta2 and as the v1beta1 condition.

use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass, ClusterUpgradeStep};
use drydock_api::capi::v1beta2_conditions::names::{TOPOLOGY_RECONCILED, VARIABLES_READY};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed, Status};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::upgrade::{Phase, Progress, UpgradePlans};
use crate::framework::Error;

pub const RECONCILE_SUCCEEDED: &str = "ReconcileSucceeded";
pub const RECONCILE_FAILED: &str = "ReconcileFailed";
pub const CLUSTER_CREATING: &str = "ClusterCreating";
pub const CLUSTER_UPGRADING: &str = "ClusterUpgrading";
pub const MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED: &str = "MachineDeploymentsUpgradeDeferred";
pub const MACHINE_POOLS_UPGRADE_DEFERRED: &str = "MachinePoolsUpgradeDeferred";
pub const CLUSTER_CLASS_NOT_RECONCILED: &str = "ClusterClassNotReconciled";
pub const DELETING: &str = "Deleting";
pub const PAUSED: &str = "Paused";

/// The condition to write.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub ok: bool,
    pub reason: &'static str,
    pub message: String,
    /// The upgrade plans to report (`None`: leave them as they are).
    pub plans: Option<UpgradePlans>,
}

fn not(reason: &'static str, message: impl Into<String>) -> Report {
    Report { ok: false, reason, message: message.into(), plans: None }
}

pub fn deleting() -> Report {
    not(DELETING, "Cluster is deleting")
}

pub fn paused() -> Report {
    not(PAUSED, "Cluster is paused")
}

pub fn class_not_reconciled(name: &str, namespace: &str) -> Report {
    not(
        CLUSTER_CLASS_NOT_RECONCILED,
        format!(
            "ClusterClass {namespace}/{name} is missing or not reconciled yet \
             (its observedGeneration must match its generation and VariablesReady be True)"
        ),
    )
}

pub fn failed(e: &Error) -> Report {
    not(RECONCILE_FAILED, format!("Error computing or applying the topology: {e}"))
}

pub fn reconciled(p: &Progress) -> Report {
    let report = match &p.phase {
        Phase::Stable => Report { ok: true, reason: RECONCILE_SUCCEEDED, message: String::new(), plans: None },
        Phase::Creating(m) => not(CLUSTER_CREATING, m.clone()),
        Phase::Upgrading(m) => not(CLUSTER_UPGRADING, m.clone()),
        Phase::Deferred(m) => not(MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED, m.clone()),
        Phase::PoolsDeferred(m) => not(MACHINE_POOLS_UPGRADE_DEFERRED, m.clone()),
    };
    Report { plans: Some(p.plans.clone()), ..report }
}

/// Sets both versions of the condition.
pub fn set(c: &mut Cluster, r: &Report, now: &Time) {
    if let Some(plans) = &r.plans {
        let steps = |v: &[String]| {
            (!v.is_empty()).then(|| v.iter().map(|version| ClusterUpgradeStep { version: version.clone() }).collect())
        };
        let s = c.status.get_or_insert_with(Default::default);
        s.control_plane.get_or_insert_with(Default::default).upgrade_plan = steps(&plans.control_plane);
        s.workers.get_or_insert_with(Default::default).upgrade_plan = steps(&plans.workers);
    }
    let status = if r.ok { Status::True } else { Status::False };
    c.set_v1beta2(Observed::new(TOPOLOGY_RECONCILED, status, r.reason, r.message.clone()), now);
    if r.ok {
        c.mark_true(TOPOLOGY_RECONCILED, now.clone());
    } else {
        let severity = if r.reason == RECONCILE_FAILED { Severity::Error } else { Severity::Info };
        c.mark_false(TOPOLOGY_RECONCILED, r.reason, severity, &r.message, now.clone());
    }
}

/// The topology works only from a class whose current generation was reconciled with
/// every variable known, as upstream's.
pub fn class_reconciled(cc: &ClusterClass) -> bool {
    let observed = cc.status.as_ref().and_then(|s| s.observed_generation);
    observed.is_some()
        && observed == cc.metadata.generation
        && cc.v1beta2_conditions().iter().any(|c| c.type_ == VARIABLES_READY && c.status == "True")
}
