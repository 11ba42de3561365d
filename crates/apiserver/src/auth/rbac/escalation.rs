//! RBAC's own guard against escalation, as kube-apiserver applies it: a Role or ClusterRole
//! may be written only by someone who holds every permission in it (or may `escalate`), a
//! binding only by someone who holds every permission of the role it binds (or may `bind`
//! that role). Without it, whoever may write RoleBindings could grant themselves anything.

use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::Value;

use super::{Attributes, Compiled, ResourceAttributes, authorize, rules_for};
use crate::auth::UserInfo;
use crate::error::ApiError;

const GROUP: &str = "rbac.authorization.k8s.io";

/// Whether the rules `held` cover `wanted`: every verb, group, resource and name (or URL)
/// it names is allowed by one of them. A `*` asked for is covered only by a `*` held.
pub fn covers(held: &[PolicyRule], wanted: &PolicyRule) -> bool {
    let has =
        |list: &Option<Vec<String>>, v: &str| list.as_deref().unwrap_or_default().iter().any(|x| x == "*" || x == v);
    let all = |list: &Option<Vec<String>>| list.clone().unwrap_or_default();
    if let Some(urls) = wanted.non_resource_urls.as_ref().filter(|u| !u.is_empty()) {
        return wanted.verbs.iter().all(|verb| {
            urls.iter().all(|url| {
                held.iter().any(|h| {
                    h.verbs.iter().any(|v| v == "*" || v == verb)
                        && h.non_resource_urls
                            .as_deref()
                            .unwrap_or_default()
                            .iter()
                            .any(|u| u == "*" || u == url || u.strip_suffix('*').is_some_and(|p| url.starts_with(p)))
                })
            })
        });
    }
    let names = all(&wanted.resource_names);
    wanted.verbs.iter().all(|verb| {
        all(&wanted.api_groups).iter().all(|group| {
            all(&wanted.resources).iter().all(|resource| {
                held.iter().any(|h| {
                    h.verbs.iter().any(|v| v == "*" || v == verb)
                        && has(&h.api_groups, group)
                        && has(&h.resources, resource)
                        && match h.resource_names.as_deref().filter(|n| !n.is_empty()) {
                            None => true,
                            Some(held_names) => !names.is_empty() && names.iter().all(|n| held_names.contains(n)),
                        }
                })
            })
        })
    })
}

/// Checks a write of the RBAC object `obj` (of `kind`) by `user` under `policy`: 403 when
/// it would grant what the user does not hold.
pub fn check(policy: &Compiled, user: &UserInfo, kind: &str, obj: &Value) -> Result<(), ApiError> {
    let namespace = obj["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let may = |verb: &str, resource: &str, name: &str| {
        let a = Attributes {
            verb: verb.into(),
            resource: Some(ResourceAttributes {
                group: GROUP.into(),
                resource: resource.into(),
                subresource: None,
                namespace: Some(namespace.to_string()).filter(|n| !n.is_empty()),
                name: Some(name.to_string()),
            }),
            path: String::new(),
        };
        authorize(policy, user, &a).allowed
    };
    let (held, _) = rules_for(policy, user, namespace);
    let plural = format!("{}s", kind.to_lowercase());
    let (wanted, escape) = match kind {
        "Role" | "ClusterRole" => {
            let rules: Vec<PolicyRule> = serde_json::from_value(obj["rules"].clone()).unwrap_or_default();
            // An aggregated role may come to hold anything: only those who hold everything.
            let rules = if obj.get("aggregationRule").is_some_and(|a| !a.is_null()) {
                vec![PolicyRule {
                    verbs: vec!["*".into()],
                    api_groups: Some(vec!["*".into()]),
                    resources: Some(vec!["*".into()]),
                    ..Default::default()
                }]
            } else {
                rules
            };
            (rules, may("escalate", &plural, name))
        }
        _ => {
            let role_kind = obj["roleRef"]["kind"].as_str().unwrap_or_default();
            let role_name = obj["roleRef"]["name"].as_str().unwrap_or_default();
            let role_ref = k8s_openapi::api::rbac::v1::RoleRef {
                api_group: GROUP.into(),
                kind: role_kind.into(),
                name: role_name.into(),
            };
            let ns = (role_kind == "Role").then_some(namespace);
            let rules = match policy.rules_of(&role_ref, ns) {
                Ok(r) => r.to_vec(),
                Err(e) => return Err(forbidden(&plural, name, user, &e)),
            };
            (rules, may("bind", &format!("{}s", role_kind.to_lowercase()), role_name))
        }
    };
    if escape {
        return Ok(());
    }
    let missing: Vec<&PolicyRule> = wanted.iter().filter(|r| !covers(&held, r)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = missing.iter().map(|r| describe(r)).collect();
    let why = format!("user is attempting to grant RBAC permissions not currently held:\n{}", listed.join("\n"));
    Err(forbidden(&plural, name, user, &why))
}

fn forbidden(plural: &str, name: &str, user: &UserInfo, why: &str) -> ApiError {
    let groups: Vec<String> = user.groups.iter().map(|g| format!("{g:?}")).collect();
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "{plural}.{GROUP} \"{name}\" is forbidden: user \"{}\" (groups=[{}]) {why}",
            user.name,
            groups.join(" ")
        ),
    )
    .with_details(serde_json::json!({"name": name, "group": GROUP, "kind": plural}))
}

/// A rule as kube-apiserver lists what is missing.
fn describe(r: &PolicyRule) -> String {
    let list = |v: &Option<Vec<String>>| format!("{:?}", v.clone().unwrap_or_default());
    let mut parts = Vec::new();
    if r.non_resource_urls.as_ref().is_some_and(|u| !u.is_empty()) {
        parts.push(format!("NonResourceURLs:{}", list(&r.non_resource_urls)));
    } else {
        parts.push(format!("APIGroups:{}", list(&r.api_groups)));
        parts.push(format!("Resources:{}", list(&r.resources)));
        if r.resource_names.as_ref().is_some_and(|n| !n.is_empty()) {
            parts.push(format!("ResourceNames:{}", list(&r.resource_names)));
        }
    }
    parts.push(format!("Verbs:{:?}", r.verbs));
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rbac::tests::rule;

    #[test]
    fn coverage_is_per_verb_group_resource_and_name() {
        let held =
            [rule(&["get", "list"], &[""], &["configmaps", "secrets"], &[]), rule(&["*"], &["apps"], &["*"], &[])];
        assert!(covers(&held, &rule(&["get"], &[""], &["secrets"], &[])));
        assert!(covers(&held, &rule(&["list", "get"], &[""], &["configmaps", "secrets"], &["one"])));
        assert!(covers(&held, &rule(&["delete", "create"], &["apps"], &["deployments"], &[])));
        assert!(!covers(&held, &rule(&["delete"], &[""], &["secrets"], &[])), "a verb not held");
        assert!(!covers(&held, &rule(&["get"], &["", "batch"], &["secrets"], &[])), "a group not held");
        assert!(!covers(&held, &rule(&["get"], &[""], &["*"], &[])), "a wildcard asked for needs a wildcard held");
        let named = [rule(&["get"], &[""], &["secrets"], &["a"])];
        assert!(covers(&named, &rule(&["get"], &[""], &["secrets"], &["a"])));
        assert!(!covers(&named, &rule(&["get"], &[""], &["secrets"], &[])), "all names from one");
    }

    #[test]
    fn bindings_need_the_roles_permissions_or_bind() {
        use serde_json::json;
        // alice may write RoleBindings in team-a and read ConfigMaps there.
        let objects = super::super::tests::compiled(
            vec![
                json!({"metadata": {"name": "reader", "namespace": "team-a"},
                    "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
                json!({"metadata": {"name": "binder", "namespace": "team-a"},
                    "rules": [{"apiGroups": [GROUP], "resources": ["rolebindings", "roles"], "verbs": ["create"]},
                              {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
            ],
            vec![json!({"metadata": {"name": "alice", "namespace": "team-a"},
                "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "binder"},
                "subjects": [{"kind": "User", "name": "alice"}]})],
        );
        let alice = UserInfo::new("alice", "", []);
        let binding = |kind: &str, name: &str| {
            json!({"metadata": {"name": "b", "namespace": "team-a"}, "roleRef": {"apiGroup": GROUP, "kind": kind, "name": name},
                "subjects": [{"kind": "User", "name": "bob"}]})
        };
        assert_eq!(check(&objects, &alice, "RoleBinding", &binding("Role", "reader")), Ok(()));
        let e =
            check(&objects, &alice, "RoleBinding", &binding("ClusterRole", "cluster-admin")).expect_err("escalation");
        assert_eq!(e.code, 403);
        assert!(
            e.message.starts_with("rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"alice\""),
            "{}",
            e.message
        );
        assert!(e.message.contains("not currently held"), "{}", e.message);
        let role = |rules: Value| json!({"metadata": {"name": "r", "namespace": "team-a"}, "rules": rules});
        assert_eq!(
            check(
                &objects,
                &alice,
                "Role",
                &role(json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]))
            ),
            Ok(())
        );
        assert!(
            check(
                &objects,
                &alice,
                "Role",
                &role(json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]))
            )
            .is_err()
        );
        let admin = UserInfo::new("root", "", [crate::auth::MASTERS_GROUP.to_string()]);
        assert_eq!(check(&objects, &admin, "RoleBinding", &binding("ClusterRole", "cluster-admin")), Ok(()));
    }
}
