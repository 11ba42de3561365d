//! The authorization step of every request: RBAC in the logical cluster addressed (the
//! management cluster's policy for `/clusters/*`, where only cluster-wide grants count).

use axum::body::Body;
use axum::http::Request;
use drydock_api::tenancy::LogicalClusterName;

use super::Server;
use super::path::Route;
use super::request::Query;
use crate::auth::UserInfo;
use crate::auth::rbac::{self, Attributes};
use crate::error::ApiResult;
use crate::rest::WriteGuard;

/// Refuses `req` on `route` with kube-apiserver's 403 unless its user may make it. Anonymous
/// requests got this far only on public paths; members of `system:masters` read no policy.
pub(super) fn authorize(
    srv: &Server,
    req: &Request<Body>,
    cluster: &LogicalClusterName,
    route: &Route,
) -> ApiResult<()> {
    let Some(user) = req.extensions().get::<UserInfo>() else { return Ok(()) };
    if user.groups.iter().any(|g| g == crate::auth::MASTERS_GROUP) {
        return Ok(());
    }
    let a = attributes(req, route);
    let policy_cluster = if cluster.is_wildcard() { LogicalClusterName::ROOT } else { cluster.as_str() };
    let decision = rbac::authorize_request(&srv.policies.get(&srv.api, policy_cluster), user, &a);
    if decision.allowed {
        return Ok(());
    }
    Err(rbac::attributes::forbidden(user, &a, &decision.reason))
}

/// What `req` asks to do.
pub(super) fn attributes(req: &Request<Body>, route: &Route) -> Attributes {
    let q = Query::parse(req.uri().query());
    let path = req.uri().path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let inner = match LogicalClusterName::split_segments(&segments) {
        Some((_, rest)) => format!("/{}", rest.join("/")),
        None => path.to_string(),
    };
    // A trailing slash is part of the path a rule names (`/version/`).
    let inner = if path.ends_with('/') && inner != "/" { format!("{inner}/") } else { inner };
    Attributes::of(route, req.method().as_str(), &inner, q.get("fieldSelector"), q.flag("watch"))
}

/// The escalation check of a write of an RBAC object by anyone but `system:masters`: the
/// object may grant no more than its writer holds ([`rbac::escalation`]).
pub(super) fn write_guard(
    srv: &Server,
    cluster: &LogicalClusterName,
    req: &Request<Body>,
    def: &drydock_api::ResourceDef,
) -> Option<WriteGuard> {
    if def.group != "rbac.authorization.k8s.io" {
        return None;
    }
    let user = req.extensions().get::<UserInfo>()?;
    if user.groups.iter().any(|g| g == crate::auth::MASTERS_GROUP) {
        return None;
    }
    let policy = srv.policies.get(&srv.api, cluster.as_str());
    let (user, kind) = (user.clone(), def.kind.clone());
    Some(WriteGuard(std::sync::Arc::new(move |obj| rbac::escalation::check(&policy, &user, &kind, obj))))
}
