//! `authentication.k8s.io/v1` SelfSubjectReview: who the server takes the caller for, as
//! `kubectl auth whoami` asks. Nothing is stored: the answer is the request's user.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::path::ResourcePath;
use super::{json_value, protobuf, request};
use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult};

pub(super) const GROUP: &str = "authentication.k8s.io";
pub(super) const RESOURCE: &str = "selfsubjectreviews";

/// Whether `p` addresses the reviews.
pub(super) fn addressed(p: &ResourcePath) -> bool {
    p.group == GROUP && p.resource == RESOURCE && p.version == "v1"
}

/// Answers a review: 201 with the caller's user in `status.userInfo`.
pub(super) fn respond(p: &ResourcePath, req: &Request<Body>, accept: &str) -> ApiResult<Response> {
    if req.method() != Method::POST || p.name.is_some() || p.namespace.is_some() {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource: {RESOURCE} are create-only"),
        ));
    }
    let user = req.extensions().get::<UserInfo>().ok_or_else(crate::auth::unauthorized)?;
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let review = json!({
        "kind": "SelfSubjectReview",
        "apiVersion": format!("{GROUP}/v1"),
        "metadata": {"creationTimestamp": now},
        "status": {"userInfo": {"username": user.name, "uid": user.uid, "groups": user.groups}},
    });
    if request::errors_as_protobuf(accept) {
        return Ok(protobuf::response(StatusCode::CREATED, protobuf::encode_value(&review)?));
    }
    Ok(json_value(StatusCode::CREATED, &review))
}
