//! KubeadmControlPlane: the infrastructure reference and the Machine deletion timeouts move
//! under `machineTemplate.spec` (the reference in its apiGroup form, the timeouts in
//! seconds), `rolloutBefore`/`rolloutAfter`/`rolloutStrategy` become `rollout`,
//! `remediationStrategy` becomes `remediation` (seconds), `machineNamingStrategy` becomes
//! `machineNaming`. In the status `initialized` is `initialization.controlPlaneInitialized`,
//! the v1beta1 counters, conditions and failure fields move under `deprecated.v1beta1`, and
//! what v1beta1 carried in `status.v1beta2` (conditions, ready/available/up-to-date counts)
//! comes up to the top; v1beta1's `ready` is rebuilt from the ready count.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::config::metadata_up;
use super::config_spec::{spec_down, spec_durations, spec_up};
use super::kubeadm_spec::set;
use crate::capi::common::{MachineNamingStrategy, V1Beta2ReplicaStatus};
use crate::capi::conversion::{Ctx, HubSpoke, duration_to_seconds, non_empty, ref_down, ref_up, seconds_to_duration};
use crate::capi::core::MachineTimeouts;
use crate::capi::kubeadm::{self as v1, v1beta2 as v2};

pub struct KubeadmControlPlaneConversion;

impl HubSpoke for KubeadmControlPlaneConversion {
    type Hub = v2::KubeadmControlPlane;
    type Spoke = v1::KubeadmControlPlane;

    fn up(s: v1::KubeadmControlPlane, _ctx: &Ctx<'_>) -> v2::KubeadmControlPlane {
        let v1::KubeadmControlPlaneSpec {
            replicas,
            version,
            machine_template,
            kubeadm_config_spec,
            rollout_before,
            rollout_after,
            rollout_strategy,
            remediation_strategy,
            machine_naming_strategy,
        } = s.spec;
        let v1::KubeadmControlPlaneMachineTemplate { metadata, infrastructure_ref, timeouts } = machine_template;
        let machine_template = v2::KubeadmControlPlaneMachineTemplate {
            metadata: metadata_up(metadata),
            spec: v2::KubeadmControlPlaneMachineTemplateSpec {
                infrastructure_ref: ref_up(&infrastructure_ref),
                readiness_gates: None,
                deletion: deletion_up(timeouts),
                taints: None,
            },
        };
        let spec = v2::KubeadmControlPlaneSpec {
            replicas,
            version,
            machine_template,
            kubeadm_config_spec: spec_up(kubeadm_config_spec),
            rollout: rollout_up(rollout_before, rollout_after, rollout_strategy),
            remediation: remediation_up(remediation_strategy),
            machine_naming: naming(machine_naming_strategy),
        };
        v2::KubeadmControlPlane { metadata: s.metadata, spec, status: s.status.and_then(status_up) }
    }

    fn spoke_durations() -> Vec<String> {
        control_plane_durations("spec")
    }

    fn down(h: v2::KubeadmControlPlane, ctx: &Ctx<'_>) -> v1::KubeadmControlPlane {
        let v2::KubeadmControlPlaneSpec {
            replicas,
            version,
            machine_template,
            kubeadm_config_spec,
            rollout,
            remediation,
            machine_naming,
        } = h.spec;
        let v2::KubeadmControlPlaneMachineTemplate { metadata, spec: template_spec } = machine_template;
        let machine_template = v1::KubeadmControlPlaneMachineTemplate {
            metadata,
            infrastructure_ref: ref_down(&template_spec.infrastructure_ref, ctx),
            timeouts: deletion_down(template_spec.deletion),
        };
        let (rollout_before, rollout_after, rollout_strategy) = rollout_down(rollout);
        let spec = v1::KubeadmControlPlaneSpec {
            replicas,
            version,
            machine_template,
            kubeadm_config_spec: spec_down(kubeadm_config_spec),
            rollout_before,
            rollout_after,
            rollout_strategy,
            remediation_strategy: remediation_down(remediation),
            machine_naming_strategy: naming(machine_naming),
        };
        v1::KubeadmControlPlane { metadata: h.metadata, spec, status: h.status.and_then(status_down) }
    }
}

/// The Go durations of a v1beta1 control-plane spec at `prefix` (KubeadmControlPlane's
/// `spec`, its template's `spec.template.spec`).
pub(super) fn control_plane_durations(prefix: &str) -> Vec<String> {
    let own = [
        "machineTemplate.nodeDrainTimeout",
        "machineTemplate.nodeVolumeDetachTimeout",
        "machineTemplate.nodeDeletionTimeout",
        "remediationStrategy.retryPeriod",
        "remediationStrategy.minHealthyPeriod",
    ];
    let mut paths: Vec<String> = own.iter().map(|p| format!("{prefix}.{p}")).collect();
    paths.extend(spec_durations(&format!("{prefix}.kubeadmConfigSpec")));
    paths
}

/// Machine deletion timeouts as whole seconds.
pub(super) fn deletion_up(t: MachineTimeouts) -> Option<crate::capi::core::v1beta2::MachineDeletionSpec> {
    let MachineTimeouts { node_drain_timeout, node_volume_detach_timeout, node_deletion_timeout } = t;
    set(crate::capi::core::v1beta2::MachineDeletionSpec {
        node_drain_timeout_seconds: duration_to_seconds(node_drain_timeout.as_deref()),
        node_volume_detach_timeout_seconds: duration_to_seconds(node_volume_detach_timeout.as_deref()),
        node_deletion_timeout_seconds: duration_to_seconds(node_deletion_timeout.as_deref()),
    })
}

pub(super) fn deletion_down(d: Option<crate::capi::core::v1beta2::MachineDeletionSpec>) -> MachineTimeouts {
    let d = d.unwrap_or_default();
    MachineTimeouts {
        node_drain_timeout: seconds_to_duration(d.node_drain_timeout_seconds),
        node_volume_detach_timeout: seconds_to_duration(d.node_volume_detach_timeout_seconds),
        node_deletion_timeout: seconds_to_duration(d.node_deletion_timeout_seconds),
    }
}

pub(super) fn rollout_up(
    before: Option<v1::RolloutBefore>,
    after: Option<Time>,
    strategy: Option<v1::RolloutStrategy>,
) -> Option<v2::KubeadmControlPlaneRollout> {
    set(v2::KubeadmControlPlaneRollout {
        after,
        before: before.and_then(|b| {
            set(v2::KubeadmControlPlaneRolloutBefore { certificates_expiry_days: b.certificates_expiry_days })
        }),
        // RollingUpdate is the only strategy (and v1beta1's default when the type is unset).
        strategy: strategy.map(|s| v2::KubeadmControlPlaneRolloutStrategy {
            type_: v2::KubeadmControlPlaneRolloutStrategyType::RollingUpdate,
            rolling_update: s
                .rolling_update
                .and_then(|r| set(v2::KubeadmControlPlaneRollingUpdate { max_surge: r.max_surge })),
        }),
    })
}

pub(super) fn rollout_down(
    r: Option<v2::KubeadmControlPlaneRollout>,
) -> (Option<v1::RolloutBefore>, Option<Time>, Option<v1::RolloutStrategy>) {
    let v2::KubeadmControlPlaneRollout { after, before, strategy } = r.unwrap_or_default();
    let before = before.map(|b| v1::RolloutBefore { certificates_expiry_days: b.certificates_expiry_days });
    let strategy = strategy.map(|s| v1::RolloutStrategy {
        type_: Some(v1::ROLLING_UPDATE.to_string()),
        rolling_update: s.rolling_update.map(|r| v1::RollingUpdate { max_surge: r.max_surge }),
    });
    (before, after, strategy)
}

pub(super) fn remediation_up(r: Option<v1::RemediationStrategy>) -> Option<v2::KubeadmControlPlaneRemediation> {
    let v1::RemediationStrategy { max_retry, retry_period, min_healthy_period } = r?;
    set(v2::KubeadmControlPlaneRemediation {
        max_retry,
        retry_period_seconds: duration_to_seconds(retry_period.as_deref()),
        min_healthy_period_seconds: duration_to_seconds(min_healthy_period.as_deref()),
    })
}

pub(super) fn remediation_down(r: Option<v2::KubeadmControlPlaneRemediation>) -> Option<v1::RemediationStrategy> {
    let v2::KubeadmControlPlaneRemediation { max_retry, retry_period_seconds, min_healthy_period_seconds } = r?;
    Some(v1::RemediationStrategy {
        max_retry,
        retry_period: seconds_to_duration(retry_period_seconds),
        min_healthy_period: seconds_to_duration(min_healthy_period_seconds),
    })
}

/// The naming strategy has the same shape in both versions; an empty one is unset.
pub(super) fn naming(n: Option<MachineNamingStrategy>) -> Option<MachineNamingStrategy> {
    let template = non_empty(n?.template)?;
    Some(MachineNamingStrategy { template: Some(template) })
}

fn status_up(s: v1::KubeadmControlPlaneStatus) -> Option<v2::KubeadmControlPlaneStatus> {
    let v1::KubeadmControlPlaneStatus {
        selector,
        replicas,
        version,
        updated_replicas,
        ready_replicas,
        unavailable_replicas,
        initialized,
        ready: _,
        failure_reason,
        failure_message,
        observed_generation,
        conditions,
        last_remediation,
        v1beta2,
    } = s;
    let V1Beta2ReplicaStatus {
        conditions: new_conditions,
        ready_replicas: ready,
        available_replicas,
        up_to_date_replicas,
    } = v1beta2.unwrap_or_default();
    let deprecated = set(v2::KubeadmControlPlaneV1Beta1DeprecatedStatus {
        conditions,
        failure_reason: non_empty(failure_reason),
        failure_message: non_empty(failure_message),
        updated_replicas,
        ready_replicas,
        unavailable_replicas,
    })
    .map(|d| v2::KubeadmControlPlaneDeprecatedStatus { v1beta1: Some(d) });
    set(v2::KubeadmControlPlaneStatus {
        conditions: new_conditions,
        initialization: initialized
            .map(|i| v2::KubeadmControlPlaneInitializationStatus { control_plane_initialized: Some(i) }),
        selector: non_empty(selector),
        replicas,
        ready_replicas: ready,
        available_replicas,
        up_to_date_replicas,
        version: non_empty(version),
        versions: None,
        observed_generation,
        last_remediation: last_remediation.map(|l| v2::LastRemediationStatus {
            machine: l.machine,
            time: l.timestamp,
            retry_count: l.retry_count,
        }),
        deprecated,
    })
}

fn status_down(s: v2::KubeadmControlPlaneStatus) -> Option<v1::KubeadmControlPlaneStatus> {
    let v2::KubeadmControlPlaneStatus {
        conditions,
        initialization,
        selector,
        replicas,
        ready_replicas,
        available_replicas,
        up_to_date_replicas,
        version,
        versions: _,
        observed_generation,
        last_remediation,
        deprecated,
    } = s;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    set(v1::KubeadmControlPlaneStatus {
        selector,
        replicas,
        version,
        updated_replicas: old.updated_replicas,
        ready_replicas: old.ready_replicas,
        unavailable_replicas: old.unavailable_replicas,
        initialized: initialization.and_then(|i| i.control_plane_initialized),
        // v1beta1's API-server readiness: some control-plane Node is ready.
        ready: old.ready_replicas.map(|n| n > 0),
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
        observed_generation,
        conditions: old.conditions,
        last_remediation: last_remediation.map(|l| v1::LastRemediationStatus {
            machine: l.machine,
            timestamp: l.time,
            retry_count: l.retry_count,
        }),
        v1beta2: set(V1Beta2ReplicaStatus { conditions, ready_replicas, available_replicas, up_to_date_replicas }),
    })
}
