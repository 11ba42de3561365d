//! The single writer: drains queued writes, commits each accumulated group as one
//! transaction, then publishes the watch events and answers the writers. Also compacts
//! the log now and then.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use tokio::sync::oneshot;

use super::StoreConfig;
use super::backend::{Backend, LogRow};
use super::watch::{WatchEvent, WatchHub};
use crate::metrics;

/// One write waiting to become durable.
pub struct Pending {
    pub row: LogRow,
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
        failed: Arc<AtomicBool>,
    ) -> anyhow::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let mut worker = Worker {
            backend,
            hub,
            config,
            compactable: compactable.into(),
            failed,
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
    backend: Box<dyn Backend>,
    hub: Arc<WatchHub>,
    config: StoreConfig,
    compactable: std::collections::VecDeque<(u64, u64)>,
    failed: Arc<AtomicBool>,
    last_compaction: Instant,
    last_id: u64,
}

impl Worker {
    fn run(&mut self, rx: mpsc::Receiver<Pending>) {
        let mut batch: Vec<Pending> = Vec::new();
        loop {
            let first = match rx.recv_timeout(self.config.compact_interval) {
                Ok(p) => p,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.maybe_compact();
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            };
            batch.push(first);
            while batch.len() < self.config.max_batch {
                match rx.try_recv() {
                    Ok(p) => batch.push(p),
                    Err(_) => break,
                }
            }
            self.commit(&mut batch);
            self.maybe_compact();
        }
    }

    fn commit(&mut self, batch: &mut Vec<Pending>) {
        let started = Instant::now();
        let rows: Vec<LogRow> = batch.iter().map(|p| p.row.clone()).collect();
        let result = if self.failed.load(Ordering::Acquire) {
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
            Err(e) => {
                tracing::error!(error = %format!("{e:#}"), "commit failed; refusing further writes");
                self.failed.store(true, Ordering::Release);
                let msg = format!("storage commit failed: {e:#}");
                for p in batch.drain(..) {
                    let _ = p.done.send(Err(msg.clone()));
                }
            }
        }
    }

    fn maybe_compact(&mut self) {
        if self.last_compaction.elapsed() < self.config.compact_interval {
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
