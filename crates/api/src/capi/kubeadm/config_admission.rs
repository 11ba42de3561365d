//! KubeadmConfig and KubeadmConfigTemplate admission, on the v1beta2 types (the stored
//! version; objects written in v1beta1 are converted first): spec defaults and checks.

use super::spec_checks::{default_config_spec, validate_config_spec};
use super::v1beta2::{KubeadmConfig, KubeadmConfigTemplate};
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;

pub(crate) struct KubeadmConfigAdmission;

impl KindAdmission for KubeadmConfigAdmission {
    type Object = KubeadmConfig;

    fn default(&self, c: &mut KubeadmConfig, _old: Option<&KubeadmConfig>) -> Result<(), Vec<FieldError>> {
        default_config_spec(&mut c.spec);
        Ok(())
    }

    fn validate(&self, c: &KubeadmConfig, _old: Option<&KubeadmConfig>) -> Vec<FieldError> {
        validate_config_spec(&c.spec, &FieldPath::new("spec"))
    }
}

pub(crate) struct KubeadmConfigTemplateAdmission;

impl KindAdmission for KubeadmConfigTemplateAdmission {
    type Object = KubeadmConfigTemplate;

    fn default(
        &self,
        t: &mut KubeadmConfigTemplate,
        _old: Option<&KubeadmConfigTemplate>,
    ) -> Result<(), Vec<FieldError>> {
        default_config_spec(&mut t.spec.template.spec);
        Ok(())
    }

    fn validate(&self, t: &KubeadmConfigTemplate, _old: Option<&KubeadmConfigTemplate>) -> Vec<FieldError> {
        validate_config_spec(&t.spec.template.spec, &FieldPath::new("spec").child("template").child("spec"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::capi::testutil::{admit, error_fields};
    use crate::capi::typed::Typed;

    #[test]
    fn config_and_template() {
        let cfg = json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
            "metadata": { "name": "c", "namespace": "ns" },
            "spec": { "joinConfiguration": { "nodeRegistration": {} } }
        });
        let out = admit(&Typed(KubeadmConfigAdmission), cfg, None).unwrap();
        assert_eq!(out["spec"]["format"], "cloud-config");
        assert_eq!(out["spec"]["joinConfiguration"]["nodeRegistration"]["imagePullPolicy"], "IfNotPresent");

        let tpl = json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
            "metadata": { "name": "t", "namespace": "ns" },
            "spec": { "template": { "spec": { "ignition": {} } } }
        });
        let r = admit(&Typed(KubeadmConfigTemplateAdmission), tpl, None);
        assert_eq!(error_fields(&r), ["spec.template.spec.ignition"]);
    }
}
