//! The revisioned object store: every object in memory, every write appended to a durable
//! log, one global revision that is the resourceVersion.
//!
//! A write takes the state lock only to check its precondition, take the next revision,
//! swap the object in memory and queue its log row; serialization happens before, the
//! disk after. The committer thread drains the queue, commits whatever accumulated as one
//! transaction (group commit), then publishes the watch events and answers the writers.
//! Reads never touch the disk. A write is in memory a few milliseconds before it is
//! durable; a writer is answered, watchers told, and client reads answered (`read.rs`) only
//! once it is.
//!
//! When a commit fails, the store turns read-only until restarted: under the state lock the
//! committer records the cause (so nothing queues after it), takes every write still
//! queued and reverts the failed group and those in memory, newest first, before it
//! answers their writers. What is served from then on is exactly what is durable; any write
//! that could have read a failed one came after it in the queue and is reverted with it.

mod backend;
mod committer;
mod etcd;
mod ids;
pub mod object;
mod read;
mod sqlite;
pub mod watch;

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use tokio::sync::oneshot;

pub use backend::{Backend, LoadInfo, LogRow, MemoryBackend};
pub use etcd::EtcdOptions;
pub use ids::ResIds;
pub use object::{Encoded, ObjMeta, OwnerRef, Stored};
pub use read::{KeyFilter, ListPage, ListQuery};
pub use sqlite::{SqliteBackend, SyncMode};
pub use watch::{EventType, WatchEvent, WatchHub};

use committer::{Committer, Pending};

/// A resource's storage identity: the interned `group/plural` (see [`ResIds`]).
pub type ResId = u32;

/// Identifies one object: logical cluster, resource, namespace (empty when cluster-scoped), name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjKey {
    pub cluster: Arc<str>,
    pub res: ResId,
    pub namespace: String,
    pub name: String,
}

/// Names the resources the store holds, to write and read log keys.
pub trait ResourceNames: Send + Sync {
    /// `group/plural` of a resource id (group empty for core).
    fn log_prefix(&self, res: ResId) -> String;
    /// The id of a `group/plural`, if known.
    fn resolve(&self, group_plural: &str) -> Option<ResId>;
    /// Number of ids handed out (ids are `0..count`).
    fn count(&self) -> usize;
    /// Extra selectable field paths of a resource.
    fn selectable(&self, res: ResId) -> Arc<[String]>;
}

/// Tuning knobs.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Watch events kept per resource for watches that resume from the past.
    pub watch_history: usize,
    /// Events buffered per watcher before a slow watcher is cut off (it resumes from its last revision).
    pub watch_buffer: usize,
    /// Revisions kept in the durable log behind the latest before compaction removes superseded rows.
    pub compact_retain: u64,
    pub compact_interval: Duration,
    /// Most rows in one transaction.
    pub max_batch: usize,
    /// How long a busy committer waits for more writes to join a commit: when writes
    /// queued while the previous commit ran, they are not committed at once but after this
    /// delay, with whatever else arrived meanwhile. A commit costs a log sync whatever its
    /// size, so under load this trades a little latency for far fewer syncs; an idle
    /// committer (a lone client) commits at once. Only for logs that sync ([`Backend::syncs`]).
    pub commit_delay: Duration,
    /// How long a read asking for a revision the store has not reached yet waits for it
    /// before it is answered 504 (kube-apiserver's watch cache waits 3 s).
    pub future_rv_wait: Duration,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            watch_history: 20_000,
            watch_buffer: 8_192,
            compact_retain: 20_000,
            compact_interval: Duration::from_secs(30),
            max_batch: 4_096,
            commit_delay: Duration::from_millis(1),
            future_rv_wait: Duration::from_secs(3),
        }
    }
}

/// What a write requires of the current state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The key must not exist (create).
    Absent,
    /// The key must exist at exactly this revision.
    Revision(u64),
}

/// A write to one key.
pub enum Change {
    Put(Encoded),
    Delete,
}

/// The outcome of a successful write.
#[derive(Clone, Debug)]
pub enum Committed {
    Written(Arc<Stored>),
    /// The new object equals the stored one: no revision was used.
    Unchanged(Arc<Stored>),
    /// Deleted; the last state, carrying the deletion's revision.
    Deleted(Arc<Stored>),
}

impl Committed {
    pub fn object(&self) -> &Arc<Stored> {
        match self {
            Self::Written(s) | Self::Unchanged(s) | Self::Deleted(s) => s,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("object already exists")]
    AlreadyExists,
    #[error("object not found")]
    NotFound,
    #[error("object was modified")]
    Conflict,
    #[error("storage failure: {0}")]
    Failed(String),
    /// The store could not be reached (etcd members down); nothing was written.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

type Table = BTreeMap<(String, String), Arc<Stored>>;

#[derive(Default)]
struct ClusterTables {
    tables: Vec<Table>,
}

struct State {
    rev: u64,
    clusters: HashMap<Arc<str>, ClusterTables>,
    /// Why a commit failed; once set, writes are refused.
    failure: Option<Arc<str>>,
}

impl State {
    /// Undoes queued writes that will never be durable, newest first, so the tables and
    /// the revision are back to the last durable state. `writes` is in revision order.
    fn revert(&mut self, writes: &[Pending]) {
        for p in writes.iter().rev() {
            let key = &p.event.key;
            let Some(table) = self.clusters.get_mut(&key.cluster).and_then(|c| c.tables.get_mut(key.res as usize))
            else {
                continue;
            };
            let tkey = (key.namespace.clone(), key.name.clone());
            match &p.event.prev {
                Some(prev) => table.insert(tkey, prev.clone()),
                None => table.remove(&tkey),
            };
        }
        if let Some(first) = writes.first() {
            self.rev = first.row.id.saturating_sub(1);
        }
    }
}

/// The message a write gets once the store is read-only.
fn read_only_message(cause: &str) -> String {
    format!(
        "the store is read-only since {cause}; writes that were not durable were dropped; \
         restart drydock once the cause is fixed"
    )
}

/// The store. Cheap to share behind an `Arc`.
pub struct Store {
    state: Arc<RwLock<State>>,
    hub: Arc<WatchHub>,
    names: Arc<dyn ResourceNames>,
    engine: Engine,
    future_rv_wait: Duration,
}

/// Where writes go: the durable log's committer (the store assigns revisions), or etcd
/// (etcd assigns them; see `etcd`).
enum Engine {
    Log(Committer),
    Etcd(Arc<etcd::Etcd>),
}

impl Store {
    /// Opens the store: replays the log into memory, then starts the committer thread.
    pub fn open(
        mut backend: Box<dyn Backend>,
        names: Arc<dyn ResourceNames>,
        config: StoreConfig,
    ) -> anyhow::Result<Arc<Self>> {
        let mut state = State { rev: 0, clusters: HashMap::new(), failure: None };
        let mut history: Vec<Arc<WatchEvent>> = Vec::new();
        let mut compactable = Vec::new();
        let mut skipped = 0usize;
        let info = backend.load(&mut |row| {
            state.rev = state.rev.max(row.id);
            if row.prev != 0 {
                compactable.push((row.id, row.prev));
            }
            if row.deleted {
                compactable.push((row.id, row.id));
            }
            let Some(key) = parse_log_key(&row.key, names.as_ref(), &state.clusters) else {
                skipped += 1;
                return Ok(());
            };
            let stored = Arc::new(Stored::from_bytes(row.id, row.value, &names.selectable(key.res))?);
            let table = table_mut(&mut state.clusters, &key, names.count());
            let prev = if row.deleted {
                table.remove(&(key.namespace.clone(), key.name.clone()))
            } else {
                table.insert((key.namespace.clone(), key.name.clone()), stored.clone())
            };
            let kind = match (row.deleted, &prev) {
                (true, _) => EventType::Deleted,
                (false, Some(_)) => EventType::Modified,
                (false, None) => EventType::Added,
            };
            history.push(Arc::new(WatchEvent { kind, key, obj: stored, prev }));
            Ok(())
        })?;
        if skipped > 0 {
            tracing::warn!(rows = skipped, "log rows of resources no longer served were skipped");
        }
        // Compaction may have removed the newest rows (tombstones): revisions never go back.
        state.rev = state.rev.max(info.compacted);
        let hub = WatchHub::new(names.count(), config.watch_history, config.watch_buffer, info.compacted);
        for ev in history.into_iter().filter(|e| e.rv() > info.compacted) {
            hub.remember(ev);
        }
        tracing::info!(
            revision = state.rev,
            compacted = info.compacted,
            objects = state.clusters.values().flat_map(|c| &c.tables).map(BTreeMap::len).sum::<usize>(),
            logical_clusters = state.clusters.len(),
            "store loaded"
        );
        let state = Arc::new(RwLock::new(state));
        let future_rv_wait = config.future_rv_wait;
        let committer = Committer::start(backend, hub.clone(), config, compactable, state.clone())?;
        Ok(Arc::new(Self { state, hub, names, engine: Engine::Log(committer), future_rv_wait }))
    }

    /// Opens a store on etcd (see `etcd`): loads every object under the prefix and follows
    /// etcd's watch from there. Must be called inside a Tokio runtime.
    pub async fn open_etcd(
        opts: &EtcdOptions,
        names: Arc<dyn ResourceNames>,
        config: StoreConfig,
    ) -> anyhow::Result<Arc<Self>> {
        etcd::open(opts, names, config).await
    }

    pub fn hub(&self) -> &Arc<WatchHub> {
        &self.hub
    }

    /// The latest revision handed out (possibly not yet durable).
    pub fn revision(&self) -> u64 {
        self.state.read().rev
    }

    /// False once a commit failed: the store is then read-only until restarted.
    pub fn healthy(&self) -> bool {
        self.state.read().failure.is_none()
    }

    /// Why the store turned read-only, if a commit failed.
    pub fn failure(&self) -> Option<Arc<str>> {
        self.state.read().failure.clone()
    }

    /// Interns a logical cluster name (so keys share one allocation).
    pub fn cluster_name(&self, name: &str) -> Arc<str> {
        if let Some((k, _)) = self.state.read().clusters.get_key_value(name) {
            return k.clone();
        }
        Arc::from(name)
    }

    /// The current state of a key, which may not be durable yet (see [`Store::get_durable`]).
    pub fn get(&self, key: &ObjKey) -> Option<Arc<Stored>> {
        self.get_with_rev(key).0
    }

    /// The current state of a key and the store's revision it was read at.
    fn get_with_rev(&self, key: &ObjKey) -> (Option<Arc<Stored>>, u64) {
        let st = self.state.read();
        let obj = st
            .clusters
            .get(&key.cluster)
            .and_then(|c| c.tables.get(key.res as usize))
            .and_then(|t| t.get(&(key.namespace.clone(), key.name.clone())))
            .cloned();
        (obj, st.rev)
    }

    /// Every object in a logical cluster (or all of them), optionally only in one namespace
    /// (`Some("")` selects cluster-scoped objects).
    pub fn scan(&self, cluster: Option<&str>, namespace: Option<&str>) -> Vec<(ObjKey, Arc<Stored>)> {
        let st = self.state.read();
        let mut out = Vec::new();
        for (cname, ct) in &st.clusters {
            if cluster.is_some_and(|c| c != &**cname) {
                continue;
            }
            for (res, table) in ct.tables.iter().enumerate() {
                let lower = match namespace {
                    Some(ns) => Bound::Included((ns.to_string(), String::new())),
                    None => Bound::Unbounded,
                };
                for ((ns, name), obj) in table.range((lower, Bound::Unbounded)) {
                    if namespace.is_some_and(|want| want != ns) {
                        break;
                    }
                    let key =
                        ObjKey { cluster: cname.clone(), res: res as ResId, namespace: ns.clone(), name: name.clone() };
                    out.push((key, obj.clone()));
                }
            }
        }
        out
    }

    /// Re-extracts the selectable fields of every object of `res`, once they are known or
    /// changed (a CRD is registered after the log was replayed, or gains selectable fields).
    /// Parses each object: only for such rare changes.
    pub fn reindex(&self, res: ResId, selectable: &[String]) {
        let mut st = self.state.write();
        for ct in st.clusters.values_mut() {
            let Some(table) = ct.tables.get_mut(res as usize) else { continue };
            for obj in table.values_mut() {
                match Stored::from_bytes(obj.rv, obj.bytes.clone(), selectable) {
                    Ok(fresh) => *obj = Arc::new(fresh),
                    Err(e) => tracing::warn!(error = %e, "a stored object does not parse; its fields are not indexed"),
                }
            }
        }
    }

    /// Logical clusters that hold at least one object.
    pub fn clusters(&self) -> Vec<Arc<str>> {
        self.state
            .read()
            .clusters
            .iter()
            .filter(|(_, t)| t.tables.iter().any(|t| !t.is_empty()))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Applies one write if `expect` holds and waits until it is durable.
    pub async fn commit(&self, key: ObjKey, expect: Expect, change: Change) -> Result<Committed, StoreError> {
        let committer = match &self.engine {
            Engine::Log(c) => c,
            Engine::Etcd(etcd) => {
                if let Some(cause) = self.failure() {
                    return Err(StoreError::Failed(read_only_message(&cause)));
                }
                // Boxed: the SQLite path's futures stay as small as they were.
                return Box::pin(etcd.commit(self, key, expect, change)).await;
            }
        };
        let (done, rx) = oneshot::channel();
        let outcome = self.apply(committer, key, expect, change, done)?;
        if let Committed::Unchanged(_) = outcome {
            return Ok(outcome);
        }
        match rx.await {
            Ok(Ok(())) => Ok(outcome),
            Ok(Err(msg)) => Err(StoreError::Failed(msg)),
            Err(_) => Err(StoreError::Failed("the store stopped".into())),
        }
    }

    fn apply(
        &self,
        committer: &Committer,
        key: ObjKey,
        expect: Expect,
        change: Change,
        done: oneshot::Sender<Result<(), String>>,
    ) -> Result<Committed, StoreError> {
        let nres = self.names.count();
        let mut st = self.state.write();
        // Checked under the lock: once the committer records a failure, nothing queues after it.
        if let Some(cause) = &st.failure {
            return Err(StoreError::Failed(read_only_message(cause)));
        }
        let State { rev, clusters, .. } = &mut *st;
        let cluster = match clusters.get_key_value(&key.cluster) {
            Some((k, _)) => k.clone(),
            None => key.cluster.clone(),
        };
        let key = ObjKey { cluster, ..key };
        let table = table_mut(clusters, &key, nres);
        let tkey = (key.namespace.clone(), key.name.clone());
        let current = table.get(&tkey).cloned();
        match (expect, &current) {
            (Expect::Absent, Some(_)) => return Err(StoreError::AlreadyExists),
            (Expect::Revision(_), None) => return Err(StoreError::NotFound),
            (Expect::Revision(want), Some(cur)) if cur.rv != want => {
                return Err(StoreError::Conflict);
            }
            _ => {}
        }
        let (kind, obj, prev_rv, deleted) = match change {
            Change::Put(enc) => {
                if let Some(cur) = &current
                    && enc.same_as(cur)
                {
                    return Ok(Committed::Unchanged(cur.clone()));
                }
                *rev += 1;
                let obj = Arc::new(enc.finish(*rev));
                table.insert(tkey, obj.clone());
                let kind = if current.is_some() { EventType::Modified } else { EventType::Added };
                (kind, obj, current.as_ref().map_or(0, |c| c.rv), false)
            }
            Change::Delete => {
                let Some(cur) = &current else {
                    return Err(StoreError::NotFound);
                };
                *rev += 1;
                table.remove(&tkey);
                (EventType::Deleted, Arc::new(cur.with_rv(*rev)), cur.rv, true)
            }
        };
        let row = LogRow { id: obj.rv, key: self.log_key(&key), deleted, prev: prev_rv, value: obj.bytes.clone() };
        let event = Arc::new(WatchEvent { kind, key, obj: obj.clone(), prev: current });
        // Queued under the lock so the log receives rows in revision order, and so a failed
        // commit finds every write applied after it in the queue.
        committer.send(Pending { row, event, done });
        drop(st);
        Ok(if deleted { Committed::Deleted(obj) } else { Committed::Written(obj) })
    }
}

impl Store {
    /// `<logical cluster>/<group>/<resource>/<namespace>/<name>`: the key in the log or etcd.
    fn log_key(&self, key: &ObjKey) -> String {
        format!("{}/{}/{}/{}", key.cluster, self.names.log_prefix(key.res), key.namespace, key.name)
    }
}

fn table_mut<'a>(clusters: &'a mut HashMap<Arc<str>, ClusterTables>, key: &ObjKey, nres: usize) -> &'a mut Table {
    let ct = clusters.entry(key.cluster.clone()).or_default();
    if ct.tables.len() < nres {
        ct.tables.resize_with(nres, Table::new);
    }
    &mut ct.tables[key.res as usize]
}

fn parse_log_key(key: &str, names: &dyn ResourceNames, clusters: &HashMap<Arc<str>, ClusterTables>) -> Option<ObjKey> {
    let mut parts = key.splitn(5, '/');
    let cluster = parts.next()?;
    let group = parts.next()?;
    let plural = parts.next()?;
    let namespace = parts.next()?;
    let name = parts.next()?;
    let res = names.resolve(&format!("{group}/{plural}"))?;
    let cluster = match clusters.get_key_value(cluster) {
        Some((k, _)) => k.clone(),
        None => Arc::from(cluster),
    };
    Some(ObjKey { cluster, res, namespace: namespace.to_string(), name: name.to_string() })
}
