//! PATCH bodies: JSON patch (RFC 6902, with Go's `test` semantics), JSON merge patch
//! (RFC 7396) and strategic merge patch (`strategic`, with the built-in kinds' list
//! merge keys in `lists`).

pub(crate) mod lists;
mod strategic;

use serde_json::{Map, Value};

pub use strategic::strategic_merge;

/// The content types of PATCH requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" | "application/apply-patch+cbor" => {
                Some(Self::Apply)
            }
            _ => None,
        }
    }
}

/// Applies an RFC 6902 patch. As in kube-apiserver, `test` of a missing path against
/// `null` succeeds (kube-rs' finalizer helper relies on it).
pub fn json_patch(doc: &mut Value, body: Value) -> Result<(), String> {
    let ops: json_patch::Patch = serde_json::from_value(body).map_err(|e| format!("invalid JSON patch: {e}"))?;
    for op in ops.0 {
        if let json_patch::PatchOperation::Test(t) = &op
            && t.value.is_null()
            && doc.pointer(t.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(&op)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Applies an RFC 7396 merge patch, moving its values into `doc` (a status write's
/// condition list is most of its bytes; it is not copied).
pub fn merge_patch(doc: &mut Value, patch: Value) {
    let Value::Object(members) = patch else {
        *doc = patch;
        return;
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(map) = doc else { return };
    for (k, v) in members {
        if v.is_null() {
            map.remove(&k);
        } else {
            merge_patch(map.entry(k).or_insert(Value::Null), v);
        }
    }
}

/// A PATCH body, parsed once for the first attempt of the write, which takes it, and
/// parsed again from its bytes only when a conflict makes the write start over.
pub struct PatchBody {
    first: Option<Value>,
    again: Box<dyn Fn() -> Result<Value, crate::error::ApiError> + Send + Sync>,
}

impl PatchBody {
    /// `first`, and how to make it again.
    pub fn new(
        first: Value,
        again: impl Fn() -> Result<Value, crate::error::ApiError> + Send + Sync + 'static,
    ) -> Self {
        Self { first: Some(first), again: Box::new(again) }
    }

    /// A body the server made itself, kept whole for a retry.
    pub fn value(v: Value) -> Self {
        let spare = v.clone();
        Self::new(v, move || Ok(spare.clone()))
    }

    /// The body as the first attempt got it, if it has not taken it yet.
    pub fn peek(&self) -> Option<&Value> {
        self.first.as_ref()
    }

    /// The body for one attempt.
    pub fn take(&mut self) -> Result<Value, crate::error::ApiError> {
        match self.first.take() {
            Some(v) => Ok(v),
            None => (self.again)(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_test_of_missing_path_against_null_succeeds() {
        let mut doc = json!({"metadata":{"name":"a"}});
        let p = json!([{"op":"test","path":"/metadata/finalizers","value":null},
                       {"op":"add","path":"/metadata/finalizers","value":["x/y"]}]);
        json_patch(&mut doc, p).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["x/y"]));
        let bad = json!([{"op":"test","path":"/metadata/finalizers","value":null}]);
        assert!(json_patch(&mut doc, bad).is_err(), "present value is not null");
        assert!(json_patch(&mut doc, json!({"op":"add"})).is_err());
    }

    #[test]
    fn merge_patches_move_their_values_in_as_rfc_7396_merges() {
        let cases = [
            (
                json!({"a": 1, "b": {"c": [1, 2], "d": "x"}}),
                json!({"b": {"c": [3], "d": null}, "e": {"f": null, "g": 1}}),
            ),
            (json!({"a": [1]}), json!({"a": {"b": 1}})),
            (json!({"a": {"b": 1}}), json!({"a": [1, {"c": null}]})),
            (json!([1, 2]), json!({"a": 1})),
            (json!({"a": 1}), json!({"a": null, "b": null})),
            (json!({"a": 1}), json!({})),
        ];
        for (doc, patch) in cases {
            // json-patch's merge, which copies the patch's values, is the reference.
            let mut expected = doc.clone();
            json_patch::merge(&mut expected, &patch);
            let mut got = doc;
            merge_patch(&mut got, patch);
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn a_patch_body_is_made_again_for_a_retry() {
        let made = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = made.clone();
        let mut body = PatchBody::new(json!({"a": 1}), move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(json!({"a": 1}))
        });
        assert_eq!(body.peek(), Some(&json!({"a": 1})));
        assert_eq!(body.take().unwrap(), json!({"a": 1}));
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 0, "the first attempt takes the parsed body");
        assert_eq!(body.peek(), None);
        assert_eq!(body.take().unwrap(), json!({"a": 1}));
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1, "a retry parses it again");
        let mut kept = PatchBody::value(json!([1]));
        assert_eq!((kept.take().unwrap(), kept.take().unwrap()), (json!([1]), json!([1])));
    }
}
