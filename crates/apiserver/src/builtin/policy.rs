//! policy/v1: PodDisruptionBudget.

use k8s_openapi::api::policy::v1 as policy;

use super::kind::{AGE, BASE, Kind, schema_of};

pub(super) const KINDS: &[Kind] = &[Kind {
    group: "policy",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    short: &["pdb"],
    status: true,
    columns: &[
        ("Min Available", "string", "#na:.spec.minAvailable", 0),
        ("Max Unavailable", "string", "#na:.spec.maxUnavailable", 0),
        ("Allowed Disruptions", "integer", "#int:.status.disruptionsAllowed", 0),
        AGE,
    ],
    schema: schema_of::<policy::PodDisruptionBudget>,
    ..BASE
}];
