//! What a topology is planned from: the ClusterClass with its templates, read in the
//! versions the class names them in ([`Blueprint`]), and the objects the topology made
//! earlier ([`Current`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::common::VersionedTemplateReference;
use drydock_api::capi::core::v1beta2::{
    Cluster, ClusterClass, Machine, MachineDeployment, MachineDeploymentClass, MachinePool, MachinePoolClass,
    MachineSpec,
};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL as SET_DEPLOYMENT_LABEL};
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;

use super::OWNED_LABEL;
use super::workers::{ClassWorker, TopologyWorker, entries};
use crate::context::Context;
use crate::external::api_resource;
use crate::framework::{Error, Result};

/// A template of the class, as JSON in the version the class references it in.
#[derive(Clone, Debug)]
pub struct Template {
    pub reference: VersionedTemplateReference,
    pub object: Value,
}

impl Template {
    /// The kind of the objects made from it (`FooTemplate` makes `Foo`).
    pub fn object_kind(&self) -> &str {
        let kind = self.reference.kind.as_str();
        kind.strip_suffix("Template").unwrap_or(kind)
    }

    /// The API group of its kind.
    pub fn group(&self) -> &str {
        self.reference.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }
}

/// One worker class (of MachineDeployments or MachinePools) and its templates.
#[derive(Clone, Debug)]
pub struct WorkerClass<C> {
    pub class: C,
    pub bootstrap: Template,
    pub infrastructure: Template,
}

pub type DeploymentClass = WorkerClass<MachineDeploymentClass>;
pub type PoolClass = WorkerClass<MachinePoolClass>;

/// The class and every template the Cluster's topology uses.
pub struct Blueprint {
    pub class: ClusterClass,
    pub infrastructure: Template,
    pub control_plane: Template,
    pub control_plane_machine: Option<Template>,
    pub deployments: BTreeMap<String, DeploymentClass>,
    pub pools: BTreeMap<String, PoolClass>,
}

impl Blueprint {
    /// Reads the templates of `class` that `cluster`'s topology uses.
    pub async fn load(
        client: &kube::Client,
        class: &ClusterClass,
        cluster: &Cluster,
        overlay: &[Value],
    ) -> Result<Self> {
        let ns = class.namespace().unwrap_or_default();
        let spec = &class.spec;
        let infrastructure = template(client, &ns, overlay, &spec.infrastructure.template_ref).await?;
        let control_plane = template(client, &ns, overlay, &spec.control_plane.template_ref).await?;
        let control_plane_machine = match &spec.control_plane.machine_infrastructure {
            Some(m) => Some(template(client, &ns, overlay, &m.template_ref).await?),
            None => None,
        };
        let topology = cluster.spec.topology.as_ref().and_then(|t| t.workers.as_ref());
        let class_workers = spec.workers.as_ref();
        let at = (client, ns.as_str(), overlay);
        let deployments = worker_classes(
            at,
            entries(class_workers.and_then(|w| w.machine_deployments.as_ref())),
            entries(topology.and_then(|w| w.machine_deployments.as_ref())),
        )
        .await?;
        let pools = worker_classes(
            at,
            entries(class_workers.and_then(|w| w.machine_pools.as_ref())),
            entries(topology.and_then(|w| w.machine_pools.as_ref())),
        )
        .await?;
        Ok(Self { class: class.clone(), infrastructure, control_plane, control_plane_machine, deployments, pools })
    }
}

/// The worker classes of one kind that the topology's entries use, with their templates.
async fn worker_classes<C: ClassWorker + Clone, T: TopologyWorker>(
    (client, ns, overlay): (&kube::Client, &str, &[Value]),
    classes: &[C],
    used_by: &[T],
) -> Result<BTreeMap<String, WorkerClass<C>>> {
    let mut out = BTreeMap::new();
    for c in classes.iter().filter(|c| used_by.iter().any(|t| t.class() == c.class())) {
        let bootstrap = template(client, ns, overlay, &c.bootstrap().template_ref).await?;
        let infrastructure = template(client, ns, overlay, &c.infrastructure().template_ref).await?;
        out.insert(c.class().to_string(), WorkerClass { class: c.clone(), bootstrap, infrastructure });
    }
    Ok(out)
}

/// A template of the class: from `overlay` (templates given beside a class not applied
/// yet) when it holds one of that kind and name, else read from the server.
async fn template(
    client: &kube::Client,
    ns: &str,
    overlay: &[Value],
    r: &VersionedTemplateReference,
) -> Result<Template> {
    let given = overlay.iter().find(|o| {
        o["apiVersion"] == r.api_version.as_str()
            && o["kind"] == r.kind.as_str()
            && o["metadata"]["name"] == r.name.as_str()
    });
    let object = match given {
        Some(o) => o.clone(),
        None => get(client, ns, &r.api_version, &r.kind, &r.name)
            .await?
            .ok_or_else(|| Error::Missing(format!("{} {ns}/{} of the ClusterClass", r.kind, r.name)))?,
    };
    Ok(Template { reference: r.clone(), object })
}

/// The objects a topology made earlier.
#[derive(Default)]
pub struct Current {
    pub infrastructure: Option<Value>,
    pub control_plane: Option<Value>,
    pub control_plane_machine: Option<Value>,
    /// By topology name.
    pub deployments: BTreeMap<String, CurrentDeployment>,
    /// By topology name.
    pub pools: BTreeMap<String, CurrentPool>,
}

/// A worker of the topology (MachineDeployment or MachinePool) and the bootstrap and
/// infrastructure objects (templates or, for a pool, its config and machine pool) it
/// references.
pub struct CurrentWorker<K> {
    pub object: Arc<K>,
    /// Some of its machines are not at its version yet.
    pub upgrading: bool,
    pub bootstrap: Option<Value>,
    pub infrastructure: Option<Value>,
}

pub type CurrentDeployment = CurrentWorker<MachineDeployment>;
pub type CurrentPool = CurrentWorker<MachinePool>;

impl Current {
    pub async fn load(client: &kube::Client, cluster: &Cluster, bp: &Blueprint, listed: &Listed) -> Result<Self> {
        let ns = cluster.namespace().unwrap_or_default();
        let name = cluster.name_any();
        let infrastructure = match &cluster.spec.infrastructure_ref {
            Some(r) => get(client, &ns, &bp.infrastructure.reference.api_version, &r.kind, &r.name).await?,
            None => made_earlier(client, &ns, &name, &bp.infrastructure).await?,
        };
        let control_plane = match &cluster.spec.control_plane_ref {
            Some(r) => get(client, &ns, &bp.control_plane.reference.api_version, &r.kind, &r.name).await?,
            None => made_earlier(client, &ns, &name, &bp.control_plane).await?,
        };
        let mut control_plane_machine = None;
        if let (Some(cp), Some(t)) = (&control_plane, &bp.control_plane_machine)
            && let Some(n) = control_plane_machine_name(cp)
        {
            control_plane_machine = get(client, &ns, &t.reference.api_version, &t.reference.kind, n).await?;
        }
        let workers = cluster.spec.topology.as_ref().and_then(|t| t.workers.as_ref());
        let mds = entries(workers.and_then(|w| w.machine_deployments.as_ref()));
        let mut deployments = BTreeMap::new();
        for md in listed.deployments.iter().cloned() {
            let upgrading = machines_behind(&listed.machines, &md);
            let spec = md.spec.template.spec.clone();
            if let Some((topology_name, w)) = worker(client, &ns, md, &spec, mds, &bp.deployments, upgrading).await? {
                deployments.insert(topology_name, w);
            }
        }
        let mps = entries(workers.and_then(|w| w.machine_pools.as_ref()));
        let mut pools = BTreeMap::new();
        for mp in listed.pools.iter().cloned() {
            let upgrading = pool_behind(&mp);
            let spec = mp.spec.template.spec.clone();
            if let Some((topology_name, w)) = worker(client, &ns, mp, &spec, mps, &bp.pools, upgrading).await? {
                pools.insert(topology_name, w);
            }
        }
        Ok(Self { infrastructure, control_plane, control_plane_machine, deployments, pools })
    }
}

/// A worker object the topology made (labelled with its topology name), with the objects
/// it references when they are of its class's groups.
async fn worker<K: kube::Resource, T: TopologyWorker, C>(
    client: &kube::Client,
    ns: &str,
    object: Arc<K>,
    spec: &MachineSpec,
    topology: &[T],
    classes: &BTreeMap<String, WorkerClass<C>>,
    upgrading: bool,
) -> Result<Option<(String, CurrentWorker<K>)>> {
    let labels = object.meta().labels.clone().unwrap_or_default();
    if !labels.contains_key(OWNED_LABEL) {
        return Ok(None);
    }
    let Some(topology_name) = labels.get(T::LABEL).cloned() else {
        return Ok(None);
    };
    let class = topology.iter().find(|t| t.name() == topology_name).and_then(|t| classes.get(t.class()));
    let (mut bootstrap, mut infrastructure) = (None, None);
    if let Some(class) = class {
        if let Some(r) = spec.bootstrap.config_ref.as_ref().filter(|r| r.api_group == class.bootstrap.group()) {
            bootstrap = get(client, ns, &class.bootstrap.reference.api_version, &r.kind, &r.name).await?;
        }
        let r = &spec.infrastructure_ref;
        if r.api_group == class.infrastructure.group() {
            infrastructure = get(client, ns, &class.infrastructure.reference.api_version, &r.kind, &r.name).await?;
        }
    }
    Ok(Some((topology_name, CurrentWorker { object, upgrading, bootstrap, infrastructure })))
}

/// Whether a Machine of the MachineDeployment runs another version than it asks for.
fn machines_behind(machines: &[Arc<Machine>], md: &MachineDeployment) -> bool {
    let (name, version) = (md.name_any(), md.spec.template.spec.version.as_deref());
    machines.iter().any(|m| m.labels().get(SET_DEPLOYMENT_LABEL) == Some(&name) && m.spec.version.as_deref() != version)
}

/// Whether some of a MachinePool's machines run another version than it asks for.
fn pool_behind(mp: &MachinePool) -> bool {
    let version = mp.spec.template.spec.version.as_deref();
    let versions = mp.status.as_ref().and_then(|s| s.versions.as_ref());
    versions.into_iter().flatten().any(|v| Some(v.version.as_str()) != version)
}

/// The Cluster's MachineDeployments and Machines: from the controllers' informers, or
/// listed from the server by a command.
#[derive(Default)]
pub struct Listed {
    pub deployments: Vec<Arc<MachineDeployment>>,
    pub machines: Vec<Arc<Machine>>,
    pub pools: Vec<Arc<MachinePool>>,
}

impl Listed {
    pub fn from_stores(ctx: &Context, cluster: &Cluster) -> Self {
        let of_cluster = |meta: &kube::api::ObjectMeta| {
            meta.namespace == cluster.metadata.namespace
                && meta.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)) == cluster.metadata.name.as_ref()
        };
        Self {
            deployments: ctx
                .informers
                .machine_deployments
                .store
                .state()
                .into_iter()
                .filter(|d| of_cluster(&d.metadata))
                .collect(),
            machines: ctx.informers.machines.store.state().into_iter().filter(|m| of_cluster(&m.metadata)).collect(),
            pools: ctx.informers.machine_pools.store.state().into_iter().filter(|p| of_cluster(&p.metadata)).collect(),
        }
    }

    pub async fn fetch(client: &kube::Client, cluster: &Cluster) -> Result<Self> {
        let ns = cluster.namespace().unwrap_or_default();
        let lp = ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={}", cluster.name_any()));
        let deployments = Api::<MachineDeployment>::namespaced(client.clone(), &ns).list(&lp).await?;
        let machines = Api::<Machine>::namespaced(client.clone(), &ns).list(&lp).await?;
        let pools = Api::<MachinePool>::namespaced(client.clone(), &ns).list(&lp).await?;
        Ok(Self {
            deployments: deployments.items.into_iter().map(Arc::new).collect(),
            machines: machines.items.into_iter().map(Arc::new).collect(),
            pools: pools.items.into_iter().map(Arc::new).collect(),
        })
    }
}

/// The name of the machine infrastructure template a control plane references, in either
/// contract's place for it.
pub fn control_plane_machine_name(cp: &Value) -> Option<&str> {
    let t = &cp["spec"]["machineTemplate"];
    t["spec"]["infrastructureRef"]["name"].as_str().or_else(|| t["infrastructureRef"]["name"].as_str())
}

/// An object made from `t` for the Cluster before the Cluster's reference to it was
/// written (a reconcile that failed in between): found by the topology's labels.
async fn made_earlier(client: &kube::Client, ns: &str, cluster: &str, t: &Template) -> Result<Option<Value>> {
    let selector = format!("{CLUSTER_NAME_LABEL}={cluster},{OWNED_LABEL}");
    let found = list(client, ns, &t.reference.api_version, t.object_kind(), &selector).await?;
    Ok(match found.len() {
        1 => found.into_iter().next(),
        _ => None,
    })
}

pub fn api(client: &kube::Client, ns: &str, api_version: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &api_resource(api_version, kind))
}

/// Reads an object as JSON; `None` when it does not exist.
pub async fn get(client: &kube::Client, ns: &str, api_version: &str, kind: &str, name: &str) -> Result<Option<Value>> {
    let found = api(client, ns, api_version, kind)
        .get_opt(name)
        .await
        .map_err(Error::during(format!("reading {kind} {ns}/{name}")))?;
    Ok(found.map(serde_json::to_value).transpose()?)
}

/// Lists objects of a kind by label selector, as JSON.
pub async fn list(
    client: &kube::Client,
    ns: &str,
    api_version: &str,
    kind: &str,
    selector: &str,
) -> Result<Vec<Value>> {
    let listed = api(client, ns, api_version, kind)
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(Error::during(format!("listing {kind} in {ns}")))?;
    listed.items.into_iter().map(|o| serde_json::to_value(o).map_err(Error::from)).collect()
}

/// The API handle for objects like `obj` (by its apiVersion and kind).
pub fn api_of(client: &kube::Client, obj: &Value) -> Api<DynamicObject> {
    let ns = obj["metadata"]["namespace"].as_str().unwrap_or_default();
    api(client, ns, obj["apiVersion"].as_str().unwrap_or_default(), obj["kind"].as_str().unwrap_or_default())
}
