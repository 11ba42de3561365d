//! External patches: a class patch whose `external.generatePatchesExtension` names a
//! Runtime Extension handler gets every template of the topology (with its holder and
//! variables) and answers a JSON Patch or JSON Merge Patch per template; patches run in
//! the class's order, inline and external alike, each on the previous one's output. Once
//! all have run, each `external.validateTopologyExtension` may refuse the result.

use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::{ClusterClass, ClusterClassPatch};
use serde_json::{Map, Value};

use super::desired::Common;
use super::patches::{self, PatchError, Patchable};
use crate::framework::Error;
use crate::runtime_sdk::registry::namespace_labels;
use crate::runtime_sdk::wire::{
    self, GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse, HolderReference, Hook,
    PatchType, ValidateTopologyRequest, ValidateTopologyRequestItem,
};
use crate::runtime_sdk::{self, Registry};

/// The handlers a Cluster's patches may call: the registry, and the Cluster's namespace
/// with its labels (for the ExtensionConfigs' namespace selectors).
pub struct Extensions {
    /// Reads the endpoints of `service` references.
    pub(super) client: kube::Client,
    registry: Registry,
    namespace: String,
    labels: BTreeMap<String, String>,
}

impl Extensions {
    /// For a Cluster of `class` in `namespace`; the namespace is read only when the class
    /// calls extensions.
    pub async fn load(client: &kube::Client, registry: Registry, class: &ClusterClass, namespace: &str) -> Self {
        let labels = if calls_extensions(class) { namespace_labels(client, namespace).await } else { BTreeMap::new() };
        Self { client: client.clone(), registry, namespace: namespace.to_string(), labels }
    }

    pub(super) fn resolve(&self, handler: &str, hook: Hook) -> Result<runtime_sdk::Resolved, runtime_sdk::Error> {
        self.registry.resolve(handler, hook, Some((&self.namespace, &self.labels)))
    }
}

/// Whether the class has external patches or an upgrade plan extension.
pub fn calls_extensions(class: &ClusterClass) -> bool {
    let upgrade = class.spec.upgrade.as_ref().and_then(|u| u.external.as_ref());
    class.spec.patches.iter().flatten().any(|p| p.external.is_some())
        || upgrade.is_some_and(|e| e.generate_upgrade_plan_extension.is_some())
}

/// The holder reference of a template: the object `kind` `name` of the Cluster's
/// namespace, whose `field` will reference what is made from it.
pub fn holder(common: &Common<'_>, api_version: &str, kind: &str, name: &str, field: &str) -> HolderReference {
    HolderReference {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        namespace: common.namespace.clone(),
        name: name.to_string(),
        field_path: field.to_string(),
    }
}

/// Runs the class's patches in order on the templates. `global` is the variables without
/// per-template overrides (with `builtin` at cluster level). On error the items may be
/// partly patched: the caller discards them.
pub async fn apply(
    patches: &[ClusterClassPatch],
    global: &Map<String, Value>,
    items: &mut [Patchable<'_>],
    ext: &Extensions,
) -> Result<(), PatchError> {
    for patch in patches {
        let Some(external) = &patch.external else {
            patches::apply_inline(patch, items)?;
            continue;
        };
        let Some(handler) = &external.generate_patches_extension else { continue };
        if !patches::enabled(patch, global)? {
            continue;
        }
        let fail = |source| PatchError::Extension { patch: patch.name.clone(), source };
        let resolved = ext.resolve(handler, Hook::GeneratePatches).map_err(fail)?;
        let request = generate_request(global, items);
        let answer =
            runtime_sdk::call(&ext.client, &resolved, external.settings.as_ref(), &request).await.map_err(fail)?;
        apply_answer(&patch.name, answer, items)?;
    }
    Ok(())
}

/// Calls every ValidateTopology handler of the class on the patched templates.
pub async fn validate(
    patches: &[ClusterClassPatch],
    global: &Map<String, Value>,
    items: &[Patchable<'_>],
    ext: &Extensions,
) -> Result<(), PatchError> {
    for patch in patches {
        let Some(external) = &patch.external else { continue };
        let Some(handler) = &external.validate_topology_extension else { continue };
        let fail = |source| PatchError::Extension { patch: patch.name.clone(), source };
        let resolved = ext.resolve(handler, Hook::ValidateTopology).map_err(fail)?;
        let request = ValidateTopologyRequest {
            variables: wire::variables(global),
            items: items
                .iter()
                .map(|i| ValidateTopologyRequestItem {
                    holder_reference: i.holder.clone(),
                    object: i.object.clone(),
                    variables: own_variables(global, i.variables),
                })
                .collect(),
        };
        runtime_sdk::call(&ext.client, &resolved, external.settings.as_ref(), &request).await.map_err(fail)?;
    }
    Ok(())
}

/// Every template, with its position in `items` as its uid.
fn generate_request(global: &Map<String, Value>, items: &[Patchable<'_>]) -> GeneratePatchesRequest {
    GeneratePatchesRequest {
        variables: wire::variables(global),
        items: items
            .iter()
            .enumerate()
            .map(|(i, item)| GeneratePatchesRequestItem {
                uid: i.to_string(),
                holder_reference: item.holder.clone(),
                object: item.object.clone(),
                variables: own_variables(global, item.variables),
            })
            .collect(),
    }
}

/// The variables of a template that differ from the global ones (its `builtin`, overrides).
fn own_variables(global: &Map<String, Value>, vars: &Map<String, Value>) -> Vec<wire::Variable> {
    let own: Map<String, Value> =
        vars.iter().filter(|(k, v)| global.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
    wire::variables(&own)
}

/// Applies each answered patch to the template of its uid.
fn apply_answer(patch: &str, answer: GeneratePatchesResponse, items: &mut [Patchable<'_>]) -> Result<(), PatchError> {
    for (n, answered) in answer.items.into_iter().enumerate() {
        let fail = |message: String| PatchError::Answer { patch: patch.to_string(), item: n, message };
        let item = answered
            .uid
            .parse::<usize>()
            .ok()
            .and_then(|i| items.get_mut(i))
            .ok_or_else(|| fail(format!("uid {:?} names no template of the request", answered.uid)))?;
        let doc: Value =
            serde_json::from_slice(&answered.patch).map_err(|e| fail(format!("the patch is not JSON: {e}")))?;
        match answered.patch_type {
            PatchType::JSONPatch => {
                let ops: json_patch::Patch =
                    serde_json::from_value(doc).map_err(|e| fail(format!("invalid JSON patch: {e}")))?;
                json_patch::patch(item.object, &ops).map_err(|e| fail(e.to_string()))?;
            }
            PatchType::JSONMergePatch => json_patch::merge(item.object, &doc),
        }
    }
    Ok(())
}

impl From<PatchError> for Error {
    /// An extension's failure is reported as such; the rest are the class's or the
    /// Cluster's mistakes.
    fn from(e: PatchError) -> Self {
        match e {
            PatchError::Extension { patch, source } => {
                Error::Step { step: format!("patch {patch:?}"), source: Box::new(Error::Extension(source)) }
            }
            other => Error::InvalidSpec(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use serde_json::json;

    use super::*;
    use crate::topology::patches::Target;

    fn answer(items: Value) -> GeneratePatchesResponse {
        serde_json::from_value(json!({"items": items})).expect("answer")
    }

    fn b64(v: Value) -> String {
        base64::engine::general_purpose::STANDARD.encode(v.to_string())
    }

    #[test]
    fn requests_number_the_templates_and_answers_patch_them_by_uid() {
        let global = json!({"builtin": {"cluster": {"name": "c"}}, "image": "a"}).as_object().cloned().expect("map");
        let mut own = global.clone();
        own.insert("builtin".into(), json!({"cluster": {"name": "c"}, "controlPlane": {"replicas": 3}}));
        let (mut a, mut b) = (json!({"kind": "A", "spec": {}}), json!({"kind": "B", "spec": {"x": 1}}));
        let mut items = [
            Patchable {
                target: Target::InfrastructureCluster,
                object: &mut a,
                variables: &global,
                holder: Default::default(),
            },
            Patchable { target: Target::ControlPlane, object: &mut b, variables: &own, holder: Default::default() },
        ];
        let request = generate_request(&global, &items);
        assert_eq!(request.items.iter().map(|i| i.uid.as_str()).collect::<Vec<_>>(), ["0", "1"]);
        assert!(request.items[0].variables.is_empty());
        assert_eq!(request.items[1].variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["builtin"]);

        let ok = answer(json!([
            {"uid": "1", "patchType": "JSONPatch", "patch": b64(json!([{"op": "replace", "path": "/spec/x", "value": 2}]))},
            {"uid": "0", "patchType": "JSONMergePatch", "patch": b64(json!({"spec": {"image": "a"}}))},
        ]));
        apply_answer("ext", ok, &mut items).expect("applied");
        assert_eq!((a["spec"].clone(), b["spec"].clone()), (json!({"image": "a"}), json!({"x": 2})));
    }

    #[test]
    fn bad_answers_name_the_patch_and_item() {
        let vars = Map::new();
        let mut a = json!({"spec": {}});
        let mut items = [Patchable {
            target: Target::InfrastructureCluster,
            object: &mut a,
            variables: &vars,
            holder: Default::default(),
        }];
        let unknown = answer(json!([{"uid": "7", "patchType": "JSONPatch", "patch": b64(json!([]))}]));
        let err = apply_answer("ext", unknown, &mut items).unwrap_err();
        assert_eq!(err.to_string(), "patch \"ext\": answer item 0: uid \"7\" names no template of the request");
        let failing = answer(json!([{"uid": "0", "patchType": "JSONPatch",
            "patch": b64(json!([{"op": "remove", "path": "/spec/missing"}]))}]));
        let err = apply_answer("ext", failing, &mut items).unwrap_err();
        assert!(err.to_string().starts_with("patch \"ext\": answer item 0: "), "{err}");
    }

    /// What used to be refused outright now names the missing handler.
    #[tokio::test]
    async fn a_patch_naming_an_unknown_handler_says_so() {
        let p: ClusterClassPatch = serde_json::from_value(json!({"name": "ext",
            "external": {"generatePatchesExtension": "gen.my-extension"}}))
        .expect("patch");
        let client = crate::framework::fake_api::FakeSecrets::new().client();
        let ext = Extensions { client, registry: Registry::default(), namespace: "ns".into(), labels: BTreeMap::new() };
        let (vars, mut obj) = (Map::new(), json!({"kind": "K"}));
        let mut items = [Patchable {
            target: Target::ControlPlane,
            object: &mut obj,
            variables: &vars,
            holder: Default::default(),
        }];
        let err = apply(&[p], &vars, &mut items, &ext).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "patch \"ext\": extension handler \"gen.my-extension\" is not registered: no discovered ExtensionConfig lists it"
        );
        let reported = Error::from(err).to_string();
        assert_eq!(
            reported,
            "patch \"ext\": extension handler \"gen.my-extension\" is not registered: no discovered ExtensionConfig lists it"
        );
    }
}
