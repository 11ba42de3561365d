//! Field validators shared by the admission of several kinds, with apimachinery's messages:
//! label maps, annotations and immutable fields (the name and label syntax checks themselves
//! are [`crate::names`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::admission::{FieldError, FieldErrorKind, FieldPath};
use crate::names::{label_value_errors, qualified_name_errors};

const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Turns any string into a valid label value: valid values are kept; others become
/// `hash_<base64url(fnv32a(s))>_z`, as Cluster API formats names it puts in labels.
pub fn format_label_value(s: &str) -> String {
    if label_value_errors(s).is_empty() {
        return s.to_string();
    }
    let hash = s.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("hash_{}_z", base64url_nopad(&hash.to_be_bytes()))
}

fn base64url_nopad(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 0x3f) as usize]));
        }
    }
    out
}

/// Label keys and values, each problem reported at `path[key]`.
pub fn validate_labels(labels: Option<&BTreeMap<String, String>>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels.into_iter().flatten() {
        for e in qualified_name_errors(k) {
            errs.push(FieldError::invalid(path.as_str(), k.as_str(), e));
        }
        for e in label_value_errors(v) {
            errs.push(FieldError::invalid(path.key(k), v.as_str(), e));
        }
    }
    errs
}

/// Annotation keys (qualified names, checked lowercased) and the 256 KiB total size limit.
pub fn validate_annotations(annotations: Option<&BTreeMap<String, String>>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations.into_iter().flatten() {
        for e in qualified_name_errors(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path.as_str(), k.as_str(), e));
        }
        total += k.len() + v.len();
    }
    if total > ANNOTATIONS_MAX_BYTES {
        errs.push(FieldError::new(
            FieldErrorKind::TooLong,
            path.as_str(),
            format!("must have at most {ANNOTATIONS_MAX_BYTES} bytes"),
        ));
    }
    errs
}

/// `Forbidden: field is immutable` when `new` differs from `old`.
pub fn immutable<T: PartialEq>(path: &FieldPath, new: &T, old: &T) -> Option<FieldError> {
    (new != old).then(|| FieldError::forbidden(path.as_str(), "field is immutable"))
}

/// `Invalid: field is immutable` echoing the new value (the form apimachinery's
/// `ValidateImmutableField` uses).
pub fn immutable_value<T: PartialEq + Serialize>(path: &FieldPath, new: &T, old: &T) -> Option<FieldError> {
    (new != old).then(|| FieldError::invalid(path.as_str(), to_value(new), "field is immutable"))
}

/// JSON rendering of a value for error messages (`null` if it cannot be rendered).
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_value_formatting() {
        assert_eq!(format_label_value("ms-1"), "ms-1");
        let long = "a".repeat(70);
        let f = format_label_value(&long);
        assert!(f.starts_with("hash_") && f.ends_with("_z") && label_value_errors(&f).is_empty(), "{f}");
        assert_eq!(f.len(), "hash_".len() + 6 + "_z".len());
        assert_eq!(base64url_nopad(b"Man"), "TWFu");
        assert_eq!(base64url_nopad(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn label_map_paths() {
        let mut m = BTreeMap::new();
        m.insert("good".to_string(), "bad value".to_string());
        m.insert("bad key!".to_string(), "ok".to_string());
        let errs = validate_labels(Some(&m), &FieldPath::new("metadata").child("labels"));
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["metadata.labels", "metadata.labels[good]"]);
    }

    #[test]
    fn annotation_limits_and_immutability() {
        let mut m = BTreeMap::new();
        m.insert("Example.com/Key".to_string(), "x".repeat(10));
        assert!(validate_annotations(Some(&m), &FieldPath::new("a")).is_empty());
        m.insert("big".to_string(), "x".repeat(ANNOTATIONS_MAX_BYTES));
        assert_eq!(validate_annotations(Some(&m), &FieldPath::new("a"))[0].kind, FieldErrorKind::TooLong);
        let p = FieldPath::new("spec").child("clusterName");
        assert!(immutable(&p, &"a", &"a").is_none());
        assert_eq!(immutable(&p, &"a", &"b").unwrap().to_string(), "spec.clusterName: Forbidden: field is immutable");
    }
}
