//! ExtensionConfig between v1alpha1 and v1beta2: the same spec and handlers; the
//! conditions swap places as for every kind.

use super::{v1alpha1 as v1, v1beta2 as v2};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conversion::{Ctx, HubSpoke};

pub struct ExtensionConfigConversion;

impl HubSpoke for ExtensionConfigConversion {
    type Hub = v2::ExtensionConfig;
    type Spoke = v1::ExtensionConfig;

    fn up(s: v1::ExtensionConfig, _ctx: &Ctx<'_>) -> v2::ExtensionConfig {
        let v1::ExtensionConfigSpec { client_config, namespace_selector, settings } = s.spec;
        let status = s.status.map(|st| v2::ExtensionConfigStatus {
            conditions: st.v1beta2.and_then(|v| v.conditions),
            handlers: st.handlers,
            deprecated: st.conditions.map(|c| v2::ExtensionConfigDeprecatedStatus {
                v1beta1: Some(v2::ExtensionConfigV1Beta1DeprecatedStatus { conditions: Some(c) }),
            }),
        });
        v2::ExtensionConfig {
            metadata: s.metadata,
            spec: v2::ExtensionConfigSpec { client_config, namespace_selector, settings },
            status,
        }
    }

    fn down(h: v2::ExtensionConfig, _ctx: &Ctx<'_>) -> v1::ExtensionConfig {
        let v2::ExtensionConfigSpec { client_config, namespace_selector, settings } = h.spec;
        let status = h.status.map(|st| v1::ExtensionConfigStatus {
            handlers: st.handlers,
            conditions: st.deprecated.and_then(|d| d.v1beta1).and_then(|d| d.conditions),
            v1beta2: st.conditions.map(|c| V1Beta2Conditions { conditions: Some(c) }),
        });
        v1::ExtensionConfig {
            metadata: h.metadata,
            spec: v1::ExtensionConfigSpec { client_config, namespace_selector, settings },
            status,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, strip_conversion_data, up};

    #[test]
    fn an_extension_config_converts_field_for_field_and_its_conditions_swap() {
        let v1 = json!({
            "apiVersion": "runtime.cluster.x-k8s.io/v1alpha1",
            "kind": "ExtensionConfig",
            "metadata": {"name": "ext"},
            "spec": {
                "clientConfig": {"url": "https://ext.example:8443/hooks", "caBundle": "Y2E="},
                "namespaceSelector": {"matchLabels": {"team": "a"}},
                "settings": {"mode": "fast"},
            },
            "status": {
                "handlers": [{"name": "gen.ext", "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
                    "hook": "GeneratePatches"}, "timeoutSeconds": 5, "failurePolicy": "Ignore"}],
                "conditions": [{"type": "Discovered", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "v1beta2": {"conditions": [{"type": "Discovered", "status": "True", "reason": "Discovered",
                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            },
        });
        let v2 = up::<ExtensionConfigConversion>(&v1);
        assert_eq!(v2["apiVersion"], "runtime.cluster.x-k8s.io/v1beta2");
        assert_eq!(v2["spec"], v1["spec"]);
        assert_eq!(v2["status"]["handlers"], v1["status"]["handlers"]);
        assert_eq!(v2["status"]["conditions"], v1["status"]["v1beta2"]["conditions"]);
        assert_eq!(v2["status"]["deprecated"]["v1beta1"]["conditions"], v1["status"]["conditions"]);
        assert_eq!(strip_conversion_data(v2.clone()), v2, "nothing lossy");
        assert_round_trips::<ExtensionConfigConversion>(&v1);
        assert_round_trips::<ExtensionConfigConversion>(&v2);
    }
}
