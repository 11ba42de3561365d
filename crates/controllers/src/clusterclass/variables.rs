//! `status.variables`: the variables Clusters of the class can set, each with its
//! definitions and where they come from, and `VariablesReady` (v1beta1
//! `VariablesReconciled`).
//!
//! Variables of external patches come from a Runtime SDK extension's DiscoverVariables
//! hook, which drydock does not run: a class with such patches reports
//! `VariablesReady=False` (`VariableDiscoveryFailed`) naming them, rather than a list that
//! silently lacks their variables.

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

/// The source of a variable defined in the class itself.
const INLINE: &str = "inline";

/// `status.variables` and the variables' conditions.
pub fn set_status(cc: &mut ClusterClass, now: &Time) {
    let variables: Vec<ClusterClassStatusVariable> = cc
        .spec
        .variables
        .iter()
        .flatten()
        .map(|v| ClusterClassStatusVariable {
            name: v.name.clone(),
            definitions_conflict: Some(false),
            definitions: vec![ClusterClassStatusVariableDefinition {
                from: INLINE.to_string(),
                required: v.required,
                deprecated_v1beta1_metadata: v.deprecated_v1beta1_metadata.clone(),
                schema: v.schema.clone(),
            }],
        })
        .collect();
    let undiscovered: Vec<&str> = cc
        .spec
        .patches
        .iter()
        .flatten()
        .filter(|p| p.external.as_ref().is_some_and(|e| e.discover_variables_extension.is_some()))
        .map(|p| p.name.as_str())
        .collect();
    let ready = if undiscovered.is_empty() {
        Observed::true_(VARIABLES_READY, VARIABLES_READY_REASON)
    } else {
        Observed::false_(
            VARIABLES_READY,
            VARIABLE_DISCOVERY_FAILED_REASON,
            format!(
                "drydock runs no Runtime SDK extensions: the variables of patches {} cannot be discovered",
                undiscovered.join(", ")
            ),
        )
    };
    if ready.status == drydock_api::capi::v1beta2_conditions::Status::True {
        cc.mark_true(VARIABLES_RECONCILED, now.clone());
    } else {
        cc.mark_false(
            VARIABLES_RECONCILED,
            VARIABLE_DISCOVERY_FAILED_REASON,
            Severity::Error,
            &ready.message,
            now.clone(),
        );
    }
    cc.set_v1beta2(ready, now);
    cc.status.get_or_insert_with(Default::default).variables = (!variables.is_empty()).then_some(variables);
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
        set_status(&mut cc, &now());
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

    #[test]
    fn variables_of_external_patches_cannot_be_discovered() {
        let mut cc = class(json!({"patches": [
            {"name": "inline-patch", "definitions": []},
            {"name": "from-extension", "external": {"discoverVariablesExtension": "discover.my-extension"}},
        ]}));
        set_status(&mut cc, &now());
        let ready = cc.v1beta2_conditions().iter().find(|c| c.type_ == VARIABLES_READY).expect("VariablesReady");
        assert_eq!(V2Status::parse(&ready.status), V2Status::False);
        assert_eq!(ready.reason, VARIABLE_DISCOVERY_FAILED_REASON);
        assert!(
            ready.message.contains("from-extension") && !ready.message.contains("inline-patch"),
            "{}",
            ready.message
        );
        assert!(!cc.is_condition_true(VARIABLES_RECONCILED));
        assert_eq!(
            cc.status.as_ref().and_then(|s| s.variables.as_ref()).map(Vec::len),
            Some(2),
            "inline ones still listed"
        );
    }

    #[test]
    fn recomputing_an_unchanged_class_changes_nothing() {
        let mut cc = class(json!({}));
        set_status(&mut cc, &now());
        let once = cc.clone();
        set_status(&mut cc, &Time(jiff::Timestamp::from_second(1_700_000_100).expect("time")));
        assert_eq!(cc, once);
    }
}
