//! Managers recorded in another version of the kind own fields by that version's paths
//! (`spec.strategy` in v1beta1 is `spec.rollout.strategy` in v1beta2). A write is therefore
//! compared, for each such manager, in the manager's own version, as structured-merge-diff
//! does: conflicts, takeovers and removals are found there, and reported in its paths.

use serde_json::Value;

use super::MergeType;
use super::ops::{Comparison, compare_except};

/// The other served versions of the written kind.
pub trait Versions: Sync {
    /// `obj` (in the writer's version) as `api_version` serves it, with that version's merge
    /// type; `None` when that version is not served or the object does not convert.
    fn view(&self, obj: &Value, api_version: &str) -> Option<(Value, &MergeType)>;

    /// `obj`, as `api_version` serves it, back in the writer's version; `None` when it does
    /// not convert.
    fn back(&self, obj: &Value, api_version: &str) -> Option<Value>;
}

/// A kind served in one version (or whose versions share one shape).
pub struct OneVersion;

impl Versions for OneVersion {
    fn view(&self, _obj: &Value, _api_version: &str) -> Option<(Value, &MergeType)> {
        None
    }

    fn back(&self, _obj: &Value, _api_version: &str) -> Option<Value> {
        None
    }
}

/// One write from `old` to `new`, compared in each version a manager is recorded in, each
/// version once.
pub(super) struct InVersions<'a> {
    versions: &'a dyn Versions,
    old: &'a Value,
    new: &'a Value,
    writer: &'a str,
    skipped: &'a [&'a str],
    seen: Vec<(String, Option<Comparison>)>,
}

impl<'a> InVersions<'a> {
    /// `skipped`: top-level fields left out of the comparison (those the endpoint ignores).
    pub fn new(
        versions: &'a dyn Versions,
        (old, new): (&'a Value, &'a Value),
        writer: &'a str,
        skipped: &'a [&'a str],
    ) -> Self {
        Self { versions, old, new, writer, skipped, seen: Vec::new() }
    }

    /// The write as `api_version` sees it; `None` for the writer's own version, or when it
    /// cannot be seen there (the writer's paths then stand for it, as for a version whose
    /// shape is the same).
    pub fn get(&mut self, api_version: &str) -> Option<&Comparison> {
        if api_version == self.writer {
            return None;
        }
        let i = match self.seen.iter().position(|(v, _)| v == api_version) {
            Some(i) => i,
            None => {
                let cmp = self.versions.view(self.old, api_version).and_then(|(old, ty)| {
                    let (new, _) = self.versions.view(self.new, api_version)?;
                    Some(compare_except(&old, &new, ty, self.skipped))
                });
                self.seen.push((api_version.to_string(), cmp));
                self.seen.len() - 1
            }
        };
        self.seen[i].1.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::managed::{Live, Writer, apply, take_sent};

    const V1: &str = "example.com/v1";
    const V2: &str = "example.com/v2";

    /// A kind whose v1 `spec.a` is v2's `spec.b.a`.
    struct Moved(MergeType);

    fn moved(obj: &Value, from: &[&str], to: &[&str], api_version: &str) -> Value {
        let mut out = obj.clone();
        out["apiVersion"] = json!(api_version);
        let taken = from.iter().try_fold(&mut out, |v, k| v.get_mut(*k)).map(Value::take);
        if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove(from[1]);
        }
        if let Some(v) = taken.filter(|v| !v.is_null()) {
            let mut at = &mut out;
            for k in to {
                at = &mut at[*k];
            }
            *at = v;
        }
        out
    }

    impl Versions for Moved {
        fn view(&self, obj: &Value, api_version: &str) -> Option<(Value, &MergeType)> {
            (api_version == V1).then(|| (moved(obj, &["spec", "b", "a"], &["spec", "a"], V1), &self.0))
        }

        fn back(&self, obj: &Value, api_version: &str) -> Option<Value> {
            (api_version == V1).then(|| moved(obj, &["spec", "a"], &["spec", "b", "a"], V2))
        }
    }

    fn writer(api_version: &str) -> Writer<'_> {
        Writer { manager: "tool", api_version, subresource: "", ignored: &[], now: "2026-12-01T00:00:00Z" }
    }

    fn object(api_version: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": "Thing", "metadata": {"name": "t"}, "spec": spec})
    }

    /// An applier that applied in v1 and applies again in v2 without a field loses it, found
    /// by v1's paths, as structured-merge-diff prunes.
    #[test]
    fn an_applier_switching_versions_drops_what_it_no_longer_sets() {
        let struct_ = |fields: Vec<(&str, MergeType)>| MergeType::Object {
            fields: fields.into_iter().map(|(k, t)| (k.to_string(), t)).collect(),
            rest: Box::new(MergeType::Leaf),
        };
        let spec_v1 = struct_(vec![("a", MergeType::Leaf), ("c", MergeType::Leaf)]);
        let spec_v2 = struct_(vec![("b", struct_(vec![("a", MergeType::Leaf)])), ("c", MergeType::Leaf)]);
        let versions = Moved(struct_(vec![("spec", spec_v1)]));
        let ty = struct_(vec![("spec", spec_v2)]);
        let first =
            apply((&ty, &versions), None, None, &object(V1, json!({"a": 1, "c": 1})), &writer(V1), false).expect("v1");
        // The store serves it in v2 with the entry recorded in v1.
        let mut live = versions.back(&first.object, V1).expect("v2");
        let managed = take_sent(&mut live).map(|m| serde_json::value::to_raw_value(&m).expect("raw"));
        assert_eq!(live["spec"], json!({"b": {"a": 1}, "c": 1}));
        let second = apply(
            (&ty, &versions),
            Some(&live),
            managed.as_deref().map(Live),
            &object(V2, json!({"c": 2})),
            &writer(V2),
            false,
        )
        .expect("v2");
        let spec = &second.object["spec"];
        assert_eq!(spec["c"], 2);
        assert!(spec.get("b").and_then(|b| b.get("a")).is_none(), "v1's spec.a was dropped: {spec}");
    }
}
