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
pub mod cache;
pub mod components;
pub mod defaults;
pub mod escalation;
pub mod rules;
pub mod stored;

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject};

pub use attributes::{Attributes, ResourceAttributes};

use super::{MASTERS_GROUP, UserInfo};

/// Where a logical cluster's RBAC objects are read from.
pub trait Policy {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding>;
    /// In every namespace.
    fn role_bindings(&self) -> Vec<RoleBinding>;
    /// In every namespace.
    fn roles(&self) -> Vec<Role>;
    fn cluster_roles(&self) -> Vec<ClusterRole>;
}

/// A policy with no objects: the defaults alone.
pub struct NoObjects;

impl Policy for NoObjects {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
        Vec::new()
    }
    fn role_bindings(&self) -> Vec<RoleBinding> {
        Vec::new()
    }
    fn roles(&self) -> Vec<Role> {
        Vec::new()
    }
    fn cluster_roles(&self) -> Vec<ClusterRole> {
        Vec::new()
    }
}

/// What the authorizer decided, and why (kube-apiserver's reason strings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// A logical cluster's policy with the defaults under it, read once and resolved: each
/// role's rules, aggregation done. Decisions read nothing else.
#[derive(Debug, Default)]
pub struct Compiled {
    cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// By namespace.
    role_bindings: HashMap<String, Vec<RoleBinding>>,
    /// By (namespace, name).
    roles: HashMap<(String, String), Vec<PolicyRule>>,
    /// By name, aggregated.
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
}

impl Compiled {
    /// Reads `policy` and resolves it over the defaults.
    pub fn new(policy: &dyn Policy) -> Self {
        let mut cluster_roles = policy.cluster_roles();
        let stored: HashSet<String> = cluster_roles.iter().filter_map(|r| r.metadata.name.clone()).collect();
        cluster_roles
            .extend(defaults::cluster_roles().iter().filter(|r| !stored.contains(name_of(&r.metadata))).cloned());
        // Aggregated rules follow the matched roles in name order, as the store lists them:
        // the same rules whether the roles are stored yet or only defaults.
        cluster_roles.sort_by(|a, b| name_of(&a.metadata).cmp(name_of(&b.metadata)));
        let mut cluster_role_bindings = policy.cluster_role_bindings();
        let stored: HashSet<String> = cluster_role_bindings.iter().filter_map(|b| b.metadata.name.clone()).collect();
        cluster_role_bindings.extend(
            defaults::cluster_role_bindings().iter().filter(|b| !stored.contains(name_of(&b.metadata))).cloned(),
        );
        let resolved = cluster_roles
            .iter()
            .map(|r| (name_of(&r.metadata).to_string(), aggregate(r, &cluster_roles, &mut HashSet::new())))
            .collect();
        let mut role_bindings: HashMap<String, Vec<RoleBinding>> = HashMap::new();
        for b in policy.role_bindings() {
            role_bindings.entry(b.metadata.namespace.clone().unwrap_or_default()).or_default().push(b);
        }
        let roles = policy
            .roles()
            .into_iter()
            .map(|r| {
                let key = (r.metadata.namespace.clone().unwrap_or_default(), name_of(&r.metadata).to_string());
                (key, r.rules.unwrap_or_default())
            })
            .collect();
        Self { cluster_role_bindings, role_bindings, roles, cluster_roles: resolved }
    }

    /// The rules `role_ref` grants, read in `namespace` for a Role.
    fn rules_of(&self, role_ref: &RoleRef, namespace: Option<&str>) -> Result<&[PolicyRule], String> {
        match (role_ref.kind.as_str(), namespace) {
            ("ClusterRole", _) => self
                .cluster_roles
                .get(&role_ref.name)
                .map(Vec::as_slice)
                .ok_or_else(|| format!("clusterrole.rbac.authorization.k8s.io \"{}\" not found", role_ref.name)),
            ("Role", Some(ns)) => self
                .roles
                .get(&(ns.to_string(), role_ref.name.clone()))
                .map(Vec::as_slice)
                .ok_or_else(|| format!("role.rbac.authorization.k8s.io \"{}\" not found", role_ref.name)),
            (kind, _) => Err(format!("unknown roleRef kind {kind:?}")),
        }
    }

    /// Every grant `user` holds where `namespace` (none: cluster-wide only) is concerned.
    fn grants<'a>(&'a self, user: &UserInfo, namespace: Option<&str>, errors: &mut Vec<String>) -> Vec<Grant<'a>> {
        let mut out = Vec::new();
        for b in &self.cluster_role_bindings {
            if let Some(subject) = naming(b.subjects.as_deref(), user, None) {
                match self.rules_of(&b.role_ref, None) {
                    Ok(rules) => out.push(Grant {
                        binding: Binding::Cluster(name_of(&b.metadata)),
                        role: &b.role_ref,
                        subject,
                        rules,
                    }),
                    Err(e) => errors.push(e),
                }
            }
        }
        let in_ns = namespace
            .filter(|n| !n.is_empty())
            .and_then(|ns| self.role_bindings.get_key_value(ns).map(|(ns, b)| (ns.as_str(), b)));
        if let Some((ns, bindings)) = in_ns {
            for b in bindings {
                if let Some(subject) = naming(b.subjects.as_deref(), user, Some(ns)) {
                    match self.rules_of(&b.role_ref, Some(ns)) {
                        Ok(rules) => out.push(Grant {
                            binding: Binding::Namespaced(name_of(&b.metadata), ns),
                            role: &b.role_ref,
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

    /// The rules of a ClusterRole, aggregation done.
    pub fn cluster_role_rules(&self, name: &str) -> Option<&[PolicyRule]> {
        self.cluster_roles.get(name).map(Vec::as_slice)
    }
}

/// The rules of a ClusterRole: for an aggregated one, those of every ClusterRole its
/// selectors match (through further aggregated roles, without looping).
fn aggregate(role: &ClusterRole, all: &[ClusterRole], seen: &mut HashSet<String>) -> Vec<PolicyRule> {
    if !seen.insert(name_of(&role.metadata).to_string()) {
        return Vec::new();
    }
    let Some(selectors) = role.aggregation_rule.as_ref().and_then(|a| a.cluster_role_selectors.as_ref()) else {
        return role.rules.clone().unwrap_or_default();
    };
    let selectors: Vec<_> =
        selectors.iter().filter_map(|s| drydock_api::selector::Selector::parse(s, &Default::default()).ok()).collect();
    let mut out = Vec::new();
    for other in all {
        let labels = other.metadata.labels.clone().unwrap_or_default();
        if selectors.iter().any(|s| !s.is_empty() && s.matches(&labels)) {
            for rule in aggregate(other, all, seen) {
                if !out.contains(&rule) {
                    out.push(rule);
                }
            }
        }
    }
    out
}

/// Which binding a grant comes from.
enum Binding<'a> {
    Cluster(&'a str),
    Namespaced(&'a str, &'a str),
}

/// What one binding gives a user.
struct Grant<'a> {
    binding: Binding<'a>,
    role: &'a RoleRef,
    subject: &'a Subject,
    rules: &'a [PolicyRule],
}

impl Grant<'_> {
    /// kube-apiserver's reason for an allowed request.
    fn reason(&self) -> String {
        let binding = match &self.binding {
            Binding::Cluster(name) => format!("ClusterRoleBinding \"{name}\""),
            Binding::Namespaced(name, ns) => format!("RoleBinding \"{name}/{ns}\""),
        };
        format!(
            "RBAC: allowed by {binding} of {} \"{}\" to {}",
            self.role.kind,
            self.role.name,
            rules::describe_subject(self.subject)
        )
    }
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

fn naming<'a>(subjects: Option<&'a [Subject]>, user: &UserInfo, binding_ns: Option<&str>) -> Option<&'a Subject> {
    subjects.unwrap_or_default().iter().find(|s| rules::names(s, user, binding_ns))
}

/// Decides whether `user` may do `a` under `policy`.
pub fn authorize(policy: &Compiled, user: &UserInfo, a: &Attributes) -> Decision {
    decide(policy, user, a, true)
}

/// [`authorize`] without the reason of an allowed request, which only reviews show: every
/// request asks this, and most are allowed.
pub fn authorize_request(policy: &Compiled, user: &UserInfo, a: &Attributes) -> Decision {
    decide(policy, user, a, false)
}

fn decide(policy: &Compiled, user: &UserInfo, a: &Attributes, explain_allowed: bool) -> Decision {
    if user.groups.iter().any(|g| g == MASTERS_GROUP) {
        return Decision { allowed: true, reason: String::new() };
    }
    let mut errors = Vec::new();
    let namespace = a.resource.as_ref().and_then(|r| r.namespace.as_deref());
    for g in policy.grants(user, namespace, &mut errors) {
        if g.rules.iter().any(|r| rules::allows(r, a)) {
            let reason = if explain_allowed { g.reason() } else { String::new() };
            return Decision { allowed: true, reason };
        }
    }
    let reason = if errors.is_empty() { String::new() } else { format!("RBAC: [{}]", errors.join(", ")) };
    Decision { allowed: false, reason }
}

/// The rules `user` holds in `namespace` (with those held cluster-wide), as
/// SelfSubjectRulesReview lists them, and the bindings that could not be read.
pub fn rules_for(policy: &Compiled, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
    let mut errors = Vec::new();
    let mut out: Vec<PolicyRule> = Vec::new();
    for g in policy.grants(user, Some(namespace), &mut errors) {
        for r in g.rules {
            if !out.contains(r) {
                out.push(r.clone());
            }
        }
    }
    (out, errors)
}

#[cfg(test)]
mod tests;
