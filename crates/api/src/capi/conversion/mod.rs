//! Conversion of the Cluster API kinds between v1beta2 (the hub) and v1beta1 (the spoke).
//!
//! Each kind implements [`HubSpoke`]: typed functions from one version to the other, which
//! may lose what the target version cannot hold. [`lossless`] wraps them so that nothing is
//! lost: what the target cannot hold travels in the [`CONVERSION_DATA`] annotation, as
//! upstream does, and comes back when the object is converted back. The helpers below are
//! the mechanical rules every kind shares (references, durations).

mod admit_at;
pub mod lossless;
#[cfg(test)]
pub(crate) mod testing;

use k8s_openapi::api::core::v1::ObjectReference;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::common::ContractVersionedObjectReference;
use super::owner::api_group;
use crate::conversion::RefVersions;

pub use admit_at::AdmitAt;
pub use lossless::native;

/// The annotation holding, on a converted object, the source object (minus metadata) when
/// the target version could not hold all of it.
pub const CONVERSION_DATA: &str = "cluster.x-k8s.io/conversion-data";

/// What a conversion may need besides the object: its namespace (v1beta1 references name
/// one) and the versions of referenced kinds.
pub struct Ctx<'a> {
    pub namespace: Option<&'a str>,
    pub refs: &'a dyn RefVersions,
}

/// One kind's typed conversions between its hub (v1beta2) and spoke (v1beta1) types.
/// `metadata` is handled by [`lossless`]: implementations carry it over unchanged.
pub trait HubSpoke: Send + Sync + 'static {
    type Hub: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned;
    type Spoke: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned;

    fn up(spoke: Self::Spoke, ctx: &Ctx<'_>) -> Self::Hub;
    fn down(hub: Self::Hub, ctx: &Ctx<'_>) -> Self::Spoke;

    /// Where the spoke holds Go durations that the hub keeps as whole seconds (paths as
    /// [`duration::invalid_at`](crate::capi::duration::invalid_at) reads them). A value that
    /// does not parse has no hub form, so a write in the spoke carrying one is refused with
    /// its path instead of losing the value.
    fn spoke_durations() -> Vec<String> {
        Vec::new()
    }
}

/// A v1beta1 reference as v1beta2 names it: its API group (from `apiVersion`), kind and name.
pub fn ref_up(r: &ObjectReference) -> ContractVersionedObjectReference {
    ContractVersionedObjectReference {
        api_group: api_group(r.api_version.as_deref().unwrap_or_default()).to_string(),
        kind: r.kind.clone().unwrap_or_default(),
        name: r.name.clone().unwrap_or_default(),
    }
}

/// A v1beta2 reference as v1beta1 names it: `apiVersion` from the referenced kind's CRD
/// (its contract label), the namespace of the referring object.
pub fn ref_down(r: &ContractVersionedObjectReference, ctx: &Ctx<'_>) -> ObjectReference {
    let api_version = ctx.refs.api_version(&r.api_group, &r.kind).unwrap_or_else(|| fallback_version(&r.api_group));
    ObjectReference {
        api_version: Some(api_version),
        kind: Some(r.kind.clone()),
        name: Some(r.name.clone()),
        namespace: ctx.namespace.map(str::to_string),
        ..Default::default()
    }
}

/// The version of a group when no CRD says: drydock's own groups serve v1beta2 (the
/// in-memory provider's v1alpha1 only), anything else is assumed to be on the v1beta1
/// contract.
fn fallback_version(group: &str) -> String {
    let version = match group {
        "cluster.x-k8s.io" | "bootstrap.cluster.x-k8s.io" | "controlplane.cluster.x-k8s.io" => "v1beta2",
        _ => "v1beta1",
    };
    if group.is_empty() { version.to_string() } else { format!("{group}/{version}") }
}

/// A Go duration as whole seconds: truncated, capped at `i32::MAX` (upstream's rule); an
/// unparsable value is dropped (admission refuses those: [`HubSpoke::spoke_durations`]).
pub fn duration_to_seconds(d: Option<&str>) -> Option<i32> {
    let d = super::duration::parse(d?).ok()?;
    Some(i32::try_from(d.as_secs()).unwrap_or(if d.is_negative() { i32::MIN } else { i32::MAX }))
}

/// Whole seconds as Go formats a duration (`0s`, `45s`, `1m30s`, `2h0m0s`).
pub fn seconds_to_duration(s: Option<i32>) -> Option<String> {
    let s = i64::from(s?);
    let (sign, n) = if s < 0 { ("-", -s) } else { ("", s) };
    let (h, m, sec) = (n / 3600, (n % 3600) / 60, n % 60);
    Some(match (h, m) {
        (0, 0) => format!("{sign}{sec}s"),
        (0, _) => format!("{sign}{m}m{sec}s"),
        _ => format!("{sign}{h}h{m}m{sec}s"),
    })
}

/// Empty strings are unset in v1beta2 (and `""` is refused there).
pub fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversion::NoRefVersions;

    #[test]
    fn durations_become_whole_seconds_and_back() {
        for (go, secs, back) in [
            ("90s", 90, "1m30s"),
            ("1.9s", 1, "1s"),
            ("0", 0, "0s"),
            ("2h", 7200, "2h0m0s"),
            ("-1m", -60, "-1m0s"),
            ("1000000h", i32::MAX, "596523h14m7s"),
        ] {
            assert_eq!(duration_to_seconds(Some(go)), Some(secs), "{go}");
            assert_eq!(seconds_to_duration(Some(secs)).as_deref(), Some(back), "{go}");
        }
        assert_eq!(duration_to_seconds(Some("soon")), None);
    }

    #[test]
    fn references_keep_group_kind_name_and_take_the_namespace() {
        let r = ObjectReference {
            api_version: Some("infrastructure.cluster.x-k8s.io/v1alpha1".into()),
            kind: Some("InMemoryMachine".into()),
            name: Some("m-1".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        };
        let up = ref_up(&r);
        assert_eq!(up.api_group, "infrastructure.cluster.x-k8s.io");
        struct Known;
        impl RefVersions for Known {
            fn api_version(&self, group: &str, kind: &str) -> Option<String> {
                (kind == "InMemoryMachine").then(|| format!("{group}/v1alpha1"))
            }
        }
        let down = ref_down(&up, &Ctx { namespace: Some("ns"), refs: &Known });
        assert_eq!(down, r);
        let unknown = ref_down(&up, &Ctx { namespace: Some("ns"), refs: &NoRefVersions });
        assert_eq!(unknown.api_version.as_deref(), Some("infrastructure.cluster.x-k8s.io/v1beta1"));
    }
}
