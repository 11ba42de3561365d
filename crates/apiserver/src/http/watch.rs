//! Streaming watch responses: newline-delimited JSON events, bookmarks, timeouts, and the
//! in-stream 410 ERROR event for revisions older than the retained history.

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::json;
use tokio::sync::mpsc;

use crate::error::ApiError;
use crate::metrics;
use crate::rest::WatchStart;
use crate::store::Stored;
use crate::store::watch::{EventType, Expired, WatchHub};

/// How each object is rendered into an event (plain, converted, or as a Table row).
/// It is given the object's logical cluster (named in wildcard watches).
pub type Render = Arc<dyn Fn(&str, &Stored) -> Result<Bytes, ApiError> + Send + Sync>;

pub struct WatchParams {
    pub timeout: Duration,
    pub bookmarks: bool,
    pub bookmark_interval: Duration,
    /// End an initial-events stream with the `k8s.io/initial-events-end` bookmark.
    pub initial_events_end: bool,
    pub kind: String,
    pub api_version: String,
}

fn frame(kind: &str, obj: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(obj.len() + 32);
    b.put_slice(b"{\"type\":\"");
    b.put_slice(kind.as_bytes());
    b.put_slice(b"\",\"object\":");
    b.put_slice(obj);
    b.put_slice(b"}\n");
    b.freeze()
}

fn bookmark(p: &WatchParams, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let obj = json!({"kind": p.kind, "apiVersion": p.api_version, "metadata": meta});
    frame("BOOKMARK", obj.to_string().as_bytes())
}

/// The single ERROR event answering a watch from a compacted revision.
pub fn expired_event(requested: &str, e: &Expired) -> Bytes {
    let status = ApiError::gone(format!("too old resource version: {requested} ({})", e.oldest)).status();
    frame("ERROR", status.to_string().as_bytes())
}

/// Runs a watch, writing frames into `tx` until the timeout, the client leaving, or the
/// subscriber being cut off for falling behind (the client then resumes from its last revision).
pub async fn run(start: WatchStart, render: Render, hub: Arc<WatchHub>, p: WatchParams, tx: mpsc::Sender<Bytes>) {
    let m = metrics::get();
    m.watchers.inc();
    let _gauge = scopeguard(|| {
        metrics::get().watchers.dec();
    });
    let WatchStart { initial, initial_clusters, after, subscription } = start;
    let mut last = after;
    let send = |b: Bytes| {
        let tx = tx.clone();
        async move { tx.send(b).await.is_ok() }
    };
    for (i, obj) in initial.iter().enumerate() {
        let cluster = initial_clusters.get(i).map_or("", |c| &**c);
        let Ok(bytes) = render(cluster, obj) else { continue };
        if !send(frame(EventType::Added.as_str(), &bytes)).await {
            return;
        }
    }
    if p.initial_events_end && p.bookmarks && !send(bookmark(&p, after, true)).await {
        return;
    }
    for (kind, ev) in subscription.replay {
        if ev.rv() <= last {
            continue;
        }
        last = ev.rv();
        let Ok(bytes) = render(&ev.key.cluster, &ev.obj) else { continue };
        if !send(frame(kind.as_str(), &bytes)).await {
            return;
        }
    }
    let mut rx = subscription.rx;
    let deadline = tokio::time::sleep(p.timeout);
    tokio::pin!(deadline);
    let mut tick = tokio::time::interval(p.bookmark_interval);
    tick.tick().await;
    loop {
        tokio::select! {
            ev = rx.recv() => {
                let Some((kind, ev)) = ev else { return };
                if ev.rv() <= last {
                    continue;
                }
                last = ev.rv();
                let Ok(bytes) = render(&ev.key.cluster, &ev.obj) else { continue };
                m.watch_events.inc();
                if !send(frame(kind.as_str(), &bytes)).await {
                    return;
                }
            }
            _ = &mut deadline => return,
            _ = tick.tick(), if p.bookmarks => {
                // Everything up to `published` has reached our queue; if it is drained, no
                // event up to there is unsent and the client may resume from it.
                let published = hub.published();
                if rx.is_empty() && published > last {
                    last = published;
                    if !send(bookmark(&p, published, false)).await {
                        return;
                    }
                }
            }
            _ = tx.closed() => return,
        }
    }
}

struct Guard<F: FnMut()>(F);
impl<F: FnMut()> Drop for Guard<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}
fn scopeguard<F: FnMut()>(f: F) -> Guard<F> {
    Guard(f)
}
