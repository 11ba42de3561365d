//! IPAddress: the same fields in both versions; the references change type, an empty
//! gateway is unset in v1beta2.

use k8s_openapi::api::core::v1::LocalObjectReference;

use super::{pool_ref_down, pool_ref_up};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::ipam::{IPAddress, IPAddressSpec, v1beta2};

pub struct IPAddressConversion;

impl HubSpoke for IPAddressConversion {
    type Hub = v1beta2::IPAddress;
    type Spoke = IPAddress;

    fn up(s: IPAddress, _ctx: &Ctx<'_>) -> v1beta2::IPAddress {
        let IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway } = s.spec;
        v1beta2::IPAddress {
            metadata: s.metadata,
            spec: v1beta2::IPAddressSpec {
                claim_ref: v1beta2::IPAddressClaimReference { name: claim_ref.name },
                pool_ref: pool_ref_up(pool_ref),
                address,
                prefix,
                gateway: non_empty(gateway),
            },
        }
    }

    fn down(h: v1beta2::IPAddress, _ctx: &Ctx<'_>) -> IPAddress {
        let v1beta2::IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway } = h.spec;
        IPAddress {
            metadata: h.metadata,
            spec: IPAddressSpec {
                claim_ref: LocalObjectReference { name: claim_ref.name },
                pool_ref: pool_ref_down(pool_ref),
                address,
                prefix,
                gateway,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

    /// An address the in-cluster provider allocated, as v1beta1 stores it.
    fn v1beta1_address() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta1",
            "kind": "IPAddress",
            "metadata": {
                "name": "workers-abc12-vip",
                "namespace": "default",
                "labels": {"cluster.x-k8s.io/cluster-name": "in-memory"},
                "finalizers": ["ipam.cluster.x-k8s.io/ProtectAddress"],
                "ownerReferences": [{
                    "apiVersion": "ipam.cluster.x-k8s.io/v1beta1",
                    "kind": "IPAddressClaim",
                    "name": "workers-abc12-vip",
                    "uid": "7b1d4c8e-0000-4000-8000-000000000001",
                    "controller": true,
                    "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "address": "10.0.0.17",
                "prefix": 24,
                "gateway": "10.0.0.1",
                "claimRef": {"name": "workers-abc12-vip"},
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "node-ips"},
            },
        })
    }

    #[test]
    fn converts_up_with_typed_references() {
        let v1 = v1beta1_address();
        let v2 = up::<IPAddressConversion>(&v1);
        assert_eq!(v2["apiVersion"], "ipam.cluster.x-k8s.io/v1beta2");
        assert_eq!(v2["metadata"], v1["metadata"]);
        assert_eq!(
            v2["spec"],
            json!({
                "address": "10.0.0.17",
                "prefix": 24,
                "gateway": "10.0.0.1",
                "claimRef": {"name": "workers-abc12-vip"},
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "node-ips"},
            })
        );
        assert_eq!(strip_conversion_data(v2.clone()), v2, "nothing is lossy");
        assert_round_trips::<IPAddressConversion>(&v1);
    }

    #[test]
    fn converts_down_with_core_references() {
        let v2 = json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta2",
            "kind": "IPAddress",
            "metadata": {"name": "cp-0", "namespace": "ns"},
            "spec": {
                "address": "fd00::a",
                "prefix": 64,
                "claimRef": {"name": "cp-0"},
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "GlobalInClusterIPPool", "name": "v6"},
            },
        });
        let v1 = down::<IPAddressConversion>(&v2);
        assert_eq!(v1["apiVersion"], "ipam.cluster.x-k8s.io/v1beta1");
        assert_eq!(v1["spec"]["address"], "fd00::a");
        assert_eq!(v1["spec"]["prefix"], 64);
        assert_eq!(v1["spec"]["claimRef"], json!({"name": "cp-0"}));
        assert_eq!(v1["spec"]["poolRef"]["apiGroup"], "ipam.cluster.x-k8s.io");
        assert_eq!(v1["spec"]["poolRef"]["kind"], "GlobalInClusterIPPool");
        assert!(v1["spec"].get("gateway").is_none());
        assert_eq!(strip_conversion_data(v1.clone()), v1, "nothing is lossy");
        assert_round_trips::<IPAddressConversion>(&v2);
    }

    #[test]
    fn empty_gateway_and_missing_group_are_unset_and_come_back() {
        let mut v1 = v1beta1_address();
        v1["spec"]["gateway"] = json!("");
        v1["spec"]["poolRef"].as_object_mut().map(|m| m.remove("apiGroup"));
        let v2 = up::<IPAddressConversion>(&v1);
        let typed = strip_conversion_data(v2.clone());
        assert!(typed["spec"].get("gateway").is_none());
        assert_eq!(typed["spec"]["poolRef"]["apiGroup"], "");
        assert_round_trips::<IPAddressConversion>(&v1);
    }
}
