//! The merge patch bringing a workload Node's metadata in line with the Cluster API object it
//! belongs to (its Machine, or the MachinePool whose instance it is): the labels that object
//! propagates, the annotations naming it, and the `node.cluster.x-k8s.io/uninitialized`
//! taint dropped once the Node is known. Only what differs is written; the Node's other
//! labels, annotations and taints are left alone.

use k8s_openapi::api::core::v1::{Node, Taint};
use serde_json::{Map, Value, json};

use drydock_api::capi::keys::{
    NODE_CLUSTER_NAME_ANNOTATION, NODE_CLUSTER_NAMESPACE_ANNOTATION, NODE_OWNER_KIND_ANNOTATION,
    NODE_OWNER_NAME_ANNOTATION, NODE_UNINITIALIZED_TAINT,
};

/// The annotations every owned Node carries: its cluster, and its owner's kind and name
/// (`None`: no owner to name).
pub fn owner_annotations(cluster: &str, namespace: &str, owner: Option<(&str, &str)>) -> Vec<(&'static str, String)> {
    let mut a = vec![
        (NODE_CLUSTER_NAME_ANNOTATION, cluster.to_string()),
        (NODE_CLUSTER_NAMESPACE_ANNOTATION, namespace.to_string()),
    ];
    if let Some((kind, name)) = owner {
        a.push((NODE_OWNER_KIND_ANNOTATION, kind.to_string()));
        a.push((NODE_OWNER_NAME_ANNOTATION, name.to_string()));
    }
    a
}

/// The patch setting `labels` (already reduced to the changes: a null value removes one)
/// and `annotations` (the wanted values, written where they differ) on `node`, and dropping
/// the uninitialized taint; `None` when there is nothing to change. The patch carries the
/// Node's resourceVersion, so a stale read conflicts rather than overwrites.
pub fn build(node: &Node, labels: Map<String, Value>, annotations: Vec<(&str, String)>) -> Option<Value> {
    let have = node.metadata.annotations.clone().unwrap_or_default();
    let mut changed = Map::new();
    for (k, v) in annotations {
        if have.get(k) != Some(&v) {
            changed.insert(k.to_string(), json!(v));
        }
    }
    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels));
    }
    if !changed.is_empty() {
        metadata.insert("annotations".into(), Value::Object(changed));
    }
    let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
    let uninitialized = |t: &&Taint| t.key == NODE_UNINITIALIZED_TAINT && t.effect == "NoSchedule";
    let mut patch = Map::new();
    if let Some(ts) = taints.filter(|ts| ts.iter().any(|t| uninitialized(&t))) {
        let kept: Vec<_> = ts.iter().filter(|t| !uninitialized(t)).collect();
        patch.insert("spec".into(), json!({ "taints": kept }));
    }
    if metadata.is_empty() && patch.is_empty() {
        return None;
    }
    metadata.insert("resourceVersion".into(), json!(node.metadata.resource_version));
    patch.insert("metadata".into(), Value::Object(metadata));
    Some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_instance_node_is_annotated_once_and_untainted() {
        let mut node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n", "resourceVersion": "3", "annotations": {"keep": "me"}},
            "spec": {"taints": [{"key": NODE_UNINITIALIZED_TAINT, "effect": "NoSchedule"}, {"key": "keep", "effect": "NoSchedule"}]},
        }))
        .expect("node");
        let want = owner_annotations("c", "ns", Some(("MachinePool", "mp")));
        let p = build(&node, Map::new(), want.clone()).expect("a patch");
        assert_eq!(p["metadata"]["annotations"][NODE_OWNER_KIND_ANNOTATION], "MachinePool");
        assert_eq!(p["metadata"]["annotations"][NODE_CLUSTER_NAMESPACE_ANNOTATION], "ns");
        assert_eq!(p["metadata"]["resourceVersion"], "3");
        assert_eq!(p["spec"]["taints"], json!([{"key": "keep", "effect": "NoSchedule"}]));
        let annotations = node.metadata.annotations.get_or_insert_with(Default::default);
        for (k, v) in &want {
            annotations.insert((*k).to_string(), v.clone());
        }
        if let Some(ts) = node.spec.as_mut().and_then(|s| s.taints.as_mut()) {
            ts.retain(|t| t.key == "keep");
        }
        assert_eq!(build(&node, Map::new(), want), None, "in line already");
    }
}
