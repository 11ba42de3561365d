//! The pieces Cluster topologies and ClusterClasses share: health checks (flat in v1beta1,
//! `checks` + `remediation` in v1beta2), deletion timeouts (Go durations in v1beta1, whole
//! seconds under `deletion` in v1beta2), MachineDeployment strategies (split into
//! `rollout.strategy`, `deletion.order` and `healthCheck.remediation.maxInFlight`), template
//! references, variable overrides and names.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::capi::common::{ObjectMeta, UnhealthyNodeCondition, VersionedTemplateReference};
use crate::capi::conversion::{Ctx, duration_to_seconds, non_empty, seconds_to_duration};
use crate::capi::core::{
    self as v1, MachineDeploymentStrategy, MachineDeploymentStrategyType, MachineHealthCheckClass,
    MachineRollingUpdateDeployment, MachineSetDeletePolicy, MachineTimeouts, NamingStrategy, RemediationStrategy,
    UnhealthyCondition, v1beta2 as v2,
};

/// `Some(t)` unless `t` is its zero value (v1beta2 leaves zero structs out).
pub(super) fn non_zero<T: Default + PartialEq>(t: T) -> Option<T> {
    (t != T::default()).then_some(t)
}

/// `Some(list)` unless the list is empty (v1beta2 refuses empty lists where they mean unset).
pub(super) fn non_empty_list<T>(list: Vec<T>) -> Option<Vec<T>> {
    (!list.is_empty()).then_some(list)
}

/// Labels and annotations; none at all is unset in v1beta2.
pub(super) fn meta_up(m: Option<ObjectMeta>) -> Option<ObjectMeta> {
    m.filter(|m| !m.is_empty())
}

/// A v1beta1 template reference as v1beta2 names it: apiVersion, kind and name.
pub(super) fn template_ref_up(r: &ObjectReference) -> VersionedTemplateReference {
    VersionedTemplateReference {
        api_version: r.api_version.clone().unwrap_or_default(),
        kind: r.kind.clone().unwrap_or_default(),
        name: r.name.clone().unwrap_or_default(),
    }
}

/// A v1beta2 template reference as v1beta1 names it, in the referring object's namespace.
pub(super) fn template_ref_down(r: VersionedTemplateReference, ctx: &Ctx<'_>) -> ObjectReference {
    r.in_namespace(ctx.namespace)
}

/// A v1beta2 template reference that names nothing (v1beta1 had none).
pub(super) fn is_unset(r: &VersionedTemplateReference) -> bool {
    r == &VersionedTemplateReference::default()
}

pub(super) fn naming_up(n: Option<NamingStrategy>) -> Option<v2::ClassNaming> {
    non_empty(n.and_then(|n| n.template)).map(|t| v2::ClassNaming { template: Some(t) })
}

pub(super) fn naming_down(n: Option<v2::ClassNaming>) -> Option<NamingStrategy> {
    n.map(|n| NamingStrategy { template: n.template })
}

/// The Go durations of v1beta1's `MachineTimeouts` (flattened into the object at `prefix`).
pub(super) fn timeout_durations(prefix: &str) -> Vec<String> {
    ["nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout"].map(|f| format!("{prefix}.{f}")).to_vec()
}

/// The Go durations of a v1beta1 health check at `prefix` (MachineHealthCheck's `spec`, a
/// class's `machineHealthCheck`).
pub(super) fn health_check_durations(prefix: &str) -> Vec<String> {
    ["nodeStartupTimeout", "unhealthyConditions[].timeout"].map(|f| format!("{prefix}.{f}")).to_vec()
}

/// The Go durations of a v1beta1 class or topology: the control plane's at `control_plane`,
/// the MachineDeployments' and MachinePools' under `workers`.
pub(super) fn topology_durations(control_plane: &str, workers: &str) -> Vec<String> {
    let mds = format!("{workers}.machineDeployments[]");
    let mut paths = timeout_durations(control_plane);
    paths.extend(health_check_durations(&format!("{control_plane}.machineHealthCheck")));
    paths.extend(timeout_durations(&mds));
    paths.extend(health_check_durations(&format!("{mds}.machineHealthCheck")));
    paths.extend(timeout_durations(&format!("{workers}.machinePools[]")));
    paths
}

pub(super) fn deletion_up(t: MachineTimeouts) -> Option<v2::MachineDeletionSpec> {
    non_zero(v2::MachineDeletionSpec {
        node_drain_timeout_seconds: duration_to_seconds(t.node_drain_timeout.as_deref()),
        node_volume_detach_timeout_seconds: duration_to_seconds(t.node_volume_detach_timeout.as_deref()),
        node_deletion_timeout_seconds: duration_to_seconds(t.node_deletion_timeout.as_deref()),
    })
}

pub(super) fn deletion_down(d: Option<v2::MachineDeletionSpec>) -> MachineTimeouts {
    let d = d.unwrap_or_default();
    MachineTimeouts {
        node_drain_timeout: seconds_to_duration(d.node_drain_timeout_seconds),
        node_volume_detach_timeout: seconds_to_duration(d.node_volume_detach_timeout_seconds),
        node_deletion_timeout: seconds_to_duration(d.node_deletion_timeout_seconds),
    }
}

/// MachineDeployment deletion: the timeouts and the v1beta1 rolling update's delete policy.
pub(super) fn md_deletion_up(
    t: MachineTimeouts,
    order: Option<MachineSetDeletePolicy>,
) -> Option<v2::TopologyMachineDeploymentDeletion> {
    non_zero(v2::TopologyMachineDeploymentDeletion {
        order,
        node_drain_timeout_seconds: duration_to_seconds(t.node_drain_timeout.as_deref()),
        node_volume_detach_timeout_seconds: duration_to_seconds(t.node_volume_detach_timeout.as_deref()),
        node_deletion_timeout_seconds: duration_to_seconds(t.node_deletion_timeout.as_deref()),
    })
}

pub(super) fn md_deletion_down(
    d: Option<v2::TopologyMachineDeploymentDeletion>,
) -> (MachineTimeouts, Option<MachineSetDeletePolicy>) {
    let d = d.unwrap_or_default();
    let timeouts = MachineTimeouts {
        node_drain_timeout: seconds_to_duration(d.node_drain_timeout_seconds),
        node_volume_detach_timeout: seconds_to_duration(d.node_volume_detach_timeout_seconds),
        node_deletion_timeout: seconds_to_duration(d.node_deletion_timeout_seconds),
    };
    (timeouts, d.order)
}

/// What a v1beta1 MachineDeployment strategy becomes in v1beta2: the rollout strategy, the
/// deletion order and the remediation's `maxInFlight`.
pub(super) type StrategyParts =
    (Option<v2::TopologyRolloutStrategy>, Option<MachineSetDeletePolicy>, Option<IntOrString>);

pub(super) fn strategy_up(s: Option<MachineDeploymentStrategy>) -> StrategyParts {
    let Some(s) = s else { return (None, None, None) };
    let ru = s.rolling_update.unwrap_or_default();
    let rolling_update =
        non_zero(v2::TopologyRollingUpdate { max_unavailable: ru.max_unavailable, max_surge: ru.max_surge });
    // v1beta2 requires the type; v1beta1 defaults an unset one to RollingUpdate.
    let strategy = (s.type_.is_some() || rolling_update.is_some()).then(|| v2::TopologyRolloutStrategy {
        type_: s.type_.unwrap_or(MachineDeploymentStrategyType::RollingUpdate),
        rolling_update,
    });
    (strategy, ru.delete_policy, s.remediation.and_then(|r| r.max_in_flight))
}

pub(super) fn strategy_down(
    strategy: Option<v2::TopologyRolloutStrategy>,
    order: Option<MachineSetDeletePolicy>,
    max_in_flight: Option<IntOrString>,
) -> Option<MachineDeploymentStrategy> {
    let mut out = strategy.map(|s| MachineDeploymentStrategy {
        type_: Some(s.type_),
        rolling_update: s.rolling_update.map(|r| MachineRollingUpdateDeployment {
            max_unavailable: r.max_unavailable,
            max_surge: r.max_surge,
            delete_policy: None,
        }),
        remediation: None,
    });
    if order.is_some() {
        let s = out.get_or_insert_with(MachineDeploymentStrategy::default);
        s.rolling_update.get_or_insert_with(MachineRollingUpdateDeployment::default).delete_policy = order;
    }
    if max_in_flight.is_some() {
        out.get_or_insert_with(MachineDeploymentStrategy::default).remediation =
            Some(RemediationStrategy { max_in_flight });
    }
    out
}

/// A v1beta1 health check split the v1beta2 way: checks, remediation trigger, template.
pub(super) struct HealthParts {
    pub checks: Option<v2::TopologyHealthCheckChecks>,
    pub trigger_if: Option<v2::TopologyRemediationTriggerIf>,
    pub template_ref: Option<VersionedTemplateReference>,
}

pub(super) fn health_up(h: Option<MachineHealthCheckClass>) -> HealthParts {
    let MachineHealthCheckClass {
        unhealthy_conditions,
        max_unhealthy,
        unhealthy_range,
        node_startup_timeout,
        remediation_template,
    } = h.unwrap_or_default();
    let conditions = unhealthy_conditions.unwrap_or_default().into_iter().map(condition_up).collect();
    HealthParts {
        checks: non_zero(v2::TopologyHealthCheckChecks {
            node_startup_timeout_seconds: duration_to_seconds(node_startup_timeout.as_deref()),
            unhealthy_node_conditions: non_empty_list(conditions),
            unhealthy_machine_conditions: None,
        }),
        trigger_if: non_zero(v2::TopologyRemediationTriggerIf {
            unhealthy_less_than_or_equal_to: max_unhealthy,
            unhealthy_in_range: non_empty(unhealthy_range),
        }),
        template_ref: remediation_template.as_ref().map(template_ref_up).filter(|r| !is_unset(r)),
    }
}

impl HealthParts {
    /// Nothing set: v1beta1 had no health check.
    pub(super) fn is_empty(&self) -> bool {
        self.checks.is_none() && self.trigger_if.is_none() && self.template_ref.is_none()
    }

    pub(super) fn down(self, ctx: &Ctx<'_>) -> MachineHealthCheckClass {
        let checks = self.checks.unwrap_or_default();
        let trigger_if = self.trigger_if.unwrap_or_default();
        MachineHealthCheckClass {
            unhealthy_conditions: checks
                .unhealthy_node_conditions
                .map(|cs| cs.into_iter().map(condition_down).collect()),
            max_unhealthy: trigger_if.unhealthy_less_than_or_equal_to,
            unhealthy_range: trigger_if.unhealthy_in_range,
            node_startup_timeout: seconds_to_duration(checks.node_startup_timeout_seconds),
            remediation_template: self.template_ref.map(|r| template_ref_down(r, ctx)),
        }
    }

    pub(super) fn control_plane_remediation(&self) -> Option<v2::ControlPlaneHealthCheckRemediation> {
        non_zero(v2::ControlPlaneHealthCheckRemediation {
            trigger_if: self.trigger_if.clone(),
            template_ref: self.template_ref.clone(),
        })
    }

    pub(super) fn worker_remediation(
        &self,
        max_in_flight: Option<IntOrString>,
    ) -> Option<v2::WorkerHealthCheckRemediation> {
        non_zero(v2::WorkerHealthCheckRemediation {
            max_in_flight,
            trigger_if: self.trigger_if.clone(),
            template_ref: self.template_ref.clone(),
        })
    }
}

fn condition_up(c: UnhealthyCondition) -> UnhealthyNodeCondition {
    UnhealthyNodeCondition {
        type_: c.type_,
        status: c.status,
        timeout_seconds: duration_to_seconds(Some(&c.timeout)).unwrap_or_default(),
    }
}

fn condition_down(c: UnhealthyNodeCondition) -> UnhealthyCondition {
    UnhealthyCondition {
        type_: c.type_,
        status: c.status,
        timeout: seconds_to_duration(Some(c.timeout_seconds)).unwrap_or_default(),
    }
}

pub(super) fn overrides_up(v: Option<v1::VariableOverrides>) -> Option<v2::VariableOverrides> {
    let overrides = non_empty_list(v?.overrides?.into_iter().map(variable_up).collect())?;
    Some(v2::VariableOverrides { overrides: Some(overrides) })
}

pub(super) fn overrides_down(v: Option<v2::VariableOverrides>) -> Option<v1::VariableOverrides> {
    v.map(|v| v1::VariableOverrides { overrides: v.overrides.map(|o| o.into_iter().map(variable_down).collect()) })
}

/// A variable value; `definitionFrom` is gone in v1beta2.
pub(super) fn variable_up(v: v1::ClusterVariable) -> v2::ClusterVariable {
    v2::ClusterVariable { name: v.name, value: v.value }
}

pub(super) fn variable_down(v: v2::ClusterVariable) -> v1::ClusterVariable {
    v1::ClusterVariable { name: v.name, definition_from: None, value: v.value }
}
