//! The policy a fresh cluster starts with: kube-apiserver's bootstrap roles and bindings
//! that matter to a management plane, and roles for Cluster API's kinds that aggregate into
//! `view`, `edit` and `admin`, so that a namespace's admins and editors can work with its
//! Clusters as with its Deployments.

use std::sync::LazyLock;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use serde_json::{Value, json};

/// The label kube-apiserver puts on its bootstrap policy.
pub const BOOTSTRAPPING_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");
const AUTOUPDATE: (&str, &str) = ("rbac.authorization.kubernetes.io/autoupdate", "true");
const AGGREGATE: &str = "rbac.authorization.k8s.io/aggregate-to-";

/// The groups Cluster API's kinds are served in.
pub(super) const CLUSTER_API_GROUPS: &[&str] = &[
    "cluster.x-k8s.io",
    "bootstrap.cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
    "ipam.cluster.x-k8s.io",
    "addons.cluster.x-k8s.io",
    "runtime.cluster.x-k8s.io",
];

pub(super) const READ: &[&str] = &["get", "list", "watch"];
pub(super) const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

pub(super) fn meta(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut l = json!({BOOTSTRAPPING_LABEL.0: BOOTSTRAPPING_LABEL.1});
    for (k, v) in labels {
        l[*k] = json!(v);
    }
    json!({"name": name, "labels": l, "annotations": {AUTOUPDATE.0: AUTOUPDATE.1}})
}

pub(super) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": groups, "resources": resources})
}

fn paths(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

pub(super) fn role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(name, labels), "rules": rules})
}

fn aggregated(name: &str, labels: &[(&str, &str)], from: &str) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(name, labels),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {format!("{AGGREGATE}{from}"): "true"}}]},
        "rules": [],
    })
}

fn binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> =
        groups.iter().map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g})).collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta(name, &[]),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

const CORE_WORKLOADS: &[&str] = &[
    "configmaps",
    "endpoints",
    "persistentvolumeclaims",
    "pods",
    "replicationcontrollers",
    "replicationcontrollers/scale",
    "serviceaccounts",
    "services",
];

/// The default ClusterRoles, as objects.
pub fn cluster_role_values() -> Vec<Value> {
    let discovery = ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*"];
    let public = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let apps = &["daemonsets", "deployments", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets"];
    let admin_l = [("rbac.authorization.k8s.io/aggregate-to-admin", "true")];
    let edit_l = [("rbac.authorization.k8s.io/aggregate-to-edit", "true")];
    let view_l = [("rbac.authorization.k8s.io/aggregate-to-view", "true")];
    let mut all = vec![
        role("cluster-admin", &[], vec![rule(&["*"], &["*"], &["*"]), paths(&["*"], &["*"])]),
        role("system:discovery", &[], vec![paths(&["get"], &[&discovery[..], &public[..]].concat())]),
        role("system:public-info-viewer", &[], vec![paths(&["get"], &public)]),
        role(
            "system:monitoring",
            &[],
            vec![paths(
                &["get"],
                &["/metrics", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"],
            )],
        ),
        role(
            "system:basic-user",
            &[],
            vec![
                rule(&["create"], &["authorization.k8s.io"], &["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
                rule(&["create"], &["authentication.k8s.io"], &["selfsubjectreviews"]),
            ],
        ),
        role(
            "system:service-account-issuer-discovery",
            &[],
            vec![paths(
                &["get"],
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
            )],
        ),
        aggregated("admin", &[], "admin"),
        aggregated("edit", &admin_l, "edit"),
        aggregated("view", &edit_l, "view"),
        role(
            "system:aggregate-to-admin",
            &admin_l,
            vec![
                rule(&[READ, WRITE].concat(), &["rbac.authorization.k8s.io"], &["rolebindings", "roles"]),
                rule(&["create"], &["authorization.k8s.io"], &["localsubjectaccessreviews"]),
            ],
        ),
        role(
            "system:aggregate-to-edit",
            &edit_l,
            vec![
                rule(WRITE, &[""], &[CORE_WORKLOADS, &["secrets"]].concat()),
                rule(READ, &[""], &["secrets"]),
                rule(&["create"], &[""], &["serviceaccounts/token"]),
                rule(WRITE, &["apps"], apps),
                rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
                rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
                rule(WRITE, &["networking.k8s.io"], &["ingresses", "networkpolicies"]),
            ],
        ),
        role(
            "system:aggregate-to-view",
            &view_l,
            vec![
                rule(
                    READ,
                    &[""],
                    &[
                        CORE_WORKLOADS,
                        &["events", "limitranges", "namespaces", "resourcequotas", "pods/log", "pods/status"],
                    ]
                    .concat(),
                ),
                rule(READ, &["apps"], apps),
                rule(READ, &["batch"], &["cronjobs", "jobs"]),
                rule(READ, &["events.k8s.io"], &["events"]),
                rule(READ, &["policy"], &["poddisruptionbudgets"]),
                rule(READ, &["networking.k8s.io"], &["ingresses", "networkpolicies"]),
                rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
            ],
        ),
        role("drydock:aggregate-to-edit", &edit_l, vec![rule(WRITE, CLUSTER_API_GROUPS, &["*"])]),
        role("drydock:aggregate-to-view", &view_l, vec![rule(READ, CLUSTER_API_GROUPS, &["*"])]),
    ];
    all.extend(super::components::cluster_role_values());
    all
}

/// The default ClusterRoleBindings, as objects.
pub fn cluster_role_binding_values() -> Vec<Value> {
    let mut all = vec![
        binding("cluster-admin", "cluster-admin", &[super::MASTERS_GROUP]),
        binding("system:discovery", "system:discovery", &[crate::auth::AUTHENTICATED_GROUP]),
        binding("system:monitoring", "system:monitoring", &["system:monitoring"]),
        binding("system:basic-user", "system:basic-user", &[crate::auth::AUTHENTICATED_GROUP]),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &[crate::auth::AUTHENTICATED_GROUP, "system:unauthenticated"],
        ),
        binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &[crate::auth::service_accounts::ALL_GROUP],
        ),
    ];
    all.extend(super::components::cluster_role_binding_values());
    all
}

static CLUSTER_ROLES: LazyLock<Vec<ClusterRole>> = LazyLock::new(|| typed(cluster_role_values()));
static CLUSTER_ROLE_BINDINGS: LazyLock<Vec<ClusterRoleBinding>> =
    LazyLock::new(|| typed(cluster_role_binding_values()));

fn typed<T: serde::de::DeserializeOwned>(values: Vec<Value>) -> Vec<T> {
    values.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect()
}

pub fn cluster_roles() -> &'static [ClusterRole] {
    &CLUSTER_ROLES
}

pub fn cluster_role_bindings() -> &'static [ClusterRoleBinding] {
    &CLUSTER_ROLE_BINDINGS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_a_valid_object() {
        assert_eq!(cluster_roles().len(), cluster_role_values().len());
        assert_eq!(cluster_role_bindings().len(), cluster_role_binding_values().len());
    }
}
