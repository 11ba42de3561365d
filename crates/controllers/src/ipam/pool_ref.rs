//! The two pool kinds seen alike: which pool a claim or an address references, and which
//! IPAddresses a pool has handed out.
//!
//! A claim references an InClusterIPPool of its own namespace or a GlobalInClusterIPPool
//! (cluster-scoped). Addresses of a namespaced pool are looked up in the pool's namespace,
//! those of a global pool in every namespace, so a global pool's addresses are unique
//! cluster-wide.

use std::fmt;
use std::sync::Arc;

use drydock_api::capi::ipam::v1beta2::{IPAddress, IPAddressClaim, IPPoolReference};
use drydock_api::capi::ipam::{GlobalInClusterIPPool, InClusterIPPool, InClusterIPPoolSpec, InClusterIPPoolStatus};
use drydock_api::capi::keys::{PAUSED_ANNOTATION, has_annotation};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Informers;
use crate::framework::informer::Informer;

/// The API group of the pool kinds this provider serves.
pub const GROUP: &str = "ipam.cluster.x-k8s.io";

/// Which of the two pool kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// InClusterIPPool: serves claims of its namespace.
    Namespaced,
    /// GlobalInClusterIPPool: serves claims of every namespace.
    Global,
}

impl Scope {
    pub fn kind(self) -> &'static str {
        match self {
            Scope::Namespaced => "InClusterIPPool",
            Scope::Global => "GlobalInClusterIPPool",
        }
    }
}

/// A pool, by kind, namespace (namespaced kind only) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PoolId {
    pub scope: Scope,
    pub namespace: Option<String>,
    pub name: String,
}

impl PoolId {
    /// The pool `r` names, read from an object in `namespace`; `None` when it is not a kind
    /// of this provider.
    pub fn of_ref(r: &IPPoolReference, namespace: &str) -> Option<Self> {
        let scope = scope_of(r)?;
        let namespace = (scope == Scope::Namespaced).then(|| namespace.to_string());
        Some(Self { scope, namespace, name: r.name.clone() })
    }

    pub fn of_claim(c: &IPAddressClaim) -> Option<Self> {
        Self::of_ref(&c.spec.pool_ref, c.metadata.namespace.as_deref().unwrap_or_default())
    }

    pub fn of_pool<P: PoolKind>(p: &P) -> Self {
        Self { scope: P::SCOPE, namespace: p.meta().namespace.clone(), name: p.name_any() }
    }

    /// True when `r`, read from an object in `namespace`, names this pool (compared without
    /// building an id: this runs over every IPAddress).
    pub fn is_named_by(&self, r: &IPPoolReference, namespace: &str) -> bool {
        r.name == self.name
            && scope_of(r) == Some(self.scope)
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// The reference an IPAddress of this pool carries.
    pub fn reference(&self) -> IPPoolReference {
        IPPoolReference { name: self.name.clone(), kind: self.scope.kind().to_string(), api_group: GROUP.to_string() }
    }

    /// The IPAddresses handed out from this pool.
    pub fn addresses(&self, store: &Store<IPAddress>) -> Vec<Arc<IPAddress>> {
        store
            .state()
            .into_iter()
            .filter(|a| self.is_named_by(&a.spec.pool_ref, a.metadata.namespace.as_deref().unwrap_or_default()))
            .collect()
    }
}

impl fmt::Display for PoolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.scope.kind(), self.name),
            None => write!(f, "{} {}", self.scope.kind(), self.name),
        }
    }
}

fn scope_of(r: &IPPoolReference) -> Option<Scope> {
    if r.api_group != GROUP {
        return None;
    }
    [Scope::Namespaced, Scope::Global].into_iter().find(|s| s.kind() == r.kind)
}

/// True when the object carries the `cluster.x-k8s.io/paused` annotation.
pub fn annotated_paused(meta: &ObjectMeta) -> bool {
    has_annotation(meta.annotations.as_ref(), PAUSED_ANNOTATION)
}

/// One pool kind, for the pool controller that serves both.
pub trait PoolKind:
    Resource<DynamicType = ()> + Clone + fmt::Debug + Serialize + DeserializeOwned + PartialEq + Send + Sync + 'static
{
    const SCOPE: Scope;
    /// Name of the kind's controller in metrics and logs.
    const CONTROLLER: &'static str;
    fn spec(&self) -> &InClusterIPPoolSpec;
    fn status_mut(&mut self) -> &mut Option<InClusterIPPoolStatus>;
    fn informer(i: &Informers) -> &Arc<Informer<Self>>;
    /// The API of pools like `pool` (its namespace's for the namespaced kind).
    fn api(client: &kube::Client, pool: &Self) -> Api<Self>;
    /// The pool of this kind `id` names.
    fn ref_of(id: &PoolId) -> Option<ObjectRef<Self>> {
        (id.scope == Self::SCOPE).then(|| {
            let r = ObjectRef::new(&id.name);
            match &id.namespace {
                Some(ns) => r.within(ns),
                None => r,
            }
        })
    }
}

impl PoolKind for InClusterIPPool {
    const SCOPE: Scope = Scope::Namespaced;
    const CONTROLLER: &'static str = "inclusterippool";

    fn spec(&self) -> &InClusterIPPoolSpec {
        &self.spec
    }

    fn status_mut(&mut self) -> &mut Option<InClusterIPPoolStatus> {
        &mut self.status
    }

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.ip_pools
    }

    fn api(client: &kube::Client, pool: &Self) -> Api<Self> {
        Api::namespaced(client.clone(), pool.metadata.namespace.as_deref().unwrap_or_default())
    }
}

impl PoolKind for GlobalInClusterIPPool {
    const SCOPE: Scope = Scope::Global;
    const CONTROLLER: &'static str = "globalinclusterippool";

    fn spec(&self) -> &InClusterIPPoolSpec {
        &self.spec.0
    }

    fn status_mut(&mut self) -> &mut Option<InClusterIPPoolStatus> {
        &mut self.status
    }

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.global_ip_pools
    }

    fn api(client: &kube::Client, _pool: &Self) -> Api<Self> {
        Api::all(client.clone())
    }
}

/// A pool of either kind, as the claim controller reads it.
#[derive(Clone, Debug)]
pub enum AnyPool {
    Namespaced(Arc<InClusterIPPool>),
    Global(Arc<GlobalInClusterIPPool>),
}

impl AnyPool {
    /// The cached pool `id` names.
    pub fn lookup(informers: &Informers, id: &PoolId) -> Option<Self> {
        match id.scope {
            Scope::Namespaced => {
                InClusterIPPool::ref_of(id).and_then(|r| informers.ip_pools.store.get(&r)).map(Self::Namespaced)
            }
            Scope::Global => GlobalInClusterIPPool::ref_of(id)
                .and_then(|r| informers.global_ip_pools.store.get(&r))
                .map(Self::Global),
        }
    }

    pub fn meta(&self) -> &ObjectMeta {
        match self {
            Self::Namespaced(p) => &p.metadata,
            Self::Global(p) => &p.metadata,
        }
    }

    pub fn spec(&self) -> &InClusterIPPoolSpec {
        match self {
            Self::Namespaced(p) => &p.spec,
            Self::Global(p) => &p.spec.0,
        }
    }

    /// The IPAddresses' reference to their pool: not their controller, but blocking the
    /// pool's foreground deletion.
    pub fn owner_ref(&self) -> Option<OwnerReference> {
        let r = match self {
            Self::Namespaced(p) => p.owner_ref(&()),
            Self::Global(p) => p.owner_ref(&()),
        };
        r.map(|r| OwnerReference { controller: Some(false), block_owner_deletion: Some(true), ..r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_ref(kind: &str, group: &str) -> IPPoolReference {
        IPPoolReference { name: "p".into(), kind: kind.into(), api_group: group.into() }
    }

    #[test]
    fn references_name_pools_by_kind_scope_and_namespace() {
        let ns = PoolId::of_ref(&pool_ref("InClusterIPPool", GROUP), "a").expect("ours");
        assert_eq!(ns.to_string(), "InClusterIPPool a/p");
        assert!(ns.is_named_by(&pool_ref("InClusterIPPool", GROUP), "a"));
        assert!(!ns.is_named_by(&pool_ref("InClusterIPPool", GROUP), "b"), "same name, other namespace");
        assert!(!ns.is_named_by(&pool_ref("GlobalInClusterIPPool", GROUP), "a"));
        let global = PoolId::of_ref(&pool_ref("GlobalInClusterIPPool", GROUP), "a").expect("ours");
        assert_eq!(global, PoolId::of_ref(&pool_ref("GlobalInClusterIPPool", GROUP), "b").expect("ours"));
        assert!(global.is_named_by(&pool_ref("GlobalInClusterIPPool", GROUP), "z"), "any namespace");
        assert_eq!(global.reference(), pool_ref("GlobalInClusterIPPool", GROUP));
        assert_eq!(PoolId::of_ref(&pool_ref("InClusterIPPool", "ipam.example.com"), "a"), None);
        assert_eq!(PoolId::of_ref(&pool_ref("InfobloxIPPool", GROUP), "a"), None);
        assert_eq!(GlobalInClusterIPPool::ref_of(&global), Some(ObjectRef::new("p")));
        assert_eq!(InClusterIPPool::ref_of(&ns), Some(ObjectRef::new("p").within("a")));
        assert_eq!(InClusterIPPool::ref_of(&global), None);
    }
}
