//! Streaming watch responses: newline-delimited JSON events (or length-prefixed protobuf
//! frames), bookmarks, timeouts, and the in-stream 410 ERROR event for revisions older than the
//! retained history.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::json;
use tokio::sync::mpsc;

use super::request::{As, Query, list_options, negotiate};
use super::{Server, protobuf, table};
use crate::error::{ApiError, ApiResult};
use crate::metrics;
use crate::rest::{Api, Target, WatchStart};
use crate::store::Stored;
use crate::store::watch::{EventType, WatchHub};

/// Answers a watch request: a stream of events, ended by its timeout, the client or the
/// server shutting down.
pub(super) async fn serve(
    srv: &Arc<Server>,
    t: &Target,
    q: &Query,
    accept: &str,
    in_process: bool,
) -> ApiResult<Response> {
    let api = srv.api.clone();
    let as_ = negotiate(accept, &t.res.def)?;
    if let As::Metadata(p) = as_ {
        p.expect_object(&t.res.def.kind)?;
    }
    let opts = list_options(&api, t, q)?;
    let timeout = match q.get("timeoutSeconds").filter(|s| !s.is_empty()) {
        Some(s) => Duration::from_secs(
            s.parse::<u64>().map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds: \"{s}\"")))?,
        ),
        None => Duration::from_secs(1800 + rand::random::<u64>() % 1800),
    };
    let params = WatchParams {
        timeout,
        bookmarks: q.flag("allowWatchBookmarks"),
        bookmark_interval: srv.bookmark_interval,
        initial_events_end: opts.send_initial_events == Some(true),
        kind: t.res.def.kind.clone(),
        api_version: t.res.def.api_version(),
        protobuf: as_ == As::Protobuf,
    };
    // Bookmarks of a metadata watch are metadata too.
    let params = match as_ {
        As::Metadata(p) => {
            let (kind, api_version) = p.event_kind();
            WatchParams { kind: kind.into(), api_version: api_version.into(), protobuf: p.protobuf, ..params }
        }
        _ => params,
    };
    let protobuf = params.protobuf;
    let started = api.watch(t, &opts).await?;
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    match started {
        Err(e) => {
            let _ = tx.send(error_event(&e, protobuf)).await;
        }
        Ok(start) => {
            let render = renderer(&api, t, as_, q.get("includeObject").unwrap_or("Metadata"), in_process);
            let hub = api.store.hub().clone();
            let mut stopping = srv.stopping.subscribe();
            tokio::spawn(async move {
                tokio::select! {
                    _ = run(start, render, hub, params, tx) => {}
                    _ = stopping.wait_for(|s| *s) => {}
                }
            });
        }
    }
    Ok(stream_response(rx, protobuf))
}

/// How a watch of `t` renders its objects: as stored (named with their logical cluster in
/// wildcard watches; for in-process clients with Apply entries only), as their metadata or
/// as one-row Tables.
fn renderer(api: &Api, t: &Target, as_: As, include_object: &str, in_process: bool) -> Render {
    let (api, res) = (api.clone(), t.res.clone());
    match as_ {
        As::Object => {
            let wildcard = crate::rest::is_wildcard(t);
            Arc::new(move |cluster: &str, o: &Stored| {
                super::shown(o, in_process, |o| api.encode_in(&res, o, wildcard.then_some(cluster)))
            })
        }
        As::Protobuf => {
            let wildcard = crate::rest::is_wildcard(t);
            Arc::new(move |cluster: &str, o: &Stored| {
                protobuf::encode_json(&super::shown(o, in_process, |o| {
                    api.encode_in(&res, o, wildcard.then_some(cluster))
                })?)
            })
        }
        As::Metadata(p) => {
            let wildcard = crate::rest::is_wildcard(t);
            Arc::new(move |cluster: &str, o: &Stored| {
                p.object(&super::shown(o, in_process, |o| api.encode_in(&res, o, wildcard.then_some(cluster)))?)
            })
        }
        As::Table => {
            let include = include_object.to_string();
            Arc::new(move |_cluster: &str, o: &Stored| {
                let v = api.value(&res, o)?;
                let tbl = table::table(&res.def, &[v], &o.rv.to_string(), None, &include);
                Ok(Bytes::from(tbl.to_string()))
            })
        }
    }
}

fn stream_response(rx: mpsc::Receiver<Bytes>, protobuf: bool) -> Response {
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    let body = Body::from_stream(futures::StreamExt::map(stream, Ok::<_, std::convert::Infallible>));
    let mut r = Response::new(body);
    let content_type = if protobuf { protobuf::WATCH_MEDIA_TYPE } else { "application/json" };
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    r
}

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
    /// Frames are protobuf `WatchEvent`s of enveloped objects rather than JSON lines.
    pub protobuf: bool,
}

impl WatchParams {
    fn frame(&self, kind: &str, obj: &[u8]) -> Bytes {
        if self.protobuf { protobuf::watch_frame(kind, obj) } else { frame(kind, obj) }
    }
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

fn bookmark(p: &WatchParams, rv: u64, initial_end: bool) -> Option<Bytes> {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        // client-go 1.32/1.33's watch-list builds its list from this empty one.
        let blueprint =
            json!({"kind": format!("{}List", p.kind), "apiVersion": p.api_version, "metadata": {}, "items": []});
        meta["annotations"] = json!({
            "k8s.io/initial-events-end": "true",
            "kubernetes.io/initial-events-list-blueprint": STANDARD.encode(blueprint.to_string()),
        });
    }
    let obj = json!({"kind": p.kind, "apiVersion": p.api_version, "metadata": meta});
    if p.protobuf {
        return protobuf::encode_value(&obj).ok().map(|b| p.frame("BOOKMARK", &b));
    }
    Some(frame("BOOKMARK", obj.to_string().as_bytes()))
}

/// The single ERROR event answering a watch that cannot start: its revision was compacted
/// (410) or not reached in time (504).
pub fn error_event(e: &ApiError, as_protobuf: bool) -> Bytes {
    let status = e.status();
    if as_protobuf && let Ok(b) = protobuf::encode_value(&status) {
        return protobuf::watch_frame("ERROR", &b);
    }
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
        if !send(p.frame(EventType::Added.as_str(), &bytes)).await {
            return;
        }
    }
    if p.initial_events_end
        && p.bookmarks
        && let Some(b) = bookmark(&p, after, true)
        && !send(b).await
    {
        return;
    }
    for (kind, ev) in subscription.replay {
        if ev.rv() <= last {
            continue;
        }
        last = ev.rv();
        let Ok(bytes) = render(&ev.key.cluster, &ev.obj) else { continue };
        if !send(p.frame(kind.as_str(), &bytes)).await {
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
                if !send(p.frame(kind.as_str(), &bytes)).await {
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
                    if let Some(b) = bookmark(&p, published, false) && !send(b).await {
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
