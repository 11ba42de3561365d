//! Machines by Cluster, fed from the Machine trigger stream, so a reconcile finds its
//! cluster's Machines without scanning every Machine of the fleet. Shared informer streams
//! report updates but not deletions: names whose object left the store are pruned on read.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use drydock_api::capi::core::v1beta2::Machine;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use parking_lot::Mutex;

#[derive(Default)]
pub struct MachineIndex {
    inner: Mutex<HashMap<(String, String), HashSet<String>>>,
}

impl MachineIndex {
    pub fn record(&self, m: &Machine) {
        self.insert(&m.namespace().unwrap_or_default(), &m.spec.cluster_name, &m.name_any());
    }

    pub fn insert(&self, namespace: &str, cluster: &str, machine: &str) {
        let mut g = self.inner.lock();
        let set = g.entry((namespace.to_string(), cluster.to_string())).or_default();
        if !set.contains(machine) {
            set.insert(machine.to_string());
        }
    }

    /// The Machines of `namespace/cluster` currently in `store`, sorted by name.
    pub fn machines(&self, namespace: &str, cluster: &str, store: &Store<Machine>) -> Vec<Arc<Machine>> {
        let mut g = self.inner.lock();
        let key = (namespace.to_string(), cluster.to_string());
        let Some(names) = g.get_mut(&key) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(names.len());
        names.retain(|n| match store.get(&ObjectRef::new(n).within(namespace)) {
            // A Machine cannot move to another cluster (clusterName is immutable).
            Some(m) => {
                out.push(m);
                true
            }
            None => false,
        });
        if names.is_empty() {
            g.remove(&key);
        }
        out.sort_by_key(|m| m.name_any());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::watcher::Event;

    fn machine(name: &str, cluster: &str) -> Machine {
        let mut m = Machine::new(name, Default::default());
        m.metadata.namespace = Some("ns".into());
        m.spec.cluster_name = cluster.into();
        m
    }

    #[test]
    fn finds_and_prunes() {
        let (store, mut w) = kube::runtime::reflector::store::<Machine>();
        let idx = MachineIndex::default();
        for (n, c) in [("b", "c1"), ("a", "c1"), ("x", "c2")] {
            let m = machine(n, c);
            idx.record(&m);
            w.apply_watcher_event(&Event::Apply(m));
        }
        let names = |c: &str| -> Vec<String> { idx.machines("ns", c, &store).iter().map(|m| m.name_any()).collect() };
        assert_eq!(names("c1"), ["a", "b"]);
        w.apply_watcher_event(&Event::Delete(machine("a", "c1")));
        assert_eq!(names("c1"), ["b"]);
        assert_eq!(names("c2"), ["x"]);
        assert!(names("other").is_empty());
    }
}
