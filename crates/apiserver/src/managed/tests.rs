//! The golden cases of server-side apply on the `Widget` kind: merge and ownership as
//! kube-apiserver documents them.

use serde_json::{Value, json};

use super::*;

/// The merge type of the Widget CRD the HTTP golden tests serve.
fn widget() -> MergeType {
    let crd: Value = serde_json::from_str(include_str!("../../tests/data/widget-crd.json")).expect("widget CRD");
    MergeType::from_schema(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], None)
}

/// A Widget store of one object, written the way the REST layer writes.
struct World {
    ty: MergeType,
    obj: Option<Value>,
}

const AV: &str = "example.com/v1";

fn body(extra: Value) -> Value {
    let mut b = json!({"apiVersion": AV, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        match (k.as_str(), v.as_object()) {
            ("metadata", Some(m)) => m.iter().for_each(|(mk, mv)| b["metadata"][mk] = mv.clone()),
            _ => b[k] = v.clone(),
        }
    }
    b
}

fn writer(manager: &str) -> Writer<'_> {
    Writer { manager, api_version: AV, subresource: "", ignored: &[], now: "2026-12-01T00:00:00Z" }
}

/// managedFields as the store keeps them.
fn raw(managed: Option<Value>) -> Option<Box<serde_json::value::RawValue>> {
    managed.map(|m| serde_json::value::to_raw_value(&m).unwrap())
}

impl World {
    fn new() -> Self {
        World { ty: widget(), obj: None }
    }

    fn apply(&mut self, manager: &str, config: Value, force: bool) -> Result<(), String> {
        let cfg = body(config);
        let mut live = self.obj.clone();
        let managed = raw(live.as_mut().and_then(take_sent));
        let out = super::apply(
            (&self.ty, &OneVersion),
            live.as_ref(),
            managed.as_deref().map(Live),
            &cfg,
            &writer(manager),
            force,
        )
        .map_err(|c| c.message())?;
        self.obj = Some(out.object);
        Ok(())
    }

    /// A create, PUT or patch resulting in `new` (managedFields as the body sent them).
    fn update(&mut self, manager: &str, new: Value) {
        let mut new = body(new);
        let sent = take_sent(&mut new);
        let mut live = self.obj.clone();
        let managed = raw(live.as_mut().and_then(take_sent));
        let mf = track_update(
            (&self.ty, &OneVersion),
            live.as_ref(),
            managed.as_deref().map(Live),
            &new,
            sent.as_ref(),
            &writer(manager),
        );
        match mf {
            Some(mf) => new["metadata"]["managedFields"] = serde_json::to_value(&mf).unwrap(),
            None => {
                take_sent(&mut new);
            }
        }
        self.obj = Some(new);
    }

    fn get(&self, pointer: &str) -> Value {
        self.obj.as_ref().and_then(|o| o.pointer(pointer)).cloned().unwrap_or(Value::Null)
    }

    /// `manager (operation)` → fieldsV1.
    fn managed(&self) -> Vec<(String, Value)> {
        self.get("/metadata/managedFields")
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    format!("{} ({})", e["manager"].as_str().unwrap_or(""), e["operation"].as_str().unwrap_or("")),
                    e["fieldsV1"].clone(),
                )
            })
            .collect()
    }

    fn owner(&self, who: &str) -> Value {
        self.managed().into_iter().find(|(m, _)| m == who).map(|(_, f)| f).unwrap_or(Value::Null)
    }

    /// The object without managedFields and identity.
    fn content(&self) -> Value {
        let mut o = self.obj.clone().unwrap_or(Value::Null);
        take_sent(&mut o);
        o
    }
}

#[test]
fn e1_apply_creates() {
    let mut w = World::new();
    w.apply("alice", json!({"metadata": {"labels": {"test-label": "test"}}, "data": {"key": "some value"}}), false)
        .unwrap();
    assert_eq!(w.get("/data/key"), json!("some value"));
    assert_eq!(
        w.managed(),
        vec![(
            "alice (Apply)".into(),
            json!({"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}})
        )]
    );
}

#[test]
fn e2_create_is_an_update() {
    let mut w = World::new();
    w.update(
        "kubectl-create",
        json!({"metadata": {"labels": {"app": "web"}, "finalizers": ["example.com/f"]},
               "spec": {"replicas": 3, "containers": [{"name": "nginx", "image": "nginx:1.27"}]}}),
    );
    assert_eq!(
        w.owner("kubectl-create (Update)"),
        json!({"f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/f\"": {}}, "f:labels": {".": {}, "f:app": {}}},
               "f:spec": {".": {}, "f:containers": {".": {}, "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}, "f:replicas": {}}})
    );
}

#[test]
fn e3_shared_then_conflict() {
    let mut w = World::new();
    w.apply("alice", json!({"data": {"key": "v1"}}), false).unwrap();
    w.apply("bob", json!({"data": {"key": "v1"}}), false).unwrap();
    let err = w.apply("alice", json!({"data": {"key": "v2"}}), false).unwrap_err();
    assert_eq!(err, "Apply failed with 1 conflict: conflict with \"bob\": .data.key");
    assert_eq!(w.get("/data/key"), json!("v1"));
    assert_eq!(w.owner("alice (Apply)"), json!({"f:data": {"f:key": {}}}));
    assert_eq!(w.owner("bob (Apply)"), json!({"f:data": {"f:key": {}}}));
}

#[test]
fn e4_update_takes_apply_conflicts_force_takes_back() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 3, "paused": false}}), false).unwrap();
    let mut put = w.content();
    put["spec"]["replicas"] = json!(5);
    put["metadata"]["managedFields"] = w.get("/metadata/managedFields");
    w.update("hpa-controller", put);
    assert_eq!(w.owner("alice (Apply)"), json!({"f:spec": {"f:paused": {}}}));
    assert_eq!(w.owner("hpa-controller (Update)"), json!({"f:spec": {"f:replicas": {}}}));
    let err = w.apply("alice", json!({"spec": {"replicas": 3, "paused": false}}), false).unwrap_err();
    assert_eq!(
        err,
        "Apply failed with 1 conflict: conflict with \"hpa-controller\" using example.com/v1: .spec.replicas"
    );
    w.apply("alice", json!({"spec": {"replicas": 3, "paused": false}}), true).unwrap();
    assert_eq!(w.get("/spec/replicas"), json!(3));
    assert_eq!(w.managed(), vec![("alice (Apply)".into(), json!({"f:spec": {"f:paused": {}, "f:replicas": {}}}))]);
}

#[test]
fn e5_e6_dropping_a_field_removes_it_unless_shared() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 3, "paused": true}}), false).unwrap();
    w.apply("alice", json!({"spec": {"replicas": 3}}), false).unwrap();
    assert_eq!(w.get("/spec"), json!({"replicas": 3}));
    assert_eq!(w.owner("alice (Apply)"), json!({"f:spec": {"f:replicas": {}}}));

    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 3, "paused": true}}), false).unwrap();
    w.apply("bob", json!({"spec": {"paused": true}}), false).unwrap();
    w.apply("alice", json!({"spec": {"replicas": 3}}), false).unwrap();
    assert_eq!(w.get("/spec/paused"), json!(true));
    assert_eq!(w.owner("bob (Apply)"), json!({"f:spec": {"f:paused": {}}}));
    assert_eq!(w.owner("alice (Apply)"), json!({"f:spec": {"f:replicas": {}}}));
}

#[test]
fn e7_list_map_items_are_owned_per_item() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "logger", "image": "busybox"}]}}), false).unwrap();
    w.apply("bob", json!({"spec": {"containers": [{"name": "sidecar", "image": "envoy:1"}]}}), false).unwrap();
    w.apply("alice", json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}), false).unwrap();
    assert_eq!(
        w.get("/spec/containers"),
        json!([{"name": "nginx", "image": "nginx:1.28"}, {"name": "sidecar", "image": "envoy:1"}])
    );
    assert_eq!(
        w.owner("alice (Apply)"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
    );
    assert_eq!(
        w.owner("bob (Apply)"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
    );
}

#[test]
fn e8_sets_are_owned_per_value() {
    let mut w = World::new();
    w.apply("alice", json!({"metadata": {"finalizers": ["a.example.com/x", "b.example.com/y"]}}), false).unwrap();
    w.apply("bob", json!({"metadata": {"finalizers": ["c.example.com/z"]}}), false).unwrap();
    w.apply("alice", json!({"metadata": {"finalizers": ["a.example.com/x"]}}), false).unwrap();
    assert_eq!(w.get("/metadata/finalizers"), json!(["a.example.com/x", "c.example.com/z"]));
    assert_eq!(w.owner("alice (Apply)"), json!({"f:metadata": {"f:finalizers": {"v:\"a.example.com/x\"": {}}}}));
    assert_eq!(w.owner("bob (Apply)"), json!({"f:metadata": {"f:finalizers": {"v:\"c.example.com/z\"": {}}}}));
}

#[test]
fn e9_atomic_lists_and_maps_are_one_field() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"args": ["--a", "--b"]}}), false).unwrap();
    let err = w.apply("bob", json!({"spec": {"args": ["--a", "--b", "--c"]}}), false).unwrap_err();
    assert_eq!(err, "Apply failed with 1 conflict: conflict with \"alice\": .spec.args");
    w.apply("bob", json!({"spec": {"args": ["--a", "--b", "--c"]}}), true).unwrap();
    assert_eq!(w.get("/spec/args"), json!(["--a", "--b", "--c"]));
    assert_eq!(w.managed(), vec![("bob (Apply)".into(), json!({"f:spec": {"f:args": {}}}))]);

    let mut w = World::new();
    w.apply("alice", json!({"spec": {"selector": {"app": "web"}}}), false).unwrap();
    w.apply("bob", json!({"spec": {"selector": {"app": "web"}}}), false).unwrap();
    assert_eq!(w.owner("bob (Apply)"), json!({"f:spec": {"f:selector": {}}}));
    assert_eq!(w.owner("alice (Apply)"), json!({"f:spec": {"f:selector": {}}}));
    let err = w.apply("bob", json!({"spec": {"selector": {"app": "web", "tier": "fe"}}}), false).unwrap_err();
    assert!(err.ends_with(": .spec.selector"), "{err}");
}

#[test]
fn e10_reset_then_before_first_apply() {
    let mut w = World::new();
    w.update("kubectl-create", json!({"spec": {"replicas": 1, "paused": false}}));
    let mut reset = w.content();
    reset["metadata"]["managedFields"] = json!([{}]);
    w.update("kubectl-patch", reset);
    assert!(w.managed().is_empty());
    let mut edit = w.content();
    edit["spec"]["replicas"] = json!(2);
    w.update("kubectl-edit", edit);
    assert!(w.managed().is_empty(), "an object without managedFields is not tracked by updates");
    let err = w.apply("alice", json!({"spec": {"replicas": 4}}), false).unwrap_err();
    assert_eq!(
        err,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using example.com/v1: .spec.replicas"
    );
    w.apply("alice", json!({"spec": {"replicas": 2}}), false).unwrap();
    assert_eq!(w.owner("alice (Apply)"), json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(w.owner("before-first-apply (Update)"), json!({"f:spec": {".": {}, "f:paused": {}, "f:replicas": {}}}));
}

#[test]
fn multi_key_maps_and_updates_inside_items() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"ports": [{"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"}, {"containerPort": 53, "protocol": "UDP", "name": "dns"}]}}), false).unwrap();
    let err = w
        .apply("bob", json!({"spec": {"ports": [{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}]}}), false)
        .unwrap_err();
    assert_eq!(
        err,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[containerPort=53,protocol=\"UDP\"].name"
    );
    assert_eq!(
        w.owner("alice (Apply)")["f:spec"]["f:ports"]["k:{\"containerPort\":53,\"protocol\":\"TCP\"}"],
        json!({".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}})
    );

    let mut w = World::new();
    w.apply("alice", json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}), false).unwrap();
    let mut put = w.content();
    put["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    put["metadata"]["managedFields"] = w.get("/metadata/managedFields");
    w.update("kubectl-set-image", put);
    assert_eq!(
        w.owner("alice (Apply)"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:name": {}}}}})
    );
    assert_eq!(
        w.owner("kubectl-set-image (Update)"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {"f:image": {}}}}})
    );
    let err = w
        .apply("alice", json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}), false)
        .unwrap_err();
    assert!(err.ends_with(".spec.containers[name=\"nginx\"].image"), "{err}");
}

#[test]
fn an_update_removing_a_field_removes_it_for_everyone() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 3, "paused": true}}), false).unwrap();
    let mut put = w.content();
    put["spec"].as_object_mut().unwrap().remove("paused");
    put["metadata"]["managedFields"] = w.get("/metadata/managedFields");
    w.update("editor", put);
    assert_eq!(w.managed(), vec![("alice (Apply)".into(), json!({"f:spec": {"f:replicas": {}}}))]);
}

#[test]
fn update_entries_are_capped_into_ancient_changes() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 0}}), false).unwrap();
    for i in 0..11 {
        let mut put = w.content();
        put["data"] = json!({format!("k{i}"): "v"});
        for j in 0..i {
            put["data"][format!("k{j}")] = json!("v");
        }
        put["metadata"]["managedFields"] = w.get("/metadata/managedFields");
        w.update(&format!("m{i:02}"), put);
    }
    let managed = w.managed();
    let updates: Vec<&String> = managed.iter().map(|(m, _)| m).filter(|m| m.ends_with("(Update)")).collect();
    assert_eq!(updates.len(), MAX_UPDATE_MANAGERS);
    let ancient = w.owner("ancient-changes (Update)");
    assert_eq!(ancient, json!({"f:data": {".": {}, "f:k0": {}, "f:k1": {}}}));
    assert!(managed.iter().any(|(m, _)| m == "alice (Apply)"));
}

#[test]
fn several_conflicts_are_grouped_per_manager() {
    let mut w = World::new();
    w.apply("alice", json!({"spec": {"replicas": 1, "paused": true}}), false).unwrap();
    let err = w.apply("bob", json!({"spec": {"replicas": 2, "paused": false}}), false).unwrap_err();
    assert_eq!(err, "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.paused\n- .spec.replicas");
}
