//! Field validators shared by the admission of several kinds, with apimachinery's messages:
//! names, label keys and values, annotations, and immutable fields.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::admission::{FieldError, FieldErrorKind, FieldPath};

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_MAX: usize = 63;
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, the shape of label names and values.
fn is_qualified_token(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            is_alnum(f) && is_alnum(l) && b.iter().all(|&c| is_alnum(c) || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Problems with `s` as a DNS-1123 label (lowercase alphanumerics and `-`, at most 63).
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(format!("must be no more than {DNS1123_LABEL_MAX} characters"));
    }
    let b = s.as_bytes();
    let shape_ok = !b.is_empty()
        && b.iter().all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-';
    if !shape_ok {
        errs.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must \
             start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc')"
                .to_string(),
        );
    }
    errs
}

/// Problems with `s` as a DNS-1123 subdomain (dot-separated labels, at most 253).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!("must be no more than {DNS1123_SUBDOMAIN_MAX} characters"));
    }
    let shape_ok = !s.is_empty()
        && s.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.iter().all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        });
    if !shape_ok {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and \
             must start and end with an alphanumeric character (e.g. 'example.com')"
                .to_string(),
        );
    }
    errs
}

/// Problems with `s` as a qualified name (`[prefix/]name`), the shape of label and
/// annotation keys.
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errs.push("prefix part must be non-empty".to_string());
        } else {
            errs.extend(dns1123_subdomain_errors(prefix).into_iter().map(|e| format!("prefix part {e}")));
        }
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else {
        if name.len() > QUALIFIED_NAME_MAX {
            errs.push(format!("name part must be no more than {QUALIFIED_NAME_MAX} characters"));
        }
        if !is_qualified_token(name) {
            errs.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
                 with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc')"
                    .to_string(),
            );
        }
    }
    errs
}

/// Problems with `s` as a label value (empty, or at most 63 qualified-token characters).
pub fn label_value_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > LABEL_VALUE_MAX {
        errs.push(format!("must be no more than {LABEL_VALUE_MAX} characters"));
    }
    if !s.is_empty() && !is_qualified_token(s) {
        errs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and \
             must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345')"
                .to_string(),
        );
    }
    errs
}

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
    fn names_and_labels() {
        assert!(dns1123_label_errors("my-name").is_empty());
        assert!(!dns1123_label_errors("My-name").is_empty());
        assert!(!dns1123_label_errors("-a").is_empty());
        assert!(!dns1123_label_errors(&"a".repeat(64)).is_empty());
        assert!(dns1123_subdomain_errors("example.com").is_empty());
        assert!(!dns1123_subdomain_errors("example..com").is_empty());
        assert!(qualified_name_errors("cluster.x-k8s.io/cluster-name").is_empty());
        assert!(qualified_name_errors("node-role.kubernetes.io/worker").is_empty());
        assert!(qualified_name_errors("MyName").is_empty());
        assert!(!qualified_name_errors("/name").is_empty());
        assert!(!qualified_name_errors("a/b/c").is_empty());
        assert!(!qualified_name_errors("Bad_Prefix/name").is_empty());
        assert!(!qualified_name_errors("").is_empty());
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("my_value.1").is_empty());
        assert!(!label_value_errors("-x").is_empty());
        assert!(!label_value_errors(&"a".repeat(64)).is_empty());
    }

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
