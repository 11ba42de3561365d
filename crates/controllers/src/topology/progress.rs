//! Where a planned topology stands, for `TopologyReconciled`: creating, upgrading (the
//! control plane, then the MachineDeployments and MachinePools), deferred, or stable; and
//! the upgrade plans the Cluster reports.

use drydock_api::capi::core::v1beta2::{ClusterClass, Topology};

use super::blueprint::{Current, CurrentWorker};
use super::upgrade::{self, ControlPlaneState, Phase, Progress};
use super::workers::{Names, TopologyWorker, WorkerObject};
use super::{deployments, pools};
use crate::framework::requeue::Requeue;

/// A MachineDeployment or MachinePool of the topology as the progress sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerState {
    pub kind: &'static str,
    pub name: String,
    pub pending_create: bool,
    pub held: bool,
    /// Not at the topology's version yet: asked for an older one, or rolling out.
    pub behind: bool,
}

impl WorkerState {
    /// From what was decided for the worker and the object as it stands.
    pub fn of<T: TopologyWorker, C, K: WorkerObject>(
        n: &Names<'_, T, C>,
        now: Option<&CurrentWorker<K>>,
        target: &str,
    ) -> Self {
        let behind = n.version != target || now.is_some_and(|w| w.behind(target));
        Self {
            kind: T::KIND,
            name: n.topology.name().to_string(),
            pending_create: n.pending_create,
            held: n.held,
            behind,
        }
    }
}

/// `MachineDeployment(s) a, b and MachinePool(s) c`: the workers `pick` selects, by kind.
fn listed(workers: &[WorkerState], pick: impl Fn(&WorkerState) -> bool) -> String {
    let mut parts = Vec::new();
    for kind in ["MachineDeployment", "MachinePool"] {
        let names: Vec<&str> = workers.iter().filter(|w| w.kind == kind && pick(w)).map(|w| w.name.as_str()).collect();
        if !names.is_empty() {
            parts.push(format!("{kind}(s) {}", names.join(", ")));
        }
    }
    parts.join(" and ")
}

fn phase(phase: Phase, requeue: Requeue) -> Progress {
    Progress { phase, requeue, plans: Default::default() }
}

/// Where a plan leaves the topology, with the upgrade plans to report: from the control
/// plane's state and the version asked of it, what was decided for the workers, and the
/// workers as they stand.
pub fn of_plan(
    class: &ClusterClass,
    topology: &Topology,
    (cp, cp_version): (&ControlPlaneState, &str),
    (deployments, pools): (&[deployments::Names<'_>], &[pools::Names<'_>]),
    current: &Current,
) -> Progress {
    let target = topology.version.as_str();
    let mut states: Vec<WorkerState> =
        deployments.iter().map(|n| WorkerState::of(n, current.deployments.get(&n.topology.name), target)).collect();
    states.extend(pools.iter().map(|n| WorkerState::of(n, current.pools.get(&n.topology.name), target)));
    let workers_behind =
        current.deployments.values().any(|d| d.behind(target)) || current.pools.values().any(|p| p.behind(target));
    let plans = upgrade::UpgradePlans::compute(class, cp_version, target, workers_behind);
    Progress { plans, ..progress(topology, cp, cp_version, &states) }
}

/// Where the topology stands after this plan.
pub fn progress(topology: &Topology, cp: &ControlPlaneState, cp_version: &str, workers: &[WorkerState]) -> Progress {
    let again = Requeue::after(upgrade::IN_MOTION_RECHECK);
    let target = topology.version.as_str();
    if !cp.exists || workers.iter().any(|w| w.pending_create) {
        let msg = match workers.iter().any(|w| w.pending_create) {
            false => "creating the control plane".to_string(),
            true => format!("{} wait for the control plane to be initialized", listed(workers, |w| w.pending_create)),
        };
        return phase(Phase::Creating(msg), again);
    }
    if cp_version != target || cp.spec_version.as_deref() != Some(target) {
        return phase(
            Phase::Upgrading(format!("control plane upgrading to {cp_version} on the way to {target}")),
            again,
        );
    }
    if cp.busy {
        return phase(Phase::Upgrading(format!("control plane rolling out {cp_version}")), again);
    }
    let held: Vec<&WorkerState> = workers.iter().filter(|w| w.held).collect();
    if !held.is_empty() && workers.iter().filter(|w| w.behind).all(|w| w.held) {
        let msg = format!("{} upgrade deferred or held", listed(workers, |w| w.held));
        // As upstream's: deferred MachineDeployments are reported before MachinePools.
        let p = match held.iter().any(|w| w.kind == "MachineDeployment") {
            true => Phase::Deferred(msg),
            false => Phase::PoolsDeferred(msg),
        };
        return phase(p, Requeue::await_change());
    }
    if workers.iter().any(|w| w.behind) {
        return phase(Phase::Upgrading(format!("{} upgrading to {target}", listed(workers, |w| w.behind))), again);
    }
    phase(Phase::Stable, Requeue::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(kind: &'static str, name: &str, held: bool, behind: bool) -> WorkerState {
        WorkerState { kind, name: name.into(), pending_create: false, held, behind }
    }

    fn settled() -> ControlPlaneState {
        ControlPlaneState { exists: true, spec_version: Some("v1.33.0".into()), initialized: true, busy: false }
    }

    fn topology() -> Topology {
        Topology { version: "v1.33.0".into(), ..Default::default() }
    }

    #[test]
    fn pools_and_deployments_are_named_by_kind() {
        let mut pending = worker("MachinePool", "mp-0", false, false);
        pending.pending_create = true;
        let ws = [worker("MachineDeployment", "md-0", false, false), pending];
        let p = progress(&topology(), &settled(), "v1.33.0", &ws);
        assert_eq!(p.phase, Phase::Creating("MachinePool(s) mp-0 wait for the control plane to be initialized".into()));
        let ws = [worker("MachineDeployment", "md-0", false, true), worker("MachinePool", "mp-0", false, true)];
        let p = progress(&topology(), &settled(), "v1.33.0", &ws);
        assert_eq!(
            p.phase,
            Phase::Upgrading("MachineDeployment(s) md-0 and MachinePool(s) mp-0 upgrading to v1.33.0".into())
        );
    }

    #[test]
    fn held_pools_alone_are_reported_as_pools_deferred() {
        let ws = [worker("MachineDeployment", "md-0", false, false), worker("MachinePool", "mp-0", true, true)];
        let p = progress(&topology(), &settled(), "v1.33.0", &ws);
        assert_eq!(p.phase, Phase::PoolsDeferred("MachinePool(s) mp-0 upgrade deferred or held".into()));
        let ws = [worker("MachineDeployment", "md-0", true, true), worker("MachinePool", "mp-0", true, true)];
        assert!(matches!(progress(&topology(), &settled(), "v1.33.0", &ws).phase, Phase::Deferred(_)));
        let ws = [worker("MachineDeployment", "md-0", false, true), worker("MachinePool", "mp-0", true, true)];
        assert!(matches!(progress(&topology(), &settled(), "v1.33.0", &ws).phase, Phase::Upgrading(_)));
    }
}
