//! The reviews: who the server takes the caller for (`authentication.k8s.io/v1`
//! SelfSubjectReview, `kubectl auth whoami`) and what a user may do
//! (`authorization.k8s.io/v1` SelfSubjectAccessReview and SelfSubjectRulesReview for
//! `kubectl auth can-i [--list]`, SubjectAccessReview and LocalSubjectAccessReview for
//! asking about someone else). Nothing is stored: the answer is computed and returned.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::Response;
use drydock_api::tenancy::LogicalClusterName;
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{Value, json};

use super::path::ResourcePath;
use super::{Server, json_value, protobuf, request};
use crate::auth::UserInfo;
use crate::auth::rbac::{self, Attributes, ResourceAttributes};
use crate::error::{ApiError, ApiResult};

const AUTHENTICATION: &str = "authentication.k8s.io";
const AUTHORIZATION: &str = "authorization.k8s.io";

/// The review kinds by (group, plural).
const REVIEWS: &[(&str, &str, &str)] = &[
    (AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview"),
    (AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
    (AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
    (AUTHORIZATION, "subjectaccessreviews", "SubjectAccessReview"),
    (AUTHORIZATION, "localsubjectaccessreviews", "LocalSubjectAccessReview"),
];

fn kind_of(p: &ResourcePath) -> Option<&'static str> {
    if p.version != "v1" {
        return None;
    }
    REVIEWS.iter().find(|(g, plural, _)| *g == p.group && *plural == p.resource).map(|(_, _, k)| *k)
}

/// Whether `p` addresses a review.
pub(super) fn addressed(p: &ResourcePath) -> bool {
    kind_of(p).is_some()
}

/// Answers a review: 201 with the review and its status.
pub(super) async fn respond(
    srv: &Arc<Server>,
    cluster: &LogicalClusterName,
    p: &ResourcePath,
    req: Request<Body>,
    accept: &str,
) -> ApiResult<Response> {
    let kind = kind_of(p).ok_or_else(ApiError::not_found_path)?;
    let namespaced = kind == "LocalSubjectAccessReview";
    if req.method() != Method::POST || p.name.is_some() || p.namespace.is_some() != namespaced || cluster.is_wildcard()
    {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource: {} are create-only", p.resource),
        ));
    }
    let user = req.extensions().get::<UserInfo>().cloned().ok_or_else(crate::auth::unauthorized)?;
    let group = if kind == "SelfSubjectReview" { AUTHENTICATION } else { AUTHORIZATION };
    let api_version = format!("{group}/v1");
    let (headers, body) = request::read_body(req).await?;
    let mut review = if kind == "SelfSubjectReview" && body.is_empty() {
        json!({})
    } else {
        request::decode_unstored(&headers, &body, &api_version, kind)?
    };
    let policy = srv.policies.get(&srv.api, cluster.as_str());
    let status = match kind {
        "SelfSubjectReview" => {
            json!({"userInfo": {"username": user.name, "uid": user.uid, "groups": user.groups}})
        }
        "SelfSubjectRulesReview" => {
            let ns = review["spec"]["namespace"].as_str().unwrap_or_default();
            rules_review(&rbac::rules_for(&policy, &user, ns))
        }
        _ => {
            let subject = match kind {
                "SelfSubjectAccessReview" => user,
                _ => subject_of(&review["spec"])?,
            };
            let spec = &review["spec"];
            if let (Some(path_ns), true) = (&p.namespace, namespaced)
                && spec["resourceAttributes"]["namespace"].as_str() != Some(path_ns.as_str())
            {
                return Err(ApiError::bad_request(
                    "spec.resourceAttributes.namespace must match the namespace of the request",
                ));
            }
            let decision = rbac::authorize(&policy, &subject, &attributes_of(spec)?);
            let mut s = json!({"allowed": decision.allowed});
            if !decision.reason.is_empty() {
                s["reason"] = json!(decision.reason);
            }
            s
        }
    };
    review["kind"] = json!(kind);
    review["apiVersion"] = json!(api_version);
    review["metadata"] = json!({"creationTimestamp": drydock_api::time::rfc3339(jiff::Timestamp::now())});
    review["status"] = status;
    if request::errors_as_protobuf(accept) {
        return Ok(protobuf::response(StatusCode::CREATED, protobuf::encode_value(&review)?));
    }
    Ok(json_value(StatusCode::CREATED, &review))
}

/// The user a SubjectAccessReview asks about.
fn subject_of(spec: &Value) -> ApiResult<UserInfo> {
    let name = spec["user"].as_str().unwrap_or_default();
    let groups: Vec<String> =
        spec["groups"].as_array().into_iter().flatten().filter_map(|g| g.as_str().map(str::to_string)).collect();
    if name.is_empty() && groups.is_empty() {
        return Err(ApiError::new(
            422,
            "Invalid",
            "spec.user: Invalid value: \"\": at least one of user or group must be specified",
        ));
    }
    // The groups are the ones asked about, as given.
    Ok(UserInfo { name: name.to_string(), uid: spec["uid"].as_str().unwrap_or_default().to_string(), groups })
}

/// The request an access review describes.
fn attributes_of(spec: &Value) -> ApiResult<Attributes> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    if let Some(r) = spec["resourceAttributes"].as_object() {
        let get = |k: &str| r.get(k).map(text).unwrap_or_default();
        let some = |k: &str| Some(get(k)).filter(|s| !s.is_empty());
        return Ok(Attributes {
            verb: get("verb"),
            resource: Some(ResourceAttributes {
                group: get("group"),
                resource: get("resource"),
                subresource: some("subresource"),
                namespace: some("namespace"),
                name: some("name"),
            }),
            path: String::new(),
        });
    }
    if let Some(n) = spec["nonResourceAttributes"].as_object() {
        let get = |k: &str| n.get(k).map(text).unwrap_or_default();
        return Ok(Attributes { verb: get("verb"), resource: None, path: get("path") });
    }
    Err(ApiError::new(
        422,
        "Invalid",
        "spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
    ))
}

/// A SelfSubjectRulesReview's status from the rules a user holds.
fn rules_review((rules, errors): &(Vec<PolicyRule>, Vec<String>)) -> Value {
    let list = |v: &Option<Vec<String>>| json!(v.clone().unwrap_or_default());
    let resource: Vec<Value> = rules
        .iter()
        .filter(|r| r.non_resource_urls.as_ref().is_none_or(Vec::is_empty))
        .map(|r| {
            let mut o = json!({"verbs": r.verbs, "apiGroups": list(&r.api_groups), "resources": list(&r.resources)});
            if let Some(names) = r.resource_names.as_ref().filter(|n| !n.is_empty()) {
                o["resourceNames"] = json!(names);
            }
            o
        })
        .collect();
    let non_resource: Vec<Value> = rules
        .iter()
        .filter(|r| r.non_resource_urls.as_ref().is_some_and(|u| !u.is_empty()))
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": list(&r.non_resource_urls)}))
        .collect();
    let mut s = json!({"resourceRules": resource, "nonResourceRules": non_resource, "incomplete": !errors.is_empty()});
    if !errors.is_empty() {
        s["evaluationError"] = json!(errors.join(", "));
    }
    s
}
