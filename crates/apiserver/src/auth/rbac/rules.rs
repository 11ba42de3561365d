//! What one RBAC rule covers and whom one binding names, as kube-apiserver's RBAC
//! authorizer decides them. Pure functions over the rbac/v1 types.

use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};

use super::Attributes;
use crate::auth::UserInfo;

/// The prefix of a ServiceAccount's user name.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// Whether `rule` allows the request `a`.
pub fn allows(rule: &PolicyRule, a: &Attributes) -> bool {
    if !has(&rule.verbs, &a.verb) {
        return false;
    }
    match &a.resource {
        Some(r) => {
            has_opt(&rule.api_groups, &r.group)
                && covers_resource(rule.resources.as_deref().unwrap_or_default(), &r.resource, r.subresource.as_deref())
                && covers_name(rule.resource_names.as_deref().unwrap_or_default(), r.name.as_deref())
        }
        None => rule.non_resource_urls.as_deref().unwrap_or_default().iter().any(|u| covers_path(u, &a.path)),
    }
}

fn has(list: &[String], want: &str) -> bool {
    list.iter().any(|v| v == "*" || v == want)
}

fn has_opt(list: &Option<Vec<String>>, want: &str) -> bool {
    has(list.as_deref().unwrap_or_default(), want)
}

/// `*`, `res`, `res/sub` or `*/sub`; a rule naming `pods` does not cover `pods/log`.
fn covers_resource(rules: &[String], resource: &str, sub: Option<&str>) -> bool {
    rules.iter().any(|r| match sub {
        None => r == "*" || r == resource,
        Some(sub) => r == "*" || r.split_once('/').is_some_and(|(res, s)| s == sub && (res == resource || res == "*")),
    })
}

/// Empty allows every name; otherwise only requests naming one of them (a list or create
/// names nothing and is never covered by a named rule).
fn covers_name(names: &[String], name: Option<&str>) -> bool {
    names.is_empty() || name.is_some_and(|n| names.iter().any(|v| v == n))
}

/// `*`, the exact path, or a prefix ending in `*`.
fn covers_path(rule: &str, path: &str) -> bool {
    rule == "*" || rule == path || rule.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
}

/// Whether `subject` names `user`. A ServiceAccount subject of a RoleBinding without a
/// namespace takes the binding's (`binding_ns`).
pub fn names(subject: &Subject, user: &UserInfo, binding_ns: Option<&str>) -> bool {
    match subject.kind.as_str() {
        "User" => subject.name == user.name,
        "Group" => user.groups.contains(&subject.name),
        "ServiceAccount" => {
            let Some(ns) = subject.namespace.as_deref().filter(|n| !n.is_empty()).or(binding_ns) else {
                return false;
            };
            user.name.strip_prefix(SERVICE_ACCOUNT_PREFIX).and_then(|rest| rest.split_once(':'))
                == Some((ns, subject.name.as_str()))
        }
        _ => false,
    }
}

/// How a subject is named in a decision's reason (`User "alice"`).
pub fn describe_subject(subject: &Subject) -> String {
    match subject.kind.as_str() {
        "ServiceAccount" => {
            format!("ServiceAccount \"{}/{}\"", subject.namespace.as_deref().unwrap_or_default(), subject.name)
        }
        kind => format!("{kind} \"{}\"", subject.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rbac::ResourceAttributes;
    use crate::auth::rbac::tests::rule;

    fn req(verb: &str, group: &str, resource: &str, sub: Option<&str>, name: Option<&str>) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource: Some(ResourceAttributes {
                group: group.into(),
                resource: resource.into(),
                subresource: sub.map(str::to_string),
                namespace: Some("default".into()),
                name: name.map(str::to_string),
            }),
            path: String::new(),
        }
    }

    #[test]
    fn resources_subresources_and_names() {
        let pods = rule(&["get", "list"], &[""], &["pods"], &[]);
        assert!(allows(&pods, &req("get", "", "pods", None, Some("p"))));
        assert!(allows(&pods, &req("list", "", "pods", None, None)));
        assert!(!allows(&pods, &req("delete", "", "pods", None, Some("p"))), "verb");
        assert!(!allows(&pods, &req("get", "apps", "pods", None, Some("p"))), "group");
        assert!(!allows(&pods, &req("get", "", "pods", Some("log"), Some("p"))), "pods does not cover pods/log");
        let logs = rule(&["get"], &[""], &["*/log"], &[]);
        assert!(allows(&logs, &req("get", "", "pods", Some("log"), Some("p"))));
        let all_subs = rule(&["get"], &[""], &["pods/*"], &[]);
        assert!(!allows(&all_subs, &req("get", "", "pods", Some("log"), Some("p"))), "pods/* is not a wildcard");
        let named = rule(&["get", "list"], &["*"], &["configmaps"], &["one"]);
        assert!(allows(&named, &req("get", "", "configmaps", None, Some("one"))));
        assert!(!allows(&named, &req("get", "", "configmaps", None, Some("two"))));
        assert!(!allows(&named, &req("list", "", "configmaps", None, None)), "a list names nothing");
        let star = rule(&["*"], &["*"], &["*"], &[]);
        assert!(allows(&star, &req("deletecollection", "cluster.x-k8s.io", "machines", None, None)));
        assert!(allows(&star, &req("update", "apps", "deployments", Some("scale"), Some("d"))));
    }

    #[test]
    fn non_resource_paths() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: Some(vec!["/healthz".into(), "/apis/*".into()]),
            ..Default::default()
        };
        let at = |path: &str| Attributes { verb: "get".into(), resource: None, path: path.into() };
        assert!(allows(&r, &at("/healthz")));
        assert!(allows(&r, &at("/apis/apps/v1")));
        assert!(!allows(&r, &at("/apis")), "the prefix rule needs the slash");
        assert!(!allows(&r, &at("/metrics")));
        assert!(!allows(&rule(&["get"], &[""], &["pods"], &[]), &at("/healthz")), "a resource rule covers no path");
    }

    #[test]
    fn subjects() {
        let sa = UserInfo::new("system:serviceaccount:team-a:deployer", "u1", ["system:serviceaccounts".to_string()]);
        let subject = |kind: &str, name: &str, ns: Option<&str>| Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: ns.map(str::to_string),
            api_group: None,
        };
        assert!(names(&subject("ServiceAccount", "deployer", Some("team-a")), &sa, None));
        assert!(names(&subject("ServiceAccount", "deployer", None), &sa, Some("team-a")));
        assert!(!names(&subject("ServiceAccount", "deployer", Some("team-b")), &sa, None));
        assert!(names(&subject("Group", "system:serviceaccounts", None), &sa, None));
        assert!(names(&subject("Group", "system:authenticated", None), &sa, None));
        assert!(!names(&subject("User", "deployer", None), &sa, None));
        let alice = UserInfo::new("alice", "", []);
        assert!(names(&subject("User", "alice", None), &alice, None));
    }
}
