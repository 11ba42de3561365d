//! Job and CronJob defaults, the selector and labels kube-apiserver generates for a Job,
//! and the restart policy a Job's pods must have.

use drydock_api::FieldError;
use serde_json::{Map, Value, json};

use super::pod::{self, validate_pod_spec};
use super::{child, existing, set_default, spec};

const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_NAME: &str = "job-name";

/// `SetDefaults_JobSpec` minus the pod template.
fn job_spec(spec: &mut Map<String, Value>) {
    if spec.get("completions").is_none_or(Value::is_null) && spec.get("parallelism").is_none_or(Value::is_null) {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if spec.get("backoffLimitPerIndex").is_some_and(|v| !v.is_null()) { i32::MAX } else { 6 };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let replacement =
        if spec.get("podFailurePolicy").is_some_and(|v| !v.is_null()) { "Failed" } else { "TerminatingOrFailed" };
    set_default(spec, "podReplacementPolicy", json!(replacement));
}

/// A Job: defaults, and unless `manualSelector` is set, a selector on the Job's uid with
/// the matching labels on its pod template (and on the Job, when it has none).
pub(super) fn job(obj: &mut Value, old: Option<&Value>) {
    let name = obj["metadata"]["name"].clone();
    let uid = obj["metadata"]["uid"].clone();
    let Some(spec) = spec(obj) else { return };
    job_spec(spec);
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    if old.is_none() && !manual && uid.is_string() {
        spec.insert("selector".into(), json!({"matchLabels": {CONTROLLER_UID: uid}}));
        if let Some(labels) =
            child(spec, "template").and_then(|t| child(t, "metadata")).and_then(|m| child(m, "labels"))
        {
            labels.insert(LEGACY_CONTROLLER_UID.into(), uid.clone());
            labels.insert(CONTROLLER_UID.into(), uid.clone());
            labels.insert(LEGACY_JOB_NAME.into(), name.clone());
            labels.insert(JOB_NAME.into(), name.clone());
        }
    }
    if let Some(t) = existing(spec, "template") {
        pod::template(t);
    }
    let template_labels = obj["spec"]["template"]["metadata"]["labels"].clone();
    if template_labels.as_object().is_some_and(|m| !m.is_empty())
        && let Some(meta) = obj.as_object_mut().and_then(|m| child(m, "metadata"))
        && meta.get("labels").and_then(Value::as_object).is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), template_labels);
    }
}

pub(super) fn cron_job(obj: &mut Value, _old: Option<&Value>) {
    let Some(spec) = spec(obj) else { return };
    set_default(spec, "concurrencyPolicy", json!("Allow"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "successfulJobsHistoryLimit", json!(3));
    set_default(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(t) =
        existing(spec, "jobTemplate").and_then(|j| existing(j, "spec")).and_then(|s| existing(s, "template"))
    {
        pod::template(t);
    }
}

fn restart_policy(spec: &Value, path: &str) -> Option<FieldError> {
    let policy = spec["restartPolicy"].as_str().unwrap_or_default();
    match policy {
        "OnFailure" | "Never" => None,
        "" => Some(FieldError::required(path, "valid values: \"OnFailure\", \"Never\"")),
        other => Some(FieldError::not_supported(path, other, &["OnFailure", "Never"])),
    }
}

pub(super) fn validate_job(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let pod_spec = &spec["template"]["spec"];
    let mut errs: Vec<FieldError> = restart_policy(pod_spec, "spec.template.spec.restartPolicy").into_iter().collect();
    errs.extend(validate_pod_spec(pod_spec, "spec.template.spec"));
    if let Some(old) = old
        && old["spec"]["selector"] != spec["selector"]
    {
        errs.push(FieldError::invalid("spec.selector", spec["selector"].clone(), "field is immutable"));
    }
    errs
}

pub(super) fn validate_cron_job(obj: &Value, _old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    if spec["schedule"].as_str().is_none_or(str::is_empty) {
        errs.push(FieldError::required("spec.schedule", ""));
    }
    let pod_spec = &spec["jobTemplate"]["spec"]["template"]["spec"];
    errs.extend(restart_policy(pod_spec, "spec.jobTemplate.spec.template.spec.restartPolicy"));
    errs.extend(validate_pod_spec(pod_spec, "spec.jobTemplate.spec.template.spec"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_gets_a_generated_selector_and_labels() {
        let mut j = json!({"metadata":{"name":"pi","uid":"u1"},
            "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}});
        job(&mut j, None);
        assert_eq!(j["spec"]["selector"], json!({"matchLabels":{CONTROLLER_UID:"u1"}}));
        assert_eq!(j["spec"]["template"]["metadata"]["labels"][LEGACY_JOB_NAME], "pi");
        assert_eq!(j["metadata"]["labels"][JOB_NAME], "pi");
        assert_eq!((j["spec"]["completions"].clone(), j["spec"]["backoffLimit"].clone()), (json!(1), json!(6)));
        assert!(validate_job(&j, None).is_empty());
    }

    #[test]
    fn job_pods_must_not_restart_always() {
        let mut j = json!({"metadata":{"name":"pi","uid":"u1"},
            "spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}});
        job(&mut j, None);
        let errs = validate_job(&j, None);
        assert_eq!(
            errs[0].to_string(),
            "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
        );
    }
}
