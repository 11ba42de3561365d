//! The single writer: drains queued writes, commits each accumulated group as one
//! transaction, then publishes the watch events and answers the writers. Also compacts
//! the log now and then. A failed commit turns the store read-only and reverts in memory
//! every write that is not durable.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use parking_lot::RwLock;
use tokio::sync::oneshot;

use super::backend::{Backend, LogRow};
use super::watch::{WatchEvent, WatchHub};
use super::{State, StoreConfig, read_only_message};
use crate::metrics;

/// One write waiting to become durable.
pub struct Pending {
    pub row: LogRow,
    /// The change; its `prev` is restored if the write fails.
    pub event: Arc<WatchEvent>,
    pub done: oneshot::Sender<Result<(), String>>,
}

pub struct Committer {
    tx: mpsc::Sender<Pending>,
}

impl Committer {
    /// `compactable` lists (revision that made it compactable, row id) in revision order.
    pub fn start(
        backend: Box<dyn Backend>,
        hub: Arc<WatchHub>,
        config: StoreConfig,
        compactable: Vec<(u64, u64)>,
        state: Arc<RwLock<State>>,
    ) -> anyhow::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let delay_when_busy = backend.syncs() && !config.commit_delay.is_zero();
        let mut worker = Worker {
            delay_when_busy,
            backend,
            hub,
            config,
            compactable: compactable.into(),
            state,
            failed: false,
            last_compaction: Instant::now(),
            last_id: 0,
        };
        std::thread::Builder::new().name("store-committer".into()).spawn(move || worker.run(rx))?;
        Ok(Self { tx })
    }

    pub fn send(&self, p: Pending) {
        if let Err(mpsc::SendError(p)) = self.tx.send(p) {
            let _ = p.done.send(Err("the store committer stopped".into()));
        }
    }
}

struct Worker {
    /// Whether a busy committer waits `commit_delay` before committing.
    delay_when_busy: bool,
    backend: Box<dyn Backend>,
    hub: Arc<WatchHub>,
    config: StoreConfig,
    compactable: std::collections::VecDeque<(u64, u64)>,
    /// The in-memory state, to revert writes that failed.
    state: Arc<RwLock<State>>,
    /// Set once a commit failed (then also recorded in `state`).
    failed: bool,
    last_compaction: Instant,
    last_id: u64,
}

impl Worker {
    fn run(&mut self, rx: mpsc::Receiver<Pending>) {
        let mut batch: Vec<Pending> = Vec::new();
        // Whether the loop just committed: only writes that queued meanwhile mean the store
        // is busy. One queued before this thread first ran (a slow start) is a lone write.
        let mut committed = false;
        loop {
            let first = match rx.try_recv() {
                // Writes came in while the last commit ran: the store is busy, so give
                // more of them the chance to share this commit's sync.
                Ok(p) => {
                    if self.delay_when_busy && committed {
                        std::thread::sleep(self.config.commit_delay);
                    }
                    p
                }
                Err(mpsc::TryRecvError::Disconnected) => return,
                Err(mpsc::TryRecvError::Empty) => match rx.recv_timeout(self.config.compact_interval) {
                    // Idle until now: commit at once.
                    Ok(p) => p,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        committed = false;
                        self.maybe_compact();
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                },
            };
            batch.push(first);
            while batch.len() < self.config.max_batch {
                match rx.try_recv() {
                    Ok(p) => batch.push(p),
                    Err(_) => break,
                }
            }
            self.commit(&mut batch, &rx);
            committed = true;
            self.maybe_compact();
        }
    }

    fn commit(&mut self, batch: &mut Vec<Pending>, rx: &mpsc::Receiver<Pending>) {
        let started = Instant::now();
        let rows: Vec<LogRow> = batch.iter().map(|p| p.row.clone()).collect();
        let result = if self.failed {
            // Unreachable: writes are refused once the failure is recorded. Kept so a
            // write that slipped through could never be acknowledged.
            Err(anyhow::anyhow!("an earlier commit failed"))
        } else {
            self.backend.append(&rows)
        };
        metrics::store_commit(rows.len(), started.elapsed());
        match result {
            Ok(()) => {
                for row in &rows {
                    if row.prev != 0 {
                        self.compactable.push_back((row.id, row.prev));
                    }
                    if row.deleted {
                        self.compactable.push_back((row.id, row.id));
                    }
                    self.last_id = row.id;
                }
                let events: Vec<Arc<WatchEvent>> = batch.iter().map(|p| p.event.clone()).collect();
                self.hub.publish(&events);
                for p in batch.drain(..) {
                    let _ = p.done.send(Ok(()));
                }
            }
            Err(e) => self.fail(batch, rx, &e),
        }
    }

    /// Records the failure, reverts the failed group and everything queued after it, and
    /// only then answers their writers: none of them is served again, nor told to watchers.
    fn fail(&mut self, batch: &mut Vec<Pending>, rx: &mpsc::Receiver<Pending>, error: &anyhow::Error) {
        let cause: Arc<str> = Arc::from(format!("a commit to its durable log failed ({error:#})"));
        let first_failed = batch.first().map_or(0, |p| p.row.id);
        {
            let mut st = self.state.write();
            if st.failure.is_none() {
                st.failure = Some(cause.clone());
            }
            // Writes queue under this lock and check the failure first, so once it is set
            // the channel holds every write applied after the failed group, and no more come.
            batch.extend(rx.try_iter());
            st.revert(batch);
        }
        // Readers waiting for the reverted revisions read again, on the reverted state.
        self.hub.mark_reverted();
        if !self.failed {
            tracing::error!(
                error = %cause,
                revision = first_failed,
                reverted = batch.len(),
                "commit failed; the store is read-only until restarted"
            );
        }
        self.failed = true;
        let msg = read_only_message(&cause);
        for p in batch.drain(..) {
            let _ = p.done.send(Err(msg.clone()));
        }
    }

    fn maybe_compact(&mut self) {
        // Once a commit failed the log is left alone until restart.
        if self.failed || self.last_compaction.elapsed() < self.config.compact_interval {
            return;
        }
        self.last_compaction = Instant::now();
        let target = self.last_id.saturating_sub(self.config.compact_retain);
        let mut ids = Vec::new();
        while let Some(&(at, id)) = self.compactable.front() {
            if at > target {
                break;
            }
            ids.push(id);
            self.compactable.pop_front();
        }
        if ids.is_empty() {
            return;
        }
        let started = Instant::now();
        match self.backend.compact(&ids, target) {
            Ok(()) => {
                tracing::debug!(rows = ids.len(), target, elapsed = ?started.elapsed(), "compacted log")
            }
            Err(e) => tracing::warn!(error = %format!("{e:#}"), "log compaction failed"),
        }
    }
}
