//! The apimachinery schemas every group-version document refers to (ObjectMeta, ListMeta,
//! Status, DeleteOptions, Patch, WatchEvent, autoscaling/v1 Scale), generated from
//! k8s-openapi's types so names, fields and descriptions match kube-apiserver's.

use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ListMeta, ObjectMeta, Patch, Status, WatchEvent};
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
pub const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// Named schemas with `$ref`s of the form `#/components/schemas/<name>`, ready to be
/// copied into a document's components. Built once per registry change.
pub fn schemas() -> Map<String, Value> {
    let settings = SchemaSettings::openapi3().with(|s| s.meta_schema = None);
    let mut generator = SchemaGenerator::new(settings);
    generator.subschema_for::<ObjectMeta>();
    generator.subschema_for::<ListMeta>();
    generator.subschema_for::<Status>();
    generator.subschema_for::<DeleteOptions>();
    generator.subschema_for::<Patch>();
    generator.subschema_for::<WatchEvent<Value>>();
    generator.subschema_for::<Scale>();
    let mut out: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    annotate(&mut out);
    out
}

/// Adds what k8s-openapi's schemas leave out and clients read: the kinds of the objects
/// (`x-kubernetes-group-version-kind`) and the list semantics of ObjectMeta's lists, which
/// kubectl uses to compute strategic merge patches.
fn annotate(out: &mut Map<String, Value>) {
    let gvk = |group: &str, version: &str, kind: &str| json!([{"group": group, "kind": kind, "version": version}]);
    for (name, value) in [
        (STATUS, gvk("", "v1", "Status")),
        (DELETE_OPTIONS, gvk("", "v1", "DeleteOptions")),
        (WATCH_EVENT, gvk("", "v1", "WatchEvent")),
        (SCALE, gvk("autoscaling", "v1", "Scale")),
    ] {
        if let Some(Value::Object(s)) = out.get_mut(name) {
            s.insert("x-kubernetes-group-version-kind".into(), value);
        }
    }
    let Some(props) = out.get_mut(OBJECT_META).and_then(|m| m.get_mut("properties")) else { return };
    if let Some(Value::Object(f)) = props.get_mut("finalizers") {
        f.insert("x-kubernetes-list-type".into(), json!("set"));
        f.insert("x-kubernetes-patch-strategy".into(), json!("merge"));
    }
    if let Some(Value::Object(o)) = props.get_mut("ownerReferences") {
        o.insert("x-kubernetes-list-map-keys".into(), json!(["uid"]));
        o.insert("x-kubernetes-list-type".into(), json!("map"));
        o.insert("x-kubernetes-patch-merge-key".into(), json!("uid"));
        o.insert("x-kubernetes-patch-strategy".into(), json!("merge"));
    }
    if let Some(Value::Object(m)) = props.get_mut("managedFields") {
        m.insert("x-kubernetes-list-type".into(), json!("atomic"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_schemas_are_named_like_kube_apiserver() {
        let s = schemas();
        for name in [OBJECT_META, LIST_META, STATUS, DELETE_OPTIONS, PATCH, WATCH_EVENT, SCALE] {
            assert!(s.contains_key(name), "{name} missing from {:?}", s.keys().collect::<Vec<_>>());
        }
        let owner = &s[OBJECT_META]["properties"]["ownerReferences"];
        assert_eq!(owner["x-kubernetes-patch-merge-key"], "uid");
        assert!(owner["items"].is_object());
    }
}
