//! ClusterResourceSet and ClusterResourceSetBinding: the same fields in both versions; the
//! status conditions swap places as for every kind.

use super::{v1beta1 as v1, v1beta2 as v2};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};

pub struct ClusterResourceSetConversion;

impl HubSpoke for ClusterResourceSetConversion {
    type Hub = v2::ClusterResourceSet;
    type Spoke = v1::ClusterResourceSet;

    fn up(s: v1::ClusterResourceSet, _ctx: &Ctx<'_>) -> v2::ClusterResourceSet {
        let v1::ClusterResourceSetSpec { cluster_selector, resources, strategy } = s.spec;
        let status = s.status.map(|st| v2::ClusterResourceSetStatus {
            conditions: st.v1beta2.and_then(|v| v.conditions),
            observed_generation: st.observed_generation,
            deprecated: st.conditions.map(|c| v2::ClusterResourceSetDeprecatedStatus {
                v1beta1: Some(v2::ClusterResourceSetV1Beta1DeprecatedStatus { conditions: Some(c) }),
            }),
        });
        v2::ClusterResourceSet {
            metadata: s.metadata,
            spec: v2::ClusterResourceSetSpec { cluster_selector, resources, strategy },
            status,
        }
    }

    fn down(h: v2::ClusterResourceSet, _ctx: &Ctx<'_>) -> v1::ClusterResourceSet {
        let v2::ClusterResourceSetSpec { cluster_selector, resources, strategy } = h.spec;
        let status = h.status.map(|st| v1::ClusterResourceSetStatus {
            observed_generation: st.observed_generation,
            conditions: st.deprecated.and_then(|d| d.v1beta1).and_then(|d| d.conditions),
            v1beta2: st.conditions.map(|c| V1Beta2Conditions { conditions: Some(c) }),
        });
        v1::ClusterResourceSet {
            metadata: h.metadata,
            spec: v1::ClusterResourceSetSpec { cluster_selector, resources, strategy },
            status,
        }
    }
}

pub struct ClusterResourceSetBindingConversion;

impl HubSpoke for ClusterResourceSetBindingConversion {
    type Hub = v2::ClusterResourceSetBinding;
    type Spoke = v1::ClusterResourceSetBinding;

    fn up(s: v1::ClusterResourceSetBinding, _ctx: &Ctx<'_>) -> v2::ClusterResourceSetBinding {
        let v1::ClusterResourceSetBindingSpec { bindings, cluster_name } = s.spec;
        let spec = v2::ClusterResourceSetBindingSpec { bindings, cluster_name: cluster_name.unwrap_or_default() };
        v2::ClusterResourceSetBinding { metadata: s.metadata, spec }
    }

    fn down(h: v2::ClusterResourceSetBinding, _ctx: &Ctx<'_>) -> v1::ClusterResourceSetBinding {
        let v2::ClusterResourceSetBindingSpec { bindings, cluster_name } = h.spec;
        let spec = v1::ClusterResourceSetBindingSpec { bindings, cluster_name: non_empty(Some(cluster_name)) };
        v1::ClusterResourceSetBinding { metadata: h.metadata, spec }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, strip_conversion_data, up};

    #[test]
    fn a_set_converts_field_for_field_and_its_conditions_swap() {
        let v1 = json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1beta1",
            "kind": "ClusterResourceSet",
            "metadata": {"name": "cni", "namespace": "default"},
            "spec": {
                "clusterSelector": {"matchLabels": {"cni": "calico"}},
                "resources": [{"name": "calico", "kind": "ConfigMap"}],
                "strategy": "Reconcile",
            },
            "status": {
                "observedGeneration": 2,
                "conditions": [{"type": "ResourcesApplied", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "v1beta2": {"conditions": [{"type": "ResourcesApplied", "status": "True", "reason": "Applied",
                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            },
        });
        let v2 = up::<ClusterResourceSetConversion>(&v1);
        assert_eq!(v2["apiVersion"], "addons.cluster.x-k8s.io/v1beta2");
        assert_eq!(v2["spec"], v1["spec"]);
        assert_eq!(v2["status"]["conditions"], v1["status"]["v1beta2"]["conditions"]);
        assert_eq!(v2["status"]["deprecated"]["v1beta1"]["conditions"], v1["status"]["conditions"]);
        assert_eq!(strip_conversion_data(v2.clone()), v2, "nothing lossy");
        assert_round_trips::<ClusterResourceSetConversion>(&v1);
        assert_round_trips::<ClusterResourceSetConversion>(&v2);
    }

    #[test]
    fn a_binding_converts_field_for_field() {
        let v1 = json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1beta1",
            "kind": "ClusterResourceSetBinding",
            "metadata": {"name": "c1", "namespace": "default"},
            "spec": {
                "clusterName": "c1",
                "bindings": [{"clusterResourceSetName": "cni", "resources": [{"name": "calico",
                    "kind": "ConfigMap", "applied": true, "hash": "sha256:00",
                    "lastAppliedTime": "2026-01-01T00:00:00Z"}]}],
            },
        });
        let v2 = up::<ClusterResourceSetBindingConversion>(&v1);
        assert_eq!(v2["spec"], v1["spec"]);
        assert_round_trips::<ClusterResourceSetBindingConversion>(&v1);
        assert_round_trips::<ClusterResourceSetBindingConversion>(&v2);
    }
}
