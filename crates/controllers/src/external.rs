//! Objects referenced by kind (infrastructure and bootstrap objects and their templates),
//! read and written as dynamic objects, and machines' objects cloned from templates.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::framework::{Error, Result, metrics};

/// The API resource of a referenced kind (plural by the Kubernetes convention).
pub fn api_resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let lower = kind.to_ascii_lowercase();
    let plural = if lower.ends_with('y') && !lower.ends_with("ey") {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if lower.ends_with('s') || lower.ends_with("sh") || lower.ends_with("ch") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural)
}

/// API handle for objects of a reference's kind in `namespace`.
pub fn api_for(client: &kube::Client, namespace: &str, r: &ObjectReference) -> Api<DynamicObject> {
    let ar = api_resource(
        r.api_version.as_deref().unwrap_or_default(),
        r.kind.as_deref().unwrap_or_default(),
    );
    Api::namespaced_with(client.clone(), namespace, &ar)
}

/// Reads a referenced object; `None` when it does not exist.
pub async fn get(
    client: &kube::Client,
    namespace: &str,
    r: &ObjectReference,
) -> Result<Option<DynamicObject>> {
    let name = r.name.as_deref().unwrap_or_default();
    Ok(api_for(client, namespace, r).get_opt(name).await?)
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
/// An object of that name that already exists is reused (idempotent across retries).
pub async fn clone_from_template(
    client: &kube::Client,
    controller: &str,
    spec: CloneSpec<'_>,
) -> Result<ObjectReference> {
    let tpl = get(client, spec.namespace, spec.template)
        .await?
        .ok_or_else(|| {
            Error::other(format!(
                "template {} {}/{} not found",
                spec.template.kind.as_deref().unwrap_or_default(),
                spec.namespace,
                spec.template.name.as_deref().unwrap_or_default()
            ))
        })?;
    let tpl_kind = spec.template.kind.as_deref().unwrap_or_default();
    let kind = tpl_kind
        .strip_suffix("Template")
        .unwrap_or(tpl_kind)
        .to_string();
    let api_version = spec.template.api_version.clone().unwrap_or_default();
    let inner = &tpl.data["spec"]["template"];
    let mut labels: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["labels"].clone()).unwrap_or_default();
    labels.extend(spec.labels);
    labels.insert(
        drydock_api::capi::keys::CLUSTER_NAME_LABEL.into(),
        spec.cluster_name.to_string(),
    );
    let mut annotations: BTreeMap<String, String> =
        serde_json::from_value(inner["metadata"]["annotations"].clone()).unwrap_or_default();
    annotations.extend(spec.annotations);
    annotations.insert(
        drydock_api::capi::keys::CLONED_FROM_NAME_ANNOTATION.into(),
        spec.template.name.clone().unwrap_or_default(),
    );
    annotations.insert(
        drydock_api::capi::keys::CLONED_FROM_GROUP_KIND_ANNOTATION.into(),
        format!(
            "{tpl_kind}.{}",
            api_version.split('/').next().unwrap_or_default()
        ),
    );
    let mut metadata = json!({"name": spec.name, "namespace": spec.namespace, "labels": labels, "annotations": annotations});
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
    let api = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        spec.namespace,
        &api_resource(&api_version, &kind),
    );
    let created = match api.create(&PostParams::default(), &obj).await {
        Ok(o) => {
            metrics::write(controller);
            o
        }
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
            api_resource(
                "infrastructure.cluster.x-k8s.io/v1alpha1",
                "InMemoryMachine"
            )
            .plural,
            "inmemorymachines"
        );
        assert_eq!(
            api_resource("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig").plural,
            "kubeadmconfigs"
        );
        assert_eq!(api_resource("x/v1", "Policy").plural, "policies");
        assert_eq!(api_resource("v1", "Address").plural, "addresses");
    }
}
