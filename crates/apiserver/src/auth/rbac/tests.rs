use serde_json::{Value, json};

use super::*;

/// A policy of literal objects.
#[derive(Default)]
struct Objects {
    cluster_roles: Vec<Value>,
    cluster_role_bindings: Vec<Value>,
    roles: Vec<Value>,
    role_bindings: Vec<Value>,
}

fn typed<T: serde::de::DeserializeOwned>(v: &[Value]) -> Vec<T> {
    v.iter().map(|o| serde_json::from_value(o.clone()).expect("rbac object")).collect()
}

impl Policy for Objects {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
        typed(&self.cluster_role_bindings)
    }
    fn role_bindings(&self) -> Vec<RoleBinding> {
        typed(&self.role_bindings)
    }
    fn roles(&self) -> Vec<Role> {
        typed(&self.roles)
    }
    fn cluster_roles(&self) -> Vec<ClusterRole> {
        typed(&self.cluster_roles)
    }
}

/// A resource rule.
pub(crate) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    PolicyRule {
        verbs: v(verbs),
        api_groups: Some(v(groups)),
        resources: Some(v(resources)),
        resource_names: (!names.is_empty()).then(|| v(names)),
        non_resource_urls: None,
    }
}

/// The policy of `roles` and `role_bindings` over the defaults.
pub(super) fn compiled(roles: Vec<Value>, role_bindings: Vec<Value>) -> Compiled {
    Compiled::new(&Objects { roles, role_bindings, ..Default::default() })
}

fn on(verb: &str, group: &str, resource: &str, namespace: Option<&str>, name: Option<&str>) -> Attributes {
    Attributes {
        verb: verb.into(),
        resource: Some(ResourceAttributes {
            group: group.into(),
            resource: resource.into(),
            subresource: None,
            namespace: namespace.map(str::to_string),
            name: name.map(str::to_string),
        }),
        path: String::new(),
    }
}

fn path(p: &str) -> Attributes {
    Attributes { verb: "get".into(), resource: None, path: p.into() }
}

fn service_account(ns: &str, name: &str) -> UserInfo {
    UserInfo::new(
        format!("system:serviceaccount:{ns}:{name}"),
        "uid",
        ["system:serviceaccounts".to_string(), format!("system:serviceaccounts:{ns}")],
    )
}

fn deployer_policy() -> Compiled {
    Compiled::new(&deployer_objects())
}

fn deployer_objects() -> Objects {
    Objects {
        roles: vec![json!({
            "metadata": {"name": "configmap-reader", "namespace": "team-a"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        })],
        role_bindings: vec![json!({
            "metadata": {"name": "deployer-reads", "namespace": "team-a"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmap-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "team-a"}],
        })],
        ..Default::default()
    }
}

#[test]
fn a_role_binding_grants_exactly_its_role_in_its_namespace() {
    let p = deployer_policy();
    let sa = service_account("team-a", "deployer");
    let d = authorize(&p, &sa, &on("list", "", "configmaps", Some("team-a"), None));
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        "RBAC: allowed by RoleBinding \"deployer-reads/team-a\" of Role \"configmap-reader\" to ServiceAccount \"team-a/deployer\""
    );
    assert!(!authorize(&p, &sa, &on("delete", "", "configmaps", Some("team-a"), Some("x"))).allowed, "verb");
    assert!(!authorize(&p, &sa, &on("get", "", "secrets", Some("team-a"), Some("x"))).allowed, "resource");
    assert!(!authorize(&p, &sa, &on("list", "", "configmaps", Some("team-b"), None)).allowed, "other namespace");
    assert!(!authorize(&p, &sa, &on("list", "", "configmaps", None, None)).allowed, "all namespaces");
    // A request's own check decides alike, leaving out only the reason of what it allows.
    for (verb, namespace) in [("list", Some("team-a")), ("delete", Some("team-a")), ("list", Some("team-b"))] {
        let a = on(verb, "", "configmaps", namespace, None);
        let (full, quick) = (authorize(&p, &sa, &a), authorize_request(&p, &sa, &a));
        assert_eq!(quick.allowed, full.allowed, "{verb} in {namespace:?}");
        let reason = if full.allowed { String::new() } else { full.reason };
        assert_eq!(quick.reason, reason, "{verb} in {namespace:?}");
    }
    assert!(
        !authorize(&p, &service_account("team-a", "other"), &on("list", "", "configmaps", Some("team-a"), None))
            .allowed
    );
}

#[test]
fn the_default_policy_applies_without_objects() {
    let p = Compiled::new(&NoObjects);
    let sa = service_account("team-a", "deployer");
    assert!(authorize(&p, &sa, &path("/apis/cluster.x-k8s.io/v1beta2")).allowed, "discovery");
    assert!(authorize(&p, &sa, &path("/openid/v1/jwks")).allowed, "issuer discovery for service accounts");
    assert!(!authorize(&p, &UserInfo::new("alice", "", []), &path("/openid/v1/jwks")).allowed);
    assert!(!authorize(&p, &sa, &path("/metrics")).allowed);
    let prometheus = UserInfo::new("prometheus", "", ["system:monitoring".to_string()]);
    assert!(authorize(&p, &prometheus, &path("/metrics")).allowed, "system:monitoring scrapes");
    assert!(authorize(&p, &prometheus, &path("/readyz/storage")).allowed);
    assert!(authorize(&p, &sa, &on("create", "authorization.k8s.io", "selfsubjectaccessreviews", None, None)).allowed);
    let admin = UserInfo::new("root", "", [MASTERS_GROUP.to_string()]);
    assert!(authorize(&p, &admin, &on("delete", "", "namespaces", None, Some("kube-system"))).allowed);
    let (rules, errors) = rules_for(&p, &admin, "default");
    assert!(errors.is_empty());
    assert!(rules.iter().any(|r| r.verbs == ["*"] && r.resources.as_deref() == Some(&["*".to_string()][..])));
}

#[test]
fn aggregated_roles_hold_what_their_selectors_match() {
    let mut p = deployer_objects();
    p.cluster_roles.push(json!({
        "metadata": {"name": "widgets-edit", "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
        "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["create"]}],
    }));
    p.role_bindings.push(json!({
        "metadata": {"name": "team-admin", "namespace": "team-a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "User", "name": "alice"}],
    }));
    let p = Compiled::new(&p);
    let alice = UserInfo::new("alice", "", []);
    // admin aggregates edit, which aggregates the new role and view.
    assert!(authorize(&p, &alice, &on("create", "example.com", "widgets", Some("team-a"), None)).allowed);
    assert!(authorize(&p, &alice, &on("create", "cluster.x-k8s.io", "clusters", Some("team-a"), None)).allowed);
    assert!(authorize(&p, &alice, &on("watch", "apps", "deployments", Some("team-a"), None)).allowed);
    assert!(
        authorize(&p, &alice, &on("create", "rbac.authorization.k8s.io", "rolebindings", Some("team-a"), None)).allowed
    );
    assert!(!authorize(&p, &alice, &on("create", "example.com", "widgets", Some("team-b"), None)).allowed);
    assert!(!authorize(&p, &alice, &on("list", "", "namespaces", None, None)).allowed, "cluster scope");
    let view = p.cluster_role_rules("view").expect("view");
    assert!(!view.iter().any(|r| r.api_groups.as_deref() == Some(&["example.com".to_string()][..])));
}

#[test]
fn a_missing_role_is_named_in_the_reason() {
    let p = Objects {
        cluster_role_bindings: vec![json!({
            "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
            "subjects": [{"kind": "Group", "name": "system:authenticated"}],
        })],
        ..Default::default()
    };
    let p = Compiled::new(&p);
    let d = authorize(&p, &UserInfo::new("bob", "", []), &on("get", "", "pods", Some("x"), Some("p")));
    assert_eq!(
        d,
        Decision { allowed: false, reason: "RBAC: [clusterrole.rbac.authorization.k8s.io \"gone\" not found]".into() }
    );
}
