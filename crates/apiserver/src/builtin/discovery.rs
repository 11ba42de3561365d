//! discovery.k8s.io/v1: EndpointSlice.

use k8s_openapi::api::discovery::v1 as discovery;

use super::kind::{AGE, BASE, Kind, schema_of};

pub(super) const KINDS: &[Kind] = &[Kind {
    group: "discovery.k8s.io",
    kind: "EndpointSlice",
    plural: "endpointslices",
    columns: &[
        ("AddressType", "string", ".addressType", 0),
        ("Ports", "string", "#eps.ports", 0),
        ("Endpoints", "string", "#eps.endpoints", 0),
        AGE,
    ],
    selectable: &["addressType"],
    schema: schema_of::<discovery::EndpointSlice>,
    ..BASE
}];
