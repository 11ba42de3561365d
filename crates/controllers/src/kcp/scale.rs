//! Scaling decisions, as upstream makes them: where the next Machine goes (the control
//! plane failure domain with the fewest up-to-date Machines) and which Machine goes first
//! on scale down (preferred Machines, then the failure domain with the most Machines, then
//! the oldest). Pure functions over the Machines, so they are tested without a cluster.

use std::cmp::Ordering;

use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::{DELETE_MACHINE_ANNOTATION, has_annotation};
use kube::ResourceExt;

/// The Cluster's failure domains usable by control plane Machines, sorted.
pub fn control_plane_failure_domains(cluster: &Cluster) -> Vec<String> {
    cluster
        .status
        .as_ref()
        .and_then(|s| s.failure_domains.as_ref())
        .map(|fds| {
            let mut names: Vec<String> =
                fds.iter().filter(|fd| fd.control_plane == Some(true)).map(|fd| fd.name.clone()).collect();
            names.sort();
            names
        })
        .unwrap_or_default()
}

/// Oldest first; the name breaks ties so the choice is stable.
fn age_order(a: &Machine, b: &Machine) -> Ordering {
    let ts = |m: &Machine| m.metadata.creation_timestamp.as_ref().map(|t| t.0);
    ts(a).cmp(&ts(b)).then_with(|| a.name_any().cmp(&b.name_any()))
}

fn in_domain(m: &Machine, fd: &str) -> bool {
    m.spec.failure_domain.as_deref() == Some(fd)
}

/// The failure domain for a new Machine: fewest up-to-date Machines, then fewest Machines,
/// then name. `None` when the Cluster has no control plane failure domains.
pub fn next_failure_domain(
    fds: &[String],
    machines: &[&Machine],
    up_to_date: impl Fn(&Machine) -> bool,
) -> Option<String> {
    fds.iter()
        .min_by_key(|fd| {
            let here = machines.iter().filter(|m| in_domain(m, fd));
            let all = here.clone().count();
            let current = here.filter(|m| up_to_date(m)).count();
            (current, all, (*fd).clone())
        })
        .cloned()
}

/// What scale down may prefer, beyond age and placement.
pub struct Preferences<'a> {
    /// Machines not matching the spec (rollouts).
    pub outdated: &'a dyn Fn(&Machine) -> bool,
    /// Machines whose etcd member is already removed: an interrupted scale down resumes
    /// with the same Machine.
    pub member_removed: &'a dyn Fn(&Machine) -> bool,
    /// Machines with unhealthy control plane components.
    pub unhealthy: &'a dyn Fn(&Machine) -> bool,
}

/// The Machine to remove when scaling down, or `None` when there are no Machines.
pub fn select_for_scale_down<'a>(
    machines: &[&'a Machine],
    fds: &[String],
    prefs: &Preferences<'_>,
) -> Option<&'a Machine> {
    let marked = |m: &Machine| has_annotation(Some(m.annotations()), DELETE_MACHINE_ANNOTATION);
    let tiers: [&dyn Fn(&Machine) -> bool; 6] = [
        &|m| (prefs.member_removed)(m),
        &|m| (prefs.outdated)(m) && marked(m),
        &|m| marked(m),
        &|m| (prefs.outdated)(m) && (prefs.unhealthy)(m),
        &|m| (prefs.outdated)(m),
        &|_| true,
    ];
    let eligible: Vec<&Machine> = tiers
        .iter()
        .map(|tier| machines.iter().copied().filter(|m| tier(m)).collect::<Vec<_>>())
        .find(|set| !set.is_empty())?;
    // A Machine outside every control plane failure domain goes first.
    let outside =
        eligible.iter().copied().filter(|m| m.spec.failure_domain.as_ref().is_none_or(|fd| !fds.contains(fd)));
    if let Some(m) = outside.min_by(|a, b| age_order(a, b)) {
        return Some(m);
    }
    // Otherwise the most crowded domain that has an eligible Machine.
    let fd = fds.iter().filter(|fd| eligible.iter().any(|m| in_domain(m, fd))).max_by(|a, b| {
        let count = |fd: &str| machines.iter().filter(|m| in_domain(m, fd)).count();
        count(a).cmp(&count(b)).then_with(|| b.cmp(a))
    })?;
    eligible.into_iter().filter(|m| in_domain(m, fd)).min_by(|a, b| age_order(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn m(name: &str, age: i64, fd: Option<&str>) -> Machine {
        let mut m = Machine::new(name, Default::default());
        m.metadata.creation_timestamp = Some(Time(jiff::Timestamp::from_second(1_000_000 - age).unwrap()));
        m.spec.failure_domain = fd.map(str::to_string);
        m.spec.version = Some("v1.30.2".into());
        m
    }

    fn prefs<'a>(outdated: &'a dyn Fn(&Machine) -> bool, removed: &'a dyn Fn(&Machine) -> bool) -> Preferences<'a> {
        Preferences { outdated, member_removed: removed, unhealthy: &|_| false }
    }

    fn pick(machines: &[Machine], fds: &[&str], p: &Preferences<'_>) -> String {
        let refs: Vec<&Machine> = machines.iter().collect();
        let fds: Vec<String> = fds.iter().map(|s| s.to_string()).collect();
        select_for_scale_down(&refs, &fds, p).unwrap().name_any()
    }

    #[test]
    fn scale_down_oldest_without_failure_domains() {
        let ms = [m("a", 10, None), m("b", 30, None), m("c", 20, None)];
        assert_eq!(pick(&ms, &[], &prefs(&|_| false, &|_| false)), "b");
    }

    #[test]
    fn scale_down_prefers_the_most_crowded_domain_then_age() {
        let ms = [m("a1", 50, Some("a")), m("b1", 10, Some("b")), m("b2", 20, Some("b")), m("c1", 99, Some("c"))];
        assert_eq!(pick(&ms, &["a", "b", "c"], &prefs(&|_| false, &|_| false)), "b2");
        // A Machine outside every control plane domain goes first, oldest of those.
        let mut ms = ms.to_vec();
        ms.push(m("x", 1, Some("gone")));
        ms.push(m("y", 2, None));
        assert_eq!(pick(&ms, &["a", "b", "c"], &prefs(&|_| false, &|_| false)), "y");
    }

    #[test]
    fn scale_down_preferences() {
        let mut ms = vec![m("a", 30, None), m("b", 20, None), m("c", 10, None)];
        // Outdated Machines go before up-to-date ones, regardless of age.
        let outdated = |m: &Machine| m.name_any() == "c";
        assert_eq!(pick(&ms, &[], &prefs(&outdated, &|_| false)), "c");
        // The delete-machine annotation beats being outdated.
        ms[1].annotations_mut().insert(DELETE_MACHINE_ANNOTATION.into(), String::new());
        assert_eq!(pick(&ms, &[], &prefs(&outdated, &|_| false)), "b");
        // A Machine whose etcd member is already gone finishes its removal first.
        let removed = |m: &Machine| m.name_any() == "a";
        assert_eq!(pick(&ms, &[], &prefs(&outdated, &removed)), "a");
        assert!(select_for_scale_down(&[], &[], &prefs(&outdated, &removed)).is_none());
    }

    #[test]
    fn scale_up_spreads_over_failure_domains() {
        let fds: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        assert_eq!(next_failure_domain(&[], &[], |_| true), None);
        let ms = [m("1", 1, Some("a")), m("2", 1, Some("b"))];
        let refs: Vec<&Machine> = ms.iter().collect();
        assert_eq!(next_failure_domain(&fds, &refs, |_| true).as_deref(), Some("c"));
        // Only up-to-date Machines count first: an outdated one in "a" leaves room there.
        let outdated_a = |m: &Machine| m.name_any() != "1";
        let ms = [m("1", 1, Some("a")), m("2", 1, Some("b")), m("3", 1, Some("c"))];
        let refs: Vec<&Machine> = ms.iter().collect();
        assert_eq!(next_failure_domain(&fds, &refs, outdated_a).as_deref(), Some("a"));
        // Ties on both counts go by name.
        assert_eq!(next_failure_domain(&fds, &refs, |_| true).as_deref(), Some("a"));
    }

    #[test]
    fn failure_domains_of_a_cluster() {
        use drydock_api::capi::core::v1beta2::{ClusterStatus, FailureDomain};
        let mut c = Cluster::new("c", Default::default());
        assert!(control_plane_failure_domains(&c).is_empty());
        let fd = |name: &str, cp: bool| FailureDomain { name: name.into(), control_plane: Some(cp), attributes: None };
        c.status = Some(ClusterStatus {
            failure_domains: Some(vec![fd("z", true), fd("w", false), fd("a", true)]),
            ..Default::default()
        });
        assert_eq!(control_plane_failure_domains(&c), ["a", "z"]);
    }
}
