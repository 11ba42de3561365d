//! Watch fan-out. Every committed write becomes one [`WatchEvent`], published in revision
//! order by the committer thread. Subscribers are keyed by (resource, logical cluster) so a
//! write only reaches watchers that can care; the event's bytes are shared by all of them.
//! A bounded ring of recent events per resource serves watches that start from a past
//! revision; older starts get `Expired` (410).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{Notify, mpsc};

use super::object::{ObjMeta, Stored};
use super::{ObjKey, ResId};

/// ADDED / MODIFIED / DELETED, as sent on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug)]
pub struct WatchEvent {
    pub kind: EventType,
    pub key: ObjKey,
    /// The new state; for a deletion, the last state carrying the deletion's revision.
    pub obj: Arc<Stored>,
    /// The state this write replaced: selector transitions look at its metadata, and reads
    /// of a past revision undo the write by restoring it.
    pub prev: Option<Arc<Stored>>,
}

impl WatchEvent {
    pub fn rv(&self) -> u64 {
        self.obj.rv
    }
}

/// Which events a subscriber wants, beyond its resource and cluster.
pub trait EventFilter: Send + Sync {
    /// Whether an object (by key and metadata) is selected.
    fn matches(&self, key: &ObjKey, meta: &ObjMeta) -> bool;
}

/// Selects everything.
pub struct All;
impl EventFilter for All {
    fn matches(&self, _: &ObjKey, _: &ObjMeta) -> bool {
        true
    }
}

/// How an event looks to a filtered watcher: an object that starts matching is ADDED, one
/// that stops matching is DELETED (as kube-apiserver does), one that never matches is skipped.
pub fn classify(filter: &dyn EventFilter, ev: &WatchEvent) -> Option<EventType> {
    let now = filter.matches(&ev.key, &ev.obj.meta);
    match ev.kind {
        EventType::Modified => {
            let before = ev.prev.as_ref().is_some_and(|p| filter.matches(&ev.key, &p.meta));
            match (before, now) {
                (true, true) => Some(EventType::Modified),
                (false, true) => Some(EventType::Added),
                (true, false) => Some(EventType::Deleted),
                (false, false) => None,
            }
        }
        kind => now.then_some(kind),
    }
}

/// Where a subscription listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One resource in one logical cluster.
    Cluster(ResId, Arc<str>),
    /// One resource in every logical cluster.
    AllClusters(ResId),
    /// Everything (internal controllers such as garbage collection).
    Everything,
}

pub type Delivery = (EventType, Arc<WatchEvent>);

enum Sink {
    Bounded(mpsc::Sender<Delivery>),
    Unbounded(mpsc::UnboundedSender<Delivery>),
}

struct Subscriber {
    id: u64,
    filter: Arc<dyn EventFilter>,
    sink: Sink,
}

impl Subscriber {
    /// Delivers; false when the subscriber is gone or too slow and must be dropped.
    fn deliver(&self, ev: &Arc<WatchEvent>) -> bool {
        let Some(kind) = classify(self.filter.as_ref(), ev) else {
            return true;
        };
        match &self.sink {
            Sink::Bounded(tx) => tx.try_send((kind, ev.clone())).is_ok(),
            Sink::Unbounded(tx) => tx.send((kind, ev.clone())).is_ok(),
        }
    }
}

struct Ring {
    events: VecDeque<Arc<WatchEvent>>,
    /// Highest revision dropped from this ring: watches must start at or after it.
    evicted_upto: u64,
}

struct HubState {
    rings: Vec<Ring>,
    subs: HashMap<Scope, Vec<Subscriber>>,
    next_id: u64,
}

/// What waiting for a revision to become durable ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    Reached,
    /// A commit failed and the writes up to the revision were reverted.
    Reverted,
    TimedOut,
}

/// Watch-start failure: the requested revision is older than the retained history.
#[derive(Debug)]
pub struct Expired {
    pub oldest: u64,
}

/// A live subscription: replayed history first, then live events.
pub struct Subscription {
    pub replay: Vec<Delivery>,
    pub rx: Receiver,
    pub guard: SubscriptionGuard,
}

pub enum Receiver {
    Bounded(mpsc::Receiver<Delivery>),
    Unbounded(mpsc::UnboundedReceiver<Delivery>),
}

impl Receiver {
    pub async fn recv(&mut self) -> Option<Delivery> {
        match self {
            Self::Bounded(rx) => rx.recv().await,
            Self::Unbounded(rx) => rx.recv().await,
        }
    }
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Bounded(rx) => rx.is_empty(),
            Self::Unbounded(rx) => rx.is_empty(),
        }
    }
}

/// Unsubscribes when dropped (the client went away).
pub struct SubscriptionGuard {
    hub: Arc<WatchHub>,
    scope: Scope,
    id: u64,
}

impl Drop for SubscriptionGuard {
    fn drop(&mut self) {
        let mut st = self.hub.state.lock();
        if let Some(list) = st.subs.get_mut(&self.scope) {
            list.retain(|s| s.id != self.id);
            if list.is_empty() {
                st.subs.remove(&self.scope);
            }
        }
    }
}

/// The fan-out point between the committer and every watcher.
pub struct WatchHub {
    state: Mutex<HubState>,
    /// Highest revision handed to subscribers (everything up to it is durable).
    published: AtomicU64,
    /// Woken whenever `published` moves or a failed commit reverted writes.
    progress: Notify,
    /// Set once a failed commit reverted writes: revisions past `published` never come.
    reverted: AtomicBool,
    ring_capacity: usize,
    buffer: usize,
    fanout: AtomicU64,
    /// Compacted revision at start: history of resources first seen later starts there.
    compacted: u64,
    /// Resources whose changes [`WatchHub::tracked_changes`] counts (the RBAC kinds, whose
    /// compiled policy is kept until they change).
    tracked: std::sync::OnceLock<Box<[ResId]>>,
    tracked_changes: AtomicU64,
}

impl WatchHub {
    pub fn new(resources: usize, ring_capacity: usize, buffer: usize, compacted: u64) -> Arc<Self> {
        let rings = (0..resources).map(|_| Ring { events: VecDeque::new(), evicted_upto: compacted }).collect();
        Arc::new(Self {
            state: Mutex::new(HubState { rings, subs: HashMap::new(), next_id: 0 }),
            published: AtomicU64::new(compacted),
            progress: Notify::new(),
            reverted: AtomicBool::new(false),
            ring_capacity: ring_capacity.max(1),
            buffer: buffer.max(1),
            fanout: AtomicU64::new(0),
            compacted,
            tracked: std::sync::OnceLock::new(),
            tracked_changes: AtomicU64::new(0),
        })
    }

    /// Counts, from now on, the published changes of `resources` (set once).
    pub fn track(&self, resources: Vec<ResId>) {
        let _ = self.tracked.set(resources.into_boxed_slice());
    }

    /// How many published batches changed a tracked resource (or were reverted): a
    /// different number means what was read of them may be stale. Moves before the writers
    /// of those changes are answered.
    pub fn tracked_changes(&self) -> u64 {
        self.tracked_changes.load(Ordering::Acquire)
    }

    /// Highest revision already delivered to subscribers.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// Total deliveries to subscribers so far (watch fan-out).
    pub fn deliveries(&self) -> u64 {
        self.fanout.load(Ordering::Relaxed)
    }

    /// Records history without delivering (used while loading the log at startup).
    pub fn remember(&self, ev: Arc<WatchEvent>) {
        let mut st = self.state.lock();
        let rv = ev.rv();
        self.push_ring(&mut st, ev);
        self.published.store(rv, Ordering::Release);
    }

    fn push_ring(&self, st: &mut HubState, ev: Arc<WatchEvent>) {
        // Resources are interned as they appear (CRDs), so rings grow on demand.
        let idx = ev.key.res as usize;
        if st.rings.len() <= idx {
            st.rings.resize_with(idx + 1, || Ring { events: VecDeque::new(), evicted_upto: self.compacted });
        }
        let ring = &mut st.rings[idx];
        if ring.events.len() >= self.ring_capacity
            && let Some(old) = ring.events.pop_front()
        {
            ring.evicted_upto = old.rv();
        }
        ring.events.push_back(ev);
    }

    /// Publishes a batch of committed events, in revision order.
    pub fn publish(&self, events: &[Arc<WatchEvent>]) {
        let Some(last) = events.last() else { return };
        let mut st = self.state.lock();
        let mut delivered = 0u64;
        for ev in events {
            let scopes =
                [Scope::Cluster(ev.key.res, ev.key.cluster.clone()), Scope::AllClusters(ev.key.res), Scope::Everything];
            for scope in scopes {
                let Some(list) = st.subs.get_mut(&scope) else {
                    continue;
                };
                let before = list.len();
                list.retain(|s| s.deliver(ev));
                delivered += before as u64;
                if list.is_empty() {
                    st.subs.remove(&scope);
                }
            }
            self.push_ring(&mut st, ev.clone());
        }
        self.published.store(last.rv(), Ordering::Release);
        self.fanout.fetch_add(delivered, Ordering::Relaxed);
        if let Some(tracked) = self.tracked.get()
            && events.iter().any(|e| tracked.contains(&e.key.res))
        {
            self.tracked_changes.fetch_add(1, Ordering::AcqRel);
        }
        drop(st);
        self.progress.notify_waiters();
    }

    /// Records that everything up to `rev` is published although no event carried it (the
    /// store's revision moved past writes that are not the store's).
    pub fn advance(&self, rev: u64) {
        if self.published.fetch_max(rev, Ordering::AcqRel) < rev {
            self.progress.notify_waiters();
        }
    }

    /// Records that a failed commit reverted every write past `published`, and wakes the
    /// readers waiting for them.
    pub fn mark_reverted(&self) {
        self.reverted.store(true, Ordering::Release);
        self.tracked_changes.fetch_add(1, Ordering::AcqRel);
        self.progress.notify_waiters();
    }

    /// Waits until revision `rev` is durable (published), the writes up to it were
    /// reverted, or `limit` passed. Costs one atomic load when `rev` is already durable.
    pub async fn wait_published(&self, rev: u64, limit: Option<Duration>) -> Progress {
        if self.published() >= rev {
            return Progress::Reached;
        }
        let wait = async {
            loop {
                let notified = self.progress.notified();
                tokio::pin!(notified);
                // Registered before checking, so a publish in between is not missed.
                notified.as_mut().enable();
                if self.published() >= rev {
                    return Progress::Reached;
                }
                if self.reverted.load(Ordering::Acquire) {
                    return Progress::Reverted;
                }
                notified.await;
            }
        };
        match limit {
            None => wait.await,
            Some(limit) => tokio::time::timeout(limit, wait).await.unwrap_or(Progress::TimedOut),
        }
    }

    /// The retained events of resource `res` with revisions in `(after, upto]`, in revision
    /// order; `Expired` when the ring no longer covers `after`.
    pub fn events_between(&self, res: ResId, after: u64, upto: u64) -> Result<Vec<Arc<WatchEvent>>, Expired> {
        let st = self.state.lock();
        let Some(ring) = st.rings.get(res as usize) else {
            return Ok(Vec::new());
        };
        if after < ring.evicted_upto {
            return Err(Expired { oldest: ring.evicted_upto });
        }
        let start = ring.events.partition_point(|e| e.rv() <= after);
        Ok(ring.events.range(start..).take_while(|e| e.rv() <= upto).cloned().collect())
    }

    /// Subscribes to events with revision greater than `after`. `internal` subscribers are
    /// never dropped for being slow; client watches are, and resume from their last revision.
    pub fn subscribe(
        self: &Arc<Self>,
        scope: Scope,
        filter: Arc<dyn EventFilter>,
        after: u64,
        internal: bool,
    ) -> Result<Subscription, Expired> {
        let mut st = self.state.lock();
        let mut replay = Vec::new();
        let rings: Vec<usize> = match &scope {
            Scope::Cluster(res, _) | Scope::AllClusters(res) => vec![*res as usize],
            Scope::Everything => (0..st.rings.len()).collect(),
        };
        for r in rings {
            let Some(ring) = st.rings.get(r) else {
                continue;
            };
            if after < ring.evicted_upto {
                return Err(Expired { oldest: ring.evicted_upto });
            }
            let start = ring.events.partition_point(|e| e.rv() <= after);
            for ev in ring.events.range(start..) {
                if let Scope::Cluster(_, c) = &scope
                    && ev.key.cluster != *c
                {
                    continue;
                }
                if let Some(kind) = classify(filter.as_ref(), ev) {
                    replay.push((kind, ev.clone()));
                }
            }
        }
        if matches!(scope, Scope::Everything) {
            replay.sort_by_key(|(_, e)| e.rv());
        }
        let (sink, rx) = if internal {
            let (tx, rx) = mpsc::unbounded_channel();
            (Sink::Unbounded(tx), Receiver::Unbounded(rx))
        } else {
            let (tx, rx) = mpsc::channel(self.buffer);
            (Sink::Bounded(tx), Receiver::Bounded(rx))
        };
        let id = st.next_id;
        st.next_id += 1;
        st.subs.entry(scope.clone()).or_default().push(Subscriber { id, filter, sink });
        Ok(Subscription { replay, rx, guard: SubscriptionGuard { hub: self.clone(), scope, id } })
    }

    /// Number of live subscribers (for metrics).
    pub fn subscribers(&self) -> usize {
        self.state.lock().subs.values().map(Vec::len).sum()
    }
}
