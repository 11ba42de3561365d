//! Object metadata rules: name and label syntax, system-set fields (uid, timestamps,
//! generation), and generated names. Messages follow apimachinery's validation.

use drydock_api::FieldError;
use drydock_api::names::{label_value_errors, qualified_name_errors};
use rand::Rng;
use serde_json::{Value, json};

/// Current time as Kubernetes writes it: RFC 3339, whole seconds, UTC.
pub fn now_rfc3339() -> String {
    // Every write stamps a time (managedFields, creation, conditions): formatted once a second.
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> = const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    let now = jiff::Timestamp::now();
    LAST.with_borrow_mut(|(second, text)| {
        if *second != now.as_second() {
            *second = now.as_second();
            *text = drydock_api::time::rfc3339(now);
        }
        text.clone()
    })
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

/// Checks a name with one of [`drydock_api::names`]' checks, keeping the first problem.
pub fn first_error(errs: Vec<String>) -> Result<(), String> {
    errs.into_iter().next().map_or(Ok(()), Err)
}

/// Validates the user-settable parts of metadata (labels, annotations, finalizers, owner references).
pub fn validate_metadata(meta: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            for e in qualified_name_errors(k) {
                errs.push(FieldError::invalid("metadata.labels", k.as_str(), e));
            }
            match v.as_str() {
                Some(s) => {
                    for e in label_value_errors(s) {
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
            for e in qualified_name_errors(&k.to_ascii_lowercase()) {
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
                    for e in qualified_name_errors(s) {
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
    fn the_time_is_current_to_the_second() {
        for _ in 0..3 {
            let before = jiff::Timestamp::now().as_second();
            let stamped: jiff::Timestamp = now_rfc3339().parse().expect("RFC 3339");
            let after = jiff::Timestamp::now().as_second();
            assert!((before..=after).contains(&stamped.as_second()), "{stamped}");
            assert!(now_rfc3339().ends_with('Z') && !now_rfc3339().contains('.'));
        }
    }

    #[test]
    fn generated_names_and_errors() {
        assert_eq!(first_error(Vec::new()), Ok(()));
        assert_eq!(first_error(vec!["a".into(), "b".into()]), Err("a".into()));
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
