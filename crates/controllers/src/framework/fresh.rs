//! Skipping reconciles of objects read before this controller's own last write.
//!
//! A reconcile can run on the shared store's copy from before the previous reconcile's
//! write (the write's watch event is still on its way). Recomputing from that copy redoes
//! work and re-sends the same patch. resourceVersions are opaque: they are compared only
//! for equality, never ordered. Each write remembers the version it was based on (the
//! version it superseded) until the store shows another one, and the write's own event
//! triggers the next reconcile. Writes made with a resourceVersion precondition (see
//! [`super::write`]) leave no version between the one read and the one written, so the
//! versions remembered are exactly the stale ones.

use std::collections::HashMap;

use kube::Resource;
use parking_lot::Mutex;

use super::runner::key_of;

/// Entries kept at most. Entries are dropped as soon as the store moves past them; only
/// objects deleted right after a write leave one behind. Past this many, all are dropped
/// (the cost is at worst one redundant reconcile per object).
const CAPACITY: usize = 1 << 17;

/// Per object (`namespace/name`, or any key the caller chooses), the versions its last
/// writes were based on.
#[derive(Default)]
pub struct Superseded(Mutex<HashMap<String, Vec<String>>>);

impl Superseded {
    /// True when `read` is older than this controller's last write of it.
    pub fn is_stale<K: Resource>(&self, read: &K) -> bool {
        self.is_stale_key(&key_of(read), read.meta().resource_version.as_deref())
    }

    /// True when version `rv` of the object under `key` was superseded by a write of this
    /// controller. Any other version means the store moved on: the entry is forgotten.
    pub fn is_stale_key(&self, key: &str, rv: Option<&str>) -> bool {
        let mut m = self.0.lock();
        match (m.get(key), rv) {
            (Some(old), Some(rv)) if old.iter().any(|o| o == rv) => true,
            (Some(_), _) => {
                m.remove(key);
                false
            }
            _ => false,
        }
    }

    /// Records a write based on `before` that produced `after` (reconciles that write twice
    /// record both). A write the server found to change nothing keeps the version, and
    /// supersedes nothing.
    pub fn wrote<K: Resource>(&self, before: &K, after: &K) {
        self.wrote_key(
            key_of(before),
            before.meta().resource_version.as_deref(),
            after.meta().resource_version.as_deref(),
        );
    }

    /// Records a write of the object under `key`, based on version `base`, that produced
    /// version `produced`.
    pub fn wrote_key(&self, key: String, base: Option<&str>, produced: Option<&str>) {
        let Some(base) = base else { return };
        if produced == Some(base) {
            return;
        }
        let mut m = self.0.lock();
        if m.len() >= CAPACITY && !m.contains_key(&key) {
            m.clear();
        }
        m.entry(key).or_default().push(base.to_string());
    }

    /// Forgets an object (it is going away with this controller's last write).
    pub fn forget<K: Resource>(&self, o: &K) {
        self.0.lock().remove(&key_of(o));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::kubeadm::KubeadmControlPlane;

    fn at(rv: &str) -> KubeadmControlPlane {
        let mut m = KubeadmControlPlane::new("m", Default::default());
        m.metadata.namespace = Some("ns".into());
        m.metadata.resource_version = Some(rv.into());
        m
    }

    #[test]
    fn stale_until_the_store_moves_on() {
        let s = Superseded::default();
        assert!(!s.is_stale(&at("1")));
        s.wrote(&at("1"), &at("2"));
        assert!(s.is_stale(&at("1")), "read from before the write");
        assert!(!s.is_stale(&at("2")), "the write's own version");
        assert!(!s.is_stale(&at("1")), "forgotten once the store moved on");
        s.wrote(&at("3"), &at("3"));
        assert!(!s.is_stale(&at("3")), "a no-op write supersedes nothing");
        // Two writes in one reconcile (object, then status): both bases are stale.
        s.wrote(&at("4"), &at("5"));
        s.wrote(&at("5"), &at("6"));
        assert!(s.is_stale(&at("4")) && s.is_stale(&at("5")));
        assert!(!s.is_stale(&at("6")));
        s.wrote(&at("7"), &at("8"));
        s.forget(&at("7"));
        assert!(!s.is_stale(&at("7")));
    }

    #[test]
    fn versions_are_opaque() {
        let s = Superseded::default();
        // Not numbers, and not ordered: only equality counts.
        s.wrote_key("k".into(), Some("b7"), Some("a3"));
        assert!(s.is_stale_key("k", Some("b7")));
        assert!(!s.is_stale_key("k", Some("zz")), "another version: the store moved on");
        assert!(!s.is_stale_key("k", Some("b7")), "forgotten");
        s.wrote_key("k".into(), None, Some("1"));
        assert!(!s.is_stale_key("k", None));
    }

    #[test]
    fn memory_is_bounded() {
        let s = Superseded::default();
        for i in 0..CAPACITY + 10 {
            s.wrote_key(format!("k{i}"), Some("1"), Some("2"));
        }
        assert!(s.0.lock().len() <= CAPACITY);
    }
}
