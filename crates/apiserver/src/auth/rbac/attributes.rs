//! What a request asks to do, in the terms RBAC rules are written in (kube-apiserver's
//! RequestInfo), and the 403 that refuses it.

use serde_json::json;

use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::http::path::{ResourcePath, Route};

/// A request as the authorizer sees it: a verb on a resource, or on a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributes {
    pub verb: String,
    /// None for a non-resource request (`/healthz`, `/api`, ...).
    pub resource: Option<ResourceAttributes>,
    /// The path of a non-resource request, without its logical cluster prefix.
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub group: String,
    pub resource: String,
    pub subresource: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl Attributes {
    /// The attributes of a request with `method` on `route` (`path` being the route's path
    /// inside its logical cluster), `field_selector` its `fieldSelector` and `watch` whether
    /// it asks to watch.
    pub fn of(route: &Route, method: &str, path: &str, field_selector: Option<&str>, watch: bool) -> Self {
        let Route::Resource(p) = route else {
            return Self { verb: method.to_ascii_lowercase(), resource: None, path: path.to_string() };
        };
        Self {
            verb: verb(p, method, watch).to_string(),
            resource: Some(resource(p, field_selector)),
            path: String::new(),
        }
    }
}

fn verb(p: &ResourcePath, method: &str, watch: bool) -> &'static str {
    match (method, p.name.is_some()) {
        ("GET" | "HEAD", _) if watch || p.watch => "watch",
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "",
    }
}

/// A list or watch selecting `metadata.name=X` names X, as a get does.
fn resource(p: &ResourcePath, field_selector: Option<&str>) -> ResourceAttributes {
    let selected = || {
        field_selector?.split(',').find_map(|term| {
            let (k, v) = term.split_once("==").or_else(|| term.split_once('='))?;
            (k.trim() == "metadata.name").then(|| v.trim().to_string())
        })
    };
    ResourceAttributes {
        group: p.group.clone(),
        resource: p.resource.clone(),
        subresource: p.subresource.clone(),
        namespace: p.namespace.clone(),
        name: p.name.clone().or_else(selected),
    }
}

/// kube-apiserver's 403 for `user` refused `a`, with the authorizer's `reason` appended.
pub fn forbidden(user: &UserInfo, a: &Attributes, reason: &str) -> ApiError {
    let because = if reason.is_empty() { String::new() } else { format!(": {reason}") };
    let Some(r) = &a.resource else {
        let message = format!("forbidden: User \"{}\" cannot {} path \"{}\"{because}", user.name, a.verb, a.path);
        return ApiError::new(403, "Forbidden", message).with_details(json!({}));
    };
    let qualified = if r.group.is_empty() { r.resource.clone() } else { format!("{}.{}", r.resource, r.group) };
    let named = match &r.name {
        Some(n) => format!("{qualified} \"{n}\""),
        None => qualified,
    };
    let full_resource = match &r.subresource {
        Some(s) => format!("{}/{s}", r.resource),
        None => r.resource.clone(),
    };
    let scope = match r.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    let message = format!(
        "{named} is forbidden: User \"{}\" cannot {} resource \"{full_resource}\" in API group \"{}\" {scope}{because}",
        user.name, a.verb, r.group
    );
    let mut details = json!({"kind": r.resource});
    if let Some(n) = &r.name {
        details["name"] = json!(n);
    }
    if !r.group.is_empty() {
        details["group"] = json!(r.group);
    }
    ApiError::new(403, "Forbidden", message).with_details(details)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::path;

    fn attrs(method: &str, url: &str) -> Attributes {
        let (path_part, query) = url.split_once('?').unwrap_or((url, ""));
        let (_, route) = path::parse(path_part);
        let fs = query.split('&').find_map(|kv| kv.strip_prefix("fieldSelector="));
        Attributes::of(&route, method, path_part, fs, query.contains("watch=true"))
    }

    #[test]
    fn verbs_and_names_as_kube_apiserver_reads_them() {
        let alice = UserInfo::new("alice", "", []);
        let e = |m, u| forbidden(&alice, &attrs(m, u), "").message;
        assert_eq!(
            e("GET", "/api/v1/namespaces/default/configmaps"),
            "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
        assert_eq!(
            e("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/clusters/c1"),
            "clusters.cluster.x-k8s.io \"c1\" is forbidden: User \"alice\" cannot get resource \"clusters\" in API group \"cluster.x-k8s.io\" in the namespace \"ns\""
        );
        assert_eq!(
            e("GET", "/api/v1/nodes?watch=true"),
            "nodes is forbidden: User \"alice\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
        );
        assert_eq!(
            e("PUT", "/apis/apps/v1/namespaces/a/deployments/d/scale"),
            "deployments.apps \"d\" is forbidden: User \"alice\" cannot update resource \"deployments/scale\" in API group \"apps\" in the namespace \"a\""
        );
        assert_eq!(e("GET", "/metrics"), "forbidden: User \"alice\" cannot get path \"/metrics\"");
        assert_eq!(attrs("DELETE", "/api/v1/namespaces/a/pods").verb, "deletecollection");
        let by_name = attrs("GET", "/api/v1/namespaces/a/secrets?fieldSelector=metadata.name=x");
        assert_eq!(by_name.resource.and_then(|r| r.name), Some("x".to_string()));
    }
}
