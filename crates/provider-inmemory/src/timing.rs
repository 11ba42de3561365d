//! When each simulated component of a machine finishes starting.
//!
//! All deadlines derive from one persisted start instant plus per-phase durations, so a
//! restarted controller recomputes the same schedule and resumes where it left off. Jitter
//! is deterministic per machine (a hash of its name), so restarts do not reshuffle timing:
//! `actual = duration + U(0, jitter × duration)`, with U drawn from the hash.
//!
//! Order (as upstream's in-memory provider): the VM clock starts when provisioning starts,
//! the Node clock when the VM is up, and the etcd and API server clocks (control plane
//! only) both when the Node is up.

use std::time::Duration;

use drydock_api::capi::duration;
use drydock_api::capi::inmemory::{InMemoryComponentBehaviour, InMemoryMachineBehaviour};
use jiff::{SignedDuration, Timestamp};

/// A simulated component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Vm,
    Node,
    Etcd,
    ApiServer,
}

impl Phase {
    fn salt(self) -> &'static str {
        match self {
            Phase::Vm => "vm",
            Phase::Node => "node",
            Phase::Etcd => "etcd",
            Phase::ApiServer => "apiServer",
        }
    }
}

/// The effective start-up durations of one machine (jitter applied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub vm: Duration,
    pub node: Duration,
    /// `None` for workers.
    pub etcd: Option<Duration>,
    pub api_server: Option<Duration>,
}

/// Instants at which each phase is done, relative to the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlines {
    pub vm: Timestamp,
    pub node: Timestamp,
    pub etcd: Option<Timestamp>,
    pub api_server: Option<Timestamp>,
}

/// What is done at a given instant, and when the next thing will be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub vm: bool,
    pub node: bool,
    pub etcd: bool,
    pub api_server: bool,
    /// The earliest deadline still ahead; `None` once everything is done.
    pub next: Option<Timestamp>,
}

impl Progress {
    pub fn all_done(&self) -> bool {
        self.vm && self.node && self.etcd && self.api_server
    }
}

impl Plan {
    /// The plan of machine `name`; control plane machines also start etcd and an API server.
    pub fn new(name: &str, behaviour: Option<&InMemoryMachineBehaviour>, control_plane: bool) -> Self {
        let pick = |f: fn(&InMemoryMachineBehaviour) -> Option<&InMemoryComponentBehaviour>, phase: Phase| {
            effective(name, phase, behaviour.and_then(f))
        };
        Self {
            vm: pick(|b| b.vm.as_ref(), Phase::Vm),
            node: pick(|b| b.node.as_ref(), Phase::Node),
            etcd: control_plane.then(|| pick(|b| b.etcd.as_ref(), Phase::Etcd)),
            api_server: control_plane.then(|| pick(|b| b.api_server.as_ref(), Phase::ApiServer)),
        }
    }

    pub fn deadlines(&self, start: Timestamp) -> Deadlines {
        let vm = add(start, self.vm);
        let node = add(vm, self.node);
        Deadlines { vm, node, etcd: self.etcd.map(|d| add(node, d)), api_server: self.api_server.map(|d| add(node, d)) }
    }

    /// What is done at `now` for a machine that started provisioning at `start`.
    pub fn progress(&self, start: Timestamp, now: Timestamp) -> Progress {
        let d = self.deadlines(start);
        let done = |t: Timestamp| t <= now;
        let pending = [Some(d.vm), Some(d.node), d.etcd, d.api_server].into_iter().flatten().filter(|t| !done(*t));
        Progress {
            vm: done(d.vm),
            node: done(d.node),
            etcd: d.etcd.is_none_or(done),
            api_server: d.api_server.is_none_or(done),
            next: pending.min(),
        }
    }
}

fn add(t: Timestamp, d: Duration) -> Timestamp {
    let d = SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX);
    t.checked_add(d).unwrap_or(Timestamp::MAX)
}

/// Duration plus the machine's deterministic share of the jitter. Unset or unparsable
/// settings mean zero (admission rejects unparsable ones).
fn effective(name: &str, phase: Phase, c: Option<&InMemoryComponentBehaviour>) -> Duration {
    let Some(p) = c.and_then(|c| c.provisioning.as_ref()) else {
        return Duration::ZERO;
    };
    let base =
        duration::parse(&p.startup_duration).ok().and_then(|d| Duration::try_from(d).ok()).unwrap_or(Duration::ZERO);
    let jitter = p
        .startup_jitter
        .as_deref()
        .and_then(|j| j.parse::<f64>().ok())
        .filter(|j| j.is_finite() && *j > 0.0)
        .unwrap_or(0.0);
    with_jitter(base, jitter, unit_fraction(name, phase))
}

/// `base + u × jitter × base` for `u` in [0, 1).
pub fn with_jitter(base: Duration, jitter: f64, u: f64) -> Duration {
    let extra = base.as_secs_f64() * jitter * u;
    base + Duration::try_from_secs_f64(extra).unwrap_or(Duration::ZERO)
}

/// A number in [0, 1) that depends only on the machine name and the phase.
pub fn unit_fraction(name: &str, phase: Phase) -> f64 {
    let h = fnv1a(&[name.as_bytes(), b"/", phase.salt().as_bytes()]);
    // The top 53 bits fit an f64 mantissa exactly.
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// 64-bit FNV-1a over the concatenation of `parts`, finished with a mixing step so nearby
/// names spread over the whole range.
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    // splitmix64 finaliser.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// How long until `t`, from `now` (zero when past).
pub fn until(now: Timestamp, t: Timestamp) -> Duration {
    let d = t.duration_since(now);
    Duration::try_from(d).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::inmemory::CommonProvisioningSettings;

    use super::*;

    fn comp(d: &str, j: Option<&str>) -> Option<InMemoryComponentBehaviour> {
        Some(InMemoryComponentBehaviour {
            provisioning: Some(CommonProvisioningSettings {
                startup_duration: d.into(),
                startup_jitter: j.map(str::to_string),
            }),
        })
    }

    fn behaviour() -> InMemoryMachineBehaviour {
        InMemoryMachineBehaviour {
            vm: comp("10s", Some("0.2")),
            node: comp("2s", Some("0.2")),
            api_server: comp("2s", None),
            etcd: comp("3s", Some("0")),
        }
    }

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn jitter_stays_within_bounds_and_is_deterministic() {
        let b = behaviour();
        for i in 0..200 {
            let name = format!("machine-{i}");
            let p = Plan::new(&name, Some(&b), true);
            assert!(p.vm >= Duration::from_secs(10) && p.vm < Duration::from_secs(12), "{p:?}");
            assert!(p.node >= Duration::from_secs(2) && p.node < Duration::from_millis(2400));
            assert_eq!(p.api_server, Some(Duration::from_secs(2)), "no jitter configured");
            assert_eq!(p.etcd, Some(Duration::from_secs(3)), "zero jitter");
            assert_eq!(p, Plan::new(&name, Some(&b), true), "same name, same plan");
        }
        let spread: std::collections::HashSet<_> =
            (0..50).map(|i| Plan::new(&format!("m{i}"), Some(&b), false).vm).collect();
        assert!(spread.len() > 40, "jitter spreads machines: {}", spread.len());
    }

    #[test]
    fn jitter_formula() {
        let base = Duration::from_secs(10);
        assert_eq!(with_jitter(base, 0.2, 0.0), base);
        assert_eq!(with_jitter(base, 0.2, 0.5), Duration::from_secs(11));
        assert!(with_jitter(base, 0.2, 0.999_999) < Duration::from_secs(12));
        assert_eq!(with_jitter(Duration::ZERO, 5.0, 0.7), Duration::ZERO);
        for i in 0..1000 {
            let u = unit_fraction(&format!("n{i}"), Phase::Node);
            assert!((0.0..1.0).contains(&u));
        }
        assert_ne!(unit_fraction("a", Phase::Vm), unit_fraction("a", Phase::Node));
    }

    #[test]
    fn unset_and_unparsable_settings_are_instant() {
        let p = Plan::new("m", None, true);
        assert_eq!(p.vm, Duration::ZERO);
        assert_eq!(p.etcd, Some(Duration::ZERO));
        let b = InMemoryMachineBehaviour { vm: comp("soon", Some("x")), ..Default::default() };
        assert_eq!(Plan::new("m", Some(&b), false).vm, Duration::ZERO);
        let prog = p.progress(ts(100), ts(100));
        assert!(prog.all_done());
        assert_eq!(prog.next, None);
    }

    #[test]
    fn progress_resumes_from_the_persisted_start() {
        let plan = Plan {
            vm: Duration::from_secs(10),
            node: Duration::from_secs(2),
            etcd: Some(Duration::from_secs(3)),
            api_server: Some(Duration::from_secs(1)),
        };
        let start = ts(1_000);
        let at = |s: i64| plan.progress(start, ts(s));

        let p = at(1_000);
        assert!(!p.vm && !p.node && !p.etcd && !p.api_server);
        assert_eq!(p.next, Some(ts(1_010)));

        // A controller restarted at t=1011 knows the VM is up and waits for the Node only.
        let p = at(1_011);
        assert!(p.vm && !p.node);
        assert_eq!(p.next, Some(ts(1_012)));

        // etcd and the API server start together once the Node is up.
        let p = at(1_012);
        assert!(p.node && !p.etcd && !p.api_server);
        assert_eq!(p.next, Some(ts(1_013)));
        let p = at(1_013);
        assert!(p.api_server && !p.etcd);
        assert_eq!(p.next, Some(ts(1_015)));

        // Long after (e.g. drydock was down for an hour) everything is done at once.
        let p = at(5_000);
        assert!(p.all_done());
        assert_eq!(p.next, None);
        assert_eq!(until(ts(5_000), ts(1_015)), Duration::ZERO);
        assert_eq!(until(ts(1_011), ts(1_012)), Duration::from_secs(1));
    }

    #[test]
    fn workers_have_no_control_plane_phases() {
        let plan = Plan::new("w", Some(&behaviour()), false);
        assert_eq!((plan.etcd, plan.api_server), (None, None));
        let d = plan.deadlines(ts(0));
        let p = plan.progress(ts(0), d.node);
        assert!(p.all_done(), "a worker is done when its Node is");
    }
}
