//! ClusterClass v1beta2 variables, patches and status. Variable schemas have the same shape
//! as in v1beta1 (the v1beta1 [`JSONSchemaProps`] is reused); v1beta2 only restricts the
//! top-level `type` to the OpenAPI types.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::capi::common::ObjectMeta;
use crate::capi::conditions::Condition;
use crate::capi::core::{JSONPatchValue, JSONSchemaProps, PatchSelector};

/// A variable Clusters of this class may set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassVariable {
    /// Name, unique in the class.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Clusters must set it.
    pub required: bool,
    /// Labels and annotations the variable had in v1beta1 (`x-metadata` in the schema replaces
    /// them).
    #[serde(rename = "deprecatedV1Beta1Metadata", skip_serializing_if = "Option::is_none")]
    pub deprecated_v1beta1_metadata: Option<ObjectMeta>,
    /// Schema values must match.
    pub schema: VariableSchema,
}

/// Schema of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableSchema {
    /// The schema.
    #[serde(rename = "openAPIV3Schema")]
    #[schemars(schema_with = "open_api_v3_schema")]
    pub open_api_v3_schema: JSONSchemaProps,
}

/// The schema of [`JSONSchemaProps`] with `type` limited to the OpenAPI types.
fn open_api_v3_schema(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = JSONSchemaProps::json_schema(generator);
    if let Some(type_) = schema.get_mut("properties").and_then(|p| p.get_mut("type")).and_then(Value::as_object_mut) {
        type_.insert("enum".into(), json!(["object", "array", "string", "integer", "number", "boolean"]));
    }
    schema
}

/// A named set of patches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassPatch {
    /// Name, unique in the class.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// What the patch does.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub description: Option<String>,
    /// Go template; the patch applies only when it renders to `true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub enabled_if: Option<String>,
    /// Inline JSON patches.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub definitions: Option<Vec<PatchDefinition>>,
    /// Patches computed by a runtime extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalPatchDefinition>,
}

/// JSON patches for the templates a selector matches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchDefinition {
    /// Templates the patches apply to.
    pub selector: PatchSelector,
    /// Patch operations, applied in order.
    #[schemars(length(min = 1, max = 100))]
    pub json_patches: Vec<JSONPatch>,
}

/// One JSON patch operation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONPatch {
    /// add, replace or remove.
    #[schemars(extend("enum" = ["add", "replace", "remove"]))]
    pub op: String,
    /// JSON pointer into the template.
    #[schemars(length(min = 1, max = 512))]
    pub path: String,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub value: Option<Value>,
    /// Value computed from a variable or a template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<JSONPatchValue>,
}

/// Runtime extensions that compute patches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalPatchDefinition {
    /// Runtime extension that generates patches.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub generate_patches_extension: Option<String>,
    /// Runtime extension that validates the topology.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub validate_topology_extension: Option<String>,
    /// Runtime extension that declares variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub discover_variables_extension: Option<String>,
    /// Settings passed to the extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<BTreeMap<String, String>>,
}

/// Observed state of a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatus {
    /// Observations about this object (VariablesReady, RefVersionsUpToDate, Paused).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Every variable, from the class and from extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub variables: Option<Vec<ClusterClassStatusVariable>>,
    /// Fields kept for clients of the older API version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<ClusterClassDeprecatedStatus>,
}

/// A variable and where its definitions come from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariable {
    /// Name, unique in the class.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Definitions differ between sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions_conflict: Option<bool>,
    /// One entry per source defining the variable.
    #[schemars(length(min = 1, max = 100))]
    pub definitions: Vec<ClusterClassStatusVariableDefinition>,
}

/// One definition of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariableDefinition {
    /// `inline` or the name of the patch that defines it.
    #[schemars(length(min = 1, max = 256))]
    pub from: String,
    /// Clusters must set the variable.
    pub required: bool,
    /// Labels and annotations the variable had in v1beta1.
    #[serde(rename = "deprecatedV1Beta1Metadata", skip_serializing_if = "Option::is_none")]
    pub deprecated_v1beta1_metadata: Option<ObjectMeta>,
    /// Schema values must match.
    pub schema: VariableSchema,
}

/// Status fields kept for clients of older API versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<ClusterClassV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions (with severity) of a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

impl super::ClusterClass {
    /// Every variable a Cluster of the class may set: those of `spec.variables`, then those
    /// only `status.variables` lists (discovered from Runtime Extensions; their first
    /// definition).
    pub fn variable_definitions(&self) -> Vec<ClusterClassVariable> {
        let mut out: Vec<ClusterClassVariable> = self.spec.variables.clone().unwrap_or_default();
        let status = self.status.as_ref().and_then(|s| s.variables.as_ref());
        for v in status.into_iter().flatten() {
            let Some(d) = v.definitions.first().filter(|_| !out.iter().any(|o| o.name == v.name)) else { continue };
            out.push(ClusterClassVariable {
                name: v.name.clone(),
                required: d.required,
                deprecated_v1beta1_metadata: d.deprecated_v1beta1_metadata.clone(),
                schema: d.schema.clone(),
            });
        }
        out
    }
}
