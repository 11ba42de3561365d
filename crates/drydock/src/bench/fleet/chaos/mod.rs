//! `drydock bench --chaos PROFILE --seed N`: faults drawn from a profile ([`schedule`])
//! injected into the fleet as it provisions, MachineHealthChecks that remediate them, and
//! invariants checked on every Machine event ([`invariants`]). The run converges once every
//! scheduled fault struck, every faulted Machine was replaced and every cluster is ready.

mod invariants;
pub mod schedule;
pub mod setup;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_controllers::framework::objects::is_control_plane;
use kube::api::{Api, Patch, PatchParams};
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::json;

use self::invariants::Invariants;
pub use self::invariants::Phase;
use self::schedule::{Fault, Planned, Profile, Role, Spell};
use crate::api_faults::ApiFaults;

/// A client of a workload cluster (by Cluster name), acting as its own components do.
pub type Workload = Arc<dyn Fn(&str) -> kube::Client + Send + Sync>;

/// The fault annotation of the in-memory provider.
const FAULT_ANNOTATION: &str = "infrastructure.drydock.dev/fault";

/// A chaos run: its schedule, and what happened so far.
pub struct Chaos {
    pub profile: Profile,
    pub seed: u64,
    pub planned: Vec<Planned>,
    /// When the controllers restart, from the start of provisioning.
    pub restarts: Vec<std::time::Duration>,
    /// Workload clusters whose API server goes out of reach for a while.
    pub spells: Vec<Spell>,
    /// Errors and latency on the controllers' API calls, unreachable workload clusters.
    api_faults: Option<Arc<ApiFaults>>,
    /// (cluster, role, ordinal) → index in `planned`.
    index: HashMap<(String, Role, usize), usize>,
    /// cluster → index in `spells`.
    spell_index: HashMap<String, usize>,
    machines: Api<InMemoryMachine>,
    workload: Workload,
    state: Mutex<State>,
}

/// What a chaos run draws from its profile and seed.
pub struct Drawn {
    pub planned: Vec<Planned>,
    pub restarts: Vec<std::time::Duration>,
    pub spells: Vec<Spell>,
}

#[derive(Default)]
struct State {
    /// Machines seen per (cluster, role), in order: the ordinal of the next one.
    seen: HashMap<(String, Role), usize>,
    /// Machines already numbered.
    numbered: HashSet<String>,
    /// Machine name → index in `planned` of its fault.
    assigned: HashMap<String, usize>,
    /// Planned faults whose injection has begun.
    started: HashSet<usize>,
    /// Planned faults injected.
    injected: HashSet<usize>,
    /// Planned faults whose Machine went before they struck (a rollout or a remediation
    /// for another reason took it): nothing left to strike.
    moot: HashSet<usize>,
    /// Faulted Machines not deleted yet.
    alive: HashSet<String>,
    /// Unreachable spells begun, and over.
    spells_begun: HashSet<usize>,
    spells_over: HashSet<usize>,
    remediated: usize,
    restarted: usize,
    invariants: Invariants,
}

/// What a chaos run reports, printed and in the JSON.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub profile: String,
    pub seed: u64,
    /// Digest of the schedule: the same seed gives the same digest.
    pub schedule_digest: String,
    pub scheduled: BTreeMap<String, usize>,
    pub injected: BTreeMap<String, usize>,
    /// Faults whose Machine went (a rollout or another remediation) before they struck.
    pub moot: BTreeMap<String, usize>,
    /// Machines with a lasting fault (failed provisioning, NotReady, Unknown) the health
    /// checks had replaced.
    pub remediated: usize,
    /// Controller restarts scheduled and done.
    pub controller_restarts: (usize, usize),
    /// The controllers' API calls answered 503, and delayed.
    pub api_calls_failed: u64,
    pub api_calls_delayed: u64,
    /// Workload clusters out of reach for a spell (scheduled, over), and the controllers'
    /// calls refused meanwhile.
    pub unreachable_spells: (usize, usize),
    pub unreachable_calls: u64,
    pub invariants: Vec<invariants::Checked>,
}

impl Chaos {
    pub fn new(
        profile: Profile,
        seed: u64,
        drawn: Drawn,
        api_faults: Option<Arc<ApiFaults>>,
        client: &kube::Client,
        workload: Workload,
    ) -> Arc<Self> {
        let Drawn { planned, restarts, spells } = drawn;
        let machines = Api::namespaced(client.clone(), "default");
        let index = planned.iter().enumerate().map(|(i, p)| ((p.cluster.clone(), p.role, p.ordinal), i)).collect();
        let spell_index = spells.iter().enumerate().map(|(i, s)| (s.cluster.clone(), i)).collect();
        let state = Mutex::new(State::default());
        Arc::new(Self {
            profile,
            seed,
            planned,
            restarts,
            spells,
            api_faults,
            index,
            spell_index,
            machines,
            workload,
            state,
        })
    }

    /// Records that the controllers restarted.
    pub fn restarted(&self) {
        self.state.lock().restarted += 1;
    }

    pub fn set_phase(&self, phase: Phase, control_plane: usize, workers: usize) {
        self.state.lock().invariants.start(phase, control_plane, workers);
    }

    /// Follows one Machine event: numbers new Machines, starts the faults due, counts
    /// remediations, and checks the invariants.
    pub fn observe(self: &Arc<Self>, m: &Machine, deleted: bool) {
        let name = m.metadata.name.clone().unwrap_or_default();
        let cluster = m.spec.cluster_name.clone();
        let role = if is_control_plane(m) { Role::ControlPlane } else { Role::Worker };
        let mut st = self.state.lock();
        st.invariants.observe(m, deleted);
        if deleted {
            let lasting = st.alive.remove(&name);
            if lasting {
                st.remediated += 1;
            }
            let assigned = st.assigned.get(&name).copied();
            if let Some(i) = assigned.filter(|i| !st.injected.contains(i)) {
                st.moot.insert(i);
            }
            // Struck, or striking (the Machine may go before the strike is recorded): a
            // fault is on it. A fault that has not begun to strike is not.
            let struck = assigned.is_some_and(|i| st.started.contains(&i));
            let why = match assigned {
                Some(i) if !struck => format!(" (its {} had not struck yet)", self.planned[i].fault.name()),
                _ => String::new(),
            };
            st.invariants.replaced(&cluster, &name, lasting || struck, &why);
            return;
        }
        let running = m.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        if role == Role::ControlPlane && running {
            self.begin_spell(&mut st, &cluster);
        }
        if st.numbered.insert(name.clone()) {
            let key = (cluster, role);
            let ordinal = st.seen.get(&key).copied().unwrap_or(0);
            if let Some(&i) = self.index.get(&(key.0.clone(), key.1, ordinal)) {
                st.assigned.insert(name.clone(), i);
            }
            st.seen.insert(key, ordinal + 1);
        }
        let Some(&i) = st.assigned.get(&name) else { return };
        let p = &self.planned[i];
        let due = p.fault.at_creation() || running;
        if !due || st.started.contains(&i) || m.metadata.deletion_timestamp.is_some() {
            return;
        }
        st.started.insert(i);
        let infra = m.spec.infrastructure_ref.name.clone();
        let chaos = self.clone();
        tokio::spawn(async move { chaos.inject(i, name, infra).await });
    }

    /// Strikes planned fault `i` on Machine `machine` (infrastructure machine `infra`)
    /// once its delay passed; the infrastructure machine may still be on its way.
    async fn inject(&self, i: usize, machine: String, infra: String) {
        let p = &self.planned[i];
        tokio::time::sleep(p.after).await;
        let annotate =
            |value: Option<&str>| Patch::Merge(json!({"metadata": {"annotations": {FAULT_ANNOTATION: value}}}));
        let struck = match p.fault {
            Fault::SlowStart => {
                let slow = json!({"startupDuration": self.profile.slow_start});
                self.patch(&infra, &Patch::Merge(json!({"spec": {"behaviour": {"vm": {"provisioning": slow}}}}))).await
            }
            Fault::NodeFlapping => self.flap(&infra, &annotate).await,
            Fault::EtcdLeaderChange => self.elect(&p.cluster, &infra).await,
            fault => self.patch(&infra, &annotate(fault.lasting_annotation())).await,
        };
        if struck {
            let mut st = self.state.lock();
            st.injected.insert(i);
            // A Machine that went while the fault struck is not waiting for a replacement;
            // the fault counts as struck, not moot.
            let gone = st.moot.remove(&i);
            if p.fault.lasting_annotation().is_some() && !gone {
                st.alive.insert(machine);
            }
        }
    }

    /// Starts the unreachable spell of `cluster`, if it has one not begun yet.
    fn begin_spell(self: &Arc<Self>, st: &mut State, cluster: &str) {
        let (Some(&i), Some(faults)) = (self.spell_index.get(cluster), self.api_faults.clone()) else { return };
        if !st.spells_begun.insert(i) {
            return;
        }
        let chaos = self.clone();
        tokio::spawn(async move {
            let spell = &chaos.spells[i];
            tokio::time::sleep(spell.after).await;
            let lc = drydock_api::tenancy::LogicalClusterName::for_cluster("default", &spell.cluster);
            faults.cut_off(lc.as_str(), spell.lasting);
            tokio::time::sleep(spell.lasting).await;
            chaos.state.lock().spells_over.insert(i);
        });
    }

    /// The etcd member on node `node` of `cluster` wins an election (retrying, up to a
    /// minute, while the member is not there yet).
    async fn elect(&self, cluster: &str, node: &str) -> bool {
        let client = (self.workload)(cluster);
        for _ in 0..600 {
            match drydock_controllers::etcd::move_leader(&client, node).await {
                Ok(()) => return true,
                Err(e) if e.is_not_found() => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                Err(e) => {
                    tracing::warn!(error = %e, cluster, node, "chaos: moving etcd leadership failed; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
            }
        }
        tracing::warn!(cluster, node, "chaos: gave up moving etcd leadership");
        false
    }

    /// NotReady for a spell and back, as often as the profile says.
    async fn flap(&self, infra: &str, annotate: &impl Fn(Option<&str>) -> Patch<serde_json::Value>) -> bool {
        let f = &self.profile.flapping;
        let spell = schedule::duration(&f.spell).unwrap_or(std::time::Duration::from_secs(1));
        for _ in 0..f.times {
            if !self.patch(infra, &annotate(Some("node-not-ready"))).await {
                return false;
            }
            tokio::time::sleep(spell).await;
            if !self.patch(infra, &annotate(None)).await {
                return false;
            }
            tokio::time::sleep(spell).await;
        }
        true
    }

    /// Patches an infrastructure machine, waiting (up to a minute) for it to exist. False
    /// when it never did, or went.
    async fn patch(&self, infra: &str, patch: &Patch<serde_json::Value>) -> bool {
        for _ in 0..600 {
            match self.machines.patch(infra, &PatchParams::default(), patch).await {
                Ok(_) => return true,
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, machine = %infra, "chaos: injecting a fault failed; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
            }
        }
        tracing::warn!(machine = %infra, "chaos: gave up injecting a fault");
        false
    }

    /// Every scheduled fault struck (or its Machine went first), every faulted Machine was
    /// replaced, every unreachable spell is over, and the controllers restarted as often as
    /// scheduled.
    pub fn settled(&self) -> bool {
        let st = self.state.lock();
        st.injected.len() + st.moot.len() == self.planned.len()
            && st.alive.is_empty()
            && st.restarted == self.restarts.len()
            && st.spells_over.len() == self.spells.len()
    }

    /// `(injected, scheduled)`, for progress messages.
    pub fn progress(&self) -> (usize, usize) {
        (self.state.lock().injected.len(), self.planned.len())
    }

    /// What keeps the run from settling: faults not struck (and whether their Machine was
    /// seen, started, gone) and faulted Machines not replaced.
    pub fn pending(&self) -> String {
        let st = self.state.lock();
        let mut out: Vec<String> = Vec::new();
        let pending = |i: &usize| !st.injected.contains(i) && !st.moot.contains(i);
        for (i, p) in self.planned.iter().enumerate().filter(|(i, _)| pending(i)) {
            let machine = st.assigned.iter().find(|(_, j)| **j == i).map(|(m, _)| m.as_str());
            let started = st.started.contains(&i);
            out.push(format!(
                "{} {:?} #{} {} (machine {}, {})",
                p.cluster,
                p.role,
                p.ordinal,
                p.fault.name(),
                machine.unwrap_or("not seen"),
                if started { "striking" } else { "waiting" }
            ));
        }
        out.extend(st.alive.iter().map(|m| format!("{m} faulted, not replaced")));
        for (i, spell) in self.spells.iter().enumerate().filter(|(i, _)| !st.spells_over.contains(i)) {
            let state = if st.spells_begun.contains(&i) { "under way" } else { "waiting for a running control plane" };
            out.push(format!("{} unreachable spell {state}", spell.cluster));
        }
        out.join("; ")
    }

    /// Checks that hold at the end of a phase (no orphaned infrastructure, no lost or extra
    /// Machine), recorded with the rest.
    pub async fn check_end(&self, client: &kube::Client, per_cluster: usize) -> anyhow::Result<()> {
        let machines: Api<Machine> = Api::namespaced(client.clone(), "default");
        let machines = machines.list(&Default::default()).await?.items;
        let infra = self.machines.list(&Default::default()).await?.items;
        self.state.lock().invariants.check_end(&machines, &infra, per_cluster);
        Ok(())
    }

    pub fn report(&self) -> Report {
        let st = self.state.lock();
        let mut scheduled = BTreeMap::new();
        let mut injected = BTreeMap::new();
        let mut moot = BTreeMap::new();
        for (i, p) in self.planned.iter().enumerate() {
            let key = p.fault.name().to_string();
            *scheduled.entry(key.clone()).or_default() += 1;
            if st.injected.contains(&i) {
                *injected.entry(key).or_default() += 1;
            } else if st.moot.contains(&i) {
                *moot.entry(key).or_default() += 1;
            }
        }
        Report {
            profile: self.profile.name.clone(),
            seed: self.seed,
            schedule_digest: schedule::digest(&self.planned, &self.restarts, &self.spells),
            scheduled,
            injected,
            moot,
            remediated: st.remediated,
            controller_restarts: (self.restarts.len(), st.restarted),
            api_calls_failed: self.api_faults.as_ref().map_or(0, |f| f.errors.load(Ordering::Relaxed)),
            api_calls_delayed: self.api_faults.as_ref().map_or(0, |f| f.delays.load(Ordering::Relaxed)),
            unreachable_spells: (self.spells.len(), st.spells_over.len()),
            unreachable_calls: self.api_faults.as_ref().map_or(0, |f| f.unreachable.load(Ordering::Relaxed)),
            invariants: st.invariants.checked(),
        }
    }
}
