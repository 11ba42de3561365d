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
    #[serde(rename = "openAPIV3Schema")]
    pub open_api_v3_schema: JSONSchemaProps,
}

/// A structural OpenAPI v3 schema node. Nested schemas are kept as free-form JSON in the CRD
/// (the type is recursive), but are typed here.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub example: Option<Value>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub properties: Option<BTreeMap<String, JSONSchemaProps>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub additional_properties: Option<Box<JSONSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub items: Option<Box<JSONSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    #[serde(rename = "x-kubernetes-preserve-unknown-fields", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_preserve_unknown_fields: Option<bool>,
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields_list")]
    pub enum_: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub default: Option<Value>,
    #[serde(rename = "x-kubernetes-validations", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_validations: Option<Vec<ValidationRule>>,
    #[serde(rename = "x-metadata", skip_serializing_if = "Option::is_none")]
    pub x_metadata: Option<ObjectMeta>,
    #[serde(rename = "x-kubernetes-int-or-string", skip_serializing_if = "Option::is_none")]
    pub x_kubernetes_int_or_string: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub all_of: Option<Vec<JSONSchemaProps>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub one_of: Option<Vec<JSONSchemaProps>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub any_of: Option<Vec<JSONSchemaProps>>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
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
