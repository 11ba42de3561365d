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
}

/// Adapter from a [`KindAdmission`] to [`Admission`].
pub(crate) struct Typed<A>(pub A);

/// Deserializes `v`, reporting a type mismatch at the field where it happened.
fn decode<T: DeserializeOwned>(v: &Value) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { String::new() } else { path };
        FieldError::new(FieldErrorKind::TypeInvalid, field, e.into_inner().to_string())
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
}
