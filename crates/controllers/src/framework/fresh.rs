//! Skipping reconciles of objects read before this controller's own last write (used by
//! controllers that write the object they reconcile on every pass).
//!
//! A reconcile can run on the shared store's copy from before the previous reconcile's
//! write (the write's watch event is still on its way). Recomputing from that copy redoes
//! work and re-sends the same patch. Versions are compared only for equality (they are
//! opaque): the version a write was based on is remembered until the store moves past it,
//! and the write's own event triggers the next reconcile.

use std::collections::HashMap;

use kube::{Resource, ResourceExt};
use parking_lot::Mutex;

/// Per object (`namespace/name`), the versions its last writes were based on.
#[derive(Default)]
pub struct Superseded(Mutex<HashMap<String, Vec<String>>>);

fn key<K: Resource>(o: &K) -> String {
    format!("{}/{}", o.meta().namespace.as_deref().unwrap_or_default(), o.meta().name.as_deref().unwrap_or_default())
}

impl Superseded {
    /// True when `read` is older than this controller's last write of it.
    pub fn is_stale<K: Resource>(&self, read: &K) -> bool {
        let mut m = self.0.lock();
        let k = key(read);
        match (m.get(&k), read.resource_version()) {
            (Some(old), Some(rv)) if old.contains(&rv) => true,
            (Some(_), _) => {
                m.remove(&k);
                false
            }
            _ => false,
        }
    }

    /// Records a write based on `before` that produced `after` (reconciles that write twice
    /// record both). A write the server found to change nothing keeps the version, and
    /// supersedes nothing.
    pub fn wrote<K: Resource>(&self, before: &K, after: &K) {
        if let Some(rv) = before.resource_version()
            && after.resource_version().as_deref() != Some(rv.as_str())
        {
            self.0.lock().entry(key(before)).or_default().push(rv);
        }
    }

    pub fn forget<K: Resource>(&self, o: &K) {
        self.0.lock().remove(&key(o));
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
}
