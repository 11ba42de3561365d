//! The HTTP face of the API server: one axum fallback handler that parses the path, picks
//! the verb, decodes the body and renders results and errors the way kubectl, kube-rs and
//! client-go expect.

mod access;
mod authorize;
mod convert;
pub mod discovery;
mod health;
mod impersonate;
pub mod openapi;
mod partial;
pub mod path;
pub mod prefix;
pub mod protobuf;
mod request;
mod resource;
mod review;
pub mod table;
mod token;
mod watch;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use drydock_api::tenancy::{
    LOGICAL_CLUSTER_PLURAL, LogicalClusterName, TENANCY_GROUP, TENANCY_VERSION, UNREACHABLE_LABEL,
};
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::metrics;
use crate::rest::Api;
use crate::store::{ObjKey, Stored};
use path::Route;
use request::Query;

/// Largest request body accepted (kube-apiserver's limit for JSON bodies).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Extra metrics rendered after the server's own (e.g. the controllers' registry).
pub type MetricsSource = Arc<dyn Fn(&mut String) + Send + Sync>;

/// Marks a request from a client inside this process ([`crate::ApiServer::client`]), made
/// as `user`: its watch events, lists and write responses show only the Apply entries of
/// managedFields ([`crate::managed::apply_only`]).
#[derive(Clone, Debug)]
pub struct InProcess {
    pub user: Arc<crate::auth::UserInfo>,
}

/// `f` of what a watch event or list item shows of `o`: in-process clients see its
/// Apply entries only.
fn shown<T>(o: &Stored, in_process: bool, f: impl FnOnce(&Stored) -> T) -> T {
    match in_process.then(|| o.apply_entries_only()).flatten() {
        Some(slim) => f(&slim),
        None => f(o),
    }
}

/// Shared state of the HTTP handlers.
pub struct Server {
    pub authn: crate::auth::Authenticator,
    /// The compiled RBAC policy of each logical cluster.
    pub policies: crate::auth::rbac::cache::PolicyCache,
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

async fn dispatch(State(srv): State<Arc<Server>>, mut req: Request<Body>) -> Response {
    let started = Instant::now();
    let (cluster, route) = path::parse(req.uri().path());
    let checked = authenticate(&srv, &mut req, &cluster)
        .and_then(|()| impersonate::impersonate(&srv, &mut req, &cluster))
        .and_then(|()| authorize::authorize(&srv, &req, &cluster, &route));
    let (verb, group, resource) = describe(&route, req.method(), req.uri().query());
    if let Err(e) = checked {
        // Refused requests count too, as kube-apiserver counts its 401s and 403s.
        let resp = error_response(&e);
        metrics::request(&verb, &group, &resource, resp.status().as_u16(), started.elapsed());
        return resp;
    }
    let access = access::Access::capture(&req, &cluster);
    // Only a client naming protobuf may get its errors as a protobuf Status.
    let proto_accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .filter(|a| a.contains("protobuf"))
        .map(str::to_string);
    let mut resp = match handle(&srv, cluster, route, req).await {
        Ok(r) => r,
        Err(e) => match proto_accept.as_deref() {
            Some(accept) if request::errors_as_protobuf(accept) => protobuf::error_response(&e),
            _ => error_response(&e),
        },
    };
    if let Some(access) = access {
        resp = access.finish(&verb, resp, started);
    }
    if verb != "WATCH" {
        metrics::request(&verb, &group, &resource, resp.status().as_u16(), started.elapsed());
    } else {
        metrics::request(&verb, &group, &resource, resp.status().as_u16(), Duration::ZERO);
    }
    resp
}

/// Finds who sent `req` and records it in its extensions ([`crate::auth::UserInfo`]; none
/// for anonymous requests to public paths).
fn authenticate(srv: &Server, req: &mut Request<Body>, cluster: &LogicalClusterName) -> ApiResult<()> {
    use crate::auth::{Peer, UserInfo};
    let user = if let Some(p) = req.extensions().get::<InProcess>() {
        Some(UserInfo::clone(&p.user))
    } else {
        let peer = req.extensions().get::<axum::extract::ConnectInfo<Peer>>().map(|c| &c.0);
        let authorization = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        srv.authn.authenticate(peer, authorization, cluster, req.uri().path(), &srv.api)?
    };
    if let Some(user) = user {
        req.extensions_mut().insert(user);
    }
    Ok(())
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

async fn handle(
    srv: &Arc<Server>,
    cluster: LogicalClusterName,
    route: Route,
    req: Request<Body>,
) -> ApiResult<Response> {
    let accept = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    if !matches!(route, Route::Health(_) | Route::Metrics | Route::Version | Route::OpenApiV2 | Route::OpenApiV3(_))
        && !cluster.is_root()
        && !cluster.is_wildcard()
    {
        match logical_cluster(&srv.api, &cluster) {
            None => return Err(ApiError::new(404, "NotFound", format!("logical cluster \"{cluster}\" not found"))),
            Some(lc) if lc.meta.label(UNREACHABLE_LABEL) == Some("true") => {
                let message = format!("logical cluster \"{cluster}\" is unreachable (its {UNREACHABLE_LABEL} label)");
                return Err(ApiError::new(503, "ServiceUnavailable", message));
            }
            Some(_) => {}
        }
    }
    match route {
        Route::Resource(p) if review::addressed(&p) => review::respond(srv, &cluster, &p, req, &accept).await,
        Route::Resource(p) if token::addressed(&p) => token::respond(srv, &cluster, &p, req, &accept).await,
        Route::Resource(p) => resource::resource(srv, &cluster, p, req, &accept).await,
        Route::CoreVersions | Route::Groups | Route::Group(_) | Route::Resources { .. } => {
            discovery_route(srv, &cluster, route, &req, &accept)
        }
        Route::NotFound => Err(ApiError::not_found_path()),
        Route::OpenApiV2 | Route::OpenApiV3(_) => {
            // Each logical cluster documents what it serves: the built-ins and its own CRDs.
            let registry = srv.api.registries.for_cluster(cluster.as_str());
            let docs = openapi::documents(&registry).await?;
            let path = if let Route::OpenApiV3(p) = &route { Some(p.as_str()) } else { None };
            openapi::respond(&docs, path, &req)
        }
        Route::Convert => convert::respond(srv, &cluster, req).await,
        Route::Health(path) => {
            let failure = srv.api.store.failure();
            Ok(health::respond(&path, req.uri().query(), &health::checks(failure.as_deref())))
        }
        _ => server_route(srv, &route),
    }
}

/// The server's own endpoints: version and metrics.
fn server_route(srv: &Server, route: &Route) -> ApiResult<Response> {
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
        Route::OpenIdConfiguration | Route::Jwks => {
            let issuer = srv.authn.service_accounts.as_ref().ok_or_else(ApiError::not_found_path)?;
            let doc = if *route == Route::Jwks { issuer.jwks() } else { issuer.discovery() };
            let content_type = if *route == Route::Jwks { "application/jwk-set+json" } else { "application/json" };
            Ok(json_response(StatusCode::OK, doc.to_string().into(), content_type))
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
        _ => Err(ApiError::not_found_path()),
    }
}

/// API discovery: `/api`, `/apis`, `/apis/<group>` and the resource lists.
fn discovery_route(
    srv: &Server,
    cluster: &LogicalClusterName,
    route: Route,
    req: &Request<Body>,
    accept: &str,
) -> ApiResult<Response> {
    let reg = &*srv.api.registries.for_cluster(cluster.as_str());
    let aggregated = |core: bool, v| {
        json_response(
            StatusCode::OK,
            discovery::aggregated(reg, core, v).to_string().into(),
            &discovery::aggregated_content_type(v),
        )
    };
    match route {
        Route::CoreVersions => match discovery::aggregated_version(accept) {
            Some(v) => Ok(aggregated(true, v)),
            None => {
                let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
                Ok(json_value(StatusCode::OK, &discovery::core_versions(host)))
            }
        },
        Route::Groups => match discovery::aggregated_version(accept) {
            Some(v) => Ok(aggregated(false, v)),
            None => Ok(json_value(StatusCode::OK, &discovery::group_list(reg))),
        },
        Route::Group(g) => {
            discovery::group(reg, &g).map(|d| json_value(StatusCode::OK, &d)).ok_or_else(ApiError::not_found_path)
        }
        Route::Resources { group, version } => discovery::resource_list(reg, &group, &version)
            .map(|d| json_value(StatusCode::OK, &d))
            .ok_or_else(ApiError::not_found_path),
        _ => Err(ApiError::not_found_path()),
    }
}

/// A non-root logical cluster exists while its LogicalCluster object does.
pub fn logical_cluster_exists(api: &Api, name: &LogicalClusterName) -> bool {
    logical_cluster(api, name).is_some()
}

/// The LogicalCluster object of a non-root logical cluster.
fn logical_cluster(api: &Api, name: &LogicalClusterName) -> Option<Arc<Stored>> {
    let res = api.registry.lookup(TENANCY_GROUP, TENANCY_VERSION, LOGICAL_CLUSTER_PLURAL)?;
    let key = ObjKey {
        cluster: api.store.cluster_name(LogicalClusterName::ROOT),
        res: res.id,
        namespace: String::new(),
        name: name.to_string(),
    };
    api.store.get(&key)
}
