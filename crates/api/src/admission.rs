//! Admission: the defaulting and validation hooks a kind plugs into the API server, and the
//! field errors they report (shaped like apimachinery's `field.Error`, so the server can turn
//! them into a 422 `Invalid` Status with causes).

use std::fmt;

use serde_json::Value;

/// The write being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// Defaulting and validation for one kind, equivalent to an upstream mutating + validating
/// webhook pair. Both hooks see the whole object as JSON; implementations usually
/// deserialize into their typed struct.
pub trait Admission: Send + Sync + 'static {
    /// Fills in defaults. Runs before validation on every create and update of the main
    /// resource (not on status-only writes). An error here is reported as 422 Invalid.
    fn default(&self, _obj: &mut Value, _op: Operation) -> Result<(), Vec<FieldError>> {
        Ok(())
    }

    /// Like [`default`](Self::default), but also sees the stored object on update. Some
    /// defaults depend on it (Cluster API's replicas defaulting from the autoscaler
    /// annotations keeps the old value when it is within bounds), so servers should call
    /// this one. The provided implementation ignores `old` and calls `default`.
    fn default_with_old(&self, obj: &mut Value, _old: Option<&Value>, op: Operation) -> Result<(), Vec<FieldError>> {
        self.default(obj, op)
    }

    /// Validates `obj`; `old` is the stored object on update. Returns every problem found.
    fn validate(&self, _obj: &Value, _old: Option<&Value>) -> Vec<FieldError> {
        Vec::new()
    }

    /// Defaults, then validates: what the server runs on every write of the main resource.
    /// `Err`: defaulting failed; `Ok`: the validation errors (empty when admitted). Kinds
    /// that work on a typed form override it to decode the objects once for both steps.
    fn admit(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<Vec<FieldError>, Vec<FieldError>> {
        self.default_with_old(obj, old, op)?;
        Ok(self.validate(obj, old))
    }

    /// Like [`admit`](Self::admit), with the versions referenced kinds are served in (an
    /// admission that converts the object to another version resolves its references with
    /// them), adding to `warnings` what the client should hear about an admitted object
    /// (sent as `Warning` headers, as a webhook's `warnings`: accepted, but not what the
    /// user may expect). Servers call this one.
    fn admit_with_refs(
        &self,
        obj: &mut Value,
        old: Option<&Value>,
        op: Operation,
        _refs: &dyn crate::conversion::RefVersions,
        _warnings: &mut Vec<String>,
    ) -> Result<Vec<FieldError>, Vec<FieldError>> {
        self.admit(obj, old, op)
    }
}

/// Kinds of field error, with the `reason` strings Kubernetes puts in Status causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    Invalid,
    Required,
    Forbidden,
    NotSupported,
    Duplicate,
    TooLong,
    TooMany,
    TypeInvalid,
}

impl FieldErrorKind {
    /// The cause `reason` used in `metav1.Status.details.causes`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::Required => "FieldValueRequired",
            Self::Forbidden => "FieldValueForbidden",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::Forbidden => "Forbidden",
            Self::NotSupported => "Unsupported value",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::TypeInvalid => "Invalid value",
        }
    }
}

/// One problem with one field, e.g. `spec.replicas: Invalid value: -1: must be >= 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub kind: FieldErrorKind,
    /// Dotted path with list indices, as Kubernetes prints it: `spec.template.metadata.labels`.
    pub field: String,
    /// The offending value, when there is one worth echoing.
    pub value: Option<Value>,
    pub detail: String,
}

impl FieldError {
    pub fn new(kind: FieldErrorKind, field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind, field: field.into(), value: None, detail: detail.into() }
    }
    pub fn invalid(field: impl Into<String>, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self { value: Some(value.into()), ..Self::new(FieldErrorKind::Invalid, field, detail) }
    }
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Required, field, detail)
    }
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Forbidden, field, detail)
    }
    pub fn not_supported(field: impl Into<String>, value: impl Into<Value>, supported: &[&str]) -> Self {
        let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        Self {
            value: Some(value.into()),
            ..Self::new(FieldErrorKind::NotSupported, field, format!("supported values: {}", quoted.join(", ")))
        }
    }
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self { value: Some(value.into()), ..Self::new(FieldErrorKind::Duplicate, field, "") }
    }
}

impl FieldError {
    /// The message without the field path (what Status causes carry next to `field`):
    /// `Invalid value: "v": detail`.
    pub fn body(&self) -> String {
        let mut out = self.kind.label().to_string();
        if let Some(v) = &self.value {
            match v {
                Value::String(s) => out.push_str(&format!(": \"{s}\"")),
                other => out.push_str(&format!(": {other}")),
            }
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }
}

impl fmt::Display for FieldError {
    /// Formats like apimachinery: `spec.x: Invalid value: "v": detail`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Builds dotted field paths: `FieldPath::new("spec").child("replicas")`, `.index(0)`, `.key("a")`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    pub fn new(root: &str) -> Self {
        Self(root.to_string())
    }
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() { Self(name.to_string()) } else { Self(format!("{}.{name}", self.0)) }
    }
    pub fn index(&self, i: usize) -> Self {
        Self(format!("{}[{i}]", self.0))
    }
    pub fn key(&self, k: &str) -> Self {
        Self(format!("{}[{k}]", self.0))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<FieldPath> for String {
    fn from(p: FieldPath) -> String {
        p.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_apimachinery() {
        let e = FieldError::invalid(FieldPath::new("spec").child("replicas"), -1, "must be greater than or equal to 0");
        assert_eq!(e.to_string(), "spec.replicas: Invalid value: -1: must be greater than or equal to 0");
        let e = FieldError::not_supported("spec.strategy.type", "Foo", &["RollingUpdate", "OnDelete"]);
        assert_eq!(
            e.to_string(),
            "spec.strategy.type: Unsupported value: \"Foo\": supported values: \"RollingUpdate\", \"OnDelete\""
        );
        assert_eq!(FieldPath::new("spec").child("a").index(2).key("x").as_str(), "spec.a[2][x]");
    }
}
