//! The default roles of drydock's own controllers: one per component, bound to that
//! component's user ([`drydock_api::components`]), each granting what the component reads
//! and writes, and a read-only role for the caches they share. The core's and the kubeadm
//! control plane's roles aggregate the ClusterRoles labelled as upstream's providers label
//! theirs, so a provider of the user's own extends them as it would upstream.

use drydock_api::components::{CACHE_USER, Component};
use serde_json::{Value, json};

use super::defaults::{CLUSTER_API_GROUPS, READ, WRITE, meta, role, rule};

/// Upstream's label for ClusterRoles the Cluster API core manager aggregates.
pub const AGGREGATE_TO_MANAGER: &str = "cluster.x-k8s.io/aggregate-to-manager";
/// Upstream's label for ClusterRoles the kubeadm control plane manager aggregates.
pub const AGGREGATE_TO_CONTROL_PLANE: &str = "kubeadm.controlplane.cluster.x-k8s.io/aggregate-to-manager";
/// The read-only role of the shared caches.
pub const CACHE_ROLE: &str = "drydock:controller-manager-cache-role";
/// Bindings of earlier releases that granted more than their subject now needs, and the
/// roles of earlier releases that would still aggregate into a component's: deleted at
/// start.
pub const RETIRED_BINDINGS: &[&str] = &["drydock:manager-rolebinding"];
pub const RETIRED_ROLES: &[&str] = &["drydock:aggregated-manager-role", "drydock:manager-role"];

const ALL: &[&str] = &["*"];
const EVENTS: &[&str] = &["create", "patch", "update"];

fn rw() -> Vec<&'static str> {
    [READ, WRITE].concat()
}

fn aggregated(name: &str, label: &str) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(name, &[]),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]},
        "rules": [],
    })
}

/// What every component does: record Events, read the CRDs' contract labels.
fn common() -> Vec<Value> {
    vec![
        rule(EVENTS, &[""], &["events"]),
        rule(EVENTS, &["events.k8s.io"], &["events"]),
        rule(READ, &["apiextensions.k8s.io"], &["customresourcedefinitions"]),
    ]
}

fn with_common(mut rules: Vec<Value>) -> Vec<Value> {
    rules.extend(common());
    rules
}

/// The components' ClusterRoles, and the caches'.
pub fn cluster_role_values() -> Vec<Value> {
    let core_groups: Vec<&str> = CLUSTER_API_GROUPS.iter().copied().filter(|g| *g != "ipam.cluster.x-k8s.io").collect();
    vec![
        role(
            CACHE_ROLE,
            &[],
            vec![
                rule(READ, CLUSTER_API_GROUPS, ALL),
                rule(READ, &[""], &["configmaps", "secrets"]),
                // Workload clusters' Nodes and Pods, watched through `/clusters/*`.
                rule(READ, &[""], &["namespaces", "nodes", "pods"]),
                rule(READ, &["apiextensions.k8s.io"], &["customresourcedefinitions"]),
            ],
        ),
        aggregated(&Component::Core.role(), AGGREGATE_TO_MANAGER),
        role(
            "drydock:capi-manager-base-role",
            &[(AGGREGATE_TO_MANAGER, "true")],
            with_common(vec![
                // Its own kinds, and the provider objects it clones, owns and deletes.
                rule(ALL, &core_groups, ALL),
                rule(READ, &["ipam.cluster.x-k8s.io"], ALL),
                // Kubeconfigs, ClusterResourceSets' ConfigMaps and Secrets.
                rule(&rw(), &[""], &["configmaps", "secrets"]),
                rule(&rw(), &["coordination.k8s.io"], &["leases"]),
                // ExtensionConfigs' namespace selectors are matched against namespaces' labels;
                // their `service` references are reached at the Services' endpoints.
                rule(READ, &[""], &["namespaces", "services"]),
                rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
            ]),
        ),
        role(
            &Component::KubeadmBootstrap.role(),
            &[],
            with_common(vec![
                rule(ALL, &["bootstrap.cluster.x-k8s.io"], ALL),
                rule(READ, &["cluster.x-k8s.io"], ALL),
                rule(READ, &["controlplane.cluster.x-k8s.io"], ALL),
                // Bootstrap data, certificates, join tokens.
                rule(&rw(), &[""], &["secrets"]),
                rule(READ, &[""], &["configmaps"]),
            ]),
        ),
        aggregated(&Component::KubeadmControlPlane.role(), AGGREGATE_TO_CONTROL_PLANE),
        role(
            "drydock:capi-kubeadm-control-plane-manager-base-role",
            &[(AGGREGATE_TO_CONTROL_PLANE, "true")],
            with_common(vec![
                rule(ALL, &["controlplane.cluster.x-k8s.io"], ALL),
                rule(READ, &["cluster.x-k8s.io"], ALL),
                rule(&rw(), &["cluster.x-k8s.io"], &["machines", "machines/status"]),
                rule(&rw(), &["bootstrap.cluster.x-k8s.io"], &["kubeadmconfigs"]),
                // The infrastructure machines cloned from the control plane's template.
                rule(&rw(), &["infrastructure.cluster.x-k8s.io"], ALL),
                rule(&rw(), &[""], &["configmaps", "secrets"]),
            ]),
        ),
        role(
            &Component::IpamInCluster.role(),
            &[],
            with_common(vec![
                rule(ALL, &["ipam.cluster.x-k8s.io"], ALL),
                rule(READ, &["cluster.x-k8s.io"], &["clusters"]),
            ]),
        ),
        role(
            &Component::InMemory.role(),
            &[],
            with_common(vec![
                rule(ALL, &["infrastructure.cluster.x-k8s.io"], ALL),
                rule(READ, &["cluster.x-k8s.io"], ALL),
                // Machines' addresses from pools (`addressesFromPools`).
                rule(&rw(), &["ipam.cluster.x-k8s.io"], &["ipaddressclaims"]),
                rule(READ, &["ipam.cluster.x-k8s.io"], &["ipaddresses"]),
                // Bootstrap data; the simulated clusters' certificates.
                rule(READ, &[""], &["secrets", "configmaps"]),
            ]),
        ),
    ]
}

fn user_binding(name: &str, role: &str, user: &str) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta(name, &[]),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}],
    })
}

/// Each component's user bound to its role, and the caches' user to theirs.
pub fn cluster_role_binding_values() -> Vec<Value> {
    let mut out = vec![user_binding("drydock:controller-manager-cache-rolebinding", CACHE_ROLE, CACHE_USER)];
    out.extend(
        Component::ALL.iter().map(|c| user_binding(&format!("drydock:{}-rolebinding", c.name()), &c.role(), &c.user())),
    );
    out
}
