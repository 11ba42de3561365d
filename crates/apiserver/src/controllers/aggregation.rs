//! ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller
//! does it: a ClusterRole with an `aggregationRule` has its `rules` rewritten to those of
//! every ClusterRole its selectors match, whenever a ClusterRole of its logical cluster
//! changes. Authorization does not wait for this (it resolves aggregation itself); the
//! written rules are what `kubectl get clusterrole -o yaml` shows.

use std::sync::Arc;

use serde_json::json;

use super::target;
use crate::auth::rbac::Compiled;
use crate::auth::rbac::stored::StoredPolicy;
use crate::rest::{Api, WriteOptions};
use crate::store::watch::{All, Scope};

const GROUP: &str = "rbac.authorization.k8s.io";

pub async fn run(api: Arc<Api>) {
    let Some(res) = api.registry.lookup(GROUP, "v1", "clusterroles").map(|r| r.id) else {
        return;
    };
    let after = api.store.revision();
    let Ok(sub) = api.store.hub().subscribe(Scope::AllClusters(res), Arc::new(All), after, true) else {
        return;
    };
    // Roles users created before a restart.
    for cluster in api.store.clusters() {
        aggregate(&api, &cluster).await;
    }
    let mut rx = sub.rx;
    while let Some((_, ev)) = rx.recv().await {
        if ev.rv() > after {
            aggregate(&api, &ev.key.cluster).await;
        }
    }
}

/// Writes the rules of every aggregated ClusterRole of `cluster` that differ from what
/// its selectors now match. Its own write comes back as an event and finds nothing to do.
async fn aggregate(api: &Api, cluster: &str) {
    let policy = StoredPolicy { api, cluster };
    let roles = crate::auth::rbac::Policy::cluster_roles(&policy);
    if !roles.iter().any(|r| r.aggregation_rule.is_some()) {
        return;
    }
    let compiled = Compiled::new(&policy);
    for role in roles.iter().filter(|r| r.aggregation_rule.is_some()) {
        let Some(name) = role.metadata.name.as_deref() else { continue };
        let Some(rules) = compiled.cluster_role_rules(name) else { continue };
        if role.rules.as_deref().unwrap_or_default() == rules {
            continue;
        }
        let Some(t) = target(api, cluster, GROUP, "clusterroles", None, Some(name)) else { return };
        let Ok(current) = api.get(&t) else { continue };
        let Ok(mut v) = api.value(&t.res, &current) else { continue };
        v["rules"] = json!(rules);
        // A conflict is a newer write of the role, whose event brings us back.
        if let Err(e) = api.update(&t, v, &WriteOptions::by("clusterrole-aggregation-controller")).await
            && e.code != 409
        {
            tracing::warn!(cluster, role = name, error = %e, "aggregating a ClusterRole");
        }
    }
}
