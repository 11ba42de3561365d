//! A custom resource's OpenAPI schema applied through HTTP as kube-apiserver applies it:
//! defaults, pruning, `fieldValidation`, keyword errors with their causes, list types,
//! int-or-string, embedded resources, preserved fields, and CEL rules (messages, message
//! expressions, reasons, transition rules); kube-rs sees the same errors.

use crate::common;

use axum::body::Body;
use drydock_api::ResourceDef;
use http::Request;
use http_body_util::BodyExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tower::ServiceExt;

const GADGETS: &str = "/apis/schema.drydock.dev/v1/namespaces/default/gadgets";

fn gadget() -> ResourceDef {
    ResourceDef::new("schema.drydock.dev", "v1", "Gadget", "gadgets").with_status().schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "x-kubernetes-validations": [
                    {"rule": "self.replicas <= self.maxReplicas",
                     "messageExpression": "'replicas (' + string(self.replicas) + ') must not exceed maxReplicas (' + string(self.maxReplicas) + ')'"},
                    {"rule": "self.size == oldSelf.size", "message": "size is immutable",
                     "reason": "FieldValueForbidden", "fieldPath": ".size"}
                ],
                "properties": {
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "replicas": {"type": "integer", "default": 1, "minimum": 0, "maximum": 10},
                    "maxReplicas": {"type": "integer", "default": 5},
                    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                    "surge": {"x-kubernetes-int-or-string": true},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "required": ["name"], "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "default": 80}
                        }}
                    },
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}}
                    },
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "label": {"type": "string", "x-kubernetes-validations": [
                        {"rule": "!self.startsWith('forbidden-')", "message": "label must not start with forbidden-"}
                    ]}
                }
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }
    }))
}

struct Reply {
    code: u16,
    body: Value,
    warnings: Vec<String>,
}

async fn send(router: &axum::Router, method: &str, path: &str, body: &Value) -> Reply {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", if method == "PATCH" { "application/merge-patch+json" } else { "application/json" })
        .header("accept", "application/json")
        .body(Body::from(serde_json::to_vec(body).expect("json")))
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let code = resp.status().as_u16();
    let warnings =
        resp.headers().get_all("warning").iter().map(|v| v.to_str().unwrap_or_default().to_string()).collect();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    Reply { code, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), warnings }
}

fn object(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "schema.drydock.dev/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
}

/// `(reason, field, message)` of each cause of a Status.
fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (s("reason"), s("field"), s("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn defaults_pruning_and_preserved_fields() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let router = s.server.router();
    let body = object(
        "a",
        json!({"size": "small", "surge": "25%", "ports": [{"name": "http"}], "unknownField": 1,
               "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}, "spec": {"x": 1, "y": 2}},
               "extra": {"anything": {"goes": true}}}),
    );
    let r = send(&router, "POST", &format!("{GADGETS}?fieldValidation=Ignore"), &body).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let spec = &r.body["spec"];
    assert_eq!(spec["replicas"], 1, "default applied");
    assert_eq!(spec["maxReplicas"], 5);
    assert_eq!(spec["ports"][0]["port"], 80, "defaults apply inside list items");
    assert_eq!(spec["surge"], "25%");
    assert!(spec.get("unknownField").is_none(), "unknown fields are pruned");
    assert_eq!(
        spec["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}})
    );
    assert_eq!(spec["extra"]["anything"]["goes"], true, "preserved fields are kept");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // What was stored is what was answered.
    let got = send(&router, "GET", &format!("{GADGETS}/a"), &Value::Null).await;
    assert_eq!(got.body["spec"], r.body["spec"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn field_validation_strict_and_warn() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let router = s.server.router();
    let body = object("b", json!({"size": "small", "foo": 1}));
    let r = send(&router, "POST", &format!("{GADGETS}?fieldValidation=Strict"), &body).await;
    assert_eq!(r.code, 400, "{}", r.body);
    assert_eq!(r.body["reason"], "BadRequest");
    assert_eq!(r.body["message"], "strict decoding error: unknown field \"spec.foo\"");
    let r = send(&router, "POST", &format!("{GADGETS}?fieldValidation=Warn"), &body).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.warnings, vec![r#"299 - "unknown field \"spec.foo\"""#]);
    assert!(r.body["spec"].get("foo").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn keyword_errors_are_422_with_causes() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let router = s.server.router();
    let body = object(
        "c",
        json!({"size": "medium", "replicas": 15, "maxReplicas": 20, "name": "Not-Valid-Name", "surge": true,
               "ports": [{"name": "a"}, {"name": "a"}, {"port": 1}]}),
    );
    let r = send(&router, "POST", GADGETS, &body).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(r.body["reason"], "Invalid");
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Gadget.schema.drydock.dev \"c\" is invalid: ["), "{message}");
    let got = causes(&r.body);
    for want in [
        (
            "FieldValueNotSupported",
            "spec.size",
            "Unsupported value: \"medium\": supported values: \"small\", \"large\"",
        ),
        (
            "FieldValueInvalid",
            "spec.replicas",
            "Invalid value: 15: spec.replicas in body should be less than or equal to 10",
        ),
        (
            "FieldValueInvalid",
            "spec.name",
            "Invalid value: \"Not-Valid-Name\": spec.name in body should match '^[a-z]+$'",
        ),
        ("FieldValueTooLong", "spec.name", "Too long: may not be more than 8 bytes"),
        (
            "FieldValueTypeInvalid",
            "spec.surge",
            "Invalid value: \"boolean\": spec.surge in body must be of type integer or string: true",
        ),
        ("FieldValueDuplicate", "spec.ports[1]", "Duplicate value: {\"name\":\"a\"}"),
        ("FieldValueRequired", "spec.ports[2].name", "Required value"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(got.contains(&want), "missing {want:?} in {got:#?}");
    }
    // Nothing was stored.
    let got = send(&router, "GET", &format!("{GADGETS}/c"), &Value::Null).await;
    assert_eq!(got.code, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn required_fields_are_checked_after_defaulting() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let router = s.server.router();
    let r = send(&router, "POST", GADGETS, &object("d", json!({"replicas": 2}))).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(r.body["message"], "Gadget.schema.drydock.dev \"d\" is invalid: spec.size: Required value");
    assert_eq!(causes(&r.body), vec![("FieldValueRequired".into(), "spec.size".into(), "Required value".into())]);
}

#[tokio::test(flavor = "multi_thread")]
async fn cel_rules_messages_and_transitions() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let router = s.server.router();
    // messageExpression names the values.
    let r =
        send(&router, "POST", GADGETS, &object("e", json!({"size": "small", "replicas": 7, "maxReplicas": 3}))).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        causes(&r.body),
        vec![(
            "FieldValueInvalid".into(),
            "spec".into(),
            "Invalid value: \"object\": replicas (7) must not exceed maxReplicas (3)".into()
        )]
    );
    // Transition rules do not run on create; they do on update, with their reason and fieldPath.
    let r = send(&router, "POST", GADGETS, &object("e", json!({"size": "small", "label": "forbidden-x"}))).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Gadget.schema.drydock.dev \"e\" is invalid: spec.label: Invalid value: \"string\": label must not start with forbidden-"
    );
    let r = send(&router, "POST", GADGETS, &object("e", json!({"size": "small"}))).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = send(&router, "PATCH", &format!("{GADGETS}/e"), &json!({"spec": {"size": "large"}})).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        causes(&r.body),
        vec![("FieldValueForbidden".into(), "spec.size".into(), "Forbidden: size is immutable".into())]
    );
    let r = send(&router, "PATCH", &format!("{GADGETS}/e"), &json!({"spec": {"replicas": 4}})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 4);
}

/// kube-rs asks for strict field validation on a patch and gets kube-apiserver's error;
/// a kube-rs create gets the 422 with its causes.
#[tokio::test(flavor = "multi_thread")]
async fn kube_client_sees_strict_decoding_and_invalid_errors() {
    let s = common::start_with_kinds(vec![gadget()]).await;
    let client = s.client().await;
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("schema.drydock.dev", "v1", "Gadget"), "gadgets");
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let obj: DynamicObject = serde_json::from_value(object("k", json!({"size": "small"}))).expect("object");
    let created = api.create(&PostParams::default(), &obj).await.expect("create");
    assert_eq!(created.data["spec"]["replicas"], 1);
    let strict = PatchParams::default().validation_strict();
    let err = api.patch("k", &strict, &Patch::Merge(json!({"spec": {"foo": 1}}))).await.expect_err("strict");
    let kube::Error::Api(status) = err else { panic!("not an API error: {err}") };
    assert_eq!(status.code, 400);
    assert_eq!(status.message, "strict decoding error: unknown field \"spec.foo\"");
    let bad: DynamicObject = serde_json::from_value(object("k2", json!({"size": "tiny"}))).expect("object");
    let err = api.create(&PostParams::default(), &bad).await.expect_err("invalid");
    let kube::Error::Api(status) = err else { panic!("not an API error: {err}") };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        "Gadget.schema.drydock.dev \"k2\" is invalid: spec.size: Unsupported value: \"tiny\": supported values: \"small\", \"large\""
    );
}
