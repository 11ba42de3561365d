//! Objects a Cluster or Machine references by kind (infrastructure, bootstrap and control
//! plane objects), read through the Cluster API contracts.
//!
//! Both provider contracts are understood. v1beta1: `status.ready`, `status.initialized`,
//! failure domains as a map, conditions with severity in `status.conditions`. v1beta2:
//! `status.initialization.provisioned` (infrastructure), `.dataSecretCreated` (bootstrap),
//! `.controlPlaneInitialized` (control plane), failure domains as a list of
//! `{name, controlPlane, attributes}`, and the v1beta1 conditions, when the provider still
//! reports them, under `status.deprecated.v1beta1.conditions`. An object is read in the
//! shape it has: a v1beta2 field, when present, wins over its v1beta1 counterpart.
//!
//! Kinds drydock serves with a shared informer are read from its store (no API call, and
//! their changes trigger the referrer); any other kind is read with a GET and its readiness
//! rechecked on a timer, since no watch reports its changes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::common::{APIEndpoint, ContractVersionedObjectReference, V1Beta2Conditions};
use drydock_api::capi::conditions::{Condition, HasConditions};
use drydock_api::capi::core::FailureDomainSpec;
use drydock_api::capi::core::v1beta2::{FailureDomain, MachineAddress};

use drydock_api::capi::dev::v1beta2::{DevCluster, DevMachine};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_api::capi::kubeadm::v1beta2::{KubeadmConfig, KubeadmControlPlane};
use drydock_api::capi::owner::api_group;
use drydock_api::capi::v1beta2_conditions::{Condition as MetaCondition, HasV1Beta2Conditions};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Context;
use crate::external;
use crate::framework::write::merge_patch;
use crate::framework::{Result, metrics};

const INFRASTRUCTURE_GROUP: &str = "infrastructure.cluster.x-k8s.io";
const BOOTSTRAP_GROUP: &str = "bootstrap.cluster.x-k8s.io";
const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";

/// A referenced object as read.
#[derive(Clone, Debug)]
pub(crate) enum Referenced {
    InMemoryMachine(Arc<InMemoryMachine>),
    InMemoryCluster(Arc<InMemoryCluster>),
    DevMachine(Arc<DevMachine>),
    DevCluster(Arc<DevCluster>),
    KubeadmConfig(Arc<KubeadmConfig>),
    KubeadmControlPlane(Arc<KubeadmControlPlane>),
    Dynamic(Box<DynamicObject>),
}

/// Which shared store, if any, holds objects of the reference's kind (whatever version the
/// reference names: a store holds every version's objects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    InMemoryMachine,
    InMemoryCluster,
    DevMachine,
    DevCluster,
    /// Docker kinds: watched, read as dynamic objects (they are never on a hot path).
    DockerMachine,
    DockerCluster,
    KubeadmConfig,
    KubeadmControlPlane,
    /// Not watched: read with a GET.
    Api,
}

impl Source {
    pub fn of(r: &ObjectReference) -> Self {
        Self::of_kind(api_group(r.api_version.as_deref().unwrap_or_default()), r.kind.as_deref().unwrap_or_default())
    }

    /// The source of a v1beta2 reference (group and kind, no version).
    pub fn of_versioned(r: &ContractVersionedObjectReference) -> Self {
        Self::of_kind(&r.api_group, &r.kind)
    }

    fn of_kind(group: &str, kind: &str) -> Self {
        match (group, kind) {
            (INFRASTRUCTURE_GROUP, "InMemoryMachine") => Self::InMemoryMachine,
            (INFRASTRUCTURE_GROUP, "InMemoryCluster") => Self::InMemoryCluster,
            (INFRASTRUCTURE_GROUP, "DevMachine") => Self::DevMachine,
            (INFRASTRUCTURE_GROUP, "DevCluster") => Self::DevCluster,
            (INFRASTRUCTURE_GROUP, "DockerMachine") => Self::DockerMachine,
            (INFRASTRUCTURE_GROUP, "DockerCluster") => Self::DockerCluster,
            (BOOTSTRAP_GROUP, "KubeadmConfig") => Self::KubeadmConfig,
            (CONTROL_PLANE_GROUP, "KubeadmControlPlane") => Self::KubeadmControlPlane,
            _ => Self::Api,
        }
    }

    /// Changes of objects from this source trigger their referrers.
    pub fn is_watched(self) -> bool {
        self != Self::Api
    }
}

fn from_store<K>(store: &kube::runtime::reflector::Store<K>, ns: &str, name: &str) -> Option<Arc<K>>
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    store.get(&ObjectRef::new(name).within(ns))
}

/// The cached copy of the object `r` points at: `None` when no shared store holds its kind,
/// `Some(None)` when the store does not hold it (not created yet, deleted, or not loaded:
/// its arrival triggers the referrer).
pub(crate) fn cached(ctx: &Context, namespace: &str, r: &ObjectReference) -> Option<Option<Referenced>> {
    from_source(ctx, Source::of(r), namespace, r.name.as_deref().unwrap_or_default())
}

fn from_source(ctx: &Context, source: Source, namespace: &str, name: &str) -> Option<Option<Referenced>> {
    let i = &ctx.informers;
    Some(match source {
        Source::InMemoryMachine => {
            from_store(&i.inmemory_machines.store, namespace, name).map(Referenced::InMemoryMachine)
        }
        Source::InMemoryCluster => {
            from_store(&i.inmemory_clusters.store, namespace, name).map(Referenced::InMemoryCluster)
        }
        Source::DevMachine => from_store(&i.dev_machines.store, namespace, name).map(Referenced::DevMachine),
        Source::DevCluster => from_store(&i.dev_clusters.store, namespace, name).map(Referenced::DevCluster),
        Source::DockerMachine => from_store(&i.docker_machines.store, namespace, name).and_then(|o| as_dynamic(&*o)),
        Source::DockerCluster => from_store(&i.docker_clusters.store, namespace, name).and_then(|o| as_dynamic(&*o)),
        Source::KubeadmConfig => from_store(&i.kubeadm_configs.store, namespace, name).map(Referenced::KubeadmConfig),
        Source::KubeadmControlPlane => {
            from_store(&i.control_planes.store, namespace, name).map(Referenced::KubeadmControlPlane)
        }
        Source::Api => return None,
    })
}

/// [`cached`] for a v1beta2 reference (group only: a cache holds one version of its kind).
pub(crate) fn cached_versioned(
    ctx: &Context,
    namespace: &str,
    r: &ContractVersionedObjectReference,
) -> Option<Option<Referenced>> {
    from_source(ctx, Source::of_versioned(r), namespace, &r.name)
}

/// Reads the object a v1beta2 reference (group only) points at in `namespace`, in the
/// version its CRD names for the contract; `None` when it does not exist, nor its CRD.
pub(crate) async fn read_versioned(
    ctx: &Context,
    namespace: &str,
    r: &ContractVersionedObjectReference,
) -> Result<Option<Referenced>> {
    match resolve(ctx, namespace, r).await? {
        Some(r) => read(ctx, namespace, &r).await,
        None => Ok(None),
    }
}

/// A v1beta2 reference (group only) as a full reference to an object in `namespace`, in
/// the version its CRD names for the contract; `None` when that CRD does not exist.
pub(crate) async fn resolve(
    ctx: &Context,
    namespace: &str,
    r: &ContractVersionedObjectReference,
) -> Result<Option<ObjectReference>> {
    match ctx.contracts.object_ref(r, namespace).await {
        Ok(r) => Ok(Some(r)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads the object `r` points at in `namespace`; `None` when it does not exist (or, for
/// watched kinds, is not in the store yet: its arrival triggers the referrer).
pub(crate) async fn read(ctx: &Context, namespace: &str, r: &ObjectReference) -> Result<Option<Referenced>> {
    match cached(ctx, namespace, r) {
        Some(obj) => Ok(obj),
        None => Ok(external::get(ctx, namespace, r).await?.map(|o| Referenced::Dynamic(Box::new(o)))),
    }
}

/// A cached typed object as the dynamic object a GET would have returned.
fn as_dynamic<K: serde::Serialize>(obj: &K) -> Option<Referenced> {
    let v = serde_json::to_value(obj).ok()?;
    serde_json::from_value::<DynamicObject>(v).ok().map(|o| Referenced::Dynamic(Box::new(o)))
}

fn field<T: DeserializeOwned>(v: Option<&Value>) -> Option<T> {
    v.filter(|v| !v.is_null()).and_then(|v| serde_json::from_value(v.clone()).ok())
}

impl Referenced {
    pub fn meta(&self) -> &ObjectMeta {
        match self {
            Self::InMemoryMachine(o) => &o.metadata,
            Self::InMemoryCluster(o) => &o.metadata,
            Self::DevMachine(o) => &o.metadata,
            Self::DevCluster(o) => &o.metadata,
            Self::KubeadmConfig(o) => &o.metadata,
            Self::KubeadmControlPlane(o) => &o.metadata,
            Self::Dynamic(o) => &o.metadata,
        }
    }

    fn dynamic(&self, path: &[&str]) -> Option<&Value> {
        let Self::Dynamic(o) = self else { return None };
        path.iter().try_fold(&o.data, |v, k| v.get(k))
    }

    fn dynamic_flag(&self, path: &[&str]) -> Option<bool> {
        self.dynamic(path).and_then(Value::as_bool)
    }

    /// A v1beta2 contract flag under `status.initialization`.
    fn initialization(&self, flag: &str) -> Option<bool> {
        match self {
            Self::DevMachine(o) if flag == "provisioned" => o.status.as_ref()?.initialization.as_ref()?.provisioned,
            Self::DevCluster(o) if flag == "provisioned" => o.status.as_ref()?.initialization.as_ref()?.provisioned,
            Self::KubeadmConfig(o) if flag == "dataSecretCreated" => {
                o.status.as_ref()?.initialization.as_ref()?.data_secret_created
            }
            Self::KubeadmControlPlane(o) if flag == "controlPlaneInitialized" => {
                o.status.as_ref()?.initialization.as_ref()?.control_plane_initialized
            }
            _ => self.dynamic_flag(&["status", "initialization", flag]),
        }
    }

    pub fn is_deleting(&self) -> bool {
        self.meta().deletion_timestamp.is_some()
    }

    /// The v1beta1 contract's `status.ready`.
    fn v1beta1_ready(&self) -> Option<bool> {
        match self {
            Self::InMemoryMachine(o) => o.status.as_ref().and_then(|s| s.ready),
            Self::InMemoryCluster(o) => o.status.as_ref().and_then(|s| s.ready),
            // On the v1beta2 contract: no `status.ready`.
            Self::DevMachine(_) | Self::DevCluster(_) | Self::KubeadmConfig(_) | Self::KubeadmControlPlane(_) => None,
            Self::Dynamic(_) => self.dynamic_flag(&["status", "ready"]),
        }
    }

    /// The infrastructure contract (clusters and machines): `status.initialization.provisioned`
    /// (v1beta2) or `status.ready` (v1beta1).
    pub fn provisioned(&self) -> bool {
        self.initialization("provisioned").or_else(|| self.v1beta1_ready()).unwrap_or(false)
    }

    /// The bootstrap contract: `status.initialization.dataSecretCreated` (v1beta2) or
    /// `status.ready` (v1beta1).
    pub fn data_secret_created(&self) -> bool {
        self.initialization("dataSecretCreated").or_else(|| self.v1beta1_ready()).unwrap_or(false)
    }

    /// The control plane contract's `status.initialization.controlPlaneInitialized` (v1beta2)
    /// or `status.initialized` (v1beta1).
    pub fn control_plane_initialized(&self) -> bool {
        let v1beta1 = || self.dynamic_flag(&["status", "initialized"]);
        self.initialization("controlPlaneInitialized").or_else(v1beta1).unwrap_or(false)
    }

    /// Whether a control plane is ready: `status.ready` (v1beta1). The v1beta2 contract has
    /// no such flag; such a control plane counts as ready once initialized.
    pub fn control_plane_ready(&self) -> bool {
        match self.v1beta1_ready() {
            Some(ready) => ready,
            None => self.control_plane_initialized(),
        }
    }

    /// The object's v1beta1 conditions (mirrored into the referrer's conditions): a v1beta2
    /// object's `status.deprecated.v1beta1.conditions` when it has them, else
    /// `status.conditions` (v1beta1 conditions, or v1beta2 ones read without severity).
    pub fn conditions(&self) -> Cow<'_, [Condition]> {
        match self {
            Self::InMemoryMachine(o) => Cow::Borrowed(o.conditions()),
            Self::InMemoryCluster(o) => Cow::Borrowed(o.conditions()),
            Self::DevMachine(o) => Cow::Borrowed(o.conditions()),
            Self::DevCluster(o) => Cow::Borrowed(o.conditions()),
            Self::KubeadmConfig(o) => Cow::Borrowed(o.conditions()),
            Self::KubeadmControlPlane(o) => Cow::Borrowed(o.conditions()),
            Self::Dynamic(_) => {
                let deprecated = self.dynamic(&["status", "deprecated", "v1beta1", "conditions"]);
                let v = deprecated.or_else(|| self.dynamic(&["status", "conditions"]));
                Cow::Owned(field(v).unwrap_or_default())
            }
        }
    }

    /// The object's v1beta2 conditions: `status.conditions` of an object in the v1beta2
    /// shape (it has `status.deprecated` or `status.initialization`), else
    /// `status.v1beta2.conditions` of a v1beta1 one.
    pub fn v1beta2_conditions(&self) -> Cow<'_, [MetaCondition]> {
        fn typed(s: Option<&V1Beta2Conditions>) -> Cow<'_, [MetaCondition]> {
            Cow::Borrowed(s.and_then(|v| v.conditions.as_deref()).unwrap_or(&[]))
        }
        match self {
            Self::InMemoryMachine(_) => Cow::Borrowed(&[]),
            Self::InMemoryCluster(o) => typed(o.status.as_ref().and_then(|s| s.v1beta2.as_ref())),
            Self::DevMachine(o) => Cow::Borrowed(o.v1beta2_conditions()),
            Self::DevCluster(o) => Cow::Borrowed(o.v1beta2_conditions()),
            Self::KubeadmConfig(o) => Cow::Borrowed(o.v1beta2_conditions()),
            Self::KubeadmControlPlane(o) => Cow::Borrowed(o.v1beta2_conditions()),
            Self::Dynamic(_) => {
                let v1beta2_shape = self.dynamic(&["status", "deprecated"]).is_some()
                    || self.dynamic(&["status", "initialization"]).is_some();
                let v = if v1beta2_shape {
                    self.dynamic(&["status", "conditions"])
                } else {
                    self.dynamic(&["status", "v1beta2", "conditions"])
                };
                Cow::Owned(field(v).unwrap_or_default())
            }
        }
    }

    /// `status.failureReason` and `status.failureMessage` (v1beta1 only: the v1beta2
    /// contract has no terminal failures).
    pub fn failure(&self) -> (Option<String>, Option<String>) {
        let pick = |r: Option<&String>, m: Option<&String>| (r.cloned(), m.cloned());
        match self {
            Self::KubeadmConfig(o) => {
                let d = o.status.as_ref().and_then(|s| s.deprecated.as_ref()).and_then(|d| d.v1beta1.as_ref());
                d.map_or((None, None), |s| pick(s.failure_reason.as_ref(), s.failure_message.as_ref()))
            }
            Self::KubeadmControlPlane(o) => {
                let d = o.status.as_ref().and_then(|s| s.deprecated.as_ref()).and_then(|d| d.v1beta1.as_ref());
                d.map_or((None, None), |s| pick(s.failure_reason.as_ref(), s.failure_message.as_ref()))
            }
            _ => {
                (field(self.dynamic(&["status", "failureReason"])), field(self.dynamic(&["status", "failureMessage"])))
            }
        }
    }

    /// `spec.providerID` of an infrastructure machine.
    pub fn provider_id(&self) -> Option<String> {
        match self {
            Self::InMemoryMachine(o) => o.spec.provider_id.clone(),
            Self::DevMachine(o) => o.spec.provider_id.clone(),
            _ => field(self.dynamic(&["spec", "providerID"])),
        }
        .filter(|s| !s.is_empty())
    }

    /// `status.addresses` of an infrastructure machine.
    pub fn addresses(&self) -> Option<Vec<MachineAddress>> {
        match self {
            Self::DevMachine(o) => o.status.as_ref().and_then(|s| s.addresses.as_ref()).map(|a| {
                a.iter()
                    .map(|a| MachineAddress { type_: a.type_.as_str().into(), address: a.address.clone() })
                    .collect()
            }),
            Self::InMemoryMachine(o) => o.status.as_ref().and_then(|s| s.addresses.clone()),
            _ => field(self.dynamic(&["status", "addresses"])),
        }
    }

    /// `spec.failureDomain` of an infrastructure machine, or its `status.failureDomain`
    /// (v1beta2: where the provider placed it).
    pub fn failure_domain(&self) -> Option<String> {
        if let Self::DevMachine(o) = self {
            return o.status.as_ref().and_then(|s| s.failure_domain.clone());
        }
        field(self.dynamic(&["spec", "failureDomain"])).or_else(|| field(self.dynamic(&["status", "failureDomain"])))
    }

    /// `status.interruptible` of an infrastructure machine (spot instances).
    pub fn interruptible(&self) -> bool {
        self.dynamic_flag(&["status", "interruptible"]).unwrap_or(false)
    }

    /// `spec.controlPlaneEndpoint` of an infrastructure cluster or control plane.
    pub fn control_plane_endpoint(&self) -> Option<APIEndpoint> {
        match self {
            Self::InMemoryCluster(o) => o.spec.control_plane_endpoint.clone(),
            Self::DevCluster(o) => o
                .spec
                .control_plane_endpoint
                .as_ref()
                .and_then(|e| Some(APIEndpoint { host: e.host.clone()?, port: e.port? })),
            _ => field(self.dynamic(&["spec", "controlPlaneEndpoint"])),
        }
        .filter(APIEndpoint::is_valid)
    }

    /// `status.failureDomains` of an infrastructure cluster as the v1beta2 list, sorted by
    /// name (v1beta1 providers report a map by name, v1beta2 ones a list).
    pub fn failure_domains(&self) -> Option<Vec<FailureDomain>> {
        let mut list: Vec<FailureDomain> = if let Self::DevCluster(o) = self {
            let list = o.status.as_ref().and_then(|s| s.failure_domains.as_ref())?;
            let up = |d: &drydock_api::capi::dev::v1beta2::FailureDomain| FailureDomain {
                name: d.name.clone(),
                control_plane: d.control_plane,
                attributes: d.attributes.clone(),
            };
            list.iter().map(up).collect()
        } else {
            let v = self.dynamic(&["status", "failureDomains"])?;
            match v.as_array() {
                Some(list) => list.iter().filter_map(|d| serde_json::from_value(d.clone()).ok()).collect(),
                None => {
                    let by_name: BTreeMap<String, FailureDomainSpec> = field(Some(v))?;
                    let up = |(name, d): (String, FailureDomainSpec)| FailureDomain {
                        name,
                        control_plane: d.control_plane,
                        attributes: d.attributes,
                    };
                    by_name.into_iter().map(up).collect()
                }
            }
        };
        list.retain(|d| !d.name.is_empty());
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Some(list)
    }

    /// `status.dataSecretName` of a bootstrap config.
    pub fn data_secret_name(&self) -> Option<String> {
        match self {
            Self::KubeadmConfig(o) => o.status.as_ref().and_then(|s| s.data_secret_name.clone()),
            _ => field(self.dynamic(&["status", "dataSecretName"])),
        }
        .filter(|s| !s.is_empty())
    }

    /// A machine pool's instances, as its provider lists them (`spec.providerIDList`).
    pub fn provider_id_list(&self) -> Vec<String> {
        field(self.dynamic(&["spec", "providerIDList"])).unwrap_or_default()
    }

    /// A machine pool's instance count (`status.replicas`).
    pub fn status_replicas(&self) -> Option<i32> {
        field(self.dynamic(&["status", "replicas"]))
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.meta().annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
    }
}

/// A v1beta2 failure domain (`{name, controlPlane, attributes}`) as v1beta1 keys it.
/// Makes `owner` an owner of `obj`, which `r` points at (see [`external::adoption_patch`]).
/// Returns true when a write was issued.
pub(crate) async fn adopt(
    ctx: &Context,
    controller: &str,
    r: &ObjectReference,
    obj: &Referenced,
    owner: &OwnerReference,
    cluster_name: &str,
    drop: &[(&str, &str)],
) -> Result<bool> {
    let Some(patch) = external::adoption_patch(obj.meta(), owner, cluster_name, drop) else {
        return Ok(false);
    };
    let namespace = obj.meta().namespace.as_deref().unwrap_or_default();
    let name = obj.meta().name.as_deref().unwrap_or_default();
    merge_patch(&dynamic_api(ctx, namespace, r).await, controller, name, &patch).await?;
    Ok(true)
}

/// Deletes the object `r` points at unless it is already going. Returns true when it is
/// gone: it had no finalizers (deleted at once) or was already absent. Otherwise the caller
/// waits for its owner to finish.
pub(crate) async fn delete(
    ctx: &Context,
    controller: &str,
    namespace: &str,
    r: &ObjectReference,
    obj: &Referenced,
) -> Result<bool> {
    if obj.is_deleting() {
        return Ok(false);
    }
    let name = r.name.as_deref().unwrap_or_default();
    match dynamic_api(ctx, namespace, r).await.delete(name, &DeleteParams::default()).await {
        Ok(answer) => {
            metrics::write(controller);
            // The answer is the object as it stood (still there while finalizers remain) or a
            // Status once it is gone.
            Ok(answer.left().is_none_or(|o| o.metadata.finalizers.as_ref().is_none_or(Vec::is_empty)))
        }
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(true),
        Err(e) => Err(e.into()),
    }
}

async fn dynamic_api(ctx: &Context, namespace: &str, r: &ObjectReference) -> Api<DynamicObject> {
    external::api_for(ctx, namespace, r).await
}

#[cfg(test)]
mod tests;
