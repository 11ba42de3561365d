//! Typed admission: kinds implement [`KindAdmission`] on their Rust struct and [`Typed`]
//! adapts that to the JSON-level [`Admission`] hooks the API server calls.
//!
//! Admission judges what the user declares: like upstream's webhooks, which are registered
//! for the main resources and not their `/status`, it never reads the status. The objects
//! are decoded without it (a busy object's status is most of its bytes), and the status of
//! the object being admitted passes through untouched.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde::de::value::MapDeserializer;
use serde_json::Value;

use crate::admission::{Admission, FieldError, FieldErrorKind, Operation};

/// Defaulting and validation of one kind on its typed struct.
pub(crate) trait KindAdmission: Send + Sync + 'static {
    type Object: DeserializeOwned + Serialize;

    /// Fills defaults; `old` is the stored object on update.
    fn default(&self, _obj: &mut Self::Object, _old: Option<&Self::Object>) -> Result<(), Vec<FieldError>> {
        Ok(())
    }

    /// Returns every problem; `old` is the stored object on update.
    fn validate(&self, _obj: &Self::Object, _old: Option<&Self::Object>) -> Vec<FieldError> {
        Vec::new()
    }

    /// Defaults and checks that read other objects through `refs` (a Cluster's topology
    /// against its ClusterClass), after [`default`](Self::default) and before
    /// [`validate`](Self::validate). Returns every problem found.
    fn admit_against(
        &self,
        _obj: &mut Self::Object,
        _old: Option<&Self::Object>,
        _refs: &dyn crate::conversion::RefVersions,
    ) -> Vec<FieldError> {
        Vec::new()
    }

    /// Warnings about an admitted object; `old` is the stored object on update.
    fn warnings(&self, _obj: &Self::Object, _old: Option<&Self::Object>) -> Vec<String> {
        Vec::new()
    }
}

/// Adapter from a [`KindAdmission`] to [`Admission`].
pub(crate) struct Typed<A>(pub A);

/// Deserializes `v`, reporting a type mismatch at the field where it happened and a missing
/// required field as `Required` at that field's path.
///
/// Valid objects, nearly all of them, are decoded without tracking the path, which only
/// an error needs.
fn decode<T: DeserializeOwned>(v: &Value) -> Result<T, FieldError> {
    T::deserialize(v).or_else(|_| serde_path_to_error::deserialize(v).map_err(field_error))
}

fn field_error(e: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let path = e.path().to_string();
    let parent = if path == "." { String::new() } else { path };
    let message = e.into_inner().to_string();
    let missing = message.strip_prefix("missing field `").and_then(|rest| rest.split_once('`')).map(|(f, _)| f);
    match missing {
        Some(field) => {
            let field_path = if parent.is_empty() { field.to_string() } else { format!("{parent}.{field}") };
            FieldError::required(field_path, "must be set")
        }
        None => FieldError::new(FieldErrorKind::TypeInvalid, parent, message),
    }
}

/// Decodes `v` without its status.
fn decode_declared<T: DeserializeOwned>(v: &Value) -> Result<T, FieldError> {
    let Some(map) = v.as_object().filter(|m| m.contains_key("status")) else {
        return decode(v);
    };
    let members = map.iter().filter(|(k, _)| *k != "status").map(|(k, v)| (k.as_str(), v));
    T::deserialize(MapDeserializer::<_, serde_json::Error>::new(members.clone())).or_else(|_| {
        serde_path_to_error::deserialize(MapDeserializer::<_, serde_json::Error>::new(members)).map_err(field_error)
    })
}

/// The stored object, decoded for comparison; one that no longer decodes is treated as
/// absent rather than wedging updates.
fn decode_old<T: DeserializeOwned>(old: Option<&Value>) -> Option<T> {
    old.and_then(|o| decode_declared(o).ok())
}

impl<A: KindAdmission> Typed<A> {
    /// Runs `admit` on the typed object without its status, then writes it back with the
    /// status it had.
    fn on_declared<R>(
        &self,
        obj: &mut Value,
        admit: impl FnOnce(&mut A::Object) -> Result<R, Vec<FieldError>>,
    ) -> Result<R, Vec<FieldError>> {
        let status = obj.as_object_mut().and_then(|m| m.remove("status"));
        let mut typed: A::Object = match decode(obj) {
            Ok(t) => t,
            Err(e) => {
                restore_status(obj, status);
                return Err(vec![e]);
            }
        };
        let out = admit(&mut typed);
        match serde_json::to_value(&typed) {
            Ok(v) => *obj = v,
            Err(e) => return Err(vec![FieldError::new(FieldErrorKind::Invalid, "", e.to_string())]),
        }
        restore_status(obj, status);
        out
    }
}

fn restore_status(obj: &mut Value, status: Option<Value>) {
    if let (Some(s), Some(m)) = (status, obj.as_object_mut()) {
        m.insert("status".into(), s);
    }
}

impl<A: KindAdmission> Admission for Typed<A> {
    fn default(&self, obj: &mut Value, op: Operation) -> Result<(), Vec<FieldError>> {
        self.default_with_old(obj, None, op)
    }

    fn default_with_old(&self, obj: &mut Value, old: Option<&Value>, _op: Operation) -> Result<(), Vec<FieldError>> {
        let old: Option<A::Object> = decode_old(old);
        self.on_declared(obj, |typed| self.0.default(typed, old.as_ref()))
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let typed: A::Object = match decode_declared(obj) {
            Ok(t) => t,
            Err(e) => return vec![e],
        };
        self.0.validate(&typed, decode_old(old).as_ref())
    }

    fn admit(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<Vec<FieldError>, Vec<FieldError>> {
        self.admit_with_refs(obj, old, op, &crate::conversion::NoRefVersions, &mut Vec::new())
    }

    /// Decodes the objects once for defaulting, validation and warnings.
    fn admit_with_refs(
        &self,
        obj: &mut Value,
        old: Option<&Value>,
        _op: Operation,
        refs: &dyn crate::conversion::RefVersions,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<FieldError>, Vec<FieldError>> {
        let old: Option<A::Object> = decode_old(old);
        self.on_declared(obj, |typed| {
            self.0.default(typed, old.as_ref())?;
            let mut errs = self.0.admit_against(typed, old.as_ref(), refs);
            warnings.extend(self.0.warnings(typed, old.as_ref()));
            errs.extend(self.0.validate(typed, old.as_ref()));
            Ok(errs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::core::Machine;

    #[test]
    fn decode_errors_point_at_the_field() {
        let missing = serde_json::json!({ "metadata": {}, "spec": { "bootstrap": {}, "infrastructureRef": {} } });
        let e = decode::<Machine>(&missing).unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (FieldErrorKind::Required, "spec.clusterName"));
        let wrong = serde_json::json!({ "metadata": {}, "spec": { "clusterName": "c", "bootstrap": {}, "infrastructureRef": { "name": 1 } } });
        let e = decode::<Machine>(&wrong).unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (FieldErrorKind::TypeInvalid, "spec.infrastructureRef.name"));
        let no_spec = serde_json::json!({ "metadata": {} });
        assert_eq!(decode::<Machine>(&no_spec).unwrap_err().field, "spec");
    }
}
