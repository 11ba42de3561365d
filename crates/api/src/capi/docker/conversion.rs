//! Conversions of the Docker kinds between v1beta1 and v1beta2 (the hub). A Docker object is
//! a Dev object whose `spec.backend.docker` sits at the top of the spec, so the cluster and
//! machine kinds convert through the Dev kinds' conversions: the same rules (readiness,
//! conditions, failure domains, empty strings) hold for both providers by construction.
//! The pools have no Dev v1beta1 counterpart and convert here.

use super::{v1beta1, v1beta2};
use crate::capi::conversion::{Ctx, HubSpoke};
use crate::capi::dev::conversion::{
    DevClusterConversion, DevClusterTemplateConversion, DevMachineConversion, DevMachineTemplateConversion,
    deprecated_down, deprecated_up,
};
use crate::capi::dev::{backend::DevMachineBackendSpec, v1beta1 as dev1, v1beta2 as dev2};

pub struct DockerClusterConversion;

impl HubSpoke for DockerClusterConversion {
    type Hub = v1beta2::DockerCluster;
    type Spoke = v1beta1::DockerCluster;

    fn up(s: v1beta1::DockerCluster, ctx: &Ctx<'_>) -> v1beta2::DockerCluster {
        let dev = DevClusterConversion::up(
            dev1::DevCluster { metadata: s.metadata, spec: cluster_spec_as_dev1(s.spec), status: s.status },
            ctx,
        );
        v1beta2::DockerCluster { metadata: dev.metadata, spec: cluster_spec_of_dev2(dev.spec), status: dev.status }
    }

    fn down(h: v1beta2::DockerCluster, ctx: &Ctx<'_>) -> v1beta1::DockerCluster {
        let dev = DevClusterConversion::down(
            dev2::DevCluster { metadata: h.metadata, spec: cluster_spec_as_dev2(h.spec), status: h.status },
            ctx,
        );
        v1beta1::DockerCluster { metadata: dev.metadata, spec: cluster_spec_of_dev1(dev.spec), status: dev.status }
    }
}

pub struct DockerClusterTemplateConversion;

impl HubSpoke for DockerClusterTemplateConversion {
    type Hub = v1beta2::DockerClusterTemplate;
    type Spoke = v1beta1::DockerClusterTemplate;

    fn up(s: v1beta1::DockerClusterTemplate, ctx: &Ctx<'_>) -> v1beta2::DockerClusterTemplate {
        let t = s.spec.template;
        let spec = dev1::DevClusterTemplateSpec {
            template: crate::capi::common::TemplateResource {
                metadata: t.metadata,
                spec: cluster_spec_as_dev1(t.spec),
            },
        };
        let dev = DevClusterTemplateConversion::up(dev1::DevClusterTemplate { metadata: s.metadata, spec }, ctx);
        let t = dev.spec.template;
        v1beta2::DockerClusterTemplate {
            metadata: dev.metadata,
            spec: v1beta2::DockerClusterTemplateSpec {
                template: dev2::TemplateResource { metadata: t.metadata, spec: cluster_spec_of_dev2(t.spec) },
            },
        }
    }

    fn down(h: v1beta2::DockerClusterTemplate, ctx: &Ctx<'_>) -> v1beta1::DockerClusterTemplate {
        let t = h.spec.template;
        let spec = dev2::DevClusterTemplateSpec {
            template: dev2::TemplateResource { metadata: t.metadata, spec: cluster_spec_as_dev2(t.spec) },
        };
        let dev = DevClusterTemplateConversion::down(dev2::DevClusterTemplate { metadata: h.metadata, spec }, ctx);
        let t = dev.spec.template;
        v1beta1::DockerClusterTemplate {
            metadata: dev.metadata,
            spec: v1beta1::DockerClusterTemplateSpec {
                template: crate::capi::common::TemplateResource {
                    metadata: t.metadata,
                    spec: cluster_spec_of_dev1(t.spec),
                },
            },
        }
    }
}

fn cluster_spec_as_dev1(s: v1beta1::DockerClusterSpec) -> dev1::DevClusterSpec {
    dev1::DevClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint,
        backend: dev1::DevClusterBackendSpec { docker: Some(s.docker), in_memory: None },
    }
}

fn cluster_spec_of_dev1(s: dev1::DevClusterSpec) -> v1beta1::DockerClusterSpec {
    v1beta1::DockerClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint,
        docker: s.backend.docker.unwrap_or_default(),
    }
}

fn cluster_spec_as_dev2(s: v1beta2::DockerClusterSpec) -> dev2::DevClusterSpec {
    dev2::DevClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint,
        backend: dev2::DevClusterBackendSpec { docker: Some(s.docker), in_memory: None },
    }
}

fn cluster_spec_of_dev2(s: dev2::DevClusterSpec) -> v1beta2::DockerClusterSpec {
    v1beta2::DockerClusterSpec {
        control_plane_endpoint: s.control_plane_endpoint,
        docker: s.backend.docker.unwrap_or_default(),
    }
}

pub struct DockerMachineConversion;

impl HubSpoke for DockerMachineConversion {
    type Hub = v1beta2::DockerMachine;
    type Spoke = v1beta1::DockerMachine;

    fn up(s: v1beta1::DockerMachine, ctx: &Ctx<'_>) -> v1beta2::DockerMachine {
        let lb = s.status.as_ref().and_then(|st| st.load_balancer_configured);
        let status = s.status.map(|st| dev1::DevMachineStatus {
            ready: st.ready,
            addresses: st.addresses,
            conditions: st.conditions,
            v1beta2: st.v1beta2,
        });
        let dev = DevMachineConversion::up(
            dev1::DevMachine { metadata: s.metadata, spec: machine_spec_as_dev1(s.spec), status },
            ctx,
        );
        let status = dev.status.map(|st| v1beta2::DockerMachineStatus {
            initialization: st.initialization,
            load_balancer_configured: lb,
            addresses: st.addresses,
            failure_domain: st.failure_domain,
            conditions: st.conditions,
            deprecated: st.deprecated,
        });
        let spec =
            v1beta2::DockerMachineSpec { provider_id: dev.spec.provider_id, docker: machine_docker(dev.spec.backend) };
        v1beta2::DockerMachine { metadata: dev.metadata, spec, status }
    }

    fn down(h: v1beta2::DockerMachine, ctx: &Ctx<'_>) -> v1beta1::DockerMachine {
        let lb = h.status.as_ref().and_then(|st| st.load_balancer_configured);
        let status = h.status.map(|st| dev2::DevMachineStatus {
            initialization: st.initialization,
            addresses: st.addresses,
            failure_domain: st.failure_domain,
            conditions: st.conditions,
            deprecated: st.deprecated,
        });
        let spec = dev2::DevMachineSpec { provider_id: h.spec.provider_id, backend: machine_backend(h.spec.docker) };
        let dev = DevMachineConversion::down(dev2::DevMachine { metadata: h.metadata, spec, status }, ctx);
        let status = dev.status.map(|st| v1beta1::DockerMachineStatus {
            ready: st.ready,
            load_balancer_configured: lb,
            addresses: st.addresses,
            conditions: st.conditions,
            v1beta2: st.v1beta2,
        });
        let spec =
            v1beta1::DockerMachineSpec { provider_id: dev.spec.provider_id, docker: machine_docker(dev.spec.backend) };
        v1beta1::DockerMachine { metadata: dev.metadata, spec, status }
    }
}

pub struct DockerMachineTemplateConversion;

impl HubSpoke for DockerMachineTemplateConversion {
    type Hub = v1beta2::DockerMachineTemplate;
    type Spoke = v1beta1::DockerMachineTemplate;

    fn up(s: v1beta1::DockerMachineTemplate, ctx: &Ctx<'_>) -> v1beta2::DockerMachineTemplate {
        let t = s.spec.template;
        let spec = dev1::DevMachineTemplateSpec {
            template: crate::capi::common::TemplateResource {
                metadata: t.metadata,
                spec: machine_spec_as_dev1(t.spec),
            },
        };
        let dev = DevMachineTemplateConversion::up(dev1::DevMachineTemplate { metadata: s.metadata, spec }, ctx);
        let t = dev.spec.template;
        let spec =
            v1beta2::DockerMachineSpec { provider_id: t.spec.provider_id, docker: machine_docker(t.spec.backend) };
        v1beta2::DockerMachineTemplate {
            metadata: dev.metadata,
            spec: v1beta2::DockerMachineTemplateSpec {
                template: dev2::TemplateResource { metadata: t.metadata, spec },
            },
            status: dev.status,
        }
    }

    fn down(h: v1beta2::DockerMachineTemplate, ctx: &Ctx<'_>) -> v1beta1::DockerMachineTemplate {
        let t = h.spec.template;
        let spec = dev2::DevMachineSpec { provider_id: t.spec.provider_id, backend: machine_backend(t.spec.docker) };
        let spec = dev2::DevMachineTemplateSpec { template: dev2::TemplateResource { metadata: t.metadata, spec } };
        let dev = DevMachineTemplateConversion::down(
            dev2::DevMachineTemplate { metadata: h.metadata, spec, status: h.status },
            ctx,
        );
        let t = dev.spec.template;
        let spec =
            v1beta1::DockerMachineSpec { provider_id: t.spec.provider_id, docker: machine_docker(t.spec.backend) };
        v1beta1::DockerMachineTemplate {
            metadata: dev.metadata,
            spec: v1beta1::DockerMachineTemplateSpec {
                template: crate::capi::common::TemplateResource { metadata: t.metadata, spec },
            },
        }
    }
}

fn machine_spec_as_dev1(s: v1beta1::DockerMachineSpec) -> dev1::DevMachineSpec {
    dev1::DevMachineSpec { provider_id: s.provider_id, backend: machine_backend(s.docker) }
}

fn machine_backend(docker: crate::capi::dev::backend::DockerMachineBackendSpec) -> DevMachineBackendSpec {
    DevMachineBackendSpec { docker: Some(docker), in_memory: None }
}

fn machine_docker(b: DevMachineBackendSpec) -> crate::capi::dev::backend::DockerMachineBackendSpec {
    b.docker.unwrap_or_default()
}

pub struct DockerMachinePoolConversion;

impl HubSpoke for DockerMachinePoolConversion {
    type Hub = v1beta2::DockerMachinePool;
    type Spoke = v1beta1::DockerMachinePool;

    fn up(s: v1beta1::DockerMachinePool, _ctx: &Ctx<'_>) -> v1beta2::DockerMachinePool {
        let status = s.status.map(|st| v1beta2::DockerMachinePoolStatus {
            ready: st.ready,
            replicas: st.replicas,
            observed_generation: st.observed_generation,
            instances: st.instances,
            infrastructure_machine_kind: st.infrastructure_machine_kind,
            conditions: None,
            deprecated: deprecated_up(st.conditions),
        });
        v1beta2::DockerMachinePool { metadata: s.metadata, spec: pool_spec_up(s.spec), status }
    }

    fn down(h: v1beta2::DockerMachinePool, _ctx: &Ctx<'_>) -> v1beta1::DockerMachinePool {
        let status = h.status.map(|st| v1beta1::DockerMachinePoolStatus {
            ready: st.ready,
            replicas: st.replicas,
            observed_generation: st.observed_generation,
            instances: st.instances,
            infrastructure_machine_kind: st.infrastructure_machine_kind,
            conditions: deprecated_down(st.deprecated),
        });
        v1beta1::DockerMachinePool { metadata: h.metadata, spec: pool_spec_down(h.spec), status }
    }
}

pub struct DockerMachinePoolTemplateConversion;

impl HubSpoke for DockerMachinePoolTemplateConversion {
    type Hub = v1beta2::DockerMachinePoolTemplate;
    type Spoke = v1beta1::DockerMachinePoolTemplate;

    fn up(s: v1beta1::DockerMachinePoolTemplate, _ctx: &Ctx<'_>) -> v1beta2::DockerMachinePoolTemplate {
        let t = s.spec.template;
        v1beta2::DockerMachinePoolTemplate {
            metadata: s.metadata,
            spec: v1beta2::DockerMachinePoolTemplateSpec {
                template: dev2::TemplateResource { metadata: t.metadata, spec: pool_spec_up(t.spec) },
            },
        }
    }

    fn down(h: v1beta2::DockerMachinePoolTemplate, _ctx: &Ctx<'_>) -> v1beta1::DockerMachinePoolTemplate {
        let t = h.spec.template;
        v1beta1::DockerMachinePoolTemplate {
            metadata: h.metadata,
            spec: v1beta1::DockerMachinePoolTemplateSpec {
                template: crate::capi::common::TemplateResource { metadata: t.metadata, spec: pool_spec_down(t.spec) },
            },
        }
    }
}

fn pool_spec_up(s: v1beta1::DockerMachinePoolSpec) -> v1beta2::DockerMachinePoolSpec {
    v1beta2::DockerMachinePoolSpec {
        provider_id: s.provider_id,
        provider_id_list: s.provider_id_list,
        template: s.template,
    }
}

fn pool_spec_down(s: v1beta2::DockerMachinePoolSpec) -> v1beta1::DockerMachinePoolSpec {
    v1beta1::DockerMachinePoolSpec {
        provider_id: s.provider_id,
        provider_id_list: s.provider_id_list,
        template: s.template,
    }
}
