//! InClusterIPPool and GlobalInClusterIPPool admission: every address entry parses, one
//! family throughout, entries inside the prefix of the first address and not overlapping
//! each other, a gateway and exclusions of the same family.
//!
//! Checks against other stored objects (overlapping pools, shrinking under live allocations)
//! are in `pool_stored`; a pool in use is held by its finalizer.

use std::net::IpAddr;

use ipnet::IpNet;

use super::address_range::IpRange;
use super::pool::{GlobalInClusterIPPool, InClusterIPPool, InClusterIPPoolSpec};
use super::pool_stored;
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;
use crate::conversion::RefVersions;

/// Longest prefix of a family.
pub fn max_prefix(ipv4: bool) -> i32 {
    if ipv4 { 32 } else { 128 }
}

fn parse_list(entries: &[String], path: &FieldPath, errs: &mut Vec<FieldError>) -> Vec<(usize, IpRange)> {
    let mut ranges = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match IpRange::parse(e) {
            Ok(r) => ranges.push((i, r)),
            Err(err) => errs.push(FieldError::invalid(path.index(i), e.as_str(), err.to_string())),
        }
    }
    ranges
}

fn single_family(ranges: &[(usize, IpRange)], path: &FieldPath, errs: &mut Vec<FieldError>) -> Option<bool> {
    let first = ranges.first()?.1.is_ipv4();
    if ranges.iter().any(|(_, r)| r.is_ipv4() != first) {
        errs.push(FieldError::invalid(path.as_str(), "", "provided addresses are of mixed IP families"));
        return None;
    }
    Some(first)
}

/// Validates a pool spec (both pool kinds share it).
pub(crate) fn validate_pool(spec: &InClusterIPPoolSpec) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    let addr_path = path.child("addresses");
    if spec.addresses.is_empty() {
        errs.push(FieldError::required(addr_path.as_str(), "addresses is required"));
    }
    let ranges = parse_list(&spec.addresses, &addr_path, &mut errs);
    let family = single_family(&ranges, &addr_path, &mut errs);

    let prefix_path = path.child("prefix");
    if spec.prefix < 0 {
        errs.push(FieldError::invalid(prefix_path.as_str(), spec.prefix, "must be greater than or equal to 0"));
    } else if let (Some(ipv4), Some((_, first))) = (family, ranges.first()) {
        if spec.prefix > max_prefix(ipv4) {
            errs.push(FieldError::invalid(
                prefix_path.as_str(),
                spec.prefix,
                format!("must be at most {} for {} addresses", max_prefix(ipv4), if ipv4 { "IPv4" } else { "IPv6" }),
            ));
        } else if let Ok(subnet) = IpNet::new(first.start, spec.prefix as u8).map(|n| n.trunc()) {
            for (i, r) in &ranges {
                if !r.within(&subnet) {
                    errs.push(FieldError::invalid(
                        addr_path.index(*i),
                        spec.addresses[*i].as_str(),
                        format!("belongs to a different subnet than the first address ({subnet})"),
                    ));
                }
            }
        }
    }

    // Overlapping entries would count addresses twice; list each address once.
    let mut sorted = ranges.clone();
    sorted.sort_by_key(|(_, r)| (r.is_ipv4(), super::address_range::ip_to_u128(r.start)));
    for pair in sorted.windows(2) {
        let ((i, a), (j, b)) = (pair[0], pair[1]);
        if a.overlaps(&b) {
            let (first, second) = (i.min(j), i.max(j));
            errs.push(FieldError::invalid(
                addr_path.index(second),
                spec.addresses[second].as_str(),
                format!("overlaps with spec.addresses[{first}] ({})", spec.addresses[first]),
            ));
        }
    }

    if let Some(gw) = &spec.gateway {
        let gw_path = path.child("gateway");
        match gw.parse::<IpAddr>() {
            Err(_) => errs.push(FieldError::invalid(gw_path.as_str(), gw.as_str(), "must be a valid IP address")),
            Ok(ip) if family.is_some_and(|v4| v4 != ip.is_ipv4()) => errs.push(FieldError::invalid(
                gw_path.as_str(),
                gw.as_str(),
                "must be of the same IP family as the addresses",
            )),
            Ok(_) => {}
        }
    }

    if let Some(excluded) = &spec.excluded_addresses {
        let ex_path = path.child("excludedAddresses");
        let ex = parse_list(excluded, &ex_path, &mut errs);
        if let (Some(ex_family), Some(family)) = (single_family(&ex, &ex_path, &mut errs), family)
            && ex_family != family
        {
            errs.push(FieldError::invalid(ex_path.as_str(), "", "must be of the same IP family as the addresses"));
        }
    }

    if let Some(g) = spec.address_reuse_grace_period_seconds.filter(|g| *g < 0) {
        errs.push(FieldError::invalid(
            path.child("addressReuseGracePeriodSeconds"),
            g,
            "must be greater than or equal to 0",
        ));
    }
    errs
}

pub(crate) struct InClusterIPPoolAdmission;

impl KindAdmission for InClusterIPPoolAdmission {
    type Object = InClusterIPPool;

    fn validate(&self, p: &InClusterIPPool, _old: Option<&InClusterIPPool>) -> Vec<FieldError> {
        validate_pool(&p.spec)
    }

    fn admit_against(
        &self,
        p: &mut InClusterIPPool,
        old: Option<&InClusterIPPool>,
        refs: &dyn RefVersions,
    ) -> Vec<FieldError> {
        pool_stored::check("InClusterIPPool", &p.metadata, &p.spec, old.map(|o| &o.spec), refs)
    }
}

pub(crate) struct GlobalInClusterIPPoolAdmission;

impl KindAdmission for GlobalInClusterIPPoolAdmission {
    type Object = GlobalInClusterIPPool;

    fn validate(&self, p: &GlobalInClusterIPPool, _old: Option<&GlobalInClusterIPPool>) -> Vec<FieldError> {
        validate_pool(&p.spec.0)
    }

    fn admit_against(
        &self,
        p: &mut GlobalInClusterIPPool,
        old: Option<&GlobalInClusterIPPool>,
        refs: &dyn RefVersions,
    ) -> Vec<FieldError> {
        pool_stored::check("GlobalInClusterIPPool", &p.metadata, &p.spec.0, old.map(|o| &o.spec.0), refs)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn pool() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1alpha2", "kind": "InClusterIPPool",
            "metadata": { "name": "p", "namespace": "ns" },
            "spec": { "addresses": ["10.0.0.10-10.0.0.20", "10.0.0.64/28", "10.0.0.200"], "prefix": 24, "gateway": "10.0.0.1" }
        })
    }

    #[test]
    fn pools() {
        let a = Typed(InClusterIPPoolAdmission);
        assert!(admit(&a, pool(), None).is_ok());
        let cases = [
            (json!({ "spec": { "addresses": [] } }), vec!["spec.addresses"]),
            (json!({ "spec": { "addresses": ["10.0.0.10", "ten"] } }), vec!["spec.addresses[1]"]),
            (json!({ "spec": { "addresses": ["10.0.0.10", "fd00::1"], "gateway": null } }), vec!["spec.addresses"]),
            (json!({ "spec": { "prefix": 33 } }), vec!["spec.prefix"]),
            (json!({ "spec": { "prefix": -1 } }), vec!["spec.prefix"]),
            (json!({ "spec": { "addresses": ["10.0.0.10", "10.0.1.10"] } }), vec!["spec.addresses[1]"]),
            (json!({ "spec": { "addresses": ["10.0.0.10-10.0.0.20", "10.0.0.15"] } }), vec!["spec.addresses[1]"]),
            (json!({ "spec": { "addresses": ["10.0.0.15", "10.0.0.0/28"] } }), vec!["spec.addresses[1]"]),
            (json!({ "spec": { "gateway": "10.0.0.256" } }), vec!["spec.gateway"]),
            (json!({ "spec": { "gateway": "fd00::1" } }), vec!["spec.gateway"]),
            (json!({ "spec": { "excludedAddresses": ["10.0.0.12", "bad"] } }), vec!["spec.excludedAddresses[1]"]),
            (json!({ "spec": { "excludedAddresses": ["fd00::1"] } }), vec!["spec.excludedAddresses"]),
            (json!({ "spec": { "addressReuseGracePeriodSeconds": -1 } }), vec!["spec.addressReuseGracePeriodSeconds"]),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&pool(), &patch), None)), want, "{patch}");
        }
        let v6 =
            json!({ "spec": { "addresses": ["fd00::10-fd00::20", "fd00::/120"], "prefix": 64, "gateway": "fd00::1" } });
        // fd00::/120 contains fd00::10-20: overlap.
        assert_eq!(error_fields(&admit(&a, merged(&pool(), &v6), None)), ["spec.addresses[1]"]);
        let v6 = json!({ "spec": { "addresses": ["fd00::10-fd00::20", "fd00::1:0/120"], "prefix": 64, "gateway": "fd00::1" } });
        assert!(admit(&a, merged(&pool(), &v6), None).is_ok());
    }

    #[test]
    fn global_pools_share_the_rules() {
        let mut p = pool();
        p["kind"] = json!("GlobalInClusterIPPool");
        p["metadata"] = json!({ "name": "g" });
        let a = Typed(GlobalInClusterIPPoolAdmission);
        assert!(admit(&a, p.clone(), None).is_ok());
        assert_eq!(error_fields(&admit(&a, merged(&p, &json!({ "spec": { "prefix": 40 } })), None)), ["spec.prefix"]);
    }
}
