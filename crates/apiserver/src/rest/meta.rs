//! Object metadata rules: name and label syntax, system-set fields (uid, timestamps,
//! generation), and generated names. Messages follow apimachinery's validation.

use drydock_api::FieldError;
use rand::Rng;
use serde_json::{Value, json};

/// Current time as Kubernetes writes it: RFC 3339, whole seconds, UTC.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A random 5-character suffix for `generateName`, from apimachinery's alphabet.
pub fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn is_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// DNS-1123 label: at most 63 lower-case alphanumerics or '-', starting and ending alphanumeric.
pub fn dns1123_label(s: &str) -> Result<(), String> {
    if s.len() > 63 {
        return Err("must be no more than 63 characters".into());
    }
    let ok =
        !s.is_empty() && s.chars().all(|c| is_alnum(c) || c == '-') && s.starts_with(is_alnum) && s.ends_with(is_alnum);
    if ok {
        Ok(())
    } else {
        Err("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".into())
    }
}

/// DNS-1123 subdomain: at most 253 characters, dot-separated labels.
pub fn dns1123_subdomain(s: &str) -> Result<(), String> {
    if s.len() > 253 {
        return Err("must be no more than 253 characters".into());
    }
    let ok = !s.is_empty()
        && s.chars().all(|c| is_alnum(c) || c == '-' || c == '.')
        && s.starts_with(is_alnum)
        && s.ends_with(is_alnum);
    if ok {
        Ok(())
    } else {
        Err("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into())
    }
}

/// Object names may not be `.` or `..` nor contain `/` or `%` in any kind (path safety).
pub fn path_segment_name(s: &str) -> Result<(), String> {
    if s == "." || s == ".." {
        return Err(format!("may not be '{s}'"));
    }
    if s.contains('/') || s.contains('%') {
        return Err("may not contain '/' or '%'".into());
    }
    Ok(())
}

fn name_part(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into())
    }
}

/// A qualified name (label and annotation keys): optional DNS subdomain prefix and `/`, then a name part.
pub fn qualified_name(s: &str) -> Result<(), String> {
    match s.split_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Err("prefix part must be non-empty".into());
            }
            dns1123_subdomain(prefix).map_err(|e| format!("prefix part {e}"))?;
            name_part(name)
        }
        None => name_part(s),
    }
}

/// A label value: empty, or at most 63 characters like a name part.
pub fn label_value(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    if s.len() > 63 {
        return Err("must be no more than 63 characters".into());
    }
    name_part(s).map_err(|_| "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into())
}

/// Validates the user-settable parts of metadata (labels, annotations, finalizers, owner references).
pub fn validate_metadata(meta: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            if let Err(e) = qualified_name(k) {
                errs.push(FieldError::invalid("metadata.labels", k.as_str(), e));
            }
            match v.as_str() {
                Some(s) => {
                    if let Err(e) = label_value(s) {
                        errs.push(FieldError::invalid(format!("metadata.labels[{k}]"), s, e));
                    }
                }
                None => errs.push(FieldError::invalid(format!("metadata.labels[{k}]"), v.clone(), "must be a string")),
            }
        }
    }
    if let Some(ann) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0usize;
        for (k, v) in ann {
            if let Err(e) = qualified_name(&k.to_ascii_lowercase()) {
                errs.push(FieldError::invalid("metadata.annotations", k.as_str(), e));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > 256 * 1024 {
            errs.push(FieldError::new(
                drydock_api::FieldErrorKind::TooLong,
                "metadata.annotations",
                "may not be more than 262144 bytes",
            ));
        }
    }
    if let Some(fins) = meta.get("finalizers").and_then(Value::as_array) {
        for (i, f) in fins.iter().enumerate() {
            match f.as_str() {
                // Any qualified name, as apimachinery's ValidateFinalizerName: Cluster API's
                // own finalizers (`machine.cluster.x-k8s.io`) have no `/`.
                Some(s) => {
                    if let Err(e) = qualified_name(s) {
                        errs.push(FieldError::invalid(format!("metadata.finalizers[{i}]"), s, e));
                    }
                }
                None => {
                    errs.push(FieldError::invalid(format!("metadata.finalizers[{i}]"), f.clone(), "must be a string"))
                }
            }
        }
    }
    if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
        let mut controllers = 0;
        for (i, r) in refs.iter().enumerate() {
            for f in ["apiVersion", "kind", "name", "uid"] {
                if r.get(f).and_then(Value::as_str).is_none_or(str::is_empty) {
                    errs.push(FieldError::required(format!("metadata.ownerReferences[{i}].{f}"), ""));
                }
            }
            if r.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers += 1;
            }
        }
        if controllers > 1 {
            errs.push(FieldError::invalid(
                "metadata.ownerReferences",
                json!(refs),
                "Only one reference can have Controller set to true",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels() {
        assert!(dns1123_subdomain("my-name.example").is_ok());
        assert!(dns1123_subdomain("My-Name").is_err());
        assert!(dns1123_subdomain("-a").is_err());
        assert!(dns1123_label("a.b").is_err());
        assert!(qualified_name("cluster.x-k8s.io/cluster-name").is_ok());
        assert!(qualified_name("node-role.kubernetes.io/worker").is_ok());
        assert!(qualified_name("/x").is_err());
        assert!(label_value("").is_ok());
        assert!(label_value("a b").is_err());
        assert_eq!(name_suffix().len(), 5);
        assert_eq!(now_rfc3339().len(), 20);
    }

    #[test]
    fn metadata_problems_are_reported_with_paths() {
        let m = json!({"labels": {"ok": "v", "bad key!": "v", "k": "bad value!"},
            "finalizers": ["machine.cluster.x-k8s.io", "example.com/x", "not valid!"]});
        let fields: Vec<String> = validate_metadata(&m).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, vec!["metadata.labels", "metadata.labels[k]", "metadata.finalizers[2]"]);
    }
}
