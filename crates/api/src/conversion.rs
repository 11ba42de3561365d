//! Conversion of a kind's objects between the versions it serves, the in-process
//! counterpart of a CRD conversion webhook. The API server calls it to serve an object in a
//! version other than the stored one, to store what a client wrote, and from the
//! `ConversionReview` endpoint a real kube-apiserver can be pointed at.

use serde_json::Value;

/// Converts the objects of one kind between its served versions.
pub trait Conversion: Send + Sync {
    /// `obj` (of any served version) as `api_version` (`group/version`) serves it.
    fn convert(&self, obj: Value, api_version: &str, refs: &dyn RefVersions) -> Result<Value, ConversionError>;
}

/// Which `apiVersion` a reference to another kind names, for versions that spell it out
/// (v1beta1 references carry `apiVersion`; v1beta2 ones only `apiGroup`). The server answers
/// from the CRDs it serves: their Cluster API contract labels, else their storage version.
///
/// Admission also reaches the server's state through it, for the checks upstream's
/// webhooks make against other objects (a Cluster's topology against its ClusterClass).
pub trait RefVersions {
    fn api_version(&self, group: &str, kind: &str) -> Option<String>;

    /// The stored object `namespace/name` of `group`'s `kind`, in its storage version;
    /// `None` when absent or when the caller has no store.
    fn stored(&self, _group: &str, _kind: &str, _namespace: &str, _name: &str) -> Option<Value> {
        None
    }

    /// Every stored object of `group`'s `kind` in `namespace` (all namespaces: `None`), in
    /// their storage version; empty when the caller has no store.
    fn stored_list(&self, _group: &str, _kind: &str, _namespace: Option<&str>) -> Vec<Value> {
        Vec::new()
    }

    /// The problems of `value` against an OpenAPI v3 schema as CRDs write it (types,
    /// formats, enums, bounds, required, unknown fields, CEL rules), reported under `path`.
    /// Callers without a schema validator check nothing.
    fn check_schema(
        &self,
        _schema: &Value,
        _value: &Value,
        _path: &crate::admission::FieldPath,
    ) -> Vec<crate::admission::FieldError> {
        Vec::new()
    }
}

/// Knows no kind: references fall back to what the conversion itself knows.
pub struct NoRefVersions;

impl RefVersions for NoRefVersions {
    fn api_version(&self, _group: &str, _kind: &str) -> Option<String> {
        None
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConversionError {
    #[error("{kind} does not serve {api_version}")]
    UnknownVersion { kind: String, api_version: String },
    #[error("{api_version} {kind} does not decode: {message}")]
    Decode { kind: String, api_version: String, message: String },
    #[error("converting {kind} to {api_version}: {message}")]
    Invalid { kind: String, api_version: String, message: String },
}
