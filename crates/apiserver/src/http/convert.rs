//! `POST /convert`: converts drydock's own kinds for an API server that names drydock as
//! their CRDs' conversion webhook (`drydock crds`), answering a `ConversionReview`
//! (apiextensions.k8s.io/v1) as such a webhook does: one response per review, `Failure`
//! with a message when any object cannot be converted.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::Response;
use drydock_api::tenancy::LogicalClusterName;
use serde_json::{Value, json};

use super::request::read_body;
use super::{Server, json_value};
use crate::crd::RefLookup;
use crate::error::{ApiError, ApiResult};

pub async fn respond(srv: &Arc<Server>, cluster: &LogicalClusterName, req: Request<Body>) -> ApiResult<Response> {
    if req.method() != Method::POST {
        return Err(ApiError::new(405, "MethodNotAllowed", "the conversion endpoint only accepts POST"));
    }
    let (_, body) = read_body(req).await?;
    let review: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a ConversionReview: {e}")))?;
    if review["apiVersion"] != "apiextensions.k8s.io/v1" || review["kind"] != "ConversionReview" {
        return Err(ApiError::bad_request("expected an apiextensions.k8s.io/v1 ConversionReview"));
    }
    let request = &review["request"];
    let uid = request["uid"].as_str().unwrap_or_default();
    let Some(desired) = request["desiredAPIVersion"].as_str() else {
        return Err(ApiError::bad_request("request.desiredAPIVersion is required"));
    };
    let objects = request["objects"].as_array().map(Vec::as_slice).unwrap_or_default();
    let response = match convert_all(srv, cluster, objects, desired) {
        Ok(converted) => json!({"uid": uid, "convertedObjects": converted, "result": {"status": "Success"}}),
        Err(message) => json!({"uid": uid, "result": {"status": "Failure", "message": message}}),
    };
    Ok(json_value(
        StatusCode::OK,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}),
    ))
}

fn convert_all(
    srv: &Server,
    cluster: &LogicalClusterName,
    objects: &[Value],
    desired: &str,
) -> Result<Vec<Value>, String> {
    let refs = RefLookup::new(&srv.api.registries, cluster.as_str());
    let desired_group = desired.rsplit_once('/').map_or("", |(g, _)| g);
    objects
        .iter()
        .map(|obj| {
            let kind = obj["kind"].as_str().unwrap_or_default();
            let group = obj["apiVersion"].as_str().and_then(|v| v.rsplit_once('/')).map_or("", |(g, _)| g);
            if group != desired_group {
                return Err(format!("{kind} of group {group:?} cannot be converted to {desired}"));
            }
            let conversion = srv
                .api
                .registries
                .native_conversion(group, kind)
                .ok_or_else(|| format!("drydock does not convert {kind}.{group}"))?;
            conversion.convert(obj.clone(), desired, &refs).map_err(|e| e.to_string())
        })
        .collect()
}
