//! `metadata` of every object (and of embedded resources): pruned and type-checked as
//! ObjectMeta, whatever the kind's schema says, plus the restrictions a CRD may place on
//! `metadata.name` and `metadata.generateName`.

use std::sync::LazyLock;

use serde_json::Value;

use super::node::{Compiler, Node};
use super::path::Path;
use super::prune::{self, Walk};
use super::validate;

/// ObjectMeta, compiled once from its generated schema.
static OBJECT_META: LazyLock<Node> = LazyLock::new(|| {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema =
        settings.into_generator().into_root_schema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>();
    let schema = serde_json::to_value(schema).unwrap_or(Value::Null);
    let mut errors = Vec::new();
    Compiler { errors: &mut errors, with_rules: false, free_form_objects: true }.node(&schema, &Path::ROOT)
});

/// Walks `metadata`; `declared` is the kind's own schema for it, if any.
pub fn walk(declared: Option<&Node>, v: &mut Value, old: Option<&Value>, path: &Path<'_>, w: &mut Walk<'_>) {
    prune::walk(&OBJECT_META, v, old, path, w);
    if !w.validate {
        return;
    }
    let Some(declared) = declared else { return };
    for field in ["name", "generateName"] {
        if let (Some(node), Some(value)) = (declared.property(field), v.get(field)) {
            validate::value(node, value, &path.child(field), w.errors);
        }
    }
}
