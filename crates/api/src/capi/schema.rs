//! schemars helpers for the few schema shapes derive cannot express.

use schemars::{Schema, SchemaGenerator, json_schema};

/// Arbitrary JSON kept as is (`apiextensionsv1.JSON` upstream): no type, unknown fields kept.
pub(crate) fn preserve_unknown_fields(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// A list of arbitrary JSON values.
pub(crate) fn preserve_unknown_fields_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "x-kubernetes-preserve-unknown-fields": true } })
}
