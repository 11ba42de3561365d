//! Follows etcd's watch on drydock's prefix: applies each event to the in-memory tables and
//! publishes it to this replica's watchers, in etcd's revision order. A broken stream is
//! resumed on the next member from the last applied revision.
//!
//! When a reader needs to know that the watch has caught up with etcd, the follower writes a
//! barrier key under the prefix and waits for its event: a watch stream delivers events in
//! revision order, so everything before the barrier has been applied once it arrives. etcd's
//! progress notifications would say the same without a write, but before etcd 3.4.25 and
//! 3.5.8 (still what distributions ship) a requested one can overtake the events it claims
//! were sent, above all on a watch just resumed from an older revision; trusting it would
//! serve stale reads and, should the stream then break, resume past events never applied.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use etcdv3client::pb::{self, watch_request};
use parking_lot::RwLock;
use tokio::sync::mpsc;

use super::client::{Members, prefix_end};
use crate::store::watch::{EventType, WatchEvent, WatchHub};
use crate::store::{ObjKey, ResourceNames, State, Stored, parse_log_key, table_mut};

pub(super) struct Follower {
    pub members: Arc<Members>,
    pub prefix: String,
    pub state: Arc<RwLock<State>>,
    pub hub: Arc<WatchHub>,
    pub names: Arc<dyn ResourceNames>,
}

/// The key of the barrier writes, under the prefix; it names no resource.
pub(super) const BARRIER: &str = "~barrier";

/// The barrier write in flight, if any, and whether another reader asked meanwhile (its
/// revision may be past that barrier's).
#[derive(Default)]
struct Barrier {
    in_flight: bool,
    again: bool,
}

/// How a watch stream ended without an error of its own.
enum Ended {
    /// etcd no longer has the revisions after the last applied one.
    Compacted(u64),
}

impl Follower {
    /// Follows etcd from revision `from` on (exclusive) until the store is dropped.
    pub async fn run(self, mut from: u64, mut wanted: mpsc::UnboundedReceiver<()>) {
        let mut skip = false;
        loop {
            match self.stream(&mut from, &mut wanted, skip).await {
                Ok(Ended::Compacted(at)) => {
                    let cause = format!(
                        "its etcd watch fell behind etcd's compaction (revision {at}; this replica had applied {from})"
                    );
                    tracing::error!(cause = %cause, "the store is read-only until this replica restarts");
                    self.state.write().failure = Some(Arc::from(cause));
                    self.hub.mark_reverted();
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), revision = from, "etcd watch broke; resuming on the next member");
                    skip = true;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            if Arc::strong_count(&self.hub) == 1 {
                return;
            }
        }
    }

    async fn stream(
        &self,
        from: &mut u64,
        wanted: &mut mpsc::UnboundedReceiver<()>,
        skip: bool,
    ) -> anyhow::Result<Ended> {
        let (url, mut client) = self.members.member(skip);
        let (failed_tx, mut failed) = mpsc::unbounded_channel();
        let mut barrier = Barrier::default();
        let (tx, rx) = mpsc::channel(4);
        let create = pb::WatchCreateRequest {
            key: self.prefix.as_bytes().to_vec(),
            range_end: prefix_end(self.prefix.as_bytes()),
            start_revision: (*from + 1) as i64,
            ..Default::default()
        };
        tx.send(pb::WatchRequest { request_union: Some(watch_request::RequestUnion::CreateRequest(create)) })
            .await
            .context("queueing the watch request")?;
        let mut stream = client
            .watch
            .watch(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .with_context(|| format!("watching {url}"))?;
        tracing::debug!(member = %url, from = *from + 1, "following etcd");
        if skip {
            // Readers may have waited on the broken stream: let them know where etcd is.
            self.write_barrier(&mut barrier, &failed_tx);
        }
        loop {
            tokio::select! {
                msg = stream.message() => {
                    let resp = msg.with_context(|| format!("reading the watch of {url}"))?
                        .with_context(|| format!("{url} ended the watch"))?;
                    if resp.compact_revision > 0 {
                        return Ok(Ended::Compacted(resp.compact_revision as u64));
                    }
                    anyhow::ensure!(!resp.canceled, "{url} canceled the watch: {}", resp.cancel_reason);
                    // Events only: no progress notification is asked for (see the module's note).
                    if resp.events.is_empty() {
                        continue;
                    }
                    let (last, barriers) = self.apply(resp.events);
                    *from = (*from).max(last);
                    if barriers {
                        barrier.in_flight = false;
                        if std::mem::take(&mut barrier.again) {
                            self.write_barrier(&mut barrier, &failed_tx);
                        }
                    }
                }
                Some(()) = wanted.recv() => {
                    while wanted.try_recv().is_ok() {}
                    self.write_barrier(&mut barrier, &failed_tx);
                }
                Some(()) = failed.recv() => barrier.in_flight = false,
            }
        }
    }

    /// Writes a barrier unless one is in flight (then another follows it).
    fn write_barrier(&self, barrier: &mut Barrier, failed: &mpsc::UnboundedSender<()>) {
        if barrier.in_flight {
            barrier.again = true;
            return;
        }
        barrier.in_flight = true;
        let members = self.members.clone();
        let key = format!("{}{BARRIER}", self.prefix);
        let failed = failed.clone();
        tokio::spawn(async move {
            if let Err(e) = members.put(key.as_bytes()).await {
                tracing::warn!(error = %format!("{e:#}"), "writing an etcd watch barrier failed");
                let _ = failed.send(());
            }
        });
    }

    /// Applies a batch of events in revision order; returns the last revision and whether
    /// a barrier was among them.
    fn apply(&self, events: Vec<pb::Event>) -> (u64, bool) {
        // Decoded before taking the lock that readers and writers share.
        let mut decoded: Vec<(ObjKey, u64, Option<Stored>)> = Vec::with_capacity(events.len());
        let mut last = 0;
        let mut barriers = false;
        {
            let st = self.state.read();
            for ev in events {
                let Some(kv) = ev.kv else { continue };
                let rev = kv.mod_revision as u64;
                last = rev;
                let key = std::str::from_utf8(&kv.key).ok().and_then(|k| k.strip_prefix(self.prefix.as_str()));
                if key == Some(BARRIER) {
                    barriers = true;
                    continue;
                }
                let key = key.and_then(|k| parse_log_key(k, self.names.as_ref(), &st.clusters));
                let Some(key) = key else {
                    tracing::debug!(key = %String::from_utf8_lossy(&kv.key), "etcd key names no resource; skipped");
                    continue;
                };
                if ev.r#type == pb::event::EventType::Delete as i32 {
                    decoded.push((key, rev, None));
                    continue;
                }
                match Stored::from_bytes(rev, kv.value.into(), &self.names.selectable(key.res)) {
                    Ok(s) => decoded.push((key, rev, Some(s))),
                    Err(e) => tracing::warn!(error = %e, revision = rev, "an object in etcd does not parse; skipped"),
                }
            }
        }
        let nres = self.names.count();
        let mut out = Vec::with_capacity(decoded.len());
        {
            let mut st = self.state.write();
            for (key, rev, obj) in decoded {
                let table = table_mut(&mut st.clusters, &key, nres);
                let tkey = (key.namespace.clone(), key.name.clone());
                let ev = match obj {
                    None => {
                        let Some(prev) = table.remove(&tkey) else { continue };
                        WatchEvent { kind: EventType::Deleted, obj: Arc::new(prev.with_rv(rev)), prev: Some(prev), key }
                    }
                    Some(obj) => {
                        let obj = Arc::new(obj);
                        let prev = table.insert(tkey, obj.clone());
                        let kind = if prev.is_some() { EventType::Modified } else { EventType::Added };
                        WatchEvent { kind, obj, prev, key }
                    }
                };
                out.push(Arc::new(ev));
            }
            st.rev = st.rev.max(last);
        }
        self.hub.publish(&out);
        self.hub.advance(last);
        (last, barriers)
    }
}
