//! DevMachine and DevMachineTemplate: the specs have the same fields; v1beta1 has no
//! `status.failureDomain` and no template status.

use super::{conditions_down, conditions_up, deprecated_down, deprecated_up, initialization_up, ready_down};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::dev::{v1beta1, v1beta2};

pub struct DevMachineConversion;

impl HubSpoke for DevMachineConversion {
    type Hub = v1beta2::DevMachine;
    type Spoke = v1beta1::DevMachine;

    fn up(s: v1beta1::DevMachine, _ctx: &Ctx<'_>) -> v1beta2::DevMachine {
        v1beta2::DevMachine { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.map(status_up) }
    }

    fn down(h: v1beta2::DevMachine, _ctx: &Ctx<'_>) -> v1beta1::DevMachine {
        v1beta1::DevMachine { metadata: h.metadata, spec: spec_down(h.spec), status: h.status.map(status_down) }
    }
}

pub struct DevMachineTemplateConversion;

impl HubSpoke for DevMachineTemplateConversion {
    type Hub = v1beta2::DevMachineTemplate;
    type Spoke = v1beta1::DevMachineTemplate;

    fn up(s: v1beta1::DevMachineTemplate, _ctx: &Ctx<'_>) -> v1beta2::DevMachineTemplate {
        let t = s.spec.template;
        v1beta2::DevMachineTemplate {
            metadata: s.metadata,
            spec: v1beta2::DevMachineTemplateSpec {
                template: v1beta2::TemplateResource { metadata: t.metadata, spec: spec_up(t.spec) },
            },
            status: None,
        }
    }

    fn down(h: v1beta2::DevMachineTemplate, _ctx: &Ctx<'_>) -> v1beta1::DevMachineTemplate {
        let t = h.spec.template;
        v1beta1::DevMachineTemplate {
            metadata: h.metadata,
            spec: v1beta1::DevMachineTemplateSpec {
                template: crate::capi::common::TemplateResource { metadata: t.metadata, spec: spec_down(t.spec) },
            },
        }
    }
}

fn spec_up(s: v1beta1::DevMachineSpec) -> v1beta2::DevMachineSpec {
    v1beta2::DevMachineSpec { provider_id: non_empty(s.provider_id), backend: s.backend }
}

fn spec_down(s: v1beta2::DevMachineSpec) -> v1beta1::DevMachineSpec {
    v1beta1::DevMachineSpec { provider_id: s.provider_id, backend: s.backend }
}

fn status_up(s: v1beta1::DevMachineStatus) -> v1beta2::DevMachineStatus {
    v1beta2::DevMachineStatus {
        initialization: initialization_up(s.ready),
        addresses: s.addresses,
        failure_domain: None,
        conditions: conditions_up(s.v1beta2),
        deprecated: deprecated_up(s.conditions),
    }
}

fn status_down(s: v1beta2::DevMachineStatus) -> v1beta1::DevMachineStatus {
    v1beta1::DevMachineStatus {
        ready: ready_down(s.initialization),
        addresses: s.addresses,
        conditions: deprecated_down(s.deprecated),
        v1beta2: conditions_down(s.conditions),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

    #[test]
    fn in_memory_timings_and_readiness_convert() {
        let v2 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"providerID": "in-memory://m", "backend": {"inMemory": {
                "vm": {"provisioning": {"startupDuration": "10s", "startupJitter": "0.2"}},
                "apiServer": {"provisioning": {"startupDuration": "2s"}},
            }}},
            "status": {"initialization": {"provisioned": true},
                       "addresses": [{"type": "InternalIP", "address": "10.1.2.3"}]},
        });
        let v1 = down::<DevMachineConversion>(&v2);
        assert_eq!(v1["apiVersion"], "infrastructure.cluster.x-k8s.io/v1beta1");
        assert_eq!(v1["spec"], v2["spec"], "same spec fields in both versions");
        assert_eq!(v1["status"], json!({"ready": true, "addresses": [{"type": "InternalIP", "address": "10.1.2.3"}]}));
        assert_eq!(v1["metadata"], v2["metadata"], "nothing lost: no conversion data");
        assert_round_trips::<DevMachineConversion>(&v2);
        assert_round_trips::<DevMachineConversion>(&v1);
    }

    #[test]
    fn what_v1beta1_cannot_hold_comes_back_from_the_annotation() {
        let v2 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"backend": {"docker": {"customImage": "kindest/node:v1.33.0"}}},
            "status": {"failureDomain": "fd1"},
        });
        let v1 = down::<DevMachineConversion>(&v2);
        assert!(strip_conversion_data(v1.clone())["status"].get("failureDomain").is_none());
        assert_eq!(up::<DevMachineConversion>(&v1), v2);

        let template = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachineTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"backend": {"inMemory": {}}}}},
            "status": {"capacity": {"cpu": "2", "memory": "4Gi"}},
        });
        let v1 = down::<DevMachineTemplateConversion>(&template);
        assert!(v1.get("status").is_none());
        assert_eq!(up::<DevMachineTemplateConversion>(&v1), template);
    }
}
