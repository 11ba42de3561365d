//! The table of every Cluster API kind drydock serves: its CRD (generated from the Rust
//! types, one version per type), its admission and, for kinds served in several versions,
//! their conversion.

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps,
    ServiceReference, WebhookClientConfig, WebhookConversion,
};
use kube::CustomResourceExt;

use super::conversion::lossless::Native;
use super::conversion::{AdmitAt, HubSpoke};
use super::typed::{KindAdmission, Typed};
use super::{addons, core, dev, docker, inmemory, ipam, kubeadm, runtime};
use crate::admission::Admission;
use crate::conversion::Conversion;
use crate::resource::{NativeKind, ResourceDef};

fn entry<K: CustomResourceExt>(admission: Option<Arc<dyn Admission>>) -> NativeKind {
    let mut crd = K::crd();
    add_type_meta_to_schema(&mut crd);
    drop_struct_defaults(&mut crd);
    NativeKind { crd, admission, conversion: None }
}

/// A kind served in v1beta1 (deprecated, as upstream) and v1beta2, converted by `C`, and
/// stored in v1beta2. Its admission is written for v1beta2 and runs there whatever version a
/// client writes.
fn hub_stored<C: HubSpoke, A: KindAdmission<Object = C::Hub>>(admission: A) -> NativeKind
where
    C::Hub: CustomResourceExt,
    C::Spoke: CustomResourceExt,
{
    served::<C>(Arc::new(Native::of::<C>()), Vec::new(), typed(admission))
}

/// Like [`hub_stored`], and also served in an older version converted by `Older` (IPAM's
/// v1alpha1, which upstream still serves and does not deprecate).
fn hub_stored_with_older<C: HubSpoke, Older: HubSpoke<Hub = C::Hub>, A: KindAdmission<Object = C::Hub>>(
    admission: A,
) -> NativeKind
where
    C::Hub: CustomResourceExt,
    C::Spoke: CustomResourceExt,
    Older::Spoke: CustomResourceExt,
{
    let conversion = Arc::new(Native::of::<C>().with_spoke::<Older>());
    served::<C>(conversion, entry::<Older::Spoke>(None).crd.spec.versions, typed(admission))
}

fn served<C: HubSpoke>(
    conversion: Arc<dyn Conversion>,
    mut versions: Vec<CustomResourceDefinitionVersion>,
    admission: Option<Arc<dyn Admission>>,
) -> NativeKind
where
    C::Hub: CustomResourceExt,
    C::Spoke: CustomResourceExt,
{
    let stored_api_version = <C::Hub as kube::Resource>::api_version(&()).into_owned();
    let storage_version = stored_api_version.rsplit('/').next().unwrap_or_default().to_string();
    let durations = vec![(<C::Spoke as kube::Resource>::api_version(&()).into_owned(), C::spoke_durations())];
    let admission = admission.map(|inner| -> Arc<dyn Admission> {
        Arc::new(AdmitAt { api_version: stored_api_version, inner, conversion: conversion.clone(), durations })
    });
    let (mut spoke, mut hub) = (entry::<C::Spoke>(None).crd, entry::<C::Hub>(None).crd);
    versions.append(&mut spoke.spec.versions);
    versions.append(&mut hub.spec.versions);
    for v in &mut versions {
        v.storage = v.name == storage_version;
        if v.name == "v1beta1" {
            v.deprecated = Some(true);
        }
    }
    spoke.spec.versions = versions;
    spoke.spec.conversion = Some(conversion_webhook());
    NativeKind { crd: spoke, admission, conversion: Some(conversion) }
}

/// The conversion stanza of drydock's multi-version CRDs: drydock converts (in process
/// when it serves them; `drydock crds` points a real API server at its `/convert`).
fn conversion_webhook() -> CustomResourceConversion {
    CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(WebhookConversion {
            conversion_review_versions: vec!["v1".into()],
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    namespace: "drydock-system".into(),
                    name: "drydock".into(),
                    path: Some("/convert".into()),
                    port: None,
                }),
                ..Default::default()
            }),
        }),
    }
}

/// kube-derive leaves `apiVersion`, `kind` and `metadata` out of the root schema; upstream
/// CRDs declare them (and `kubectl explain` shows them), so they are added here.
fn add_type_meta_to_schema(crd: &mut CustomResourceDefinition) {
    for version in &mut crd.spec.versions {
        let Some(root) = version.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut()) else { continue };
        let props = root.properties.get_or_insert_with(Default::default);
        for (name, type_) in [("apiVersion", "string"), ("kind", "string"), ("metadata", "object")] {
            props
                .entry(name.to_string())
                .or_insert_with(|| JSONSchemaProps { type_: Some(type_.to_string()), ..Default::default() });
        }
    }
}

/// `#[serde(default)]` on a struct field makes schemars publish the struct's `Default` as a
/// schema `default`. For the Rust types "absent" and "default" are the same, so such defaults
/// add nothing, upstream's CRDs have none, and some (empty required names) would not even
/// validate against their own schema. Scalar defaults are kept: they are the API's.
fn drop_struct_defaults(crd: &mut CustomResourceDefinition) {
    // Walks schema nodes only: a property may itself be named `default`.
    fn walk(node: &mut serde_json::Value) {
        let Some(m) = node.as_object_mut() else { return };
        if m.get("default").is_some_and(serde_json::Value::is_object) {
            m.remove("default");
        }
        if let Some(props) = m.get_mut("properties").and_then(serde_json::Value::as_object_mut) {
            props.values_mut().for_each(walk);
        }
        for key in ["items", "additionalProperties", "not"] {
            if let Some(child) = m.get_mut(key) {
                walk(child);
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(children) = m.get_mut(key).and_then(serde_json::Value::as_array_mut) {
                children.iter_mut().for_each(walk);
            }
        }
    }
    for version in &mut crd.spec.versions {
        let Some(schema) = version.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut()) else { continue };
        let Ok(mut value) = serde_json::to_value(&*schema) else { continue };
        walk(&mut value);
        if let Ok(cleaned) = serde_json::from_value(value) {
            *schema = cleaned;
        }
    }
}

fn typed<A: KindAdmission>(a: A) -> Option<Arc<dyn Admission>> {
    Some(Arc::new(Typed(a)))
}

/// Provider kinds carry the contract labels core reads to turn a v1beta2 reference (API
/// group only) into a version: `cluster.x-k8s.io/<contract>: <versions joined by _>`.
fn add_contract_labels(mut kind: NativeKind) -> NativeKind {
    const PROVIDER_GROUPS: [&str; 3] =
        ["bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"];
    if !PROVIDER_GROUPS.contains(&kind.crd.spec.group.as_str()) {
        return kind;
    }
    let [v1beta2_label, v1beta1_label] = super::contract::CONTRACT_LABELS;
    let served: Vec<&str> = kind.crd.spec.versions.iter().filter(|v| v.served).map(|v| v.name.as_str()).collect();
    let (v1beta2, older): (Vec<&str>, Vec<&str>) = served.into_iter().partition(|v| *v == "v1beta2");
    let labels = kind.crd.metadata.labels.get_or_insert_with(Default::default);
    if !older.is_empty() {
        labels.insert(v1beta1_label.into(), older.join("_"));
    }
    if !v1beta2.is_empty() {
        labels.insert(v1beta2_label.into(), "v1beta2".into());
    }
    kind
}

/// Every Cluster API kind drydock serves.
pub fn kinds() -> Vec<NativeKind> {
    listed().into_iter().map(add_contract_labels).collect()
}

fn listed() -> Vec<NativeKind> {
    vec![
        hub_stored::<core::conversion::ClusterConversion, _>(core::ClusterAdmission),
        hub_stored::<core::conversion::ClusterClassConversion, _>(core::ClusterClassAdmission),
        hub_stored::<core::conversion::MachineConversion, _>(core::MachineAdmission),
        hub_stored::<core::conversion::MachineSetConversion, _>(core::MachineSetAdmission),
        hub_stored::<core::conversion::MachineDeploymentConversion, _>(core::MachineDeploymentAdmission),
        hub_stored::<core::conversion::MachineHealthCheckConversion, _>(core::MachineHealthCheckAdmission),
        hub_stored::<core::conversion::MachinePoolConversion, _>(core::MachinePoolAdmission),
        hub_stored::<core::conversion::MachineDrainRuleConversion, _>(core::MachineDrainRuleAdmission),
        hub_stored::<kubeadm::conversion::KubeadmControlPlaneConversion, _>(kubeadm::KubeadmControlPlaneAdmission),
        hub_stored::<kubeadm::conversion::KubeadmControlPlaneTemplateConversion, _>(
            kubeadm::KubeadmControlPlaneTemplateAdmission,
        ),
        hub_stored::<kubeadm::conversion::KubeadmConfigConversion, _>(kubeadm::KubeadmConfigAdmission),
        hub_stored::<kubeadm::conversion::KubeadmConfigTemplateConversion, _>(kubeadm::KubeadmConfigTemplateAdmission),
        entry::<inmemory::InMemoryCluster>(typed(inmemory::InMemoryClusterAdmission)),
        entry::<inmemory::InMemoryClusterTemplate>(typed(inmemory::InMemoryClusterTemplateAdmission)),
        entry::<inmemory::InMemoryMachine>(typed(inmemory::InMemoryMachineAdmission)),
        entry::<inmemory::InMemoryMachineTemplate>(typed(inmemory::InMemoryMachineTemplateAdmission)),
        hub_stored::<dev::conversion::DevClusterConversion, _>(dev::DevClusterAdmission),
        hub_stored::<dev::conversion::DevClusterTemplateConversion, _>(dev::DevClusterTemplateAdmission),
        hub_stored::<dev::conversion::DevMachineConversion, _>(dev::DevMachineAdmission),
        hub_stored::<dev::conversion::DevMachineTemplateConversion, _>(dev::DevMachineTemplateAdmission),
        entry::<dev::v1beta2::DevMachinePool>(typed(dev::DevMachinePoolAdmission)),
        entry::<dev::v1beta2::DevMachinePoolTemplate>(typed(dev::DevMachinePoolTemplateAdmission)),
        deprecated(hub_stored::<docker::conversion::DockerClusterConversion, _>(docker::DockerAdmission::new())),
        deprecated(
            hub_stored::<docker::conversion::DockerClusterTemplateConversion, _>(docker::DockerAdmission::new()),
        ),
        deprecated(hub_stored::<docker::conversion::DockerMachineConversion, _>(docker::DockerAdmission::new())),
        deprecated(
            hub_stored::<docker::conversion::DockerMachineTemplateConversion, _>(docker::DockerAdmission::new()),
        ),
        deprecated(hub_stored::<docker::conversion::DockerMachinePoolConversion, _>(docker::DockerAdmission::new())),
        deprecated(hub_stored::<docker::conversion::DockerMachinePoolTemplateConversion, _>(
            docker::DockerAdmission::new(),
        )),
        hub_stored_with_older::<
            ipam::conversion::IPAddressClaimConversion,
            ipam::conversion::IPAddressClaimV1Alpha1Conversion,
            _,
        >(ipam::IPAddressClaimAdmission),
        hub_stored_with_older::<ipam::conversion::IPAddressConversion, ipam::conversion::IPAddressV1Alpha1Conversion, _>(
            ipam::IPAddressAdmission,
        ),
        entry::<ipam::InClusterIPPool>(typed(ipam::InClusterIPPoolAdmission)),
        entry::<ipam::GlobalInClusterIPPool>(typed(ipam::GlobalInClusterIPPoolAdmission)),
        hub_stored::<addons::conversion::ClusterResourceSetConversion, _>(addons::ClusterResourceSetAdmission),
        binding_v1beta1_status(hub_stored::<addons::conversion::ClusterResourceSetBindingConversion, _>(
            addons::ClusterResourceSetBindingAdmission,
        )),
        deprecated_alpha(hub_stored::<runtime::conversion::ExtensionConfigConversion, _>(
            runtime::ExtensionConfigAdmission,
        )),
    ]
}

/// Every version deprecated: upstream deprecates all of its Docker kinds for the Dev kinds.
fn deprecated(mut kind: NativeKind) -> NativeKind {
    for v in &mut kind.crd.spec.versions {
        v.deprecated = Some(true);
    }
    kind
}

/// ExtensionConfig's older version is v1alpha1, which upstream v1.14 serves deprecated.
fn deprecated_alpha(mut kind: NativeKind) -> NativeKind {
    for v in kind.crd.spec.versions.iter_mut().filter(|v| v.name == "v1alpha1") {
        v.deprecated = Some(true);
    }
    kind
}

/// Upstream's v1beta1 ClusterResourceSetBinding declares a status subresource though it has
/// no status (v1beta2 dropped it); kube-derive declares one only with a status type.
fn binding_v1beta1_status(mut kind: NativeKind) -> NativeKind {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceSubresourceStatus, CustomResourceSubresources,
    };
    for v in kind.crd.spec.versions.iter_mut().filter(|v| v.name == "v1beta1") {
        v.subresources.get_or_insert_with(CustomResourceSubresources::default).status =
            Some(CustomResourceSubresourceStatus(serde_json::json!({})));
    }
    kind
}

/// Every served version of every Cluster API kind, with its admission.
pub fn resources() -> Vec<ResourceDef> {
    // Generated CRDs always have versions and serializable schemas.
    kinds().iter().flat_map(|k| k.served().expect("generated CRD converts to a ResourceDef")).collect()
}

/// Installable `apiextensions.k8s.io/v1` CRDs of every Cluster API kind.
pub fn crds() -> Vec<CustomResourceDefinition> {
    kinds().into_iter().map(|k| k.crd).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_served_with_admission_and_schema() {
        let defs: Vec<ResourceDef> = resources().into_iter().filter(|d| d.version != "v1beta2").collect();
        // 33 kinds; IPAM's two also in v1alpha1; ExtensionConfig in v1alpha1 only.
        assert_eq!(defs.len(), 35);
        for d in &defs {
            assert!(d.admission.is_some(), "{} has no admission", d.kind);
            let schema = d.schema.as_ref().unwrap_or_else(|| panic!("{} has no schema", d.kind));
            for field in ["apiVersion", "kind", "metadata", "spec"] {
                assert!(schema["properties"].get(field).is_some(), "{} schema lacks {field}", d.kind);
            }
        }
        let find = |kind: &str| defs.iter().find(|d| d.kind == kind).unwrap();
        let md = find("MachineDeployment");
        assert_eq!(
            (md.group.as_str(), md.version.as_str(), md.plural.as_str()),
            ("cluster.x-k8s.io", "v1beta1", "machinedeployments")
        );
        assert!(md.status_subresource);
        assert_eq!(md.scale.as_ref().unwrap().label_selector_path.as_deref(), Some(".status.selector"));
        assert_eq!(find("MachineHealthCheck").short_names, ["mhc", "mhcs"]);
        assert_eq!(find("KubeadmControlPlane").categories, ["cluster-api"]);
        assert!(!find("GlobalInClusterIPPool").namespaced);
        assert!(!find("IPAddress").status_subresource);
        assert_eq!(find("Machine").printer_columns.len(), 6);
        assert_eq!(crds().len(), 35);
    }

    #[test]
    fn ipam_kinds_are_stored_in_v1beta2_served_in_v1alpha1_too_and_only_v1beta1_is_deprecated() {
        for plural in ["ipaddresses", "ipaddressclaims"] {
            let crd = crds().into_iter().find(|c| c.spec.names.plural == plural).expect(plural);
            let versions: Vec<(String, bool, bool)> =
                crd.spec.versions.iter().map(|v| (v.name.clone(), v.storage, v.deprecated == Some(true))).collect();
            let want = [("v1alpha1", false, false), ("v1beta1", false, true), ("v1beta2", true, false)]
                .map(|(v, storage, deprecated)| (v.to_string(), storage, deprecated));
            assert_eq!(versions, want, "{plural}");
        }
    }

    #[test]
    fn kubeadm_kinds_are_stored_and_admitted_in_v1beta2() {
        let crds = crds();
        for plural in
            ["kubeadmconfigs", "kubeadmconfigtemplates", "kubeadmcontrolplanes", "kubeadmcontrolplanetemplates"]
        {
            let crd = crds.iter().find(|c| c.spec.names.plural == plural).expect(plural);
            let versions: Vec<(&str, bool, bool)> =
                crd.spec.versions.iter().map(|v| (v.name.as_str(), v.storage, v.deprecated == Some(true))).collect();
            assert_eq!(versions, [("v1beta1", false, true), ("v1beta2", true, false)], "{plural}");
        }
        // A v1beta1 write is admitted as its v1beta2 form: errors name v1beta2 paths.
        let defs = resources();
        let def = defs.iter().find(|d| d.kind == "KubeadmControlPlane" && d.version == "v1beta1").expect("kcp");
        let mut kcp = serde_json::json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
            "metadata": { "name": "cp", "namespace": "ns" },
            "spec": {
                "replicas": 3, "version": "v1.30.2",
                "machineTemplate": { "infrastructureRef": { "apiVersion": "infrastructure.example/v1", "kind": "M", "name": "m" } },
                "kubeadmConfigSpec": {},
                "rolloutStrategy": { "rollingUpdate": { "maxSurge": 2 } }
            }
        });
        let admission = def.admission.as_ref().expect("admission");
        let errs = admission.admit(&mut kcp, None, crate::admission::Operation::Create).expect("converted");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.rollout.strategy.rollingUpdate.maxSurge"]);
    }

    #[test]
    fn clusters_are_stored_and_admitted_in_v1beta2() {
        let crd = crds().into_iter().find(|c| c.spec.names.plural == "clusters").expect("clusters");
        let storage: Vec<&str> = crd.spec.versions.iter().filter(|v| v.storage).map(|v| v.name.as_str()).collect();
        assert_eq!(storage, ["v1beta2"]);
        // A v1beta1 topology is checked at its v1beta2 paths (`class` became `classRef.name`).
        let cluster = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": { "name": "c", "namespace": "ns" },
            "spec": { "topology": { "class": "", "version": "v1.33.0" } }
        });
        let fields: Vec<String> =
            v1beta1_admission("Cluster").validate(&cluster, None).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.topology.classRef.name"]);
    }

    #[test]
    fn machines_are_stored_and_admitted_in_v1beta2() {
        let crd = crds().into_iter().find(|c| c.spec.names.plural == "machines").expect("machines");
        let storage: Vec<&str> = crd.spec.versions.iter().filter(|v| v.storage).map(|v| v.name.as_str()).collect();
        assert_eq!(storage, ["v1beta2"]);
        // A v1beta1 write is defaulted in v1beta2 and converted back: the node deletion
        // timeout default (10 seconds) reads as Go prints it.
        let mut machine = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": { "name": "m", "namespace": "ns" },
            "spec": {
                "clusterName": "c", "bootstrap": { "dataSecretName": "s" },
                "infrastructureRef": { "apiVersion": "infrastructure.example/v1", "kind": "M", "name": "m" }
            }
        });
        let admission = v1beta1_admission("Machine");
        let errs = admission.admit(&mut machine, None, crate::admission::Operation::Create).expect("admitted");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(machine["apiVersion"], "cluster.x-k8s.io/v1beta1");
        assert_eq!(machine["spec"]["nodeDeletionTimeout"], "10s");
        // Checked at the v1beta2 path of the reference.
        machine["spec"]["infrastructureRef"]["name"] = "".into();
        let fields: Vec<String> = admission.validate(&machine, None).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.infrastructureRef.name"]);
    }

    /// The admission of `kind`'s v1beta1 as the server runs it.
    fn v1beta1_admission(kind: &str) -> Arc<dyn Admission> {
        let def = resources().into_iter().find(|d| d.kind == kind && d.version == "v1beta1").expect(kind);
        def.admission.expect("admission")
    }

    /// A v1beta1 duration that does not parse has no v1beta2 form (whole seconds): the write
    /// is refused with the v1beta1 paths, instead of the value being lost in conversion.
    #[test]
    fn unparsable_v1beta1_durations_of_kubeadm_kinds_are_refused_with_their_paths() {
        let admission = v1beta1_admission;
        let mut kcp = serde_json::json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
            "metadata": { "name": "cp", "namespace": "ns" },
            "spec": {
                "replicas": 3, "version": "v1.30.2",
                "machineTemplate": {
                    "infrastructureRef": { "apiVersion": "infrastructure.example/v1", "kind": "M", "name": "m" },
                    "nodeDrainTimeout": "10m", "nodeDeletionTimeout": "a while"
                },
                "kubeadmConfigSpec": { "initConfiguration": { "bootstrapTokens": [{ "ttl": "24h" }, { "ttl": "1 day" }] } },
                "remediationStrategy": { "retryPeriod": "30 seconds" }
            }
        });
        let errs = admission("KubeadmControlPlane").admit(&mut kcp, None, crate::admission::Operation::Create);
        let errs = errs.expect("validation errors, not a failed conversion");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.machineTemplate.nodeDeletionTimeout",
                "spec.remediationStrategy.retryPeriod",
                "spec.kubeadmConfigSpec.initConfiguration.bootstrapTokens[1].ttl"
            ]
        );
        assert!(errs[0].detail.contains("invalid duration"), "{:?}", errs[0]);

        let template = serde_json::json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate",
            "metadata": { "name": "t", "namespace": "ns" },
            "spec": { "template": { "spec": { "joinConfiguration": { "discovery": { "timeout": "5 minutes" } } } } }
        });
        let errs = admission("KubeadmConfigTemplate").validate(&template, None);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.template.spec.joinConfiguration.discovery.timeout"]);

        // The same object with parsable durations is admitted.
        let mut ok = template.clone();
        ok["spec"]["template"]["spec"]["joinConfiguration"]["discovery"]["timeout"] = "5m".into();
        assert_eq!(admission("KubeadmConfigTemplate").validate(&ok, None), []);
    }

    /// The same for the core kinds, whether stored in v1beta2 (MachineHealthCheck,
    /// ClusterClass) or still in v1beta1 (where the value would be stored and fail later).
    #[test]
    fn unparsable_v1beta1_durations_of_core_kinds_are_refused_with_their_paths() {
        let admission = v1beta1_admission;
        let mhc = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineHealthCheck",
            "metadata": { "name": "h", "namespace": "ns" },
            "spec": { "clusterName": "c", "selector": {}, "nodeStartupTimeout": "ten minutes",
                      "unhealthyConditions": [{ "type": "Ready", "status": "False", "timeout": "5m" }] }
        });
        let fields: Vec<String> =
            admission("MachineHealthCheck").validate(&mhc, None).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.nodeStartupTimeout"]);

        let class = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": { "name": "cc", "namespace": "ns" },
            "spec": {
                "controlPlane": { "ref": { "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp" },
                                  "nodeDrainTimeout": "forever" },
                "workers": { "machineDeployments": [{ "class": "w", "template": {
                    "bootstrap": { "ref": { "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b" } },
                    "infrastructure": { "ref": { "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevMachineTemplate", "name": "i" } } },
                    "machineHealthCheck": { "unhealthyConditions": [{ "type": "Ready", "status": "Unknown", "timeout": "5 min" }] } }] }
            }
        });
        let fields: Vec<String> =
            admission("ClusterClass").validate(&class, None).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            [
                "spec.controlPlane.nodeDrainTimeout",
                "spec.workers.machineDeployments[0].machineHealthCheck.unhealthyConditions[0].timeout"
            ]
        );

        // Machine and MachineDeployment refuse them alike.
        let machine = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": { "name": "m", "namespace": "ns" },
            "spec": { "clusterName": "c", "bootstrap": { "dataSecretName": "s" },
                      "infrastructureRef": { "apiVersion": "infrastructure.example/v1", "kind": "M", "name": "m" },
                      "nodeDrainTimeout": "ten minutes" }
        });
        let fields: Vec<String> = admission("Machine").validate(&machine, None).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.nodeDrainTimeout"]);
        let mut md = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
            "metadata": { "name": "md", "namespace": "ns" },
            "spec": { "clusterName": "c", "template": { "spec": {
                "clusterName": "c", "bootstrap": { "dataSecretName": "s" },
                "infrastructureRef": { "apiVersion": "infrastructure.example/v1", "kind": "M", "name": "m" },
                "nodeDeletionTimeout": "1 hour" } } }
        });
        let errs = admission("MachineDeployment").admit(&mut md, None, crate::admission::Operation::Create);
        let fields: Vec<String> = errs.expect("validation errors").into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.template.spec.nodeDeletionTimeout"]);
    }

    #[test]
    fn dev_kinds_are_stored_in_v1beta2_and_machine_pools_served_in_v1beta2_only() {
        let crds = crds();
        let versions = |plural: &str| -> Vec<(String, bool, bool)> {
            let crd = crds.iter().find(|c| c.spec.names.plural == plural).expect(plural);
            crd.spec.versions.iter().map(|v| (v.name.clone(), v.storage, v.deprecated == Some(true))).collect()
        };
        for plural in ["devclusters", "devclustertemplates", "devmachines", "devmachinetemplates"] {
            let want = vec![("v1beta1".to_string(), false, true), ("v1beta2".to_string(), true, false)];
            assert_eq!(versions(plural), want, "{plural}");
        }
        for plural in ["devmachinepools", "devmachinepooltemplates"] {
            assert_eq!(versions(plural), [("v1beta2".to_string(), true, false)], "{plural}");
        }
        let pool = crds.iter().find(|c| c.spec.names.plural == "devmachinepools").expect("pool");
        let labels = pool.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get("cluster.x-k8s.io/v1beta2").map(String::as_str), Some("v1beta2"));
        assert!(!labels.contains_key("cluster.x-k8s.io/v1beta1"));
    }
}
