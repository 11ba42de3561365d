//! core/v1 kinds beyond Namespace, ConfigMap, Secret and Event.

use k8s_openapi::api::core::v1 as core;

use super::kind::{AGE, BASE, Kind, WORKLOAD_WIDE, schema_of};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "Node",
        plural: "nodes",
        namespaced: false,
        short: &["no"],
        status: true,
        columns: &[
            ("Status", "string", "#node.status", 0),
            ("Roles", "string", "#node.roles", 0),
            AGE,
            ("Version", "string", ".status.nodeInfo.kubeletVersion", 0),
            ("Internal-IP", "string", "#node.address:InternalIP", 1),
            ("External-IP", "string", "#node.address:ExternalIP", 1),
            ("OS-Image", "string", ".status.nodeInfo.osImage", 1),
            ("Kernel-Version", "string", ".status.nodeInfo.kernelVersion", 1),
            ("Container-Runtime", "string", ".status.nodeInfo.containerRuntimeVersion", 1),
        ],
        selectable: &["spec.providerID", "spec.unschedulable"],
        schema: schema_of::<core::Node>,
        ..BASE
    },
    Kind {
        kind: "Pod",
        plural: "pods",
        short: &["po"],
        categories: &["all"],
        status: true,
        columns: &[
            ("Ready", "string", "#pod.ready", 0),
            ("Status", "string", "#pod.status", 0),
            ("Restarts", "integer", "#pod.restarts", 0),
            AGE,
            ("IP", "string", "#pod.ip", 1),
            ("Node", "string", "#none:.spec.nodeName", 1),
            ("Nominated Node", "string", "#none:.status.nominatedNodeName", 1),
            ("Readiness Gates", "string", "#pod.readinessGates", 1),
        ],
        selectable: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        schema: schema_of::<core::Pod>,
        ..BASE
    },
    Kind {
        kind: "Service",
        plural: "services",
        short: &["svc"],
        categories: &["all"],
        status: true,
        columns: &[
            ("Type", "string", ".spec.type", 0),
            ("Cluster-IP", "string", "#none:.spec.clusterIP", 0),
            ("External-IP", "string", "#svc.externalIP", 0),
            ("Port(s)", "string", "#svc.ports", 0),
            AGE,
            ("Selector", "string", "#map:.spec.selector", 1),
        ],
        selectable: &["spec.clusterIP", "spec.type"],
        schema: schema_of::<core::Service>,
        ..BASE
    },
    Kind {
        kind: "Endpoints",
        plural: "endpoints",
        short: &["ep"],
        columns: &[("Endpoints", "string", "#ep.endpoints", 0), AGE],
        schema: schema_of::<core::Endpoints>,
        ..BASE
    },
    Kind {
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        short: &["sa"],
        columns: &[("Secrets", "integer", "#len:.secrets", 0), AGE],
        schema: schema_of::<core::ServiceAccount>,
        ..BASE
    },
    Kind {
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        namespaced: false,
        short: &["pv"],
        status: true,
        columns: &[
            ("Capacity", "string", "#none:.spec.capacity.storage", 0),
            ("Access Modes", "string", "#accessModes:.spec.accessModes", 0),
            ("Reclaim Policy", "string", ".spec.persistentVolumeReclaimPolicy", 0),
            ("Status", "string", ".status.phase", 0),
            ("Claim", "string", "#pv.claim", 0),
            ("StorageClass", "string", "#empty:.spec.storageClassName", 0),
            ("VolumeAttributesClass", "string", "#unset:.spec.volumeAttributesClassName", 0),
            ("Reason", "string", "#empty:.status.reason", 0),
            AGE,
            ("VolumeMode", "string", ".spec.volumeMode", 1),
        ],
        schema: schema_of::<core::PersistentVolume>,
        ..BASE
    },
    Kind {
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        short: &["pvc"],
        status: true,
        columns: &[
            ("Status", "string", ".status.phase", 0),
            ("Volume", "string", "#empty:.spec.volumeName", 0),
            ("Capacity", "string", "#empty:.status.capacity.storage", 0),
            ("Access Modes", "string", "#accessModes:.status.accessModes", 0),
            ("StorageClass", "string", "#empty:.spec.storageClassName", 0),
            ("VolumeAttributesClass", "string", "#unset:.spec.volumeAttributesClassName", 0),
            AGE,
            ("VolumeMode", "string", ".spec.volumeMode", 1),
        ],
        schema: schema_of::<core::PersistentVolumeClaim>,
        ..BASE
    },
    Kind {
        kind: "LimitRange",
        plural: "limitranges",
        short: &["limits"],
        columns: &[("Created At", "date", "#createdAt", 0)],
        schema: schema_of::<core::LimitRange>,
        ..BASE
    },
    Kind {
        kind: "ResourceQuota",
        plural: "resourcequotas",
        short: &["quota"],
        status: true,
        columns: &[AGE, ("Request", "string", "#quota.request", 0), ("Limit", "string", "#quota.limit", 0)],
        schema: schema_of::<core::ResourceQuota>,
        ..BASE
    },
    Kind {
        kind: "ReplicationController",
        plural: "replicationcontrollers",
        short: &["rc"],
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
            ("Selector", "string", "#map:.spec.selector", 1),
        ],
        schema: schema_of::<core::ReplicationController>,
        ..BASE
    },
    Kind {
        kind: "PodTemplate",
        plural: "podtemplates",
        columns: &[
            ("Containers", "string", "#containers:.template.spec", 0),
            ("Images", "string", "#images:.template.spec", 0),
            ("Pod Labels", "string", "#map:.template.metadata.labels", 0),
        ],
        schema: schema_of::<core::PodTemplate>,
        ..BASE
    },
];
