//! Cluster: references lose their version (v1beta2 names the API group), `topology.class`
//! becomes `topology.classRef`, health checks, deletion and rollout settings of the topology
//! are regrouped, and the status moves readiness flags to `initialization`, failure domains
//! from a map to a list sorted by name, the v1beta1 conditions and failure fields under
//! `deprecated.v1beta1`, and what v1beta1 carried in `status.v1beta2` to the top.

use super::topology::{
    HealthParts, deletion_down, deletion_up, health_up, md_deletion_down, md_deletion_up, meta_up, non_empty_list,
    non_zero, overrides_down, overrides_up, strategy_down, strategy_up, topology_durations, variable_down, variable_up,
};
use crate::capi::common::APIEndpoint;
use crate::capi::conversion::{Ctx, HubSpoke, non_empty, ref_down, ref_up};
use crate::capi::core::{self as v1, WorkerMachineLimits, v1beta2 as v2};

pub struct ClusterConversion;

impl HubSpoke for ClusterConversion {
    type Hub = v2::Cluster;
    type Spoke = v1::Cluster;

    fn spoke_durations() -> Vec<String> {
        topology_durations("spec.topology.controlPlane", "spec.topology.workers")
    }

    fn up(s: v1::Cluster, _ctx: &Ctx<'_>) -> v2::Cluster {
        v2::Cluster { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.map(status_up) }
    }

    fn down(h: v2::Cluster, ctx: &Ctx<'_>) -> v1::Cluster {
        v1::Cluster { metadata: h.metadata, spec: spec_down(h.spec, ctx), status: h.status.map(status_down) }
    }
}

fn spec_up(s: v1::ClusterSpec) -> v2::ClusterSpec {
    let v1::ClusterSpec {
        paused,
        cluster_network,
        control_plane_endpoint,
        control_plane_ref,
        infrastructure_ref,
        topology,
        availability_gates,
    } = s;
    let gates = availability_gates
        .unwrap_or_default()
        .into_iter()
        .map(|g| v2::ClusterAvailabilityGate { condition_type: g.condition_type, polarity: None });
    v2::ClusterSpec {
        paused,
        cluster_network: cluster_network.map(network_up).filter(|n| !n.is_empty()),
        control_plane_endpoint: control_plane_endpoint.and_then(|e| {
            non_zero(v2::APIEndpoint { host: non_empty(Some(e.host)), port: (e.port != 0).then_some(e.port) })
        }),
        control_plane_ref: control_plane_ref.as_ref().map(ref_up).filter(|r| !r.is_empty()),
        infrastructure_ref: infrastructure_ref.as_ref().map(ref_up).filter(|r| !r.is_empty()),
        topology: topology.map(topology_up),
        availability_gates: non_empty_list(gates.collect()),
    }
}

fn spec_down(s: v2::ClusterSpec, ctx: &Ctx<'_>) -> v1::ClusterSpec {
    let v2::ClusterSpec {
        paused,
        cluster_network,
        control_plane_endpoint,
        control_plane_ref,
        infrastructure_ref,
        topology,
        availability_gates,
    } = s;
    v1::ClusterSpec {
        paused,
        cluster_network: cluster_network.map(network_down),
        control_plane_endpoint: control_plane_endpoint
            .map(|e| APIEndpoint { host: e.host.unwrap_or_default(), port: e.port.unwrap_or_default() }),
        control_plane_ref: control_plane_ref.filter(|r| !r.is_empty()).map(|r| ref_down(&r, ctx)),
        infrastructure_ref: infrastructure_ref.filter(|r| !r.is_empty()).map(|r| ref_down(&r, ctx)),
        topology: topology.map(|t| topology_down(t, ctx)),
        availability_gates: availability_gates.map(|gs| {
            gs.into_iter().map(|g| v1::ClusterAvailabilityGate { condition_type: g.condition_type }).collect()
        }),
    }
}

fn network_up(n: v1::ClusterNetwork) -> v2::ClusterNetwork {
    let ranges = |r: v1::NetworkRanges| v2::NetworkRanges { cidr_blocks: r.cidr_blocks };
    v2::ClusterNetwork {
        api_server_port: n.api_server_port.filter(|p| *p != 0),
        services: n.services.map(ranges),
        pods: n.pods.map(ranges),
        service_domain: non_empty(n.service_domain),
    }
}

fn network_down(n: v2::ClusterNetwork) -> v1::ClusterNetwork {
    let ranges = |r: v2::NetworkRanges| v1::NetworkRanges { cidr_blocks: r.cidr_blocks };
    v1::ClusterNetwork {
        api_server_port: n.api_server_port,
        services: n.services.map(ranges),
        pods: n.pods.map(ranges),
        service_domain: n.service_domain,
    }
}

/// `rolloutAfter` of the whole topology has no v1beta2 field.
fn topology_up(t: v1::Topology) -> v2::Topology {
    let v1::Topology { class, class_namespace, version, rollout_after: _, control_plane, workers, variables } = t;
    v2::Topology {
        class_ref: v2::ClusterClassRef { name: class, namespace: non_empty(class_namespace) },
        version,
        control_plane: control_plane.map(control_plane_up).and_then(non_zero),
        workers: workers.map(workers_up).and_then(non_zero),
        variables: non_empty_list(variables.unwrap_or_default().into_iter().map(variable_up).collect()),
    }
}

fn topology_down(t: v2::Topology, ctx: &Ctx<'_>) -> v1::Topology {
    let v2::Topology { class_ref, version, control_plane, workers, variables } = t;
    v1::Topology {
        class: class_ref.name,
        class_namespace: class_ref.namespace,
        version,
        rollout_after: None,
        control_plane: control_plane.map(|c| control_plane_down(c, ctx)),
        workers: workers.map(|w| workers_down(w, ctx)),
        variables: variables.map(|vs| vs.into_iter().map(variable_down).collect()),
    }
}

fn control_plane_up(c: v1::ControlPlaneTopology) -> v2::ControlPlaneTopology {
    let v1::ControlPlaneTopology { metadata, replicas, machine_health_check, timeouts, variables } = c;
    let enabled = machine_health_check.as_ref().and_then(|h| h.enable);
    let health = health_up(machine_health_check.map(|h| h.checks));
    v2::ControlPlaneTopology {
        metadata: meta_up(metadata),
        replicas,
        rollout: None,
        health_check: non_zero(v2::ControlPlaneTopologyHealthCheck {
            enabled,
            remediation: health.control_plane_remediation(),
            checks: health.checks,
        }),
        deletion: deletion_up(timeouts),
        readiness_gates: None,
        taints: None,
        variables: overrides_up(variables),
    }
}

fn control_plane_down(c: v2::ControlPlaneTopology, ctx: &Ctx<'_>) -> v1::ControlPlaneTopology {
    let hc = c.health_check.unwrap_or_default();
    let remediation = hc.remediation.unwrap_or_default();
    let health =
        HealthParts { checks: hc.checks, trigger_if: remediation.trigger_if, template_ref: remediation.template_ref };
    v1::ControlPlaneTopology {
        metadata: c.metadata,
        replicas: c.replicas,
        machine_health_check: health_topology_down(hc.enabled, health, ctx),
        timeouts: deletion_down(c.deletion),
        variables: overrides_down(c.variables),
    }
}

/// The v1beta1 topology health check, when v1beta2 sets any of it.
fn health_topology_down(
    enable: Option<bool>,
    health: HealthParts,
    ctx: &Ctx<'_>,
) -> Option<v1::MachineHealthCheckTopology> {
    (enable.is_some() || !health.is_empty())
        .then(|| v1::MachineHealthCheckTopology { enable, checks: health.down(ctx) })
}

fn workers_up(w: v1::WorkersTopology) -> v2::WorkersTopology {
    v2::WorkersTopology {
        machine_deployments: w
            .machine_deployments
            .and_then(|mds| non_empty_list(mds.into_iter().map(machine_deployment_up).collect())),
        machine_pools: w.machine_pools.and_then(|mps| non_empty_list(mps.into_iter().map(machine_pool_up).collect())),
    }
}

fn workers_down(w: v2::WorkersTopology, ctx: &Ctx<'_>) -> v1::WorkersTopology {
    v1::WorkersTopology {
        machine_deployments: w
            .machine_deployments
            .map(|mds| mds.into_iter().map(|md| machine_deployment_down(md, ctx)).collect()),
        machine_pools: w.machine_pools.map(|mps| mps.into_iter().map(machine_pool_down).collect()),
    }
}

fn machine_deployment_up(m: v1::MachineDeploymentTopology) -> v2::MachineDeploymentTopology {
    let v1::MachineDeploymentTopology {
        metadata,
        class,
        name,
        failure_domain,
        replicas,
        machine_health_check,
        machines: WorkerMachineLimits { timeouts, min_ready_seconds },
        strategy,
        variables,
    } = m;
    let (strategy, order, max_in_flight) = strategy_up(strategy);
    let enabled = machine_health_check.as_ref().and_then(|h| h.enable);
    let health = health_up(machine_health_check.map(|h| h.checks));
    v2::MachineDeploymentTopology {
        metadata: meta_up(metadata),
        class,
        name,
        failure_domain: non_empty(failure_domain),
        replicas,
        health_check: non_zero(v2::MachineDeploymentTopologyHealthCheck {
            enabled,
            remediation: health.worker_remediation(max_in_flight),
            checks: health.checks,
        }),
        deletion: md_deletion_up(timeouts, order),
        min_ready_seconds,
        readiness_gates: None,
        rollout: strategy.map(|s| v2::MachineDeploymentTopologyRollout { after: None, strategy: Some(s) }),
        taints: None,
        variables: overrides_up(variables),
    }
}

fn machine_deployment_down(m: v2::MachineDeploymentTopology, ctx: &Ctx<'_>) -> v1::MachineDeploymentTopology {
    let hc = m.health_check.unwrap_or_default();
    let remediation = hc.remediation.unwrap_or_default();
    let health =
        HealthParts { checks: hc.checks, trigger_if: remediation.trigger_if, template_ref: remediation.template_ref };
    let (timeouts, order) = md_deletion_down(m.deletion);
    v1::MachineDeploymentTopology {
        metadata: m.metadata,
        class: m.class,
        name: m.name,
        failure_domain: m.failure_domain,
        replicas: m.replicas,
        machine_health_check: health_topology_down(hc.enabled, health, ctx),
        machines: WorkerMachineLimits { timeouts, min_ready_seconds: m.min_ready_seconds },
        strategy: strategy_down(m.rollout.and_then(|r| r.strategy), order, remediation.max_in_flight),
        variables: overrides_down(m.variables),
    }
}

fn machine_pool_up(p: v1::MachinePoolTopology) -> v2::MachinePoolTopology {
    let v1::MachinePoolTopology {
        metadata,
        class,
        name,
        failure_domains,
        machines: WorkerMachineLimits { timeouts, min_ready_seconds },
        replicas,
        variables,
    } = p;
    v2::MachinePoolTopology {
        metadata: meta_up(metadata),
        class,
        name,
        failure_domains: failure_domains.and_then(non_empty_list),
        deletion: deletion_up(timeouts),
        min_ready_seconds,
        replicas,
        taints: None,
        variables: overrides_up(variables),
    }
}

fn machine_pool_down(p: v2::MachinePoolTopology) -> v1::MachinePoolTopology {
    v1::MachinePoolTopology {
        metadata: p.metadata,
        class: p.class,
        name: p.name,
        failure_domains: p.failure_domains,
        machines: WorkerMachineLimits { timeouts: deletion_down(p.deletion), min_ready_seconds: p.min_ready_seconds },
        replicas: p.replicas,
        variables: overrides_down(p.variables),
    }
}

fn status_up(s: v1::ClusterStatus) -> v2::ClusterStatus {
    let v1::ClusterStatus {
        failure_domains,
        failure_reason,
        failure_message,
        phase,
        infrastructure_ready,
        control_plane_ready,
        conditions,
        observed_generation,
        v1beta2,
    } = s;
    let v1beta2 = v1beta2.unwrap_or_default();
    let (failure_reason, failure_message) = (non_empty(failure_reason), non_empty(failure_message));
    let deprecated = (conditions.is_some() || failure_reason.is_some() || failure_message.is_some()).then_some(
        v2::ClusterDeprecatedStatus {
            v1beta1: Some(v2::ClusterV1Beta1DeprecatedStatus { conditions, failure_reason, failure_message }),
        },
    );
    let domains = failure_domains.unwrap_or_default().into_iter().map(|(name, fd)| v2::FailureDomain {
        name,
        control_plane: fd.control_plane,
        attributes: fd.attributes,
    });
    v2::ClusterStatus {
        conditions: v1beta2.conditions,
        initialization: non_zero(v2::ClusterInitializationStatus {
            infrastructure_provisioned: infrastructure_ready,
            control_plane_initialized: control_plane_ready,
        }),
        control_plane: v1beta2.control_plane.map(counters_up),
        workers: v1beta2.workers.map(counters_up),
        // A BTreeMap iterates by name: the list comes out sorted, as upstream sorts it.
        failure_domains: non_empty_list(domains.collect()),
        phase: non_empty(phase),
        observed_generation,
        deprecated,
    }
}

fn status_down(s: v2::ClusterStatus) -> v1::ClusterStatus {
    let v2::ClusterStatus {
        conditions,
        initialization,
        control_plane,
        workers,
        failure_domains,
        phase,
        observed_generation,
        deprecated,
    } = s;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    let initialization = initialization.unwrap_or_default();
    let v1beta2 =
        (conditions.is_some() || control_plane.is_some() || workers.is_some()).then(|| v1::ClusterV1Beta2Status {
            conditions,
            control_plane: control_plane.map(counters_down),
            workers: workers.map(counters_down),
        });
    let domains = failure_domains.map(|fds| {
        fds.into_iter()
            .map(|fd| (fd.name, v1::FailureDomainSpec { control_plane: fd.control_plane, attributes: fd.attributes }))
            .collect()
    });
    v1::ClusterStatus {
        failure_domains: domains,
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
        phase,
        infrastructure_ready: initialization.infrastructure_provisioned,
        control_plane_ready: initialization.control_plane_initialized,
        conditions: old.conditions,
        observed_generation,
        v1beta2,
    }
}

fn counters_up(c: v1::ClusterReplicaCounters) -> v2::ClusterReplicasStatus {
    v2::ClusterReplicasStatus {
        desired_replicas: c.desired_replicas,
        replicas: c.replicas,
        up_to_date_replicas: c.up_to_date_replicas,
        ready_replicas: c.ready_replicas,
        available_replicas: c.available_replicas,
        versions: None,
        upgrade_plan: None,
    }
}

fn counters_down(c: v2::ClusterReplicasStatus) -> v1::ClusterReplicaCounters {
    v1::ClusterReplicaCounters {
        desired_replicas: c.desired_replicas,
        replicas: c.replicas,
        up_to_date_replicas: c.up_to_date_replicas,
        ready_replicas: c.ready_replicas,
        available_replicas: c.available_replicas,
    }
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
