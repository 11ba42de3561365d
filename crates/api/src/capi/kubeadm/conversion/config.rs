//! KubeadmConfig and KubeadmConfigTemplate: the spec as [`super::config_spec`] maps it; in
//! the status `ready` is `initialization.dataSecretCreated`, the v1beta1 conditions and
//! failure fields move under `deprecated.v1beta1`, and the conditions v1beta1 carried in
//! `status.v1beta2` become `status.conditions`.

use super::config_spec::{spec_down, spec_durations, spec_up};
use super::kubeadm_spec::set;
use crate::capi::common::{ObjectMeta, V1Beta2Conditions};
use crate::capi::conversion::{Ctx, HubSpoke, non_empty};
use crate::capi::kubeadm::{self as v1, v1beta2 as v2};

pub struct KubeadmConfigConversion;

impl HubSpoke for KubeadmConfigConversion {
    type Hub = v2::KubeadmConfig;
    type Spoke = v1::KubeadmConfig;

    fn up(s: v1::KubeadmConfig, _ctx: &Ctx<'_>) -> v2::KubeadmConfig {
        v2::KubeadmConfig { metadata: s.metadata, spec: spec_up(s.spec), status: s.status.and_then(status_up) }
    }

    fn down(h: v2::KubeadmConfig, _ctx: &Ctx<'_>) -> v1::KubeadmConfig {
        v1::KubeadmConfig { metadata: h.metadata, spec: spec_down(h.spec), status: h.status.and_then(status_down) }
    }

    fn spoke_durations() -> Vec<String> {
        spec_durations("spec")
    }
}

pub struct KubeadmConfigTemplateConversion;

impl HubSpoke for KubeadmConfigTemplateConversion {
    type Hub = v2::KubeadmConfigTemplate;
    type Spoke = v1::KubeadmConfigTemplate;

    fn up(s: v1::KubeadmConfigTemplate, _ctx: &Ctx<'_>) -> v2::KubeadmConfigTemplate {
        let v1::KubeadmConfigTemplateResource { metadata, spec } = s.spec.template;
        let template = v2::KubeadmConfigTemplateResource { metadata: metadata_up(metadata), spec: spec_up(spec) };
        v2::KubeadmConfigTemplate { metadata: s.metadata, spec: v2::KubeadmConfigTemplateSpec { template } }
    }

    fn spoke_durations() -> Vec<String> {
        spec_durations("spec.template.spec")
    }

    fn down(h: v2::KubeadmConfigTemplate, _ctx: &Ctx<'_>) -> v1::KubeadmConfigTemplate {
        let v2::KubeadmConfigTemplateResource { metadata, spec } = h.spec.template;
        let template = v1::KubeadmConfigTemplateResource { metadata, spec: spec_down(spec) };
        v1::KubeadmConfigTemplate { metadata: h.metadata, spec: v1::KubeadmConfigTemplateSpec { template } }
    }
}

/// Template metadata of v1beta2: unset rather than empty.
pub(super) fn metadata_up(m: Option<ObjectMeta>) -> Option<ObjectMeta> {
    m.filter(|m| !m.is_empty())
}

fn status_up(s: v1::KubeadmConfigStatus) -> Option<v2::KubeadmConfigStatus> {
    let v1::KubeadmConfigStatus {
        ready,
        data_secret_name,
        failure_reason,
        failure_message,
        observed_generation,
        conditions,
        v1beta2,
    } = s;
    let deprecated = set(v2::KubeadmConfigV1Beta1DeprecatedStatus {
        conditions,
        failure_reason: non_empty(failure_reason),
        failure_message: non_empty(failure_message),
    })
    .map(|d| v2::KubeadmConfigDeprecatedStatus { v1beta1: Some(d) });
    set(v2::KubeadmConfigStatus {
        conditions: v1beta2.and_then(|v| v.conditions),
        initialization: ready.map(|r| v2::KubeadmConfigInitializationStatus { data_secret_created: Some(r) }),
        data_secret_name: non_empty(data_secret_name),
        observed_generation,
        deprecated,
    })
}

fn status_down(s: v2::KubeadmConfigStatus) -> Option<v1::KubeadmConfigStatus> {
    let v2::KubeadmConfigStatus { conditions, initialization, data_secret_name, observed_generation, deprecated } = s;
    let old = deprecated.and_then(|d| d.v1beta1).unwrap_or_default();
    set(v1::KubeadmConfigStatus {
        ready: initialization.and_then(|i| i.data_secret_created),
        data_secret_name,
        failure_reason: old.failure_reason,
        failure_message: old.failure_message,
        observed_generation,
        conditions: old.conditions,
        v1beta2: conditions.map(|c| V1Beta2Conditions { conditions: Some(c) }),
    })
}
