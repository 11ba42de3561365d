use serde_json::{Value, json};

use super::*;

fn round_trip(v: &Value) -> Value {
    let bytes = envelope::encode_value(v).expect("encodes");
    assert!(bytes.starts_with(&MAGIC));
    decode_object(&bytes).expect("decodes")
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "uid": "6c0e4b44-5a0b-4a8e-9b55-0d3c9d7c9a11",
            "resourceVersion": "42", "generation": 3,
            "creationTimestamp": "2026-11-30T10:11:12Z",
            "labels": {"app": "web", "empty": ""},
            "annotations": {"deployment.kubernetes.io/revision": "2"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                 "uid": "0a4b", "controller": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
                               "time": "2026-11-30T10:11:12Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"},
                         "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", ""]}]},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "web", "image": "nginx:1.27", "args": ["-g", "daemon off;"],
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "1"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                        "securityContext": {"runAsUser": 1000, "privileged": true}
                    }],
                    "terminationGracePeriodSeconds": 30
                }
            }
        },
        "status": {"replicas": 3, "readyReplicas": 2,
                   "conditions": [{"type": "Available", "status": "True",
                                   "lastUpdateTime": "2026-11-30T10:11:13Z",
                                   "lastTransitionTime": "2026-11-30T10:11:13Z", "reason": "MinimumReplicasAvailable"}]}
    })
}

#[test]
fn deployment_round_trips() {
    let d = deployment();
    assert_eq!(round_trip(&d), d);
}

#[test]
fn service_round_trips() {
    let s = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"],
                 "ipFamilies": ["IPv4"], "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                           {"name": "named", "port": 443, "targetPort": "https"}],
                 "sessionAffinity": "None"}
    });
    assert_eq!(round_trip(&s), s);
}

#[test]
fn secret_bytes_and_configmap_maps_keep_empty_values() {
    let s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                   "data": {"k": "aGVsbG8=", "empty": ""}, "type": "Opaque", "immutable": true});
    assert_eq!(round_trip(&s), s);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                    "data": {"a": "1", "blank": ""}, "binaryData": {"b": "AAEC"}});
    assert_eq!(round_trip(&cm), cm);
}

#[test]
fn zero_scalars_and_go_zero_times_are_dropped_like_omitempty() {
    // What Go writes for a ConfigMap with only a name: every non-pointer field, zero or not.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "c", "generateName": "", "generation": 0}, "immutable": false});
    let mut bytes = envelope::encode_value(&cm).expect("encodes");
    let u = envelope::parse(&bytes).expect("parses");
    assert_eq!((u.api_version.as_str(), u.kind.as_str()), ("v1", "ConfigMap"));
    assert_eq!(
        decode_object(&bytes).expect("decodes"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    );
    // creationTimestamp as Go's zero time.Time (seconds -62135596800).
    let meta_desc = message("meta.k8s.io/v1", "ObjectMeta").expect("ObjectMeta");
    let mut meta = Vec::new();
    let mut time = Vec::new();
    wire::put_tag(&mut time, 1, wire::VARINT);
    wire::put_varint(&mut time, (-62_135_596_800i64) as u64);
    wire::put_len(&mut meta, 8, &time);
    wire::put_string(&mut meta, 1, "n");
    assert_eq!(decode_message(meta_desc, &meta, 0).expect("decodes"), json!({"name": "n"}));
    bytes.clear();
}

#[test]
fn special_messages_map_to_their_json_forms() {
    let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": "e", "namespace": "default"},
                    "eventTime": "2026-11-30T10:11:12.123456Z", "reason": "Started",
                    "regarding": {"kind": "Pod", "name": "p"}});
    assert_eq!(round_trip(&ev), ev);
    // RawExtension: an embedded object stays JSON.
    let rev = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                     "data": {"spec": {"template": {"x": [1, "two", null]}}}, "revision": 4});
    assert_eq!(round_trip(&rev), rev);
    // Quantities given as JSON numbers become strings.
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                   "spec": {"hard": {"pods": 10}}});
    assert_eq!(round_trip(&q)["spec"]["hard"]["pods"], json!("10"));
}

#[test]
fn crd_schemas_keep_their_json_names_and_unions() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "additionalProperties": false,
                "properties": {"spec": {"type": "object", "default": {"size": 1},
                    "items": [{"type": "string"}],
                    "x-kubernetes-validations": [{"rule": "self.size > 0"}]},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                    "extra": {"type": "object", "additionalProperties": {"type": "integer"}}}}}}]}});
    assert_eq!(round_trip(&crd), crd);
}

#[test]
fn type_errors_name_the_field() {
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": 1}}});
    let err = envelope::encode_value(&bad).expect_err("labels must be strings");
    assert_eq!(err.to_string(), "metadata.labels.a: expected a string, got a number");
}

#[test]
fn garbage_and_truncated_bodies_are_errors_not_panics() {
    let bytes = envelope::encode_value(&deployment()).expect("encodes");
    for n in 0..bytes.len() {
        let _ = decode_object(&bytes[..n]);
    }
    // Flip every byte in turn; decoding may succeed or fail but never panics.
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0xa5;
        let _ = decode_object(&b);
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in 0..300 {
        let mut body = MAGIC.to_vec();
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            body.push(state as u8);
        }
        let _ = decode_object(&body);
    }
    assert!(decode_object(b"{\"json\":true}").is_err());
}

#[test]
fn deep_nesting_is_refused() {
    // JSONSchemaProps nested through `not` (field 35) far beyond the limit.
    let props = message("apiextensions.k8s.io/v1", "JSONSchemaProps").expect("JSONSchemaProps");
    let not = props.field_by_name("not").expect("not").number() as u32;
    let mut inner = Vec::new();
    for _ in 0..500 {
        let mut outer = Vec::new();
        wire::put_len(&mut outer, not, &inner);
        inner = outer;
    }
    assert!(decode_message(props, &inner, 0).is_err());
}

#[test]
fn watch_frames_are_length_prefixed_watch_events() {
    let obj = envelope::encode_value(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}))
        .expect("encodes");
    let frame = watch_frame("ADDED", &obj);
    let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
    assert_eq!(len, frame.len() - 4);
    let ev =
        decode_message(message("meta.k8s.io/v1", "WatchEvent").expect("WatchEvent"), &frame[4..], 0).expect("decodes");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "n");
    assert_eq!(ev["object"]["kind"], "Namespace");
}
