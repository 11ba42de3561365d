//! Which Machine changes wake their MachineSet at once, and which only refresh its summary.
//!
//! A set acts at once on what changes its decisions: a Machine appearing, going, being
//! marked for deletion, changing owner or labels. A Machine's progress (its status) only
//! moves the set's counters and rolled-up conditions, unless the set is part of a rollout
//! (its MachineDeployment has other sets), where the deployment waits on those counters to
//! take its next step. Progress outside a rollout goes through [`Coalesce`]: a burst of
//! Machine steps makes one reconcile and one status write.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use drydock_api::capi::core::v1beta2::{Machine, MachineSet};
use drydock_api::capi::owner;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::framework::cluster_index::ClusterIndex;
use crate::framework::coalesce::{self, Coalesce};
use crate::framework::index::Changes;
use crate::framework::machine_template::deployment_name;
use crate::framework::select::owners_of;

/// What a set acts on at once from one of its Machines.
#[derive(Clone, PartialEq)]
struct Gate {
    deleting: bool,
    controller: Option<String>,
    /// A hash of the labels (selection and adoption read them).
    labels: u64,
}

impl Gate {
    fn of(m: &Machine) -> Self {
        let mut h = DefaultHasher::new();
        m.metadata.labels.hash(&mut h);
        Self {
            deleting: m.metadata.deletion_timestamp.is_some(),
            controller: owner::get_controller(&m.metadata).map(|c| c.uid.clone()),
            labels: h.finish(),
        }
    }
}

/// Maps a Machine's changes to the sets they concern, now or when their window ends.
pub struct Wake {
    machines: Arc<ClusterIndex<Machine>>,
    sets: Arc<ClusterIndex<MachineSet>>,
    machine_store: Store<Machine>,
    set_store: Store<MachineSet>,
    gates: Changes<Gate>,
    summaries: Arc<Coalesce<MachineSet>>,
}

impl Wake {
    /// The mapper and the stream of the triggers it held back (for `reconcile_on`).
    pub fn new(
        machines: &Arc<ClusterIndex<Machine>>,
        sets: &Arc<ClusterIndex<MachineSet>>,
        machine_store: Store<Machine>,
        set_store: Store<MachineSet>,
    ) -> (Arc<Self>, impl futures::Stream<Item = ObjectRef<MachineSet>> + Send + 'static) {
        let (summaries, held) = Coalesce::new(coalesce::SUMMARY);
        let this = Self {
            machines: machines.clone(),
            sets: sets.clone(),
            machine_store,
            set_store,
            gates: Changes::default(),
            summaries,
        };
        (Arc::new(this), held)
    }

    /// The sets to reconcile now for a change of `m`; the others are held back.
    pub fn sets_of(&self, m: &Machine) -> Vec<ObjectRef<MachineSet>> {
        self.machines.observe(m);
        let owners = owners_of(m, "MachineSet", &self.sets);
        if owners.is_empty() {
            return owners;
        }
        let gone = self.machine_store.get(&ObjectRef::from_obj(m)).is_none();
        let changed = self.gates.changed_in(&self.machine_store, m, Gate::of(m));
        if gone || changed || owners.iter().any(|r| self.rolling_out(r)) {
            owners
        } else {
            self.summaries.later(owners)
        }
    }

    /// Whether `set` is one of several sets of its MachineDeployment (or not in the cache).
    fn rolling_out(&self, set: &ObjectRef<MachineSet>) -> bool {
        let Some(ms) = self.set_store.get(set) else { return true };
        let Some(deployment) = deployment_name(&ms) else { return false };
        let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
        self.sets.list(ns, &ms.spec.cluster_name).iter().filter(|s| deployment_name(s) == Some(deployment)).count() > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::informer::Listed;
    use drydock_api::capi::core::v1beta2::{MachineSetSpec, MachineSpec, MachineStatus};
    use futures::StreamExt;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher::Event;
    use std::time::Duration;

    fn owned_by(kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller: Some(true),
            ..Default::default()
        }
    }

    fn set(name: &str) -> MachineSet {
        let mut ms = MachineSet::new(name, MachineSetSpec { cluster_name: "c".into(), ..Default::default() });
        ms.metadata.namespace = Some("ns".into());
        ms.metadata.owner_references = Some(vec![owned_by("MachineDeployment", "d")]);
        ms
    }

    fn machine(phase: &str) -> Machine {
        let mut m = Machine::new("m", MachineSpec { cluster_name: "c".into(), ..Default::default() });
        m.metadata.namespace = Some("ns".into());
        m.metadata.owner_references = Some(vec![owned_by("MachineSet", "a")]);
        m.status = Some(MachineStatus { phase: Some(phase.into()), ..Default::default() });
        m
    }

    #[tokio::test(start_paused = true)]
    async fn progress_outside_a_rollout_waits_for_its_window_and_the_rest_wakes_at_once() {
        let (mut machines, mut sets) = (Writer::<Machine>::default(), Writer::<MachineSet>::default());
        let machine_index = ClusterIndex::new(machines.as_reader(), Listed::channel().1);
        let set_index = ClusterIndex::new(sets.as_reader(), Listed::channel().1);
        let (wake, held) = Wake::new(&machine_index, &set_index, machines.as_reader(), sets.as_reader());
        let mut held = Box::pin(held);
        let mut change = |m: &Machine| {
            machines.apply_watcher_event(&Event::Apply(m.clone()));
            wake.sets_of(m)
        };
        let a = ObjectRef::new("a").within("ns");
        sets.apply_watcher_event(&Event::Apply(set("a")));
        set_index.observe(&set("a"));

        assert_eq!(change(&machine("Pending")), std::slice::from_ref(&a), "a new Machine wakes its set at once");
        assert!(change(&machine("Provisioning")).is_empty(), "progress is held back");
        let started = tokio::time::Instant::now();
        assert_eq!(held.next().await, Some(a.clone()));
        assert_eq!(started.elapsed(), Duration::from_millis(500), "a lone window is quiet");

        let mut deleting = machine("Provisioning");
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(change(&deleting), std::slice::from_ref(&a), "a Machine marked for deletion wakes it at once");

        // A second set of the deployment: a rollout, whose steps wait on the counters.
        sets.apply_watcher_event(&Event::Apply(set("b")));
        set_index.observe(&set("b"));
        let mut running = deleting.clone();
        running.status = Some(MachineStatus { phase: Some("Running".into()), ..Default::default() });
        assert_eq!(change(&running), std::slice::from_ref(&a), "progress during a rollout wakes it at once");

        machines.apply_watcher_event(&Event::Delete(running.clone()));
        assert_eq!(wake.sets_of(&running), [a], "a Machine gone wakes it at once");
        let more = tokio::time::timeout(Duration::from_secs(5), held.next()).await;
        assert!(more.is_err(), "nothing else was held back: {more:?}");
    }
}
