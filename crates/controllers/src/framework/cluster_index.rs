//! An index of cached objects by namespace and cluster name, so a reconcile looks at the
//! few objects of its own cluster instead of scanning every cached object of the kind
//! (40,000 Machines at fleet scale, scanned on every MachineSet reconcile, would cost
//! more CPU than everything else the controller does).
//!
//! The store stays the truth: the index only names candidates, each is looked up in the
//! store, and names no longer there are dropped while reading (so a deletion needs no
//! bookkeeping of its own). The cluster name used is `spec.clusterName`, which admission
//! makes immutable, so an object never changes bucket.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use parking_lot::Mutex;

use super::informer::Listed;

/// Objects that belong to a cluster (spec.clusterName).
pub trait ClusterScoped {
    fn cluster_name(&self) -> &str;
}

impl ClusterScoped for drydock_api::capi::core::v1beta2::Machine {
    fn cluster_name(&self) -> &str {
        &self.spec.cluster_name
    }
}

impl ClusterScoped for drydock_api::capi::core::v1beta2::MachineSet {
    fn cluster_name(&self) -> &str {
        &self.spec.cluster_name
    }
}

impl ClusterScoped for drydock_api::capi::core::v1beta2::MachineDeployment {
    fn cluster_name(&self) -> &str {
        &self.spec.cluster_name
    }
}

type Key = (String, String);

/// Names of cached objects per (namespace, cluster name).
pub struct ClusterIndex<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    listed: Listed,
    buckets: Mutex<HashMap<Key, BTreeSet<String>>>,
    seeded: AtomicBool,
}

impl<K> ClusterIndex<K>
where
    K: Resource<DynamicType = ()> + ClusterScoped + Clone + 'static,
{
    /// The index of `store`, seeded once `listed` says its initial list is loaded.
    pub fn new(store: Store<K>, listed: Listed) -> Arc<Self> {
        Arc::new(Self { store, listed, buckets: Mutex::new(HashMap::new()), seeded: AtomicBool::new(false) })
    }

    /// Records an object seen on a watch stream.
    pub fn observe(&self, obj: &K) {
        let (Some(ns), Some(name)) = (obj.meta().namespace.as_ref(), obj.meta().name.as_ref()) else {
            return;
        };
        let key = (ns.clone(), obj.cluster_name().to_string());
        let mut buckets = self.buckets.lock();
        let bucket = buckets.entry(key).or_default();
        if !bucket.contains(name) {
            bucket.insert(name.clone());
        }
    }

    /// A stream step that records every object it passes on (for a controller's trigger
    /// stream).
    pub fn recorder(self: &Arc<Self>) -> impl FnMut(Arc<K>) -> Arc<K> + Send + 'static
    where
        K: Send + Sync,
    {
        let index = self.clone();
        move |obj| {
            index.observe(&obj);
            obj
        }
    }

    /// Fills the index from the store once its initial list is loaded. Objects arriving
    /// later are recorded through [`ClusterIndex::observe`]; seeding covers reconciles that
    /// run before the watch stream delivered the initial list to this controller.
    pub async fn ensure_seeded(&self) {
        if self.seeded.load(Ordering::Acquire) {
            return;
        }
        self.listed.wait().await;
        if self.seeded.swap(true, Ordering::AcqRel) {
            return;
        }
        for obj in self.store.state() {
            self.observe(&obj);
        }
    }

    /// The cached objects of `cluster` in `namespace`.
    pub fn list(&self, namespace: &str, cluster: &str) -> Vec<Arc<K>> {
        let key = (namespace.to_string(), cluster.to_string());
        let mut buckets = self.buckets.lock();
        let Some(bucket) = buckets.get_mut(&key) else {
            return Vec::new();
        };
        let mut found = Vec::with_capacity(bucket.len());
        bucket.retain(|name| match self.store.get(&ObjectRef::new(name).within(namespace)) {
            Some(obj) => {
                found.push(obj);
                true
            }
            None => false,
        });
        if bucket.is_empty() {
            buckets.remove(&key);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::Machine;
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher::Event;

    fn machine(ns: &str, name: &str, cluster: &str) -> Machine {
        let mut m = Machine::new(
            name,
            drydock_api::capi::core::v1beta2::MachineSpec { cluster_name: cluster.into(), ..Default::default() },
        );
        m.metadata.namespace = Some(ns.into());
        m
    }

    #[tokio::test]
    async fn lists_by_cluster_and_forgets_deleted_objects() {
        let mut writer: Writer<Machine> = Writer::default();
        let (raise, listed) = Listed::channel();
        let index = ClusterIndex::new(writer.as_reader(), listed);
        let a = machine("ns", "a", "c1");
        let b = machine("ns", "b", "c1");
        let other = machine("ns", "x", "c2");
        writer.apply_watcher_event(&Event::Init);
        for m in [&a, &b, &other] {
            writer.apply_watcher_event(&Event::InitApply(m.clone()));
        }
        writer.apply_watcher_event(&Event::InitDone);
        raise.send_replace(true);
        index.ensure_seeded().await;
        let names = |v: Vec<Arc<Machine>>| {
            let mut n: Vec<String> = v.iter().filter_map(|m| m.metadata.name.clone()).collect();
            n.sort();
            n
        };
        assert_eq!(names(index.list("ns", "c1")), ["a", "b"]);
        assert!(index.list("other", "c1").is_empty());

        writer.apply_watcher_event(&Event::Delete(a.clone()));
        let c = machine("ns", "c", "c1");
        writer.apply_watcher_event(&Event::Apply(c.clone()));
        index.observe(&c);
        assert_eq!(names(index.list("ns", "c1")), ["b", "c"]);
        assert_eq!(index.buckets.lock()[&("ns".into(), "c1".into())].len(), 2);
    }
}
