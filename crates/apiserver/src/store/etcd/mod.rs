//! The store on etcd v3, for several drydock replicas sharing one etcd cluster.
//!
//! etcd holds every object and hands out the revisions (an object's resourceVersion is its
//! key's mod revision). Each replica keeps the same in-memory tables and watch ring as on
//! the embedded log, fed by one etcd watch on drydock's key prefix (`follow.rs`), so every
//! replica serves the same history and answers reads and watches from memory. A write is
//! one etcd transaction guarded by the key's mod revision; its writer is answered once the
//! replica's own watch has applied it, so a client reads its writes through the replica it
//! wrote through. A read of the latest state first learns etcd's current revision and waits
//! until the watch has reached it (kube-apiserver's consistent reads from its cache), so it
//! also sees what was written through other replicas.

mod client;
mod follow;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

pub use client::EtcdOptions;
use client::{Members, Op, TxnOutcome};

use super::{Change, Committed, Expect, ObjKey, Store, StoreError, Stored};

/// How often etcd's history is compacted, to the revision seen one period earlier (as
/// kube-apiserver does every 5 minutes).
const COMPACT_INTERVAL: Duration = Duration::from_secs(300);

/// How long a writer or a consistent read waits for the watch to reach a revision etcd
/// already has before it is served anyway (the watch is then reconnecting).
const CATCH_UP: Duration = Duration::from_secs(10);

/// The etcd side of a store.
pub struct Etcd {
    members: Arc<Members>,
    /// `<prefix>/`: every key drydock writes starts with it.
    prefix: String,
    /// Asks the watch for a barrier: a write whose event proves it has caught up.
    barrier: mpsc::UnboundedSender<()>,
}

impl Etcd {
    fn key(&self, store: &Store, key: &ObjKey) -> Vec<u8> {
        format!("{}{}", self.prefix, store.log_key(key)).into_bytes()
    }

    /// Waits until this replica has applied etcd's current revision.
    pub(super) async fn sync(&self, store: &Store) -> Result<(), StoreError> {
        let rev = self.members.revision(self.prefix.as_bytes()).await.map_err(unavailable)?;
        if store.hub.published() >= rev {
            return Ok(());
        }
        // Writes outside drydock's prefix move etcd's revision too; the watch learns that
        // it is past them from a barrier (`follow.rs`), asked for when nothing else arrives.
        if store.hub.wait_published(rev, Some(Duration::from_millis(50))).await != super::watch::Progress::Reached {
            let _ = self.barrier.send(());
            if store.hub.wait_published(rev, Some(CATCH_UP)).await != super::watch::Progress::Reached {
                tracing::warn!(
                    revision = rev,
                    applied = store.hub.published(),
                    "etcd watch is behind; serving what it has"
                );
            }
        }
        Ok(())
    }

    pub(super) async fn commit(
        &self,
        store: &Store,
        key: ObjKey,
        expect: Expect,
        change: Change,
    ) -> Result<Committed, StoreError> {
        let current = store.get(&key);
        let ekey = self.key(store, &key);
        let guard = match expect {
            Expect::Absent => None,
            Expect::Revision(r) => Some(r),
        };
        // An update equal to the object this replica holds at the expected revision writes
        // nothing, once etcd confirms that revision is still the latest (the replica may
        // be behind).
        if let (Change::Put(enc), Expect::Revision(want), Some(cur)) = (&change, expect, &current)
            && cur.rv == want
            && enc.same_as(cur)
        {
            return match self.members.guarded(&ekey, guard, Op::Check).await.map_err(unavailable)? {
                TxnOutcome::Done { .. } => Ok(Committed::Unchanged(cur.clone())),
                TxnOutcome::Refused { current } => Err(refusal(expect, current)),
            };
        }
        // Stored with resourceVersion 0: the revision is etcd's, known once written.
        let value = match &change {
            Change::Put(enc) => Some(enc.finish(0).bytes),
            Change::Delete => None,
        };
        let op = value.as_deref().map_or(Op::Delete, Op::Put);
        let outcome = self.members.guarded(&ekey, guard, op).await.map_err(unavailable)?;
        let (rev, deleted) = match outcome {
            TxnOutcome::Done { rev, deleted } => (rev, deleted),
            TxnOutcome::Refused { current } => return Err(refusal(expect, current)),
        };
        // Answered once this replica serves it: a client reads its own writes.
        if store.hub.wait_published(rev, Some(CATCH_UP)).await != super::watch::Progress::Reached {
            tracing::warn!(revision = rev, "etcd watch is behind; answering a write before this replica serves it");
        }
        match change {
            Change::Put(enc) => Ok(Committed::Written(Arc::new(enc.finish(rev)))),
            Change::Delete => {
                let last = match deleted {
                    Some(bytes) => Stored::from_bytes(rev, bytes.into(), &store.names.selectable(key.res))
                        .map_err(|e| StoreError::Failed(format!("decoding a deleted object: {e}")))?,
                    None => current.ok_or(StoreError::NotFound)?.with_rv(rev),
                };
                Ok(Committed::Deleted(Arc::new(last)))
            }
        }
    }
}

/// Why etcd refused a guarded write. A write retried on another member after its first
/// attempt was applied finds its own value: that is reported as a conflict too, as
/// kube-apiserver does, since the outcome cannot be told from a concurrent writer's.
fn refusal(expect: Expect, current: Option<(Vec<u8>, u64)>) -> StoreError {
    match (expect, current) {
        (Expect::Absent, Some(_)) => StoreError::AlreadyExists,
        (Expect::Revision(_), None) => StoreError::NotFound,
        _ => StoreError::Conflict,
    }
}

fn unavailable(e: anyhow::Error) -> StoreError {
    StoreError::Unavailable(format!("{e:#}"))
}

/// Opens a store on etcd: loads every object under the prefix, then follows etcd's watch
/// from that revision on, and compacts etcd's history now and then.
pub(super) async fn open(
    opts: &EtcdOptions,
    names: Arc<dyn super::ResourceNames>,
    config: super::StoreConfig,
) -> anyhow::Result<Arc<Store>> {
    let members = Arc::new(Members::connect(opts)?);
    let prefix = format!("{}/", opts.prefix.trim_end_matches('/'));
    let mut state = super::State { rev: 0, clusters: Default::default(), failure: None };
    let mut skipped = 0usize;
    let rev = members
        .load(prefix.as_bytes(), |kv| {
            let Some(k) = std::str::from_utf8(&kv.key).ok().and_then(|k| k.strip_prefix(&prefix)) else {
                skipped += 1;
                return Ok(());
            };
            if k == follow::BARRIER {
                return Ok(());
            }
            let Some(key) = super::parse_log_key(k, names.as_ref(), &state.clusters) else {
                skipped += 1;
                return Ok(());
            };
            let stored = Stored::from_bytes(kv.mod_revision as u64, kv.value.into(), &names.selectable(key.res))?;
            let table = super::table_mut(&mut state.clusters, &key, names.count());
            table.insert((key.namespace, key.name), Arc::new(stored));
            Ok(())
        })
        .await?;
    if skipped > 0 {
        tracing::warn!(keys = skipped, "etcd keys that name no resource were skipped");
    }
    state.rev = rev;
    // The watch ring starts empty at the loaded revision: older watches relist (410).
    let hub = super::WatchHub::new(names.count(), config.watch_history, config.watch_buffer, rev);
    tracing::info!(
        revision = rev,
        objects = state.clusters.values().flat_map(|c| &c.tables).map(std::collections::BTreeMap::len).sum::<usize>(),
        endpoints = ?opts.endpoints,
        prefix = %opts.prefix,
        "store loaded from etcd"
    );
    let state = Arc::new(parking_lot::RwLock::new(state));
    let (barrier, wanted) = mpsc::unbounded_channel();
    let etcd = Arc::new(Etcd { members: members.clone(), prefix: prefix.clone(), barrier });
    let store = Arc::new(Store {
        state: state.clone(),
        hub: hub.clone(),
        names: names.clone(),
        engine: super::Engine::Etcd(etcd),
        future_rv_wait: config.future_rv_wait,
    });
    let follower = follow::Follower { members: members.clone(), prefix, state, hub, names };
    tokio::spawn(follower.run(rev, wanted));
    tokio::spawn(compact(members));
    Ok(store)
}

/// Compacts etcd's history every [`COMPACT_INTERVAL`] to the revision of one interval
/// before, so watches and reads of the recent past keep working.
async fn compact(members: Arc<Members>) {
    let mut previous = 0u64;
    loop {
        tokio::time::sleep(COMPACT_INTERVAL).await;
        if previous > 0
            && let Err(e) = members.compact(previous).await
        {
            tracing::warn!(error = %format!("{e:#}"), revision = previous, "etcd compaction failed");
        }
        match members.revision(b"/").await {
            Ok(rev) => previous = rev,
            Err(e) => tracing::warn!(error = %format!("{e:#}"), "reading etcd's revision failed"),
        }
    }
}
