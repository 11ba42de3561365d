//! Test helpers for admission: run defaulting and validation on JSON objects as the API
//! server would.

use serde_json::Value;

use crate::admission::{Admission, FieldError, Operation};

/// Defaults then validates `obj` (with `old` on update); returns the defaulted object or the
/// errors.
pub(crate) fn admit(a: &dyn Admission, mut obj: Value, old: Option<Value>) -> Result<Value, Vec<FieldError>> {
    let op = if old.is_some() { Operation::Update } else { Operation::Create };
    let errs = a.admit(&mut obj, old.as_ref(), op)?;
    if errs.is_empty() { Ok(obj) } else { Err(errs) }
}

/// What admission warns about `obj` (created, or updated from `old`).
pub(crate) fn warnings_of(a: &dyn Admission, obj: &Value, old: Option<&Value>) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut obj = obj.clone();
    let op = if old.is_some() { Operation::Update } else { Operation::Create };
    let _ = a.admit_with_refs(&mut obj, old, op, &crate::conversion::NoRefVersions, &mut warnings);
    warnings
}

/// The field paths of an admission result (empty when admitted).
pub(crate) fn error_fields(r: &Result<Value, Vec<FieldError>>) -> Vec<String> {
    match r {
        Ok(_) => Vec::new(),
        Err(errs) => errs.iter().map(|e| e.field.clone()).collect(),
    }
}

/// Applies a JSON merge patch (RFC 7396) to a copy of `base`.
pub(crate) fn merged(base: &Value, patch: &Value) -> Value {
    let mut out = base.clone();
    merge(&mut out, patch);
    out
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}
