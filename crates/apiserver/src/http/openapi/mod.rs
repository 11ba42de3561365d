//! `/openapi/v2` (Swagger 2.0) and `/openapi/v3` (an index plus one OpenAPI 3.0 document
//! per group-version), built from the registry and cached per registry (`cache.rs`), with
//! kube-apiserver's caching headers: content-hash ETags, `If-None-Match`, and for v3 URLs
//! carrying the current `hash` immutable responses (a stale hash redirects to the current
//! one).

mod cache;
mod kinds;
mod meta;
mod names;
mod paths;
mod v2;
mod v3;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Map, Value, json};

pub use cache::{Documents, build};

use super::request::Query;
use crate::error::{ApiError, ApiResult};
use crate::registry::Registry;

const PROTO_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The documents of `reg`, built the first time they are asked for.
pub async fn documents(reg: &Arc<Registry>) -> ApiResult<Arc<Documents>> {
    cache::documents(reg).await
}

/// Answers `/openapi/v2` (`v3_path` `None`) or `/openapi/v3/<v3_path>`.
pub fn respond(docs: &Documents, v3_path: Option<&str>, req: &Request<Body>) -> ApiResult<Response> {
    match v3_path {
        None => v2_response(docs, req.headers()),
        Some(path) => v3_response(docs, path.trim_matches('/'), req),
    }
}

/// How a client wants an OpenAPI document encoded.
#[derive(PartialEq)]
enum Encoding {
    Json,
    ProtoV2,
}

/// The first media type in `Accept` that is served (`proto_v2` only for `/openapi/v2`).
fn negotiate(headers: &HeaderMap, proto_v2: bool) -> ApiResult<Encoding> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if accept.trim().is_empty() {
        return Ok(Encoding::Json);
    }
    for part in accept.split(',') {
        let base = part.split(';').next().unwrap_or_default().trim();
        match base {
            "application/json" | "application/*" | "*/*" => return Ok(Encoding::Json),
            // kubectl 1.27 and 1.28 spell it with `@`; both spellings name the same type.
            b if proto_v2 && b.starts_with("application/com.github.proto-openapi.spec.v2") => {
                return Ok(Encoding::ProtoV2);
            }
            _ => {}
        }
    }
    Err(ApiError::not_acceptable(format!("none of the media types in {accept:?} is served; use application/json")))
}

/// Swagger 2.0 as JSON. Asked for as protobuf, the answer is an empty document: kubectl
/// 1.27 and 1.28 then skip client-side validation and leave it to the server
/// (`fieldValidation=Strict`), and keep computing strategic merge patches from their
/// built-in types, which know every merge key.
fn v2_response(docs: &Documents, headers: &HeaderMap) -> ApiResult<Response> {
    if negotiate(headers, true)? == Encoding::ProtoV2 {
        return Ok(body_response(StatusCode::OK, Bytes::new(), PROTO_V2));
    }
    let etag = format!("\"{}\"", docs.v2.hash);
    if matches_etag(headers, &etag) {
        return Ok(not_modified(&etag));
    }
    let mut resp = body_response(StatusCode::OK, docs.v2.body.clone(), "application/json");
    insert(&mut resp, header::ETAG, &etag);
    insert(&mut resp, header::VARY, "Accept");
    Ok(resp)
}

fn v3_response(docs: &Documents, path: &str, req: &Request<Body>) -> ApiResult<Response> {
    negotiate(req.headers(), false)?;
    let prefix = cluster_prefix(req.uri().path());
    if path.is_empty() {
        return Ok(body_response(StatusCode::OK, index(docs, prefix).to_string().into(), "application/json"));
    }
    let doc = docs.v3.get(path).ok_or_else(ApiError::not_found_path)?;
    let etag = format!("\"{}\"", doc.hash);
    let query = Query::parse(req.uri().query());
    let hash = query.get("hash").filter(|h| !h.is_empty());
    if let Some(asked) = hash
        && asked != doc.hash
    {
        let mut resp = body_response(StatusCode::MOVED_PERMANENTLY, Bytes::new(), "text/plain");
        insert(&mut resp, header::LOCATION, &server_relative_url(prefix, path, &doc.hash));
        return Ok(resp);
    }
    if matches_etag(req.headers(), &etag) {
        return Ok(not_modified(&etag));
    }
    let mut resp = body_response(StatusCode::OK, doc.body.clone(), "application/json");
    insert(&mut resp, header::ETAG, &etag);
    insert(&mut resp, header::VARY, "Accept");
    if hash.is_some() {
        // The URL names the content, so it never changes.
        insert(&mut resp, header::CACHE_CONTROL, "public, immutable");
        let expires = SystemTime::now() + Duration::from_secs(365 * 24 * 3600);
        insert(&mut resp, header::EXPIRES, &httpdate::fmt_http_date(expires));
    } else {
        insert(&mut resp, header::CACHE_CONTROL, "no-cache, private");
    }
    Ok(resp)
}

/// The part of the request path before `/openapi/`: `/clusters/<name>` inside a logical
/// cluster. Index URLs carry it, since clients request them as given, replacing the
/// path of their server URL.
fn cluster_prefix(path: &str) -> &str {
    path.find("/openapi/").map_or("", |i| &path[..i])
}

fn server_relative_url(prefix: &str, key: &str, hash: &str) -> String {
    format!("{prefix}/openapi/v3/{key}?hash={hash}")
}

/// The `/openapi/v3` index: every group-version with the URL of its current document.
fn index(docs: &Documents, prefix: &str) -> Value {
    let paths: Map<String, Value> = docs
        .v3
        .iter()
        .map(|(key, doc)| (key.clone(), json!({"serverRelativeURL": server_relative_url(prefix, key, &doc.hash)})))
        .collect();
    json!({"paths": paths})
}

fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
}

fn not_modified(etag: &str) -> Response {
    let mut resp = body_response(StatusCode::NOT_MODIFIED, Bytes::new(), "application/json");
    resp.headers_mut().remove(header::CONTENT_TYPE);
    insert(&mut resp, header::ETAG, etag);
    resp
}

fn body_response(code: StatusCode, body: Bytes, content_type: &str) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = code;
    insert(&mut resp, header::CONTENT_TYPE, content_type);
    resp
}

fn insert(resp: &mut Response, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        resp.headers_mut().insert(name, v);
    }
}
