//! Authorization with RBAC, evaluated as kube-apiserver evaluates it: members of
//! `system:masters` are allowed before any rule is read; anyone else is allowed what a
//! ClusterRoleBinding, or a RoleBinding in the request's namespace, grants them, and refused
//! with 403 otherwise.
//!
//! Each logical cluster has its own policy: its stored Roles, ClusterRoles and bindings,
//! over the default policy every fresh cluster starts with ([`defaults`]), which applies
//! wherever no stored object of the same name replaces it (so a simulated workload cluster
//! needs no writes to have it). An aggregated ClusterRole holds the rules of every
//! ClusterRole its selectors match, read when a request is decided.

pub mod attributes;
pub mod defaults;
pub mod rules;
pub mod stored;

use std::collections::HashSet;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject};

pub use attributes::{Attributes, ResourceAttributes};

use super::{MASTERS_GROUP, UserInfo};

/// Where a logical cluster's RBAC objects are read from.
pub trait Policy {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding>;
    fn role_bindings(&self, namespace: &str) -> Vec<RoleBinding>;
    fn role(&self, namespace: &str, name: &str) -> Option<Role>;
    fn cluster_roles(&self) -> Vec<ClusterRole>;
}

/// What the authorizer decided, and why (kube-apiserver's reason strings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// A logical cluster's policy with the defaults under it, read once per decision.
struct Effective<'a> {
    policy: &'a dyn Policy,
    cluster_roles: Vec<ClusterRole>,
}

impl<'a> Effective<'a> {
    fn new(policy: &'a dyn Policy) -> Self {
        let mut cluster_roles = policy.cluster_roles();
        let stored: HashSet<String> = cluster_roles.iter().filter_map(|r| r.metadata.name.clone()).collect();
        cluster_roles
            .extend(defaults::cluster_roles().iter().filter(|r| !stored.contains(name_of(&r.metadata))).cloned());
        Self { policy, cluster_roles }
    }

    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
        let mut bindings = self.policy.cluster_role_bindings();
        let stored: HashSet<String> = bindings.iter().filter_map(|b| b.metadata.name.clone()).collect();
        bindings.extend(
            defaults::cluster_role_bindings().iter().filter(|b| !stored.contains(name_of(&b.metadata))).cloned(),
        );
        bindings
    }

    fn cluster_role(&self, name: &str) -> Option<&ClusterRole> {
        self.cluster_roles.iter().find(|r| name_of(&r.metadata) == name)
    }

    /// The rules of a ClusterRole: for an aggregated one, those of every ClusterRole its
    /// selectors match (through further aggregated roles, without looping).
    fn cluster_role_rules(&self, role: &ClusterRole, seen: &mut HashSet<String>) -> Vec<PolicyRule> {
        if !seen.insert(name_of(&role.metadata).to_string()) {
            return Vec::new();
        }
        let Some(selectors) = role.aggregation_rule.as_ref().and_then(|a| a.cluster_role_selectors.as_ref()) else {
            return role.rules.clone().unwrap_or_default();
        };
        let selectors: Vec<_> = selectors
            .iter()
            .filter_map(|s| drydock_api::selector::Selector::parse(s, &Default::default()).ok())
            .collect();
        let mut out = Vec::new();
        for other in &self.cluster_roles {
            let labels = other.metadata.labels.clone().unwrap_or_default();
            if selectors.iter().any(|s| !s.is_empty() && s.matches(&labels)) {
                for rule in self.cluster_role_rules(other, seen) {
                    if !out.contains(&rule) {
                        out.push(rule);
                    }
                }
            }
        }
        out
    }

    /// The rules `role_ref` grants, read in `namespace` for a Role.
    fn rules_of(&self, role_ref: &RoleRef, namespace: Option<&str>) -> Result<Vec<PolicyRule>, String> {
        match (role_ref.kind.as_str(), namespace) {
            ("ClusterRole", _) => match self.cluster_role(&role_ref.name) {
                Some(role) => Ok(self.cluster_role_rules(role, &mut HashSet::new())),
                None => Err(format!("clusterrole.rbac.authorization.k8s.io \"{}\" not found", role_ref.name)),
            },
            ("Role", Some(ns)) => match self.policy.role(ns, &role_ref.name) {
                Some(role) => Ok(role.rules.unwrap_or_default()),
                None => Err(format!("role.rbac.authorization.k8s.io \"{}\" not found", role_ref.name)),
            },
            (kind, _) => Err(format!("unknown roleRef kind {kind:?}")),
        }
    }

    /// Every grant `user` holds where `namespace` (none: cluster-wide only) is concerned:
    /// (what the binding is called in a reason, the subject that named the user, the rules).
    fn grants(&self, user: &UserInfo, namespace: Option<&str>, errors: &mut Vec<String>) -> Vec<Grant> {
        let mut out = Vec::new();
        for b in self.cluster_role_bindings() {
            if let Some(subject) = naming(b.subjects.as_deref(), user, None) {
                match self.rules_of(&b.role_ref, None) {
                    Ok(rules) => out.push(Grant {
                        binding: format!("ClusterRoleBinding \"{}\"", name_of(&b.metadata)),
                        role: format!("{} \"{}\"", b.role_ref.kind, b.role_ref.name),
                        subject,
                        rules,
                    }),
                    Err(e) => errors.push(e),
                }
            }
        }
        if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
            for b in self.policy.role_bindings(ns) {
                if let Some(subject) = naming(b.subjects.as_deref(), user, Some(ns)) {
                    match self.rules_of(&b.role_ref, Some(ns)) {
                        Ok(rules) => out.push(Grant {
                            binding: format!("RoleBinding \"{}/{ns}\"", name_of(&b.metadata)),
                            role: format!("{} \"{}\"", b.role_ref.kind, b.role_ref.name),
                            subject,
                            rules,
                        }),
                        Err(e) => errors.push(e),
                    }
                }
            }
        }
        out
    }
}

/// What one binding gives a user.
struct Grant {
    binding: String,
    role: String,
    subject: Subject,
    rules: Vec<PolicyRule>,
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

fn naming(subjects: Option<&[Subject]>, user: &UserInfo, binding_ns: Option<&str>) -> Option<Subject> {
    subjects.unwrap_or_default().iter().find(|s| rules::names(s, user, binding_ns)).cloned()
}

/// Decides whether `user` may do `a` under `policy`.
pub fn authorize(policy: &dyn Policy, user: &UserInfo, a: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == MASTERS_GROUP) {
        return Decision { allowed: true, reason: String::new() };
    }
    let effective = Effective::new(policy);
    let mut errors = Vec::new();
    let namespace = a.resource.as_ref().and_then(|r| r.namespace.as_deref());
    for g in effective.grants(user, namespace, &mut errors) {
        if g.rules.iter().any(|r| rules::allows(r, a)) {
            let reason =
                format!("RBAC: allowed by {} of {} to {}", g.binding, g.role, rules::describe_subject(&g.subject));
            return Decision { allowed: true, reason };
        }
    }
    let reason = if errors.is_empty() { String::new() } else { format!("RBAC: [{}]", errors.join(", ")) };
    Decision { allowed: false, reason }
}

/// The rules `user` holds in `namespace` (with those held cluster-wide), as
/// SelfSubjectRulesReview lists them, and whether some binding could not be read.
pub fn rules_for(policy: &dyn Policy, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
    let effective = Effective::new(policy);
    let mut errors = Vec::new();
    let mut out: Vec<PolicyRule> = Vec::new();
    for g in effective.grants(user, Some(namespace), &mut errors) {
        for r in g.rules {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    (out, errors)
}

/// The rules of a ClusterRole as its aggregation makes them (none if there is no such role).
pub fn cluster_role_rules(policy: &dyn Policy, name: &str) -> Option<Vec<PolicyRule>> {
    let effective = Effective::new(policy);
    effective.cluster_role(name).map(|r| effective.cluster_role_rules(r, &mut HashSet::new()))
}

#[cfg(test)]
mod tests;
