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
