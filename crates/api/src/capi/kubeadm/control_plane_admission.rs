//! KubeadmControlPlane and KubeadmControlPlaneTemplate admission, on the v1beta2 types (the
//! stored version; objects written in v1beta1 are converted first): replicas, version,
//! rollout strategy and kubeadm defaults; replica, version, infrastructure reference,
//! template, rollout, remediation and kubeadm checks, and the update rules of
//! `control_plane_update`.

use super::control_plane_update::validate_update;
use super::rollout_checks::{default_rollout, validate_remediation, validate_rollout};
use super::spec_checks::{certificate_validity_days, default_config_spec, validate_config_spec};
use super::v1beta2::{KubeadmControlPlane, KubeadmControlPlaneSpec, KubeadmControlPlaneTemplate};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::{ContractVersionedObjectReference, MachineNamingStrategy, ObjectMeta};
use crate::capi::keys::CLUSTER_NAME_LABEL;
use crate::capi::typed::KindAdmission;
use crate::capi::validation::{validate_annotations, validate_labels};
use crate::capi::{naming, version};

pub(crate) struct KubeadmControlPlaneAdmission;

impl KindAdmission for KubeadmControlPlaneAdmission {
    type Object = KubeadmControlPlane;

    fn default(
        &self,
        kcp: &mut KubeadmControlPlane,
        _old: Option<&KubeadmControlPlane>,
    ) -> Result<(), Vec<FieldError>> {
        let spec = &mut kcp.spec;
        spec.replicas.get_or_insert(1);
        spec.version = version::with_v_prefix(&spec.version);
        default_rollout(&mut spec.rollout);
        default_config_spec(&mut spec.kubeadm_config_spec);
        Ok(())
    }

    fn validate(&self, kcp: &KubeadmControlPlane, old: Option<&KubeadmControlPlane>) -> Vec<FieldError> {
        let path = FieldPath::new("spec");
        let spec = &kcp.spec;
        let mut errs = validate_replicas(kcp);
        if spec.version.is_empty() {
            errs.push(FieldError::required(path.child("version"), "must be set"));
        } else if !version::is_kube_semver(&spec.version) {
            errs.push(FieldError::invalid(
                path.child("version"),
                spec.version.as_str(),
                "must be a valid semantic version",
            ));
        }
        let mt = path.child("machineTemplate");
        errs.extend(validate_infrastructure_ref(
            &spec.machine_template.spec.infrastructure_ref,
            &mt.child("spec").child("infrastructureRef"),
        ));
        errs.extend(validate_template_metadata(spec.machine_template.metadata.as_ref(), &mt.child("metadata")));
        if let Some(r) = &spec.rollout {
            let validity = certificate_validity_days(&spec.kubeadm_config_spec);
            errs.extend(validate_rollout(r, spec.replicas, validity, &path.child("rollout")));
        }
        if let Some(r) = &spec.remediation {
            errs.extend(validate_remediation(r, &path.child("remediation")));
        }
        let cluster =
            kcp.metadata.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)).map_or("cluster", String::as_str);
        errs.extend(validate_naming(spec.machine_naming.as_ref(), cluster, kcp.metadata.name.as_deref(), &path));
        errs.extend(validate_config_spec(&spec.kubeadm_config_spec, &path.child("kubeadmConfigSpec")));
        errs.extend(validate_validity_supported(spec, &path));
        if let Some(old) = old {
            errs.extend(validate_update(spec, &old.spec));
        }
        errs
    }
}

/// kubeadm reads `certificateValidityPeriodDays` from v1.31 on (its v1beta4 configuration);
/// an older control plane would silently sign certificates for the default year.
fn validate_validity_supported(spec: &KubeadmControlPlaneSpec, path: &FieldPath) -> Option<FieldError> {
    let cc = spec.kubeadm_config_spec.cluster_configuration.as_ref()?;
    cc.certificate_validity_period_days?;
    let v = version::parse(&spec.version).ok()?;
    ((v.major, v.minor) < (1, 31)).then(|| {
        let p = path.child("kubeadmConfigSpec").child("clusterConfiguration").child("certificateValidityPeriodDays");
        FieldError::forbidden(
            p,
            format!("is only supported with Kubernetes v1.31 or above (version is {})", spec.version),
        )
    })
}

/// At least one replica, and an odd number with stacked etcd (quorum).
fn validate_replicas(kcp: &KubeadmControlPlane) -> Vec<FieldError> {
    let path = FieldPath::new("spec").child("replicas");
    let Some(replicas) = kcp.spec.replicas else { return vec![FieldError::required(path, "must be set")] };
    if replicas <= 0 {
        return vec![FieldError::forbidden(path, "cannot be less than or equal to 0")];
    }
    if !kcp.spec.has_external_etcd() && replicas % 2 == 0 {
        return vec![FieldError::forbidden(path, "cannot be an even number when etcd is stacked")];
    }
    Vec::new()
}

/// The infrastructure template must be named completely. A v1beta2 reference has no
/// namespace: it is always the control plane's own.
fn validate_infrastructure_ref(r: &ContractVersionedObjectReference, path: &FieldPath) -> Vec<FieldError> {
    crate::capi::refs::validate_fields_set([("apiGroup", &*r.api_group), ("kind", &r.kind), ("name", &r.name)], path)
}

fn validate_template_metadata(meta: Option<&ObjectMeta>, path: &FieldPath) -> Vec<FieldError> {
    let Some(meta) = meta else { return Vec::new() };
    let mut errs = validate_labels(meta.labels.as_ref(), &path.child("labels"));
    errs.extend(validate_annotations(meta.annotations.as_ref(), &path.child("annotations")));
    errs
}

fn validate_naming(
    s: Option<&MachineNamingStrategy>,
    cluster: &str,
    name: Option<&str>,
    spec: &FieldPath,
) -> Vec<FieldError> {
    let Some(t) = s.and_then(|s| s.template.as_deref()) else { return Vec::new() };
    let vars = [("cluster.name", cluster), ("kubeadmControlPlane.name", name.unwrap_or("control-plane"))];
    naming::validate_template(t, &vars, &spec.child("machineNaming").child("template"))
}

pub(crate) struct KubeadmControlPlaneTemplateAdmission;

impl KindAdmission for KubeadmControlPlaneTemplateAdmission {
    type Object = KubeadmControlPlaneTemplate;

    fn default(
        &self,
        t: &mut KubeadmControlPlaneTemplate,
        _old: Option<&KubeadmControlPlaneTemplate>,
    ) -> Result<(), Vec<FieldError>> {
        let spec = &mut t.spec.template.spec;
        default_rollout(&mut spec.rollout);
        default_config_spec(&mut spec.kubeadm_config_spec);
        Ok(())
    }

    fn validate(&self, t: &KubeadmControlPlaneTemplate, _old: Option<&KubeadmControlPlaneTemplate>) -> Vec<FieldError> {
        let path = FieldPath::new("spec").child("template").child("spec");
        let spec = &t.spec.template.spec;
        let mut errs = validate_config_spec(&spec.kubeadm_config_spec, &path.child("kubeadmConfigSpec"));
        if let Some(r) = &spec.rollout {
            let validity = certificate_validity_days(&spec.kubeadm_config_spec);
            errs.extend(validate_rollout(r, None, validity, &path.child("rollout")));
        }
        if let Some(r) = &spec.remediation {
            errs.extend(validate_remediation(r, &path.child("remediation")));
        }
        if let Some(mt) = &spec.machine_template {
            errs.extend(validate_template_metadata(
                mt.metadata.as_ref(),
                &path.child("machineTemplate").child("metadata"),
            ));
        }
        errs.extend(validate_naming(spec.machine_naming.as_ref(), "cluster", Some("control-plane"), &path));
        errs
    }
}

#[cfg(test)]
#[path = "control_plane_admission_tests.rs"]
mod tests;
