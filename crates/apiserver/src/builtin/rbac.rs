//! rbac.authorization.k8s.io/v1: Role, ClusterRole and their bindings. Stored only:
//! drydock does not authorize requests.

use k8s_openapi::api::rbac::v1 as rbac;

use super::kind::{AGE, BASE, Col, Kind, schema_of};

const RBAC: Kind = Kind { group: "rbac.authorization.k8s.io", ..BASE };

const CREATED_AT: &[Col] = &[("Created At", "date", "#createdAt", 0)];

const BINDING: &[Col] = &[
    ("Role", "string", "#binding.role", 0),
    AGE,
    ("Users", "string", "#binding.subjects:User", 1),
    ("Groups", "string", "#binding.subjects:Group", 1),
    ("ServiceAccounts", "string", "#binding.subjects:ServiceAccount", 1),
];

pub(super) const KINDS: &[Kind] = &[
    Kind { kind: "Role", plural: "roles", columns: CREATED_AT, schema: schema_of::<rbac::Role>, ..RBAC },
    Kind {
        kind: "ClusterRole",
        plural: "clusterroles",
        namespaced: false,
        columns: CREATED_AT,
        schema: schema_of::<rbac::ClusterRole>,
        ..RBAC
    },
    Kind {
        kind: "RoleBinding",
        plural: "rolebindings",
        columns: BINDING,
        schema: schema_of::<rbac::RoleBinding>,
        ..RBAC
    },
    Kind {
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        namespaced: false,
        columns: BINDING,
        schema: schema_of::<rbac::ClusterRoleBinding>,
        ..RBAC
    },
];
