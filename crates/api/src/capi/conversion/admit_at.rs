//! Admission of a kind served in several versions runs in one of them, as a webhook that
//! names the version it speaks: an object written in another version is converted to it,
//! admitted (defaulted and validated), and converted back.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::admission::{Admission, FieldError, FieldErrorKind, Operation};
use crate::conversion::{Conversion, NoRefVersions, RefVersions};

pub struct AdmitAt {
    /// The `apiVersion` the inner admission decodes.
    pub api_version: String,
    pub inner: Arc<dyn Admission>,
    pub conversion: Arc<dyn Conversion>,
    /// Per served `apiVersion`, where it holds Go durations that must parse to be converted
    /// ([`HubSpoke::spoke_durations`](super::HubSpoke::spoke_durations)); checked first,
    /// whatever version the admission speaks, so every kind refuses them alike.
    pub durations: Vec<(String, Vec<String>)>,
}

impl AdmitAt {
    fn to(&self, obj: &Value, api_version: &str, refs: &dyn RefVersions) -> Result<Value, Vec<FieldError>> {
        self.conversion
            .convert(obj.clone(), api_version, refs)
            .map_err(|e| vec![FieldError::new(FieldErrorKind::Invalid, "", e.to_string())])
    }

    /// The durations of `obj`, written in `api_version`, that cannot be converted.
    fn unconvertible(&self, obj: &Value, api_version: &str) -> Vec<FieldError> {
        self.durations
            .iter()
            .filter(|(v, _)| v == api_version)
            .flat_map(|(_, paths)| crate::capi::duration::invalid_at(obj, paths))
            .collect()
    }

    fn requested_version(obj: &Value) -> Option<String> {
        obj.get("apiVersion").and_then(Value::as_str).map(str::to_string)
    }

    /// `obj` in the admission's version, borrowed when it already is (the common case: no copy).
    fn at<'a>(&self, obj: &'a Value, refs: &dyn RefVersions) -> Result<Cow<'a, Value>, Vec<FieldError>> {
        if obj.get("apiVersion").and_then(Value::as_str).is_none_or(|v| v == self.api_version) {
            Ok(Cow::Borrowed(obj))
        } else {
            self.to(obj, &self.api_version, refs).map(Cow::Owned)
        }
    }
}

impl Admission for AdmitAt {
    fn admit(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<Vec<FieldError>, Vec<FieldError>> {
        self.admit_with_refs(obj, old, op, &NoRefVersions, &mut Vec::new())
    }

    /// The references of an object converted here name the versions `refs` gives: the
    /// conversion back (and the one kept in the conversion-data annotation) must not name
    /// guessed ones.
    fn admit_with_refs(
        &self,
        obj: &mut Value,
        old: Option<&Value>,
        op: Operation,
        refs: &dyn RefVersions,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<FieldError>, Vec<FieldError>> {
        let requested = Self::requested_version(obj);
        let unconvertible = requested.as_deref().map(|v| self.unconvertible(obj, v)).unwrap_or_default();
        if !unconvertible.is_empty() {
            return Ok(unconvertible);
        }
        let old = old.map(|o| self.at(o, refs)).transpose()?;
        if requested.as_deref().is_none_or(|v| v == self.api_version) {
            return self.inner.admit_with_refs(obj, old.as_deref(), op, refs, warnings);
        }
        let mut converted = self.to(obj, &self.api_version, refs)?;
        let errors = self.inner.admit_with_refs(&mut converted, old.as_deref(), op, refs, warnings)?;
        if let Some(v) = requested {
            *obj = self.to(&converted, &v, refs)?;
        }
        Ok(errors)
    }

    fn default_with_old(&self, obj: &mut Value, old: Option<&Value>, op: Operation) -> Result<(), Vec<FieldError>> {
        let requested = Self::requested_version(obj);
        let old = old.map(|o| self.at(o, &NoRefVersions)).transpose()?;
        if requested.as_deref().is_none_or(|v| v == self.api_version) {
            return self.inner.default_with_old(obj, old.as_deref(), op);
        }
        let mut converted = self.to(obj, &self.api_version, &NoRefVersions)?;
        self.inner.default_with_old(&mut converted, old.as_deref(), op)?;
        if let Some(v) = requested {
            *obj = self.to(&converted, &v, &NoRefVersions)?;
        }
        Ok(())
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let unconvertible = Self::requested_version(obj).map(|v| self.unconvertible(obj, &v)).unwrap_or_default();
        if !unconvertible.is_empty() {
            return unconvertible;
        }
        let converted = match self.at(obj, &NoRefVersions) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let old = match old.map(|o| self.at(o, &NoRefVersions)).transpose() {
            Ok(o) => o,
            Err(e) => return e,
        };
        self.inner.validate(&converted, old.as_deref())
    }
}
