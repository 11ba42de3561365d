//! A logical cluster's RBAC objects as the store holds them now.

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::de::DeserializeOwned;

use super::Policy;
use crate::rest::Api;
use crate::store::{ListQuery, ObjKey};
use drydock_api::tenancy::LogicalClusterName;

pub(super) const GROUP: &str = "rbac.authorization.k8s.io";

/// The policy of the logical cluster `cluster` in `api`'s store.
pub struct StoredPolicy<'a> {
    pub api: &'a Api,
    pub cluster: &'a str,
}

impl StoredPolicy<'_> {
    fn list<T: DeserializeOwned>(&self, plural: &str, limit: Option<usize>) -> Vec<T> {
        let registry = self.api.registries.for_cluster(self.cluster);
        let Some(res) = registry.by_plural(GROUP, plural) else { return Vec::new() };
        let q = ListQuery { cluster: self.cluster, res: res.id, limit, ..Default::default() };
        let page = self.api.store.list(&q, &|_, _| true);
        // An object the store took passed the kind's schema; one that still does not parse
        // as the rbac type grants nothing.
        page.items.iter().filter_map(|o| serde_json::from_slice(&o.bytes).ok()).collect()
    }

    /// Whether the cluster holds no RBAC objects at all.
    pub fn is_empty(&self) -> bool {
        ["clusterrolebindings", "rolebindings", "clusterroles", "roles"]
            .iter()
            .all(|p| self.list::<serde::de::IgnoredAny>(p, Some(1)).is_empty())
    }
}

impl Policy for StoredPolicy<'_> {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
        self.list("clusterrolebindings", None)
    }

    fn role_bindings(&self) -> Vec<RoleBinding> {
        self.list("rolebindings", None)
    }

    fn roles(&self) -> Vec<Role> {
        self.list("roles", None)
    }

    fn cluster_roles(&self) -> Vec<ClusterRole> {
        self.list("clusterroles", None)
    }
}

/// The key of a core object.
fn core_key(api: &Api, cluster: &LogicalClusterName, plural: &str, namespace: &str, name: &str) -> Option<ObjKey> {
    let res = api.registries.for_cluster(cluster.as_str()).by_plural("", plural)?.id;
    Some(ObjKey {
        cluster: api.store.cluster_name(cluster.as_str()),
        res,
        namespace: namespace.to_string(),
        name: name.to_string(),
    })
}

impl crate::auth::Objects for Api {
    fn uid(&self, cluster: &LogicalClusterName, plural: &str, namespace: &str, name: &str) -> Option<String> {
        self.store.get(&core_key(self, cluster, plural, namespace, name)?).map(|o| o.meta.uid.clone())
    }

    fn object(
        &self,
        cluster: &LogicalClusterName,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> Option<serde_json::Value> {
        let stored = self.store.get(&core_key(self, cluster, plural, namespace, name)?)?;
        serde_json::from_slice(&stored.bytes).ok()
    }
}
