//! The OpenAPI schema subset ClusterClass variables are declared with.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capi::common::ObjectMeta;

/// Schema of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableSchema {
    /// The schema.
    #[serde(rename = "openAPIV3Schema")]
    pub open_api_v3_schema: JSONSchemaProps,
}

/// A structural OpenAPI v3 schema node. Nested schemas are kept as free-form JSON in the CRD
/// (the type is recursive), but are typed here.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    /// OpenAPI `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// OpenAPI `example`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub example: Option<Value>,
    /// OpenAPI `type`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// OpenAPI `properties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub properties: Option<BTreeMap<String, JSONSchemaProps>>,
    /// OpenAPI `additionalProperties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub additional_properties: Option<Box<JSONSchemaProps>>,
    /// OpenAPI `maxProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    /// OpenAPI `minProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    /// OpenAPI `required`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// OpenAPI `items`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub items: Option<Box<JSONSchemaProps>>,
    /// OpenAPI `maxItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    /// OpenAPI `minItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    /// OpenAPI `uniqueItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    /// OpenAPI `format`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// OpenAPI `maxLength`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    /// OpenAPI `minLength`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    /// OpenAPI `pattern`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// OpenAPI `maximum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// OpenAPI `exclusiveMaximum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    /// OpenAPI `minimum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// OpenAPI `exclusiveMinimum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    /// OpenAPI `x-kubernetes-preserve-unknown-fields`.
    #[serde(rename = "x-kubernetes-preserve-unknown-fields", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_preserve_unknown_fields: Option<bool>,
    /// OpenAPI `enum`.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields_list")]
    pub enum_: Option<Vec<Value>>,
    /// OpenAPI `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub default: Option<Value>,
    /// OpenAPI `x-kubernetes-validations`.
    #[serde(rename = "x-kubernetes-validations", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_validations: Option<Vec<ValidationRule>>,
    /// OpenAPI `x-metadata`.
    #[serde(rename = "x-metadata", skip_serializing_if = "Option::is_none")]
    pub x_metadata: Option<ObjectMeta>,
    /// OpenAPI `x-kubernetes-int-or-string`.
    #[serde(rename = "x-kubernetes-int-or-string", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_int_or_string: Option<bool>,
    /// OpenAPI `allOf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub all_of: Option<Vec<JSONSchemaProps>>,
    /// OpenAPI `oneOf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub one_of: Option<Vec<JSONSchemaProps>>,
    /// OpenAPI `anyOf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub any_of: Option<Vec<JSONSchemaProps>>,
    /// OpenAPI `not`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub not: Option<Box<JSONSchemaProps>>,
}

/// A CEL validation rule on a variable schema node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    /// CEL expression; `self` is the value.
    pub rule: String,
    /// Message reported when the rule fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// CEL expression producing the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
    /// Field error reason reported when the rule fails (default FieldValueInvalid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<FieldValueErrorReason>,
    /// Relative JSON path of the field the error is reported on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

/// Field error reasons a validation rule may report.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum FieldValueErrorReason {
    /// Invalid value.
    FieldValueInvalid,
    /// Forbidden.
    FieldValueForbidden,
    /// Required value.
    FieldValueRequired,
    /// Duplicate value.
    FieldValueDuplicate,
}
