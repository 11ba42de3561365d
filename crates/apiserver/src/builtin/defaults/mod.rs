//! kube-apiserver's defaulting (and the validation clients most often trip over) for the
//! built-in kinds, as an [`Admission`] per kind. Each kind's hooks are plain functions
//! listed in [`KINDS`]; kinds without an entry get no admission at all, so their writes
//! pay nothing.

mod apps;
mod batch;
mod cluster;
mod pod;
mod service;

use std::sync::Arc;

use drydock_api::{Admission, FieldError, Operation};
use serde_json::{Map, Value};

pub(crate) use service::{node_port_fields, uses_node_ports};

type DefaultFn = fn(&mut Value, Option<&Value>);
type ValidateFn = fn(&Value, Option<&Value>) -> Vec<FieldError>;

fn no_validation(_: &Value, _: Option<&Value>) -> Vec<FieldError> {
    Vec::new()
}

/// (group, kind, defaulting, validation).
const KINDS: &[(&str, &str, DefaultFn, ValidateFn)] = &[
    ("", "Pod", pod::pod, pod::validate_pod),
    ("", "PodTemplate", pod::pod_template_kind, no_validation),
    ("", "ReplicationController", apps::replication_controller, apps::validate_replication_controller),
    ("", "Service", service::default, service::validate),
    ("", "PersistentVolumeClaim", cluster::persistent_volume_claim, no_validation),
    ("", "PersistentVolume", cluster::persistent_volume, no_validation),
    ("", "Endpoints", cluster::endpoints, no_validation),
    ("apps", "Deployment", apps::deployment, apps::validate_selector_workload),
    ("apps", "ReplicaSet", apps::replica_set, apps::validate_selector_workload),
    ("apps", "StatefulSet", apps::stateful_set, apps::validate_selector_workload),
    ("apps", "DaemonSet", apps::daemon_set, apps::validate_selector_workload),
    ("batch", "Job", batch::job, batch::validate_job),
    ("batch", "CronJob", batch::cron_job, batch::validate_cron_job),
    ("autoscaling", "HorizontalPodAutoscaler", cluster::horizontal_pod_autoscaler, no_validation),
    ("discovery.k8s.io", "EndpointSlice", cluster::endpoint_slice, no_validation),
    ("networking.k8s.io", "NetworkPolicy", cluster::network_policy, no_validation),
    ("rbac.authorization.k8s.io", "RoleBinding", cluster::role_binding, no_validation),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", cluster::role_binding, no_validation),
    ("storage.k8s.io", "StorageClass", cluster::storage_class, no_validation),
    ("storage.k8s.io", "CSIDriver", cluster::csi_driver, no_validation),
    ("scheduling.k8s.io", "PriorityClass", cluster::priority_class, no_validation),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", cluster::webhooks, no_validation),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration", cluster::webhooks, no_validation),
];

/// One built-in kind's defaulting and validation.
struct Builtin {
    default: DefaultFn,
    validate: ValidateFn,
}

impl Admission for Builtin {
    fn default_with_old(&self, obj: &mut Value, old: Option<&Value>, _op: Operation) -> Result<(), Vec<FieldError>> {
        (self.default)(obj, old);
        Ok(())
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        (self.validate)(obj, old)
    }
}

/// The admission of a built-in kind, if it has defaults or checks.
pub(super) fn admission_for(group: &str, kind: &str) -> Option<Arc<dyn Admission>> {
    KINDS.iter().find(|(g, k, _, _)| *g == group && *k == kind).map(|(_, _, default, validate)| {
        Arc::new(Builtin { default: *default, validate: *validate }) as Arc<dyn Admission>
    })
}

/// Sets `key` where it is absent or null.
fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    let slot = map.entry(key.to_string()).or_insert(Value::Null);
    if slot.is_null() {
        *slot = value;
    }
}

/// The object under `key`, created empty when absent or null; `None` when something else
/// (not an object) is there, which the schema check reports.
fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let slot = map.entry(key.to_string()).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// The object under `key` when there is one.
fn existing<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The objects of the list under `key`.
fn items<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

/// The object's `spec`, created when absent.
fn spec(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    child(obj.as_object_mut()?, "spec")
}
