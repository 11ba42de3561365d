//! DevCluster and DevClusterTemplate.

use std::collections::BTreeMap;

use super::{conditions_down, conditions_up, deprecated_down, deprecated_up, initialization_up, ready_down};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::core::FailureDomainSpec;
use crate::capi::dev::{v1beta1, v1beta2};

pub struct DevClusterConversion;

impl HubSpoke for DevClusterConversion {
    type Hub = v1beta2::DevCluster;
    type Spoke = v1beta1::DevCluster;

    fn up(s: v1beta1::DevCluster, _ctx: &Ctx<'_>) -> v1beta2::DevCluster {
        v1beta2::DevCluster { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.map(status_up) }
    }

    fn down(h: v1beta2::DevCluster, _ctx: &Ctx<'_>) -> v1beta1::DevCluster {
        v1beta1::DevCluster { metadata: h.metadata, spec: spec_down(h.spec), status: h.status.map(status_down) }
    }
}

pub struct DevClusterTemplateConversion;

impl HubSpoke for DevClusterTemplateConversion {
    type Hub = v1beta2::DevClusterTemplate;
    type Spoke = v1beta1::DevClusterTemplate;

    fn up(s: v1beta1::DevClusterTemplate, _ctx: &Ctx<'_>) -> v1beta2::DevClusterTemplate {
        let t = s.spec.template;
        v1beta2::DevClusterTemplate {
            metadata: s.metadata,
            spec: v1beta2::DevClusterTemplateSpec {
                template: v1beta2::TemplateResource { metadata: t.metadata, spec: spec_up(t.spec) },
            },
        }
    }

    fn down(h: v1beta2::DevClusterTemplate, _ctx: &Ctx<'_>) -> v1beta1::DevClusterTemplate {
        let t = h.spec.template;
        v1beta1::DevClusterTemplate {
            metadata: h.metadata,
            spec: v1beta1::DevClusterTemplateSpec {
                template: crate::capi::common::TemplateResource { metadata: t.metadata, spec: spec_down(t.spec) },
            },
        }
    }
}

fn spec_up(s: v1beta1::DevClusterSpec) -> v1beta2::DevClusterSpec {
    let v1beta1::DevClusterBackendSpec { docker, in_memory } = s.backend;
    v1beta2::DevClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint.and_then(endpoint_up),
        backend: v1beta2::DevClusterBackendSpec {
            docker: docker.map(|d| v1beta2::DockerClusterBackendSpec {
                failure_domains: failure_domains_up(d.failure_domains),
                load_balancer: d.load_balancer,
            }),
            in_memory,
        },
    }
}

fn spec_down(s: v1beta2::DevClusterSpec) -> v1beta1::DevClusterSpec {
    let v1beta2::DevClusterBackendSpec { docker, in_memory } = s.backend;
    v1beta1::DevClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint.map(|e| v1beta1::APIEndpoint { host: e.host, port: e.port }),
        backend: v1beta1::DevClusterBackendSpec {
            docker: docker.map(|d| v1beta1::DockerClusterBackendSpec {
                failure_domains: failure_domains_down(d.failure_domains),
                load_balancer: d.load_balancer,
            }),
            in_memory,
        },
    }
}

/// An endpoint with neither host nor port is no endpoint in v1beta2.
fn endpoint_up(e: v1beta1::APIEndpoint) -> Option<v1beta2::APIEndpoint> {
    let host = non_empty(e.host);
    let port = e.port.filter(|p| *p != 0);
    (host.is_some() || port.is_some()).then_some(v1beta2::APIEndpoint { host, port })
}

/// Failure domains by name, as a list sorted by name (an empty map is none).
fn failure_domains_up(m: Option<BTreeMap<String, FailureDomainSpec>>) -> Option<Vec<v1beta2::FailureDomain>> {
    let m = m.filter(|m| !m.is_empty())?;
    Some(
        m.into_iter()
            .map(|(name, fd)| v1beta2::FailureDomain {
                name,
                control_plane: fd.control_plane,
                attributes: fd.attributes,
            })
            .collect(),
    )
}

fn failure_domains_down(l: Option<Vec<v1beta2::FailureDomain>>) -> Option<BTreeMap<String, FailureDomainSpec>> {
    Some(
        l?.into_iter()
            .map(|fd| (fd.name, FailureDomainSpec { control_plane: fd.control_plane, attributes: fd.attributes }))
            .collect(),
    )
}

fn status_up(s: v1beta1::DevClusterStatus) -> v1beta2::DevClusterStatus {
    v1beta2::DevClusterStatus {
        initialization: initialization_up(s.ready),
        failure_domains: failure_domains_up(s.failure_domains),
        conditions: conditions_up(s.v1beta2),
        deprecated: deprecated_up(s.conditions),
    }
}

fn status_down(s: v1beta2::DevClusterStatus) -> v1beta1::DevClusterStatus {
    v1beta1::DevClusterStatus {
        ready: ready_down(s.initialization),
        failure_domains: failure_domains_down(s.failure_domains),
        conditions: deprecated_down(s.deprecated),
        v1beta2: conditions_down(s.conditions),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::conversion::testing::{assert_round_trips, down, strip_conversion_data, up};

    fn v1beta1_cluster() -> serde_json::Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "DevCluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {
                "controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443},
                "backend": {"docker": {"failureDomains": {
                    "b": {"controlPlane": true},
                    "a": {"attributes": {"zone": "a"}},
                }}},
            },
            "status": {
                "ready": true,
                "failureDomains": {"fd1": {"controlPlane": true}},
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
                "v1beta2": {"conditions": [{"type": "Ready", "status": "True", "reason": "Provisioned",
                    "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
            },
        })
    }

    #[test]
    fn the_contract_fields_move_to_their_v1beta2_places() {
        let v1 = v1beta1_cluster();
        let v2 = strip_conversion_data(up::<DevClusterConversion>(&v1));
        assert_eq!(v2["apiVersion"], "infrastructure.cluster.x-k8s.io/v1beta2");
        assert_eq!(
            v2["spec"]["backend"]["docker"]["failureDomains"],
            json!([{"name": "a", "attributes": {"zone": "a"}}, {"name": "b", "controlPlane": true}]),
            "a list sorted by name"
        );
        assert_eq!(v2["status"]["initialization"], json!({"provisioned": true}));
        assert_eq!(v2["status"]["failureDomains"], json!([{"name": "fd1", "controlPlane": true}]));
        assert_eq!(v2["status"]["deprecated"]["v1beta1"]["conditions"][0]["type"], "Ready");
        assert_eq!(v2["status"]["conditions"][0]["reason"], "Provisioned");
        assert!(v2["status"].get("ready").is_none() && v2["status"].get("v1beta2").is_none());
        assert_eq!(v2["metadata"], v1["metadata"], "nothing lost: no conversion data");
        assert_round_trips::<DevClusterConversion>(&v1);
        assert_round_trips::<DevClusterConversion>(&up::<DevClusterConversion>(&v1));
    }

    #[test]
    fn an_empty_endpoint_is_unset_in_v1beta2_and_comes_back() {
        let v1 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevCluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"controlPlaneEndpoint": {"host": "", "port": 0}, "backend": {"inMemory": {}}},
        });
        let v2 = up::<DevClusterConversion>(&v1);
        assert!(strip_conversion_data(v2.clone())["spec"].get("controlPlaneEndpoint").is_none());
        assert_eq!(v2["spec"]["backend"], json!({"inMemory": {}}));
        assert_eq!(down::<DevClusterConversion>(&v2), v1);
    }

    #[test]
    fn templates_convert_their_cluster_spec() {
        let v2 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevClusterTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"backend": {"docker": {"failureDomains": [{"name": "z"}]}}}}},
        });
        let v1 = strip_conversion_data(down::<DevClusterTemplateConversion>(&v2));
        assert_eq!(v1["spec"]["template"]["spec"]["backend"]["docker"]["failureDomains"], json!({"z": {}}));
        assert_eq!(v1["spec"]["template"]["metadata"], json!({"labels": {"a": "b"}}));
        assert_round_trips::<DevClusterTemplateConversion>(&v2);
    }
}
