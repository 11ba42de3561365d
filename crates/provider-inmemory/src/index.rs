//! Which simulated machines (of one kind) belong to which Cluster, so a Cluster change wakes only its own
//! machines, and only when something they wait for changed (infrastructure ready, control
//! plane initialized, paused). A fleet-wide scan per Cluster event would cost
//! O(machines) for every status write of every Cluster.

use std::collections::{HashMap, HashSet};

use drydock_api::capi::core::v1beta2::Cluster;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use parking_lot::Mutex;

/// What a simulated machine may be waiting for on its Cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    pub infrastructure_ready: bool,
    pub control_plane_initialized: bool,
    pub paused: bool,
}

impl Gate {
    pub fn of(c: &Cluster) -> Self {
        Self {
            infrastructure_ready: c.infrastructure_provisioned(),
            control_plane_initialized: c.control_plane_initialized(),
            paused: crate::cluster_paused(c),
        }
    }
}

#[derive(Default)]
struct Entry {
    machines: HashSet<String>,
    gate: Option<Gate>,
}

/// `(namespace, cluster)` → machine names, plus the last gate seen for the cluster.
#[derive(Default)]
pub struct ClusterMachines {
    inner: Mutex<HashMap<(String, String), Entry>>,
}

impl ClusterMachines {
    pub fn record(&self, namespace: &str, cluster: &str, machine: &str) {
        let mut m = self.inner.lock();
        let e = m.entry((namespace.to_string(), cluster.to_string())).or_default();
        if !e.machines.contains(machine) {
            e.machines.insert(machine.to_string());
        }
    }

    pub fn forget(&self, namespace: &str, cluster: &str, machine: &str) {
        let mut m = self.inner.lock();
        let key = (namespace.to_string(), cluster.to_string());
        if let Some(e) = m.get_mut(&key) {
            e.machines.remove(machine);
        }
    }

    /// The machines to wake for a Cluster event: all of the cluster's machines when its gate
    /// changed since the last event, none otherwise. Names no longer in `store` are dropped,
    /// and so is a Cluster no longer in `clusters` (the event was its deletion).
    pub fn on_cluster<K: Resource<DynamicType = ()> + Clone + 'static>(
        &self,
        cluster: &Cluster,
        clusters: &Store<Cluster>,
        store: &Store<K>,
    ) -> Vec<ObjectRef<K>> {
        let ns = cluster.namespace().unwrap_or_default();
        let gate = Gate::of(cluster);
        let mut m = self.inner.lock();
        let key = (ns.clone(), cluster.name_any());
        if clusters.get(&ObjectRef::new(&key.1).within(&ns)).is_none() {
            m.remove(&key);
            return Vec::new();
        }
        let e = m.entry(key).or_default();
        if e.gate == Some(gate) {
            return Vec::new();
        }
        e.gate = Some(gate);
        e.machines.retain(|n| store.get(&ObjectRef::new(n).within(&ns)).is_some());
        e.machines.iter().map(|n| ObjectRef::new(n).within(&ns)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::inmemory::InMemoryMachine;

    fn cluster(infra: bool) -> Cluster {
        let mut c = Cluster::new("c", Default::default());
        c.metadata.namespace = Some("ns".into());
        c.initialization_mut().infrastructure_provisioned = Some(infra);
        c
    }

    #[test]
    fn wakes_machines_only_when_the_gate_changes() {
        use kube::runtime::watcher::Event;
        let (store, mut writer) = kube::runtime::reflector::store::<InMemoryMachine>();
        let (clusters, mut cw) = kube::runtime::reflector::store::<Cluster>();
        cw.apply_watcher_event(&Event::Apply(cluster(false)));
        let mut m = InMemoryMachine::new("m1", Default::default());
        m.metadata.namespace = Some("ns".into());
        writer.apply_watcher_event(&Event::Apply(m));
        let idx = ClusterMachines::default();
        idx.record("ns", "c", "m1");
        idx.record("ns", "c", "gone");
        let wake = |c: Cluster| idx.on_cluster(&c, &clusters, &store);
        assert_eq!(wake(cluster(false)).len(), 1, "first sight");
        assert!(wake(cluster(false)).is_empty(), "no change");
        assert_eq!(wake(cluster(true)), vec![ObjectRef::new("m1").within("ns")]);
        idx.forget("ns", "c", "m1");
        assert!(wake(cluster(false)).is_empty());
        // The event of a deleted Cluster forgets it.
        idx.record("ns", "c", "m1");
        cw.apply_watcher_event(&Event::Delete(cluster(false)));
        assert!(wake(cluster(true)).is_empty());
        assert!(idx.inner.lock().is_empty());
    }
}
