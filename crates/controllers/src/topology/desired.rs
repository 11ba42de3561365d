//! The objects a topology wants: names, versions and variables first, then the class's
//! patches on copies of its templates, then the objects made from the patched templates.

use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::{ClassNaming, Cluster, Topology};
use drydock_api::capi::keys::{CLONED_FROM_GROUP_KIND_ANNOTATION, CLONED_FROM_NAME_ANNOTATION, CLUSTER_NAME_LABEL};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::ResourceExt;
use serde_json::{Map, Value, json};

use super::blueprint::{Blueprint, Current, Template};
use super::deployments::{self, DeploymentPlan};
use super::external::{Extensions, holder};
use super::patches::{Patchable, Target};
use super::pools::{self, PoolPlan};
use super::progress;
use super::upgrade::{self, ControlPlaneState, Progress};
use super::{OWNED_LABEL, gotemplate, variables, workers};
use crate::framework::names::{generated_name, random_suffix};
use crate::framework::write::controller_ref_of;
use crate::framework::{Error, Result};

/// Everything the topology applies in one reconcile.
pub struct Plan {
    pub infrastructure: Value,
    pub control_plane: Value,
    pub control_plane_machine: Option<Value>,
    pub control_plane_health_check: Option<Value>,
    pub deployments: Vec<DeploymentPlan>,
    pub pools: Vec<PoolPlan>,
    pub progress: Progress,
}

/// What every object made for a Cluster shares.
pub struct Common<'a> {
    pub cluster: &'a Cluster,
    pub topology: &'a Topology,
    pub namespace: String,
    /// The Cluster as controller: of the objects only the topology writes the owners of.
    pub owner: OwnerReference,
    /// The Cluster as a plain owner, as the MachineDeployment and MachineHealthCheck
    /// controllers make it (the same reference, so the two never rewrite each other's).
    pub plain_owner: OwnerReference,
}

impl<'a> Common<'a> {
    pub(super) fn of(cluster: &'a Cluster) -> Result<Self> {
        let topology = cluster.spec.topology.as_ref().ok_or_else(|| Error::InvalidSpec("no topology".into()))?;
        let plain_owner = drydock_api::capi::owner::owner_ref(cluster)
            .ok_or_else(|| Error::inconsistent(format!("Cluster {}", cluster.name_any()), "it has no uid"))?;
        Ok(Common {
            cluster,
            topology,
            namespace: cluster.namespace().unwrap_or_default(),
            owner: controller_ref_of(cluster)?,
            plain_owner,
        })
    }

    pub fn name(&self) -> String {
        self.cluster.name_any()
    }

    /// The labels every object of the topology carries.
    pub fn owned_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(CLUSTER_NAME_LABEL.to_string(), self.name()), (OWNED_LABEL.to_string(), String::new())])
    }

    /// The name of a new object of the topology: the class's `naming.template` rendered
    /// (`.cluster.name`, `.random`, and for a worker `.machineDeployment.topologyName` or
    /// `.machinePool.topologyName`), else upstream's default
    /// `<cluster>[-<topology name>]-<random>`. `part` is the worker's key and name.
    pub fn object_name(&self, naming: Option<&ClassNaming>, part: Option<(&str, &str)>) -> Result<String> {
        let Some(template) = naming.and_then(|n| n.template.as_deref()) else {
            return Ok(self.new_name(part.map(|(_, name)| name)));
        };
        let mut data = Map::new();
        data.insert("cluster".into(), json!({"name": self.name()}));
        data.insert("random".into(), json!(random_suffix()));
        if let Some((key, name)) = part {
            data.insert(key.into(), json!({"topologyName": name}));
        }
        let name = gotemplate::render("naming", template, &data)
            .map_err(|e| Error::InvalidSpec(format!("naming template {template:?}: {e}")))?;
        Ok(name.trim().to_string())
    }

    /// A new template name for a part of the topology.
    pub fn new_name(&self, part: Option<&str>) -> String {
        let base = match part {
            Some(p) => format!("{}-{p}", self.name()),
            None => self.name(),
        };
        generated_name(&base, &random_suffix())
    }
}

pub async fn plan(cluster: &Cluster, bp: &Blueprint, current: &Current, ext: &Extensions) -> Result<Plan> {
    let common = Common::of(cluster)?;
    let topology = common.topology;
    let class_vars = bp.class.variable_definitions();
    let user = variables::values(&class_vars, topology.variables.as_deref().unwrap_or_default())
        .map_err(|e| Error::InvalidSpec(e.to_string()))?;

    let infra_name = match &current.infrastructure {
        Some(o) => name_of(o),
        None => common.object_name(bp.class.spec.infrastructure.naming.as_ref(), None)?,
    };
    let cp_name = match &current.control_plane {
        Some(o) => name_of(o),
        None => common.object_name(bp.class.spec.control_plane.naming.as_ref(), None)?,
    };
    let cp_machine_name = current.control_plane_machine.as_ref().map_or_else(|| common.new_name(None), name_of);
    let cp_state = ControlPlaneState::of(current.control_plane.as_ref());
    let workers_busy = current.deployments.values().any(|d| d.upgrading) || current.pools.values().any(|p| p.upgrading);
    let cp_version = upgrade::control_plane_version(&bp.class, &topology.version, &cp_state, workers_busy);
    let (names, pool_names) = decide_workers(&common, bp, current, &cp_state)?;

    let builtin_cluster = builtin_cluster(cluster, topology);
    let mut global = user.clone();
    global.insert("builtin".into(), json!({ "cluster": builtin_cluster }));
    let cp_vars =
        control_plane_variables(&common, bp, &user, &builtin_cluster, [&cp_version, &cp_name, &cp_machine_name]);
    let (md_vars, mut md_ts) = worker_inputs(&user, &builtin_cluster, &names);
    let (mp_vars, mut mp_ts) = worker_inputs(&user, &builtin_cluster, &pool_names);

    // The patches edit copies of the templates.
    let mut infra_t = bp.infrastructure.object.clone();
    let mut cp_t = bp.control_plane.object.clone();
    let mut cp_machine_t = bp.control_plane_machine.as_ref().map(|t| t.object.clone());
    let vars = Vars { global: &global, control_plane: &cp_vars, deployments: &md_vars, pools: &mp_vars };
    let copies = Copies {
        infra: &mut infra_t,
        cp: &mut cp_t,
        cp_machine: cp_machine_t.as_mut(),
        deployments: &mut md_ts,
        pools: &mut mp_ts,
    };
    patch_templates(&common, bp, (&names, &pool_names), &cp_name, copies, &vars, ext).await?;

    let infrastructure = made_from(&common, &bp.infrastructure, &infra_t, &infra_name, None);
    let infrastructure = without_empty_endpoint(infrastructure);
    let control_plane_machine = match (&bp.control_plane_machine, &cp_machine_t) {
        (Some(t), Some(patched)) => {
            let name = keep_or_rotate(current.control_plane_machine.as_ref(), patched, cp_machine_name, || {
                common.new_name(None)
            });
            Some(cloned(&common, t, patched, &name, BTreeMap::new()))
        }
        _ => None,
    };
    let control_plane = control_plane(&common, bp, &cp_t, &cp_name, &cp_version, control_plane_machine.as_ref());
    let control_plane_health_check =
        control_plane_machine.as_ref().and_then(|_| deployments::control_plane_health_check(&common, bp, &cp_name));
    let mut deployments = Vec::new();
    for (n, (b, i)) in names.iter().zip(md_ts) {
        deployments.push(deployments::deployment(&common, n, current, &b, &i));
    }
    let pools: Vec<PoolPlan> =
        pool_names.iter().zip(mp_ts).map(|(n, (b, i))| pools::pool(&common, n, &b, &i)).collect();
    let progress = progress::of_plan(&bp.class, topology, (&cp_state, &cp_version), (&names, &pool_names), current);
    Ok(Plan {
        infrastructure,
        control_plane,
        control_plane_machine,
        control_plane_health_check,
        deployments,
        pools,
        progress,
    })
}

/// The variables each template sees.
struct Vars<'v> {
    global: &'v Map<String, Value>,
    control_plane: &'v Map<String, Value>,
    deployments: &'v [Map<String, Value>],
    pools: &'v [Map<String, Value>],
}

/// The copies of the class's templates the patches edit.
struct Copies<'c> {
    infra: &'c mut Value,
    cp: &'c mut Value,
    cp_machine: Option<&'c mut Value>,
    deployments: &'c mut [TemplatePair],
    pools: &'c mut [TemplatePair],
}

/// Runs the class's patches (inline and external) on the copies, then its ValidateTopology
/// handlers; each template is told the object that will hold it.
async fn patch_templates(
    common: &Common<'_>,
    bp: &Blueprint,
    (names, pool_names): (&[deployments::Names<'_>], &[pools::Names<'_>]),
    cp_name: &str,
    copies: Copies<'_>,
    vars: &Vars<'_>,
    ext: &Extensions,
) -> Result<()> {
    let core = |kind: &str, name: &str, field: &str| holder(common, CORE_API_VERSION, kind, name, field);
    let cluster = common.name();
    let mut items = vec![
        patchable(
            Target::InfrastructureCluster,
            copies.infra,
            vars.global,
            core("Cluster", &cluster, "spec.infrastructureRef"),
        ),
        patchable(
            Target::ControlPlane,
            copies.cp,
            vars.control_plane,
            core("Cluster", &cluster, "spec.controlPlaneRef"),
        ),
    ];
    if let Some(t) = copies.cp_machine {
        let cp = &bp.control_plane;
        let v1beta1 = cp.reference.api_version.ends_with("/v1beta1");
        let field = if v1beta1 {
            "spec.machineTemplate.infrastructureRef"
        } else {
            "spec.machineTemplate.spec.infrastructureRef"
        };
        let h = holder(common, &cp.reference.api_version, cp.object_kind(), cp_name, field);
        items.push(patchable(Target::ControlPlane, t, vars.control_plane, h));
    }
    for ((n, (b, i)), v) in names.iter().zip(copies.deployments.iter_mut()).zip(vars.deployments) {
        let target = || Target::MachineDeployment { class: n.topology.class.as_str() };
        items.push(patchable(target(), b, v, core("MachineDeployment", &n.name, BOOTSTRAP_FIELD)));
        items.push(patchable(target(), i, v, core("MachineDeployment", &n.name, INFRASTRUCTURE_FIELD)));
    }
    for ((n, (b, i)), v) in pool_names.iter().zip(copies.pools.iter_mut()).zip(vars.pools) {
        let target = || Target::MachinePool { class: n.topology.class.as_str() };
        items.push(patchable(target(), b, v, core("MachinePool", &n.name, BOOTSTRAP_FIELD)));
        items.push(patchable(target(), i, v, core("MachinePool", &n.name, INFRASTRUCTURE_FIELD)));
    }
    let class_patches = bp.class.spec.patches.as_deref().unwrap_or_default();
    super::external::apply(class_patches, vars.global, &mut items, ext).await?;
    super::external::validate(class_patches, vars.global, &items, ext).await?;
    Ok(())
}

/// The apiVersion of the core objects that hold templates (Cluster, MachineDeployment,
/// MachinePool), as the holder references of extension requests name them.
const CORE_API_VERSION: &str = "cluster.x-k8s.io/v1beta2";
const BOOTSTRAP_FIELD: &str = "spec.template.spec.bootstrap.configRef";
const INFRASTRUCTURE_FIELD: &str = "spec.template.spec.infrastructureRef";

fn patchable<'a>(
    target: Target<'a>,
    object: &'a mut Value,
    variables: &'a Map<String, Value>,
    holder: crate::runtime_sdk::wire::HolderReference,
) -> Patchable<'a> {
    Patchable { target, object, variables, holder }
}

/// The variables the control plane's templates see: the Cluster's with the control
/// plane's overrides, `builtin.cluster` and `builtin.controlPlane` (with this reconcile's
/// version, name and machine template name).
fn control_plane_variables(
    common: &Common<'_>,
    bp: &Blueprint,
    user: &Map<String, Value>,
    builtin_cluster: &Value,
    [version, name, machine_name]: [&str; 3],
) -> Map<String, Value> {
    let cp_topology = common.topology.control_plane.as_ref();
    let cp_overrides = cp_topology.and_then(|c| c.variables.as_ref()).and_then(|v| v.overrides.as_deref());
    let mut vars = variables::with_overrides(user, cp_overrides.unwrap_or_default());
    vars.insert(
        "builtin".into(),
        json!({"cluster": builtin_cluster, "controlPlane": prune(json!({
            "version": version,
            "name": name,
            "replicas": cp_topology.and_then(|c| c.replicas),
            "metadata": cp_topology.and_then(|c| c.metadata.as_ref()),
            "machineTemplate": bp.control_plane_machine.as_ref().map(|_| json!({"infrastructureRef": {"name": machine_name}})),
        }))}),
    );
    vars
}

/// A worker's bootstrap and infrastructure templates, as JSON.
type TemplatePair = (Value, Value);

/// The variables each worker's templates see, and copies of its (bootstrap,
/// infrastructure) templates for the patches to edit.
fn worker_inputs<T: workers::TopologyWorker, C>(
    user: &Map<String, Value>,
    builtin_cluster: &Value,
    names: &[workers::Names<'_, T, C>],
) -> (Vec<Map<String, Value>>, Vec<TemplatePair>) {
    let vars = names.iter().map(|n| workers::variables(user, builtin_cluster, n)).collect();
    let templates =
        names.iter().map(|n| (n.class.bootstrap.object.clone(), n.class.infrastructure.object.clone())).collect();
    (vars, templates)
}

/// Names and versions of the topology's MachineDeployments and MachinePools (each kind
/// decided on its own, as upstream's).
fn decide_workers<'a>(
    common: &Common<'a>,
    bp: &'a Blueprint,
    current: &Current,
    cp: &ControlPlaneState,
) -> Result<(Vec<deployments::Names<'a>>, Vec<pools::Names<'a>>)> {
    let entries = common.topology.workers.as_ref();
    let mds = workers::entries(entries.and_then(|w| w.machine_deployments.as_ref()));
    let mps = workers::entries(entries.and_then(|w| w.machine_pools.as_ref()));
    Ok((
        workers::decide(common, mds, &bp.deployments, &current.deployments, cp)?,
        workers::decide(common, mps, &bp.pools, &current.pools, cp)?,
    ))
}

fn name_of(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// `builtin.cluster`.
fn builtin_cluster(cluster: &Cluster, t: &Topology) -> Value {
    let meta = &cluster.metadata;
    let network = cluster.spec.cluster_network.as_ref();
    let blocks = |r: Option<&drydock_api::capi::core::v1beta2::NetworkRanges>| r.map(|r| json!(r.cidr_blocks));
    prune(json!({
        "name": meta.name,
        "namespace": meta.namespace,
        "uid": meta.uid,
        "metadata": {"labels": meta.labels, "annotations": meta.annotations},
        "topology": {
            "version": t.version,
            "classRef": {"name": t.class_ref.name, "namespace": t.class_ref.namespace.clone().or_else(|| meta.namespace.clone())},
            "class": t.class_ref.name,
            "classNamespace": t.class_ref.namespace.clone().or_else(|| meta.namespace.clone()),
        },
        "network": network.map(|n| json!({
            "serviceDomain": n.service_domain,
            "services": blocks(n.services.as_ref()),
            "pods": blocks(n.pods.as_ref()),
        })),
    }))
}

/// An object made from a template of the class (`Foo` from `FooTemplate`): its
/// `spec.template` with the topology's labels, owned by the Cluster.
pub fn made_from(
    common: &Common<'_>,
    t: &Template,
    patched: &Value,
    name: &str,
    labels: Option<BTreeMap<String, String>>,
) -> Value {
    let inner = &patched["spec"]["template"];
    let mut all: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["labels"].clone()).unwrap_or_default();
    all.extend(labels.unwrap_or_default());
    all.extend(common.owned_labels());
    let annotations: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["annotations"].clone()).unwrap_or_default();
    prune(json!({
        "apiVersion": t.reference.api_version,
        "kind": t.object_kind(),
        "metadata": {
            "name": name,
            "namespace": common.namespace,
            "labels": all,
            "annotations": (!annotations.is_empty()).then_some(annotations),
            "ownerReferences": [common.owner],
        },
        "spec": inner.get("spec").cloned().unwrap_or_else(|| json!({})),
    }))
}

/// The annotations naming the class template an object was cloned from.
pub fn cloned_from(t: &Template) -> BTreeMap<String, String> {
    BTreeMap::from([
        (CLONED_FROM_NAME_ANNOTATION.to_string(), t.reference.name.clone()),
        (CLONED_FROM_GROUP_KIND_ANNOTATION.to_string(), format!("{}.{}", t.reference.kind, t.group())),
    ])
}

/// A per-Cluster copy of a class template.
pub fn cloned(
    common: &Common<'_>,
    t: &Template,
    patched: &Value,
    name: &str,
    labels: BTreeMap<String, String>,
) -> Value {
    let mut all = labels;
    all.extend(common.owned_labels());
    json!({
        "apiVersion": t.reference.api_version,
        "kind": t.reference.kind,
        "metadata": {
            "name": name,
            "namespace": common.namespace,
            "labels": all,
            "annotations": cloned_from(t),
            "ownerReferences": [common.owner],
        },
        "spec": patched.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// The current template's name while its spec still holds everything the patched class
/// template says; a new name (a new template, rolling the Machines) once it does not.
pub fn keep_or_rotate(current: Option<&Value>, patched: &Value, name: String, new: impl FnOnce() -> String) -> String {
    match current {
        Some(c) if !contains(&c["spec"], &patched["spec"]) => new(),
        _ => name,
    }
}

/// Whether `have` holds every value `want` sets (servers add defaults, so `have` may hold more).
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (_, Value::Null) => true,
        (Value::Object(h), Value::Object(w)) => w.iter().all(|(k, wv)| match h.get(k) {
            Some(hv) => contains(hv, wv),
            None => wv.is_null(),
        }),
        (Value::Array(h), Value::Array(w)) => h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b)),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (h, w) => h == w,
    }
}

fn control_plane(
    common: &Common<'_>,
    bp: &Blueprint,
    patched: &Value,
    name: &str,
    version: &str,
    machine: Option<&Value>,
) -> Value {
    let class = &bp.class.spec.control_plane;
    let topology = common.topology.control_plane.as_ref();
    let mut labels = merged(
        class.metadata.as_ref().and_then(|m| m.labels.as_ref()),
        topology.and_then(|t| t.metadata.as_ref()).and_then(|m| m.labels.as_ref()),
    );
    let annotations = merged(
        class.metadata.as_ref().and_then(|m| m.annotations.as_ref()),
        topology.and_then(|t| t.metadata.as_ref()).and_then(|m| m.annotations.as_ref()),
    );
    let mut obj = made_from(common, &bp.control_plane, patched, name, Some(labels.clone()));
    labels.extend(common.owned_labels());
    let spec = &mut obj["spec"];
    spec["version"] = json!(version);
    if let Some(r) = topology.and_then(|t| t.replicas) {
        spec["replicas"] = json!(r);
    }
    let v1beta1 = bp.control_plane.reference.api_version.ends_with("/v1beta1");
    let template_meta =
        prune(json!({"labels": labels, "annotations": (!annotations.is_empty()).then_some(&annotations)}));
    let after = topology.and_then(|t| t.rollout.as_ref()).and_then(|r| r.after.clone());
    if v1beta1 {
        spec["machineTemplate"]["metadata"] = template_meta;
        if let (Some(m), Some(t)) = (machine, &bp.control_plane_machine) {
            spec["machineTemplate"]["infrastructureRef"] = json!({
                "apiVersion": t.reference.api_version, "kind": t.reference.kind,
                "name": m["metadata"]["name"], "namespace": common.namespace,
            });
        }
        if let Some(a) = after {
            spec["rolloutAfter"] = json!(a);
        }
    } else {
        spec["machineTemplate"]["metadata"] = template_meta;
        if let (Some(m), Some(t)) = (machine, &bp.control_plane_machine) {
            spec["machineTemplate"]["spec"]["infrastructureRef"] =
                json!({"apiGroup": t.group(), "kind": t.reference.kind, "name": m["metadata"]["name"]});
        }
        let extra = prune(json!({
            "readinessGates": topology.and_then(|t| t.readiness_gates.as_ref()).or(class.readiness_gates.as_ref()),
            "deletion": topology.and_then(|t| t.deletion.as_ref()).or(class.deletion.as_ref()),
            "taints": topology.and_then(|t| t.taints.as_ref()).or(class.taints.as_ref()),
        }));
        if let Value::Object(m) = extra {
            for (k, v) in m {
                spec["machineTemplate"]["spec"][k] = v;
            }
        }
        if let Some(a) = after {
            spec["rollout"]["after"] = json!(a);
        }
    }
    obj
}

/// Labels or annotations of the class with the topology's over them.
pub fn merged(
    class: Option<&BTreeMap<String, String>>,
    topology: Option<&BTreeMap<String, String>>,
) -> BTreeMap<String, String> {
    let mut out = class.cloned().unwrap_or_default();
    out.extend(topology.cloned().unwrap_or_default());
    out
}

/// An empty `spec.controlPlaneEndpoint` host or port is left to the provider.
fn without_empty_endpoint(mut obj: Value) -> Value {
    if let Some(ep) = obj["spec"].get_mut("controlPlaneEndpoint").and_then(Value::as_object_mut) {
        if ep.get("host").is_some_and(|h| h.as_str() == Some("")) {
            ep.remove("host");
        }
        if ep.get("port").is_some_and(|p| p.as_i64() == Some(0)) {
            ep.remove("port");
        }
        if ep.is_empty()
            && let Some(spec) = obj["spec"].as_object_mut()
        {
            spec.remove("controlPlaneEndpoint");
        }
    }
    obj
}

/// Removes nulls, and the objects that held only nulls (an object empty from the start,
/// such as a template's `inMemory: {}`, stays).
pub fn prune(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .filter_map(|(k, v)| {
                    let was_empty = v.as_object().is_some_and(Map::is_empty);
                    let v = prune(v);
                    (was_empty || !v.as_object().is_some_and(Map::is_empty)).then_some((k, v))
                })
                .collect(),
        ),
        other => other,
    }
}
