//! The class's template references: `RefVersionsUpToDate` says whether each names the
//! version its provider's CRD lists for the Cluster API contract (a provider upgrade can
//! leave a class on an older version), and each template gets the class as an owner.

use drydock_api::capi::common::VersionedTemplateReference;
use drydock_api::capi::core::v1beta2::ClusterClass;
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::Observed;
use drydock_api::capi::v1beta2_conditions::names::{
    INTERNAL_ERROR_REASON, REF_VERSIONS_NOT_UP_TO_DATE_REASON, REF_VERSIONS_UP_TO_DATE, REF_VERSIONS_UP_TO_DATE_REASON,
};
use k8s_openapi::api::core::v1::ObjectReference;

use crate::framework::contract::ContractVersions;

/// Every template the class references, each once, in spec order.
pub fn template_refs(cc: &ClusterClass) -> Vec<&VersionedTemplateReference> {
    let mut refs: Vec<&VersionedTemplateReference> = Vec::new();
    for (r, _) in cc.template_refs() {
        if !refs.contains(&r) {
            refs.push(r);
        }
    }
    refs
}

/// A template reference as an object reference in the class's namespace.
pub fn object_ref(r: &VersionedTemplateReference, namespace: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        name: Some(r.name.clone()),
        namespace: Some(namespace.to_string()),
        ..Default::default()
    }
}

/// What the contract versions say of the class's references.
#[derive(Debug, Default, PartialEq)]
pub struct Versions {
    /// References to an older version than the contract's, with the one to use.
    pub outdated: Vec<(VersionedTemplateReference, String)>,
    /// References whose contract version could not be read, with why.
    pub unknown: Vec<(VersionedTemplateReference, String)>,
}

/// Looks up the contract version of every referenced kind.
pub async fn versions(cc: &ClusterClass, contracts: &ContractVersions) -> Versions {
    let mut out = Versions::default();
    for r in template_refs(cc) {
        match contracts.api_version(owner::api_group(&r.api_version), &r.kind).await {
            Ok(want) if want != r.api_version => out.outdated.push((r.clone(), want)),
            Ok(_) => {}
            Err(e) => out.unknown.push((r.clone(), e.to_string())),
        }
    }
    out
}

/// `RefVersionsUpToDate` from the versions found.
pub fn condition(v: &Versions) -> Observed {
    let describe = |r: &VersionedTemplateReference| format!("{} {}", r.kind, r.name);
    if !v.unknown.is_empty() {
        let lines: Vec<String> = v.unknown.iter().map(|(r, why)| format!("* {}: {why}", describe(r))).collect();
        return Observed::unknown(REF_VERSIONS_UP_TO_DATE, INTERNAL_ERROR_REASON, lines.join("\n"));
    }
    if v.outdated.is_empty() {
        return Observed::true_(REF_VERSIONS_UP_TO_DATE, REF_VERSIONS_UP_TO_DATE_REASON);
    }
    let lines: Vec<String> = v
        .outdated
        .iter()
        .map(|(r, want)| format!("* {}: apiVersion {} should be {want}", describe(r), r.api_version))
        .collect();
    Observed::false_(REF_VERSIONS_UP_TO_DATE, REF_VERSIONS_NOT_UP_TO_DATE_REASON, lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::v1beta2_conditions::Status;
    use serde_json::json;

    use super::*;

    fn tref(api_version: &str, kind: &str, name: &str) -> serde_json::Value {
        json!({"templateRef": {"apiVersion": api_version, "kind": kind, "name": name}})
    }

    fn class() -> ClusterClass {
        let infra = "infrastructure.cluster.x-k8s.io/v1beta1";
        serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": {"name": "cc", "namespace": "default"},
            "spec": {
                "infrastructure": tref(infra, "DevClusterTemplate", "c"),
                "controlPlane": {
                    "templateRef": tref("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate", "cp")["templateRef"],
                    "machineInfrastructure": tref(infra, "DevMachineTemplate", "m"),
                },
                "workers": {"machineDeployments": [
                    {"class": "a", "bootstrap": tref("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", "w"),
                     "infrastructure": tref(infra, "DevMachineTemplate", "m")},
                    {"class": "b", "bootstrap": tref("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", "w"),
                     "infrastructure": tref(infra, "DevMachineTemplate", "other")},
                ]},
            },
        }))
        .expect("class")
    }

    #[test]
    fn every_template_is_listed_once() {
        let cc = class();
        let names: Vec<(&str, &str)> = template_refs(&cc).iter().map(|r| (r.kind.as_str(), r.name.as_str())).collect();
        assert_eq!(
            names,
            [
                ("DevClusterTemplate", "c"),
                ("KubeadmControlPlaneTemplate", "cp"),
                ("DevMachineTemplate", "m"),
                ("KubeadmConfigTemplate", "w"),
                ("DevMachineTemplate", "other"),
            ]
        );
    }

    #[test]
    fn outdated_references_name_the_version_to_use() {
        let cc = class();
        let refs = template_refs(&cc);
        let v = Versions {
            outdated: vec![(refs[0].clone(), "infrastructure.cluster.x-k8s.io/v1beta2".into())],
            unknown: vec![],
        };
        let c = condition(&v);
        assert_eq!((c.status, c.reason.as_str()), (Status::False, REF_VERSIONS_NOT_UP_TO_DATE_REASON));
        assert_eq!(
            c.message,
            "* DevClusterTemplate c: apiVersion infrastructure.cluster.x-k8s.io/v1beta1 should be \
             infrastructure.cluster.x-k8s.io/v1beta2"
        );
        let ok = condition(&Versions::default());
        assert_eq!((ok.status, ok.reason.as_str()), (Status::True, REF_VERSIONS_UP_TO_DATE_REASON));
        let unknown = condition(&Versions { outdated: vec![], unknown: vec![(refs[1].clone(), "no CRD".into())] });
        assert_eq!((unknown.status, unknown.reason.as_str()), (Status::Unknown, INTERNAL_ERROR_REASON));
        assert!(unknown.message.contains("KubeadmControlPlaneTemplate cp: no CRD"), "{}", unknown.message);
    }
}
