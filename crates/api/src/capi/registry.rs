//! The table of every Cluster API kind drydock serves: its CRD (generated from the Rust
//! types) and its admission.

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{CustomResourceDefinition, JSONSchemaProps};
use kube::CustomResourceExt;

use super::typed::{KindAdmission, Typed};
use super::{core, inmemory, ipam, kubeadm};
use crate::admission::Admission;
use crate::resource::ResourceDef;

/// One served kind: its CRD and its admission hooks.
struct Entry {
    crd: CustomResourceDefinition,
    admission: Option<Arc<dyn Admission>>,
}

fn entry<K: CustomResourceExt>(admission: Option<Arc<dyn Admission>>) -> Entry {
    let mut crd = K::crd();
    add_type_meta_to_schema(&mut crd);
    drop_struct_defaults(&mut crd);
    Entry { crd, admission }
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

fn entries() -> Vec<Entry> {
    vec![
        entry::<core::Cluster>(typed(core::ClusterAdmission)),
        entry::<core::ClusterClass>(typed(core::ClusterClassAdmission)),
        entry::<core::Machine>(typed(core::MachineAdmission)),
        entry::<core::MachineSet>(typed(core::MachineSetAdmission)),
        entry::<core::MachineDeployment>(typed(core::MachineDeploymentAdmission)),
        entry::<core::MachineHealthCheck>(typed(core::MachineHealthCheckAdmission)),
        entry::<core::MachinePool>(typed(core::MachinePoolAdmission)),
        entry::<core::MachineDrainRule>(typed(core::MachineDrainRuleAdmission)),
        entry::<kubeadm::KubeadmControlPlane>(typed(kubeadm::KubeadmControlPlaneAdmission)),
        entry::<kubeadm::KubeadmControlPlaneTemplate>(typed(kubeadm::KubeadmControlPlaneTemplateAdmission)),
        entry::<kubeadm::KubeadmConfig>(typed(kubeadm::KubeadmConfigAdmission)),
        entry::<kubeadm::KubeadmConfigTemplate>(typed(kubeadm::KubeadmConfigTemplateAdmission)),
        entry::<inmemory::InMemoryCluster>(typed(inmemory::InMemoryClusterAdmission)),
        entry::<inmemory::InMemoryClusterTemplate>(typed(inmemory::InMemoryClusterTemplateAdmission)),
        entry::<inmemory::InMemoryMachine>(typed(inmemory::InMemoryMachineAdmission)),
        entry::<inmemory::InMemoryMachineTemplate>(typed(inmemory::InMemoryMachineTemplateAdmission)),
        entry::<ipam::IPAddressClaim>(typed(ipam::IPAddressClaimAdmission)),
        entry::<ipam::IPAddress>(typed(ipam::IPAddressAdmission)),
        entry::<ipam::InClusterIPPool>(typed(ipam::InClusterIPPoolAdmission)),
        entry::<ipam::GlobalInClusterIPPool>(typed(ipam::GlobalInClusterIPPoolAdmission)),
    ]
}

/// Every Cluster API kind with its admission, ready to be served.
pub fn resources() -> Vec<ResourceDef> {
    entries()
        .into_iter()
        .map(|e| {
            // Generated CRDs always carry one version and a serializable schema.
            let mut def = ResourceDef::from_crd(&e.crd).expect("generated CRD converts to a ResourceDef");
            def.admission = e.admission;
            def
        })
        .collect()
}

/// Installable `apiextensions.k8s.io/v1` CRDs of every Cluster API kind.
pub fn crds() -> Vec<CustomResourceDefinition> {
    entries().into_iter().map(|e| e.crd).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_served_with_admission_and_schema() {
        let defs = resources();
        assert_eq!(defs.len(), 20);
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
        assert_eq!(crds().len(), 20);
    }
}
