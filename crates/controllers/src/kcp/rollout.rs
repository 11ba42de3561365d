//! Which control plane Machines must be replaced (upstream's `NeedsRollout`, §6.4), and so
//! which are up to date (`status.updatedReplicas`, failure domain placement).
//!
//! A Machine is outdated when any of these holds:
//! 1. `rolloutBefore.certificatesExpiryDays` is set and its certificates expire within
//!    that many days. The expiry is `status.certificatesExpiryDate`, else the Machine's
//!    `machine.cluster.x-k8s.io/certificates-expiry` annotation, else (the in-memory
//!    provider issues no real certificates) its creation plus one year, kubeadm's default
//!    certificate lifetime;
//! 2. `rolloutAfter` has passed and the Machine was created before it;
//! 3. its version is not the control plane's;
//! 4. its ClusterConfiguration (recorded in an annotation at creation) differs, DNS aside
//!    (CoreDNS is updated in place); Machines without the annotation are not compared;
//! 5. its KubeadmConfig differs from the control plane's, with upstream's allowances
//!    (below);
//! 6. its infrastructure machine was cloned from another template than
//!    `machineTemplate.infrastructureRef` (templates are rotated, not edited: editing a
//!    template in place rolls nothing).
//!
//! Deleting Machines are never outdated: they are already going.

use std::collections::BTreeMap;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::{
    CERTIFICATES_EXPIRY_ANNOTATION, CLONED_FROM_GROUP_KIND_ANNOTATION, CLONED_FROM_NAME_ANNOTATION,
    KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION,
};
use drydock_api::capi::kubeadm::ClusterConfiguration as V1Beta1ClusterConfiguration;
use drydock_api::capi::kubeadm::conversion::cluster_configuration_up;
use drydock_api::capi::kubeadm::v1beta2::{ClusterConfiguration, KubeadmConfigSpec, KubeadmControlPlane};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;
use serde_json::Value;

use crate::Context;
use crate::framework::referenced;

/// kubeadm's certificate lifetime, assumed when a Machine reports no expiry.
const DEFAULT_CERTIFICATE_LIFETIME: SignedDuration = SignedDuration::from_hours(24 * 365);

/// What is known about a Machine beyond the Machine itself.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// The spec of its KubeadmConfig, when found.
    pub config: Option<KubeadmConfigSpec>,
    /// The template its infrastructure machine was cloned from: (name, `Kind.group`).
    pub cloned_from: Option<(String, String)>,
}

/// The outdated Machines of a control plane, with why, and when to look again for
/// Machines that will become outdated by time alone.
#[derive(Clone, Debug, Default)]
pub struct Outdated {
    reasons: BTreeMap<String, String>,
    /// Until the earliest future `rolloutAfter` or certificate renewal point.
    pub next_check: Option<Duration>,
}

impl Outdated {
    pub fn is_outdated(&self, m: &Machine) -> bool {
        self.reasons.contains_key(&m.name_any())
    }

    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Why a Machine is outdated.
    pub fn reason(&self, name: &str) -> Option<&str> {
        self.reasons.get(name).map(String::as_str)
    }

    /// Judges every Machine from what `facts` knows about it.
    pub fn judge<'a>(
        kcp: &KubeadmControlPlane,
        machines: impl IntoIterator<Item = (&'a Machine, &'a Facts)>,
        now: Timestamp,
    ) -> Self {
        let mut out = Outdated::default();
        for (m, f) in machines {
            if m.metadata.deletion_timestamp.is_some() {
                continue;
            }
            match needs_rollout(kcp, m, f, now) {
                Verdict::Outdated(why) => {
                    out.reasons.insert(m.name_any(), why);
                }
                Verdict::UpToDateFor(d) => {
                    out.next_check = Some(out.next_check.map_or(d, |n| n.min(d)));
                }
                Verdict::UpToDate => {}
            }
        }
        out
    }

    #[cfg(test)]
    pub fn of(names: &[&str]) -> Self {
        Outdated { reasons: names.iter().map(|n| (n.to_string(), "test".to_string())).collect(), next_check: None }
    }
}

/// The verdict on one Machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Outdated(String),
    UpToDate,
    /// Up to date, but time alone makes it outdated after this long.
    UpToDateFor(Duration),
}

/// Whether a (non-deleting) Machine needs replacing, and why.
pub fn needs_rollout(kcp: &KubeadmControlPlane, m: &Machine, f: &Facts, now: Timestamp) -> Verdict {
    let spec = &kcp.spec;
    let mut soonest: Option<SignedDuration> = None;
    let created = m.metadata.creation_timestamp.as_ref().map(|t| t.0);

    let rollout = spec.rollout.as_ref();
    if let Some(days) = rollout.and_then(|r| r.before.as_ref()).and_then(|r| r.certificates_expiry_days)
        && let Some(expiry) = certificates_expiry(m)
    {
        let renew_from = expiry - SignedDuration::from_hours(24 * i64::from(days));
        if now >= renew_from {
            return Verdict::Outdated(format!("its certificates expire at {expiry}, within {days} days"));
        }
        soonest = Some(now.duration_until(renew_from));
    }
    // Creation times have whole seconds, and `drydock rollout restart` writes whole
    // seconds too: a Machine created within the second of rolloutAfter counts as created
    // before it, and the rollout starts once that second is over, so that every Machine
    // it creates is younger and not replaced again.
    if let Some(after) =
        rollout.and_then(|r| r.after.as_ref()).and_then(|t| Timestamp::from_second(t.0.as_second()).ok())
        && created.is_some_and(|c| c <= after)
    {
        let start = after + SignedDuration::from_secs(1);
        if now >= start {
            return Verdict::Outdated(format!("it was created before spec.rollout.after ({after})"));
        }
        let left = now.duration_until(start);
        soonest = Some(soonest.map_or(left, |s| s.min(left)));
    }
    match m.spec.version.as_deref() {
        Some(v) if v == spec.version => {}
        v => return Verdict::Outdated(format!("it runs {}, not {}", v.unwrap_or("no version"), spec.version)),
    }
    if cluster_configuration_differs(kcp, m) {
        return Verdict::Outdated("its ClusterConfiguration differs from spec.kubeadmConfigSpec".into());
    }
    if let Some(have) = &f.config
        && kubeadm_config_differs(&spec.kubeadm_config_spec, have)
    {
        return Verdict::Outdated("its KubeadmConfig differs from spec.kubeadmConfigSpec".into());
    }
    if let Some((name, group_kind)) = &f.cloned_from {
        let want = &spec.machine_template.spec.infrastructure_ref;
        if want.name != *name || format!("{}.{}", want.kind, want.api_group) != *group_kind {
            return Verdict::Outdated(format!(
                "its infrastructure was cloned from {group_kind} {name}, not from \
                 spec.machineTemplate.spec.infrastructureRef"
            ));
        }
    }
    match soonest {
        // A second of slack: the check then lands after the instant, not just before it.
        Some(d) => Verdict::UpToDateFor(Duration::try_from(d).unwrap_or_default() + Duration::from_secs(1)),
        None => Verdict::UpToDate,
    }
}

/// When the Machine's certificates expire.
fn certificates_expiry(m: &Machine) -> Option<Timestamp> {
    if let Some(t) = m.status.as_ref().and_then(|s| s.certificates_expiry_date.as_ref()) {
        return Some(t.0);
    }
    if let Some(t) = m.annotations().get(CERTIFICATES_EXPIRY_ANNOTATION).and_then(|v| v.parse().ok()) {
        return Some(t);
    }
    let created = m.metadata.creation_timestamp.as_ref()?.0;
    created.checked_add(DEFAULT_CERTIFICATE_LIFETIME).ok()
}

/// Drops nulls and empty objects and lists, so that an absent field, `null`, `{}` and `[]`
/// compare equal.
fn normalize(v: &mut Value) {
    if let Value::Object(m) = v {
        for x in m.values_mut() {
            normalize(x);
        }
        m.retain(|_, x| {
            !(x.is_null() || x.as_object().is_some_and(|o| o.is_empty()) || x.as_array().is_some_and(|a| a.is_empty()))
        });
    } else if let Value::Array(a) = v {
        a.iter_mut().for_each(normalize);
    }
}

fn remove(v: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = v;
    for p in parents {
        match cur.get_mut(*p) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(o) = cur.as_object_mut() {
        o.remove(*last);
    }
}

fn is_absent(v: &Value, path: &[&str]) -> bool {
    let mut cur = v;
    for p in path {
        match cur.get(*p) {
            Some(next) => cur = next,
            None => return true,
        }
    }
    cur.is_null() || cur.as_object().is_some_and(|o| o.is_empty())
}

/// A recorded ClusterConfiguration: v1beta2's shape, or v1beta1's (Machines created before
/// the kubeadm kinds moved to v1beta2 recorded that), read as v1beta2. `None` if unreadable.
fn recorded_cluster_configuration(recorded: &str) -> Option<Option<ClusterConfiguration>> {
    if let Ok(c) = serde_json::from_str::<Option<ClusterConfiguration>>(recorded) {
        return Some(c);
    }
    let old = serde_json::from_str::<Option<V1Beta1ClusterConfiguration>>(recorded).ok()?;
    Some(old.and_then(cluster_configuration_up))
}

/// The Machine's recorded ClusterConfiguration against the control plane's. A missing
/// annotation compares equal (`rollout.after` is the remedy); an unreadable one differs.
fn cluster_configuration_differs(kcp: &KubeadmControlPlane, m: &Machine) -> bool {
    let Some(recorded) = m.annotations().get(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION) else {
        return false;
    };
    let Some(have) = recorded_cluster_configuration(recorded) else {
        return true;
    };
    let mut have = serde_json::to_value(&have).unwrap_or(Value::Null);
    let mut want = serde_json::to_value(&kcp.spec.kubeadm_config_spec.cluster_configuration).unwrap_or(Value::Null);
    for v in [&mut have, &mut want] {
        if v.is_null() {
            *v = Value::Object(Default::default());
        }
        remove(v, &["dns"]);
        normalize(v);
    }
    have != want
}

/// The Machine's KubeadmConfig against the control plane's, as upstream compares them:
/// the ClusterConfiguration is left to [`cluster_configuration_differs`]; the init (join)
/// configuration only counts when the Machine has one (the first Machine has only init,
/// the others only join); discovery is filled per Machine; a join `controlPlane` or a
/// `nodeRegistration` the control plane leaves empty is the Machine's own business.
pub fn kubeadm_config_differs(want: &KubeadmConfigSpec, have: &KubeadmConfigSpec) -> bool {
    let mut want = serde_json::to_value(want).unwrap_or(Value::Null);
    let mut have = serde_json::to_value(have).unwrap_or(Value::Null);
    for v in [&mut want, &mut have] {
        remove(v, &["clusterConfiguration"]);
        remove(v, &["joinConfiguration", "discovery"]);
    }
    for section in ["initConfiguration", "joinConfiguration"] {
        if is_absent(&have, &[section]) {
            remove(&mut want, &[section]);
        }
        if is_absent(&want, &[section, "nodeRegistration"]) {
            remove(&mut have, &[section, "nodeRegistration"]);
        }
    }
    if is_absent(&want, &["joinConfiguration", "controlPlane"]) {
        remove(&mut have, &["joinConfiguration", "controlPlane"]);
    }
    normalize(&mut want);
    normalize(&mut have);
    want != have
}

/// Looks up what [`needs_rollout`] needs about a Machine: its KubeadmConfig from the shared
/// store, and its infrastructure machine's template, from the shared store of its kind when
/// drydock caches it and from the API server otherwise (a read per Machine and reconcile, for providers
/// drydock does not cache).
pub async fn facts(ctx: &Context, m: &Machine) -> Facts {
    let ns = m.namespace().unwrap_or_default();
    let config = m
        .spec
        .bootstrap
        .config_ref
        .as_ref()
        .filter(|r| r.kind == "KubeadmConfig")
        .and_then(|r| ctx.informers.kubeadm_configs.store.get(&ObjectRef::new(&r.name).within(&ns)))
        .map(|c| c.spec.clone());
    let infra = &m.spec.infrastructure_ref;
    let annotations = if let Some(cached) = referenced::cached_versioned(ctx, &ns, infra) {
        cached.map(|o| o.meta().annotations.clone().unwrap_or_default())
    } else {
        match referenced::read_versioned(ctx, &ns, infra).await {
            Ok(o) => o.map(|o| o.meta().annotations.clone().unwrap_or_default()),
            Err(e) => {
                tracing::debug!(machine = %m.name_any(), error = %e, "could not read the infrastructure machine");
                None
            }
        }
    };
    let cloned_from = annotations.and_then(|a| {
        Some((a.get(CLONED_FROM_NAME_ANNOTATION)?.clone(), a.get(CLONED_FROM_GROUP_KIND_ANNOTATION)?.clone()))
    });
    Facts { config, cloned_from }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::common::ContractVersionedObjectReference;
    use drydock_api::capi::core::v1beta2::MachineDeletionSpec;
    use drydock_api::capi::kubeadm::v1beta2::{KubeadmControlPlaneRollout, KubeadmControlPlaneRolloutBefore};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn kcp() -> KubeadmControlPlane {
        let mut k = KubeadmControlPlane::new("cp", Default::default());
        k.spec.version = "v1.30.2".into();
        k.spec.machine_template.spec.infrastructure_ref = ContractVersionedObjectReference {
            api_group: "infrastructure.cluster.x-k8s.io".into(),
            kind: "InMemoryMachineTemplate".into(),
            name: "cp-v1".into(),
        };
        k.spec.kubeadm_config_spec = serde_json::from_value(json!({
            "clusterConfiguration": {"apiServer": {"certSANs": ["a"]}, "dns": {"imageTag": "v1.11.1"}},
            "initConfiguration": {"nodeRegistration": {"imagePullPolicy": "IfNotPresent"}},
            "joinConfiguration": {"nodeRegistration": {"imagePullPolicy": "IfNotPresent"}},
            "format": "cloud-config",
        }))
        .unwrap();
        k
    }

    fn machine(kcp: &KubeadmControlPlane, age_secs: i64) -> Machine {
        let mut m = Machine::new("m", Default::default());
        m.metadata.creation_timestamp = Some(Time(Timestamp::from_second(NOW - age_secs).unwrap()));
        m.spec.version = Some(kcp.spec.version.clone());
        m.annotations_mut().insert(
            KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(),
            serde_json::to_string(&kcp.spec.kubeadm_config_spec.cluster_configuration).unwrap(),
        );
        m
    }

    fn joined(kcp: &KubeadmControlPlane) -> Facts {
        let mut config = kcp.spec.kubeadm_config_spec.clone();
        config.init_configuration = None;
        Facts {
            config: Some(config),
            cloned_from: Some(("cp-v1".into(), "InMemoryMachineTemplate.infrastructure.cluster.x-k8s.io".into())),
        }
    }

    fn now() -> Timestamp {
        Timestamp::from_second(NOW).unwrap()
    }

    fn outdated(v: Verdict) -> bool {
        matches!(v, Verdict::Outdated(_))
    }

    #[test]
    fn a_fresh_machine_is_up_to_date() {
        let k = kcp();
        assert_eq!(needs_rollout(&k, &machine(&k, 60), &joined(&k), now()), Verdict::UpToDate);
        // Nothing known beyond the Machine: nothing to compare.
        assert_eq!(needs_rollout(&k, &machine(&k, 60), &Facts::default(), now()), Verdict::UpToDate);
    }

    #[test]
    fn version_and_template_changes() {
        let k = kcp();
        let m = machine(&k, 60);
        let mut newer = k.clone();
        newer.spec.version = "v1.31.0".into();
        assert!(outdated(needs_rollout(&newer, &m, &joined(&k), now())));
        let mut rotated = k.clone();
        rotated.spec.machine_template.spec.infrastructure_ref.name = "cp-v2".into();
        assert!(outdated(needs_rollout(&rotated, &m, &joined(&k), now())));
        let mut other_kind = k.clone();
        other_kind.spec.machine_template.spec.infrastructure_ref.kind = "DockerMachineTemplate".into();
        assert!(outdated(needs_rollout(&other_kind, &m, &joined(&k), now())));
        // Metadata of the template is propagated in place, not rolled.
        let mut labelled = k.clone();
        labelled.spec.machine_template.metadata = Some(Default::default());
        labelled.spec.machine_template.spec.deletion =
            Some(MachineDeletionSpec { node_drain_timeout_seconds: Some(300), ..Default::default() });
        assert_eq!(needs_rollout(&labelled, &m, &joined(&k), now()), Verdict::UpToDate);
    }

    #[test]
    fn cluster_configuration_rules() {
        let k = kcp();
        let mut m = machine(&k, 60);
        let mut changed = k.clone();
        let cc = changed.spec.kubeadm_config_spec.cluster_configuration.get_or_insert_with(Default::default);
        cc.feature_gates = Some([("X".to_string(), true)].into());
        assert!(outdated(needs_rollout(&changed, &m, &joined(&k), now())));
        // DNS is updated in place.
        let mut dns = k.clone();
        let cc: &mut ClusterConfiguration =
            dns.spec.kubeadm_config_spec.cluster_configuration.get_or_insert_with(Default::default);
        cc.dns = None;
        assert_eq!(needs_rollout(&dns, &m, &joined(&k), now()), Verdict::UpToDate);
        // No annotation: not compared. An unreadable one: replaced.
        m.annotations_mut().remove(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION);
        assert_eq!(needs_rollout(&changed, &m, &joined(&changed), now()), Verdict::UpToDate);
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), "{".into());
        assert!(outdated(needs_rollout(&k, &m, &joined(&k), now())));
        // `null` (no ClusterConfiguration) equals an empty one.
        let mut none = k.clone();
        none.spec.kubeadm_config_spec.cluster_configuration = None;
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), "null".into());
        assert_eq!(needs_rollout(&none, &m, &joined(&none), now()), Verdict::UpToDate);
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), "{}".into());
        assert_eq!(needs_rollout(&none, &m, &joined(&none), now()), Verdict::UpToDate);
    }

    #[test]
    fn a_cluster_configuration_recorded_in_v1beta1_shape_reads_as_v1beta2() {
        let mut k = kcp();
        let cc = k.spec.kubeadm_config_spec.cluster_configuration.get_or_insert_with(Default::default);
        cc.api_server.get_or_insert_with(Default::default).component.extra_args =
            Some(vec![serde_json::from_value(json!({"name": "v", "value": "2"})).unwrap()]);
        let mut m = machine(&k, 60);
        // What a Machine created while the kubeadm kinds were stored in v1beta1 carries:
        // flags as a map, fields v1beta2 dropped.
        let v1beta1 = json!({
            "apiServer": {"certSANs": ["a"], "extraArgs": {"v": "2"}, "timeoutForControlPlane": "4m0s"},
            "dns": {"imageTag": "v1.11.1"},
            "kubernetesVersion": "v1.30.2",
        });
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), v1beta1.to_string());
        assert_eq!(needs_rollout(&k, &m, &joined(&k), now()), Verdict::UpToDate);
        let mut other = v1beta1;
        other["apiServer"]["extraArgs"]["v"] = json!("4");
        m.annotations_mut().insert(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(), other.to_string());
        assert!(outdated(needs_rollout(&k, &m, &joined(&k), now())));
    }

    #[test]
    fn kubeadm_config_rules() {
        let k = kcp();
        let spec = |v: Value| -> KubeadmConfigSpec { serde_json::from_value(v).unwrap() };
        let want = &k.spec.kubeadm_config_spec;
        // The init Machine has no join configuration, the others no init configuration.
        let mut init = want.clone();
        init.join_configuration = None;
        assert!(!kubeadm_config_differs(want, &init));
        assert!(!kubeadm_config_differs(want, &joined(&k).config.unwrap()));
        // Discovery and a controlPlane section the control plane leaves out are per Machine.
        let mut have = joined(&k).config.unwrap();
        have.join_configuration.as_mut().unwrap().discovery =
            serde_json::from_value(json!({"bootstrapToken": {"token": "abc"}})).unwrap();
        have.join_configuration.as_mut().unwrap().control_plane = Some(Default::default());
        assert!(!kubeadm_config_differs(want, &have));
        // Changed join settings, files or commands roll.
        let mut files = want.clone();
        files.files = Some(vec![serde_json::from_value(json!({"path": "/a", "content": "x"})).unwrap()]);
        assert!(kubeadm_config_differs(&files, &joined(&k).config.unwrap()));
        let mut args = want.clone();
        args.join_configuration = Some(
            serde_json::from_value(json!({"nodeRegistration": {"imagePullPolicy": "IfNotPresent",
                "kubeletExtraArgs": [{"name": "v", "value": "4"}]}}))
            .unwrap(),
        );
        assert!(kubeadm_config_differs(&args, &joined(&k).config.unwrap()));
        // ... but not the init Machine, which has no join configuration.
        assert!(!kubeadm_config_differs(&args, &init));
        // Empty and absent are the same.
        assert!(!kubeadm_config_differs(&spec(json!({"files": []})), &spec(json!({}))));
        assert!(!kubeadm_config_differs(&spec(json!({"ntp": {}})), &spec(json!({}))));
    }

    #[test]
    fn rollout_after_and_certificates() {
        let mut k = kcp();
        let m = machine(&k, 3600);
        // In the future: up to date until its second is over.
        k.spec.rollout.get_or_insert_with(Default::default).after =
            Some(Time(Timestamp::from_second(NOW + 100).unwrap()));
        assert_eq!(needs_rollout(&k, &m, &joined(&k), now()), Verdict::UpToDateFor(Duration::from_secs(102)));
        // Passed, for a Machine created before it.
        k.spec.rollout.get_or_insert_with(Default::default).after =
            Some(Time(Timestamp::from_second(NOW - 100).unwrap()));
        assert!(outdated(needs_rollout(&k, &m, &joined(&k), now())));
        // A Machine created after it is not touched; one created in its second is.
        assert_eq!(needs_rollout(&k, &machine(&k, 50), &joined(&k), now()), Verdict::UpToDate);
        k.spec.rollout.get_or_insert_with(Default::default).after =
            Some(Time(Timestamp::from_millisecond((NOW - 100) * 1000 + 700).unwrap()));
        assert!(outdated(needs_rollout(&k, &machine(&k, 100), &joined(&k), now())));
        // The rollout starts once the second of rolloutAfter is over.
        k.spec.rollout.get_or_insert_with(Default::default).after = Some(Time(Timestamp::from_second(NOW).unwrap()));
        assert_eq!(
            needs_rollout(&k, &machine(&k, 0), &joined(&k), now()),
            Verdict::UpToDateFor(Duration::from_secs(2))
        );
        k.spec.rollout = None;

        // Certificates: a year after creation by default.
        k.spec.rollout = Some(KubeadmControlPlaneRollout {
            before: Some(KubeadmControlPlaneRolloutBefore { certificates_expiry_days: Some(30) }),
            ..Default::default()
        });
        let young = needs_rollout(&k, &m, &joined(&k), now());
        assert!(matches!(young, Verdict::UpToDateFor(d) if d > Duration::from_secs(300 * 86400)), "{young:?}");
        assert!(outdated(needs_rollout(&k, &machine(&k, 340 * 86400), &joined(&k), now())));
        // The annotation (or the status) says otherwise.
        let mut expiring = m.clone();
        expiring.annotations_mut().insert(
            CERTIFICATES_EXPIRY_ANNOTATION.into(),
            Timestamp::from_second(NOW + 10 * 86400).unwrap().to_string(),
        );
        assert!(outdated(needs_rollout(&k, &expiring, &joined(&k), now())));
    }

    #[test]
    fn judging_skips_deleting_machines_and_keeps_the_soonest_check() {
        let mut k = kcp();
        k.spec.rollout.get_or_insert_with(Default::default).after =
            Some(Time(Timestamp::from_second(NOW + 100).unwrap()));
        let f = joined(&k);
        let mut a = machine(&k, 10);
        a.metadata.name = Some("a".into());
        let mut b = a.clone();
        b.metadata.name = Some("b".into());
        b.spec.version = Some("v1.29.0".into());
        let mut c = b.clone();
        c.metadata.name = Some("c".into());
        c.metadata.deletion_timestamp = Some(Time(now()));
        let o = Outdated::judge(&k, [(&a, &f), (&b, &f), (&c, &f)], now());
        assert_eq!(o.len(), 1);
        assert!(o.is_outdated(&b) && !o.is_outdated(&a) && !o.is_outdated(&c));
        assert!(o.reason("b").unwrap().contains("v1.29.0"));
        assert_eq!(o.next_check, Some(Duration::from_secs(102)));
    }
}
