//! Admission of a kind served in several versions runs in one of them, as a webhook that
//! names the version it speaks: an object written in another version is converted to it,
//! admitted (defaulted and validated), and converted back.

use std::sync::Arc;

use serde_json::Value;

use crate::admission::{Admission, FieldError, FieldErrorKind, Operation};
use crate::conversion::{Conversion, NoRefVersions};

pub struct AdmitAt {
    /// The `apiVersion` the inner admission decodes.
    pub api_version: String,
    pub inner: Arc<dyn Admission>,
    pub conversion: Arc<dyn Conversion>,
}

impl AdmitAt {
    fn to(&self, obj: &Value, api_version: &str) -> Result<Value, Vec<FieldError>> {
        // References keep their group, kind and name whichever version they pass through;
        // the version a round trip names is the one the object had.
        self.conversion
            .convert(obj.clone(), api_version, &NoRefVersions)
            .map_err(|e| vec![FieldError::new(FieldErrorKind::Invalid, "", e.to_string())])
    }

    fn requested_version(obj: &Value) -> Option<String> {
        obj.get("apiVersion").and_then(Value::as_str).map(str::to_string)
    }
}

impl Admission for AdmitAt {
    fn admit(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<Vec<FieldError>, Vec<FieldError>> {
        let requested = Self::requested_version(obj);
        if requested.as_deref().is_none_or(|v| v == self.api_version) {
            let old = old.map(|o| self.to(o, &self.api_version)).transpose()?;
            return self.inner.admit(obj, old.as_ref(), op);
        }
        let mut converted = self.to(obj, &self.api_version)?;
        let old = old.map(|o| self.to(o, &self.api_version)).transpose()?;
        let errors = self.inner.admit(&mut converted, old.as_ref(), op)?;
        if let Some(v) = requested {
            *obj = self.to(&converted, &v)?;
        }
        Ok(errors)
    }

    fn default_with_old(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<(), Vec<FieldError>> {
        let requested = Self::requested_version(obj);
        let mut converted = self.to(obj, &self.api_version)?;
        let old = old.map(|o| self.to(o, &self.api_version)).transpose()?;
        self.inner.default_with_old(&mut converted, old.as_ref(), op)?;
        *obj = match requested {
            Some(v) => self.to(&converted, &v)?,
            None => converted,
        };
        Ok(())
    }

    fn warnings(&self, obj: &Value, old: Option<&Value>) -> Vec<String> {
        let Ok(converted) = self.to(obj, &self.api_version) else { return Vec::new() };
        let old = old.and_then(|o| self.to(o, &self.api_version).ok());
        self.inner.warnings(&converted, old.as_ref())
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let converted = match self.to(obj, &self.api_version) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let old = match old.map(|o| self.to(o, &self.api_version)).transpose() {
            Ok(o) => o,
            Err(e) => return e,
        };
        self.inner.validate(&converted, old.as_ref())
    }
}
