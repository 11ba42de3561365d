//! What must hold however the fleet is hurt, checked on every Machine event:
//!
//! - no duplicate Machine: a cluster's live Machines never share an infrastructure machine
//!   or a Node;
//! - etcd quorum kept: once a control plane ran all its machines, a majority of them stays
//!   Running (remediation and rollouts take one at a time, and only when safe);
//! - maxUnavailable respected: during a rollout, a cluster never has fewer Running workers
//!   than wanted (the bench's MachineDeployments roll with maxUnavailable 0);
//! - no healthy Machine replaced: while the fleet provisions, only Machines the schedule
//!   struck are deleted (an unreachable API server, a leader change or an API error is no
//!   reason to replace one);
//!
//! and at the end of a phase: no orphaned infrastructure machine (each belongs to a live
//! Machine) and no lost or extra Machine (each cluster has exactly the Machines wanted).

use std::collections::{BTreeMap, HashMap, HashSet};

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_controllers::framework::objects::is_control_plane;
use serde::Serialize;

/// The phase under way: which invariants apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    #[default]
    Provision,
    Upgrade,
    /// Deleting the fleet: nothing is expected to stay up.
    Delete,
}

const NO_DUPLICATE: &str = "no duplicate Machine";
const QUORUM: &str = "etcd quorum kept";
const MAX_UNAVAILABLE: &str = "maxUnavailable respected in rollouts";
const NO_ORPHAN: &str = "no orphaned infrastructure machine";
const NONE_LOST: &str = "no lost or extra Machine";
const NO_NEEDLESS: &str = "no healthy Machine replaced";
const ALL: [&str; 6] = [NO_DUPLICATE, QUORUM, MAX_UNAVAILABLE, NO_NEEDLESS, NO_ORPHAN, NONE_LOST];

/// One invariant's record.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    pub name: &'static str,
    /// How many times it was checked (0: the run never exercised it).
    pub checks: u64,
    pub violations: u64,
    /// The first violations, described.
    pub examples: Vec<String>,
}

#[derive(Clone, Debug)]
struct Seen {
    control_plane: bool,
    running: bool,
    deleting: bool,
    infra: String,
    node: Option<String>,
}

#[derive(Default)]
pub struct Invariants {
    phase: Phase,
    control_plane: usize,
    workers: usize,
    /// cluster → machine → what its last event showed.
    machines: HashMap<String, HashMap<String, Seen>>,
    /// Clusters whose control plane ran all its machines.
    quorate: HashSet<String>,
    records: BTreeMap<&'static str, Checked>,
}

impl Invariants {
    /// A new phase, for clusters of `control_plane` and `workers` machines.
    pub fn start(&mut self, phase: Phase, control_plane: usize, workers: usize) {
        (self.phase, self.control_plane, self.workers) = (phase, control_plane, workers);
        for name in ALL {
            self.records.entry(name).or_insert(Checked { name, checks: 0, violations: 0, examples: Vec::new() });
        }
    }

    fn record(&mut self, name: &'static str, holds: bool, what: impl FnOnce() -> String) {
        let r = self.records.entry(name).or_insert(Checked { name, checks: 0, violations: 0, examples: Vec::new() });
        r.checks += 1;
        if !holds {
            r.violations += 1;
            if r.examples.len() < 5 {
                r.examples.push(what());
            }
        }
    }

    pub fn observe(&mut self, m: &Machine, deleted: bool) {
        let name = m.metadata.name.clone().unwrap_or_default();
        let cluster = m.spec.cluster_name.clone();
        let machines = self.machines.entry(cluster.clone()).or_default();
        if deleted {
            machines.remove(&name);
        } else {
            let seen = Seen {
                control_plane: is_control_plane(m),
                running: m.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"),
                deleting: m.metadata.deletion_timestamp.is_some(),
                infra: m.spec.infrastructure_ref.name.clone(),
                node: m.status.as_ref().and_then(|s| s.node_ref.as_ref()).map(|n| n.name.clone()),
            };
            machines.insert(name, seen);
        }
        if self.phase != Phase::Delete {
            self.check_cluster(&cluster);
        }
    }

    /// A Machine of `cluster` went; `faulted`: the schedule struck it (`why` says more when
    /// it did not).
    pub fn replaced(&mut self, cluster: &str, machine: &str, faulted: bool, why: &str) {
        if self.phase == Phase::Provision {
            self.record(NO_NEEDLESS, faulted, || format!("{cluster}: {machine} was deleted with no fault on it{why}"));
        }
    }

    fn check_cluster(&mut self, cluster: &str) {
        let Some(machines) = self.machines.get(cluster) else { return };
        let live: Vec<&Seen> = machines.values().filter(|s| !s.deleting).collect();
        let infra: HashSet<&str> = live.iter().map(|s| s.infra.as_str()).collect();
        let nodes: Vec<&str> = live.iter().filter_map(|s| s.node.as_deref()).collect();
        let unique_nodes = nodes.iter().collect::<HashSet<_>>().len() == nodes.len();
        let duplicate_free = infra.len() == live.len() && unique_nodes;
        let up = |cp: bool| live.iter().filter(|s| s.control_plane == cp && s.running).count();
        let (cp_up, workers_up) = (up(true), up(false));
        let (want_cp, want_workers, phase) = (self.control_plane, self.workers, self.phase);
        self.record(NO_DUPLICATE, duplicate_free, || {
            format!("{cluster}: live Machines share an infrastructure machine or a Node")
        });
        if cp_up >= want_cp {
            self.quorate.insert(cluster.to_string());
        }
        if self.quorate.contains(cluster) {
            let majority = want_cp / 2 + 1;
            self.record(QUORUM, cp_up >= majority, || {
                format!("{cluster}: {cp_up} of {want_cp} control plane Machines Running")
            });
        }
        if phase == Phase::Upgrade {
            self.record(MAX_UNAVAILABLE, workers_up >= want_workers, || {
                format!("{cluster}: {workers_up} of {want_workers} workers Running during the rollout")
            });
        }
    }

    /// The end-of-phase checks, from full lists of Machines and infrastructure machines.
    pub fn check_end(&mut self, machines: &[Machine], infra: &[InMemoryMachine], per_cluster: usize) {
        let live: HashSet<&str> = machines.iter().filter_map(|m| m.metadata.name.as_deref()).collect();
        // One whose deletion has begun is on its way out with its Machine.
        for i in infra.iter().filter(|i| i.metadata.deletion_timestamp.is_none()) {
            let owner = i.metadata.owner_references.iter().flatten().find(|o| o.kind == "Machine");
            let name = i.metadata.name.clone().unwrap_or_default();
            let owned = owner.is_some_and(|o| live.contains(o.name.as_str()));
            self.record(NO_ORPHAN, owned, || format!("InMemoryMachine {name} has no live Machine"));
        }
        let mut per: BTreeMap<&str, usize> = BTreeMap::new();
        for m in machines.iter().filter(|m| m.metadata.deletion_timestamp.is_none()) {
            *per.entry(m.spec.cluster_name.as_str()).or_default() += 1;
        }
        for (cluster, n) in per {
            self.record(NONE_LOST, n == per_cluster, || format!("{cluster}: {n} Machines, {per_cluster} wanted"));
        }
    }

    pub fn checked(&self) -> Vec<Checked> {
        self.records.values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{MachineNodeReference, MachineStatus};
    use drydock_api::capi::keys::CONTROL_PLANE_LABEL;

    fn machine(name: &str, cp: bool, running: bool, infra: &str, node: Option<&str>) -> Machine {
        let mut m = Machine::new(name, Default::default());
        m.spec.cluster_name = "c".into();
        m.spec.infrastructure_ref.name = infra.into();
        if cp {
            m.metadata.labels = Some([(CONTROL_PLANE_LABEL.to_string(), String::new())].into());
        }
        let node_ref = node.map(|n| MachineNodeReference { name: n.into() });
        let phase = Some(if running { "Running" } else { "Provisioning" }.to_string());
        m.status = Some(MachineStatus { phase, node_ref, ..Default::default() });
        m
    }

    fn violations(inv: &Invariants, name: &str) -> u64 {
        inv.checked().iter().find(|c| c.name == name).map_or(0, |c| c.violations)
    }

    #[test]
    fn duplicates_and_a_lost_quorum_are_caught() {
        let mut inv = Invariants::default();
        inv.start(Phase::Provision, 3, 0);
        for (i, n) in ["a", "b", "c"].iter().enumerate() {
            inv.observe(&machine(n, true, true, &format!("i{i}"), Some(n)), false);
        }
        assert_eq!(violations(&inv, QUORUM), 0);
        inv.observe(&machine("d", true, false, "i0", None), false);
        assert_eq!(violations(&inv, NO_DUPLICATE), 1, "two Machines on one infrastructure machine");
        inv.observe(&machine("d", true, false, "i0", None), true);
        inv.observe(&machine("a", true, false, "i0", Some("a")), false);
        assert_eq!(violations(&inv, QUORUM), 0, "two of three still run");
        inv.observe(&machine("b", true, false, "i1", Some("b")), false);
        assert_eq!(violations(&inv, QUORUM), 1, "one of three");
        inv.replaced("c", "b", true, "");
        assert_eq!(violations(&inv, NO_NEEDLESS), 0, "a struck Machine may go");
        inv.replaced("c", "a", false, "");
        assert_eq!(violations(&inv, NO_NEEDLESS), 1, "a healthy one may not");
        inv.start(Phase::Delete, 3, 0);
        inv.observe(&machine("c", true, false, "i2", Some("c")), false);
        inv.replaced("c", "c", false, "");
        assert_eq!(violations(&inv, QUORUM), 1, "deleting the fleet is not a violation");
        assert_eq!(violations(&inv, NO_NEEDLESS), 1, "nor is deleting its Machines");
    }
}
