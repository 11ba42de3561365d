//! Objects referenced by kind (infrastructure and bootstrap objects and their templates),
//! read and written as dynamic objects, and machines' objects cloned from templates.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::context::Context;
use crate::framework::{Error, Result, write};

/// The API resource of a referenced kind (plural by the Kubernetes convention).
pub fn api_resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let plural = drydock_api::capi::contract::plural(kind);
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural)
}

/// API handle for objects of a reference's kind in `namespace`, in the version its
/// provider's CRD lists for the contract: a reference written in an older version keeps
/// working once that version is no longer served (upstream's reference contract update).
pub async fn api_for(ctx: &Context, namespace: &str, r: &ObjectReference) -> Api<DynamicObject> {
    let r = ctx.contracts.current(r).await;
    let ar = api_resource(r.api_version.as_deref().unwrap_or_default(), r.kind.as_deref().unwrap_or_default());
    Api::namespaced_with(ctx.client.clone(), namespace, &ar)
}

/// Reads a referenced object; `None` when it does not exist.
pub async fn get(ctx: &Context, namespace: &str, r: &ObjectReference) -> Result<Option<DynamicObject>> {
    let name = r.name.as_deref().unwrap_or_default();
    Ok(api_for(ctx, namespace, r).await.get_opt(name).await?)
}

/// A reference to a dynamic object.
pub fn reference_to(obj: &DynamicObject, api_version: &str, kind: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some(api_version.to_string()),
        kind: Some(kind.to_string()),
        name: obj.metadata.name.clone(),
        namespace: obj.metadata.namespace.clone(),
        uid: obj.metadata.uid.clone(),
        ..Default::default()
    }
}

/// What a cloned object gets beyond the template's content.
pub struct CloneSpec<'a> {
    pub template: &'a ObjectReference,
    pub namespace: &'a str,
    pub name: &'a str,
    pub cluster_name: &'a str,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub owner: Option<OwnerReference>,
}

/// Creates an object from `<Kind>Template.spec.template` (kind without the `Template`
/// suffix), as upstream's external.CreateFromTemplate does. Returns its reference.
/// An object of that name that already exists is reused (idempotent across retries). The
/// clone is made in the template kind's current contract version.
pub async fn clone_from_template(ctx: &Context, controller: &str, spec: CloneSpec<'_>) -> Result<ObjectReference> {
    let template = ctx.contracts.current(spec.template).await;
    let tpl = get(ctx, spec.namespace, &template).await?.ok_or_else(|| {
        Error::Missing(format!(
            "template {} {}/{}",
            spec.template.kind.as_deref().unwrap_or_default(),
            spec.namespace,
            spec.template.name.as_deref().unwrap_or_default()
        ))
    })?;
    let tpl_kind = spec.template.kind.as_deref().unwrap_or_default();
    let kind = tpl_kind.strip_suffix("Template").unwrap_or(tpl_kind).to_string();
    let api_version = template.api_version.clone().unwrap_or_default();
    let inner = &tpl.data["spec"]["template"];
    let mut labels: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["labels"].clone()).unwrap_or_default();
    labels.extend(spec.labels);
    labels.insert(drydock_api::capi::keys::CLUSTER_NAME_LABEL.into(), spec.cluster_name.to_string());
    let mut annotations: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["annotations"].clone()).unwrap_or_default();
    annotations.extend(spec.annotations);
    annotations.insert(
        drydock_api::capi::keys::CLONED_FROM_NAME_ANNOTATION.into(),
        spec.template.name.clone().unwrap_or_default(),
    );
    annotations.insert(
        drydock_api::capi::keys::CLONED_FROM_GROUP_KIND_ANNOTATION.into(),
        format!("{tpl_kind}.{}", api_version.split('/').next().unwrap_or_default()),
    );
    let mut metadata =
        json!({"name": spec.name, "namespace": spec.namespace, "labels": labels, "annotations": annotations});
    if let Some(o) = &spec.owner {
        metadata["ownerReferences"] = json!([o]);
    }
    let obj = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": metadata,
        "spec": inner.get("spec").cloned().unwrap_or(Value::Object(Default::default())),
    });
    let obj: DynamicObject = serde_json::from_value(obj)?;
    let api =
        Api::<DynamicObject>::namespaced_with(ctx.client.clone(), spec.namespace, &api_resource(&api_version, &kind));
    let created = match write::create(&api, controller, &obj).await {
        Ok(o) => o,
        Err(kube::Error::Api(s)) if s.code == 409 => api.get(spec.name).await?,
        Err(e) => return Err(e.into()),
    };
    Ok(reference_to(&created, &api_version, &kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(
            api_resource("infrastructure.cluster.x-k8s.io/v1alpha1", "InMemoryMachine").plural,
            "inmemorymachines"
        );
        assert_eq!(api_resource("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig").plural, "kubeadmconfigs");
        assert_eq!(api_resource("x/v1", "Policy").plural, "policies");
        assert_eq!(api_resource("v1", "Address").plural, "addresses");
    }
}

/// The merge patch adopting an object referenced by `owner`'s spec: `owner` becomes an
/// owner (the controller if asked and no other controller is set), owner references of the
/// `(group, kind)`s in `drop` are removed (the creator's on-create reference, replaced by the
/// new controller), and the `cluster.x-k8s.io/cluster-name` label is set. `None` when the
/// object is already adopted. The patch carries the object's resourceVersion, so adopting a
/// stale copy conflicts instead of overwriting newer owner references.
pub fn adoption_patch(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    owner: &OwnerReference,
    cluster_name: &str,
    drop: &[(&str, &str)],
) -> Option<Value> {
    use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
    use drydock_api::capi::owner::{api_group, ensure_owner_ref};

    let mut refs = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        owner_references: meta.owner_references.clone(),
        ..Default::default()
    };
    let before = refs.owner_references.clone().unwrap_or_default();
    if let Some(list) = refs.owner_references.as_mut() {
        list.retain(|r| {
            r.uid == owner.uid || !drop.iter().any(|(g, k)| r.kind == *k && api_group(&r.api_version) == *g)
        });
    }
    let mut wanted = owner.clone();
    let other_controller = refs.owner_references.iter().flatten().any(|r| {
        r.controller == Some(true)
            && !(r.kind == owner.kind
                && r.name == owner.name
                && api_group(&r.api_version) == api_group(&owner.api_version))
    });
    if other_controller {
        wanted.controller = None;
    }
    ensure_owner_ref(&mut refs, wanted);
    let mut patch = serde_json::Map::new();
    let after = refs.owner_references.unwrap_or_default();
    if after != before {
        patch.insert("ownerReferences".into(), json!(after));
    }
    let label = meta.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL));
    if !cluster_name.is_empty() && label.map(String::as_str) != Some(cluster_name) {
        patch.insert("labels".into(), json!({ CLUSTER_NAME_LABEL: cluster_name }));
    }
    if patch.is_empty() {
        return None;
    }
    patch.insert("resourceVersion".into(), json!(meta.resource_version));
    Some(json!({ "metadata": patch }))
}

#[cfg(test)]
mod adoption_tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn owner(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: controller.then_some(true),
            block_owner_deletion: controller.then_some(true),
        }
    }

    #[test]
    fn adopts_replacing_the_creator_and_labels() {
        let meta = ObjectMeta {
            owner_references: Some(vec![owner("MachineSet", "ms", "u-ms", true)]),
            resource_version: Some("7".into()),
            ..Default::default()
        };
        let m = owner("Machine", "m", "u-m", true);
        let p = adoption_patch(&meta, &m, "c1", &[("cluster.x-k8s.io", "MachineSet")]).unwrap();
        assert_eq!(p["metadata"]["ownerReferences"], json!([m]));
        assert_eq!(p["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "c1");
        assert_eq!(p["metadata"]["resourceVersion"], "7");

        let adopted = ObjectMeta {
            owner_references: Some(vec![m.clone()]),
            labels: Some([("cluster.x-k8s.io/cluster-name".to_string(), "c1".to_string())].into()),
            ..Default::default()
        };
        assert_eq!(adoption_patch(&adopted, &m, "c1", &[]), None);
    }

    #[test]
    fn another_controller_demotes_to_plain_owner() {
        let meta = ObjectMeta { owner_references: Some(vec![owner("Other", "x", "u-x", true)]), ..Default::default() };
        let c = owner("Cluster", "c1", "u-c", true);
        let p = adoption_patch(&meta, &c, "c1", &[]).unwrap();
        let refs = p["metadata"]["ownerReferences"].as_array().unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[1]["kind"], "Cluster");
        assert!(refs[1].get("controller").is_none());
    }
}
