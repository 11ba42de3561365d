//! Addresses from IP pools: a machine with `addressesFromPools` claims an address from each
//! pool (an IPAddressClaim `<machine>-<index>` it owns, so the claim and its address go
//! when the machine does) and starts only once every claim is fulfilled; the addresses are
//! reported in its status, from where the Machine controller copies them to the Machine.

use drydock_api::capi::core::v1beta2::MachineAddress;
use drydock_api::capi::ipam::v1beta2::{IPAddressClaim, IPAddressClaimSpec, IPPoolReference};
use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::owner;
use drydock_controllers::framework::Result;
use drydock_controllers::framework::write::create_if_absent;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;

use super::MachineCtx;
use crate::kinds::SimulatedMachine;

/// Reason of `VMProvisioned` while a pool has not handed out the machine's address yet.
pub const WAITING_FOR_IP_ADDRESSES: &str = "WaitingForIPAddresses";

/// The machine's pool addresses, or what is still awaited.
pub(super) enum Claimed {
    Ready(Vec<MachineAddress>),
    Waiting(String),
}

/// Makes sure the machine's claims exist and reads their addresses.
pub(super) async fn claim<K: SimulatedMachine>(c: &MachineCtx, imm: &K, cluster: &str) -> Result<Claimed> {
    let pools = imm.addresses_from_pools();
    let ns = imm.namespace().unwrap_or_default();
    let informers = &c.p.ctx.informers;
    let api: Api<IPAddressClaim> = c.p.ctx.api(&ns);
    let mut addresses = Vec::new();
    let mut awaited = Vec::new();
    for (i, pool) in pools.iter().enumerate() {
        let name = claim_name(&imm.name_any(), i);
        let Some(claim) = informers.ip_address_claims.store.get(&ObjectRef::new(&name).within(&ns)) else {
            create_if_absent(&api, K::CONTROLLER, &new_claim(imm, &name, pool, cluster)).await?;
            awaited.push(name);
            continue;
        };
        let address = claim
            .status
            .as_ref()
            .and_then(|s| s.address_ref.as_ref())
            .and_then(|r| informers.ip_addresses.store.get(&ObjectRef::new(&r.name).within(&ns)));
        match address {
            Some(a) => addresses.push(MachineAddress { type_: "InternalIP".into(), address: a.spec.address.clone() }),
            None => awaited.push(name),
        }
    }
    Ok(if awaited.is_empty() {
        Claimed::Ready(addresses)
    } else {
        Claimed::Waiting(format!("Waiting for an address for IPAddressClaim {}", awaited.join(", ")))
    })
}

/// The claim of the machine's `index`-th pool.
pub fn claim_name(machine: &str, index: usize) -> String {
    format!("{machine}-{index}")
}

fn new_claim<K: SimulatedMachine>(
    imm: &K,
    name: &str,
    pool: &k8s_openapi::api::core::v1::TypedLocalObjectReference,
    cluster: &str,
) -> IPAddressClaim {
    let pool_ref = IPPoolReference {
        name: pool.name.clone(),
        kind: pool.kind.clone(),
        api_group: pool.api_group.clone().unwrap_or_default(),
    };
    let spec = IPAddressClaimSpec { cluster_name: Some(cluster.to_string()), pool_ref };
    let mut claim = IPAddressClaim::new(name, spec);
    claim.metadata.namespace = imm.namespace();
    claim.metadata.labels = Some([(CLUSTER_NAME_LABEL.to_string(), cluster.to_string())].into());
    claim.metadata.owner_references = owner::controller_ref(imm).map(|o| vec![o]);
    claim
}
