//! Requests on a resource collection, object or subresource: the verb picks a handler,
//! each of which hands the decoded request to `rest::Api` and renders its answer.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use drydock_api::tenancy::LogicalClusterName;
use serde_json::json;

use super::partial::list_json;
use super::path::ResourcePath;
use super::request::{As, Query, answer_as, decode_body, list_options, negotiate, read_body, write_options};
use super::{Server, json_response, json_value, protobuf, table, watch};
use crate::error::{ApiError, ApiResult};
use crate::patch::{PatchBody, PatchType};
use crate::registry::Resource;
use crate::rest::{Api, DeleteOptions, Propagation, Subresource, Target, WriteGuard, WriteOptions, Written};

/// One request on a resource, decoded as far as the verb's handler needs.
struct Call<'a> {
    api: &'a Api,
    t: Target,
    q: Query,
    accept: &'a str,
    /// The client is in this process ([`super::InProcess`]).
    in_process: bool,
    /// What the writer's authority adds to a write's checks.
    guard: Option<WriteGuard>,
}

impl Call<'_> {
    fn res(&self) -> &Resource {
        &self.t.res
    }

    fn include_object(&self) -> &str {
        self.q.get("includeObject").unwrap_or("Metadata")
    }
}

pub(super) async fn resource(
    srv: &Arc<Server>,
    cluster: &LogicalClusterName,
    p: ResourcePath,
    req: Request<Body>,
    accept: &str,
) -> ApiResult<Response> {
    let method = req.method().clone();
    let t = target(&srv.api, cluster, &p, &method)?;
    let warning = t.res.custom.as_ref().and_then(|c| c.warning.clone());
    let in_process = req.extensions().get::<super::InProcess>().is_some();
    let guard = super::authorize::write_guard(srv, cluster, &req, &t.res.def);
    let call = Call { api: &srv.api, t, q: Query::parse(req.uri().query()), accept, in_process, guard };
    let result = serve(srv, &call, p, req, method).await;
    match warning {
        None => result,
        Some(w) => {
            // A deprecated CRD version warns on every answer, errors included.
            let mut r = result.unwrap_or_else(|e| super::error_response(&e));
            add_warnings(&mut r, [w]);
            Ok(r)
        }
    }
}

/// Runs the verb's handler.
async fn serve(
    srv: &Arc<Server>,
    call: &Call<'_>,
    p: ResourcePath,
    req: Request<Body>,
    method: Method,
) -> ApiResult<Response> {
    match (method, &p.name) {
        (Method::GET, _) if p.watch || call.q.flag("watch") => {
            watch::serve(srv, &call.t, &call.q, call.accept, call.in_process).await
        }
        (Method::GET, Some(_)) => get(call).await,
        (Method::GET, None) => list(call).await,
        (Method::POST, None) => create(call, req).await,
        (Method::POST, Some(_)) => {
            Err(ApiError::method_not_allowed("POST is not allowed on a named resource; use PUT or PATCH"))
        }
        (Method::PUT, Some(_)) => update(call, req).await,
        (Method::PATCH, Some(_)) => patch(call, req).await,
        (Method::DELETE, _) => delete(call, req).await,
        (m, _) => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource: {m}"
        ))),
    }
}

/// What a resource path addresses, checked against what the resource serves.
fn target(api: &Api, cluster: &LogicalClusterName, p: &ResourcePath, method: &Method) -> ApiResult<Target> {
    let res = api
        .registries
        .for_cluster(cluster.as_str())
        .lookup(&p.group, &p.version, &p.resource)
        .cloned()
        .ok_or_else(ApiError::not_found_path)?;
    let sub = match p.subresource.as_deref() {
        None => None,
        Some("status") if res.def.status_subresource => Some(Subresource::Status),
        Some("scale") if res.def.scale.is_some() => Some(Subresource::Scale),
        Some(_) => return Err(ApiError::not_found_path()),
    };
    if p.namespace.is_some() && !res.def.namespaced {
        return Err(ApiError::not_found_path());
    }
    if res.def.namespaced && p.name.is_some() && p.namespace.is_none() {
        return Err(ApiError::not_found_path());
    }
    let t = Target {
        cluster: api.store.cluster_name(cluster.as_str()),
        res,
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        sub,
    };
    if crate::rest::is_wildcard(&t) && (method != Method::GET || p.name.is_some()) {
        return Err(ApiError::method_not_allowed(
            "/clusters/* addresses every logical cluster for list and watch only; name a logical cluster to read one object or write",
        ));
    }
    Ok(t)
}

async fn get(c: &Call<'_>) -> ApiResult<Response> {
    let as_ = negotiate(c.accept, &c.res().def)?;
    let obj = c.api.read(&c.t, c.q.get("resourceVersion")).await?;
    match (c.t.sub, as_) {
        (Some(Subresource::Scale), _) => {
            let scale = c.api.scale_of(&c.t, &c.api.value(c.res(), &obj)?)?;
            if as_ == As::Protobuf {
                return Ok(protobuf::response(StatusCode::OK, protobuf::encode_value(&scale)?));
            }
            Ok(json_value(StatusCode::OK, &scale))
        }
        (_, As::Table) => {
            let v = c.api.value(c.res(), &obj)?;
            let rv = obj.rv.to_string();
            Ok(json_value(StatusCode::OK, &table::table(&c.res().def, &[v], &rv, None, c.include_object())))
        }
        (_, As::Protobuf) => {
            Ok(protobuf::response(StatusCode::OK, protobuf::encode_json(&c.api.encode(c.res(), &obj)?)?))
        }
        (_, As::Metadata(p)) => {
            p.expect_object(&c.res().def.kind)?;
            let body = super::shown(&obj, c.in_process, |o| c.api.encode(c.res(), o))?;
            Ok(json_response(StatusCode::OK, p.object(&body)?, p.media_type()))
        }
        (_, As::Object) => Ok(json_response(StatusCode::OK, c.api.encode(c.res(), &obj)?, "application/json")),
    }
}

async fn list(c: &Call<'_>) -> ApiResult<Response> {
    let as_ = negotiate(c.accept, &c.res().def)?;
    let opts = list_options(c.api, &c.t, &c.q)?;
    let res = c.res();
    if let As::Metadata(p) = as_ {
        p.expect_list(&res.def.kind)?;
    }
    let list = c.api.list(&c.t, &opts).await?;
    match as_ {
        As::Table => {
            let objs = list.items.iter().map(|o| c.api.value(res, o)).collect::<ApiResult<Vec<_>>>()?;
            let rv = list.rev.to_string();
            let tbl = table::table(&res.def, &objs, &rv, list.continue_token.as_deref(), c.include_object());
            Ok(json_value(StatusCode::OK, &tbl))
        }
        As::Object | As::Protobuf | As::Metadata(_) => {
            let items = list
                .items
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let cluster = list.clusters.get(i).map(|c| &**c);
                    super::shown(o, c.in_process, |o| c.api.encode_in(res, o, cluster))
                })
                .collect::<ApiResult<Vec<_>>>()?;
            if let As::Metadata(p) = as_ {
                let body = p.list(list.rev, list.continue_token.as_deref(), list.remaining, &items)?;
                return Ok(json_response(StatusCode::OK, body, p.media_type()));
            }
            let body = list_body(res, list.rev, list.continue_token.as_deref(), list.remaining, &items);
            if as_ == As::Protobuf {
                return Ok(protobuf::response(StatusCode::OK, protobuf::encode_json(&body)?));
            }
            Ok(json_response(StatusCode::OK, body, "application/json"))
        }
    }
}

async fn create(c: &Call<'_>, req: Request<Body>) -> ApiResult<Response> {
    let opts = WriteOptions { guard: c.guard.clone(), ..write_options(&c.q, req.headers())? };
    let answer = answer_as(c.accept, &c.res().def)?;
    let (headers, body) = read_body(req).await?;
    let obj = decode_body(&headers, &body, Some(&c.res().def))?;
    let written = c.api.create(&c.t, obj, &opts).await?;
    // A new logical cluster is usable as soon as its creation is acknowledged.
    if crate::controllers::is_logical_cluster(&c.t)
        && !opts.dry_run
        && let Some(stored) = &written.stored
        && let Ok(v) = stored.to_value()
        && let Some(name) = v["metadata"]["name"].as_str()
    {
        crate::controllers::init_cluster(c.api, name).await?;
    }
    written_response(c, written, answer)
}

async fn update(c: &Call<'_>, req: Request<Body>) -> ApiResult<Response> {
    let opts = WriteOptions { guard: c.guard.clone(), ..write_options(&c.q, req.headers())? };
    let answer = answer_as(c.accept, &c.res().def)?;
    let (headers, body) = read_body(req).await?;
    let obj = decode_body(&headers, &body, Some(&c.res().def))?;
    written_response(c, c.api.update(&c.t, obj, &opts).await?, answer)
}

async fn patch(c: &Call<'_>, req: Request<Body>) -> ApiResult<Response> {
    let opts = WriteOptions { guard: c.guard.clone(), ..write_options(&c.q, req.headers())? };
    let answer = answer_as(c.accept, &c.res().def)?;
    let ct = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let ptype = PatchType::from_content_type(&ct).ok_or_else(|| {
        ApiError::unsupported_media(format!(
            "the body of the request was in an unknown format ({ct}) - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        ))
    })?;
    if ptype == PatchType::Apply && c.q.get("fieldManager").is_none_or(str::is_empty) {
        return Err(ApiError::new(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        )
        .with_details(json!({
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}],
        })));
    }
    let (headers, body) = read_body(req).await?;
    let first = decode_body(&headers, &body, None)?;
    let patch = PatchBody::new(first, move || decode_body(&headers, &body, None));
    written_response(c, c.api.patch(&c.t, ptype, patch, &opts).await?, answer)
}

/// Deletes the object, or the collection when no name is given.
async fn delete(c: &Call<'_>, req: Request<Body>) -> ApiResult<Response> {
    let q = &c.q;
    let answer = answer_as(c.accept, &c.res().def)?;
    let mut opts = DeleteOptions {
        propagation: match q.get("propagationPolicy") {
            Some(p) if !p.is_empty() => Propagation::parse(p)?,
            _ if q.get("orphanDependents") == Some("true") => Propagation::Orphan,
            _ => Propagation::Background,
        },
        dry_run: q.get("dryRun") == Some("All"),
        orphan_dependents: q.get("orphanDependents").and_then(|v| v.parse().ok()),
        ..Default::default()
    };
    let (headers, body) = read_body(req).await?;
    if !body.is_empty() {
        let v = decode_body(&headers, &body, Some(&c.res().def))?;
        opts.merge_body(&v)?;
    }
    if c.t.name.is_some() {
        return written_response(c, c.api.delete(&c.t, &opts).await?, answer);
    }
    let lo = list_options(c.api, &c.t, q)?;
    if let As::Metadata(p) = answer {
        p.expect_list(&c.res().def.kind)?;
    }
    let items = c.api.delete_collection(&c.t, &lo, &opts).await?;
    let rev = c.api.store.revision();
    if let As::Metadata(p) = answer {
        return Ok(json_response(StatusCode::OK, p.list(rev, None, None, &items)?, p.media_type()));
    }
    let body = list_body(c.res(), rev, None, None, &items);
    if answer == As::Protobuf {
        return Ok(protobuf::response(StatusCode::OK, protobuf::encode_json(&body)?));
    }
    Ok(json_response(StatusCode::OK, body, "application/json"))
}

fn written_response(c: &Call<'_>, mut w: Written, answer: As) -> ApiResult<Response> {
    let code = StatusCode::from_u16(w.code).unwrap_or(StatusCode::OK);
    if c.in_process {
        // The answer is usually the stored encoding itself, whose ranges watchers reuse.
        let stored = w.stored.as_ref().filter(|s| s.bytes.as_ptr() == w.body.as_ptr() && s.bytes.len() == w.body.len());
        let ranges = stored.map(|s| s.update_entry_ranges());
        w.body = crate::managed::apply_only::body_apply_entries_only(w.body, ranges);
    }
    let mut r = match answer {
        As::Metadata(p) => {
            p.expect_object(&c.res().def.kind)?;
            json_response(code, p.object(&w.body)?, p.media_type())
        }
        As::Protobuf => protobuf::response(code, protobuf::encode_json(&w.body)?),
        _ => json_response(code, w.body, "application/json"),
    };
    add_warnings(&mut r, w.warnings);
    Ok(r)
}

/// Appends `Warning: 299 - "<text>"` headers.
fn add_warnings(r: &mut Response, warnings: impl IntoIterator<Item = String>) {
    for warning in warnings {
        // A quoted-string (RFC 9110): quotes and backslashes escaped, as kube-apiserver does.
        let text = format!("299 - \"{}\"", warning.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
}

/// Assembles a `<Kind>List` of `res` from already-encoded items.
fn list_body(res: &Resource, rev: u64, cont: Option<&str>, remaining: Option<u64>, items: &[Bytes]) -> Bytes {
    list_json(&format!("{}List", res.def.kind), &res.def.api_version(), rev, cont, remaining, items)
}
