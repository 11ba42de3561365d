//! Applying a resource's manifests into a workload cluster: each object's kind is looked up
//! in that cluster's discovery; ApplyOnce creates what is missing and leaves what exists,
//! Reconcile server-side applies every object (owning the fields it sets).

use drydock_api::capi::addons::ClusterResourceSetStrategy;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;
use serde_json::Value;

/// The field manager of the objects a set applies.
pub(super) const FIELD_MANAGER: &str = "cluster-resource-set";

/// Applies every object, in order (a CRD before its resources); stops at the first failure.
pub(super) async fn apply_all(
    client: &kube::Client,
    objects: &[Value],
    strategy: ClusterResourceSetStrategy,
) -> Result<(), String> {
    for obj in objects {
        apply(client, obj, strategy).await.map_err(|e| format!("{}: {e}", describe(obj)))?;
    }
    Ok(())
}

async fn apply(client: &kube::Client, obj: &Value, strategy: ClusterResourceSetStrategy) -> Result<(), String> {
    let api_version = obj["apiVersion"].as_str().filter(|v| !v.is_empty()).ok_or("apiVersion is not set")?;
    let kind = obj["kind"].as_str().filter(|k| !k.is_empty()).ok_or("kind is not set")?;
    let name = obj["metadata"]["name"].as_str().filter(|n| !n.is_empty()).ok_or("metadata.name is not set")?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, caps) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|e| format!("the workload cluster does not serve {api_version} {kind}: {e}"))?;
    let api: Api<DynamicObject> = match caps.scope {
        Scope::Namespaced => {
            let ns = obj["metadata"]["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
            Api::namespaced_with(client.clone(), ns, &resource)
        }
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    let object: DynamicObject = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    match strategy {
        ClusterResourceSetStrategy::ApplyOnce => {
            let params = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
            match api.create(&params, &object).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(e) => Err(e.to_string()),
            }
        }
        ClusterResourceSetStrategy::Reconcile => {
            let params = PatchParams::apply(FIELD_MANAGER).force();
            api.patch(name, &params, &Patch::Apply(&object)).await.map(|_| ()).map_err(|e| e.to_string())
        }
    }
}

/// `Kind namespace/name` of a manifest, for messages.
fn describe(obj: &Value) -> String {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let (ns, name) = (s(&obj["metadata"]["namespace"]), s(&obj["metadata"]["name"]));
    let kind = s(&obj["kind"]);
    if ns.is_empty() { format!("{kind} {name}") } else { format!("{kind} {ns}/{name}") }
}
