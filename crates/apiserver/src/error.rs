//! API errors, rendered as `metav1.Status` with the reason and code Kubernetes uses.

use drydock_api::{FieldError, ResourceDef};
use serde_json::{Value, json};

/// A failed request: HTTP code, Status reason, message and optional details.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
    /// `metadata.continue` of the Status: where an expired paged list may go on from.
    pub list_continue: Option<String>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None, list_continue: None }
    }
    #[must_use]
    pub fn with_details(mut self, d: Value) -> Self {
        self.details = Some(d);
        self
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", msg)
    }
    pub fn not_found_path() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
    }
    pub fn not_found(def: &ResourceDef, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", def.qualified_plural()))
            .with_details(details(def, name))
    }
    pub fn already_exists(def: &ResourceDef, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", def.qualified_plural()))
            .with_details(details(def, name))
    }
    pub fn conflict(def: &ResourceDef, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                def.qualified_plural()
            ),
        )
        .with_details(details(def, name))
    }
    pub fn conflict_msg(def: &ResourceDef, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {} \"{name}\": {why}", def.qualified_plural()),
        )
        .with_details(details(def, name))
    }
    pub fn invalid(def: &ResourceDef, name: &str, errors: &[FieldError]) -> Self {
        Self::invalid_as(&def.qualified_kind(), details(def, name), name, errors)
    }
    /// 422 on the options of a list or watch (`ListOptions.meta.k8s.io "" is invalid: ...`).
    pub fn invalid_list_options(errors: &[FieldError]) -> Self {
        let d = json!({"kind": "ListOptions", "group": "meta.k8s.io"});
        Self::invalid_as("ListOptions.meta.k8s.io", d, "", errors)
    }
    fn invalid_as(qualified_kind: &str, mut d: Value, name: &str, errors: &[FieldError]) -> Self {
        let msgs: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let summary = if msgs.len() == 1 { msgs[0].clone() } else { format!("[{}]", msgs.join(", ")) };
        let causes: Vec<Value> =
            errors.iter().map(|e| json!({"reason": e.kind.reason(), "message": e.body(), "field": e.field})).collect();
        d["causes"] = Value::Array(causes);
        Self::new(422, "Invalid", format!("{qualified_kind} \"{name}\" is invalid: {summary}")).with_details(d)
    }
    /// 504 for a read of a revision the store did not reach in time; clients relist.
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        Self::new(504, "Timeout", format!("Timeout: Too large resource version: {requested}, current: {current}"))
            .with_details(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            }))
    }
    /// 403 about one object: `<plural>.<group> "<name>" is forbidden: <why>`.
    pub fn forbidden(def: &ResourceDef, name: &str, why: &str) -> Self {
        Self::new(403, "Forbidden", format!("{} \"{name}\" is forbidden: {why}", def.qualified_plural()))
            .with_details(details(def, name))
    }
    pub fn method_not_allowed(msg: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", msg)
    }
    pub fn not_acceptable(msg: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", msg)
    }
    pub fn gone(msg: impl Into<String>) -> Self {
        Self::new(410, "Expired", msg)
    }
    pub fn too_large(msg: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", msg)
    }
    pub fn unsupported_media(msg: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", msg)
    }
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(500, "InternalError", msg)
    }
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", msg)
    }

    /// The `metav1.Status` body.
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        if let Some(c) = &self.list_continue {
            s["metadata"]["continue"] = Value::String(c.clone());
        }
        s
    }
}

fn details(def: &ResourceDef, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": def.plural});
    if !def.group.is_empty() {
        d["group"] = json!(def.group);
    }
    d
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}
