//! IPAddressClaim: the spec's fields are the same (typed pool reference, an empty cluster
//! name is unset in v1beta2); v1beta1's conditions move to `status.deprecated.v1beta1`.
//! The v1beta2 conditions have no place in drydock's v1beta1 type: the lossless layer keeps
//! them.

use k8s_openapi::api::core::v1::LocalObjectReference;

use super::{pool_ref_down, pool_ref_up};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::ipam::{IPAddressClaim, IPAddressClaimSpec, IPAddressClaimStatus, v1beta2};

pub struct IPAddressClaimConversion;

fn status_up(s: IPAddressClaimStatus) -> v1beta2::IPAddressClaimStatus {
    let IPAddressClaimStatus { address_ref, conditions } = s;
    v1beta2::IPAddressClaimStatus {
        conditions: None,
        // An empty name is the zero value v1beta2 omits.
        address_ref: address_ref.filter(|r| !r.name.is_empty()).map(|r| v1beta2::IPAddressReference { name: r.name }),
        deprecated: conditions.map(|c| v1beta2::IPAddressClaimDeprecatedStatus {
            v1beta1: Some(v1beta2::IPAddressClaimV1Beta1DeprecatedStatus { conditions: Some(c) }),
        }),
    }
}

fn status_down(s: v1beta2::IPAddressClaimStatus) -> IPAddressClaimStatus {
    let v1beta2::IPAddressClaimStatus { conditions: _, address_ref, deprecated } = s;
    IPAddressClaimStatus {
        address_ref: address_ref.map(|r| LocalObjectReference { name: r.name }),
        conditions: deprecated.and_then(|d| d.v1beta1).and_then(|d| d.conditions),
    }
}

impl HubSpoke for IPAddressClaimConversion {
    type Hub = v1beta2::IPAddressClaim;
    type Spoke = IPAddressClaim;

    fn up(s: IPAddressClaim, _ctx: &Ctx<'_>) -> v1beta2::IPAddressClaim {
        let IPAddressClaimSpec { cluster_name, pool_ref } = s.spec;
        v1beta2::IPAddressClaim {
            metadata: s.metadata,
            spec: v1beta2::IPAddressClaimSpec {
                cluster_name: non_empty(cluster_name),
                pool_ref: pool_ref_up(pool_ref),
            },
            status: s.status.map(status_up),
        }
    }

    fn down(h: v1beta2::IPAddressClaim, _ctx: &Ctx<'_>) -> IPAddressClaim {
        let v1beta2::IPAddressClaimSpec { cluster_name, pool_ref } = h.spec;
        IPAddressClaim {
            metadata: h.metadata,
            spec: IPAddressClaimSpec { cluster_name, pool_ref: pool_ref_down(pool_ref) },
            status: h.status.map(status_down),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::conversion::CONVERSION_DATA;
    use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

    /// A claim a machine's infrastructure made for its address, fulfilled by the in-cluster
    /// provider, as v1beta1 stores it.
    fn v1beta1_claim() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta1",
            "kind": "IPAddressClaim",
            "metadata": {
                "name": "in-memory-md-0-x7k2p-0",
                "namespace": "default",
                "generation": 1,
                "labels": {"cluster.x-k8s.io/cluster-name": "in-memory"},
                "finalizers": ["ipam.cluster.x-k8s.io/ReleaseAddress"],
                "ownerReferences": [{
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                    "kind": "InMemoryMachine",
                    "name": "in-memory-md-0-x7k2p",
                    "uid": "0b7e2a55-0000-4000-8000-000000000002",
                    "controller": true,
                }],
            },
            "spec": {
                "clusterName": "in-memory",
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "node-ips"},
            },
            "status": {
                "addressRef": {"name": "in-memory-md-0-x7k2p-0"},
                "conditions": [{
                    "type": "Ready",
                    "status": "True",
                    "lastTransitionTime": "2025-06-01T10:00:00Z",
                }],
            },
        })
    }

    /// The same claim as a v1beta2 provider writes it.
    fn v1beta2_claim() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta2",
            "kind": "IPAddressClaim",
            "metadata": {"name": "cp-vip", "namespace": "ns", "generation": 2},
            "spec": {
                "clusterName": "c1",
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "GlobalInClusterIPPool", "name": "vips"},
            },
            "status": {
                "conditions": [{
                    "type": "Ready",
                    "status": "False",
                    "reason": "PoolExhausted",
                    "message": "pool vips has no free address",
                    "observedGeneration": 2,
                    "lastTransitionTime": "2025-06-01T10:00:00Z",
                }],
                "deprecated": {"v1beta1": {"conditions": [{
                    "type": "Ready",
                    "status": "False",
                    "severity": "Error",
                    "reason": "PoolExhausted",
                    "message": "pool vips has no free address",
                    "lastTransitionTime": "2025-06-01T10:00:00Z",
                }]}},
            },
        })
    }

    #[test]
    fn converts_up_with_conditions_under_deprecated() {
        let v1 = v1beta1_claim();
        let v2 = up::<IPAddressClaimConversion>(&v1);
        assert_eq!(v2["apiVersion"], "ipam.cluster.x-k8s.io/v1beta2");
        assert_eq!(v2["metadata"], v1["metadata"]);
        assert_eq!(v2["spec"], v1["spec"]);
        assert_eq!(v2["status"]["addressRef"], json!({"name": "in-memory-md-0-x7k2p-0"}));
        assert_eq!(v2["status"]["deprecated"]["v1beta1"]["conditions"], v1["status"]["conditions"]);
        assert!(v2["status"].get("conditions").is_none());
        assert_eq!(strip_conversion_data(v2.clone()), v2, "nothing is lossy");
        assert_round_trips::<IPAddressClaimConversion>(&v1);
    }

    #[test]
    fn converts_down_with_deprecated_conditions_as_the_conditions() {
        let v2 = v1beta2_claim();
        let v1 = down::<IPAddressClaimConversion>(&v2);
        assert_eq!(v1["apiVersion"], "ipam.cluster.x-k8s.io/v1beta1");
        assert_eq!(v1["spec"], v2["spec"]);
        let typed = strip_conversion_data(v1.clone());
        assert_eq!(typed["metadata"], v2["metadata"]);
        assert_eq!(typed["status"], json!({"conditions": v2["status"]["deprecated"]["v1beta1"]["conditions"]}));
        // The v1beta2 conditions have no v1beta1 field here: the annotation keeps them.
        assert!(v1["metadata"]["annotations"][CONVERSION_DATA].is_string());
        assert_round_trips::<IPAddressClaimConversion>(&v2);
    }

    #[test]
    fn a_v1beta2_claim_without_new_conditions_converts_down_without_loss() {
        let mut v2 = v1beta2_claim();
        let status = v2["status"].as_object_mut().unwrap();
        status.remove("conditions");
        status.insert("addressRef".into(), json!({"name": "cp-vip"}));
        let v1 = down::<IPAddressClaimConversion>(&v2);
        assert_eq!(strip_conversion_data(v1.clone()), v1, "nothing is lossy");
        assert_eq!(v1["status"]["addressRef"], json!({"name": "cp-vip"}));
        assert_eq!(v1["status"]["conditions"][0]["severity"], "Error");
        assert_round_trips::<IPAddressClaimConversion>(&v2);
    }

    #[test]
    fn empty_values_are_unset_in_v1beta2_and_come_back() {
        let mut v1 = v1beta1_claim();
        v1["spec"]["clusterName"] = json!("");
        v1["spec"]["poolRef"].as_object_mut().unwrap().remove("apiGroup");
        v1["status"]["addressRef"] = json!({"name": ""});
        let typed = strip_conversion_data(up::<IPAddressClaimConversion>(&v1));
        assert!(typed["spec"].get("clusterName").is_none());
        assert!(typed["status"].get("addressRef").is_none());
        assert_round_trips::<IPAddressClaimConversion>(&v1);
        let unclaimed = json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta1",
            "kind": "IPAddressClaim",
            "metadata": {"name": "new", "namespace": "default"},
            "spec": {"poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "p"}},
        });
        let v2 = up::<IPAddressClaimConversion>(&unclaimed);
        assert!(v2.get("status").is_none());
        assert_eq!(strip_conversion_data(v2.clone()), v2);
        assert_round_trips::<IPAddressClaimConversion>(&unclaimed);
    }
}
