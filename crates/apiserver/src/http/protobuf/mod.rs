//! Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`) for the kinds that have
//! a protobuf message: request bodies are decoded to the JSON the rest of the server works on,
//! and JSON answers are re-encoded when the client prefers protobuf. Conversion is generic,
//! by message descriptor (`codec`), with no per-kind code; kinds without a message (custom
//! resources) stay JSON. Nothing here runs for a JSON request.

mod codec;
mod envelope;
mod registry;
mod special;
mod wire;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use drydock_api::ResourceDef;
use serde_json::Value;

pub use codec::{CodecError, decode_message, encode_message};
pub use envelope::{MAGIC, Unknown, parse as parse_envelope, watch_frame, write as write_envelope};
pub use registry::message;

/// Encodes a JSON object (apiVersion and kind included) in its protobuf envelope.
pub fn encode_object(v: &Value) -> Result<Vec<u8>, CodecError> {
    envelope::encode_value(v)
}

/// Decodes an enveloped object into JSON, apiVersion and kind included.
pub fn decode_object(body: &[u8]) -> Result<Value, CodecError> {
    envelope::decode_any(body, 0)
}

use crate::error::{ApiError, ApiResult};

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// Whether Kubernetes defines a message for (apiVersion, kind).
pub fn has_message(api_version: &str, kind: &str) -> bool {
    registry::message(api_version, kind).is_some()
}

/// Whether objects of `def` have a protobuf encoding.
pub fn supports(def: &ResourceDef) -> bool {
    has_message(&def.api_version(), &def.kind)
}

/// Decodes a protobuf write body addressed to `def`. The envelope's type decides the message
/// (an empty one means `def`'s); the write's usual apiVersion/kind checks then compare it
/// with the URL.
pub(super) fn decode_request(body: &[u8], def: &ResourceDef) -> ApiResult<Value> {
    if !supports(def) {
        return Err(ApiError::unsupported_media(format!(
            "the body of the request was in an unknown format ({MEDIA_TYPE}) - accepted media types include: application/json, application/yaml"
        )));
    }
    let bad = |e: CodecError| ApiError::bad_request(format!("unable to decode the protobuf request body: {e}"));
    let mut u = envelope::parse(body).map_err(bad)?;
    if u.api_version.is_empty() && u.kind.is_empty() {
        u.api_version = def.api_version();
        u.kind.clone_from(&def.kind);
    }
    envelope::decode_unknown(&u, 0).map_err(bad)
}

/// Decodes a protobuf body of a kind that is not stored (a review, a TokenRequest): the
/// envelope's type, else `api_version`/`kind`.
pub(super) fn decode_as(body: &[u8], api_version: &str, kind: &str) -> ApiResult<Value> {
    let bad = |e: CodecError| ApiError::bad_request(format!("unable to decode the protobuf request body: {e}"));
    let mut u = envelope::parse(body).map_err(bad)?;
    if u.api_version.is_empty() && u.kind.is_empty() {
        u.api_version = api_version.to_string();
        u.kind = kind.to_string();
    }
    envelope::decode_unknown(&u, 0).map_err(bad)
}

/// Re-encodes a JSON answer (object, list or Status) as protobuf, by its apiVersion and kind.
pub(super) fn encode_json(json: &[u8]) -> ApiResult<Bytes> {
    let v: Value = serde_json::from_slice(json).map_err(|e| ApiError::internal(format!("stored object: {e}")))?;
    encode_value(&v)
}

pub(super) fn encode_value(v: &Value) -> ApiResult<Bytes> {
    envelope::encode_value(v)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("encoding the answer as protobuf: {e}")))
}

pub(super) fn response(code: StatusCode, body: Bytes) -> Response {
    super::json_response(code, body, MEDIA_TYPE)
}

/// An error as a protobuf `Status`, so that client-go reads its reason and code.
pub(super) fn error_response(e: &ApiError) -> Response {
    match encode_value(&e.status()) {
        Ok(body) => response(StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body),
        Err(_) => super::error_response(e),
    }
}

#[cfg(test)]
mod tests;
