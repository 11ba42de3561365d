//! Chaos profiles and the fault schedule a seed draws from one: which machine of which
//! cluster gets which fault, and when a Node fault strikes. Machines are named by cluster,
//! role and the order they appear in (a cluster's workers are interchangeable, so "its
//! second worker" is the same machine in every run), which makes the schedule a pure
//! function of the profile, the fleet's shape and the seed.

use std::time::Duration;

use anyhow::Context;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// The profile `--chaos default` names.
const DEFAULT_PROFILE: &str = include_str!("../../../../chaos/default.yaml");

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub faults: Shares,
    pub strike_after: Range,
    /// How much longer a slow machine's VM takes to start.
    #[serde(default = "default_slow_start")]
    pub slow_start: String,
    /// How a flapping Node flaps.
    #[serde(default)]
    pub flapping: Flapping,
    pub health_check: HealthCheck,
    /// Controller restarts while the fleet provisions.
    #[serde(default)]
    pub controller_restarts: Restarts,
    /// Errors and latency on the controllers' API calls.
    #[serde(default)]
    pub api_faults: Option<ApiFaultRates>,
    /// Spells when a workload cluster's API server cannot be reached.
    #[serde(default)]
    pub unreachable: Option<Unreachable>,
}

/// A share of the clusters whose API server the controllers cannot reach for `spell`,
/// `strikeAfter` (drawn) after the cluster's first control plane Machine runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unreachable {
    pub share: f64,
    pub spell: String,
}

/// Shares of the controllers' API calls answered 503 and delayed by `latency`.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiFaultRates {
    #[serde(default)]
    pub error_rate: f64,
    #[serde(default)]
    pub latency_rate: f64,
    #[serde(default = "default_latency")]
    pub latency: String,
}

fn default_latency() -> String {
    "100ms".into()
}

fn default_slow_start() -> String {
    "10s".into()
}

/// A flapping Node goes NotReady for `spell` and back `times` times, then stays Ready.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flapping {
    pub times: u32,
    pub spell: String,
}

impl Default for Flapping {
    fn default() -> Self {
        Self { times: 3, spell: "1s".into() }
    }
}

/// `count` restarts of the controllers at times drawn within `within` of the start.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Restarts {
    pub count: usize,
    #[serde(default)]
    pub within: Option<String>,
}

/// Each fault's share of the machines drawn for.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Shares {
    #[serde(default)]
    pub failed_provisioning: f64,
    #[serde(default)]
    pub node_not_ready: f64,
    #[serde(default)]
    pub node_unknown: f64,
    #[serde(default)]
    pub slow_start: f64,
    #[serde(default)]
    pub node_flapping: f64,
    /// Control plane machines only: the etcd member fails.
    #[serde(default)]
    pub etcd_member_loss: f64,
    /// Control plane machines only: the etcd member wins an election and leads.
    #[serde(default)]
    pub etcd_leader_change: f64,
}

impl Shares {
    /// Each fault with its share, in the order the schedule draws them.
    fn each(&self) -> [(Fault, f64); 7] {
        [
            (Fault::FailedProvisioning, self.failed_provisioning),
            (Fault::NodeNotReady, self.node_not_ready),
            (Fault::NodeUnknown, self.node_unknown),
            (Fault::SlowStart, self.slow_start),
            (Fault::NodeFlapping, self.node_flapping),
            (Fault::EtcdMemberLoss, self.etcd_member_loss),
            (Fault::EtcdLeaderChange, self.etcd_leader_change),
        ]
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Range {
    pub min: String,
    pub max: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheck {
    pub node_startup_timeout: String,
    pub unhealthy_timeout: String,
}

impl Profile {
    /// `default`, or a profile file.
    pub fn load(name: &str) -> anyhow::Result<Self> {
        let text = if name == "default" {
            DEFAULT_PROFILE.to_string()
        } else {
            std::fs::read_to_string(name).with_context(|| format!("reading the chaos profile {name}"))?
        };
        let p: Self = serde_saphyr::from_str(&text).with_context(|| format!("the chaos profile {name}"))?;
        let shares = p.faults.each();
        let total: f64 = shares.iter().map(|(_, s)| s).sum();
        anyhow::ensure!(
            shares.iter().all(|(_, s)| (0.0..=1.0).contains(s)) && total <= 1.0,
            "chaos profile {name}: fault shares must be between 0 and 1 and add up to at most 1"
        );
        let (min, max) = p.strike_window()?;
        anyhow::ensure!(min <= max, "chaos profile {name}: strikeAfter.min is after strikeAfter.max");
        if let Some(w) = &p.controller_restarts.within {
            duration(w)?;
        }
        duration(&p.slow_start)?;
        duration(&p.flapping.spell)?;
        if let Some(f) = &p.api_faults {
            let rates = [f.error_rate, f.latency_rate];
            anyhow::ensure!(
                rates.iter().all(|r| (0.0..=1.0).contains(r)) && f.error_rate + f.latency_rate <= 1.0,
                "chaos profile {name}: apiFaults rates must be between 0 and 1 and add up to at most 1"
            );
            duration(&f.latency)?;
        }
        if let Some(u) = &p.unreachable {
            anyhow::ensure!(
                (0.0..=1.0).contains(&u.share),
                "chaos profile {name}: unreachable.share must be between 0 and 1"
            );
            duration(&u.spell)?;
        }
        // As a MachineHealthCheck's admission wants it.
        anyhow::ensure!(
            seconds(&p.health_check.node_startup_timeout)? >= 30,
            "chaos profile {name}: healthCheck.nodeStartupTimeout must be at least 30s"
        );
        seconds(&p.health_check.unhealthy_timeout)?;
        Ok(p)
    }

    /// The faults on API calls the profile asks for, drawn from their own stream of `seed`.
    /// Unreachable spells go through the same wrapper, so a profile with either gets one.
    pub fn api_faults(&self, seed: u64) -> anyhow::Result<Option<std::sync::Arc<crate::api_faults::ApiFaults>>> {
        let (errors, delays, latency) = match &self.api_faults {
            Some(f) => (f.error_rate, f.latency_rate, duration(&f.latency)?),
            None if self.unreachable.is_some() => (0.0, 0.0, Duration::ZERO),
            None => return Ok(None),
        };
        Ok(Some(crate::api_faults::ApiFaults::new(errors, delays, latency, seed ^ 0x0a91_fa17_5eed_0001)))
    }

    pub fn strike_window(&self) -> anyhow::Result<(Duration, Duration)> {
        Ok((duration(&self.strike_after.min)?, duration(&self.strike_after.max)?))
    }
}

pub fn duration(s: &str) -> anyhow::Result<Duration> {
    drydock_api::capi::duration::parse(s)
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .with_context(|| format!("{s:?} is not a duration such as 3s or 1m"))
}

/// Whole seconds of a profile duration (as a MachineHealthCheck takes them).
pub fn seconds(s: &str) -> anyhow::Result<u64> {
    Ok(duration(s)?.as_secs())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    ControlPlane,
    Worker,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Fault {
    FailedProvisioning,
    NodeNotReady,
    NodeUnknown,
    SlowStart,
    NodeFlapping,
    EtcdMemberLoss,
    EtcdLeaderChange,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Self::FailedProvisioning => "failed-provisioning",
            Self::NodeNotReady => "node-not-ready",
            Self::NodeUnknown => "node-unknown",
            Self::SlowStart => "slow-start",
            Self::NodeFlapping => "node-flapping",
            Self::EtcdMemberLoss => "etcd-member-loss",
            Self::EtcdLeaderChange => "etcd-leader-change",
        }
    }

    /// The value of the in-memory provider's fault annotation that causes it, for the
    /// faults that last until the machine is replaced.
    pub fn lasting_annotation(self) -> Option<&'static str> {
        match self {
            Self::FailedProvisioning => Some("node-deleted"),
            Self::NodeNotReady => Some("node-not-ready"),
            Self::NodeUnknown => Some("node-unknown"),
            Self::EtcdMemberLoss => Some("etcd-member-down"),
            Self::SlowStart | Self::NodeFlapping | Self::EtcdLeaderChange => None,
        }
    }

    /// Strikes only control plane machines (workers drawn for it get no fault).
    pub fn control_plane_only(self) -> bool {
        matches!(self, Self::EtcdMemberLoss | Self::EtcdLeaderChange)
    }

    /// Strikes as soon as the machine exists (rather than once it runs).
    pub fn at_creation(self) -> bool {
        matches!(self, Self::FailedProvisioning | Self::SlowStart)
    }
}

/// One planned fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    pub cluster: String,
    pub role: Role,
    /// The machine of that role, by the order its Machine appeared in (from 0).
    pub ordinal: usize,
    pub fault: Fault,
    /// How long after the Machine runs a Node fault strikes (0 for failed provisioning).
    #[serde(with = "millis")]
    pub after: Duration,
}

mod millis {
    pub fn serialize<S: serde::Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u128(d.as_millis())
    }
}

/// The fleet's shape, as far as the schedule needs it.
pub struct Shape<'a> {
    pub clusters: &'a [String],
    pub control_plane_machines: usize,
    pub workers: usize,
}

/// The schedule `seed` draws from `profile` for the fleet.
pub fn draw(profile: &Profile, seed: u64, shape: &Shape<'_>) -> anyhow::Result<Vec<Planned>> {
    let (min, max) = profile.strike_window()?;
    let shares = profile.faults.each();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut planned = Vec::new();
    // One quorum-safe fault needs three members.
    let cp = if shape.control_plane_machines >= 3 { shape.control_plane_machines } else { 0 };
    for cluster in shape.clusters {
        for (role, count) in [(Role::ControlPlane, cp), (Role::Worker, shape.workers)] {
            let mut control_plane_faulted = false;
            for ordinal in 0..count {
                let u: f64 = rng.random();
                let after = min + (max - min).mul_f64(rng.random::<f64>());
                let mut bound = 0.0;
                let Some(fault) = shares.iter().find_map(|(fault, share)| {
                    bound += share;
                    (u < bound).then_some(*fault)
                }) else {
                    continue;
                };
                if fault.control_plane_only() && role != Role::ControlPlane {
                    continue;
                }
                // At most one control plane machine per cluster.
                if role == Role::ControlPlane && std::mem::replace(&mut control_plane_faulted, true) {
                    continue;
                }
                let after = if fault.at_creation() { Duration::ZERO } else { after };
                planned.push(Planned { cluster: cluster.clone(), role, ordinal, fault, after });
            }
        }
    }
    Ok(planned)
}

/// When the controllers restart, from the start of provisioning (drawn from their own
/// stream of the seed, so that adding restarts leaves the faults as they were).
pub fn draw_restarts(profile: &Profile, seed: u64) -> anyhow::Result<Vec<Duration>> {
    let r = &profile.controller_restarts;
    if r.count == 0 {
        return Ok(Vec::new());
    }
    let within = duration(r.within.as_deref().unwrap_or("30s"))?;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x005e_ed0f_c0a7_7011);
    let mut at: Vec<Duration> = (0..r.count).map(|_| within.mul_f64(rng.random::<f64>())).collect();
    at.sort();
    Ok(at)
}

/// A spell of a cluster's API server out of reach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spell {
    pub cluster: String,
    /// How long after the cluster's first control plane Machine runs it begins.
    #[serde(with = "millis")]
    pub after: Duration,
    #[serde(with = "millis")]
    pub lasting: Duration,
}

/// The clusters whose API server goes out of reach, and when (drawn from their own stream
/// of the seed).
pub fn draw_spells(profile: &Profile, seed: u64, clusters: &[String]) -> anyhow::Result<Vec<Spell>> {
    let Some(u) = &profile.unreachable else { return Ok(Vec::new()) };
    let (min, max) = profile.strike_window()?;
    let lasting = duration(&u.spell)?;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x0ff1_17e5_ca7e_0002);
    let mut spells = Vec::new();
    for cluster in clusters {
        let (hit, at): (f64, f64) = (rng.random(), rng.random());
        if hit < u.share {
            spells.push(Spell { cluster: cluster.clone(), after: min + (max - min).mul_f64(at), lasting });
        }
    }
    Ok(spells)
}

/// A short digest of a schedule (FNV-1a over its JSON), to compare runs at a glance.
pub fn digest(planned: &[Planned], restarts: &[Duration], spells: &[Spell]) -> String {
    let restarts: Vec<u128> = restarts.iter().map(Duration::as_millis).collect();
    let json = serde_json::to_vec(&(planned, restarts, spells)).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in json {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(clusters: &[String]) -> Shape<'_> {
        Shape { clusters, control_plane_machines: 3, workers: 3 }
    }

    #[test]
    fn the_same_seed_draws_the_same_schedule() {
        let profile = Profile::load("default").expect("default profile");
        let clusters: Vec<String> = (0..200).map(|i| format!("c{i:05}")).collect();
        let a = draw(&profile, 7, &shape(&clusters)).expect("draw");
        let b = draw(&profile, 7, &shape(&clusters)).expect("draw");
        let c = draw(&profile, 8, &shape(&clusters)).expect("draw");
        let restarts = draw_restarts(&profile, 7).expect("restarts");
        assert_eq!(restarts, draw_restarts(&profile, 7).expect("restarts"));
        assert_eq!(restarts.len(), profile.controller_restarts.count);
        let spells = draw_spells(&profile, 7, &clusters).expect("spells");
        assert_eq!(spells, draw_spells(&profile, 7, &clusters).expect("spells"));
        assert!((2..40).contains(&spells.len()), "{} of 200 clusters out of reach", spells.len());
        assert_eq!(a, b);
        assert_eq!(digest(&a, &restarts, &spells), digest(&b, &restarts, &spells));
        assert_ne!(digest(&a, &restarts, &spells), digest(&c, &restarts, &spells), "another seed, another schedule");
        // 1,200 machines at 30%: about 360 faults, never two control plane ones per cluster.
        assert!((250..500).contains(&a.len()), "{} faults", a.len());
        for cluster in &clusters {
            let cp = a.iter().filter(|p| &p.cluster == cluster && p.role == Role::ControlPlane).count();
            assert!(cp <= 1, "{cluster}: {cp} control plane faults");
        }
        let (min, max) = profile.strike_window().expect("window");
        assert!(a.iter().all(|p| p.fault.at_creation() || (min..=max).contains(&p.after)));
        for fault in [
            Fault::FailedProvisioning,
            Fault::NodeNotReady,
            Fault::NodeUnknown,
            Fault::SlowStart,
            Fault::EtcdMemberLoss,
            Fault::EtcdLeaderChange,
        ] {
            assert!(a.iter().any(|p| p.fault == fault), "{fault:?} drawn");
        }
        assert!(a.iter().all(|p| !p.fault.control_plane_only() || p.role == Role::ControlPlane));
    }

    #[test]
    fn small_control_planes_are_left_alone_and_bad_profiles_refused() {
        let profile = Profile::load("default").expect("default profile");
        let clusters: Vec<String> = (0..100).map(|i| format!("c{i:05}")).collect();
        let one_member = Shape { clusters: &clusters, control_plane_machines: 1, workers: 3 };
        let planned = draw(&profile, 1, &one_member).expect("draw");
        assert!(planned.iter().all(|p| p.role == Role::Worker));
        let dir = tempfile::tempdir().expect("tempdir");
        let bad = dir.path().join("bad.yaml");
        let text = DEFAULT_PROFILE.replace("failedProvisioning: 0.05", "failedProvisioning: 0.95");
        std::fs::write(&bad, text).expect("write");
        let err = Profile::load(bad.to_str().expect("path")).expect_err("shares over 1");
        assert!(err.to_string().contains("add up to at most 1"), "{err}");
    }
}
