//! What kube-apiserver enforces on ConfigMap and Secret data: a Secret's write-only
//! `stringData` is folded into `data` (base64-encoded, overriding keys already there) and
//! never stored; a Secret's `type` defaults to `Opaque` and never changes; the data of
//! either kind is at most 1 MiB; and once `immutable` is set, neither the data nor the flag
//! may change.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use drydock_api::{Admission, FieldError, FieldErrorKind, Operation};
use serde_json::{Map, Value};

/// The most data a ConfigMap or Secret may hold (kube-apiserver's `MaxSecretSize`).
pub const MAX_DATA_BYTES: usize = 1024 * 1024;

const IMMUTABLE: &str = "field is immutable when `immutable` is set";

/// ConfigMap: size limit over `data` and `binaryData`, immutability.
pub struct ConfigMapAdmission;

impl Admission for ConfigMapAdmission {
    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let size = text_bytes(obj.get("data")) + decoded_bytes(obj.get("binaryData"));
        if size > MAX_DATA_BYTES {
            // kube-apiserver reports the whole object, whose path prints as `[]`.
            errs.push(too_long("[]"));
        }
        errs.extend(immutability(obj, old, &["data", "binaryData"]));
        errs
    }
}

/// Secret: `stringData` merged into `data`, size limit over the decoded `data`, immutability.
pub struct SecretAdmission;

impl Admission for SecretAdmission {
    fn default(&self, obj: &mut Value, _op: Operation) -> Result<(), Vec<FieldError>> {
        if let Some(map) = obj.as_object_mut()
            && map.get("type").and_then(Value::as_str).is_none_or(str::is_empty)
        {
            map.insert("type".into(), Value::String("Opaque".into()));
        }
        merge_string_data(obj)
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if decoded_bytes(obj.get("data")) > MAX_DATA_BYTES {
            errs.push(too_long("data"));
        }
        if let (Some(new), Some(old)) = (obj.get("type"), old.and_then(|o| o.get("type")))
            && new != old
        {
            errs.push(FieldError::invalid("type", new.clone(), "field is immutable"));
        }
        // kube-apiserver's rule for ServiceAccount token Secrets: they name their account.
        if obj.get("type").and_then(Value::as_str) == Some("kubernetes.io/service-account-token")
            && obj["metadata"]["annotations"]["kubernetes.io/service-account.name"].as_str().is_none_or(str::is_empty)
        {
            errs.push(FieldError::new(
                FieldErrorKind::Required,
                "metadata.annotations[kubernetes.io/service-account.name]",
                "Required value",
            ));
        }
        errs.extend(immutability(obj, old, &["data"]));
        errs
    }
}

/// Moves every `stringData` entry into `data` as base64 and drops `stringData`.
fn merge_string_data(obj: &mut Value) -> Result<(), Vec<FieldError>> {
    let Some(map) = obj.as_object_mut() else { return Ok(()) };
    let Some(string_data) = map.remove("stringData") else { return Ok(()) };
    let entries = match string_data {
        Value::Null => return Ok(()),
        Value::Object(m) => m,
        other => return Err(vec![FieldError::invalid("stringData", other, "must be a map of strings")]),
    };
    if entries.is_empty() {
        return Ok(());
    }
    let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    let Some(data) = data.as_object_mut() else { return Ok(()) };
    let mut errs = Vec::new();
    for (key, value) in entries {
        match value {
            Value::String(s) => {
                data.insert(key, Value::String(STANDARD.encode(s.as_bytes())));
            }
            other => errs.push(FieldError::invalid(format!("stringData[{key}]"), other, "must be a string")),
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

fn too_long(field: &str) -> FieldError {
    FieldError::new(FieldErrorKind::TooLong, field, format!("must have at most {MAX_DATA_BYTES} bytes"))
}

/// Bytes of the string values of a map.
fn text_bytes(map: Option<&Value>) -> usize {
    map.and_then(Value::as_object).map_or(0, |m| m.values().filter_map(Value::as_str).map(str::len).sum())
}

/// Bytes of the base64-encoded values of a map once decoded (the encoded length stands in
/// for a value that is not valid base64).
fn decoded_bytes(map: Option<&Value>) -> usize {
    let Some(m) = map.and_then(Value::as_object) else { return 0 };
    m.values().filter_map(Value::as_str).map(|s| STANDARD.decode(s).map_or(s.len(), |b| b.len())).sum()
}

/// Once the stored object is `immutable`, the flag stays set and `fields` stay as they are.
fn immutability(obj: &Value, old: Option<&Value>, fields: &[&str]) -> Vec<FieldError> {
    let Some(old) = old.filter(|o| o.get("immutable") == Some(&Value::Bool(true))) else { return Vec::new() };
    let mut errs = Vec::new();
    if obj.get("immutable") != Some(&Value::Bool(true)) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE));
    }
    for f in fields {
        if !same_map(obj.get(*f), old.get(*f)) {
            errs.push(FieldError::forbidden(*f, IMMUTABLE));
        }
    }
    errs
}

/// Equality of two optional maps, where absent, null and empty are the same.
fn same_map(a: Option<&Value>, b: Option<&Value>) -> bool {
    let empty = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty));
    (empty(a) && empty(b)) || a == b
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn string_data_overrides_data_and_disappears() {
        let mut s = json!({"data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "two", "c": "three"}});
        SecretAdmission.default(&mut s, Operation::Create).expect("merge");
        assert_eq!(s, json!({"type": "Opaque", "data": {"a": "eA==", "b": "dHdv", "c": "dGhyZWU="}}));
        let mut s = json!({"type": "kubernetes.io/tls", "stringData": {"k": "v"}});
        SecretAdmission.default(&mut s, Operation::Create).expect("merge");
        assert_eq!(s, json!({"type": "kubernetes.io/tls", "data": {"k": "dg=="}}));
    }

    #[test]
    fn sizes_count_decoded_secret_data_and_both_configmap_maps() {
        let exact = "a".repeat(MAX_DATA_BYTES);
        assert!(ConfigMapAdmission.validate(&json!({"data": {"k": exact}}), None).is_empty());
        let half = "a".repeat(MAX_DATA_BYTES / 2);
        let over = json!({"data": {"k": half}, "binaryData": {"b": STANDARD.encode(format!("{half}!"))}});
        let errs = ConfigMapAdmission.validate(&over, None);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].to_string(), "[]: Too long: must have at most 1048576 bytes");
        let secret = json!({"data": {"k": STANDARD.encode(vec![0u8; MAX_DATA_BYTES])}});
        assert!(SecretAdmission.validate(&secret, None).is_empty());
        let secret = json!({"data": {"k": STANDARD.encode(vec![0u8; MAX_DATA_BYTES + 1])}});
        assert_eq!(
            SecretAdmission.validate(&secret, None)[0].to_string(),
            "data: Too long: must have at most 1048576 bytes"
        );
    }

    #[test]
    fn immutable_data_cannot_change() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        assert!(ConfigMapAdmission.validate(&json!({"immutable": true, "data": {"a": "1"}}), Some(&old)).is_empty());
        let errs = ConfigMapAdmission.validate(&json!({"data": {"a": "2"}}), Some(&old));
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["immutable", "data"]);
        let errs = SecretAdmission.validate(&json!({"type": "Opaque"}), Some(&json!({"type": "kubernetes.io/tls"})));
        assert_eq!(errs[0].to_string(), "type: Invalid value: \"Opaque\": field is immutable");
    }
}
