//! storage.k8s.io/v1: StorageClass, CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity.

use k8s_openapi::api::storage::v1 as storage;

use super::kind::{AGE, BASE, Kind, schema_of};

const STORAGE: Kind = Kind { group: "storage.k8s.io", namespaced: false, ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "StorageClass",
        plural: "storageclasses",
        short: &["sc"],
        columns: &[
            ("Provisioner", "string", ".provisioner", 0),
            ("ReclaimPolicy", "string", ".reclaimPolicy", 0),
            ("VolumeBindingMode", "string", ".volumeBindingMode", 0),
            ("AllowVolumeExpansion", "string", "#bool:.allowVolumeExpansion", 0),
            AGE,
        ],
        schema: schema_of::<storage::StorageClass>,
        ..STORAGE
    },
    Kind {
        kind: "CSIDriver",
        plural: "csidrivers",
        columns: &[
            ("AttachRequired", "boolean", ".spec.attachRequired", 0),
            ("PodInfoOnMount", "boolean", ".spec.podInfoOnMount", 0),
            ("StorageCapacity", "boolean", ".spec.storageCapacity", 0),
            ("TokenRequests", "string", "#csidriver.tokenRequests", 0),
            ("RequiresRepublish", "boolean", ".spec.requiresRepublish", 0),
            ("Modes", "string", "#join:.spec.volumeLifecycleModes", 0),
            AGE,
        ],
        schema: schema_of::<storage::CSIDriver>,
        ..STORAGE
    },
    Kind {
        kind: "CSINode",
        plural: "csinodes",
        columns: &[("Drivers", "integer", "#len:.spec.drivers", 0), AGE],
        schema: schema_of::<storage::CSINode>,
        ..STORAGE
    },
    Kind {
        kind: "VolumeAttachment",
        plural: "volumeattachments",
        status: true,
        columns: &[
            ("Attacher", "string", ".spec.attacher", 0),
            ("PV", "string", ".spec.source.persistentVolumeName", 0),
            ("Node", "string", ".spec.nodeName", 0),
            ("Attached", "boolean", "#bool:.status.attached", 0),
            AGE,
        ],
        schema: schema_of::<storage::VolumeAttachment>,
        ..STORAGE
    },
    Kind {
        kind: "CSIStorageCapacity",
        plural: "csistoragecapacities",
        namespaced: true,
        columns: &[("StorageClassName", "string", ".storageClassName", 0), ("Capacity", "string", ".capacity", 0), AGE],
        schema: schema_of::<storage::CSIStorageCapacity>,
        ..STORAGE
    },
];
