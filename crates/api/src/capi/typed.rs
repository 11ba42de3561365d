//! Typed admission: kinds implement [`KindAdmission`] on their Rust struct and [`Typed`]
//! adapts that to the JSON-level [`Admission`] hooks the API server calls.

use serde::Serialize;
use serde::de::DeserializeOwned;
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

    /// Warnings about an admitted object; `old` is the stored object on update.
    fn warnings(&self, _obj: &Self::Object, _old: Option<&Self::Object>) -> Vec<String> {
        Vec::new()
    }
}

/// Adapter from a [`KindAdmission`] to [`Admission`].
pub(crate) struct Typed<A>(pub A);

/// Deserializes `v`, reporting a type mismatch at the field where it happened and a missing
/// required field as `Required` at that field's path.
fn decode<T: DeserializeOwned>(v: &Value) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
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
    })
}

impl<A: KindAdmission> Typed<A> {
    fn run_default(&self, obj: &mut Value, old: Option<&Value>) -> Result<(), Vec<FieldError>> {
        let mut typed: A::Object = decode(obj).map_err(|e| vec![e])?;
        // A stored object that no longer decodes is treated as absent rather than wedging updates.
        let old: Option<A::Object> = old.and_then(|o| decode(o).ok());
        self.0.default(&mut typed, old.as_ref())?;
        *obj = serde_json::to_value(&typed)
            .map_err(|e| vec![FieldError::new(FieldErrorKind::Invalid, "", e.to_string())])?;
        Ok(())
    }
}

impl<A: KindAdmission> Admission for Typed<A> {
    fn default(&self, obj: &mut Value, _op: Operation) -> Result<(), Vec<FieldError>> {
        self.run_default(obj, None)
    }

    fn default_with_old(&self, obj: &mut Value, old: Option<&Value>, _op: Operation) -> Result<(), Vec<FieldError>> {
        self.run_default(obj, old)
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let typed: A::Object = match decode(obj) {
            Ok(t) => t,
            Err(e) => return vec![e],
        };
        let old: Option<A::Object> = old.and_then(|o| decode(o).ok());
        self.0.validate(&typed, old.as_ref())
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
        _refs: &dyn crate::conversion::RefVersions,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<FieldError>, Vec<FieldError>> {
        let mut typed: A::Object = decode(obj).map_err(|e| vec![e])?;
        let old: Option<A::Object> = old.and_then(|o| decode(o).ok());
        self.0.default(&mut typed, old.as_ref())?;
        let errors = self.0.validate(&typed, old.as_ref());
        warnings.extend(self.0.warnings(&typed, old.as_ref()));
        *obj = serde_json::to_value(&typed)
            .map_err(|e| vec![FieldError::new(FieldErrorKind::Invalid, "", e.to_string())])?;
        Ok(errors)
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
