//! Parsing request paths into what they address, following kube-apiserver's
//! RequestInfo rules, with kcp-style `/clusters/<name>` prefixes for logical clusters.

use std::borrow::Cow;

use drydock_api::tenancy::LogicalClusterName;

/// What a path addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Non-resource endpoints: /version, /healthz, /metrics, /openapi/..., discovery roots.
    Version,
    /// `POST /convert`: the ConversionReview endpoint of drydock's own kinds.
    Convert,
    /// `healthz`, `livez` or `readyz`, with the check name when one is addressed (`readyz/storage`).
    Health(String),
    Metrics,
    OpenApiV2,
    OpenApiV3(String),
    /// `/.well-known/openid-configuration`: the ServiceAccount token issuer's discovery.
    OpenIdConfiguration,
    /// `/openid/v1/jwks`: the issuer's public keys.
    Jwks,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/<group>`
    Group(String),
    /// `/api/v1` or `/apis/<g>/<v>`
    Resources {
        group: String,
        version: String,
    },
    /// A resource collection, object or subresource.
    Resource(ResourcePath),
    NotFound,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// Legacy `/watch/` path form.
    pub watch: bool,
}

/// Splits a path into its logical cluster and the route inside it.
pub fn parse(path: &str) -> (LogicalClusterName, Route) {
    // Borrowed unless a segment has escapes.
    let segs: Vec<Cow<'_, str>> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy())
        .collect();
    let Some((cluster, segs)) = LogicalClusterName::split_segments(&segs) else {
        return (LogicalClusterName::root(), Route::NotFound);
    };
    let s: Vec<&str> = segs.iter().map(|s| s.as_ref()).collect();
    let route = match s.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health(s.join("/")),
        ["metrics"] => Route::Metrics,
        ["convert"] => Route::Convert,
        ["openapi", "v2"] | ["swagger-2.0.0.pb-v1"] => Route::OpenApiV2,
        ["openapi", "v3", rest @ ..] => Route::OpenApiV3(rest.join("/")),
        [".well-known", "openid-configuration"] => Route::OpenIdConfiguration,
        ["openid", "v1", "jwks"] => Route::Jwks,
        ["api"] => Route::CoreVersions,
        ["api", v] => Route::Resources { group: String::new(), version: (*v).to_string() },
        ["api", v, rest @ ..] => resource_route("", v, rest),
        ["apis"] => Route::Groups,
        ["apis", g] => Route::Group((*g).to_string()),
        ["apis", g, v] => Route::Resources { group: (*g).to_string(), version: (*v).to_string() },
        ["apis", g, v, rest @ ..] => resource_route(g, v, rest),
        _ => Route::NotFound,
    };
    (cluster, route)
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    let (watch, rest) = match rest.first() {
        Some(&"watch") => (true, &rest[1..]),
        _ => (false, rest),
    };
    let mut p = ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        namespace: None,
        resource: String::new(),
        name: None,
        subresource: None,
        watch,
    };
    let parts: &[&str] = match rest {
        // `/namespaces/<ns>/<resource>...`, unless it is a namespace's own subresource.
        ["namespaces", ns, res, tail @ ..] if !matches!(*res, "status" | "finalize") => {
            p.namespace = Some((*ns).to_string());
            let mut v = vec![*res];
            v.extend_from_slice(tail);
            return fill(p, &v);
        }
        other => other,
    };
    fill(p, parts)
}

fn fill(mut p: ResourcePath, parts: &[&str]) -> Route {
    match parts {
        [res] => p.resource = (*res).to_string(),
        [res, name] => {
            p.resource = (*res).to_string();
            p.name = Some((*name).to_string());
        }
        [res, name, sub] => {
            p.resource = (*res).to_string();
            p.name = Some((*name).to_string());
            p.subresource = Some((*sub).to_string());
        }
        _ => return Route::NotFound,
    }
    Route::Resource(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> (LogicalClusterName, ResourcePath) {
        match parse(path) {
            (c, Route::Resource(p)) => (c, p),
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn parses_resource_paths() {
        let (c, p) = res("/api/v1/namespaces/default/configmaps/x");
        assert_eq!(
            (c.as_str(), p.namespace.as_deref(), p.resource.as_str(), p.name.as_deref()),
            ("root", Some("default"), "configmaps", Some("x"))
        );
        let (_, p) = res("/api/v1/namespaces/foo");
        assert_eq!((p.resource.as_str(), p.name.as_deref(), p.namespace), ("namespaces", Some("foo"), None));
        let (_, p) = res("/api/v1/namespaces/foo/status");
        assert_eq!((p.resource.as_str(), p.subresource.as_deref()), ("namespaces", Some("status")));
        let (c, p) = res("/clusters/w1/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machinedeployments/md/scale");
        assert_eq!((c.as_str(), p.group.as_str(), p.subresource.as_deref()), ("w1", "cluster.x-k8s.io", Some("scale")));
        let (_, p) = res("/api/v1/watch/namespaces/default/configmaps");
        assert!(p.watch);
        let (_, p) = res("/api/v1/nodes");
        assert_eq!((p.resource.as_str(), p.name), ("nodes", None));
        assert_eq!(parse("/apis/cluster.x-k8s.io").1, Route::Group("cluster.x-k8s.io".into()));
        assert_eq!(parse("/clusters/x/api").0.as_str(), "x");
        assert_eq!(parse("/api/v1/a/b/c/d").1, Route::NotFound);
    }
}
