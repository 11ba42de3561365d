//! A claim's IPAddress: allocated and created once (then kept: addresses are sticky), and
//! released when the claim is deleted.
//!
//! The IPAddress has the claim's name and namespace, the pool's prefix and gateway, the
//! claim as its controller and the pool as a (non-controller) owner, the claim's
//! cluster-name label, and the `ipam.cluster.x-k8s.io/ProtectAddress` finalizer: deleting it
//! while its claim exists leaves it in place, in use, until the claim goes.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::ipam::v1beta2::{IPAddress, IPAddressClaim, IPAddressClaimReference, IPAddressSpec};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, IPAM_PROTECT_ADDRESS_FINALIZER, IPAM_RELEASE_ADDRESS_FINALIZER};
use drydock_api::capi::owner;
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};

use super::allocate::{self, Allocatable};
use super::claim::State;
use super::pool_ref::{AnyPool, PoolId};
use crate::framework::requeue::Requeue;
use crate::framework::write::{self, add_finalizer, controller_ref_of, remove_finalizer};
use crate::framework::{Error, Result};

/// How long an allocation waits for the store to show the IPAddress it created: until it
/// does, the next allocation would not see the address in use.
const VISIBLE_WITHIN: Duration = Duration::from_secs(5);
const VISIBLE_POLL: Duration = Duration::from_millis(5);

/// What allocating for a claim came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The claim's IPAddress (by name) exists.
    Allocated(String),
    /// Every address of the pool is in use.
    Exhausted(String),
    /// The pool does not exist or is being deleted.
    PoolNotReady(String),
    /// No address can be allocated for another reason.
    Failed(String),
}

/// True when `a` is the address allocated for `claim` from `pool`.
fn belongs(a: &IPAddress, claim: &IPAddressClaim, pool: &PoolId) -> bool {
    let ns = a.metadata.namespace.as_deref().unwrap_or_default();
    a.spec.claim_ref.name == claim.name_any() && pool.is_named_by(&a.spec.pool_ref, ns)
}

/// The claim's IPAddress: the existing one, else a new one with the pool's lowest free
/// address.
pub(super) async fn ensure(
    state: &State,
    claim: &IPAddressClaim,
    id: &PoolId,
    pool: Option<&AnyPool>,
) -> Result<Outcome> {
    let (ns, name) = (claim.metadata.namespace.clone().unwrap_or_default(), claim.name_any());
    let store = &state.ctx.informers.ip_addresses.store;
    let api: Api<IPAddress> = state.ctx.api(&ns);
    if let Some(existing) = store.get(&ObjectRef::new(&name).within(&ns)) {
        if !belongs(&existing, claim, id) {
            return Ok(Outcome::Failed(format!("IPAddress {name} exists and is not this claim's address from {id}")));
        }
        if let Some(pool) = pool {
            protect(state, &api, claim, pool, &existing).await?;
        }
        return Ok(Outcome::Allocated(name));
    }
    let Some(pool) = pool.filter(|p| p.meta().deletion_timestamp.is_none()) else {
        let why = if pool.is_some() { "is being deleted" } else { "not found" };
        return Ok(Outcome::PoolNotReady(format!("{id} {why}")));
    };
    let allocatable = match Allocatable::from_spec(pool.spec()) {
        Ok(a) => a,
        Err(e) => return Ok(Outcome::Failed(format!("{id}: {e}"))),
    };
    let in_use = id.addresses(store);
    let mut used = allocate::numbers(in_use.iter().map(|a| a.spec.address.as_str()), allocatable.is_ipv4());
    used.extend(allocatable.gateway());
    let Some(ip) = allocatable.first_free(&used) else {
        return Ok(Outcome::Exhausted(format!("{id} has no free address")));
    };
    let address = build(claim, id, pool, ip)?;
    let created = match write::create(&api, state.addresses.controller(), &address).await {
        Ok(a) => a,
        // An earlier reconcile created it and the store does not show it yet: it is kept.
        Err(kube::Error::Api(s)) if s.code == 409 => {
            let existing = api.get(&name).await?;
            if !belongs(&existing, claim, id) {
                return Ok(Outcome::Failed(format!(
                    "IPAddress {name} exists and is not this claim's address from {id}"
                )));
            }
            existing
        }
        Err(e) => return Err(e.into()),
    };
    if !visible(store, &created).await {
        tracing::warn!(address = %name, namespace = %ns, "the new IPAddress is not in the store yet; allocating on");
    }
    Ok(Outcome::Allocated(name))
}

/// The IPAddress holding `ip` for `claim`.
fn build(claim: &IPAddressClaim, id: &PoolId, pool: &AnyPool, ip: IpAddr) -> Result<IPAddress> {
    let spec = pool.spec();
    let mut a = IPAddress::new(
        &claim.name_any(),
        IPAddressSpec {
            claim_ref: IPAddressClaimReference { name: claim.name_any() },
            pool_ref: id.reference(),
            address: ip.to_string(),
            prefix: spec.prefix,
            gateway: spec.gateway.clone(),
        },
    );
    a.metadata.namespace.clone_from(&claim.metadata.namespace);
    a.metadata.finalizers = Some(vec![IPAM_PROTECT_ADDRESS_FINALIZER.to_string()]);
    if let Some(cluster) = claim.labels().get(CLUSTER_NAME_LABEL) {
        a.metadata.labels = Some([(CLUSTER_NAME_LABEL.to_string(), cluster.clone())].into());
    }
    let mut owners = vec![controller_ref_of(claim)?];
    owners.extend(pool.owner_ref());
    a.metadata.owner_references = Some(owners);
    Ok(a)
}

/// Puts back the finalizer and owner references of an existing address (as upstream's
/// create-or-patch does), unless it is being deleted. A controller other than the claim is
/// tolerated.
async fn protect(
    state: &State,
    api: &Api<IPAddress>,
    claim: &IPAddressClaim,
    pool: &AnyPool,
    existing: &Arc<IPAddress>,
) -> Result<()> {
    if existing.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let mut want = (**existing).clone();
    add_finalizer(&mut want, IPAM_PROTECT_ADDRESS_FINALIZER);
    let claim_ref = controller_ref_of(claim)?;
    let controlled_by_other =
        owner::get_controller(&want.metadata).is_some_and(|c| c.kind != claim_ref.kind || c.name != claim_ref.name);
    if !controlled_by_other {
        owner::ensure_owner_ref(&mut want.metadata, claim_ref);
    }
    if let Some(r) = pool.owner_ref() {
        owner::ensure_owner_ref(&mut want.metadata, r);
    }
    if want != **existing {
        state.addresses.apply(api, existing, &want).await?;
    }
    Ok(())
}

/// Waits (bounded) until the store shows `created`.
async fn visible(store: &Store<IPAddress>, created: &IPAddress) -> bool {
    let r = ObjectRef::from_obj(created);
    let deadline = tokio::time::Instant::now() + VISIBLE_WITHIN;
    loop {
        if store.get(&r).is_some_and(|a| a.metadata.uid == created.metadata.uid) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(VISIBLE_POLL).await;
    }
}

/// When a deleted claim's address may be handed out again: its deletion plus the pool's
/// `addressReuseGracePeriodSeconds` (an address reused at once can meet stale ARP caches).
/// `None` when there is no grace period: none set, or the pool is gone or going.
pub(super) fn reusable_at(claim: &IPAddressClaim, pool: Option<&AnyPool>) -> Option<Timestamp> {
    let pool = pool.filter(|p| p.meta().deletion_timestamp.is_none())?;
    let grace = pool.spec().address_reuse_grace_period_seconds.filter(|g| *g > 0)?;
    let deleted = claim.metadata.deletion_timestamp.as_ref()?.0;
    deleted.checked_add(SignedDuration::from_secs(grace.into())).ok()
}

/// Releases a deleted claim's address: once the pool's reuse grace period is over, the
/// IPAddress loses its finalizer and is deleted, then the claim loses its own. The
/// IPAddress is read from the API, not the store: one the store has not shown yet would
/// otherwise be left behind, held by its finalizer forever.
pub(super) async fn release(state: &State, claim: &Arc<IPAddressClaim>, pool: Option<&AnyPool>) -> Result<Requeue> {
    if !claim.finalizers().iter().any(|f| f == IPAM_RELEASE_ADDRESS_FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let clock = state.ctx.clock();
    if let Some(at) = reusable_at(claim, pool).filter(|at| *at > clock.now()) {
        // The address stays reserved (its IPAddress, and so the claim, stay) until then.
        return Ok(Requeue::at(clock, at));
    }
    let (ns, name) = (claim.metadata.namespace.clone().unwrap_or_default(), claim.name_any());
    let addresses: Api<IPAddress> = state.ctx.api(&ns);
    if let Some(existing) = addresses.get_opt(&name).await?
        && existing.spec.claim_ref.name == name
    {
        let mut want = existing.clone();
        if remove_finalizer(&mut want, IPAM_PROTECT_ADDRESS_FINALIZER) {
            match state.addresses.apply(&addresses, &existing, &want).await {
                Ok(_) | Err(Error::Gone(_)) => {}
                Err(e) => return Err(e),
            }
        }
        if existing.metadata.deletion_timestamp.is_none() {
            state.addresses.delete_if_present(&addresses, &name).await?;
        }
    }
    let mut want = (**claim).clone();
    remove_finalizer(&mut want, IPAM_RELEASE_ADDRESS_FINALIZER);
    state.claims.forget(claim.as_ref());
    state.claims.apply(&state.ctx.api::<IPAddressClaim>(&ns), claim, &want).await?;
    Ok(Requeue::await_change())
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::ipam::v1beta2::{IPAddressClaimSpec, IPPoolReference};
    use drydock_api::capi::ipam::{InClusterIPPool, InClusterIPPoolSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn pool(grace: Option<i32>, deleting: bool) -> AnyPool {
        let spec = InClusterIPPoolSpec { address_reuse_grace_period_seconds: grace, ..Default::default() };
        let mut p = InClusterIPPool::new("p", spec);
        if deleting {
            p.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(10).expect("instant")));
        }
        AnyPool::Namespaced(Arc::new(p))
    }

    #[test]
    fn a_released_address_is_reusable_after_the_grace_period_of_a_pool_still_there() {
        let pool_ref = IPPoolReference { name: "p".into(), kind: "InClusterIPPool".into(), api_group: String::new() };
        let mut claim = IPAddressClaim::new("c", IPAddressClaimSpec { cluster_name: None, pool_ref });
        assert_eq!(reusable_at(&claim, Some(&pool(Some(30), false))), None, "not deleted");
        claim.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_000).expect("instant")));
        let at = reusable_at(&claim, Some(&pool(Some(30), false)));
        assert_eq!(at, Some(Timestamp::from_second(1_030).expect("instant")));
        assert_eq!(reusable_at(&claim, Some(&pool(None, false))), None, "no grace period");
        assert_eq!(reusable_at(&claim, Some(&pool(Some(0), false))), None, "a zero one");
        assert_eq!(reusable_at(&claim, Some(&pool(Some(30), true))), None, "the pool is going");
        assert_eq!(reusable_at(&claim, None), None, "the pool is gone");
    }
}
