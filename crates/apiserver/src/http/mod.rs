//! The HTTP face of the API server: one axum fallback handler that parses the path, picks
//! the verb, decodes the body and renders results and errors the way kubectl, kube-rs and
//! client-go expect.

pub mod discovery;
pub mod path;
pub mod prefix;
pub mod table;
mod watch;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::error::{ApiError, ApiResult};
use crate::patch::PatchType;
use crate::rest::{
    Api, DeleteOptions, FieldValidation, ListOptions, Propagation, Subresource, Target, WriteOptions, Written,
};
use crate::selector::LabelSelector;
use crate::store::{ObjKey, Stored};
use crate::{builtin, metrics};
use path::{ROOT_CLUSTER, ResourcePath, Route};

/// Largest request body accepted (kube-apiserver's limit for JSON bodies).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Extra metrics rendered after the server's own (e.g. the controllers' registry).
pub type MetricsSource = Arc<dyn Fn(&mut String) + Send + Sync>;

/// Shared state of the HTTP handlers.
pub struct Server {
    pub api: Api,
    pub version_minor: String,
    pub extra_metrics: Vec<MetricsSource>,
    pub bookmark_interval: Duration,
    /// Set when the server is shutting down: open watches end.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

pub fn router(server: Arc<Server>) -> axum::Router {
    axum::Router::new().fallback(dispatch).with_state(server)
}

/// Query parameters (repeated keys: last wins; empty pairs ignored, as kube-rs sends `?&watch=...`).
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(q: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(q.unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }
    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

async fn dispatch(State(srv): State<Arc<Server>>, req: Request<Body>) -> Response {
    let started = Instant::now();
    let (cluster, route) = path::parse(req.uri().path());
    let (verb, group, resource) = describe(&route, req.method(), req.uri().query());
    let resp = match handle(&srv, cluster, route, req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    };
    if verb != "WATCH" {
        metrics::request(&verb, &group, &resource, resp.status().as_u16(), started.elapsed());
    } else {
        metrics::request(&verb, &group, &resource, resp.status().as_u16(), Duration::ZERO);
    }
    resp
}

/// Verb and resource labels for metrics, in kube-apiserver's spelling.
fn describe(route: &Route, method: &Method, query: Option<&str>) -> (String, String, String) {
    match route {
        Route::Resource(p) => {
            let q = Query::parse(query);
            let verb = match *method {
                Method::GET if p.watch || q.flag("watch") => "WATCH",
                Method::GET if p.name.is_none() => "LIST",
                Method::GET => "GET",
                Method::POST => "POST",
                Method::PUT => "PUT",
                Method::PATCH => "PATCH",
                Method::DELETE => "DELETE",
                _ => "OTHER",
            };
            let res = match &p.subresource {
                Some(s) => format!("{}/{s}", p.resource),
                None => p.resource.clone(),
            };
            (verb.into(), p.group.clone(), res)
        }
        _ => (method.as_str().to_string(), String::new(), String::new()),
    }
}

pub fn error_response(e: &ApiError) -> Response {
    let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, e.status().to_string().into(), "application/json")
}

fn json_response(code: StatusCode, body: Bytes, content_type: &str) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = code;
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    r
}

fn json_value(code: StatusCode, v: &Value) -> Response {
    json_response(code, v.to_string().into(), "application/json")
}

async fn handle(srv: &Arc<Server>, cluster: String, route: Route, req: Request<Body>) -> ApiResult<Response> {
    let accept = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    if !matches!(route, Route::Health(_) | Route::Metrics | Route::Version | Route::OpenApiV2 | Route::OpenApiV3(_))
        && cluster != ROOT_CLUSTER
        && cluster != crate::rest::WILDCARD
        && !logical_cluster_exists(&srv.api, &cluster)
    {
        return Err(ApiError::new(404, "NotFound", format!("logical cluster \"{cluster}\" not found")));
    }
    let reg = &srv.api.registry;
    match route {
        Route::Version => Ok(json_value(
            StatusCode::OK,
            &json!({
                "major": "1", "minor": srv.version_minor,
                "gitVersion": format!("v1.{}.0-drydock.{}", srv.version_minor, env!("CARGO_PKG_VERSION")),
                "gitCommit": "", "gitTreeState": "clean", "buildDate": "", "goVersion": "",
                "compiler": "rustc", "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
            }),
        )),
        Route::Health(_) => {
            if srv.api.store.healthy() {
                Ok((StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "ok").into_response())
            } else {
                Ok((StatusCode::INTERNAL_SERVER_ERROR, "[-]store failed: a commit to the durable log failed\n")
                    .into_response())
            }
        }
        Route::Metrics => {
            let mut out = String::new();
            metrics::get().objects.set(srv.api.store.revision() as i64);
            metrics::encode(&mut out).map_err(|e| ApiError::internal(e.to_string()))?;
            for extra in &srv.extra_metrics {
                extra(&mut out);
            }
            out.push_str("# EOF\n");
            Ok((StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], out)
                .into_response())
        }
        // An empty protobuf document: kubectl then finds no client-side schema and leaves
        // validation to the server (fieldValidation=Strict).
        Route::OpenApiV2 => Ok(json_response(
            StatusCode::OK,
            Bytes::new(),
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        )),
        Route::OpenApiV3(_) => Err(ApiError::not_found_path()),
        Route::CoreVersions => match discovery::aggregated_version(&accept) {
            Some(v) => Ok(json_response(
                StatusCode::OK,
                discovery::aggregated(reg, true, v).to_string().into(),
                &discovery::aggregated_content_type(v),
            )),
            None => {
                let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
                Ok(json_value(StatusCode::OK, &discovery::core_versions(host)))
            }
        },
        Route::Groups => match discovery::aggregated_version(&accept) {
            Some(v) => Ok(json_response(
                StatusCode::OK,
                discovery::aggregated(reg, false, v).to_string().into(),
                &discovery::aggregated_content_type(v),
            )),
            None => Ok(json_value(StatusCode::OK, &discovery::group_list(reg))),
        },
        Route::Group(g) => {
            discovery::group(reg, &g).map(|d| json_value(StatusCode::OK, &d)).ok_or_else(ApiError::not_found_path)
        }
        Route::Resources { group, version } => discovery::resource_list(reg, &group, &version)
            .map(|d| json_value(StatusCode::OK, &d))
            .ok_or_else(ApiError::not_found_path),
        Route::Resource(p) => resource(srv, cluster, p, req, &accept).await,
        Route::NotFound => Err(ApiError::not_found_path()),
    }
}

/// A non-root logical cluster exists while its LogicalCluster object does.
pub fn logical_cluster_exists(api: &Api, name: &str) -> bool {
    let Some(res) = api.registry.lookup(builtin::TENANCY_GROUP, "v1alpha1", "logicalclusters") else {
        return false;
    };
    let key = ObjKey {
        cluster: api.store.cluster_name(ROOT_CLUSTER),
        res: res.id,
        namespace: String::new(),
        name: name.to_string(),
    };
    api.store.get(&key).is_some()
}

/// Response negotiation for object reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum As {
    Object,
    Table,
}

fn negotiate(accept: &str) -> ApiResult<As> {
    if accept.is_empty() {
        return Ok(As::Object);
    }
    let mut json_ok = false;
    for part in accept.split(',') {
        let p = part.trim();
        if p.contains("as=Table") && p.contains("g=meta.k8s.io") {
            return Ok(As::Table);
        }
        if p.contains("as=") {
            continue;
        }
        let base = p.split(';').next().unwrap_or_default().trim();
        if matches!(base, "application/json" | "*/*" | "application/*" | "application/yaml" | "") {
            json_ok = true;
        }
    }
    if json_ok {
        Ok(As::Object)
    } else {
        Err(ApiError::not_acceptable(format!(
            "only the following media types are accepted: application/json, application/yaml; got {accept}"
        )))
    }
}

async fn read_body(req: Request<Body>) -> ApiResult<(HeaderMap, Bytes)> {
    let (parts, body) = req.into_parts();
    if let Some(len) =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok())
        && len > MAX_BODY
    {
        return Err(ApiError::too_large(format!("the request body is {len} bytes; the limit is {MAX_BODY}")));
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError::too_large(format!("the request body is larger than the limit of {MAX_BODY} bytes")))?;
    Ok((parts.headers, bytes))
}

fn decode_body(headers: &HeaderMap, body: &[u8], patch: bool) -> ApiResult<Value> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let base = ct.split(';').next().unwrap_or_default().trim();
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let yaml = matches!(base, "application/yaml" | "application/x-yaml" | "text/yaml" | "application/apply-patch+yaml");
    if !yaml && !patch && !matches!(base, "application/json" | "" | "*/*") {
        return Err(ApiError::unsupported_media(format!(
            "the body of the request was in an unknown format ({base}) - accepted media types include: application/json, application/yaml"
        )));
    }
    if yaml && !body.starts_with(b"{") {
        let text = std::str::from_utf8(body).map_err(|_| ApiError::bad_request("the YAML body is not UTF-8"))?;
        return serde_saphyr::from_str::<Value>(text)
            .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode the request body as JSON: {e}")))
}

fn write_options(q: &Query) -> ApiResult<WriteOptions> {
    let dry_run = match q.get("dryRun") {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            )));
        }
    };
    let validation = match q.get("fieldValidation") {
        None | Some("") | Some("Warn") => FieldValidation::Warn,
        Some("Strict") => FieldValidation::Strict,
        Some("Ignore") => FieldValidation::Ignore,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fieldValidation: Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
            )));
        }
    };
    Ok(WriteOptions { dry_run, validation })
}

fn list_options(api: &Api, t: &Target, q: &Query) -> ApiResult<ListOptions> {
    let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or_default()).map_err(ApiError::bad_request)?;
    let fields = api.field_selector(&t.res, q.get("fieldSelector").unwrap_or_default())?;
    let limit = match q.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => {
            Some(l.parse::<i64>().map_err(|_| ApiError::bad_request(format!("invalid limit: \"{l}\"")))?.max(0) as usize)
        }
        None => None,
    };
    Ok(ListOptions {
        labels,
        fields,
        limit,
        continue_token: q.get("continue").map(str::to_string),
        resource_version: q.get("resourceVersion").map(str::to_string),
        resource_version_match: q.get("resourceVersionMatch").filter(|s| !s.is_empty()).map(str::to_string),
        send_initial_events: q.flag("sendInitialEvents"),
    })
}

fn written_response(w: Written) -> Response {
    let code = StatusCode::from_u16(w.code).unwrap_or(StatusCode::OK);
    let mut r = json_response(code, w.body, "application/json");
    for warning in w.warnings {
        let text = format!("299 - \"{}\"", warning.replace('"', "'"));
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}

async fn resource(
    srv: &Arc<Server>,
    cluster: String,
    p: ResourcePath,
    req: Request<Body>,
    accept: &str,
) -> ApiResult<Response> {
    let api = &srv.api;
    let res = api.registry.lookup(&p.group, &p.version, &p.resource).cloned().ok_or_else(ApiError::not_found_path)?;
    let sub = match p.subresource.as_deref() {
        None => None,
        Some("status") if res.def.status_subresource => Some(Subresource::Status),
        Some("scale") if res.def.scale.is_some() => Some(Subresource::Scale),
        Some(_) => return Err(ApiError::not_found_path()),
    };
    if p.namespace.is_some() && !res.def.namespaced {
        return Err(ApiError::not_found_path());
    }
    let q = Query::parse(req.uri().query());
    let t = Target {
        cluster: api.store.cluster_name(&cluster),
        res: res.clone(),
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        sub,
    };
    if res.def.namespaced && p.name.is_some() && p.namespace.is_none() {
        return Err(ApiError::not_found_path());
    }
    let method = req.method().clone();
    if crate::rest::is_wildcard(&t) && (method != Method::GET || p.name.is_some()) {
        return Err(ApiError::method_not_allowed(
            "/clusters/* addresses every logical cluster for list and watch only; name a logical cluster to read one object or write",
        ));
    }
    match (method, &p.name) {
        (Method::GET, _) if p.watch || q.flag("watch") => watch(srv, &t, &q, accept).await,
        (Method::GET, Some(_)) => {
            let as_ = negotiate(accept)?;
            let obj = api.get(&t)?;
            match (sub, as_) {
                (Some(Subresource::Scale), _) => {
                    Ok(json_value(StatusCode::OK, &api.scale_of(&t, &api.value(&res, &obj)?)?))
                }
                (_, As::Table) => {
                    let v = api.value(&res, &obj)?;
                    let rv = obj.rv.to_string();
                    Ok(json_value(
                        StatusCode::OK,
                        &table::table(&res.def, &[v], &rv, None, q.get("includeObject").unwrap_or("Metadata")),
                    ))
                }
                _ => Ok(json_response(StatusCode::OK, api.encode(&res, &obj)?, "application/json")),
            }
        }
        (Method::GET, None) => {
            let as_ = negotiate(accept)?;
            let opts = list_options(api, &t, &q)?;
            let list = api.list(&t, &opts)?;
            match as_ {
                As::Table => {
                    let objs = list.items.iter().map(|o| api.value(&res, o)).collect::<ApiResult<Vec<_>>>()?;
                    let tbl = table::table(
                        &res.def,
                        &objs,
                        &list.rev.to_string(),
                        list.continue_token.as_deref(),
                        q.get("includeObject").unwrap_or("Metadata"),
                    );
                    Ok(json_value(StatusCode::OK, &tbl))
                }
                As::Object => {
                    let items = list
                        .items
                        .iter()
                        .enumerate()
                        .map(|(i, o)| api.encode_in(&res, o, list.clusters.get(i).map(|c| &**c)))
                        .collect::<ApiResult<Vec<_>>>()?;
                    Ok(json_response(
                        StatusCode::OK,
                        list_body(
                            &res.def.kind,
                            &res.def.api_version(),
                            list.rev,
                            list.continue_token.as_deref(),
                            &items,
                        ),
                        "application/json",
                    ))
                }
            }
        }
        (Method::POST, None) => {
            let opts = write_options(&q)?;
            let (headers, body) = read_body(req).await?;
            let obj = decode_body(&headers, &body, false)?;
            let written = api.create(&t, obj, &opts).await?;
            // A new logical cluster is usable as soon as its creation is acknowledged.
            if crate::controllers::is_logical_cluster(&t)
                && !opts.dry_run
                && let Some(stored) = &written.stored
                && let Ok(v) = stored.to_value()
                && let Some(name) = v["metadata"]["name"].as_str()
            {
                crate::controllers::init_cluster(api, name).await?;
            }
            Ok(written_response(written))
        }
        (Method::POST, Some(_)) => {
            Err(ApiError::method_not_allowed("POST is not allowed on a named resource; use PUT or PATCH"))
        }
        (Method::PUT, Some(_)) => {
            let opts = write_options(&q)?;
            let (headers, body) = read_body(req).await?;
            let obj = decode_body(&headers, &body, false)?;
            Ok(written_response(api.update(&t, obj, &opts).await?))
        }
        (Method::PATCH, Some(_)) => {
            let opts = write_options(&q)?;
            let ct =
                req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
            let ptype = PatchType::from_content_type(&ct).ok_or_else(|| {
                ApiError::unsupported_media(format!(
                    "the body of the request was in an unknown format ({ct}) - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                ))
            })?;
            if ptype == PatchType::Apply && q.get("fieldManager").is_none_or(str::is_empty) {
                return Err(ApiError::bad_request(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ));
            }
            let (headers, body) = read_body(req).await?;
            let patch = decode_body(&headers, &body, true)?;
            Ok(written_response(api.patch(&t, ptype, patch, &opts).await?))
        }
        (Method::DELETE, name) => {
            let mut opts = DeleteOptions {
                propagation: match q.get("propagationPolicy") {
                    Some(p) if !p.is_empty() => Propagation::parse(p)?,
                    _ if q.get("orphanDependents") == Some("true") => Propagation::Orphan,
                    _ => Propagation::Background,
                },
                dry_run: q.get("dryRun") == Some("All"),
                ..Default::default()
            };
            let (headers, body) = read_body(req).await?;
            if !body.is_empty() {
                let v = decode_body(&headers, &body, false)?;
                opts.merge_body(&v)?;
            }
            match name {
                Some(_) => Ok(written_response(api.delete(&t, &opts).await?)),
                None => {
                    let lo = list_options(api, &t, &q)?;
                    let items = api.delete_collection(&t, &lo, &opts).await?;
                    Ok(json_response(
                        StatusCode::OK,
                        list_body(&res.def.kind, &res.def.api_version(), api.store.revision(), None, &items),
                        "application/json",
                    ))
                }
            }
        }
        (m, _) => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource: {m}"
        ))),
    }
}

/// Assembles a `<Kind>List` from already-encoded items.
fn list_body(kind: &str, api_version: &str, rev: u64, cont: Option<&str>, items: &[Bytes]) -> Bytes {
    let size: usize = items.iter().map(|i| i.len() + 1).sum();
    let mut b = BytesMut::with_capacity(size + 200);
    b.put_slice(
        format!(
            "{{\"apiVersion\":\"{api_version}\",\"kind\":\"{kind}List\",\"metadata\":{{\"resourceVersion\":\"{rev}\""
        )
        .as_bytes(),
    );
    if let Some(c) = cont {
        b.put_slice(format!(",\"continue\":{}", Value::String(c.to_string())).as_bytes());
    }
    b.put_slice(b"},\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            b.put_u8(b',');
        }
        b.put_slice(item);
    }
    b.put_slice(b"]}");
    b.freeze()
}

async fn watch(srv: &Arc<Server>, t: &Target, q: &Query, accept: &str) -> ApiResult<Response> {
    let api = srv.api.clone();
    let as_ = negotiate(accept)?;
    let opts = list_options(&api, t, q)?;
    let timeout = match q.get("timeoutSeconds").filter(|s| !s.is_empty()) {
        Some(s) => Duration::from_secs(
            s.parse::<u64>().map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds: \"{s}\"")))?,
        ),
        None => Duration::from_secs(1800 + rand::random::<u64>() % 1800),
    };
    let params = watch::WatchParams {
        timeout,
        bookmarks: q.flag("allowWatchBookmarks"),
        bookmark_interval: srv.bookmark_interval,
        initial_events_end: opts.send_initial_events,
        kind: t.res.def.kind.clone(),
        api_version: t.res.def.api_version(),
    };
    let started = api.watch(t, &opts)?;
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    match started {
        Err(expired) => {
            let requested = opts.resource_version.clone().unwrap_or_default();
            let _ = tx.send(watch::expired_event(&requested, &expired)).await;
            drop(tx);
        }
        Ok(start) => {
            let res = t.res.clone();
            let render: watch::Render = match as_ {
                As::Object => {
                    let api = api.clone();
                    let wildcard = crate::rest::is_wildcard(t);
                    Arc::new(move |cluster: &str, o: &Stored| api.encode_in(&res, o, wildcard.then_some(cluster)))
                }
                As::Table => {
                    let api = api.clone();
                    let include = q.get("includeObject").unwrap_or("Metadata").to_string();
                    Arc::new(move |_cluster: &str, o: &Stored| {
                        let v = api.value(&res, o)?;
                        let tbl = table::table(&res.def, &[v], &o.rv.to_string(), None, &include);
                        Ok(Bytes::from(tbl.to_string()))
                    })
                }
            };
            let hub = api.store.hub().clone();
            let mut stopping = srv.stopping.subscribe();
            tokio::spawn(async move {
                tokio::select! {
                    _ = watch::run(start, render, hub, params, tx) => {}
                    _ = stopping.wait_for(|s| *s) => {}
                }
            });
        }
    }
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    let body = Body::from_stream(futures::StreamExt::map(stream, Ok::<_, std::convert::Infallible>));
    let mut r = Response::new(body);
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    Ok(r)
}
