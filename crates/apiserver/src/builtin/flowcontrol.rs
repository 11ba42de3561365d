//! flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration. Stored
//! only: drydock does not apply priority and fairness.

use k8s_openapi::api::flowcontrol::v1 as fc;

use super::kind::{AGE, BASE, Kind, schema_of};

const FC: Kind = Kind { group: "flowcontrol.apiserver.k8s.io", namespaced: false, status: true, ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "FlowSchema",
        plural: "flowschemas",
        columns: &[
            ("PriorityLevel", "string", ".spec.priorityLevelConfiguration.name", 0),
            ("MatchingPrecedence", "string", ".spec.matchingPrecedence", 0),
            ("DistinguisherMethod", "string", "#none:.spec.distinguisherMethod.type", 0),
            AGE,
            ("MissingPL", "string", "#fs.missingPL", 0),
        ],
        schema: schema_of::<fc::FlowSchema>,
        ..FC
    },
    Kind {
        kind: "PriorityLevelConfiguration",
        plural: "prioritylevelconfigurations",
        columns: &[
            ("Type", "string", ".spec.type", 0),
            ("NominalConcurrencyShares", "string", "#none:.spec.limited.nominalConcurrencyShares", 0),
            ("Queues", "string", "#none:.spec.limited.limitResponse.queuing.queues", 0),
            ("HandSize", "string", "#none:.spec.limited.limitResponse.queuing.handSize", 0),
            ("QueueLengthLimit", "string", "#none:.spec.limited.limitResponse.queuing.queueLengthLimit", 0),
            AGE,
        ],
        schema: schema_of::<fc::PriorityLevelConfiguration>,
        ..FC
    },
];
