//! What watch events carry to the in-process clients (the controllers and the provider):
//! `metadata.managedFields` keeps only its Apply entries. Those are all the controllers
//! read (which fields their own applies own); the Update entries, recorded on nearly every
//! write, made decoding each event in every informer the largest cost of field tracking.
//! Gets and lists still carry every entry, so a controller that needs them reads the
//! object. This plays the part of Cluster API's cache transform that strips managedFields.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{Request, Response};
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::Service;

/// Wraps the in-process router so that watch streams drop Update entries.
#[derive(Clone)]
pub struct ApplyEntriesOnly<S>(pub S);

impl<S, B> Service<Request<B>> for ApplyEntriesOnly<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let watch = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let fut = self.0.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if !watch {
                return Ok(resp);
            }
            Ok(resp.map(|b| Body::new(b.map_frame(|f| f.map_data(|d| apply_entries_only(&d))))))
        })
    }
}

const KEY: &[u8] = b"\"managedFields\":[";
const APPLY: &[u8] = b"\"operation\":\"Apply\"";

/// The end (exclusive) of the JSON value starting at `start` (an object or array).
fn value_end(b: &[u8], start: usize) -> usize {
    let (mut depth, mut in_str, mut i) = (0usize, false, start);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    b.len()
}

/// `d` with the Update entries of every managedFields array left out (the server writes
/// JSON without whitespace).
pub fn apply_entries_only(d: &Bytes) -> Bytes {
    let Some(first) = memchr::memmem::find(d, KEY) else { return d.clone() };
    let mut out: Vec<u8> = Vec::with_capacity(d.len());
    let mut at = 0;
    let mut next = Some(first);
    while let Some(pos) = next {
        let open = pos + KEY.len() - 1;
        out.extend_from_slice(&d[at..=open]);
        let end = value_end(d, open);
        let mut i = open + 1;
        let mut kept = 0;
        while i < end && d[i] == b'{' {
            let e = value_end(d, i);
            if memchr::memmem::find(&d[i..e], APPLY).is_some() {
                if kept > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&d[i..e]);
                kept += 1;
            }
            i = if e < end && d[e] == b',' { e + 1 } else { e };
        }
        out.push(b']');
        at = end;
        next = memchr::memmem::find(&d[at..], KEY).map(|p| p + at);
    }
    out.extend_from_slice(&d[at..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_apply_entries_only() {
        let obj = json!({"type": "MODIFIED", "object": {"metadata": {"managedFields": [
            {"manager": "a", "operation": "Apply", "fieldsV1": {"f:x": {}}},
            {"manager": "b", "operation": "Update", "fieldsV1": {"f:y": {".": {}, "f:\"]}": {}}}},
            {"manager": "c", "operation": "Apply", "fieldsV1": {}}
        ], "name": "n"}}});
        let out = apply_entries_only(&Bytes::from(serde_json::to_vec(&obj).unwrap()));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let managers: Vec<&str> = v["object"]["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["a", "c"]);
        assert_eq!(v["object"]["metadata"]["name"], "n");
        let none = json!({"metadata": {"managedFields": [{"manager": "b", "operation": "Update"}]}});
        let out = apply_entries_only(&Bytes::from(serde_json::to_vec(&none).unwrap()));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["metadata"]["managedFields"], json!([]));
        let plain = Bytes::from_static(b"{\"metadata\":{}}");
        assert_eq!(apply_entries_only(&plain), plain);
    }
}
