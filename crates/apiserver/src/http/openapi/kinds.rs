//! The schemas of a served kind and of its list, published the way kube-apiserver publishes
//! a CustomResourceDefinition's: the kind's structural schema with `metadata` replaced by a
//! reference to ObjectMeta, `apiVersion` and `kind` described, and the kind named in
//! `x-kubernetes-group-version-kind`.

use drydock_api::ResourceDef;
use serde_json::{Map, Value, json};

use super::meta;
use super::names;

const API_VERSION_DOC: &str = "The group and version of the schema this object is written in, such as apps/v1. \
The server converts versions it knows and rejects others. \
See https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "The kind of this object in CamelCase, such as Deployment. The server can infer it from the \
endpoint; it cannot change. \
See https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "The object's metadata: name, namespace, labels, annotations and the fields the \
server maintains. See https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC: &str = "The list's metadata: its resourceVersion and the token to continue a paged list. \
See https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#lists-and-simple-kinds";

/// `x-kubernetes-group-version-kind` of a schema: a list with the one kind it describes.
pub fn gvk_list(def: &ResourceDef, kind: &str) -> Value {
    json!([{"group": def.group, "kind": kind, "version": def.version}])
}

fn ref_to(name: &str, description: &str) -> Value {
    json!({"allOf": [{"$ref": names::ref_v3(name)}], "description": description})
}

/// The kind's schema, plus any named schemas it referred to (recursive types that could
/// not be inlined), all with `$ref`s pointing into `components.schemas`.
pub fn kind_schema(def: &ResourceDef) -> (Value, Map<String, Value>) {
    let mut schema = match def.schema.as_deref() {
        Some(Value::Object(s)) => Value::Object(s.clone()),
        // A kind served without a schema accepts any fields.
        _ => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    };
    let hoisted = hoist_definitions(&mut schema);
    let Value::Object(root) = &mut schema else { return (schema, hoisted) };
    root.remove("$schema");
    root.remove("title");
    root.insert("type".into(), json!("object"));
    let props = root.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(props) = props {
        let meta_doc = props
            .get("metadata")
            .and_then(|m| m.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(METADATA_DOC)
            .to_string();
        props.insert("metadata".into(), ref_to(meta::OBJECT_META, &meta_doc));
        described(props, "apiVersion", API_VERSION_DOC);
        described(props, "kind", KIND_DOC);
    }
    root.insert("x-kubernetes-group-version-kind".into(), gvk_list(def, &def.kind));
    (schema, hoisted)
}

/// Makes `props[name]` a described string, keeping a description the kind already has.
fn described(props: &mut Map<String, Value>, name: &str, doc: &str) {
    let entry = props.entry(name).or_insert_with(|| json!({}));
    if let Value::Object(p) = entry {
        p.insert("type".into(), json!("string"));
        p.entry("description").or_insert_with(|| json!(doc));
    }
}

/// The `<Kind>List` schema.
pub fn list_schema(def: &ResourceDef) -> Value {
    let kind = names::definition(&def.group, &def.version, &def.kind);
    json!({
        "description": format!("{}List is a list of {}.", def.kind, def.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": API_VERSION_DOC},
            "items": {
                "type": "array",
                "description": format!("List of {}.", def.plural),
                "items": {"$ref": names::ref_v3(&kind)},
            },
            "kind": {"type": "string", "description": KIND_DOC},
            "metadata": ref_to(meta::LIST_META, LIST_METADATA_DOC),
        },
        "x-kubernetes-group-version-kind": gvk_list(def, &format!("{}List", def.kind)),
    })
}

/// Moves a schema's own definitions (`$defs`, `definitions`, `components.schemas`) out
/// of it and points every `$ref` at `components.schemas`.
fn hoist_definitions(schema: &mut Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Value::Object(root) = schema {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = root.remove(key) {
                out.extend(defs);
            }
        }
        if let Some(Value::Object(mut components)) = root.remove("components")
            && let Some(Value::Object(defs)) = components.remove("schemas")
        {
            out.extend(defs);
        }
    }
    rewrite_refs(schema);
    for s in out.values_mut() {
        rewrite_refs(s);
    }
    out
}

fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref")
                && let Some(name) = ["#/$defs/", "#/definitions/"].iter().find_map(|p| r.strip_prefix(p))
            {
                *r = names::ref_v3(name);
            }
            m.values_mut().for_each(rewrite_refs);
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_a_reference_and_type_meta_is_described() {
        let def = ResourceDef::new("example.dev", "v1", "Thing", "things")
            .schema(json!({"type": "object", "properties": {"spec": {"type": "object"}}}));
        let (s, extra) = kind_schema(&def);
        assert!(extra.is_empty());
        assert_eq!(s["properties"]["metadata"]["allOf"][0]["$ref"], names::ref_v3(meta::OBJECT_META));
        assert_eq!(s["properties"]["kind"]["description"], KIND_DOC);
        assert_eq!(s["x-kubernetes-group-version-kind"][0]["kind"], "Thing");
        let list = list_schema(&def);
        assert_eq!(list["properties"]["items"]["items"]["$ref"], "#/components/schemas/dev.example.v1.Thing");
    }

    #[test]
    fn own_definitions_are_hoisted() {
        let def = ResourceDef::new("example.dev", "v1", "Tree", "trees").schema(json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/dev.example.v1.Node"}},
            "$defs": {"dev.example.v1.Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/dev.example.v1.Node"}}}}}
        }));
        let (s, extra) = kind_schema(&def);
        assert_eq!(s["properties"]["root"]["$ref"], "#/components/schemas/dev.example.v1.Node");
        assert_eq!(
            extra["dev.example.v1.Node"]["properties"]["children"]["items"]["$ref"],
            "#/components/schemas/dev.example.v1.Node"
        );
    }
}
