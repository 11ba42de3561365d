//! Small in-memory indexes controllers keep beside
//! the shared stores, so mapping an event to the objects it concerns is a lookup rather than
//! a scan of every Machine of the fleet.
//!
//! They are fed from the controllers' trigger streams. Shared streams do not report
//! deletions, so lookups take a predicate that says whether a member still exists (a store
//! lookup) and drop the ones that do not.

use std::collections::{BTreeSet, HashMap};

use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use parking_lot::Mutex;

/// Member names grouped by (namespace, key): Machines by cluster name, or the referrer of an
/// object by `<Kind>/<name>`.
#[derive(Default)]
pub struct Index {
    inner: Mutex<HashMap<String, HashMap<String, BTreeSet<String>>>>,
}

impl Index {
    /// Records that `member` belongs under `namespace`/`key`.
    pub fn record(&self, namespace: &str, key: &str, member: &str) {
        if key.is_empty() || member.is_empty() {
            return;
        }
        let mut inner = self.inner.lock();
        // Lookups by &str first: the common case (already recorded) allocates nothing.
        if let Some(keys) = inner.get_mut(namespace) {
            if let Some(members) = keys.get_mut(key) {
                if !members.contains(member) {
                    members.insert(member.to_string());
                }
                return;
            }
            keys.insert(key.to_string(), BTreeSet::from([member.to_string()]));
            return;
        }
        inner.insert(namespace.to_string(), HashMap::from([(key.to_string(), BTreeSet::from([member.to_string()]))]));
    }

    /// The members under `namespace`/`key` for which `keep` holds; the others are forgotten.
    pub fn members(&self, namespace: &str, key: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut inner = self.inner.lock();
        let Some(keys) = inner.get_mut(namespace) else {
            return Vec::new();
        };
        let Some(members) = keys.get_mut(key) else {
            return Vec::new();
        };
        members.retain(|m| keep(m));
        let out: Vec<String> = members.iter().cloned().collect();
        if members.is_empty() {
            keys.remove(key);
            if keys.is_empty() {
                inner.remove(namespace);
            }
        }
        out
    }
}

impl Index {
    /// [`Index::members`] as references to objects in `namespace`.
    pub fn refs<K>(&self, namespace: &str, key: &str, keep: impl Fn(&str) -> bool) -> Vec<ObjectRef<K>>
    where
        K: Resource<DynamicType = ()>,
    {
        self.members(namespace, key, keep).into_iter().map(|m| ObjectRef::new(&m).within(namespace)).collect()
    }
}

/// The key of a referenced object in an [`Index`] of referrers.
pub fn ref_key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

/// The last seen summary of each object, so a mapper triggers dependants only when something
/// they wait for changed rather than on every status write.
pub struct Changes<T> {
    last: Mutex<HashMap<String, T>>,
}

impl<T> Default for Changes<T> {
    fn default() -> Self {
        Self { last: Mutex::new(HashMap::new()) }
    }
}

impl<T: PartialEq> Changes<T> {
    /// Records `value` for `key`; true when it differs from the previous one (or is the first).
    /// `live` bounds the memory: once the map holds far more entries than `live` objects
    /// exist, entries for which `exists` is false are dropped.
    pub fn changed(&self, key: String, value: T, live: usize, exists: impl Fn(&str) -> bool) -> bool {
        let mut last = self.last.lock();
        if last.len() > 2 * live + 1024 {
            last.retain(|k, _| exists(k));
        }
        match last.get(&key) {
            Some(v) if *v == value => false,
            _ => {
                last.insert(key, value);
                true
            }
        }
    }

    /// [`Changes::changed`] for `o`, an object of the informer `store`, keyed
    /// `namespace/name`.
    pub fn changed_in<K>(&self, store: &Store<K>, o: &K, value: T) -> bool
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(ns, name)| store.get(&ObjectRef::new(name).within(ns)).is_some());
        self.changed(super::runner::key_of(o), value, store.len(), exists)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_prunes() {
        let idx = Index::default();
        idx.record("ns", "c1", "m1");
        idx.record("ns", "c1", "m2");
        idx.record("ns", "c1", "m2");
        idx.record("ns", "c2", "m3");
        idx.record("other", "c1", "m9");
        assert_eq!(idx.members("ns", "c1", |_| true), ["m1", "m2"]);
        assert_eq!(idx.members("ns", "c1", |m| m != "m1"), ["m2"]);
        assert_eq!(idx.members("ns", "c1", |_| true), ["m2"]);
        assert!(idx.members("ns", "c2", |_| false).is_empty());
        assert!(idx.members("ns", "c2", |_| true).is_empty());
        assert!(idx.members("nope", "c1", |_| true).is_empty());
        idx.record("ns", "", "x");
        assert!(idx.members("ns", "", |_| true).is_empty());
    }

    #[test]
    fn changes_of_store_objects_are_keyed_by_namespace_and_name() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let (store, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.name = Some("a".into());
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(cm.clone()));
        let ch = Changes::<i64>::default();
        assert!(ch.changed_in(&store, &cm, 1), "first sight");
        assert!(!ch.changed_in(&store, &cm, 1));
        assert!(ch.changed_in(&store, &cm, 2));
        assert!(!ch.changed("ns/a".into(), 2, 1, |_| true), "the same key as a store lookup");
    }

    #[test]
    fn changes_only_on_difference_and_bounds_memory() {
        let ch = Changes::<(bool, bool)>::default();
        assert!(ch.changed("a".into(), (false, false), 1, |_| true));
        assert!(!ch.changed("a".into(), (false, false), 1, |_| true));
        assert!(ch.changed("a".into(), (true, false), 1, |_| true));
        for i in 0..2000 {
            ch.changed(format!("k{i}"), (true, true), 1, |k| k == "a");
        }
        assert!(ch.last.lock().len() < 1100);
    }
}
