//! Simulated infrastructure clusters (InMemoryCluster, DevCluster): a simulated workload
//! cluster is a logical cluster `<ns>.<cluster>` of the hosting API server. The controller
//! (one per kind, see [`crate::kinds`]) creates it, points the endpoint at the host (host,
//! port, and the `/clusters/<name>` path in an annotation) and reports ready; deletion
//! wipes the logical cluster.
//!
//! Writes per cluster: one main patch (finalizer, endpoint), the LogicalCluster, one status
//! patch; deletion: the LogicalCluster delete and the finalizer removal.
//!
//! The fault `api-unreachable` (see [`crate::fault`]) labels the LogicalCluster
//! unreachable, which its server answers with 503, and removing it takes the label off.

use std::collections::HashMap;
use std::sync::Arc;

use drydock_api::capi::conditions::READY;
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::owner::find_owner;
use drydock_api::capi::{common::APIEndpoint, keys::CLUSTER_NAME_LABEL};
use drydock_api::tenancy::{
    LOGICAL_CLUSTER_KIND, LOGICAL_CLUSTER_PLURAL, LogicalClusterName, TENANCY_GROUP, TENANCY_VERSION, UNREACHABLE_LABEL,
};
use drydock_controllers::Running;
use drydock_controllers::framework::Requeue;
use drydock_controllers::framework::index::Changes;
use drydock_controllers::framework::runner::{self, Queue};
use drydock_controllers::framework::write::{
    Writer, add_finalizer, create_if_absent, delete_if_present, remove_finalizer,
};
use drydock_controllers::framework::{Error, Result};
use kube::ResourceExt;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use serde_json::json;

use crate::fault;
use crate::kinds::{SimulatedCluster, announce_backend, finish_conditions};
use crate::{ENDPOINT_PATH_ANNOTATION, ProviderContext, cluster_paused, is_paused};

/// Label on a LogicalCluster naming the infrastructure cluster (`<ns>.<name>`) it
/// simulates.
pub const SIMULATES_LABEL: &str = "infrastructure.drydock.dev/inmemorycluster";

/// The hosting server's LogicalCluster kind.
fn logical_clusters(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(TENANCY_GROUP, TENANCY_VERSION, LOGICAL_CLUSTER_KIND);
    Api::all_with(client.clone(), &ApiResource::from_gvk_with_plural(&gvk, LOGICAL_CLUSTER_PLURAL))
}

/// The controller of the simulated infrastructure cluster kind `K`.
pub fn controller<K: SimulatedCluster>(pctx: &Arc<ProviderContext>) -> Running {
    let ctx = &pctx.ctx;
    let informer = K::informer(&ctx.informers);
    let queue = Queue::new(K::CONTROLLER);
    // Only the Cluster's spec (its pause, its infrastructure reference) matters here: its
    // status writes, a dozen per cluster while Machines come up, wake nothing.
    let (clusters, specs) = (ctx.informers.clusters.store.clone(), Changes::<Option<i64>>::default());
    let on_cluster = queue.map_to(move |c: &Cluster| {
        if !specs.changed_in(&clusters, c, c.metadata.generation) {
            return Vec::new();
        }
        infra_of::<K>(c)
    });
    let c = Controller::for_shared_stream(queue.track(informer.subscribe()), informer.store.clone())
        .watches_shared_stream(ctx.informers.clusters.subscribe(), on_cluster);
    let state =
        Arc::new(ClusterCtx { p: pctx.clone(), writer: Writer::new(K::CONTROLLER), unreachable: Default::default() });
    Box::pin(runner::run(K::CONTROLLER, c, queue, 64, ctx.clock().clone(), state, reconcile::<K>))
}

/// What the reconciles of one kind share.
struct ClusterCtx {
    p: Arc<ProviderContext>,
    writer: Writer,
    /// Whether each logical cluster is labelled unreachable, as last written or read.
    unreachable: parking_lot::Mutex<HashMap<String, bool>>,
}

/// The infrastructure cluster of kind `K` a Cluster points at (any version of the kind).
fn infra_of<K: SimulatedCluster>(c: &Cluster) -> Vec<ObjectRef<K>> {
    c.spec
        .infrastructure_ref
        .as_ref()
        .filter(|r| r.is_kind(&K::group(&()), &K::kind(&())))
        .map(|r| r.name.as_str())
        .map(|n| ObjectRef::new(n).within(&c.namespace().unwrap_or_default()))
        .into_iter()
        .collect()
}

/// The Cluster this object belongs to: the owner set by the Cluster controller (upstream
/// waits for it), else the cluster-name label.
fn cluster_name<K: SimulatedCluster>(ic: &K) -> Option<String> {
    find_owner(ic.meta(), "cluster.x-k8s.io", "Cluster")
        .map(|o| o.name.clone())
        .or_else(|| ic.labels().get(CLUSTER_NAME_LABEL).cloned())
}

async fn reconcile<K: SimulatedCluster>(ic: Arc<K>, c: Arc<ClusterCtx>) -> Result<Requeue> {
    // Errors of other objects carry context (and are no longer plain 404s): a 404 here is
    // the object itself, deleted while this reconcile ran.
    match reconcile_cluster(ic, &c).await {
        Err(e) if e.is_not_found() => Ok(Requeue::await_change()),
        r => r,
    }
}

async fn reconcile_cluster<K: SimulatedCluster>(ic: Arc<K>, c: &ClusterCtx) -> Result<Requeue> {
    let p = &c.p;
    // After a restart the owner Cluster may not be loaded yet (see the machine controller).
    p.ctx.informers.clusters.ready().await;
    let ns = ic.namespace().unwrap_or_default();
    let api: Api<K> = p.ctx.api(&ns);
    if ic.meta().deletion_timestamp.is_some() {
        return reconcile_delete(ic.as_ref(), c, &api).await;
    }
    if find_owner(ic.meta(), "cluster.x-k8s.io", "Cluster").is_none() || is_paused(ic.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let Some(cluster) = cluster_name(ic.as_ref()) else {
        return Ok(Requeue::await_change());
    };
    let owner = p.ctx.informers.clusters.store.get(&ObjectRef::new(&cluster).within(&ns));
    if owner.as_deref().is_some_and(cluster_paused) {
        return Ok(Requeue::await_change());
    }
    let lc = LogicalClusterName::for_cluster(&ns, &cluster);

    // The finalizer is persisted before the logical cluster exists, so it cannot leak.
    let mut want = (*ic).clone();
    add_finalizer(&mut want, K::FINALIZER);
    want.default_endpoint(APIEndpoint { host: p.host.endpoint_host.clone(), port: i32::from(p.host.endpoint_port) });
    want.annotations_mut().insert(ENDPOINT_PATH_ANNOTATION.into(), format!("/clusters/{lc}"));
    let current = c.writer.apply(&api, &ic, &want).await?.or_wanted(&want)?;

    let was_ready = ic.is_ready();
    let unreachable = fault::api_unreachable(ic.annotations());
    if !was_ready {
        let mut labels = json!({SIMULATES_LABEL: format!("{ns}.{}", ic.name_any())});
        if unreachable {
            labels[UNREACHABLE_LABEL] = json!("true");
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{TENANCY_GROUP}/{TENANCY_VERSION}"),
            "kind": LOGICAL_CLUSTER_KIND,
            "metadata": {"name": lc.as_str(), "labels": labels},
        }))?;
        create_if_absent(&logical_clusters(&p.host.client), K::CONTROLLER, &obj)
            .await
            .map_err(Error::during(format!("creating logical cluster {lc}")))?;
        c.unreachable.lock().insert(lc.to_string(), unreachable);
    }
    set_reachability(c, &lc, unreachable).await?;
    let mut want = current.clone();
    want.report_failure_domains();
    want.set_ready();
    let now = p.ctx.clock().condition_time();
    want.mark_true(READY, now.clone());
    let new = finish_conditions(&mut want, now);
    c.writer.apply(&api, &current, &want).await?;
    announce_backend(&p.ctx.events, ic.as_ref(), new).await;
    if !was_ready {
        p.ctx
            .events
            .normal(ic.as_ref(), "Provisioned", format!("Workload cluster {lc} is served at {}", lc.path()))
            .await;
    }
    Ok(Requeue::await_change())
}

/// Labels the logical cluster `lc` unreachable, or takes the label off, unless it is known to
/// be so already (after a restart the LogicalCluster is read once).
async fn set_reachability(c: &ClusterCtx, lc: &LogicalClusterName, unreachable: bool) -> Result<()> {
    let known = c.unreachable.lock().get(lc.as_str()).copied();
    let api = logical_clusters(&c.p.host.client);
    let labelled = match known {
        Some(k) => k,
        None if unreachable => false,
        None => match api.get_opt(lc.as_str()).await.map_err(Error::during(format!("reading logical cluster {lc}")))? {
            Some(o) => o.labels().get(UNREACHABLE_LABEL).is_some_and(|v| v == "true"),
            None => false,
        },
    };
    if labelled != unreachable {
        let value = if unreachable { json!("true") } else { serde_json::Value::Null };
        let patch = json!({"metadata": {"labels": {UNREACHABLE_LABEL: value}}});
        c.writer
            .patch(&api, lc.as_str(), &patch)
            .await
            .map_err(Error::during(format!("labelling logical cluster {lc}")))?;
        let state = if unreachable { "unreachable" } else { "reachable again" };
        tracing::info!(logical_cluster = %lc, "workload API server made {state} ({})", fault::FAULT_ANNOTATION);
    }
    c.unreachable.lock().insert(lc.to_string(), unreachable);
    Ok(())
}

async fn reconcile_delete<K: SimulatedCluster>(ic: &K, c: &ClusterCtx, api: &Api<K>) -> Result<Requeue> {
    let p = &c.p;
    if !ic.finalizers().iter().any(|f| f == K::FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let ns = ic.namespace().unwrap_or_default();
    if let Some(cluster) = cluster_name(ic) {
        let lc = LogicalClusterName::for_cluster(&ns, &cluster);
        delete_if_present(&logical_clusters(&p.host.client), K::CONTROLLER, lc.as_str())
            .await
            .map_err(Error::during(format!("deleting logical cluster {lc}")))?;
        p.ctx.workload.forget(&ns, &cluster);
        c.unreachable.lock().remove(lc.as_str());
    }
    let mut want = ic.clone();
    remove_finalizer(&mut want, K::FINALIZER);
    c.writer.apply(api, ic, &want).await?;
    Ok(Requeue::await_change())
}
