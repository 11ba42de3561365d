//! The API server's own control loops, as kube-controller-manager runs them next to
//! kube-apiserver: garbage collection by ownerReferences, namespace termination, ClusterRole
//! aggregation, the tokens of ServiceAccount token Secrets and the cleaning of expired
//! bootstrap tokens.
//! Also the bootstrap of a fresh store and the lifecycle of logical clusters (default
//! namespaces, then `status.phase: Ready`; wiped when deleted).

mod aggregation;
mod gc;
pub mod legacy_tokens;
mod namespaces;
mod token_cleaner;

use std::sync::Arc;

use drydock_api::resource::NativeKind;
use drydock_api::tenancy::{LOGICAL_CLUSTER_PLURAL, LogicalClusterName, TENANCY_GROUP};
use serde_json::{Value, json};

use crate::error::ApiResult;
use crate::rest::{Api, Subresource, Target, WriteOptions};
use crate::store::{Change, Expect};

/// Secrets of one `type` (the first selectable field of Secrets), in any namespace, or in
/// `namespace` only: what the server's token loops watch, so that other Secrets cost them
/// nothing.
pub(crate) struct SecretsOfType {
    pub type_: &'static str,
    pub namespace: Option<&'static str>,
}

impl crate::store::watch::EventFilter for SecretsOfType {
    fn matches(&self, key: &crate::store::ObjKey, meta: &crate::store::ObjMeta) -> bool {
        self.namespace.is_none_or(|ns| key.namespace == ns)
            && meta.fields.first().and_then(Option::as_deref) == Some(self.type_)
    }
}

/// Namespaces every logical cluster starts with.
pub const DEFAULT_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Addresses one object (or a collection) of a served resource.
pub fn target(
    api: &Api,
    cluster: &str,
    group: &str,
    plural: &str,
    namespace: Option<&str>,
    name: Option<&str>,
) -> Option<Target> {
    let res = api.registries.for_cluster(cluster).by_plural(group, plural)?.clone();
    Some(Target {
        cluster: api.store.cluster_name(cluster),
        res,
        namespace: namespace.map(str::to_string),
        name: name.map(str::to_string),
        sub: None,
    })
}

/// Creates an object unless it exists (409 is success).
pub async fn ensure(api: &Api, t: &Target, obj: Value) -> ApiResult<()> {
    match api.create(t, obj, &WriteOptions::by("drydock-apiserver")).await {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates the default namespaces of a logical cluster.
pub async fn init_cluster(api: &Api, cluster: &str) -> ApiResult<()> {
    for ns in DEFAULT_NAMESPACES {
        if let Some(t) = target(api, cluster, "", "namespaces", None, None) {
            ensure(api, &t, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})).await?;
        }
    }
    Ok(())
}

/// `status.phase` of a LogicalCluster whose default namespaces exist (kcp's name for it).
pub const LOGICAL_CLUSTER_READY: &str = "Ready";

/// Creates a logical cluster's default namespaces, then records `status.phase: Ready` on
/// its LogicalCluster (unless it says so already, or is gone).
pub async fn init_and_mark_ready(api: &Api, name: &str) -> ApiResult<()> {
    init_cluster(api, name).await?;
    let Some(mut t) = target(api, LogicalClusterName::ROOT, TENANCY_GROUP, LOGICAL_CLUSTER_PLURAL, None, Some(name))
    else {
        return Ok(());
    };
    t.sub = Some(Subresource::Status);
    // A conflict means someone else wrote it meanwhile: read again.
    for _ in 0..5 {
        let Ok(cur) = api.get(&t) else { return Ok(()) };
        let mut v = api.value(&t.res, &cur)?;
        if v["status"]["phase"] == LOGICAL_CLUSTER_READY || !v["metadata"]["deletionTimestamp"].is_null() {
            return Ok(());
        }
        v["status"]["phase"] = json!(LOGICAL_CLUSTER_READY);
        match api.update(&t, v, &WriteOptions::by("drydock-apiserver")).await {
            Err(e) if e.code == 409 => continue,
            Err(e) if e.code == 404 => return Ok(()),
            other => return other.map(|_| ()),
        }
    }
    Ok(())
}

/// Removes every object of a logical cluster, finalizers notwithstanding.
pub async fn wipe_cluster(api: &Api, cluster: &str) {
    let objects = api.store.scan(Some(cluster), None);
    let n = objects.len();
    let mut tasks = tokio::task::JoinSet::new();
    for (key, obj) in objects {
        let store = api.store.clone();
        tasks.spawn(async move { store.commit(key, Expect::Revision(obj.rv), Change::Delete).await });
        while tasks.len() >= 256 {
            tasks.join_next().await;
        }
    }
    while tasks.join_next().await.is_some() {}
    tracing::debug!(cluster, objects = n, "logical cluster wiped");
}

/// Prepares a fresh or reloaded store: default namespaces of the root cluster and a
/// CustomResourceDefinition object for every kind drydock serves (created, or updated when
/// its spec differs), through which the kind is served.
pub async fn bootstrap(api: &Api, custom: &[NativeKind]) -> anyhow::Result<()> {
    init_cluster(api, LogicalClusterName::ROOT)
        .await
        .map_err(|e| anyhow::anyhow!("creating default namespaces: {e}"))?;
    default_policy(api).await.map_err(|e| anyhow::anyhow!("writing the default RBAC policy: {e}"))?;
    let crds = target(api, LogicalClusterName::ROOT, "apiextensions.k8s.io", "customresourcedefinitions", None, None)
        .ok_or_else(|| anyhow::anyhow!("CRD resource not registered"))?;
    let mut names = std::collections::HashSet::new();
    for kind in custom {
        let name = format!("{}.{}", kind.crd.spec.names.plural, kind.crd.spec.group);
        anyhow::ensure!(
            names.insert(name.clone()),
            "{name} is given twice: one kind has one CRD, with all its versions"
        );
    }
    for kind in custom {
        let mut crd = serde_json::to_value(&kind.crd)?;
        crd["apiVersion"] = json!("apiextensions.k8s.io/v1");
        crd["kind"] = json!("CustomResourceDefinition");
        let name = format!("{}.{}", kind.crd.spec.names.plural, kind.crd.spec.group);
        let one = Target { name: Some(name.clone()), ..crds.clone() };
        // Replicas sharing a store may start together, and a running one's CRD controller
        // writes the status: a conflict is another replica's write, which the next attempt
        // reads. The read is a consistent one (on etcd it waits for this replica to catch
        // up), so the next attempt carries the current resourceVersion.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let written = match api.read(&one, None).await {
                Err(_) => ensure(api, &crds, crd.clone()).await,
                Ok(cur) => {
                    let mut cur_v = api.value(&one.res, &cur).map_err(|e| anyhow::anyhow!("{e}"))?;
                    if cur_v["spec"] == crd["spec"] {
                        break;
                    }
                    cur_v["spec"] = crd["spec"].clone();
                    api.update(&one, cur_v, &WriteOptions::by("drydock-apiserver")).await.map(|_| ())
                }
            };
            match written {
                Ok(()) => break,
                Err(e) if e.code == 409 && attempts < 5 => continue,
                Err(e) => anyhow::bail!("writing CRD {name}: {e}"),
            }
        }
    }
    Ok(())
}

/// Writes the default RBAC policy into the management cluster where it is missing, so that
/// `kubectl get clusterroles` shows it (it applies everywhere whether written or not); an
/// aggregated role is written with the rules it aggregates now.
async fn default_policy(api: &Api) -> ApiResult<()> {
    use crate::auth::rbac::{Compiled, defaults, stored::StoredPolicy};
    const RBAC: &str = "rbac.authorization.k8s.io";
    let root = LogicalClusterName::ROOT;
    let (Some(roles), Some(bindings)) = (
        target(api, root, RBAC, "clusterroles", None, None),
        target(api, root, RBAC, "clusterrolebindings", None, None),
    ) else {
        return Ok(());
    };
    let policy = Compiled::new(&StoredPolicy { api, cluster: root });
    for mut role in defaults::cluster_role_values() {
        if role.get("aggregationRule").is_some()
            && let Some(name) = role["metadata"]["name"].as_str()
        {
            let rules = policy.cluster_role_rules(name).unwrap_or_default();
            role["rules"] = serde_json::to_value(rules).unwrap_or_default();
        }
        ensure(api, &roles, role).await?;
    }
    for binding in defaults::cluster_role_binding_values() {
        ensure(api, &bindings, binding).await?;
    }
    use crate::auth::rbac::components::{RETIRED_BINDINGS, RETIRED_ROLES};
    let retired = RETIRED_BINDINGS.iter().map(|n| (&bindings, n)).chain(RETIRED_ROLES.iter().map(|n| (&roles, n)));
    for (target, name) in retired {
        let mut t = target.clone();
        t.name = Some(name.to_string());
        match api.delete(&t, &Default::default()).await {
            Ok(_) => tracing::info!(name, "deleted a retired default RBAC object"),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Starts the background loops.
pub fn spawn(api: &Api) {
    let api = Arc::new(api.clone());
    tokio::spawn(gc::run(api.clone()));
    tokio::spawn(aggregation::run(api.clone()));
    tokio::spawn(token_cleaner::run(api.clone()));
    tokio::spawn(crate::crd::controller::run(api.clone()));
    tokio::spawn(namespaces::run(api));
}

/// Whether a target is the LogicalCluster kind.
pub fn is_logical_cluster(t: &Target) -> bool {
    t.res.def.group == TENANCY_GROUP && t.res.def.plural == LOGICAL_CLUSTER_PLURAL
}
