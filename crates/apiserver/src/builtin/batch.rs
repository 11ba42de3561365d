//! batch/v1: Job and CronJob.

use k8s_openapi::api::batch::v1 as batch;

use super::kind::{AGE, BASE, Kind, schema_of};

const BATCH: Kind = Kind { group: "batch", ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "Job",
        plural: "jobs",
        categories: &["all"],
        status: true,
        columns: &[
            ("Status", "string", "#job.status", 0),
            ("Completions", "string", "#job.completions", 0),
            ("Duration", "string", "#job.duration", 0),
            AGE,
            ("Containers", "string", "#containers:.spec.template.spec", 1),
            ("Images", "string", "#images:.spec.template.spec", 1),
            ("Selector", "string", "#selector:.spec.selector", 1),
        ],
        schema: schema_of::<batch::Job>,
        ..BATCH
    },
    Kind {
        kind: "CronJob",
        plural: "cronjobs",
        short: &["cj"],
        categories: &["all"],
        status: true,
        columns: &[
            ("Schedule", "string", ".spec.schedule", 0),
            ("Timezone", "string", "#none:.spec.timeZone", 0),
            ("Suspend", "boolean", ".spec.suspend", 0),
            ("Active", "integer", "#len:.status.active", 0),
            ("Last Schedule", "string", "#ageOr:.status.lastScheduleTime", 0),
            AGE,
            ("Containers", "string", "#containers:.spec.jobTemplate.spec.template.spec", 1),
            ("Images", "string", "#images:.spec.jobTemplate.spec.template.spec", 1),
            ("Selector", "string", "#selector:.spec.jobTemplate.spec.selector", 1),
        ],
        schema: schema_of::<batch::CronJob>,
        ..BATCH
    },
];
