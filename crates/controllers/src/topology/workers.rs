//! What the topology's MachineDeployments and MachinePools share: their entries in the
//! class and the topology ([`TopologyWorker`], [`ClassWorker`]), which exist and which
//! version each runs ([`decide`]), the variables their objects see ([`variables`]) and the
//! metadata of the objects made for them ([`metadata`]).

use std::collections::BTreeMap;

use drydock_api::capi::common::ObjectMeta;
use drydock_api::capi::core::v1beta2::{
    ClassNaming, ClusterClassTemplate, ClusterVariable, MachineDeployment, MachineDeploymentClass,
    MachineDeploymentTopology, MachinePool, MachinePoolClass, MachinePoolTopology, MachineSpec,
};
use serde_json::{Map, Value, json};

use super::blueprint::{CurrentWorker, WorkerClass};
use super::desired::{Common, merged, prune};
use super::upgrade::{self, ControlPlaneState, DEFER_UPGRADE_ANNOTATION, HOLD_UPGRADE_SEQUENCE_ANNOTATION};
use super::{DEPLOYMENT_NAME_LABEL, POOL_NAME_LABEL, variables};
use crate::framework::{Error, Result};

/// A `workers.machineDeployments[]` or `workers.machinePools[]` entry of a topology.
pub trait TopologyWorker {
    /// `MachineDeployment` or `MachinePool`.
    const KIND: &'static str;
    /// Its key under `builtin` and in the naming template's data.
    const BUILTIN: &'static str;
    /// The label naming the topology entry an object belongs to.
    const LABEL: &'static str;
    fn name(&self) -> &str;
    fn class(&self) -> &str;
    fn replicas(&self) -> Option<i32>;
    fn metadata(&self) -> Option<&ObjectMeta>;
    fn overrides(&self) -> &[ClusterVariable];
}

/// A `workers.machineDeployments[]` or `workers.machinePools[]` entry of a ClusterClass.
pub trait ClassWorker {
    fn class(&self) -> &str;
    fn naming(&self) -> Option<&ClassNaming>;
    fn metadata(&self) -> Option<&ObjectMeta>;
    fn bootstrap(&self) -> &ClusterClassTemplate;
    fn infrastructure(&self) -> &ClusterClassTemplate;
}

macro_rules! topology_worker {
    ($t:ty, $kind:literal, $builtin:literal, $label:expr) => {
        impl TopologyWorker for $t {
            const KIND: &'static str = $kind;
            const BUILTIN: &'static str = $builtin;
            const LABEL: &'static str = $label;
            fn name(&self) -> &str {
                &self.name
            }
            fn class(&self) -> &str {
                &self.class
            }
            fn replicas(&self) -> Option<i32> {
                self.replicas
            }
            fn metadata(&self) -> Option<&ObjectMeta> {
                self.metadata.as_ref()
            }
            fn overrides(&self) -> &[ClusterVariable] {
                self.variables.as_ref().and_then(|v| v.overrides.as_deref()).unwrap_or_default()
            }
        }
    };
}

macro_rules! class_worker {
    ($t:ty) => {
        impl ClassWorker for $t {
            fn class(&self) -> &str {
                &self.class
            }
            fn naming(&self) -> Option<&ClassNaming> {
                self.naming.as_ref()
            }
            fn metadata(&self) -> Option<&ObjectMeta> {
                self.metadata.as_ref()
            }
            fn bootstrap(&self) -> &ClusterClassTemplate {
                &self.bootstrap
            }
            fn infrastructure(&self) -> &ClusterClassTemplate {
                &self.infrastructure
            }
        }
    };
}

topology_worker!(MachineDeploymentTopology, "MachineDeployment", "machineDeployment", DEPLOYMENT_NAME_LABEL);
topology_worker!(MachinePoolTopology, "MachinePool", "machinePool", POOL_NAME_LABEL);
class_worker!(MachineDeploymentClass);
class_worker!(MachinePoolClass);

/// What is decided for one topology worker before the patches run.
pub struct Names<'a, T, C> {
    pub topology: &'a T,
    pub class: &'a WorkerClass<C>,
    pub name: String,
    pub version: String,
    pub bootstrap_name: String,
    pub infrastructure_name: String,
    /// Not created yet: it waits for the control plane.
    pub pending_create: bool,
    /// Behind the topology's version and deferred or held there.
    pub held: bool,
}

/// A worker object: a MachineDeployment or a MachinePool, both with a machine template.
pub trait WorkerObject {
    fn machine_spec(&self) -> &MachineSpec;
}

impl WorkerObject for MachineDeployment {
    fn machine_spec(&self) -> &MachineSpec {
        &self.spec.template.spec
    }
}

impl WorkerObject for MachinePool {
    fn machine_spec(&self) -> &MachineSpec {
        &self.spec.template.spec
    }
}

impl<K: WorkerObject> CurrentWorker<K> {
    /// Not at `target` yet: its machine template asks for another version, or some of its
    /// machines are not at the version it asks for.
    pub fn behind(&self, target: &str) -> bool {
        self.upgrading || self.object.machine_spec().version.as_deref() != Some(target)
    }
}

/// A worker the topology made earlier, as [`decide`] needs it.
struct Existing {
    pub name: String,
    pub version: Option<String>,
    /// Some of its machines are not at its version yet.
    pub upgrading: bool,
    pub bootstrap_name: String,
    pub infrastructure_name: String,
}

impl Existing {
    fn of<K: kube::Resource + WorkerObject>(w: &CurrentWorker<K>) -> Self {
        let spec = w.object.machine_spec();
        Self {
            name: w.object.meta().name.clone().unwrap_or_default(),
            version: spec.version.clone(),
            upgrading: w.upgrading,
            bootstrap_name: spec.bootstrap.config_ref.as_ref().map(|r| r.name.clone()).unwrap_or_default(),
            infrastructure_name: spec.infrastructure_ref.name.clone(),
        }
    }
}

/// Names and versions of the topology's entries of one kind, in topology order. New ones
/// wait for an initialized control plane at the topology's version; existing ones move
/// to the topology's version once the control plane is settled there, no more at once
/// than the upgrade concurrency, skipping deferred ones and stopping at a held one.
pub fn decide<'a, T: TopologyWorker, C: ClassWorker, K: kube::Resource + WorkerObject>(
    common: &Common<'a>,
    entries: &'a [T],
    classes: &'a BTreeMap<String, WorkerClass<C>>,
    current: &BTreeMap<String, CurrentWorker<K>>,
    cp: &ControlPlaneState,
) -> Result<Vec<Names<'a, T, C>>> {
    let target = common.topology.version.as_str();
    let limit = upgrade::concurrency(common.cluster);
    let found: Vec<Option<Existing>> = entries.iter().map(|e| current.get(e.name()).map(Existing::of)).collect();
    let at_target = |e: &Existing| e.version.as_deref().unwrap_or(target) == target;
    let mut upgrading = found.iter().flatten().filter(|e| at_target(e) && e.upgrading).count();
    let mut holding = false;
    let mut out = Vec::new();
    for (entry, now) in entries.iter().zip(found) {
        let class = classes.get(entry.class()).ok_or_else(|| {
            Error::InvalidSpec(format!(
                "{} {} of the topology uses class {}, which the ClusterClass does not define",
                T::KIND,
                entry.name(),
                entry.class()
            ))
        })?;
        let annotations = entry.metadata().and_then(|m| m.annotations.as_ref());
        let has = |a: &str| annotations.is_some_and(|m| m.contains_key(a));
        holding |= has(HOLD_UPGRADE_SEQUENCE_ANNOTATION);
        let deferred = has(DEFER_UPGRADE_ANNOTATION);
        let names = match now {
            None => Names {
                topology: entry,
                class,
                name: common.object_name(class.class.naming(), Some((T::BUILTIN, entry.name())))?,
                version: target.to_string(),
                bootstrap_name: common.new_name(Some(entry.name())),
                infrastructure_name: common.new_name(Some(entry.name())),
                pending_create: !(cp.initialized && cp.spec_version.as_deref() == Some(target)),
                held: false,
            },
            Some(e) => {
                let now = e.version.clone().unwrap_or_else(|| target.to_string());
                let held = now != target && (deferred || holding);
                let version = if now != target && !held && cp.stable_at(target) && upgrading < limit {
                    upgrading += 1;
                    target.to_string()
                } else {
                    now
                };
                Names {
                    topology: entry,
                    class,
                    name: e.name,
                    version,
                    bootstrap_name: e.bootstrap_name,
                    infrastructure_name: e.infrastructure_name,
                    pending_create: false,
                    held,
                }
            }
        };
        out.push(names);
    }
    Ok(out)
}

/// The variables a worker's objects see: the Cluster's values with the entry's overrides,
/// `builtin.cluster`, and `builtin.machineDeployment` or `builtin.machinePool`.
pub fn variables<T: TopologyWorker, C>(
    user: &Map<String, Value>,
    builtin_cluster: &Value,
    n: &Names<'_, T, C>,
) -> Map<String, Value> {
    let mut vars = variables::with_overrides(user, n.topology.overrides());
    let own = prune(json!({
        "version": n.version,
        "class": n.topology.class(),
        "name": n.name,
        "topologyName": n.topology.name(),
        "replicas": n.topology.replicas(),
        "metadata": n.topology.metadata(),
        "bootstrap": {"configRef": {"name": n.bootstrap_name}},
        "infrastructureRef": {"name": n.infrastructure_name},
    }));
    let mut builtin = Map::new();
    builtin.insert("cluster".into(), builtin_cluster.clone());
    builtin.insert(T::BUILTIN.into(), own);
    vars.insert("builtin".into(), Value::Object(builtin));
    vars
}

/// The labels and annotations of a worker and its machines: the class's with the
/// topology's over them, the topology's own labels on top, and without the annotations
/// that only steer upgrades.
pub fn metadata<T: TopologyWorker, C: ClassWorker>(
    common: &Common<'_>,
    n: &Names<'_, T, C>,
) -> (BTreeMap<String, String>, Option<BTreeMap<String, String>>) {
    let (class, topology) = (n.class.class.metadata(), n.topology.metadata());
    let mut labels = merged(class.and_then(|m| m.labels.as_ref()), topology.and_then(|m| m.labels.as_ref()));
    labels.extend(own_labels::<T>(common, n.topology.name()));
    let mut annotations =
        merged(class.and_then(|m| m.annotations.as_ref()), topology.and_then(|m| m.annotations.as_ref()));
    annotations.remove(DEFER_UPGRADE_ANNOTATION);
    annotations.remove(HOLD_UPGRADE_SEQUENCE_ANNOTATION);
    (labels, (!annotations.is_empty()).then_some(annotations))
}

/// The topology's labels on a worker's objects: cluster name, owned, and the entry's name.
pub fn own_labels<T: TopologyWorker>(common: &Common<'_>, topology_name: &str) -> BTreeMap<String, String> {
    let mut l = common.owned_labels();
    l.insert(T::LABEL.to_string(), topology_name.to_string());
    l
}

/// A worker object (`cluster.x-k8s.io/v1beta2` `kind`): its metadata, and a spec with the
/// cluster name, the replicas and a machine template (the worker's labels and
/// annotations, the version and the references to `bootstrap` and `infrastructure`);
/// `spec` and `machine` add the kind's own fields to the spec and the machine template's
/// spec. Nulls are pruned.
pub fn object<T: TopologyWorker, C: ClassWorker>(
    common: &Common<'_>,
    n: &Names<'_, T, C>,
    [bootstrap, infrastructure]: [&Value; 2],
    spec: Value,
    machine: Value,
) -> Value {
    let (labels, annotations) = metadata(common, n);
    let mut obj = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": T::KIND,
        "metadata": {
            "name": n.name,
            "namespace": common.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [common.plain_owner],
        },
        "spec": {
            "clusterName": common.name(),
            "replicas": n.topology.replicas(),
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": {
                    "clusterName": common.name(),
                    "version": n.version,
                    "bootstrap": {"configRef": reference(bootstrap, n.class.bootstrap.group())},
                    "infrastructureRef": reference(infrastructure, n.class.infrastructure.group()),
                },
            },
        },
    });
    extend(&mut obj["spec"], spec);
    extend(&mut obj["spec"]["template"]["spec"], machine);
    prune(obj)
}

/// Adds the fields of `extra` (an object) to `target` (an object).
fn extend(target: &mut Value, extra: Value) {
    if let (Value::Object(t), Value::Object(e)) = (target, extra) {
        t.extend(e);
    }
}

/// A v1beta2 reference to an object the topology made (`apiGroup`, `kind`, `name`).
pub fn reference(obj: &Value, group: &str) -> Value {
    json!({"apiGroup": group, "kind": obj["kind"], "name": obj["metadata"]["name"]})
}

/// The entries of one kind in a topology's worker list.
pub fn entries<T>(list: Option<&Vec<T>>) -> &[T] {
    list.map(Vec::as_slice).unwrap_or_default()
}
