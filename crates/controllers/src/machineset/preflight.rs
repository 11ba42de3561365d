//! MachineSet preflight checks: before a set creates a Machine (scaling up, or replacing a
//! remediated one) or deletes an unhealthy one, the control plane must be in a state where
//! a new worker can join safely.
//!
//! - `ControlPlaneIsStable`: the control plane is neither provisioning (no `status.version`)
//!   nor upgrading (`spec.version` ahead of `status.version`; differing build metadata counts);
//!   with a managed topology, no upgrade is pending either (topology version ahead of
//!   the control plane's `spec.version`).
//! - `KubernetesVersionSkew`: the set's minor is not newer than the control plane's, nor more
//!   than 3 minors older (2 before Kubernetes 1.28).
//! - `KubeadmVersionSkew`: with a kubeadm bootstrap template, the minors are equal.
//! - `ControlPlaneVersionSkew`: with a managed topology, the versions are equal (a Machine
//!   created at an older version would be replaced right after).
//!
//! The checks run only when the Cluster has a control plane with a `spec.version`; the
//! version checks only when the set has a version. They are skipped by name (or `All`)
//! with the `machineset.cluster.x-k8s.io/skip-preflight-checks` annotation, a
//! comma-separated list, on the MachineSet, on its MachineDeployment, or (beyond upstream,
//! to spare annotating every deployment of a cluster whose control plane is managed
//! elsewhere) on the Cluster.

use std::collections::BTreeSet;

use drydock_api::capi::condition_types::CONTROL_PLANE_VERSION_SKEW;
use drydock_api::capi::core::v1beta2::{Cluster, MachineSet};
use drydock_api::capi::keys::{
    PREFLIGHT_CHECK_ALL, PREFLIGHT_CHECK_CONTROL_PLANE_IS_STABLE, PREFLIGHT_CHECK_KUBEADM_VERSION_SKEW,
    PREFLIGHT_CHECK_KUBERNETES_VERSION_SKEW, SKIP_PREFLIGHT_CHECKS_ANNOTATION,
};
use drydock_api::capi::version;
use kube::runtime::reflector::ObjectRef;

use super::State;

pub const ACTION_SCALE_UP: &str = "Scale up";
pub const ACTION_REMEDIATION: &str = "Machine remediation";

const KCP_GROUP: &str = "controlplane.cluster.x-k8s.io";
const KCP_KIND: &str = "KubeadmControlPlane";

/// The checks skipped for a set: the union of the annotation on the set, its
/// MachineDeployment and its Cluster.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Skipped(BTreeSet<String>);

impl Skipped {
    pub fn from_annotations<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> Self {
        Self(
            values
                .into_iter()
                .flatten()
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }

    fn runs(&self, check: &str) -> bool {
        !self.0.contains(PREFLIGHT_CHECK_ALL) && !self.0.contains(check)
    }
}

/// What the checks read of the control plane.
#[derive(Clone, Debug, Default)]
pub struct ControlPlane {
    /// `Kind ns/name`, for messages.
    pub display: String,
    pub spec_version: Option<String>,
    pub status_version: Option<String>,
}

/// What the checks read of the set.
#[derive(Clone, Debug, Default)]
pub struct Candidate {
    pub version: Option<String>,
    /// The bootstrap template is a kubeadm one.
    pub kubeadm_bootstrap: bool,
    /// The Cluster's topology version when it has a managed topology.
    pub topology_version: Option<String>,
}

impl Candidate {
    pub fn of(ms: &MachineSet, cluster: &Cluster) -> Self {
        let bootstrap = ms.spec.template.spec.bootstrap.config_ref.as_ref();
        Self {
            version: ms.spec.template.spec.version.clone(),
            kubeadm_bootstrap: bootstrap
                .is_some_and(|r| r.is_kind("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate")),
            topology_version: cluster.spec.topology.as_ref().map(|t| t.version.clone()),
        }
    }
}

/// One failed check.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    pub check: &'static str,
    pub message: String,
}

fn failed(check: &'static str, what: String) -> Failure {
    Failure { check, message: format!("{what} ({check:?} preflight check failed)") }
}

fn parse_version(what: &str, v: &str) -> Result<(u64, u64), String> {
    version::parse(v)
        .map(|p| (p.major, p.minor))
        .map_err(|e| format!("cannot run preflight checks: {what} version: {e}"))
}

/// True when `a` is ahead of `b`: higher ignoring build metadata, or the same with
/// different build metadata.
fn ahead(a: &str, b: &str) -> Result<bool, String> {
    let err = |e: version::VersionError| format!("cannot run preflight checks: {e}");
    let (mut a, mut b) = (version::parse(a).map_err(err)?, version::parse(b).map_err(err)?);
    let (build_a, build_b) = (std::mem::take(&mut a.build), std::mem::take(&mut b.build));
    Ok(a > b || (a == b && build_a != build_b))
}

/// Runs the checks that are not skipped. An error means they cannot run (a version does
/// not parse).
pub fn evaluate(cp: &ControlPlane, ms: &Candidate, skip: &Skipped) -> Result<Vec<Failure>, String> {
    let mut failures = Vec::new();
    if !skip.runs(PREFLIGHT_CHECK_ALL) {
        return Ok(failures);
    }
    let Some(cp_version) = cp.spec_version.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(failures);
    };
    let (cp_major, cp_minor) = parse_version(&cp.display, cp_version)?;
    if skip.runs(PREFLIGHT_CHECK_CONTROL_PLANE_IS_STABLE) {
        let check = PREFLIGHT_CHECK_CONTROL_PLANE_IS_STABLE;
        match cp.status_version.as_deref().filter(|v| !v.is_empty()) {
            None => failures.push(failed(check, format!("{} is provisioning", cp.display))),
            Some(status) if ahead(cp_version, status)? => {
                failures.push(failed(check, format!("{} is upgrading (from {status} to {cp_version})", cp.display)))
            }
            Some(_) => {
                if let Some(topology) = ms.topology_version.as_deref()
                    && ahead(topology, cp_version)?
                {
                    failures.push(failed(
                        check,
                        format!("{} has an upgrade to {topology} pending (now {cp_version})", cp.display),
                    ));
                }
            }
        }
    }
    let Some(ms_version) = ms.version.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(failures);
    };
    let (ms_major, ms_minor) = parse_version("MachineSet", ms_version)?;
    if skip.runs(PREFLIGHT_CHECK_KUBERNETES_VERSION_SKEW) {
        let skew = if (cp_major, cp_minor) >= (1, 28) { 3 } else { 2 };
        let problem = if ms_minor > cp_minor {
            Some("is newer than".to_string())
        } else if ms_minor + skew < cp_minor {
            Some(format!("is more than {skew} minor versions older than"))
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(failed(
                PREFLIGHT_CHECK_KUBERNETES_VERSION_SKEW,
                format!("MachineSet version {ms_version} {p} {} version {cp_version}", cp.display),
            ));
        }
    }
    if skip.runs(PREFLIGHT_CHECK_KUBEADM_VERSION_SKEW)
        && ms.kubeadm_bootstrap
        && (ms_major, ms_minor) != (cp_major, cp_minor)
    {
        failures.push(failed(
            PREFLIGHT_CHECK_KUBEADM_VERSION_SKEW,
            format!(
                "MachineSet version {ms_version} and {} version {cp_version} differ in minor \
                 version, which kubeadm does not support when joining",
                cp.display
            ),
        ));
    }
    if skip.runs(CONTROL_PLANE_VERSION_SKEW)
        && ms.topology_version.is_some()
        && (ahead(ms_version, cp_version)? || ahead(cp_version, ms_version)?)
    {
        failures.push(failed(
            CONTROL_PLANE_VERSION_SKEW,
            format!(
                "MachineSet version {ms_version} is not {} version {cp_version}, so a new \
                 Machine would be replaced right away",
                cp.display
            ),
        ));
    }
    Ok(failures)
}

/// The condition message for an operation held by failed checks.
pub fn hold_message(action: &str, failures: &[Failure]) -> String {
    let reasons: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
    format!(
        "Performing {action:?} on hold because {}. The operation will continue after the \
         preflight check(s) pass",
        reasons.join("; ")
    )
}

/// The outcome of the checks for one operation.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Failed checks: the operation waits; the message says why.
    Hold(String),
    /// The checks cannot run (control plane missing, version unparsable).
    Error(String),
}

impl Verdict {
    pub fn blocks(&self) -> bool {
        *self != Verdict::Pass
    }

    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Pass => None,
            Verdict::Hold(m) | Verdict::Error(m) => Some(m),
        }
    }
}

/// The annotation on the set, on its MachineDeployment and on its Cluster.
fn skipped(st: &State, ms: &MachineSet, cluster: &Cluster) -> Skipped {
    let get = |a: Option<&std::collections::BTreeMap<String, String>>| {
        a.and_then(|a| a.get(SKIP_PREFLIGHT_CHECKS_ANNOTATION)).cloned()
    };
    let md = super::owning_deployment(st, ms).and_then(|md| get(md.metadata.annotations.as_ref()));
    let own = get(ms.metadata.annotations.as_ref());
    let cl = get(cluster.metadata.annotations.as_ref());
    Skipped::from_annotations([own.as_deref(), md.as_deref(), cl.as_deref()])
}

/// Reads the Cluster's control plane: a KubeadmControlPlane from the shared cache, other
/// kinds from the API server. `Ok(None)` when the Cluster has no control plane reference.
async fn control_plane(st: &State, cluster: &Cluster) -> Result<Option<ControlPlane>, String> {
    let Some(r) = cluster.spec.control_plane_ref.as_ref() else {
        return Ok(None);
    };
    let ns = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let (kind, name) = (r.kind.as_str(), r.name.as_str());
    let display = format!("{kind} {ns}/{name}");
    if r.is_kind(KCP_GROUP, KCP_KIND) {
        let kcp = st
            .ctx
            .informers
            .control_planes
            .store
            .get(&ObjectRef::new(name).within(ns))
            .ok_or_else(|| format!("cannot run preflight checks: {display} not found"))?;
        return Ok(Some(ControlPlane {
            spec_version: Some(kcp.spec.version.clone()),
            status_version: kcp.status.as_ref().and_then(|s| s.version.clone()),
            display,
        }));
    }
    let r = st.ctx.contracts.object_ref(r, ns).await;
    let r = r.map_err(|e| format!("cannot run preflight checks: resolving {display}: {e}"))?;
    let obj = crate::external::get(&st.ctx, ns, &r)
        .await
        .map_err(|e| format!("cannot run preflight checks: reading {display}: {e}"))?
        .ok_or_else(|| format!("cannot run preflight checks: {display} not found"))?;
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    Ok(Some(ControlPlane {
        spec_version: text(&obj.data["spec"]["version"]),
        status_version: text(&obj.data["status"]["version"]),
        display,
    }))
}

/// Whether `action` may go ahead for the set now.
pub async fn check(st: &State, cluster: &Cluster, ms: &MachineSet, action: &str) -> Verdict {
    let skip = skipped(st, ms, cluster);
    if !skip.runs(PREFLIGHT_CHECK_ALL) {
        return Verdict::Pass;
    }
    let cp = match control_plane(st, cluster).await {
        Ok(Some(cp)) => cp,
        Ok(None) => return Verdict::Pass,
        Err(e) => return Verdict::Error(e),
    };
    match evaluate(&cp, &Candidate::of(ms, cluster), &skip) {
        Ok(f) if f.is_empty() => Verdict::Pass,
        Ok(f) => Verdict::Hold(hold_message(action, &f)),
        Err(e) => Verdict::Error(e),
    }
}

/// Sets waiting on their checks, per cluster, so a change of the control plane or the
/// Cluster wakes exactly them.
#[derive(Default)]
pub struct Waiting {
    sets: parking_lot::Mutex<std::collections::HashMap<(String, String), BTreeSet<String>>>,
}

impl Waiting {
    pub fn set(&self, ns: &str, cluster: &str, name: &str, waiting: bool) {
        let mut sets = self.sets.lock();
        let key = (ns.to_string(), cluster.to_string());
        if waiting {
            sets.entry(key).or_default().insert(name.to_string());
        } else if let Some(names) = sets.get_mut(&key) {
            names.remove(name);
            if names.is_empty() {
                sets.remove(&key);
            }
        }
    }

    pub fn of(&self, ns: &str, cluster: &str) -> Vec<String> {
        self.sets
            .lock()
            .get(&(ns.to_string(), cluster.to_string()))
            .map(|n| n.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(spec: &str, status: Option<&str>) -> ControlPlane {
        ControlPlane {
            display: "KubeadmControlPlane ns/cp".into(),
            spec_version: Some(spec.into()),
            status_version: status.map(str::to_string),
        }
    }

    fn ms(version: &str, kubeadm: bool) -> Candidate {
        Candidate { version: Some(version.into()), kubeadm_bootstrap: kubeadm, topology_version: None }
    }

    fn checks(f: &[Failure]) -> Vec<&str> {
        f.iter().map(|f| f.check).collect()
    }

    const NONE: Skipped = Skipped(BTreeSet::new());

    #[test]
    fn stable_control_plane_passes() {
        let f = evaluate(&cp("v1.30.2", Some("v1.30.2")), &ms("v1.30.2", true), &NONE);
        assert_eq!(f, Ok(vec![]));
        // No control plane version: nothing to compare.
        let mut none = cp("", None);
        none.spec_version = None;
        assert_eq!(evaluate(&none, &ms("v1.30.2", true), &NONE), Ok(vec![]));
    }

    #[test]
    fn provisioning_and_upgrading_hold() {
        let f = evaluate(&cp("v1.30.2", None), &ms("v1.30.2", false), &NONE).expect("runs");
        assert_eq!(checks(&f), ["ControlPlaneIsStable"]);
        assert_eq!(
            f[0].message,
            "KubeadmControlPlane ns/cp is provisioning (\"ControlPlaneIsStable\" preflight check failed)"
        );
        let f = evaluate(&cp("v1.31.0", Some("v1.30.2")), &ms("v1.30.2", true), &NONE).expect("runs");
        assert_eq!(checks(&f), ["ControlPlaneIsStable", "KubeadmVersionSkew"]);
        // Build metadata alone differing counts as an upgrade.
        let f = evaluate(&cp("v1.30.2+b", Some("v1.30.2+a")), &ms("v1.30.2", false), &NONE).expect("runs");
        assert_eq!(checks(&f), ["ControlPlaneIsStable"]);
        // A pending topology upgrade.
        let mut topo = ms("v1.30.2", false);
        topo.topology_version = Some("v1.31.0".into());
        let f = evaluate(&cp("v1.30.2", Some("v1.30.2")), &topo, &NONE).expect("runs");
        assert_eq!(checks(&f), ["ControlPlaneIsStable"]);
    }

    #[test]
    fn version_skews() {
        let stable = |v: &str| cp(v, Some(v));
        // Newer than the control plane.
        let f = evaluate(&stable("v1.30.0"), &ms("v1.31.0", false), &NONE).expect("runs");
        assert_eq!(checks(&f), ["KubernetesVersionSkew"]);
        // Three minors behind is fine from 1.28, two before.
        let f = evaluate(&stable("v1.30.0"), &ms("v1.27.9", false), &NONE).expect("runs");
        assert!(f.is_empty());
        let f = evaluate(&stable("v1.30.0"), &ms("v1.26.9", false), &NONE).expect("runs");
        assert_eq!(checks(&f), ["KubernetesVersionSkew"]);
        let f = evaluate(&stable("v1.27.0"), &ms("v1.24.0", false), &NONE).expect("runs");
        assert_eq!(checks(&f), ["KubernetesVersionSkew"]);
        // Kubeadm needs the same minor, only with a kubeadm bootstrap.
        let f = evaluate(&stable("v1.30.0"), &ms("v1.29.0", true), &NONE).expect("runs");
        assert_eq!(checks(&f), ["KubeadmVersionSkew"]);
        // Managed topologies need the same version.
        let mut topo = ms("v1.30.1", false);
        topo.topology_version = Some("v1.30.2".into());
        let f = evaluate(&stable("v1.30.2"), &topo, &NONE).expect("runs");
        assert_eq!(checks(&f), ["ControlPlaneVersionSkew"]);
        assert!(evaluate(&stable("v1.30.2"), &ms("x", false), &NONE).is_err());
    }

    #[test]
    fn skipping_by_name_or_all() {
        let upgrading = cp("v1.31.0", Some("v1.30.2"));
        let skip = Skipped::from_annotations([Some(" ControlPlaneIsStable , Other"), None]);
        let f = evaluate(&upgrading, &ms("v1.30.2", true), &skip).expect("runs");
        assert_eq!(checks(&f), ["KubeadmVersionSkew"]);
        let skip = Skipped::from_annotations([None, Some("KubeadmVersionSkew"), Some("ControlPlaneIsStable")]);
        assert_eq!(evaluate(&upgrading, &ms("v1.30.2", true), &skip), Ok(vec![]));
        let all = Skipped::from_annotations([Some("All")]);
        assert_eq!(evaluate(&cp("x", None), &ms("y", true), &all), Ok(vec![]));
        let msg = hold_message(ACTION_SCALE_UP, &evaluate(&upgrading, &ms("v1.30.2", false), &NONE).expect("runs"));
        assert_eq!(
            msg,
            "Performing \"Scale up\" on hold because KubeadmControlPlane ns/cp is upgrading (from \
             v1.30.2 to v1.31.0) (\"ControlPlaneIsStable\" preflight check failed). The operation \
             will continue after the preflight check(s) pass"
        );
    }

    #[test]
    fn waiting_sets_per_cluster() {
        let w = Waiting::default();
        w.set("ns", "c1", "a", true);
        w.set("ns", "c1", "b", true);
        w.set("ns", "c1", "a", false);
        assert_eq!(w.of("ns", "c1"), ["b"]);
        w.set("ns", "c1", "b", false);
        assert!(w.of("ns", "c1").is_empty());
        assert!(w.sets.lock().is_empty());
    }
}
