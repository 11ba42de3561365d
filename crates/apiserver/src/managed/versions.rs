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
}

/// A kind served in one version (or whose versions share one shape).
pub struct OneVersion;

impl Versions for OneVersion {
    fn view(&self, _obj: &Value, _api_version: &str) -> Option<(Value, &MergeType)> {
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
