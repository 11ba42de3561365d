//! apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.

use k8s_openapi::api::apps::v1 as apps;

use super::kind::{AGE, BASE, Kind, WORKLOAD_WIDE, schema_of};

const APPS: Kind = Kind { group: "apps", ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "Deployment",
        plural: "deployments",
        short: &["deploy"],
        categories: &["all"],
        status: true,
        scale_selector: Some(".spec.selector"),
        columns: &[
            ("Ready", "string", "#ratio:.status.readyReplicas,.spec.replicas", 0),
            ("Up-to-date", "integer", "#int:.status.updatedReplicas", 0),
            ("Available", "integer", "#int:.status.availableReplicas", 0),
            AGE,
            WORKLOAD_WIDE[0],
            WORKLOAD_WIDE[1],
            WORKLOAD_WIDE[2],
        ],
        schema: schema_of::<apps::Deployment>,
        ..APPS
    },
    Kind {
        kind: "ReplicaSet",
        plural: "replicasets",
        short: &["rs"],
        categories: &["all"],
        status: true,
        scale_selector: Some(".spec.selector"),
        columns: &[
            ("Desired", "integer", "#int:.spec.replicas", 0),
            ("Current", "integer", "#int:.status.replicas", 0),
            ("Ready", "integer", "#int:.status.readyReplicas", 0),
            AGE,
            WORKLOAD_WIDE[0],
            WORKLOAD_WIDE[1],
            WORKLOAD_WIDE[2],
        ],
        schema: schema_of::<apps::ReplicaSet>,
        ..APPS
    },
    Kind {
        kind: "StatefulSet",
        plural: "statefulsets",
        short: &["sts"],
        categories: &["all"],
        status: true,
        scale_selector: Some(".spec.selector"),
        columns: &[
            ("Ready", "string", "#ratio:.status.readyReplicas,.spec.replicas", 0),
            AGE,
            WORKLOAD_WIDE[0],
            WORKLOAD_WIDE[1],
        ],
        schema: schema_of::<apps::StatefulSet>,
        ..APPS
    },
    Kind {
        kind: "DaemonSet",
        plural: "daemonsets",
        short: &["ds"],
        categories: &["all"],
        status: true,
        columns: &[
            ("Desired", "integer", "#int:.status.desiredNumberScheduled", 0),
            ("Current", "integer", "#int:.status.currentNumberScheduled", 0),
            ("Ready", "integer", "#int:.status.numberReady", 0),
            ("Up-to-date", "integer", "#int:.status.updatedNumberScheduled", 0),
            ("Available", "integer", "#int:.status.numberAvailable", 0),
            ("Node Selector", "string", "#map:.spec.template.spec.nodeSelector", 0),
            AGE,
            WORKLOAD_WIDE[0],
            WORKLOAD_WIDE[1],
            WORKLOAD_WIDE[2],
        ],
        schema: schema_of::<apps::DaemonSet>,
        ..APPS
    },
    Kind {
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        columns: &[("Controller", "string", "#controller", 0), ("Revision", "integer", ".revision", 0), AGE],
        schema: schema_of::<apps::ControllerRevision>,
        ..APPS
    },
];
