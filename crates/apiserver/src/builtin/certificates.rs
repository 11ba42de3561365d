//! certificates.k8s.io/v1: CertificateSigningRequest (stored; nothing signs it).

use k8s_openapi::api::certificates::v1 as certificates;

use super::kind::{AGE, BASE, Kind, schema_of};

pub(super) const KINDS: &[Kind] = &[Kind {
    group: "certificates.k8s.io",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    namespaced: false,
    short: &["csr"],
    status: true,
    columns: &[
        AGE,
        ("SignerName", "string", ".spec.signerName", 0),
        ("Requestor", "string", ".spec.username", 0),
        ("RequestedDuration", "string", "#csr.duration", 0),
        ("Condition", "string", "#csr.condition", 0),
    ],
    selectable: &["spec.signerName"],
    schema: schema_of::<certificates::CertificateSigningRequest>,
    ..BASE
}];
