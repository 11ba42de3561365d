//! IPAddressClaim and IPAddress v1alpha1 to and from the hub. v1alpha1 has v1beta1's fields
//! but the claim's `clusterName`, so each goes by way of v1beta1's conversion; the lossless
//! layer keeps a cluster name (and the v1beta2 conditions) v1alpha1 cannot show.

use super::{IPAddressClaimConversion, IPAddressConversion};
use crate::capi::conversion::{Ctx, HubSpoke};
use crate::capi::ipam::{self, v1alpha1, v1beta2};

pub struct IPAddressClaimV1Alpha1Conversion;

impl HubSpoke for IPAddressClaimV1Alpha1Conversion {
    type Hub = v1beta2::IPAddressClaim;
    type Spoke = v1alpha1::IPAddressClaim;

    fn up(s: v1alpha1::IPAddressClaim, ctx: &Ctx<'_>) -> v1beta2::IPAddressClaim {
        let beta = ipam::IPAddressClaim {
            metadata: s.metadata,
            spec: ipam::IPAddressClaimSpec { cluster_name: None, pool_ref: s.spec.pool_ref },
            status: s.status,
        };
        IPAddressClaimConversion::up(beta, ctx)
    }

    fn down(h: v1beta2::IPAddressClaim, ctx: &Ctx<'_>) -> v1alpha1::IPAddressClaim {
        let beta = IPAddressClaimConversion::down(h, ctx);
        v1alpha1::IPAddressClaim {
            metadata: beta.metadata,
            spec: v1alpha1::IPAddressClaimSpec { pool_ref: beta.spec.pool_ref },
            status: beta.status,
        }
    }
}

pub struct IPAddressV1Alpha1Conversion;

impl HubSpoke for IPAddressV1Alpha1Conversion {
    type Hub = v1beta2::IPAddress;
    type Spoke = v1alpha1::IPAddress;

    fn up(s: v1alpha1::IPAddress, ctx: &Ctx<'_>) -> v1beta2::IPAddress {
        let v1alpha1::IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway } = s.spec;
        let beta = ipam::IPAddress {
            metadata: s.metadata,
            spec: ipam::IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway },
        };
        IPAddressConversion::up(beta, ctx)
    }

    fn down(h: v1beta2::IPAddress, ctx: &Ctx<'_>) -> v1alpha1::IPAddress {
        let beta = IPAddressConversion::down(h, ctx);
        let ipam::IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway } = beta.spec;
        v1alpha1::IPAddress {
            metadata: beta.metadata,
            spec: v1alpha1::IPAddressSpec { claim_ref, pool_ref, address, prefix, gateway },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::conversion::lossless::Native;
    use crate::capi::conversion::testing::strip_conversion_data;
    use crate::conversion::{Conversion, NoRefVersions};

    fn claims() -> Native<v1beta2::IPAddressClaim> {
        Native::of::<IPAddressClaimConversion>().with_spoke::<IPAddressClaimV1Alpha1Conversion>()
    }

    fn convert(c: &dyn Conversion, obj: &Value, to: &str) -> Value {
        c.convert(obj.clone(), &format!("ipam.cluster.x-k8s.io/{to}"), &NoRefVersions).expect("converts")
    }

    /// A claim as a provider on the v1alpha1 contract writes it.
    fn v1alpha1_claim() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1alpha1",
            "kind": "IPAddressClaim",
            "metadata": {"name": "m-0", "namespace": "default", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
            "spec": {"poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "p"}},
            "status": {
                "addressRef": {"name": "m-0"},
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-06-01T10:00:00Z"}],
            },
        })
    }

    #[test]
    fn a_v1alpha1_claim_reads_in_every_version_and_comes_back() {
        let c = claims();
        let alpha = v1alpha1_claim();
        let hub = convert(&c, &alpha, "v1beta2");
        assert_eq!(hub["spec"], alpha["spec"]);
        assert_eq!(hub["status"]["deprecated"]["v1beta1"]["conditions"], alpha["status"]["conditions"]);
        assert_eq!(strip_conversion_data(hub.clone()), hub, "v1alpha1 holds nothing v1beta2 lacks");
        let beta = convert(&c, &alpha, "v1beta1");
        assert_eq!(beta["spec"], alpha["spec"]);
        assert_eq!(beta["status"], alpha["status"]);
        assert_eq!(convert(&c, &hub, "v1alpha1"), alpha);
        assert_eq!(convert(&c, &beta, "v1alpha1"), alpha);
    }

    #[test]
    fn a_cluster_name_v1alpha1_cannot_show_survives_a_v1alpha1_client() {
        let c = claims();
        let mut beta = convert(&c, &v1alpha1_claim(), "v1beta1");
        beta["spec"]["clusterName"] = json!("c1");
        let alpha = convert(&c, &beta, "v1alpha1");
        assert!(strip_conversion_data(alpha.clone())["spec"].get("clusterName").is_none());
        // A v1alpha1 client writes back what it read, with a label of its own.
        let mut written = alpha.clone();
        written["metadata"]["labels"]["owner"] = json!("provider");
        let stored = convert(&c, &written, "v1beta1");
        assert_eq!(stored["spec"]["clusterName"], "c1");
        assert_eq!(stored["metadata"]["labels"]["owner"], "provider");
        assert_eq!(convert(&c, &alpha, "v1beta1"), beta, "read and written back unchanged: identical");
    }

    #[test]
    fn addresses_convert_field_for_field() {
        let c = Native::of::<IPAddressConversion>().with_spoke::<IPAddressV1Alpha1Conversion>();
        let alpha = json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1alpha1",
            "kind": "IPAddress",
            "metadata": {"name": "m-0", "namespace": "default"},
            "spec": {
                "claimRef": {"name": "m-0"},
                "poolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "p"},
                "address": "10.0.0.7",
                "prefix": 24,
                "gateway": "10.0.0.1",
            },
        });
        for to in ["v1beta1", "v1beta2"] {
            let there = convert(&c, &alpha, to);
            assert_eq!(there["spec"], alpha["spec"], "{to}");
            assert_eq!(convert(&c, &there, "v1alpha1"), alpha, "{to}");
        }
    }
}
