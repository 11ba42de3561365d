//! ClusterClass: `ref` becomes `templateRef` (apiVersion, kind, name; the namespace is always
//! the ClusterClass's), the worker `template` wrapper is dropped, naming strategies become
//! `naming`, health checks, deletion and rollout are regrouped as in Cluster topologies,
//! variable `metadata` becomes `deprecatedV1Beta1Metadata`, the patch extensions are renamed,
//! and the status conditions swap places as for every kind.

use super::topology::{
    HealthParts, deletion_down, deletion_up, health_up, is_unset, md_deletion_down, md_deletion_up, meta_up,
    naming_down, naming_up, non_empty_list, non_zero, strategy_down, strategy_up, template_ref_down, template_ref_up,
    topology_durations,
};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::core::{self as v1, LocalObjectTemplate, WorkerClassTemplate, WorkerMachineLimits, v1beta2 as v2};

pub struct ClusterClassConversion;

impl HubSpoke for ClusterClassConversion {
    type Hub = v2::ClusterClass;
    type Spoke = v1::ClusterClass;

    fn up(s: v1::ClusterClass, _ctx: &Ctx<'_>) -> v2::ClusterClass {
        v2::ClusterClass { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.map(status_up) }
    }

    fn down(h: v2::ClusterClass, ctx: &Ctx<'_>) -> v1::ClusterClass {
        v1::ClusterClass { metadata: h.metadata, spec: spec_down(h.spec, ctx), status: h.status.map(status_down) }
    }

    fn spoke_durations() -> Vec<String> {
        topology_durations("spec.controlPlane", "spec.workers")
    }
}

fn spec_up(s: v1::ClusterClassSpec) -> v2::ClusterClassSpec {
    let v1::ClusterClassSpec { infrastructure, control_plane, workers, variables, patches } = s;
    v2::ClusterClassSpec {
        availability_gates: None,
        infrastructure: v2::InfrastructureClass {
            template_ref: infrastructure.map(|t| template_ref_up(&t.ref_)).unwrap_or_default(),
            naming: None,
        },
        control_plane: control_plane.map(control_plane_up).unwrap_or_default(),
        workers: workers.map(workers_up).and_then(non_zero),
        variables: variables.and_then(|vs| non_empty_list(vs.into_iter().map(variable_up).collect())),
        patches: patches.and_then(|ps| non_empty_list(ps.into_iter().map(patch_up).collect())),
        kubernetes_versions: None,
        upgrade: None,
    }
}

fn spec_down(s: v2::ClusterClassSpec, ctx: &Ctx<'_>) -> v1::ClusterClassSpec {
    let v2::ClusterClassSpec { infrastructure, control_plane, workers, variables, patches, .. } = s;
    let infrastructure = infrastructure.template_ref;
    v1::ClusterClassSpec {
        infrastructure: (!is_unset(&infrastructure))
            .then(|| LocalObjectTemplate { ref_: template_ref_down(infrastructure, ctx) }),
        control_plane: non_zero(control_plane).map(|c| control_plane_down(c, ctx)),
        workers: workers.map(|w| workers_down(w, ctx)),
        variables: variables.map(|vs| vs.into_iter().map(variable_down).collect()),
        patches: patches.map(|ps| ps.into_iter().map(patch_down).collect()),
    }
}

fn template_up(t: LocalObjectTemplate) -> v2::ClusterClassTemplate {
    v2::ClusterClassTemplate { template_ref: template_ref_up(&t.ref_) }
}

fn template_down(t: v2::ClusterClassTemplate, ctx: &Ctx<'_>) -> LocalObjectTemplate {
    LocalObjectTemplate { ref_: template_ref_down(t.template_ref, ctx) }
}

fn control_plane_up(c: v1::ControlPlaneClass) -> v2::ControlPlaneClass {
    let v1::ControlPlaneClass {
        metadata,
        ref_,
        machine_infrastructure,
        machine_health_check,
        naming_strategy,
        timeouts,
    } = c;
    let health = health_up(machine_health_check);
    v2::ControlPlaneClass {
        metadata: meta_up(metadata),
        template_ref: template_ref_up(&ref_),
        machine_infrastructure: machine_infrastructure.map(template_up),
        health_check: non_zero(v2::ControlPlaneClassHealthCheck {
            remediation: health.control_plane_remediation(),
            checks: health.checks,
        }),
        naming: naming_up(naming_strategy),
        deletion: deletion_up(timeouts),
        readiness_gates: None,
        taints: None,
    }
}

fn control_plane_down(c: v2::ControlPlaneClass, ctx: &Ctx<'_>) -> v1::ControlPlaneClass {
    let hc = c.health_check.unwrap_or_default();
    let remediation = hc.remediation.unwrap_or_default();
    let health =
        HealthParts { checks: hc.checks, trigger_if: remediation.trigger_if, template_ref: remediation.template_ref };
    v1::ControlPlaneClass {
        metadata: c.metadata,
        ref_: template_ref_down(c.template_ref, ctx),
        machine_infrastructure: c.machine_infrastructure.map(|t| template_down(t, ctx)),
        machine_health_check: (!health.is_empty()).then(|| health.down(ctx)),
        naming_strategy: naming_down(c.naming),
        timeouts: deletion_down(c.deletion),
    }
}

fn workers_up(w: v1::WorkersClass) -> v2::WorkersClass {
    v2::WorkersClass {
        machine_deployments: w
            .machine_deployments
            .and_then(|mds| non_empty_list(mds.into_iter().map(machine_deployment_up).collect())),
        machine_pools: w.machine_pools.and_then(|mps| non_empty_list(mps.into_iter().map(machine_pool_up).collect())),
    }
}

fn workers_down(w: v2::WorkersClass, ctx: &Ctx<'_>) -> v1::WorkersClass {
    v1::WorkersClass {
        machine_deployments: w
            .machine_deployments
            .map(|mds| mds.into_iter().map(|md| machine_deployment_down(md, ctx)).collect()),
        machine_pools: w.machine_pools.map(|mps| mps.into_iter().map(|mp| machine_pool_down(mp, ctx)).collect()),
    }
}

fn machine_deployment_up(m: v1::MachineDeploymentClass) -> v2::MachineDeploymentClass {
    let v1::MachineDeploymentClass {
        class,
        template: WorkerClassTemplate { metadata, bootstrap, infrastructure },
        machine_health_check,
        failure_domain,
        naming_strategy,
        machines: WorkerMachineLimits { timeouts, min_ready_seconds },
        strategy,
    } = m;
    let (strategy, order, max_in_flight) = strategy_up(strategy);
    let health = health_up(machine_health_check);
    v2::MachineDeploymentClass {
        class,
        metadata: meta_up(metadata),
        bootstrap: template_up(bootstrap),
        infrastructure: template_up(infrastructure),
        health_check: non_zero(v2::MachineDeploymentClassHealthCheck {
            remediation: health.worker_remediation(max_in_flight),
            checks: health.checks,
        }),
        failure_domain: non_empty(failure_domain),
        naming: naming_up(naming_strategy),
        deletion: md_deletion_up(timeouts, order),
        min_ready_seconds,
        readiness_gates: None,
        rollout: strategy.map(|s| v2::MachineDeploymentClassRollout { strategy: Some(s) }),
        taints: None,
    }
}

fn machine_deployment_down(m: v2::MachineDeploymentClass, ctx: &Ctx<'_>) -> v1::MachineDeploymentClass {
    let hc = m.health_check.unwrap_or_default();
    let remediation = hc.remediation.unwrap_or_default();
    let health =
        HealthParts { checks: hc.checks, trigger_if: remediation.trigger_if, template_ref: remediation.template_ref };
    let (timeouts, order) = md_deletion_down(m.deletion);
    v1::MachineDeploymentClass {
        class: m.class,
        template: WorkerClassTemplate {
            metadata: m.metadata,
            bootstrap: template_down(m.bootstrap, ctx),
            infrastructure: template_down(m.infrastructure, ctx),
        },
        machine_health_check: (!health.is_empty()).then(|| health.down(ctx)),
        failure_domain: m.failure_domain,
        naming_strategy: naming_down(m.naming),
        machines: WorkerMachineLimits { timeouts, min_ready_seconds: m.min_ready_seconds },
        strategy: strategy_down(m.rollout.and_then(|r| r.strategy), order, remediation.max_in_flight),
    }
}

fn machine_pool_up(p: v1::MachinePoolClass) -> v2::MachinePoolClass {
    let v1::MachinePoolClass {
        class,
        template: WorkerClassTemplate { metadata, bootstrap, infrastructure },
        failure_domains,
        naming_strategy,
        machines: WorkerMachineLimits { timeouts, min_ready_seconds },
    } = p;
    v2::MachinePoolClass {
        class,
        metadata: meta_up(metadata),
        bootstrap: template_up(bootstrap),
        infrastructure: template_up(infrastructure),
        failure_domains,
        naming: naming_up(naming_strategy),
        deletion: deletion_up(timeouts),
        min_ready_seconds,
        taints: None,
    }
}

fn machine_pool_down(p: v2::MachinePoolClass, ctx: &Ctx<'_>) -> v1::MachinePoolClass {
    v1::MachinePoolClass {
        class: p.class,
        template: WorkerClassTemplate {
            metadata: p.metadata,
            bootstrap: template_down(p.bootstrap, ctx),
            infrastructure: template_down(p.infrastructure, ctx),
        },
        failure_domains: p.failure_domains,
        naming_strategy: naming_down(p.naming),
        machines: WorkerMachineLimits { timeouts: deletion_down(p.deletion), min_ready_seconds: p.min_ready_seconds },
    }
}

fn variable_up(v: v1::ClusterClassVariable) -> v2::ClusterClassVariable {
    v2::ClusterClassVariable {
        name: v.name,
        required: v.required,
        deprecated_v1beta1_metadata: meta_up(v.metadata),
        schema: v2::VariableSchema { open_api_v3_schema: v.schema.open_api_v3_schema },
    }
}

fn variable_down(v: v2::ClusterClassVariable) -> v1::ClusterClassVariable {
    v1::ClusterClassVariable {
        name: v.name,
        required: v.required,
        metadata: v.deprecated_v1beta1_metadata,
        schema: v1::VariableSchema { open_api_v3_schema: v.schema.open_api_v3_schema },
    }
}

fn patch_up(p: v1::ClusterClassPatch) -> v2::ClusterClassPatch {
    let json_patch =
        |j: v1::JSONPatch| v2::JSONPatch { op: j.op, path: j.path, value: j.value, value_from: j.value_from };
    let definition = |d: v1::PatchDefinition| v2::PatchDefinition {
        selector: d.selector,
        json_patches: d.json_patches.into_iter().map(json_patch).collect(),
    };
    v2::ClusterClassPatch {
        name: p.name,
        description: non_empty(p.description),
        enabled_if: non_empty(p.enabled_if),
        definitions: p.definitions.map(|ds| ds.into_iter().map(definition).collect()),
        external: p.external.map(|e| v2::ExternalPatchDefinition {
            generate_patches_extension: non_empty(e.generate_extension),
            validate_topology_extension: non_empty(e.validate_extension),
            discover_variables_extension: non_empty(e.discover_variables_extension),
            settings: e.settings,
        }),
    }
}

fn patch_down(p: v2::ClusterClassPatch) -> v1::ClusterClassPatch {
    let json_patch =
        |j: v2::JSONPatch| v1::JSONPatch { op: j.op, path: j.path, value: j.value, value_from: j.value_from };
    let definition = |d: v2::PatchDefinition| v1::PatchDefinition {
        selector: d.selector,
        json_patches: d.json_patches.into_iter().map(json_patch).collect(),
    };
    v1::ClusterClassPatch {
        name: p.name,
        description: p.description,
        enabled_if: p.enabled_if,
        definitions: p.definitions.map(|ds| ds.into_iter().map(definition).collect()),
        external: p.external.map(|e| v1::ExternalPatchDefinition {
            generate_extension: e.generate_patches_extension,
            validate_extension: e.validate_topology_extension,
            discover_variables_extension: e.discover_variables_extension,
            settings: e.settings,
        }),
    }
}

fn status_up(s: v1::ClusterClassStatus) -> v2::ClusterClassStatus {
    let v1::ClusterClassStatus { variables, conditions, observed_generation, v1beta2 } = s;
    let definition = |d: v1::ClusterClassStatusVariableDefinition| v2::ClusterClassStatusVariableDefinition {
        from: d.from,
        required: d.required,
        deprecated_v1beta1_metadata: meta_up(d.metadata),
        schema: v2::VariableSchema { open_api_v3_schema: d.schema.open_api_v3_schema },
    };
    let variable = |v: v1::ClusterClassStatusVariable| v2::ClusterClassStatusVariable {
        name: v.name,
        definitions_conflict: v.definitions_conflict,
        definitions: v.definitions.into_iter().map(definition).collect(),
    };
    v2::ClusterClassStatus {
        conditions: v1beta2.and_then(|v| v.conditions),
        observed_generation,
        variables: variables.map(|vs| vs.into_iter().map(variable).collect()),
        deprecated: conditions.map(|c| v2::ClusterClassDeprecatedStatus {
            v1beta1: Some(v2::ClusterClassV1Beta1DeprecatedStatus { conditions: Some(c) }),
        }),
    }
}

fn status_down(s: v2::ClusterClassStatus) -> v1::ClusterClassStatus {
    let v2::ClusterClassStatus { conditions, observed_generation, variables, deprecated } = s;
    let definition = |d: v2::ClusterClassStatusVariableDefinition| v1::ClusterClassStatusVariableDefinition {
        from: d.from,
        required: d.required,
        metadata: d.deprecated_v1beta1_metadata,
        schema: v1::VariableSchema { open_api_v3_schema: d.schema.open_api_v3_schema },
    };
    let variable = |v: v2::ClusterClassStatusVariable| v1::ClusterClassStatusVariable {
        name: v.name,
        definitions_conflict: v.definitions_conflict,
        definitions: v.definitions.into_iter().map(definition).collect(),
    };
    v1::ClusterClassStatus {
        variables: variables.map(|vs| vs.into_iter().map(variable).collect()),
        conditions: deprecated.and_then(|d| d.v1beta1).and_then(|d| d.conditions),
        observed_generation,
        v1beta2: conditions.map(|c| V1Beta2Conditions { conditions: Some(c) }),
    }
}

#[cfg(test)]
#[path = "clusterclass_tests.rs"]
mod tests;
