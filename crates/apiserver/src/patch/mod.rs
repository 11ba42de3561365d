//! PATCH bodies: JSON patch (RFC 6902, with Go's `test` semantics), JSON merge patch
//! (RFC 7396) and strategic merge patch (`strategic`, with the built-in kinds' list
//! merge keys in `lists`).

pub(crate) mod lists;
mod strategic;

use serde_json::Value;

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
pub fn json_patch(doc: &mut Value, body: &Value) -> Result<(), String> {
    let ops: json_patch::Patch =
        serde_json::from_value(body.clone()).map_err(|e| format!("invalid JSON patch: {e}"))?;
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

/// Applies an RFC 7396 merge patch.
pub fn merge_patch(doc: &mut Value, patch: &Value) {
    json_patch::merge(doc, patch);
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
        json_patch(&mut doc, &p).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["x/y"]));
        let bad = json!([{"op":"test","path":"/metadata/finalizers","value":null}]);
        assert!(json_patch(&mut doc, &bad).is_err(), "present value is not null");
        assert!(json_patch(&mut doc, &json!({"op":"add"})).is_err());
    }
}
