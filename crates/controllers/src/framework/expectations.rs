//! Creations and deletions issued by a reconcile but not yet visible in the informer cache.
//!
//! The cache lags the API server by a watch round trip. Without this record, a reconcile
//! that runs in that window (triggered by another event) would count too few Machines and
//! create duplicates, or pick more Machines to delete. Upstream polls its cache after every
//! create or delete until the change is visible; recording what is pending lets the
//! reconcile return instead and count the pending changes as done.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How long a pending change is trusted without showing up in the cache. Past that, the
/// cache is believed again (the write may have been undone by someone else).
pub const TTL: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Pending {
    creates: HashMap<String, Instant>,
    deletes: HashMap<String, Instant>,
}

/// What is still pending for one owner, as seen by one reconcile.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outstanding {
    /// Created objects not in the cache yet.
    pub creates: Vec<String>,
    /// Deleted objects the cache still shows as not deleting.
    pub deletes: Vec<String>,
    /// When the earliest pending change expires (requeue then if nothing else happens).
    pub expires_in: Option<Duration>,
}

/// Pending changes per owner (`namespace/name` of the MachineSet or MachineDeployment).
#[derive(Default)]
pub struct Expectations {
    owners: Mutex<HashMap<String, Pending>>,
}

impl Expectations {
    /// Records a creation; false when the same name is already pending (pick another).
    pub fn expect_create(&self, owner: &str, name: &str) -> bool {
        self.owners
            .lock()
            .entry(owner.to_string())
            .or_default()
            .creates
            .insert(name.to_string(), Instant::now())
            .is_none()
    }

    pub fn expect_delete(&self, owner: &str, name: &str) {
        self.owners.lock().entry(owner.to_string()).or_default().deletes.insert(name.to_string(), Instant::now());
    }

    /// Forgets a create whose request failed.
    pub fn cancel_create(&self, owner: &str, name: &str) {
        if let Some(p) = self.owners.lock().get_mut(owner) {
            p.creates.remove(name);
        }
    }

    /// Forgets everything about an owner (it is being deleted).
    pub fn forget(&self, owner: &str) {
        self.owners.lock().remove(owner);
    }

    /// Drops the changes the cache now shows (`created(name)`: the object is cached;
    /// `deleted(name)`: it is gone or has a deletionTimestamp) or that expired, and returns
    /// the rest.
    pub fn outstanding(
        &self,
        owner: &str,
        created: impl Fn(&str) -> bool,
        deleted: impl Fn(&str) -> bool,
    ) -> Outstanding {
        self.outstanding_at(owner, Instant::now(), created, deleted)
    }

    fn outstanding_at(
        &self,
        owner: &str,
        now: Instant,
        created: impl Fn(&str) -> bool,
        deleted: impl Fn(&str) -> bool,
    ) -> Outstanding {
        let mut owners = self.owners.lock();
        let Some(p) = owners.get_mut(owner) else {
            return Outstanding::default();
        };
        let live = |at: &Instant| now.saturating_duration_since(*at) < TTL;
        p.creates.retain(|name, at| live(at) && !created(name));
        p.deletes.retain(|name, at| live(at) && !deleted(name));
        let expires_in = p
            .creates
            .values()
            .chain(p.deletes.values())
            .map(|at| TTL.saturating_sub(now.saturating_duration_since(*at)))
            .min();
        let mut out = Outstanding {
            creates: p.creates.keys().cloned().collect(),
            deletes: p.deletes.keys().cloned().collect(),
            expires_in,
        };
        if p.creates.is_empty() && p.deletes.is_empty() {
            owners.remove(owner);
        }
        out.creates.sort();
        out.deletes.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_until_seen_or_expired() {
        let e = Expectations::default();
        assert!(e.expect_create("ns/ms", "m1"));
        assert!(e.expect_create("ns/ms", "m2"));
        assert!(!e.expect_create("ns/ms", "m2"));
        e.expect_delete("ns/ms", "old");
        let o = e.outstanding("ns/ms", |n| n == "m1", |_| false);
        assert_eq!(o.creates, ["m2"]);
        assert_eq!(o.deletes, ["old"]);
        assert!(o.expires_in.is_some_and(|d| d <= TTL));

        e.cancel_create("ns/ms", "m2");
        let o = e.outstanding("ns/ms", |_| false, |n| n == "old");
        assert_eq!(o, Outstanding::default());
        assert!(e.owners.lock().is_empty());

        e.expect_create("ns/ms", "m3");
        let later = Instant::now() + TTL;
        let o = e.outstanding_at("ns/ms", later, |_| false, |_| false);
        assert!(o.creates.is_empty());
        e.expect_create("ns/ms", "m4");
        e.forget("ns/ms");
        assert!(e.outstanding("ns/ms", |_| false, |_| false).creates.is_empty());
    }
}
