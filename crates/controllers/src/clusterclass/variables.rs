//! `status.variables`: the variables Clusters of the class can set, each with its
//! definitions and where they come from (`inline`, or the name of the external patch whose
//! extension's DiscoverVariables hook answered it), and `VariablesReady` (v1beta1
//! `VariablesReconciled`). A variable defined differently in two places is marked
//! `definitionsConflict`, and `VariablesReady` is False then, as it is when a discovery
//! call failed.

use drydock_api::capi::condition_types::VARIABLES_RECONCILED;
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{
    ClusterClass, ClusterClassStatusVariable, ClusterClassStatusVariableDefinition,
};
use drydock_api::capi::v1beta2_conditions::names::{
    VARIABLE_DISCOVERY_FAILED_REASON, VARIABLES_READY, VARIABLES_READY_REASON,
};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::discovery::Discovered;

/// The source of a variable defined in the class itself.
const INLINE: &str = "inline";

/// `status.variables` and the variables' conditions, from the class's own variables and
/// what the extensions answered.
pub fn set_status(cc: &mut ClusterClass, discovered: &[Discovered], now: &Time) {
    let mut variables: Vec<ClusterClassStatusVariable> = Vec::new();
    let mut add = |name: &str, definition: ClusterClassStatusVariableDefinition| match variables
        .iter_mut()
        .find(|v| v.name == name)
    {
        Some(v) => v.definitions.push(definition),
        None => variables.push(ClusterClassStatusVariable {
            name: name.to_string(),
            definitions_conflict: Some(false),
            definitions: vec![definition],
        }),
    };
    for v in cc.spec.variables.iter().flatten() {
        let definition = ClusterClassStatusVariableDefinition {
            from: INLINE.to_string(),
            required: v.required,
            deprecated_v1beta1_metadata: v.deprecated_v1beta1_metadata.clone(),
            schema: v.schema.clone(),
        };
        add(&v.name, definition);
    }
    let mut failures = Vec::new();
    for d in discovered {
        match &d.result {
            Ok(vars) => {
                for v in vars {
                    let definition = ClusterClassStatusVariableDefinition {
                        from: d.patch.clone(),
                        required: v.required,
                        deprecated_v1beta1_metadata: v.metadata.clone(),
                        schema: v.schema.clone(),
                    };
                    add(&v.name, definition);
                }
            }
            Err(e) => failures.push(format!("patch {:?}: {e}", d.patch)),
        }
    }
    let mut conflicting = Vec::new();
    for v in &mut variables {
        let differ = v.definitions.windows(2).any(|w| !same_definition(&w[0], &w[1]));
        v.definitions_conflict = Some(differ);
        if differ {
            conflicting.push(v.name.clone());
        }
    }
    if !conflicting.is_empty() {
        failures.push(format!("the following variables have conflicting definitions: {}", conflicting.join(", ")));
    }
    set_conditions(cc, &failures, now);
    cc.status.get_or_insert_with(Default::default).variables = (!variables.is_empty()).then_some(variables);
}

fn same_definition(a: &ClusterClassStatusVariableDefinition, b: &ClusterClassStatusVariableDefinition) -> bool {
    a.required == b.required && a.schema == b.schema && a.deprecated_v1beta1_metadata == b.deprecated_v1beta1_metadata
}

/// `VariablesReady` and the v1beta1 `VariablesReconciled`: True without failures.
fn set_conditions(cc: &mut ClusterClass, failures: &[String], now: &Time) {
    if failures.is_empty() {
        cc.mark_true(VARIABLES_RECONCILED, now.clone());
        cc.set_v1beta2(Observed::true_(VARIABLES_READY, VARIABLES_READY_REASON), now);
        return;
    }
    let message = format!("VariableDiscovery failed: {}", failures.join("; "));
    cc.mark_false(VARIABLES_RECONCILED, VARIABLE_DISCOVERY_FAILED_REASON, Severity::Error, &message, now.clone());
    cc.set_v1beta2(Observed::false_(VARIABLES_READY, VARIABLE_DISCOVERY_FAILED_REASON, message), now);
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::v1beta2_conditions::Status as V2Status;
    use serde_json::json;

    use super::*;

    fn class(extra: serde_json::Value) -> ClusterClass {
        let mut spec = json!({
            "infrastructure": {"templateRef": {"apiVersion": "x.example/v1", "kind": "T", "name": "t"}},
            "controlPlane": {"templateRef": {"apiVersion": "x.example/v1", "kind": "T", "name": "t"}},
            "variables": [
                {"name": "region", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}},
                {"name": "replicas", "required": false, "schema": {"openAPIV3Schema": {"type": "integer", "default": 3}}},
            ],
        });
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": {"name": "cc", "namespace": "default", "generation": 2},
            "spec": spec,
        }))
        .expect("class")
    }

    fn now() -> Time {
        Time(jiff::Timestamp::from_second(1_700_000_000).expect("time"))
    }

    #[test]
    fn inline_variables_are_listed_with_their_definitions() {
        let mut cc = class(json!({}));
        set_status(&mut cc, &[], &now());
        let status = cc.status.as_ref().expect("status");
        let variables = status.variables.as_ref().expect("variables");
        assert_eq!(variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["region", "replicas"]);
        let region = &variables[0];
        assert_eq!(region.definitions_conflict, Some(false));
        assert_eq!(region.definitions.len(), 1);
        assert_eq!((region.definitions[0].from.as_str(), region.definitions[0].required), ("inline", true));
        assert_eq!(region.definitions[0].schema, cc.spec.variables.as_ref().expect("spec")[0].schema);
        let ready = cc.v1beta2_conditions().iter().find(|c| c.type_ == VARIABLES_READY).expect("VariablesReady");
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("True", VARIABLES_READY_REASON));
        assert_eq!(ready.observed_generation, Some(2));
        assert!(cc.is_condition_true(VARIABLES_RECONCILED), "the v1beta1 condition follows");
    }

    fn discovered(patch: &str, vars: serde_json::Value) -> Discovered {
        let vars: Vec<crate::runtime_sdk::wire::DiscoveredVariable> = serde_json::from_value(vars).expect("variables");
        Discovered { patch: patch.into(), result: Ok(vars) }
    }

    #[test]
    fn discovered_variables_are_listed_from_their_patch() {
        let mut cc = class(json!({}));
        let answer = discovered(
            "ext-patch",
            json!([{"name": "imageRepository", "required": false,
                "schema": {"openAPIV3Schema": {"type": "string", "default": "registry.k8s.io"}}}]),
        );
        set_status(&mut cc, &[answer], &now());
        let variables = cc.status.as_ref().and_then(|s| s.variables.clone()).expect("variables");
        let image = variables.iter().find(|v| v.name == "imageRepository").expect("discovered");
        assert_eq!((image.definitions[0].from.as_str(), image.definitions_conflict), ("ext-patch", Some(false)));
        assert!(cc.is_condition_true(VARIABLES_RECONCILED));
        let defs = cc.variable_definitions();
        assert_eq!(defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["region", "replicas", "imageRepository"]);
    }

    #[test]
    fn conflicts_and_failed_discoveries_make_variables_not_ready() {
        let mut cc = class(json!({}));
        let conflicting = discovered(
            "ext-patch",
            json!([{"name": "region", "required": false, "schema": {"openAPIV3Schema": {"type": "integer"}}}]),
        );
        let same = discovered(
            "other",
            json!([{"name": "region", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}}]),
        );
        let failed = Discovered {
            patch: "broken".into(),
            result: Err(crate::runtime_sdk::Error::UnknownHandler { handler: "vars.missing".into() }),
        };
        set_status(&mut cc, &[conflicting, same, failed], &now());
        let ready = cc.v1beta2_conditions().iter().find(|c| c.type_ == VARIABLES_READY).expect("VariablesReady");
        assert_eq!(
            (V2Status::parse(&ready.status), ready.reason.as_str()),
            (V2Status::False, VARIABLE_DISCOVERY_FAILED_REASON)
        );
        assert!(
            ready.message.contains("patch \"broken\": extension handler \"vars.missing\" is not registered"),
            "{}",
            ready.message
        );
        assert!(ready.message.contains("conflicting definitions: region"), "{}", ready.message);
        let variables = cc.status.as_ref().and_then(|s| s.variables.clone()).expect("variables");
        let region = variables.iter().find(|v| v.name == "region").expect("region");
        assert_eq!((region.definitions.len(), region.definitions_conflict), (3, Some(true)));
        assert!(!cc.is_condition_true(VARIABLES_RECONCILED));
    }

    #[test]
    fn recomputing_an_unchanged_class_changes_nothing() {
        let mut cc = class(json!({}));
        set_status(&mut cc, &[], &now());
        let once = cc.clone();
        set_status(&mut cc, &[], &Time(jiff::Timestamp::from_second(1_700_000_100).expect("time")));
        assert_eq!(cc, once);
    }
}
