//! Discovery documents: legacy (APIVersions, APIGroupList, APIGroup, APIResourceList) and
//! aggregated (apidiscovery.k8s.io v2 and v2beta1), built from the registry.

use serde_json::{Value, json};

use crate::registry::{Registry, Resource};

/// Which aggregated discovery version a client asked for, if any.
pub fn aggregated_version(accept: &str) -> Option<&'static str> {
    // Honour the client's order: the first listed media type we serve wins.
    for part in accept.split(',') {
        let p = part.trim();
        if p.contains("as=APIGroupDiscoveryList") && p.contains("g=apidiscovery.k8s.io") {
            if p.contains("v=v2beta1") {
                return Some("v2beta1");
            }
            if p.contains("v=v2") {
                return Some("v2");
            }
        } else if p.starts_with("application/json") || p.starts_with("*/*") {
            return None;
        }
    }
    None
}

pub fn aggregated_content_type(v: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList")
}

pub fn core_versions(host: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
    })
}

/// Kinds served without storage (reviews: create-only, answered at once), as (group,
/// plural, kind, namespaced), all at v1.
const UNSTORED: &[(&str, &str, &str, bool)] = &[
    ("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", false),
    ("authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", true),
    ("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false),
    ("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false),
    ("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", false),
];

/// The registry's groups and those of the unstored kinds, each with its versions.
fn groups(reg: &Registry) -> Vec<(String, Vec<String>)> {
    let mut all = reg.groups();
    for (g, ..) in UNSTORED {
        if !all.iter().any(|(name, _)| name == g) {
            all.push(((*g).to_string(), vec!["v1".to_string()]));
        }
    }
    all
}

fn unstored(
    group: &str,
    version: &str,
) -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str, bool)> {
    UNSTORED.iter().filter(move |(g, ..)| *g == group && version == "v1")
}

/// The token subresource of ServiceAccounts (TokenRequest).
fn token_subresource() -> Value {
    json!({"subresource": "token", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"},
        "verbs": ["create"]})
}

fn is_service_accounts(r: &Resource) -> bool {
    r.def.group.is_empty() && r.def.plural == "serviceaccounts"
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v})).collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

pub fn group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> =
        groups(reg).iter().filter(|(g, _)| !g.is_empty()).map(|(g, vs)| group_doc(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(reg: &Registry, name: &str) -> Option<Value> {
    let (g, vs) = groups(reg).into_iter().find(|(g, _)| g == name && !g.is_empty())?;
    let mut doc = group_doc(&g, &vs);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

fn served<'a>(
    reg: &'a Registry,
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'a std::sync::Arc<Resource>> {
    reg.all().iter().filter(move |r| r.def.group == group && r.def.version == version)
}

pub fn resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in served(reg, group, version) {
        let d = &r.def;
        let mut entry = json!({
            "name": d.plural,
            "singularName": d.singular,
            "namespaced": d.namespaced,
            "kind": d.kind,
            "verbs": d.verbs,
        });
        if !d.short_names.is_empty() {
            entry["shortNames"] = json!(d.short_names);
        }
        if !d.categories.is_empty() {
            entry["categories"] = json!(d.categories);
        }
        resources.push(entry);
        if d.status_subresource {
            resources
                .push(json!({"name": format!("{}/status", d.plural), "singularName": "", "namespaced": d.namespaced,
                "kind": d.kind, "verbs": ["get", "patch", "update"]}));
        }
        if d.scale.is_some() {
            resources
                .push(json!({"name": format!("{}/scale", d.plural), "singularName": "", "namespaced": d.namespaced,
                "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
        }
        if is_service_accounts(r) {
            resources.push(json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true,
                "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}));
        }
    }
    for (_, plural, kind, namespaced) in unstored(group, version) {
        resources.push(json!({"name": plural, "singularName": kind.to_lowercase(), "namespaced": namespaced,
            "kind": kind, "verbs": ["create"]}));
    }
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}

fn aggregated_resource(r: &Resource) -> Value {
    let d = &r.def;
    let mut subs = Vec::new();
    if d.status_subresource {
        subs.push(
            json!({"subresource": "status", "responseKind": {"group": d.group, "version": d.version, "kind": d.kind},
            "verbs": ["get", "patch", "update"]}),
        );
    }
    if d.scale.is_some() {
        subs.push(
            json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"]}),
        );
    }
    let mut e = json!({
        "resource": d.plural,
        "responseKind": {"group": d.group, "version": d.version, "kind": d.kind},
        "scope": if d.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": d.singular,
        "verbs": d.verbs,
    });
    if !d.short_names.is_empty() {
        e["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        e["categories"] = json!(d.categories);
    }
    if is_service_accounts(r) {
        subs.push(token_subresource());
    }
    if !subs.is_empty() {
        e["subresources"] = json!(subs);
    }
    e
}

/// Aggregated discovery for `/api` (`core = true`) or `/apis`.
pub fn aggregated(reg: &Registry, core: bool, v: &str) -> Value {
    let items: Vec<Value> = groups(reg)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let vs: Vec<Value> = versions
                .iter()
                .map(|ver| {
                    let mut res: Vec<Value> = served(reg, &g, ver).map(|r| aggregated_resource(r)).collect();
                    res.extend(unstored(&g, ver).map(|(g, plural, kind, namespaced)| {
                        json!({"resource": plural, "responseKind": {"group": g, "version": "v1", "kind": kind},
                            "scope": if *namespaced { "Namespaced" } else { "Cluster" }, "singularResource": kind.to_lowercase(),
                            "verbs": ["create"]})
                    }));
                    json!({"version": ver, "resources": res, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": vs})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{v}"), "metadata": {}, "items": items})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_aggregated_version_in_client_order() {
        let k133 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(aggregated_version(k133), Some("v2"));
        let k127 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(aggregated_version(k127), Some("v2beta1"));
        assert_eq!(aggregated_version("application/json, */*"), None);
    }
}
