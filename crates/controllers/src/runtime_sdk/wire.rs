//! Requests and answers of the hooks (`hooks.runtime.cluster.x-k8s.io/v1alpha1`) as JSON
//! goes over the wire. Every request carries `apiVersion`, `kind` (`<Hook>Request`) and
//! `settings`; every answer `status` (`Success` or `Failure`) and `message`.

use std::collections::BTreeMap;

use base64::Engine;
use drydock_api::capi::common::ObjectMeta;
use drydock_api::capi::core::v1beta2::VariableSchema;
use drydock_api::capi::runtime::ExtensionHandler;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The hooks drydock calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Discovery,
    DiscoverVariables,
    GeneratePatches,
    ValidateTopology,
    GenerateUpgradePlan,
}

impl Hook {
    pub fn name(self) -> &'static str {
        match self {
            Self::Discovery => "Discovery",
            Self::DiscoverVariables => "DiscoverVariables",
            Self::GeneratePatches => "GeneratePatches",
            Self::ValidateTopology => "ValidateTopology",
            Self::GenerateUpgradePlan => "GenerateUpgradePlan",
        }
    }

    /// The path of a handler of this hook below the extension's base URL; discovery has
    /// no handler name.
    pub fn path(self, handler: Option<&str>) -> String {
        let base = format!("/{}/{}", drydock_api::capi::runtime::HOOKS_API_VERSION, self.name().to_lowercase());
        match handler {
            Some(h) => format!("{base}/{h}"),
            None => base,
        }
    }
}

/// A hook's request body (without the envelope fields) and the answer it gets.
pub trait HookRequest: Serialize + Send + 'static {
    const HOOK: Hook;
    type Response: DeserializeOwned + Default + Send + 'static;
}

/// The request as sent: the body with `apiVersion`, `kind` and `settings`.
pub fn envelope<R: HookRequest>(request: &R, settings: &BTreeMap<String, String>) -> Result<Value, String> {
    let mut body = match serde_json::to_value(request).map_err(|e| format!("encoding the request: {e}"))? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    body.insert("apiVersion".into(), drydock_api::capi::runtime::HOOKS_API_VERSION.into());
    body.insert("kind".into(), format!("{}Request", R::HOOK.name()).into());
    if !settings.is_empty() {
        body.insert("settings".into(), serde_json::to_value(settings).unwrap_or_default());
    }
    Ok(Value::Object(body))
}

/// `status` of an answer.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResponseStatus {
    #[default]
    Success,
    Failure,
}

/// An answer: what every hook's has, and the hook's own fields.
#[derive(Deserialize, Debug, Default)]
pub struct Response<T> {
    #[serde(default)]
    pub status: ResponseStatus,
    #[serde(default)]
    pub message: String,
    #[serde(flatten)]
    pub body: T,
}

/// Discovery: the extension lists its handlers.
#[derive(Serialize, Debug, Default)]
pub struct DiscoveryRequest {}

#[derive(Deserialize, Debug, Default)]
pub struct DiscoveryResponse {
    #[serde(default)]
    pub handlers: Vec<ExtensionHandler>,
}

impl HookRequest for DiscoveryRequest {
    const HOOK: Hook = Hook::Discovery;
    type Response = DiscoveryResponse;
}

/// DiscoverVariables: the variables a patch of the extension reads.
#[derive(Serialize, Debug, Default)]
pub struct DiscoverVariablesRequest {}

#[derive(Deserialize, Debug, Default)]
pub struct DiscoverVariablesResponse {
    #[serde(default)]
    pub variables: Vec<DiscoveredVariable>,
}

impl HookRequest for DiscoverVariablesRequest {
    const HOOK: Hook = Hook::DiscoverVariables;
    type Response = DiscoverVariablesResponse;
}

/// A variable definition as an extension answers it (the v1beta1 shape).
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
pub struct DiscoveredVariable {
    pub name: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub metadata: Option<ObjectMeta>,
    pub schema: VariableSchema,
}

/// A variable's value: `builtin` is one too.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value: Value,
}

/// The variables of a map, in its order.
pub fn variables(values: &Map<String, Value>) -> Vec<Variable> {
    values.iter().map(|(name, value)| Variable { name: name.clone(), value: value.clone() }).collect()
}

/// The object a template is used for, and the field that references it.
#[derive(Serialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HolderReference {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub field_path: String,
}

/// GeneratePatches: every template of a topology, for one external patch.
#[derive(Serialize, Debug, Default)]
pub struct GeneratePatchesRequest {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    pub items: Vec<GeneratePatchesRequestItem>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesRequestItem {
    /// Ties the item to the patches answered for it.
    pub uid: String,
    pub holder_reference: HolderReference,
    pub object: Value,
    /// The variables whose value differs for this template (e.g. `builtin`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
}

#[derive(Deserialize, Debug, Default)]
pub struct GeneratePatchesResponse {
    #[serde(default)]
    pub items: Vec<GeneratePatchesResponseItem>,
}

impl HookRequest for GeneratePatchesRequest {
    const HOOK: Hook = Hook::GeneratePatches;
    type Response = GeneratePatchesResponse;
}

/// A patch for the request item of the same `uid`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesResponseItem {
    pub uid: String,
    pub patch_type: PatchType,
    /// The patch document (base64 in JSON, as Go encodes `[]byte`).
    #[serde(deserialize_with = "base64_bytes")]
    pub patch: Vec<u8>,
}

/// How an answered patch is applied.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902.
    JSONPatch,
    /// RFC 7386.
    JSONMergePatch,
}

fn base64_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    base64::engine::general_purpose::STANDARD.decode(text.as_bytes()).map_err(serde::de::Error::custom)
}

/// ValidateTopology: the patched templates, for the extension to accept or refuse.
#[derive(Serialize, Debug, Default)]
pub struct ValidateTopologyRequest {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    pub items: Vec<ValidateTopologyRequestItem>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyRequestItem {
    pub holder_reference: HolderReference,
    pub object: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
}

#[derive(Deserialize, Debug, Default)]
pub struct ValidateTopologyResponse {}

impl HookRequest for ValidateTopologyRequest {
    const HOOK: Hook = Hook::ValidateTopology;
    type Response = ValidateTopologyResponse;
}

/// GenerateUpgradePlan: the versions an upgrade of a Cluster goes through.
#[derive(Serialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct GenerateUpgradePlanRequest {
    pub cluster: Value,
    pub from_control_plane_kubernetes_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub from_workers_kubernetes_version: String,
    pub to_kubernetes_version: String,
}

#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct GenerateUpgradePlanResponse {
    #[serde(default)]
    pub control_plane_upgrades: Vec<UpgradeStep>,
    #[serde(default)]
    pub workers_upgrades: Vec<UpgradeStep>,
}

#[derive(Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct UpgradeStep {
    pub version: String,
}

impl HookRequest for GenerateUpgradePlanRequest {
    const HOOK: Hook = Hook::GenerateUpgradePlan;
    type Response = GenerateUpgradePlanResponse;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn upgrade_plans_go_in_and_out_in_upstream_shape() {
        let request = GenerateUpgradePlanRequest {
            cluster: json!({"kind": "Cluster"}),
            from_control_plane_kubernetes_version: "v1.31.0".into(),
            from_workers_kubernetes_version: String::new(),
            to_kubernetes_version: "v1.33.0".into(),
        };
        let body = envelope(&request, &BTreeMap::new()).expect("encoded");
        assert_eq!(body["kind"], "GenerateUpgradePlanRequest");
        assert_eq!(body["fromControlPlaneKubernetesVersion"], "v1.31.0");
        assert!(body.get("fromWorkersKubernetesVersion").is_none());
        let answer: Response<GenerateUpgradePlanResponse> = serde_json::from_value(json!({"status": "Success",
            "controlPlaneUpgrades": [{"version": "v1.32.3"}, {"version": "v1.33.0"}]}))
        .expect("decoded");
        let steps: Vec<&str> = answer.body.control_plane_upgrades.iter().map(|s| s.version.as_str()).collect();
        assert_eq!(steps, ["v1.32.3", "v1.33.0"]);
        assert!(answer.body.workers_upgrades.is_empty());
    }

    #[test]
    fn paths_name_the_hook_in_lowercase_and_the_handler() {
        assert_eq!(Hook::Discovery.path(None), "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery");
        assert_eq!(
            Hook::GeneratePatches.path(Some("gen")),
            "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/gen"
        );
    }

    #[test]
    fn requests_carry_the_envelope() {
        let request = GeneratePatchesRequest {
            variables: variables(json!({"builtin": {"cluster": {"name": "c"}}, "x": 1}).as_object().expect("map")),
            items: vec![GeneratePatchesRequestItem {
                uid: "u1".into(),
                holder_reference: HolderReference {
                    api_version: "cluster.x-k8s.io/v1beta2".into(),
                    kind: "Cluster".into(),
                    namespace: "ns".into(),
                    name: "c".into(),
                    field_path: "spec.infrastructureRef".into(),
                },
                object: json!({"kind": "T"}),
                variables: Vec::new(),
            }],
        };
        let settings = BTreeMap::from([("k".to_string(), "v".to_string())]);
        let body = envelope(&request, &settings).expect("encoded");
        assert_eq!(
            body,
            json!({
                "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "GeneratePatchesRequest",
                "settings": {"k": "v"},
                "variables": [{"name": "builtin", "value": {"cluster": {"name": "c"}}}, {"name": "x", "value": 1}],
                "items": [{"uid": "u1", "holderReference": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                    "namespace": "ns", "name": "c", "fieldPath": "spec.infrastructureRef"}, "object": {"kind": "T"}}],
            })
        );
        let empty = envelope(&DiscoveryRequest {}, &BTreeMap::new()).expect("encoded");
        assert_eq!(empty, json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "DiscoveryRequest"}));
    }

    #[test]
    fn answers_decode_with_their_status_and_base64_patches() {
        let answer: Response<GeneratePatchesResponse> = serde_json::from_value(json!({
            "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "GeneratePatchesResponse",
            "status": "Success",
            "items": [{"uid": "u1", "patchType": "JSONPatch", "patch": "W3sib3AiOiJhZGQifV0="}],
        }))
        .expect("decoded");
        assert_eq!(answer.status, ResponseStatus::Success);
        assert_eq!(answer.body.items[0].patch_type, PatchType::JSONPatch);
        assert_eq!(answer.body.items[0].patch, br#"[{"op":"add"}]"#);

        let failed: Response<DiscoverVariablesResponse> =
            serde_json::from_value(json!({"status": "Failure", "message": "no"})).expect("decoded");
        assert_eq!((failed.status, failed.message.as_str()), (ResponseStatus::Failure, "no"));
        assert!(failed.body.variables.is_empty());

        let discovered: Response<DiscoveryResponse> = serde_json::from_value(json!({"status": "Success", "handlers": [
            {"name": "gen", "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"},
             "timeoutSeconds": 5, "failurePolicy": "Ignore"}]}))
        .expect("decoded");
        assert_eq!(discovered.body.handlers[0].request_hook.hook, "GeneratePatches");

        let vars: Response<DiscoverVariablesResponse> =
            serde_json::from_value(json!({"status": "Success", "variables": [
            {"name": "imageRepository", "required": false,
             "schema": {"openAPIV3Schema": {"type": "string", "default": "registry.k8s.io"}}}]}))
            .expect("decoded");
        assert_eq!(vars.body.variables[0].schema.open_api_v3_schema.default, Some(json!("registry.k8s.io")));

        let bad = serde_json::from_value::<Response<GeneratePatchesResponse>>(
            json!({"status": "Success", "items": [{"uid": "u", "patchType": "JSONPatch", "patch": "%%"}]}),
        );
        assert!(bad.is_err());
        assert!(serde_json::from_value::<Response<DiscoveryResponse>>(json!({"status": "Maybe"})).is_err());
    }
}
