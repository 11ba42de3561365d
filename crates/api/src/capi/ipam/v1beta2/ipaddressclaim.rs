//! IPAddressClaim v1beta2: `metav1.Condition`s in `status.conditions`, the v1beta1-style
//! conditions under `status.deprecated.v1beta1`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{IPPoolReference, SUBDOMAIN_PATTERN};
use crate::capi::conditions::Condition;

/// A request for an address from a pool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ipam.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "IPAddressClaim",
    namespaced,
    status = "IPAddressClaimStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An IPAddressClaim asks a pool for an IP address.",
    printcolumn = r#"{"description":"Name of the pool to allocate an address from","jsonPath":".spec.poolRef.name","name":"Pool Name","type":"string"}"#,
    printcolumn = r#"{"description":"Kind of the pool to allocate an address from","jsonPath":".spec.poolRef.kind","name":"Pool Kind","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the IPAddressClaim was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimSpec {
    /// Cluster the claim belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: Option<String>,
    /// Pool to allocate from.
    pub pool_ref: IPPoolReference,
}

/// Observed state of an IPAddressClaim; when present, it is not empty.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1))]
pub struct IPAddressClaimStatus {
    /// Observations about the claim, one per type (`Ready`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// The IPAddress allocated for the claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_ref: Option<IPAddressReference>,
    /// Fields kept only while v1beta1 is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<IPAddressClaimDeprecatedStatus>,
}

/// The IPAddress allocated for a claim, in the claim's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressReference {
    /// Name of the IPAddress.
    #[schemars(length(min = 1, max = 253), regex(pattern = SUBDOMAIN_PATTERN))]
    pub name: String,
}

/// Deprecated status fields of an IPAddressClaim, grouped by the version that still has them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimDeprecatedStatus {
    /// What v1beta1 shows and v1beta2 replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<IPAddressClaimV1Beta1DeprecatedStatus>,
}

/// The v1beta1 status fields v1beta2 keeps only for v1beta1 readers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IPAddressClaimV1Beta1DeprecatedStatus {
    /// The v1beta1 conditions (with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

#[cfg(test)]
mod tests {
    use kube::CustomResourceExt;
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::ipam::v1beta2::IPAddress;

    fn schema<K: CustomResourceExt>() -> Value {
        let crd = serde_json::to_value(K::crd()).unwrap();
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
    }

    #[test]
    fn schemas_carry_upstreams_bounds_and_list_markers() {
        let claim = schema::<IPAddressClaim>();
        let status = &claim["properties"]["status"];
        assert_eq!(status["minProperties"], 1);
        let conditions = &status["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
        assert_eq!(conditions["maxItems"], 32);
        let name = &status["properties"]["addressRef"]["properties"]["name"];
        assert_eq!(name["pattern"], super::super::SUBDOMAIN_PATTERN);
        assert_eq!(name["maxLength"], 253);
        let pool = &claim["properties"]["spec"]["properties"]["poolRef"];
        assert_eq!(pool["required"], json!(["apiGroup", "kind", "name"]));
        assert_eq!(pool["properties"]["kind"]["pattern"], "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$");

        let address = schema::<IPAddress>();
        let spec = &address["properties"]["spec"];
        assert_eq!(spec["properties"]["prefix"]["maximum"].as_f64(), Some(128.0));
        assert_eq!(spec["properties"]["address"]["maxLength"], 39);
        assert_eq!(spec["properties"]["gateway"]["minLength"], 1);
    }
}
