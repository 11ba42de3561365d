//! MachineDrainRule: both versions have the same fields.

use crate::capi::conversion::{Ctx, HubSpoke};
use crate::capi::core::{MachineDrainRule, MachineDrainRuleSpec, v1beta2};

pub struct MachineDrainRuleConversion;

impl HubSpoke for MachineDrainRuleConversion {
    type Hub = v1beta2::MachineDrainRule;
    type Spoke = MachineDrainRule;

    fn up(s: MachineDrainRule, _ctx: &Ctx<'_>) -> v1beta2::MachineDrainRule {
        let MachineDrainRuleSpec { drain, machines, pods } = s.spec;
        v1beta2::MachineDrainRule {
            metadata: s.metadata,
            spec: v1beta2::MachineDrainRuleSpec { drain, machines, pods },
        }
    }

    fn down(h: v1beta2::MachineDrainRule, _ctx: &Ctx<'_>) -> MachineDrainRule {
        let v1beta2::MachineDrainRuleSpec { drain, machines, pods } = h.spec;
        MachineDrainRule { metadata: h.metadata, spec: MachineDrainRuleSpec { drain, machines, pods } }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, strip_conversion_data, up};

    #[test]
    fn converts_field_for_field_both_ways() {
        let v1 = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachineDrainRule",
            "metadata": {"name": "r", "namespace": "default"},
            "spec": {
                "drain": {"behavior": "Drain", "order": 5},
                "pods": [{"selector": {"matchLabels": {"app": "db"}}}],
            },
        });
        let v2 = up::<MachineDrainRuleConversion>(&v1);
        assert_eq!(v2["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert_eq!(v2["spec"], v1["spec"]);
        assert_eq!(v2["metadata"], v1["metadata"], "nothing lossy, no conversion data");
        assert_eq!(strip_conversion_data(v2.clone()), v2);
        assert_round_trips::<MachineDrainRuleConversion>(&v1);
        assert_round_trips::<MachineDrainRuleConversion>(&v2);
    }
}
