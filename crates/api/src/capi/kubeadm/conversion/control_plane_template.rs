//! KubeadmControlPlaneTemplate: the template's control-plane spec converts as
//! KubeadmControlPlane's does (see [`super::control_plane`]); its Machine template has no
//! infrastructure reference, only metadata and the deletion timeouts.

use super::config::metadata_up;
use super::config_spec::{spec_down, spec_up};
use super::control_plane::{
    control_plane_durations, deletion_down, deletion_up, naming, remediation_down, remediation_up, rollout_down,
    rollout_up,
};
use super::kubeadm_spec::set;
use crate::capi::common::TemplateResource;
use crate::capi::conversion::{Ctx, HubSpoke};
use crate::capi::kubeadm::{self as v1, v1beta2 as v2};

pub struct KubeadmControlPlaneTemplateConversion;

impl HubSpoke for KubeadmControlPlaneTemplateConversion {
    type Hub = v2::KubeadmControlPlaneTemplate;
    type Spoke = v1::KubeadmControlPlaneTemplate;

    fn up(s: v1::KubeadmControlPlaneTemplate, _ctx: &Ctx<'_>) -> v2::KubeadmControlPlaneTemplate {
        let TemplateResource { metadata, spec } = s.spec.template;
        let template =
            v2::KubeadmControlPlaneTemplateResource { metadata: metadata_up(metadata), spec: resource_spec_up(spec) };
        v2::KubeadmControlPlaneTemplate { metadata: s.metadata, spec: v2::KubeadmControlPlaneTemplateSpec { template } }
    }

    fn spoke_durations() -> Vec<String> {
        control_plane_durations("spec.template.spec")
    }

    fn down(h: v2::KubeadmControlPlaneTemplate, _ctx: &Ctx<'_>) -> v1::KubeadmControlPlaneTemplate {
        let v2::KubeadmControlPlaneTemplateResource { metadata, spec } = h.spec.template;
        let template = TemplateResource { metadata, spec: resource_spec_down(spec) };
        v1::KubeadmControlPlaneTemplate { metadata: h.metadata, spec: v1::KubeadmControlPlaneTemplateSpec { template } }
    }
}

fn resource_spec_up(s: v1::KubeadmControlPlaneTemplateResourceSpec) -> v2::KubeadmControlPlaneTemplateResourceSpec {
    let v1::KubeadmControlPlaneTemplateResourceSpec {
        machine_template,
        kubeadm_config_spec,
        rollout_before,
        rollout_after,
        rollout_strategy,
        remediation_strategy,
        machine_naming_strategy,
    } = s;
    v2::KubeadmControlPlaneTemplateResourceSpec {
        machine_template: machine_template.and_then(|m| {
            let v1::KubeadmControlPlaneTemplateMachineTemplate { metadata, timeouts } = m;
            set(v2::KubeadmControlPlaneTemplateMachineTemplate {
                metadata: metadata_up(metadata),
                spec: set(v2::KubeadmControlPlaneTemplateMachineTemplateSpec {
                    deletion: deletion_up(timeouts),
                    taints: None,
                }),
            })
        }),
        kubeadm_config_spec: spec_up(kubeadm_config_spec),
        rollout: rollout_up(rollout_before, rollout_after, rollout_strategy),
        remediation: remediation_up(remediation_strategy),
        machine_naming: naming(machine_naming_strategy),
    }
}

fn resource_spec_down(s: v2::KubeadmControlPlaneTemplateResourceSpec) -> v1::KubeadmControlPlaneTemplateResourceSpec {
    let v2::KubeadmControlPlaneTemplateResourceSpec {
        machine_template,
        kubeadm_config_spec,
        rollout,
        remediation,
        machine_naming,
    } = s;
    let (rollout_before, rollout_after, rollout_strategy) = rollout_down(rollout);
    v1::KubeadmControlPlaneTemplateResourceSpec {
        machine_template: machine_template.map(|m| v1::KubeadmControlPlaneTemplateMachineTemplate {
            metadata: m.metadata,
            timeouts: deletion_down(m.spec.and_then(|s| s.deletion)),
        }),
        kubeadm_config_spec: spec_down(kubeadm_config_spec),
        rollout_before,
        rollout_after,
        rollout_strategy,
        remediation_strategy: remediation_down(remediation),
        machine_naming_strategy: naming(machine_naming),
    }
}
