//! Pool admission against what is stored, where upstream's webhook leaves gaps:
//!
//! - A pool may not overlap a pool that could hand out the same address: the namespaced
//!   pools of its namespace and every global pool (a global pool: every pool). Two global
//!   pools over one subnet gave two nodes one address upstream. Where reusing a subnet is
//!   meant (NAT, several sites), annotating either pool `ipam.drydock.dev/allow-overlap:
//!   "true"` lets it be.
//! - An update may not leave an allocated address outside the pool (upstream's "pool
//!   addresses do not contain allocated addresses").

use std::net::IpAddr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::address_range::IpRange;
use super::pool::InClusterIPPoolSpec;
use crate::admission::{FieldError, FieldPath};
use crate::conversion::RefVersions;

/// Lets a pool overlap others.
pub const ALLOW_OVERLAP_ANNOTATION: &str = "ipam.drydock.dev/allow-overlap";

const GROUP: &str = "ipam.cluster.x-k8s.io";
const NAMESPACED: &str = "InClusterIPPool";
const GLOBAL: &str = "GlobalInClusterIPPool";

/// The checks of a pool of `kind` (`old`: the stored pool, on update).
pub(crate) fn check(
    kind: &str,
    meta: &ObjectMeta,
    spec: &InClusterIPPoolSpec,
    old: Option<&InClusterIPPoolSpec>,
    refs: &dyn RefVersions,
) -> Vec<FieldError> {
    let mut errs = overlaps(kind, meta, spec, refs);
    if old.is_some_and(|o| o != spec) {
        errs.extend(allocated_outside(kind, meta, spec, refs));
    }
    errs
}

fn allows_overlap(meta: Option<&Value>) -> bool {
    meta.and_then(|m| m["annotations"][ALLOW_OVERLAP_ANNOTATION].as_str()) == Some("true")
}

fn ranges(entries: &[String]) -> Vec<(usize, IpRange)> {
    entries.iter().enumerate().filter_map(|(i, e)| Some((i, IpRange::parse(e).ok()?))).collect()
}

fn overlaps(kind: &str, meta: &ObjectMeta, spec: &InClusterIPPoolSpec, refs: &dyn RefVersions) -> Vec<FieldError> {
    let annotated = meta.annotations.as_ref().and_then(|a| a.get(ALLOW_OVERLAP_ANNOTATION)).map(String::as_str);
    if annotated == Some("true") {
        return Vec::new();
    }
    let name = meta.name.as_deref().unwrap_or_default();
    let namespace = meta.namespace.as_deref();
    let scope = if kind == GLOBAL { None } else { namespace };
    let others = refs
        .stored_list(GROUP, NAMESPACED, scope)
        .into_iter()
        .map(|p| (NAMESPACED, p))
        .chain(refs.stored_list(GROUP, GLOBAL, None).into_iter().map(|p| (GLOBAL, p)));
    let mine = ranges(&spec.addresses);
    let path = FieldPath::new("spec").child("addresses");
    let mut errs = Vec::new();
    for (other_kind, other) in others {
        let m = other.get("metadata");
        let other_name = m.and_then(|m| m["name"].as_str()).unwrap_or_default();
        let other_ns = m.and_then(|m| m["namespace"].as_str());
        if (other_kind == kind && other_name == name && other_ns == namespace) || allows_overlap(m) {
            continue;
        }
        let entries: Vec<String> = other["spec"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect();
        let theirs = ranges(&entries);
        let Some((i, _, j)) =
            mine.iter().find_map(|(i, a)| theirs.iter().find(|(_, b)| a.overlaps(b)).map(|(j, _)| (*i, a, *j)))
        else {
            continue;
        };
        let who = match other_ns {
            Some(ns) => format!("{other_kind} {ns}/{other_name}"),
            None => format!("{other_kind} {other_name}"),
        };
        errs.push(FieldError::invalid(
            path.index(i),
            spec.addresses[i].as_str(),
            format!(
                "overlaps with {who} ({}): both could hand out the same address; annotate a pool \
                 {ALLOW_OVERLAP_ANNOTATION}: \"true\" if that is meant",
                entries[j]
            ),
        ));
    }
    errs
}

fn allocated_outside(
    kind: &str,
    meta: &ObjectMeta,
    spec: &InClusterIPPoolSpec,
    refs: &dyn RefVersions,
) -> Vec<FieldError> {
    let name = meta.name.as_deref().unwrap_or_default();
    let scope = if kind == GLOBAL { None } else { meta.namespace.as_deref() };
    let pool = ranges(&spec.addresses);
    let excluded = ranges(spec.excluded_addresses.as_deref().unwrap_or_default());
    let gateway: Option<IpAddr> = spec.gateway.as_deref().and_then(|g| g.parse().ok());
    let outside: Vec<String> = refs
        .stored_list(GROUP, "IPAddress", scope)
        .into_iter()
        .filter(|a| {
            let r = &a["spec"]["poolRef"];
            r["kind"] == kind && r["name"] == name && r["apiGroup"] == GROUP
        })
        .filter_map(|a| a["spec"]["address"].as_str().map(str::to_string))
        .filter(|a| {
            let Ok(ip) = IpRange::parse(a) else { return false };
            let inside = pool.iter().any(|(_, r)| r.overlaps(&ip)) && !excluded.iter().any(|(_, r)| r.overlaps(&ip));
            !inside || gateway == Some(ip.start)
        })
        .collect();
    if outside.is_empty() {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec.addresses",
        Value::Null,
        format!("pool addresses do not contain allocated addresses: {}", outside.join(", ")),
    )]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Stored pools and addresses, by kind.
    struct Stored(Vec<(&'static str, Value)>);

    impl RefVersions for Stored {
        fn api_version(&self, _: &str, _: &str) -> Option<String> {
            None
        }

        fn stored_list(&self, _group: &str, kind: &str, namespace: Option<&str>) -> Vec<Value> {
            let in_scope = |v: &Value| namespace.is_none_or(|ns| v["metadata"]["namespace"] == ns);
            self.0.iter().filter(|(k, v)| *k == kind && in_scope(v)).map(|(_, v)| v.clone()).collect()
        }
    }

    fn pool(ns: Option<&str>, name: &str, addresses: &[&str]) -> Value {
        json!({"metadata": {"name": name, "namespace": ns}, "spec": {"addresses": addresses, "prefix": 24}})
    }

    fn spec(addresses: &[&str]) -> InClusterIPPoolSpec {
        InClusterIPPoolSpec {
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            prefix: 24,
            ..Default::default()
        }
    }

    fn meta(ns: Option<&str>, name: &str, allow: bool) -> ObjectMeta {
        let annotations = allow.then(|| [(ALLOW_OVERLAP_ANNOTATION.to_string(), "true".to_string())].into());
        ObjectMeta { name: Some(name.into()), namespace: ns.map(str::to_string), annotations, ..Default::default() }
    }

    #[test]
    fn overlaps_are_refused_where_an_address_could_be_handed_out_twice() {
        let stored = Stored(vec![
            (NAMESPACED, pool(Some("a"), "nodes", &["10.0.0.10-10.0.0.20"])),
            (GLOBAL, pool(None, "shared", &["10.1.0.0/24"])),
        ]);
        let same_ns =
            check(NAMESPACED, &meta(Some("a"), "other", false), &spec(&["10.0.0.20-10.0.0.30"]), None, &stored);
        assert_eq!(same_ns.len(), 1, "{same_ns:?}");
        assert!(same_ns[0].body().contains("InClusterIPPool a/nodes (10.0.0.10-10.0.0.20)"), "{}", same_ns[0].body());
        let other_ns = check(NAMESPACED, &meta(Some("b"), "other", false), &spec(&["10.0.0.15"]), None, &stored);
        assert!(other_ns.is_empty(), "namespaces are apart: {other_ns:?}");
        let against_global = check(NAMESPACED, &meta(Some("b"), "x", false), &spec(&["10.1.0.5"]), None, &stored);
        assert_eq!(against_global.len(), 1, "{against_global:?}");
        let global = check(GLOBAL, &meta(None, "g", false), &spec(&["10.0.0.12"]), None, &stored);
        assert_eq!(global.len(), 1, "a global pool against every namespace: {global:?}");
        assert!(check(GLOBAL, &meta(None, "g", true), &spec(&["10.0.0.12"]), None, &stored).is_empty(), "annotated");
        let itself =
            check(NAMESPACED, &meta(Some("a"), "nodes", false), &spec(&["10.0.0.10-10.0.0.20"]), None, &stored);
        assert!(itself.is_empty(), "a pool does not overlap itself: {itself:?}");
    }

    #[test]
    fn a_pool_does_not_shrink_under_its_addresses() {
        let address = |ip: &str| {
            json!({"metadata": {"name": ip, "namespace": "a"},
                   "spec": {"address": ip, "poolRef": {"apiGroup": GROUP, "kind": NAMESPACED, "name": "nodes"}}})
        };
        let stored = Stored(vec![
            (NAMESPACED, pool(Some("a"), "nodes", &["10.0.0.10-10.0.0.20"])),
            ("IPAddress", address("10.0.0.12")),
        ]);
        let (m, old) = (meta(Some("a"), "nodes", false), spec(&["10.0.0.10-10.0.0.20"]));
        assert!(check(NAMESPACED, &m, &spec(&["10.0.0.10-10.0.0.30"]), Some(&old), &stored).is_empty(), "grown");
        let shrunk = check(NAMESPACED, &m, &spec(&["10.0.0.15-10.0.0.20"]), Some(&old), &stored);
        assert_eq!(shrunk.len(), 1, "{shrunk:?}");
        assert!(shrunk[0].body().contains("pool addresses do not contain allocated addresses: 10.0.0.12"));
        let mut excluding = old.clone();
        excluding.excluded_addresses = Some(vec!["10.0.0.12".into()]);
        assert_eq!(check(NAMESPACED, &m, &excluding, Some(&old), &stored).len(), 1, "excluded under an address");
    }
}
