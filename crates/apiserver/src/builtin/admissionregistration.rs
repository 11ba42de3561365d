//! admissionregistration.k8s.io/v1: webhook configurations and validating admission
//! policies. Stored only: drydock calls no webhooks and evaluates no policies.

use k8s_openapi::api::admissionregistration::v1 as adm;

use super::kind::{AGE, BASE, Kind, schema_of};

const ADM: Kind = Kind { group: "admissionregistration.k8s.io", namespaced: false, ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "MutatingWebhookConfiguration",
        plural: "mutatingwebhookconfigurations",
        columns: &[("Webhooks", "integer", "#len:.webhooks", 0), AGE],
        schema: schema_of::<adm::MutatingWebhookConfiguration>,
        ..ADM
    },
    Kind {
        kind: "ValidatingWebhookConfiguration",
        plural: "validatingwebhookconfigurations",
        columns: &[("Webhooks", "integer", "#len:.webhooks", 0), AGE],
        schema: schema_of::<adm::ValidatingWebhookConfiguration>,
        ..ADM
    },
    Kind {
        kind: "ValidatingAdmissionPolicy",
        plural: "validatingadmissionpolicies",
        status: true,
        columns: &[
            ("Validations", "integer", "#len:.spec.validations", 0),
            ("ParamKind", "string", "#vap.paramKind", 0),
            AGE,
        ],
        schema: schema_of::<adm::ValidatingAdmissionPolicy>,
        ..ADM
    },
    Kind {
        kind: "ValidatingAdmissionPolicyBinding",
        plural: "validatingadmissionpolicybindings",
        columns: &[("PolicyName", "string", ".spec.policyName", 0), ("ParamRef", "string", "#vapb.paramRef", 0), AGE],
        schema: schema_of::<adm::ValidatingAdmissionPolicyBinding>,
        ..ADM
    },
];
