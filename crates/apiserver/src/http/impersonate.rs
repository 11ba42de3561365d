//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as kube-apiserver does it: a
//! request carrying `Impersonate-*` headers runs as the user they name, once its sender is
//! allowed the `impersonate` verb on each part (users or serviceaccounts, groups, uids,
//! `userextras/<key>`) in the logical cluster addressed.

use axum::body::Body;
use axum::http::Request;
use drydock_api::tenancy::LogicalClusterName;

use super::Server;
use crate::auth::UserInfo;
use crate::auth::rbac::rules::SERVICE_ACCOUNT_PREFIX;
use crate::auth::rbac::{self, Attributes, ResourceAttributes};
use crate::error::{ApiError, ApiResult};

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA_PREFIX: &str = "impersonate-extra-";
const ANONYMOUS: &str = "system:anonymous";

/// Replaces the request's user by the one its `Impersonate-*` headers name, if any, after
/// checking that the sender may impersonate every part of it.
pub(super) fn impersonate(srv: &Server, req: &mut Request<Body>, cluster: &LogicalClusterName) -> ApiResult<()> {
    let headers = req.headers();
    let values = |name: &str| -> Vec<String> {
        headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect()
    };
    let (users, uids, groups) = (values(USER), values(UID), values(GROUP));
    let extras: Vec<String> =
        headers.keys().filter_map(|k| k.as_str().strip_prefix(EXTRA_PREFIX)).map(str::to_string).collect();
    let Some(name) = users.first().cloned() else {
        if uids.is_empty() && groups.is_empty() && extras.is_empty() {
            return Ok(());
        }
        return Err(ApiError::new(
            500,
            "InternalError",
            "Internal error occurred: requested impersonation of groups, uid or extras without impersonating a user",
        ));
    };
    let Some(sender) = req.extensions().get::<UserInfo>().cloned() else {
        return Err(ApiError::new(401, "Unauthorized", "Unauthorized"));
    };
    let mut asked: Vec<ResourceAttributes> = Vec::new();
    match name.strip_prefix(SERVICE_ACCOUNT_PREFIX).and_then(|rest| rest.split_once(':')) {
        Some((ns, sa)) => asked.push(attrs("", "serviceaccounts", None, Some(ns), sa)),
        None => asked.push(attrs("", "users", None, None, &name)),
    }
    asked.extend(groups.iter().map(|g| attrs("", "groups", None, None, g)));
    asked.extend(uids.iter().map(|u| attrs("authentication.k8s.io", "uids", None, None, u)));
    for key in &extras {
        for value in values(&format!("{EXTRA_PREFIX}{key}")) {
            asked.push(attrs("authentication.k8s.io", "userextras", Some(key), None, &value));
        }
    }
    let policy_cluster = if cluster.is_wildcard() { LogicalClusterName::ROOT } else { cluster.as_str() };
    let policy = srv.policies.get(&srv.api, policy_cluster);
    for r in asked {
        let a = Attributes { verb: "impersonate".into(), resource: Some(r), path: String::new() };
        let decision = rbac::authorize(&policy, &sender, &a);
        if !decision.allowed {
            return Err(rbac::attributes::forbidden(&sender, &a, &decision.reason));
        }
    }
    let mut groups = groups;
    if groups.is_empty()
        && let Some((ns, _)) = name.strip_prefix(SERVICE_ACCOUNT_PREFIX).and_then(|rest| rest.split_once(':'))
    {
        groups = vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{ns}")];
    }
    let user = if name == ANONYMOUS {
        UserInfo { name, uid: uids.into_iter().next().unwrap_or_default(), groups }
    } else {
        UserInfo::new(name, uids.into_iter().next().unwrap_or_default(), groups)
    };
    req.extensions_mut().insert(user);
    Ok(())
}

fn attrs(
    group: &str,
    resource: &str,
    subresource: Option<&str>,
    namespace: Option<&str>,
    name: &str,
) -> ResourceAttributes {
    ResourceAttributes {
        group: group.into(),
        resource: resource.into(),
        subresource: subresource.map(str::to_string),
        namespace: namespace.map(str::to_string),
        name: Some(name.to_string()),
    }
}
