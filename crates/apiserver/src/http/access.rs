//! Request logs: one debug line per request (method, path and query, status, latency, user
//! agent, logical cluster, verb), and for a watch one when it starts and one when it ends.
//!
//! Nothing is captured, formatted or allocated unless debug is enabled for this module's
//! target (`drydock_apiserver::http::access`): [`Access::capture`] is then `None` after one
//! level check.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Uri, header};
use axum::response::Response;
use drydock_api::tenancy::LogicalClusterName;
use futures::StreamExt as _;

/// What a request's log line needs from the request, captured before it is consumed.
pub struct Access {
    method: Method,
    uri: Uri,
    user_agent: Option<HeaderValue>,
    cluster: LogicalClusterName,
}

impl Access {
    /// The request's details when request logging is enabled, else `None` (no allocation).
    /// Boxed, so that a request future carries one pointer when logging is off.
    pub fn capture(req: &Request<Body>, cluster: &LogicalClusterName) -> Option<Box<Self>> {
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return None;
        }
        Some(Box::new(Self {
            method: req.method().clone(),
            uri: req.uri().clone(),
            user_agent: req.headers().get(header::USER_AGENT).cloned(),
            cluster: cluster.clone(),
        }))
    }

    /// Logs the answered request. A watch is logged as started, and its response body is
    /// wrapped so that its end is logged too.
    pub fn finish(self: Box<Self>, verb: &str, resp: Response, started: Instant) -> Response {
        let latency = started.elapsed();
        let status = resp.status().as_u16();
        let user_agent = self.user_agent.as_ref().and_then(|v| v.to_str().ok()).unwrap_or("");
        let path = self.uri.path_and_query().map_or_else(|| self.uri.path(), |p| p.as_str());
        let message = if verb == "WATCH" { "watch started" } else { "request" };
        tracing::debug!(
            method = %self.method, path, status, ?latency, verb, cluster = %self.cluster, user_agent, "{message}"
        );
        if verb != "WATCH" || !resp.status().is_success() {
            return resp;
        }
        let (parts, body) = resp.into_parts();
        let end = WatchEnd { access: self, started };
        let body = body.into_data_stream().map(move |chunk| {
            let _ = &end;
            chunk
        });
        Response::from_parts(parts, Body::from_stream(body))
    }
}

/// Logs a watch's end when its response body is dropped (the client left or the server
/// ended the stream).
struct WatchEnd {
    access: Box<Access>,
    started: Instant,
}

impl Drop for WatchEnd {
    fn drop(&mut self) {
        let duration: Duration = self.started.elapsed();
        let path = self.access.uri.path_and_query().map_or_else(|| self.access.uri.path(), |p| p.as_str());
        tracing::debug!(path, cluster = %self.access.cluster, ?duration, "watch ended");
    }
}
