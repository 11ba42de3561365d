//! IPAddressClaim and IPAddress admission (v1beta2, the stored version): pool references
//! and address fields must be usable, and both specs are immutable (an allocation is
//! replaced, never edited).

use std::net::IpAddr;

use super::pool_admission::max_prefix;
use super::v1beta2::{IPAddress, IPAddressClaim, IPPoolReference};
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable;

fn validate_pool_ref(r: &IPPoolReference, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if r.kind.is_empty() {
        errs.push(FieldError::required(path.child("kind"), "must be set"));
    }
    if r.name.is_empty() {
        errs.push(FieldError::required(path.child("name"), "must be set"));
    }
    errs
}

pub(crate) struct IPAddressClaimAdmission;

impl KindAdmission for IPAddressClaimAdmission {
    type Object = IPAddressClaim;

    fn validate(&self, c: &IPAddressClaim, old: Option<&IPAddressClaim>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_pool_ref(&c.spec.pool_ref, &spec.child("poolRef"));
        if let Some(old) = old {
            errs.extend(immutable(&spec, &c.spec, &old.spec));
        }
        errs
    }
}

pub(crate) struct IPAddressAdmission;

impl KindAdmission for IPAddressAdmission {
    type Object = IPAddress;

    fn validate(&self, a: &IPAddress, old: Option<&IPAddress>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_pool_ref(&a.spec.pool_ref, &spec.child("poolRef"));
        if a.spec.claim_ref.name.is_empty() {
            errs.push(FieldError::required(spec.child("claimRef").child("name"), "must be set"));
        }
        let family = match a.spec.address.parse::<IpAddr>() {
            Ok(ip) => Some(ip.is_ipv4()),
            Err(_) => {
                errs.push(FieldError::invalid(
                    spec.child("address"),
                    a.spec.address.as_str(),
                    "not a valid IP address",
                ));
                None
            }
        };
        let prefix = a.spec.prefix;
        if prefix < 0 || family.is_some_and(|v4| prefix > max_prefix(v4)) || prefix > max_prefix(false) {
            let detail = match family {
                Some(v4) => format!("must be between 0 and {} for this address", max_prefix(v4)),
                None => "must be between 0 and 128".to_string(),
            };
            errs.push(FieldError::invalid(spec.child("prefix"), prefix, detail));
        }
        if let Some(gw) = &a.spec.gateway {
            match gw.parse::<IpAddr>() {
                Err(_) => errs.push(FieldError::invalid(spec.child("gateway"), gw.as_str(), "not a valid IP address")),
                Ok(ip) if family.is_some_and(|v4| v4 != ip.is_ipv4()) => errs.push(FieldError::invalid(
                    spec.child("gateway"),
                    gw.as_str(),
                    "must be of the same IP family as the address",
                )),
                Ok(_) => {}
            }
        }
        if let Some(old) = old {
            errs.extend(immutable(&spec, &a.spec, &old.spec));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn address() -> Value {
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta2", "kind": "IPAddress",
            "metadata": { "name": "m-0", "namespace": "ns" },
            "spec": {
                "claimRef": { "name": "m-0" },
                "poolRef": { "apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "p" },
                "address": "10.0.0.10", "prefix": 24, "gateway": "10.0.0.1"
            }
        })
    }

    #[test]
    fn addresses() {
        let a = Typed(IPAddressAdmission);
        let old = admit(&a, address(), None).unwrap();
        let cases = [
            (json!({ "spec": { "address": "10.0.0" } }), vec!["spec.address"]),
            (json!({ "spec": { "prefix": 33 } }), vec!["spec.prefix"]),
            (json!({ "spec": { "gateway": "fd00::1" } }), vec!["spec.gateway"]),
            (
                json!({ "spec": { "poolRef": { "kind": "" }, "claimRef": { "name": "" } } }),
                vec!["spec.poolRef.kind", "spec.claimRef.name"],
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&address(), &patch), None)), want, "{patch}");
        }
        let v6 = merged(&address(), &json!({ "spec": { "address": "fd00::10", "prefix": 64, "gateway": "fd00::1" } }));
        assert!(admit(&a, v6, None).is_ok());
        let relabeled = merged(&old, &json!({ "metadata": { "labels": { "a": "b" } } }));
        assert!(admit(&a, relabeled, Some(old.clone())).is_ok());
        let moved = merged(&old, &json!({ "spec": { "address": "10.0.0.11" } }));
        assert_eq!(error_fields(&admit(&a, moved, Some(old))), ["spec"]);
    }

    #[test]
    fn claims() {
        let claim = json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta2", "kind": "IPAddressClaim",
            "metadata": { "name": "m-0", "namespace": "ns" },
            "spec": { "clusterName": "c1", "poolRef": { "apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "p" } }
        });
        let a = Typed(IPAddressClaimAdmission);
        let old = admit(&a, claim.clone(), None).unwrap();
        assert_eq!(
            error_fields(&admit(&a, merged(&claim, &json!({ "spec": { "poolRef": { "name": "" } } })), None)),
            ["spec.poolRef.name"]
        );
        let status = merged(&old, &json!({ "status": { "addressRef": { "name": "m-0" } } }));
        assert!(admit(&a, status, Some(old.clone())).is_ok());
        let repointed = merged(&old, &json!({ "spec": { "poolRef": { "name": "q" } } }));
        assert_eq!(error_fields(&admit(&a, repointed, Some(old))), ["spec"]);
    }
}
