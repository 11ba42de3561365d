//! Compiled policies by logical cluster, kept until an RBAC object changes anywhere (the
//! store counts those changes before it answers their writers, so no decision after a
//! write's answer uses the policy from before it). A cluster without RBAC objects of its
//! own, as a simulated workload cluster, shares the compiled defaults.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use super::Compiled;
use super::stored::StoredPolicy;
use crate::rest::Api;

/// Compiled policies by logical cluster.
type ByCluster = HashMap<Arc<str>, Arc<Compiled>>;

pub struct PolicyCache {
    /// The store's count of RBAC changes the entries were compiled at, and the entries.
    entries: RwLock<(u64, ByCluster)>,
    defaults: Arc<Compiled>,
}

impl Default for PolicyCache {
    fn default() -> Self {
        Self { entries: RwLock::new((0, HashMap::new())), defaults: Arc::new(Compiled::new(&super::NoObjects)) }
    }
}

impl std::fmt::Debug for PolicyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyCache").field("clusters", &self.entries.read().1.len()).finish()
    }
}

impl PolicyCache {
    /// Counts changes of the RBAC kinds in `api`'s store from now on.
    pub fn track(api: &Api) {
        let registry = api.registries.for_cluster(drydock_api::tenancy::LogicalClusterName::ROOT);
        let ids = ["roles", "rolebindings", "clusterroles", "clusterrolebindings"]
            .iter()
            .filter_map(|p| registry.by_plural(super::stored::GROUP, p).map(|r| r.id))
            .collect();
        api.store.hub().track(ids);
    }

    /// The policy of `cluster` as the store holds it now.
    pub fn get(&self, api: &Api, cluster: &str) -> Arc<Compiled> {
        // Read before the objects: a change meanwhile leaves an entry that the next call
        // finds stale.
        let generation = api.store.hub().tracked_changes();
        {
            let entries = self.entries.read();
            if entries.0 == generation
                && let Some(c) = entries.1.get(cluster)
            {
                return c.clone();
            }
        }
        let stored = StoredPolicy { api, cluster };
        let compiled = if stored.is_empty() { self.defaults.clone() } else { Arc::new(Compiled::new(&stored)) };
        let mut entries = self.entries.write();
        if entries.0 != generation {
            *entries = (generation, HashMap::new());
        }
        entries.1.insert(Arc::from(cluster), compiled.clone());
        compiled
    }
}
