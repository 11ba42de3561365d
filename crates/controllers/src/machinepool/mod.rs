//! MachinePool controller: a group of machines its infrastructure provider scales as one.
//!
//! One reconcile: pause; the cluster label, Cluster owner and finalizer; the bootstrap
//! config adopted and its data secret named in the template
//! (`spec.template.spec.bootstrap.dataSecretName`, which the provider's instances boot
//! from); the infrastructure pool adopted, its `spec.providerIDList` copied to the
//! MachinePool's; the Nodes of those provider IDs found in the workload cluster
//! (`status.nodeRefs`, the ready, available and up-to-date counts, `status.versions`),
//! annotated with their cluster and the pool as owner, the uninitialized taint dropped;
//! phase and conditions ([`status`]). Scaling and rolling out are the provider's: it reads
//! `spec.replicas` and the template's version (with `cluster.x-k8s.io/replicas-managed-by`,
//! the pool's replicas are the provider's and `spec.replicas` follows them; admission
//! defaults `spec.replicas` from the cluster autoscaler's min/max-size annotations). Deletion deletes the bootstrap config and
//! the infrastructure pool (whose provider removes the instances and their Nodes), then
//! lets the MachinePool go.

mod status;

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::core::v1beta2::{Cluster, MachinePool};
use drydock_api::capi::dev::v1beta2::DevMachinePool;
use drydock_api::capi::docker::v1beta2::DockerMachinePool;
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, MACHINE_POOL_FINALIZER, REPLICAS_MANAGED_BY_ANNOTATION};
use drydock_api::capi::kubeadm::v1beta2::KubeadmConfig;
use drydock_api::capi::owner;
use k8s_openapi::api::core::v1::{Node, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::framework::Result;
use crate::framework::node_patch;
use crate::framework::node_reader::{NodeReader, workload_nodes};
use crate::framework::objects::CAPI_GROUP;
use crate::framework::pause::{self, Pause};
use crate::framework::referenced::{self, Referenced};
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::write::{self, Writer, controller_ref_of};
use crate::{Context, Running};

pub const NAME: &str = "machinepool";

static WRITER: Writer = Writer::new(NAME);

/// How often a pool whose instances are not all ready (or not all found as Nodes) looks
/// again when no watch reports the Nodes' changes.
const NODE_RECHECK: Duration = Duration::from_secs(2);

pub fn controller(ctx: &Arc<Context>) -> Running {
    let queue = Queue::new(NAME);
    let i = &ctx.informers;
    let pools = i.machine_pools.store.clone();
    let on_cluster = queue.map_to(move |c: &Cluster| pools_of(&pools, c));
    let on_infra = queue.map_to(|p: &DevMachinePool| owner_of(&p.metadata));
    let on_docker = queue.map_to(|p: &DockerMachinePool| owner_of(&p.metadata));
    let on_config = queue.map_to(|c: &KubeadmConfig| owner_of(&c.metadata));
    let c = Controller::for_shared_stream(queue.track(i.machine_pools.subscribe()), i.machine_pools.store.clone())
        .watches_shared_stream(i.clusters.subscribe(), on_cluster)
        .watches_shared_stream(i.dev_machine_pools.subscribe(), on_infra)
        .watches_shared_stream(i.docker_machine_pools.subscribe(), on_docker)
        .watches_shared_stream(i.kubeadm_configs.subscribe(), on_config);
    let concurrency = ctx.settings.machinepool_concurrency;
    Box::pin(runner::run(NAME, c, queue, concurrency, ctx.clock().clone(), ctx.clone(), reconcile))
}

/// The MachinePools of a Cluster (a pause or infrastructure change concerns them all).
fn pools_of(pools: &Store<MachinePool>, c: &Cluster) -> Vec<ObjectRef<MachinePool>> {
    let (ns, name) = (c.namespace(), c.name_any());
    pools
        .state()
        .iter()
        .filter(|p| p.namespace() == ns && p.spec.cluster_name == name)
        .map(|p| ObjectRef::from_obj(p.as_ref()))
        .collect()
}

/// The MachinePool owning an object (its infrastructure pool or bootstrap config).
fn owner_of(meta: &kube::core::ObjectMeta) -> Vec<ObjectRef<MachinePool>> {
    let ns = meta.namespace.as_deref().unwrap_or_default();
    owner::find_owner(meta, CAPI_GROUP, "MachinePool").map(|o| ObjectRef::new(&o.name).within(ns)).into_iter().collect()
}

async fn reconcile(mp: Arc<MachinePool>, ctx: Arc<Context>) -> Result<Requeue> {
    if WRITER.is_stale(mp.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let ns = mp.namespace().unwrap_or_default();
    let api: Api<MachinePool> = ctx.api(&ns);
    if mp.metadata.deletion_timestamp.is_some() {
        return delete(&ctx, &api, &mp).await;
    }
    ctx.informers.clusters.ready().await;
    let cluster = ctx.cluster(&ns, &mp.spec.cluster_name)?;
    let mut want = (*mp).clone();
    let now = ctx.clock().condition_time();
    let paused = Pause::of(&cluster, &mp.metadata, false);
    pause::set_condition(&mut want, paused, &cluster, now.clone());
    if paused.is_some() {
        if want != *mp {
            WRITER.apply(&api, &mp, &want).await?;
        }
        return Ok(Requeue::await_change());
    }
    default_metadata(&mut want, &cluster);
    let owner = controller_ref_of(mp.as_ref())?;
    let bootstrap = bootstrap(&ctx, &mut want, &owner).await?;
    let infra = infrastructure(&ctx, &mut want, &owner).await?;
    let nodes = match &infra {
        Some(i) if i.provisioned => nodes(&ctx, &cluster, &want).await?,
        _ => Vec::new(),
    };
    let seen = status::Seen { bootstrap, infra: infra.as_ref(), nodes: &nodes };
    let settled = status::set(&mut want, &seen, &now);
    if want != *mp {
        WRITER.apply(&api, &mp, &want).await?;
    }
    let labelled = label_nodes(&ctx, &cluster, &want, &nodes).await?;
    Ok(if settled && labelled { Requeue::await_change() } else { Requeue::after(NODE_RECHECK) })
}

/// The cluster-name label, the Cluster as owner, and the finalizer (written with the first
/// change of the pool, not on a write of their own).
fn default_metadata(mp: &mut MachinePool, cluster: &Cluster) {
    let cluster_name = mp.spec.cluster_name.clone();
    mp.labels_mut().insert(CLUSTER_NAME_LABEL.into(), cluster_name);
    if !owner::has_owner(&mp.metadata, CAPI_GROUP, "Cluster")
        && let Some(r) = owner::owner_ref(cluster)
    {
        owner::ensure_owner_ref(&mut mp.metadata, r);
    }
    write::add_finalizer(mp, MACHINE_POOL_FINALIZER);
}

/// The object a v1beta2 reference of the pool points at, with its full reference.
async fn read(
    ctx: &Context,
    ns: &str,
    r: &ContractVersionedObjectReference,
) -> Result<Option<(ObjectReference, Referenced)>> {
    let Some(full) = referenced::resolve(ctx, ns, r).await? else { return Ok(None) };
    Ok(referenced::read(ctx, ns, &full).await?.map(|obj| (full, obj)))
}

/// Adopts the bootstrap config and, once it has made the data secret, names the secret in
/// the template. Returns whether the pool has bootstrap data.
async fn bootstrap(ctx: &Context, mp: &mut MachinePool, owner: &OwnerReference) -> Result<bool> {
    let ns = mp.namespace().unwrap_or_default();
    let Some(r) = mp.spec.template.spec.bootstrap.config_ref.clone() else {
        // A pool may name its data secret itself.
        return Ok(mp.spec.template.spec.bootstrap.data_secret_name.is_some());
    };
    let Some((full, config)) = read(ctx, &ns, &r).await? else { return Ok(false) };
    referenced::adopt(ctx, NAME, &full, &config, owner, &mp.spec.cluster_name, &[]).await?;
    let secret = config.data_secret_name().filter(|_| config.data_secret_created());
    if let Some(name) = secret {
        mp.spec.template.spec.bootstrap.data_secret_name = Some(name);
        mp.initialization_mut().bootstrap_data_secret_created = Some(true);
    }
    Ok(mp.spec.template.spec.bootstrap.data_secret_name.is_some() && mp.bootstrap_data_secret_created())
}

/// What the infrastructure pool reports.
pub(crate) struct Infrastructure {
    pub provisioned: bool,
    /// Instances that exist (`status.replicas`, else the provider IDs listed).
    pub replicas: i32,
}

/// Adopts the infrastructure pool and copies what it reports: whether it is provisioned and
/// its instances' provider IDs. `None` while it does not exist.
async fn infrastructure(ctx: &Context, mp: &mut MachinePool, owner: &OwnerReference) -> Result<Option<Infrastructure>> {
    let ns = mp.namespace().unwrap_or_default();
    let r = mp.spec.template.spec.infrastructure_ref.clone();
    let Some((full, pool)) = read(ctx, &ns, &r).await? else { return Ok(None) };
    referenced::adopt(ctx, NAME, &full, &pool, owner, &mp.spec.cluster_name, &[]).await?;
    let ids = pool.provider_id_list();
    let provisioned = pool.provisioned();
    if provisioned {
        mp.initialization_mut().infrastructure_provisioned = Some(true);
    }
    let replicas = pool.status_replicas().unwrap_or(i32::try_from(ids.len()).unwrap_or(i32::MAX));
    if mp.annotations().contains_key(REPLICAS_MANAGED_BY_ANNOTATION) && pool.status_replicas().is_some() {
        // An external autoscaler sizes the provider's pool; the MachinePool follows it.
        mp.spec.replicas = Some(replicas);
    }
    mp.spec.provider_id_list = (!ids.is_empty() || mp.spec.provider_id_list.is_some()).then_some(ids);
    Ok(Some(Infrastructure { provisioned, replicas }))
}

/// The Nodes of the pool's provider IDs that exist.
async fn nodes(ctx: &Context, cluster: &Cluster, mp: &MachinePool) -> Result<Vec<Arc<Node>>> {
    let ids = mp.spec.provider_id_list.clone().unwrap_or_default();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let reader = NodeReader::of(ctx, cluster).await?;
    let mut found = Vec::with_capacity(ids.len());
    for id in &ids {
        if let Some(n) = reader.find(id).await? {
            found.push(n);
        }
    }
    Ok(found)
}

/// Annotates the pool's Nodes as upstream does (cluster name and namespace, owner kind and
/// name) and drops their uninitialized taint: what a Machine's Node gets from its Machine.
/// False when a Node changed since it was read (the patch conflicted): look again soon.
async fn label_nodes(ctx: &Context, cluster: &Cluster, mp: &MachinePool, nodes: &[Arc<Node>]) -> Result<bool> {
    let ns = mp.namespace().unwrap_or_default();
    let name = mp.name_any();
    let mut api = None;
    let mut done = true;
    for n in nodes {
        let want = node_patch::owner_annotations(&mp.spec.cluster_name, &ns, Some(("MachinePool", &name)));
        let Some(patch) = node_patch::build(n, serde_json::Map::new(), want) else { continue };
        if api.is_none() {
            api = Some(workload_nodes(ctx, cluster).await?);
        }
        if let Some(api) = &api {
            match WRITER.patch(api, &n.name_any(), &patch).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => done = false,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(done)
}

/// Deletes the bootstrap config and the infrastructure pool, waits until both are gone,
/// then removes the finalizer.
async fn delete(ctx: &Context, api: &Api<MachinePool>, mp: &Arc<MachinePool>) -> Result<Requeue> {
    let ns = mp.namespace().unwrap_or_default();
    let spec = &mp.spec.template.spec;
    let refs = [spec.bootstrap.config_ref.as_ref(), Some(&spec.infrastructure_ref)];
    let mut remaining = Vec::new();
    for r in refs.into_iter().flatten() {
        let Some((full, obj)) = read(ctx, &ns, r).await? else { continue };
        if !referenced::delete(ctx, NAME, &ns, &full, &obj).await? {
            remaining.push(format!("{} {}", r.kind, r.name));
        }
    }
    let mut want = (**mp).clone();
    let now = ctx.clock().condition_time();
    status::set_deleting(&mut want, &remaining, &now);
    if remaining.is_empty() {
        write::remove_finalizer(&mut want, MACHINE_POOL_FINALIZER);
    }
    if want != **mp {
        match WRITER.apply(api, mp, &want).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    if remaining.is_empty() {
        return Ok(Requeue::await_change());
    }
    // The infrastructure pool's kind may not be watched: look again.
    Ok(Requeue::after(NODE_RECHECK))
}
