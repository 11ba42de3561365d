//! The IPAddressClaim controller: fulfils claims on InClusterIPPools and
//! GlobalInClusterIPPools (claims on other pool kinds belong to other providers and are left
//! alone).
//!
//! A claim gets the `ipam.cluster.x-k8s.io/ReleaseAddress` finalizer, then an IPAddress of
//! its own name holding the lowest free address of the pool, then `status.addressRef` and a
//! `Ready` condition (True `AddressAllocated`; False `PoolExhausted`, `PoolNotReady` or
//! `AllocationFailed`). Addresses are sticky: once the IPAddress exists nothing is
//! recomputed. Deleting the claim releases its address.
//!
//! One worker allocates, as upstream: the addresses in use are read from the store, so two
//! allocations at once could pick the same one, and each allocation waits (bounded) until
//! the store shows the IPAddress it created before the next one starts.
//!
//! Claims the pool cannot serve yet are retried on events, not timers: when an IPAddress of
//! the pool goes (an address is freed) and when the pool appears, changes its spec, starts
//! deleting, goes or is paused or resumed, every claim of that pool still without an
//! address is reconciled again.
//!
//! A claim is skipped while its Cluster (`spec.clusterName`, else the
//! `cluster.x-k8s.io/cluster-name` label) is paused or, unless the claim is being deleted,
//! missing, and while its pool or the claim itself carries the paused annotation.

use std::sync::Arc;

use drydock_api::capi::condition_types::{ADDRESS_ALLOCATED, ALLOCATION_FAILED, POOL_EXHAUSTED, POOL_NOT_READY};
use drydock_api::capi::conditions::{self, Severity};
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::ipam::v1beta2::{IPAddress, IPAddressClaim, IPAddressReference};
use drydock_api::capi::ipam::{GlobalInClusterIPPool, InClusterIPPool};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, IPAM_RELEASE_ADDRESS_FINALIZER};
use drydock_api::capi::v1beta2_conditions::{self, Observed, names::READY};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use super::address::{self, Outcome};
use super::pool_ref::{AnyPool, PoolId, PoolKind, Scope, annotated_paused};
use crate::framework::Result;
use crate::framework::index::Changes;
use crate::framework::pause;
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue, key_of};
use crate::framework::write::{Writer, add_finalizer};
use crate::{Context, Running};

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "ipaddressclaim";

/// Workers: one (see the module documentation).
const WORKERS: u16 = 1;

pub(super) struct State {
    pub ctx: Arc<Context>,
    /// Writes claims, remembering what it superseded.
    pub claims: Writer,
    /// Writes IPAddresses (kept apart: an address and its claim share `namespace/name`).
    pub addresses: Writer,
    /// What each pool last looked like to the claims waiting on it, per kind.
    pools: Changes<PoolGate>,
    global_pools: Changes<PoolGate>,
    /// Whether each Cluster was last seen paused (`None`: gone).
    clusters: Changes<Option<bool>>,
}

/// The parts of a pool a claim without an address waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PoolGate {
    exists: bool,
    generation: Option<i64>,
    deleting: bool,
    paused: bool,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State {
        ctx: ctx.clone(),
        claims: Writer::tracking(CONTROLLER),
        addresses: Writer::new(CONTROLLER),
        pools: Changes::default(),
        global_pools: Changes::default(),
        clusters: Changes::default(),
    });
    let queue = Queue::new(CONTROLLER);
    let i = &ctx.informers;
    let (s1, s2, s3, s4) = (state.clone(), state.clone(), state.clone(), state.clone());
    let c =
        Controller::for_shared_stream(queue.track(i.ip_address_claims.subscribe()), i.ip_address_claims.store.clone())
            .watches_shared_stream(
                i.ip_addresses.subscribe(),
                queue.map_to(move |a: &IPAddress| s1.claims_of_address(a)),
            )
            .watches_shared_stream(
                i.ip_pools.subscribe(),
                queue.map_to(move |p: &InClusterIPPool| s2.claims_of_changed_pool(p)),
            )
            .watches_shared_stream(
                i.global_ip_pools.subscribe(),
                queue.map_to(move |p: &GlobalInClusterIPPool| s3.claims_of_changed_pool(p)),
            )
            .watches_shared_stream(
                i.clusters.subscribe(),
                queue.map_to(move |c: &Cluster| s4.claims_of_changed_cluster(c)),
            );
    Box::pin(runner::run(CONTROLLER, c, queue, WORKERS, ctx.clock().clone(), state, reconcile))
}

/// The Cluster a claim belongs to, if it names one.
fn cluster_name(c: &IPAddressClaim) -> Option<&str> {
    c.spec
        .cluster_name
        .as_deref()
        .filter(|n| !n.is_empty())
        .or_else(|| c.labels().get(CLUSTER_NAME_LABEL).map(String::as_str))
}

/// The IPAddress a claim's status names.
fn address_ref(c: &IPAddressClaim) -> Option<&str> {
    c.status.as_ref().and_then(|s| s.address_ref.as_ref()).map(|r| r.name.as_str())
}

/// True when `o`, an object of `store` (namespaced or not), is in it.
fn in_store<K: Resource<DynamicType = ()> + Clone + 'static>(store: &Store<K>, o: &K) -> bool {
    store.get(&ObjectRef::from_obj(o)).is_some()
}

impl State {
    /// On an IPAddress event: its claim, unless the claim already names it and it still
    /// exists; and, when it is gone (its address freed), the claims of its pool waiting for
    /// one.
    fn claims_of_address(&self, a: &IPAddress) -> Vec<ObjectRef<IPAddressClaim>> {
        let i = &self.ctx.informers;
        let ns = a.metadata.namespace.as_deref().unwrap_or_default();
        let gone = !in_store(&i.ip_addresses.store, a);
        let claim = ObjectRef::new(&a.spec.claim_ref.name).within(ns);
        let name = a.name_any();
        let referenced = i.ip_address_claims.store.get(&claim).is_some_and(|c| address_ref(&c) == Some(name.as_str()));
        let mut out = Vec::new();
        if gone || !referenced {
            out.push(claim);
        }
        if gone && let Some(id) = PoolId::of_ref(&a.spec.pool_ref, ns) {
            out.extend(self.waiting_claims(&id));
        }
        out
    }

    /// On a pool event: the claims waiting for an address from it, when it changed in a way
    /// they wait on.
    fn claims_of_changed_pool<P: PoolKind>(&self, p: &P) -> Vec<ObjectRef<IPAddressClaim>> {
        let store = &P::informer(&self.ctx.informers).store;
        let exists = in_store(store, p);
        let meta = p.meta();
        let gate = PoolGate {
            exists,
            generation: meta.generation,
            deleting: meta.deletion_timestamp.is_some(),
            paused: annotated_paused(meta),
        };
        let changes = match P::SCOPE {
            Scope::Namespaced => &self.pools,
            Scope::Global => &self.global_pools,
        };
        let live = |k: &str| {
            k.split_once('/').is_some_and(|(ns, name)| {
                let r = ObjectRef::new(name);
                store.get(&if ns.is_empty() { r } else { r.within(ns) }).is_some()
            })
        };
        if !changes.changed(key_of(p), gate, store.len(), live) {
            return Vec::new();
        }
        self.waiting_claims(&PoolId::of_pool(p))
    }

    /// On a Cluster event: its claims, when it was paused or resumed, appeared or went.
    fn claims_of_changed_cluster(&self, c: &Cluster) -> Vec<ObjectRef<IPAddressClaim>> {
        let store = &self.ctx.informers.clusters.store;
        let gate = in_store(store, c).then(|| pause::is_paused(c, &c.metadata));
        if !self.clusters.changed_in(store, c, gate) {
            return Vec::new();
        }
        let (ns, name) = (c.metadata.namespace.as_deref().unwrap_or_default(), c.name_any());
        self.ctx
            .informers
            .ip_address_claims
            .store
            .state()
            .iter()
            .filter(|claim| claim.metadata.namespace.as_deref() == Some(ns) && cluster_name(claim) == Some(&name))
            .filter(|claim| PoolId::of_claim(claim).is_some())
            .map(|claim| ObjectRef::from_obj(claim.as_ref()))
            .collect()
    }

    /// The live claims of a pool that have no IPAddress.
    fn waiting_claims(&self, id: &PoolId) -> Vec<ObjectRef<IPAddressClaim>> {
        let i = &self.ctx.informers;
        i.ip_address_claims
            .store
            .state()
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter(|c| id.is_named_by(&c.spec.pool_ref, c.metadata.namespace.as_deref().unwrap_or_default()))
            .map(|c| ObjectRef::from_obj(c.as_ref()))
            .filter(|r| {
                i.ip_addresses
                    .store
                    .get(&ObjectRef::new(&r.name).within(r.namespace.as_deref().unwrap_or_default()))
                    .is_none()
            })
            .collect()
    }

    /// True when the claim's Cluster holds it: paused, or missing while the claim is not
    /// being deleted (a claim whose Cluster went first is still released).
    fn held_by_cluster(&self, claim: &IPAddressClaim) -> bool {
        let Some(name) = cluster_name(claim) else { return false };
        let ns = claim.metadata.namespace.as_deref().unwrap_or_default();
        match self.ctx.informers.clusters.store.get(&ObjectRef::new(name).within(ns)) {
            Some(c) => pause::is_paused(&c, &c.metadata),
            None => claim.metadata.deletion_timestamp.is_none(),
        }
    }
}

async fn reconcile(claim: Arc<IPAddressClaim>, state: Arc<State>) -> Result<Requeue> {
    // Allocating before the addresses in use are listed would hand out taken ones.
    let i = &state.ctx.informers;
    i.ip_addresses.ready().await;
    i.ip_pools.ready().await;
    i.global_ip_pools.ready().await;
    i.clusters.ready().await;
    if state.claims.is_stale(claim.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let Some(pool_id) = PoolId::of_claim(&claim) else {
        return Ok(Requeue::await_change());
    };
    if annotated_paused(&claim.metadata) || state.held_by_cluster(&claim) {
        return Ok(Requeue::await_change());
    }
    let pool = AnyPool::lookup(&state.ctx.informers, &pool_id);
    if pool.as_ref().is_some_and(|p| annotated_paused(p.meta())) {
        return Ok(Requeue::await_change());
    }
    if claim.metadata.deletion_timestamp.is_some() {
        return address::release(&state, &claim, pool.as_ref()).await;
    }
    let api = state.ctx.api::<IPAddressClaim>(claim.metadata.namespace.as_deref().unwrap_or_default());
    // The finalizer is written before any address exists, so that every address is released.
    let mut claim = claim;
    let mut finalized = (*claim).clone();
    if add_finalizer(&mut finalized, IPAM_RELEASE_ADDRESS_FINALIZER) {
        let out = state.claims.apply(&api, &claim, &finalized).await?;
        claim = Arc::new(out.or_wanted(&finalized)?);
    }
    let outcome = address::ensure(&state, &claim, &pool_id, pool.as_ref()).await?;
    let want = with_outcome(&claim, &outcome, &state.ctx.clock().condition_time());
    let newly_exhausted = matches!(outcome, Outcome::Exhausted(_)) && ready_reason(&claim) != Some(POOL_EXHAUSTED);
    state.claims.apply(&api, &claim, &want).await?;
    if let (true, Outcome::Exhausted(message)) = (newly_exhausted, &outcome) {
        state.ctx.events.warning(claim.as_ref(), POOL_EXHAUSTED, message.clone()).await;
    }
    Ok(Requeue::await_change())
}

/// The reason of the claim's `Ready`.
fn ready_reason(c: &IPAddressClaim) -> Option<&str> {
    let conditions = c.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    v1beta2_conditions::get(conditions, READY).map(|c| c.reason.as_str())
}

/// The claim with `status.addressRef` and `Ready` (and its v1beta1 twin, for v1beta1
/// readers) as `outcome` says.
fn with_outcome(claim: &IPAddressClaim, outcome: &Outcome, now: &Time) -> IPAddressClaim {
    let mut c = claim.clone();
    let generation = c.metadata.generation;
    let status = c.status.get_or_insert_with(Default::default);
    let (ready, address) = match outcome {
        Outcome::Allocated(name) => {
            (Observed::true_(READY, ADDRESS_ALLOCATED), Some(IPAddressReference { name: name.clone() }))
        }
        Outcome::Exhausted(m) => (Observed::false_(READY, POOL_EXHAUSTED, m.as_str()), None),
        Outcome::PoolNotReady(m) => (Observed::false_(READY, POOL_NOT_READY, m.as_str()), None),
        Outcome::Failed(m) => (Observed::false_(READY, ALLOCATION_FAILED, m.as_str()), None),
    };
    status.address_ref = address;
    let v1beta1 = status
        .deprecated
        .get_or_insert_with(Default::default)
        .v1beta1
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    if matches!(outcome, Outcome::Allocated(_)) {
        conditions::mark_true(v1beta1, READY, now.clone());
    } else {
        conditions::mark_false(v1beta1, READY, &ready.reason, Severity::Warning, &ready.message, now.clone());
    }
    v1beta2_conditions::set(status.conditions.get_or_insert_with(Vec::new), ready, generation, now);
    c
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::ipam::v1beta2::{IPAddressClaimSpec, IPPoolReference};

    use super::*;

    fn claim() -> IPAddressClaim {
        let pool_ref = IPPoolReference {
            name: "p".into(),
            kind: "InClusterIPPool".into(),
            api_group: super::super::pool_ref::GROUP.into(),
        };
        let mut c = IPAddressClaim::new("m-0", IPAddressClaimSpec { cluster_name: None, pool_ref });
        c.metadata.namespace = Some("ns".into());
        c.metadata.generation = Some(1);
        c
    }

    fn at(secs: i64) -> Time {
        conditions::time_at(jiff::Timestamp::from_second(secs).expect("instant"))
    }

    #[test]
    fn status_follows_the_outcome() {
        let exhausted =
            with_outcome(&claim(), &Outcome::Exhausted("InClusterIPPool ns/p has no free address".into()), &at(10));
        let s = exhausted.status.as_ref().expect("status");
        assert_eq!(s.address_ref, None);
        let ready = v1beta2_conditions::get(s.conditions.as_deref().unwrap_or_default(), READY).expect("Ready");
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("False", POOL_EXHAUSTED));
        assert_eq!(ready.message, "InClusterIPPool ns/p has no free address");
        assert_eq!(ready.observed_generation, Some(1));
        assert_eq!(ready_reason(&exhausted), Some(POOL_EXHAUSTED));
        let v1 = s.deprecated.as_ref().and_then(|d| d.v1beta1.as_ref()).and_then(|v| v.conditions.as_ref());
        assert!(v1.is_some_and(|c| conditions::is_false(c, READY)));

        let again =
            with_outcome(&exhausted, &Outcome::Exhausted("InClusterIPPool ns/p has no free address".into()), &at(20));
        assert_eq!(again, exhausted, "recomputing changes nothing");

        let allocated = with_outcome(&exhausted, &Outcome::Allocated("m-0".into()), &at(30));
        let s = allocated.status.as_ref().expect("status");
        assert_eq!(s.address_ref, Some(IPAddressReference { name: "m-0".into() }));
        let ready = v1beta2_conditions::get(s.conditions.as_deref().unwrap_or_default(), READY).expect("Ready");
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("True", ADDRESS_ALLOCATED));
        assert_eq!(ready.last_transition_time, at(30));
    }

    #[test]
    fn the_cluster_is_named_by_spec_then_label() {
        let mut c = claim();
        assert_eq!(cluster_name(&c), None);
        c.metadata.labels = Some([(CLUSTER_NAME_LABEL.to_string(), "from-label".to_string())].into());
        assert_eq!(cluster_name(&c), Some("from-label"));
        c.spec.cluster_name = Some("from-spec".into());
        assert_eq!(cluster_name(&c), Some("from-spec"));
    }
}
