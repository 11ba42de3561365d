//! Reads clients see: only durable state, the current one or one of the retained past.
//!
//! A write is in the in-memory tables a few milliseconds before it is durable. A read
//! therefore notes the revision its answer depends on (the object's, or the store's for a
//! list or an absent key) and waits until the committer has published it; when nothing is
//! in flight that is one atomic load. If the commit fails instead, the writes it covered are
//! reverted and the read is done once more, on the reverted (durable) state.
//!
//! A past revision R is rebuilt from the current state and the watch ring: each event after
//! R carries the object it replaced, so restoring, for every key written since R, the state
//! before its first such write gives the state at R. That works while the ring still holds
//! every event after R (`StoreConfig::watch_history` events per resource); older revisions
//! are expired.

use std::collections::HashSet;
use std::ops::Bound;
use std::sync::Arc;

use super::watch::{Expired, Progress};
use super::{ObjKey, ResId, Store, Stored, Table};

/// Which objects a list reads.
#[derive(Clone, Debug, Default)]
pub struct ListQuery<'a> {
    pub cluster: &'a str,
    pub res: ResId,
    /// Only this namespace (`None`: all of them).
    pub namespace: Option<&'a str>,
    /// Start after this (namespace, name).
    pub after: Option<(String, String)>,
    /// At most this many matches.
    pub limit: Option<usize>,
    /// Count the matches past the page (`remainingItemCount`).
    pub count_rest: bool,
}

/// Selects listed objects by (namespace, name) and object.
pub type KeyFilter<'a> = &'a (dyn Fn(&(String, String), &Stored) -> bool + Sync);

/// One page of a list.
#[derive(Debug, Default)]
pub struct ListPage {
    pub items: Vec<Arc<Stored>>,
    /// The revision the page shows.
    pub rev: u64,
    /// Key of the last item returned when more remain.
    pub next: Option<(String, String)>,
    /// Matches past this page, when counted.
    pub remaining: Option<u64>,
}

impl<'a> ListQuery<'a> {
    /// Every object of `res` in `cluster`, in one page.
    pub fn all(cluster: &'a str, res: ResId) -> Self {
        Self { cluster, res, namespace: None, after: None, limit: None, count_rest: false }
    }

    fn lower(&self) -> Bound<(String, String)> {
        match (&self.after, self.namespace) {
            (Some(k), _) => Bound::Excluded(k.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        }
    }

    /// Whether a key is inside the query's range.
    fn covers(&self, k: &(String, String)) -> bool {
        self.namespace.is_none_or(|ns| ns == k.0) && self.after.as_ref().is_none_or(|a| k > a)
    }

    /// The page of `entries` (in key order, from the query's lower bound) at revision `rev`.
    fn page<'t>(
        &self,
        entries: impl Iterator<Item = (&'t (String, String), &'t Arc<Stored>)>,
        rev: u64,
        filter: KeyFilter<'_>,
    ) -> ListPage {
        let mut items = Vec::new();
        let mut last_key: Option<&(String, String)> = None;
        let mut rest = 0u64;
        for (k, obj) in entries {
            if self.namespace.is_some_and(|want| want != k.0) {
                break;
            }
            if !filter(k, obj) {
                continue;
            }
            if self.limit.is_some_and(|l| items.len() >= l) {
                // Only report a continuation when a further match exists.
                rest += 1;
                if !self.count_rest {
                    break;
                }
                continue;
            }
            items.push(obj.clone());
            last_key = Some(k);
        }
        let next = if rest > 0 { last_key.cloned() } else { None };
        let remaining = (self.count_rest && next.is_some()).then_some(rest);
        ListPage { items, rev, next, remaining }
    }
}

impl Store {
    /// Runs `read`, which returns what it read and the revision that must be durable for it
    /// to be served, and waits until that revision is. If the commit fails instead, the
    /// writes it covered are reverted and `read` runs once more: the store is read-only
    /// then, and what it serves is exactly what is durable.
    /// On etcd, the replica first catches up with etcd's current revision, so that what is
    /// read includes every write made through any replica before the read began.
    pub async fn read_durable<T>(&self, read: impl Fn() -> (T, u64)) -> T {
        // Boxed: the SQLite path's read futures stay as small as they were.
        if let super::Engine::Etcd(etcd) = &self.engine
            && let Err(e) = Box::pin(etcd.sync(self)).await
        {
            tracing::warn!(error = %e, "etcd unreachable; serving this replica's latest state");
        }
        let (value, rev) = read();
        match self.hub.wait_published(rev, None).await {
            Progress::Reverted => read().0,
            Progress::Reached | Progress::TimedOut => value,
        }
    }

    /// The durable state of a key (see [`Store::read_durable`]).
    pub async fn get_durable(&self, key: &ObjKey) -> Option<Arc<Stored>> {
        self.read_durable(|| {
            let (obj, rev) = self.get_with_rev(key);
            // A present object is as durable as its own revision; an absent one needs the
            // store's (its deletion may be in flight).
            let need = obj.as_ref().map_or(rev, |o| o.rv);
            (obj, need)
        })
        .await
    }

    /// Waits, at most `StoreConfig::future_rv_wait`, until revision `rev` is durable;
    /// `Err(current)` with the durable revision when it is not reached in time.
    pub async fn reach(&self, rev: u64) -> Result<(), u64> {
        match self.hub.wait_published(rev, Some(self.future_rv_wait)).await {
            Progress::Reached => Ok(()),
            Progress::Reverted | Progress::TimedOut => Err(self.hub.published()),
        }
    }

    /// The latest durable revision.
    pub fn durable_revision(&self) -> u64 {
        self.hub.published()
    }

    /// Lists objects of one resource in one logical cluster as they are now, in (namespace,
    /// name) order. The state may not be durable yet: see [`Store::list_durable`].
    pub fn list(&self, q: &ListQuery<'_>, filter: KeyFilter<'_>) -> ListPage {
        let st = self.state.read();
        match st.clusters.get(q.cluster).and_then(|c| c.tables.get(q.res as usize)) {
            Some(table) => q.page(table.range((q.lower(), Bound::Unbounded)), st.rev, filter),
            None => ListPage { rev: st.rev, ..ListPage::default() },
        }
    }

    /// [`Store::list`] of durable state only.
    pub async fn list_durable(&self, q: &ListQuery<'_>, filter: KeyFilter<'_>) -> ListPage {
        self.read_durable(|| {
            let page = self.list(q, filter);
            let rev = page.rev;
            (page, rev)
        })
        .await
    }

    /// Lists as of revision `at`, which must be durable (see [`Store::reach`]); `Expired`
    /// once the retained history no longer reaches back to it.
    pub async fn list_at(&self, q: &ListQuery<'_>, at: u64, filter: KeyFilter<'_>) -> Result<ListPage, Expired> {
        let (mut snapshot, rev) = self
            .read_durable(|| {
                let (table, rev) = self.snapshot(q);
                ((table, rev), rev)
            })
            .await;
        let events = self.hub.events_between(q.res, at, rev)?;
        // The first write after `at` to a key replaced the key's state at `at`.
        let mut restored: HashSet<(&str, &str)> = HashSet::new();
        for ev in &events {
            let k = &ev.key;
            if &*k.cluster != q.cluster || !restored.insert((&k.namespace, &k.name)) {
                continue;
            }
            let tkey = (k.namespace.clone(), k.name.clone());
            if !q.covers(&tkey) {
                continue;
            }
            match &ev.prev {
                Some(prev) => snapshot.insert(tkey, prev.clone()),
                None => snapshot.remove(&tkey),
            };
        }
        Ok(q.page(snapshot.iter(), at, filter))
    }

    /// A copy of the query's range of the current table, and the revision it is at.
    fn snapshot(&self, q: &ListQuery<'_>) -> (Table, u64) {
        let st = self.state.read();
        let Some(table) = st.clusters.get(q.cluster).and_then(|c| c.tables.get(q.res as usize)) else {
            return (Table::new(), st.rev);
        };
        let copy = table
            .range((q.lower(), Bound::Unbounded))
            .take_while(|(k, _)| q.namespace.is_none_or(|ns| ns == k.0))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (copy, st.rev)
    }
}
