//! Object references in specs: namespace defaulting, same-namespace checks and the identity
//! (group, kind, name, namespace) that must not change once a reference is set.

use k8s_openapi::api::core::v1::ObjectReference;

use super::owner::api_group;
use crate::admission::{FieldError, FieldPath};

/// Sets the reference's namespace to `namespace` when it is empty.
pub fn default_namespace(r: Option<&mut ObjectReference>, namespace: Option<&str>) {
    if let (Some(r), Some(ns)) = (r, namespace)
        && r.namespace.as_deref().is_none_or(str::is_empty)
    {
        r.namespace = Some(ns.to_string());
    }
}

/// References may only point into the object's own namespace.
pub fn validate_namespace(
    r: Option<&ObjectReference>,
    namespace: Option<&str>,
    path: &FieldPath,
) -> Option<FieldError> {
    let (r, ns) = (r?, namespace?);
    match r.namespace.as_deref() {
        Some(rns) if !rns.is_empty() && rns != ns => {
            Some(FieldError::invalid(path.child("namespace"), rns, "must match metadata.namespace"))
        }
        _ => None,
    }
}

/// apiVersion, kind and name must be set.
pub fn validate_complete(r: &ObjectReference, path: &FieldPath) -> Vec<FieldError> {
    let field = |o: &Option<String>| o.as_deref().unwrap_or_default().to_string();
    let fields = [("apiVersion", field(&r.api_version)), ("kind", field(&r.kind)), ("name", field(&r.name))];
    validate_fields_set(fields.iter().map(|(f, v)| (*f, v.as_str())), path)
}

/// Every named field of a reference at `path` must be non-empty.
pub fn validate_fields_set<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    path: &FieldPath,
) -> Vec<FieldError> {
    fields
        .into_iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(field, _)| FieldError::invalid(path.child(field), "", "cannot be empty"))
        .collect()
}

/// What a reference points at, ignoring the API version (which providers may bump).
fn identity(r: &ObjectReference) -> (&str, &str, &str, &str) {
    (
        api_group(r.api_version.as_deref().unwrap_or_default()),
        r.kind.as_deref().unwrap_or_default(),
        r.name.as_deref().unwrap_or_default(),
        r.namespace.as_deref().unwrap_or_default(),
    )
}

/// Forbids pointing an existing reference at another object. Only the version part of
/// `apiVersion` may change (contract upgrades move references to newer API versions).
pub fn validate_same_target(new: &ObjectReference, old: &ObjectReference, path: &FieldPath) -> Option<FieldError> {
    (identity(new) != identity(old)).then(|| {
        FieldError::forbidden(path.as_str(), "cannot point to another object; only the API version may change")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(api_version: &str, name: &str, ns: Option<&str>) -> ObjectReference {
        ObjectReference {
            api_version: Some(api_version.into()),
            kind: Some("InMemoryMachine".into()),
            name: Some(name.into()),
            namespace: ns.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn namespace_defaulting_and_checks() {
        let mut a = r("infrastructure.cluster.x-k8s.io/v1alpha1", "m", None);
        default_namespace(Some(&mut a), Some("ns1"));
        assert_eq!(a.namespace.as_deref(), Some("ns1"));
        let p = FieldPath::new("spec").child("infrastructureRef");
        assert!(validate_namespace(Some(&a), Some("ns1"), &p).is_none());
        let e = validate_namespace(Some(&a), Some("ns2"), &p).unwrap();
        assert_eq!(e.field, "spec.infrastructureRef.namespace");
        assert_eq!(validate_complete(&ObjectReference::default(), &p).len(), 3);
    }

    #[test]
    fn only_the_version_may_change() {
        let p = FieldPath::new("spec").child("infrastructureRef");
        let old = r("infrastructure.cluster.x-k8s.io/v1alpha1", "m", Some("ns"));
        assert!(
            validate_same_target(&r("infrastructure.cluster.x-k8s.io/v1beta1", "m", Some("ns")), &old, &p).is_none()
        );
        assert!(
            validate_same_target(&r("infrastructure.cluster.x-k8s.io/v1alpha1", "n", Some("ns")), &old, &p).is_some()
        );
        assert!(validate_same_target(&r("other.io/v1alpha1", "m", Some("ns")), &old, &p).is_some());
    }
}
