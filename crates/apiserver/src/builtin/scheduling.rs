//! scheduling.k8s.io/v1 PriorityClass and node.k8s.io/v1 RuntimeClass: what a scheduler
//! and kubelet would read; stored only.

use k8s_openapi::api::node::v1 as node;
use k8s_openapi::api::scheduling::v1 as scheduling;

use super::kind::{AGE, BASE, Kind, schema_of};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "scheduling.k8s.io",
        kind: "PriorityClass",
        plural: "priorityclasses",
        namespaced: false,
        short: &["pc"],
        columns: &[
            ("Value", "integer", ".value", 0),
            ("Global-Default", "boolean", "#bool:.globalDefault", 0),
            AGE,
            ("PreemptionPolicy", "string", ".preemptionPolicy", 0),
        ],
        schema: schema_of::<scheduling::PriorityClass>,
        ..BASE
    },
    Kind {
        group: "node.k8s.io",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        namespaced: false,
        columns: &[("Handler", "string", ".handler", 0), AGE],
        schema: schema_of::<node::RuntimeClass>,
        ..BASE
    },
];
