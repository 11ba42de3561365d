//! `POST .../serviceaccounts/<name>/token`: TokenRequest, what `kubectl create token` and
//! the kubelet ask for. Nothing is stored; the token is signed by the server's key.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::Response;
use drydock_api::tenancy::LogicalClusterName;
use serde_json::{Value, json};

use super::path::ResourcePath;
use super::{Server, json_value, protobuf, request};
use crate::auth::Objects as _;
use crate::auth::service_accounts::{
    DEFAULT_EXPIRATION_SECS, KubernetesClaims, MIN_EXPIRATION_SECS, ObjectClaim, TokenSpec, now,
};
use crate::error::{ApiError, ApiResult};

const API_VERSION: &str = "authentication.k8s.io/v1";
const KIND: &str = "TokenRequest";
/// The longest expiry a request may ask for (kube-apiserver's bound: 2^32 seconds).
const MAX_EXPIRATION_SECS: i64 = 1 << 32;

/// Whether `p` addresses a ServiceAccount's token subresource.
pub(super) fn addressed(p: &ResourcePath) -> bool {
    p.group.is_empty()
        && p.version == "v1"
        && p.resource == "serviceaccounts"
        && p.subresource.as_deref() == Some("token")
}

/// Issues a token for the ServiceAccount `p` names: 201 with the TokenRequest, its status
/// holding the token and when it expires.
pub(super) async fn respond(
    srv: &Arc<Server>,
    cluster: &LogicalClusterName,
    p: &ResourcePath,
    req: Request<Body>,
    accept: &str,
) -> ApiResult<Response> {
    if req.method() != Method::POST || cluster.is_wildcard() {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource: serviceaccounts/token is create-only",
        ));
    }
    let issuer = srv.authn.service_accounts.as_ref().ok_or_else(ApiError::not_found_path)?;
    let (Some(ns), Some(name)) = (p.namespace.as_deref(), p.name.as_deref()) else {
        return Err(ApiError::not_found_path());
    };
    let (headers, body) = request::read_body(req).await?;
    let mut tr = request::decode_unstored(&headers, &body, API_VERSION, KIND)?;
    let sa_uid = srv.api.uid(cluster, "serviceaccounts", ns, name).ok_or_else(|| not_found("serviceaccounts", name))?;
    let spec = &mut tr["spec"];
    let expiration = expiration(spec, name)?;
    let audiences: Vec<String> = match spec["audiences"].as_array() {
        Some(a) if !a.is_empty() => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => issuer.audiences().to_vec(),
    };
    let mut claims = KubernetesClaims {
        namespace: ns.to_string(),
        serviceaccount: ObjectClaim { name: name.to_string(), uid: sa_uid },
        pod: None,
        secret: None,
        cluster_name: (!cluster.is_root()).then(|| cluster.to_string()),
    };
    bind(srv, cluster, spec, name, &mut claims)?;
    let issued_at = now();
    let (token, expires) = issuer
        .issue(TokenSpec { claims, audiences: audiences.clone(), expiration_secs: expiration }, issued_at)
        .map_err(|e| ApiError::internal(format!("{e:#}")))?;
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(expiration);
    let answer = json!({
        "kind": KIND, "apiVersion": API_VERSION,
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": rfc3339(issued_at)},
        "spec": tr["spec"],
        "status": {"token": token, "expirationTimestamp": rfc3339(expires)},
    });
    if request::errors_as_protobuf(accept) {
        return Ok(protobuf::response(StatusCode::CREATED, protobuf::encode_value(&answer)?));
    }
    Ok(json_value(StatusCode::CREATED, &answer))
}

/// kube-apiserver's 422 for a TokenRequest `name` with an invalid `field`.
fn invalid(name: &str, field: &str, value: &Value, why: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("{KIND}.authentication.k8s.io \"{name}\" is invalid: {field}: Invalid value: {value}: {why}"),
    )
    .with_details(json!({"name": name, "group": "authentication.k8s.io", "kind": KIND,
        "causes": [{"reason": "FieldValueInvalid", "message": format!("Invalid value: {value}: {why}"), "field": field}]}))
}

/// `spec.expirationSeconds`, defaulted and checked.
fn expiration(spec: &Value, name: &str) -> ApiResult<i64> {
    const FIELD: &str = "spec.expirationSeconds";
    let secs = match &spec["expirationSeconds"] {
        Value::Null => DEFAULT_EXPIRATION_SECS,
        v => v.as_i64().ok_or_else(|| invalid(name, FIELD, v, "must be an integer"))?,
    };
    if secs < MIN_EXPIRATION_SECS {
        return Err(invalid(name, FIELD, &json!(secs), "may not specify a duration less than 10 minutes"));
    }
    if secs > MAX_EXPIRATION_SECS {
        return Err(invalid(name, FIELD, &json!(secs), "may not specify a duration larger than 2^32 seconds"));
    }
    Ok(secs)
}

/// Binds the token to the Pod or Secret `spec.boundObjectRef` names, which must exist (with
/// the uid given, if one is); records its uid in the spec.
fn bind(
    srv: &Server,
    cluster: &LogicalClusterName,
    spec: &mut Value,
    name: &str,
    claims: &mut KubernetesClaims,
) -> ApiResult<()> {
    let Some(bound) = spec["boundObjectRef"].as_object() else { return Ok(()) };
    let kind = bound.get("kind").and_then(Value::as_str).unwrap_or_default();
    let bound_name = bound.get("name").and_then(Value::as_str).unwrap_or_default();
    let plural = match kind {
        "Pod" => "pods",
        "Secret" => "secrets",
        other => {
            let why = "supported values: \"Pod\", \"Secret\"";
            return Err(invalid(name, "spec.boundObjectRef.kind", &json!(other), why));
        }
    };
    let uid =
        srv.api.uid(cluster, plural, &claims.namespace, bound_name).ok_or_else(|| not_found(plural, bound_name))?;
    if let Some(want) = bound.get("uid").and_then(Value::as_str).filter(|u| !u.is_empty() && *u != uid) {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!("the UID in the bound object reference ({want}) does not match the UID in record ({uid})"),
        ));
    }
    let claim = Some(ObjectClaim { name: bound_name.to_string(), uid: uid.clone() });
    if plural == "pods" {
        claims.pod = claim;
    } else {
        claims.secret = claim;
    }
    spec["boundObjectRef"]["uid"] = json!(uid);
    Ok(())
}

fn not_found(plural: &str, name: &str) -> ApiError {
    ApiError::new(404, "NotFound", format!("{plural} \"{name}\" not found"))
        .with_details(json!({"name": name, "kind": plural}))
}

fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).map(drydock_api::time::rfc3339).unwrap_or_default()
}
