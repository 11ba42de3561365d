//! Objects a Cluster or Machine references by kind (infrastructure, bootstrap and control
//! plane objects), read through the Cluster API contracts: `status.ready`,
//! `status.failureReason`, `spec.providerID` and so on.
//!
//! Kinds drydock serves with a shared informer are read from its store (no API call, and
//! their changes trigger the referrer); any other kind is read with a GET and its readiness
//! rechecked on a timer, since no watch reports its changes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::common::APIEndpoint;
use drydock_api::capi::conditions::{Condition, HasConditions};
use drydock_api::capi::core::{FailureDomainSpec, MachineAddress};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_api::capi::kubeadm::{KubeadmConfig, KubeadmControlPlane};
use drydock_api::capi::owner::api_group;
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
    KubeadmConfig(Arc<KubeadmConfig>),
    KubeadmControlPlane(Arc<KubeadmControlPlane>),
    Dynamic(Box<DynamicObject>),
}

/// Which shared store, if any, holds objects of the reference's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    InMemoryMachine,
    InMemoryCluster,
    KubeadmConfig,
    KubeadmControlPlane,
    /// Not watched: read with a GET.
    Api,
}

impl Source {
    pub fn of(r: &ObjectReference) -> Self {
        let group = api_group(r.api_version.as_deref().unwrap_or_default());
        match (group, r.kind.as_deref().unwrap_or_default()) {
            (INFRASTRUCTURE_GROUP, "InMemoryMachine") => Self::InMemoryMachine,
            (INFRASTRUCTURE_GROUP, "InMemoryCluster") => Self::InMemoryCluster,
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

/// Reads the object `r` points at in `namespace`; `None` when it does not exist (or, for
/// watched kinds, is not in the store yet: its arrival triggers the referrer).
pub(crate) async fn read(ctx: &Context, namespace: &str, r: &ObjectReference) -> Result<Option<Referenced>> {
    let name = r.name.as_deref().unwrap_or_default();
    let i = &ctx.informers;
    Ok(match Source::of(r) {
        Source::InMemoryMachine => {
            from_store(&i.inmemory_machines.store, namespace, name).map(Referenced::InMemoryMachine)
        }
        Source::InMemoryCluster => {
            from_store(&i.inmemory_clusters.store, namespace, name).map(Referenced::InMemoryCluster)
        }
        Source::KubeadmConfig => from_store(&i.kubeadm_configs.store, namespace, name).map(Referenced::KubeadmConfig),
        Source::KubeadmControlPlane => {
            from_store(&i.control_planes.store, namespace, name).map(Referenced::KubeadmControlPlane)
        }
        Source::Api => external::get(&ctx.client, namespace, r).await?.map(|o| Referenced::Dynamic(Box::new(o))),
    })
}

fn field<T: DeserializeOwned>(v: Option<&Value>) -> Option<T> {
    v.filter(|v| !v.is_null()).and_then(|v| serde_json::from_value(v.clone()).ok())
}

impl Referenced {
    pub fn meta(&self) -> &ObjectMeta {
        match self {
            Self::InMemoryMachine(o) => &o.metadata,
            Self::InMemoryCluster(o) => &o.metadata,
            Self::KubeadmConfig(o) => &o.metadata,
            Self::KubeadmControlPlane(o) => &o.metadata,
            Self::Dynamic(o) => &o.metadata,
        }
    }

    fn dynamic(&self, path: &[&str]) -> Option<&Value> {
        let Self::Dynamic(o) = self else { return None };
        path.iter().try_fold(&o.data, |v, k| v.get(k))
    }

    pub fn is_deleting(&self) -> bool {
        self.meta().deletion_timestamp.is_some()
    }

    /// `status.ready` of the infrastructure, bootstrap and control plane contracts.
    pub fn ready(&self) -> bool {
        match self {
            Self::InMemoryMachine(o) => o.status.as_ref().and_then(|s| s.ready),
            Self::InMemoryCluster(o) => o.status.as_ref().and_then(|s| s.ready),
            Self::KubeadmConfig(o) => o.status.as_ref().and_then(|s| s.ready),
            Self::KubeadmControlPlane(o) => o.status.as_ref().and_then(|s| s.ready),
            Self::Dynamic(_) => self.dynamic(&["status", "ready"]).and_then(Value::as_bool),
        }
        .unwrap_or(false)
    }

    /// `status.initialized` of the control plane contract.
    pub fn initialized(&self) -> bool {
        match self {
            Self::KubeadmControlPlane(o) => o.status.as_ref().and_then(|s| s.initialized).unwrap_or(false),
            _ => self.dynamic(&["status", "initialized"]).and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// The object's v1beta1 conditions (mirrored into the referrer's conditions).
    pub fn conditions(&self) -> Cow<'_, [Condition]> {
        match self {
            Self::InMemoryMachine(o) => Cow::Borrowed(o.conditions()),
            Self::InMemoryCluster(o) => Cow::Borrowed(o.conditions()),
            Self::KubeadmConfig(o) => Cow::Borrowed(o.conditions()),
            Self::KubeadmControlPlane(o) => Cow::Borrowed(o.conditions()),
            Self::Dynamic(_) => Cow::Owned(field(self.dynamic(&["status", "conditions"])).unwrap_or_default()),
        }
    }

    /// `status.failureReason` and `status.failureMessage`.
    pub fn failure(&self) -> (Option<String>, Option<String>) {
        let pick = |r: Option<&String>, m: Option<&String>| (r.cloned(), m.cloned());
        match self {
            Self::KubeadmConfig(o) => {
                o.status.as_ref().map_or((None, None), |s| pick(s.failure_reason.as_ref(), s.failure_message.as_ref()))
            }
            Self::KubeadmControlPlane(o) => {
                o.status.as_ref().map_or((None, None), |s| pick(s.failure_reason.as_ref(), s.failure_message.as_ref()))
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
            _ => field(self.dynamic(&["spec", "providerID"])),
        }
        .filter(|s| !s.is_empty())
    }

    /// `status.addresses` of an infrastructure machine.
    pub fn addresses(&self) -> Option<Vec<MachineAddress>> {
        field(self.dynamic(&["status", "addresses"]))
    }

    /// `spec.failureDomain` of an infrastructure machine.
    pub fn failure_domain(&self) -> Option<String> {
        field(self.dynamic(&["spec", "failureDomain"]))
    }

    /// `status.interruptible` of an infrastructure machine (spot instances).
    pub fn interruptible(&self) -> bool {
        self.dynamic(&["status", "interruptible"]).and_then(Value::as_bool).unwrap_or(false)
    }

    /// `spec.controlPlaneEndpoint` of an infrastructure cluster or control plane.
    pub fn control_plane_endpoint(&self) -> Option<APIEndpoint> {
        match self {
            Self::InMemoryCluster(o) => o.spec.control_plane_endpoint.clone(),
            _ => field(self.dynamic(&["spec", "controlPlaneEndpoint"])),
        }
        .filter(APIEndpoint::is_valid)
    }

    /// `status.failureDomains` of an infrastructure cluster.
    pub fn failure_domains(&self) -> Option<BTreeMap<String, FailureDomainSpec>> {
        field(self.dynamic(&["status", "failureDomains"]))
    }

    /// `status.dataSecretName` of a bootstrap config.
    pub fn data_secret_name(&self) -> Option<String> {
        match self {
            Self::KubeadmConfig(o) => o.status.as_ref().and_then(|s| s.data_secret_name.clone()),
            _ => field(self.dynamic(&["status", "dataSecretName"])),
        }
        .filter(|s| !s.is_empty())
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.meta().annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
    }
}

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
    merge_patch(&dynamic_api(ctx, namespace, r), controller, name, &patch).await?;
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
    match dynamic_api(ctx, namespace, r).delete(name, &DeleteParams::default()).await {
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

fn dynamic_api(ctx: &Context, namespace: &str, r: &ObjectReference) -> Api<DynamicObject> {
    external::api_for(&ctx.client, namespace, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(api_version: &str, kind: &str) -> ObjectReference {
        ObjectReference { api_version: Some(api_version.into()), kind: Some(kind.into()), ..Default::default() }
    }

    #[test]
    fn sources_by_group_and_kind() {
        assert_eq!(
            Source::of(&r("infrastructure.cluster.x-k8s.io/v1alpha1", "InMemoryMachine")),
            Source::InMemoryMachine
        );
        assert_eq!(Source::of(&r("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig")), Source::KubeadmConfig);
        assert_eq!(Source::of(&r("other.io/v1", "InMemoryMachine")), Source::Api);
        assert!(!Source::Api.is_watched());
    }

    #[test]
    fn dynamic_contract_fields() {
        let o: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "infrastructure.example.io/v1", "kind": "FooMachine",
            "metadata": {"name": "m"},
            "spec": {"providerID": "foo://1", "failureDomain": "fd1"},
            "status": {"ready": true, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "failureReason": "Broken", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
        }))
        .unwrap();
        let o = Referenced::Dynamic(Box::new(o));
        assert!(o.ready());
        assert_eq!(o.provider_id().as_deref(), Some("foo://1"));
        assert_eq!(o.failure_domain().as_deref(), Some("fd1"));
        assert_eq!(o.addresses().unwrap()[0].address, "10.0.0.1");
        assert_eq!(o.failure().0.as_deref(), Some("Broken"));
        assert_eq!(o.conditions().len(), 1);
        assert!(o.control_plane_endpoint().is_none());
    }
}
