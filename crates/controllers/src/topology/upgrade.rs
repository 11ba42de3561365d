//! Which version each part of a topology runs: the control plane first, one step of the
//! upgrade plan at a time, and the MachineDeployments after it, in topology order and no
//! more at once than the Cluster's upgrade concurrency.

use std::time::Duration;

use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass};
use serde_json::Value;

use crate::framework::requeue::Requeue;

/// Cluster annotation: how many MachineDeployments (and, counted apart, MachinePools) may
/// upgrade at once (default 1).
pub const UPGRADE_CONCURRENCY_ANNOTATION: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";
/// Topology MachineDeployment or MachinePool annotation: skip this one's upgrade.
pub const DEFER_UPGRADE_ANNOTATION: &str = "topology.cluster.x-k8s.io/defer-upgrade";
/// Topology MachineDeployment or MachinePool annotation: hold this one's upgrade and every
/// later one's of its kind.
pub const HOLD_UPGRADE_SEQUENCE_ANNOTATION: &str = "topology.cluster.x-k8s.io/hold-upgrade-sequence";

/// Where the topology stands, for `TopologyReconciled`.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Everything is at the topology's version.
    Stable,
    /// Parts are still to be created (workers wait for the control plane).
    Creating(String),
    /// An upgrade is under way.
    Upgrading(String),
    /// Upgrades of MachineDeployments (and maybe MachinePools) are deferred or held.
    Deferred(String),
    /// Upgrades of MachinePools only are deferred or held.
    PoolsDeferred(String),
}

/// What the plan found, and when to look again without an event.
#[derive(Clone, Debug)]
pub struct Progress {
    pub phase: Phase,
    pub requeue: Requeue,
    /// The versions the control plane and the workers still go through (empty when no
    /// upgrade is under way), as `status.controlPlane.upgradePlan` and
    /// `status.workers.upgradePlan` report them.
    pub plans: UpgradePlans,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpgradePlans {
    pub control_plane: Vec<String>,
    pub workers: Vec<String>,
}

impl UpgradePlans {
    /// The control plane's versions after `applied` (the one it was last asked for) on the
    /// way to `target`, and the workers' (straight to the target) when any is behind it.
    pub fn compute(class: &ClusterClass, applied: &str, target: &str, workers_behind: bool) -> Self {
        let mut control_plane = Vec::new();
        let mut at = applied.to_string();
        while at != target && control_plane.len() < 16 {
            at = next_step(class, &at, target);
            control_plane.push(at.clone());
        }
        let workers = if workers_behind { vec![target.to_string()] } else { Vec::new() };
        Self { control_plane, workers }
    }
}

/// The state of the control plane, read from either contract version.
#[derive(Clone, Debug, Default)]
pub struct ControlPlaneState {
    pub exists: bool,
    pub spec_version: Option<String>,
    pub initialized: bool,
    /// Rolling out, scaling or not yet observed: not the moment to change its version.
    pub busy: bool,
}

impl ControlPlaneState {
    pub fn of(cp: Option<&Value>) -> Self {
        let Some(cp) = cp else {
            return Self::default();
        };
        let spec_version = cp["spec"]["version"].as_str().map(str::to_string);
        let status = &cp["status"];
        let initialized = status["initialization"]["controlPlaneInitialized"].as_bool() == Some(true)
            || status["initialized"].as_bool() == Some(true);
        let generation = cp["metadata"]["generation"].as_i64();
        let observed = status["observedGeneration"].as_i64();
        let desired = cp["spec"]["replicas"].as_i64();
        let replicas = status["replicas"].as_i64();
        let up_to_date = status["upToDateReplicas"].as_i64().or_else(|| status["updatedReplicas"].as_i64());
        let at_version = status["version"].as_str() == spec_version.as_deref();
        let busy = observed != generation || !at_version || replicas != desired || up_to_date != desired;
        Self { exists: true, spec_version, initialized, busy }
    }

    /// At `version` and settled there.
    pub fn stable_at(&self, version: &str) -> bool {
        self.exists && self.initialized && !self.busy && self.spec_version.as_deref() == Some(version)
    }
}

/// The control plane's version for this reconcile: the target at creation; during an
/// upgrade the next step of the plan, taken only while the control plane is settled and
/// no MachineDeployment is rolling out.
pub fn control_plane_version(class: &ClusterClass, target: &str, cp: &ControlPlaneState, workers_busy: bool) -> String {
    let Some(current) = cp.spec_version.clone().filter(|_| cp.exists) else {
        return target.to_string();
    };
    if current == target || cp.busy || !cp.initialized || workers_busy {
        return current;
    }
    next_step(class, &current, target)
}

/// The next version on the way from `current` to `target`: the newest version the class
/// lists for the next minor, when it lists versions; the target otherwise.
pub fn next_step(class: &ClusterClass, current: &str, target: &str) -> String {
    let (Some(cur), Some(tgt)) = (minor_of(current), minor_of(target)) else {
        return target.to_string();
    };
    if tgt <= cur + 1 {
        return target.to_string();
    }
    class
        .spec
        .kubernetes_versions
        .iter()
        .flatten()
        .filter(|v| minor_of(v) == Some(cur + 1))
        .max_by_key(|v| patch_of(v))
        .cloned()
        .unwrap_or_else(|| target.to_string())
}

fn parts(v: &str) -> Vec<u64> {
    v.trim_start_matches('v').split(['.', '-', '+']).take(3).filter_map(|p| p.parse().ok()).collect()
}

fn minor_of(v: &str) -> Option<u64> {
    parts(v).get(1).copied()
}

fn patch_of(v: &str) -> u64 {
    parts(v).get(2).copied().unwrap_or_default()
}

/// The Cluster's upgrade concurrency for MachineDeployments.
pub fn concurrency(cluster: &Cluster) -> usize {
    cluster
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(UPGRADE_CONCURRENCY_ANNOTATION))
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

/// How often a topology in motion is looked at again, beside the events that wake it.
pub const IN_MOTION_RECHECK: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn class(versions: &[&str]) -> ClusterClass {
        let mut cc = ClusterClass::new("cc", Default::default());
        cc.spec.kubernetes_versions = Some(versions.iter().map(|v| v.to_string()).collect());
        cc
    }

    #[test]
    fn the_plan_moves_one_minor_at_a_time_through_the_listed_versions() {
        let cc = class(&["v1.31.0", "v1.32.1", "v1.32.4", "v1.33.2"]);
        assert_eq!(next_step(&cc, "v1.31.0", "v1.33.2"), "v1.32.4");
        assert_eq!(next_step(&cc, "v1.32.4", "v1.33.2"), "v1.33.2");
        assert_eq!(next_step(&class(&[]), "v1.32.0", "v1.33.0"), "v1.33.0");
    }

    #[test]
    fn the_control_plane_waits_until_settled_and_workers_are_done() {
        let cc = class(&[]);
        let cp = json!({"metadata": {"generation": 2}, "spec": {"version": "v1.32.0", "replicas": 3},
            "status": {"observedGeneration": 2, "version": "v1.32.0", "replicas": 3, "upToDateReplicas": 3,
                "initialization": {"controlPlaneInitialized": true}}});
        let settled = ControlPlaneState::of(Some(&cp));
        assert!(settled.stable_at("v1.32.0"));
        assert_eq!(control_plane_version(&cc, "v1.33.0", &settled, false), "v1.33.0");
        assert_eq!(control_plane_version(&cc, "v1.33.0", &settled, true), "v1.32.0", "workers rolling out");
        let mut scaling = cp.clone();
        scaling["status"]["replicas"] = json!(2);
        let busy = ControlPlaneState::of(Some(&scaling));
        assert_eq!(control_plane_version(&cc, "v1.33.0", &busy, false), "v1.32.0");
        assert_eq!(control_plane_version(&cc, "v1.33.0", &ControlPlaneState::of(None), false), "v1.33.0");
    }
}
