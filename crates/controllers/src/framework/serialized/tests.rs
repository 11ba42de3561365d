use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::{Machine, MachineSpec, MachineStatus};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde::Serialize;
use serde_json::json;

use super::*;

/// At every depth, the whole text is exactly what `serde_json` writes, and the tree reads
/// back as the same JSON.
fn same_as_serde_json<T: Serialize>(value: &T) {
    let want = serde_json::to_string(value).unwrap();
    for levels in 0..5 {
        let s = Serialized::of(value, levels).unwrap();
        assert_eq!(s.text(), want, "at {levels} levels");
        assert_eq!(s.to_value().unwrap(), serde_json::from_str::<Value>(&want).unwrap());
    }
}

fn machine() -> Machine {
    let mut m = Machine::new(
        "m-0",
        MachineSpec { cluster_name: "c".into(), version: Some("v1.33.0".into()), ..Default::default() },
    );
    m.metadata.namespace = Some("default".into());
    m.metadata.labels = Some(BTreeMap::from([("cluster.x-k8s.io/cluster-name".into(), "c".into())]));
    m.metadata.annotations = Some(BTreeMap::from([("a \"quoted\" key\\".into(), "line\nbreak".into())]));
    let ready = Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: "Ready".into(),
        message: String::new(),
        observed_generation: Some(2),
        last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
    };
    m.status =
        Some(MachineStatus { phase: Some("Running".into()), conditions: Some(vec![ready]), ..Default::default() });
    m
}

#[test]
fn texts_are_serde_jsons() {
    same_as_serde_json(&machine());
    let mut secret = Secret::default();
    secret.metadata.name = Some("s".into());
    secret.data = Some(BTreeMap::from([("value".into(), ByteString(b"\x00\xffbytes".to_vec()))]));
    same_as_serde_json(&secret);
    same_as_serde_json(&json!({"a": [1, {"b": null}], "c": {"d": {"e": 1.5, "f": "\u{1}"}}, "g": {}}));
    same_as_serde_json(&json!([{"a": 1}]));
    same_as_serde_json(&json!("text"));

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(u8, String),
        Struct { side: u32 },
    }
    #[derive(Serialize)]
    struct Flattened {
        kind: &'static str,
        #[serde(flatten)]
        rest: BTreeMap<String, Shape>,
        numbers: BTreeMap<u32, bool>,
        tuple: (i64, Option<u8>),
    }
    same_as_serde_json(&Flattened {
        kind: "K",
        rest: BTreeMap::from([
            ("u".into(), Shape::Unit),
            ("n".into(), Shape::Newtype(7)),
            ("t".into(), Shape::Tuple(1, "x".into())),
            ("s".into(), Shape::Struct { side: 3 }),
        ]),
        numbers: BTreeMap::from([(1, true), (20, false)]),
        tuple: (-1, None),
    });
}

#[test]
fn outer_levels_are_members() {
    let m = machine();
    let s = Serialized::of(&m, 2).unwrap();
    let top: Vec<&str> = s.members().unwrap().iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(top, ["apiVersion", "kind", "metadata", "spec", "status"]);
    let status = s.get("status").unwrap();
    assert!(status.members().is_some(), "the second level is split too");
    assert_eq!(status.get("phase").map(Serialized::text).as_deref(), Some(r#""Running""#));
    // The third level is text.
    assert!(status.get("conditions").unwrap().members().is_none());
    assert!(Serialized::of(&m, 1).unwrap().get("status").unwrap().members().is_none());
}

#[test]
fn members_left_out_are_not_serialized_and_the_rest_are_as_whole() {
    let m = machine();
    let all = Serialized::of(&m, 2).unwrap();
    let some = Serialized::of_members(&m, 2, |k| k != "metadata").unwrap();
    let top: Vec<&str> = some.members().unwrap().iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(top, ["apiVersion", "kind", "spec", "status"]);
    for (k, v) in some.members().unwrap() {
        assert_eq!(Some(v), all.get(k), "{k}");
    }
    // Only the outer object is filtered: a status keeps all its members.
    let status = Serialized::of_members(&m, 2, |k| k == "status").unwrap();
    assert_eq!(status.members().unwrap().len(), 1);
    assert_eq!(status.get("status"), all.get("status"));
    // A map (an untyped object, its members in another order) is filtered the same way.
    let v = serde_json::to_value(&m).unwrap();
    let untyped = Serialized::of_members(&v, 2, |k| k == "status").unwrap();
    assert_eq!(untyped.to_value().unwrap(), status.to_value().unwrap());
    assert_eq!(untyped.members().map(<[_]>::len), Some(1));
}

#[test]
fn a_map_key_that_is_not_a_string_or_number_is_an_error() {
    let m = BTreeMap::from([((1, 2), "v")]);
    assert!(serde_json::to_string(&m).is_err());
    assert!(Serialized::of(&m, 1).is_err());
}
