//! The one clock controllers and providers read.
//!
//! In a running drydock it is the system clock. Tests use a paused clock that moves only
//! when told to ([`Clock::advance`]), so behaviour that depends on time (start-up
//! durations, health-check timeouts, remediation retry periods, minReadySeconds,
//! rolloutAfter, drain timeouts) is tested in milliseconds instead of by waiting.
//!
//! Time-dependent requeues go through the clock too: the runner turns a reconcile's
//! [`super::requeue::Requeue`] into a wake-up on this clock, so advancing a paused clock
//! reconciles every object whose deadline it passed.

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::conditions;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::sync::watch;

/// A cheap-to-clone handle on the system clock or on one paused clock.
#[derive(Clone, Debug)]
pub struct Clock(Source);

/// How long from `from` to `to` (zero when `to` comes first).
pub fn elapsed(from: Timestamp, to: Timestamp) -> Duration {
    Duration::try_from(to.duration_since(from)).unwrap_or(Duration::ZERO)
}

#[derive(Clone, Debug)]
enum Source {
    System,
    /// The paused clock's current instant; every handle shares it.
    Paused(Arc<watch::Sender<Timestamp>>),
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(Source::System)
    }

    /// A clock stopped at `start` until [`Clock::advance`] moves it.
    pub fn paused_at(start: Timestamp) -> Self {
        Self(Source::Paused(Arc::new(watch::Sender::new(start))))
    }

    /// A clock stopped at the current system time.
    pub fn paused() -> Self {
        Self::paused_at(Timestamp::now())
    }

    pub fn is_paused(&self) -> bool {
        matches!(self.0, Source::Paused(_))
    }

    pub fn now(&self) -> Timestamp {
        match &self.0 {
            Source::System => Timestamp::now(),
            Source::Paused(now) => *now.borrow(),
        }
    }

    /// The current instant as conditions and timestamps in objects record it (whole seconds).
    pub fn condition_time(&self) -> Time {
        conditions::time_at(self.now())
    }

    /// Moves a paused clock forward by `by`, waking everything waiting for an instant it
    /// passes. The system clock cannot be moved: it is left alone.
    pub fn advance(&self, by: Duration) {
        if let Source::Paused(now) = &self.0 {
            now.send_modify(|t| *t = add(*t, by));
        } else {
            tracing::warn!("advance called on the system clock; ignored");
        }
    }

    /// How long from now until `t` (zero once it has passed).
    pub fn until(&self, t: Timestamp) -> Duration {
        Duration::try_from(t.duration_since(self.now())).unwrap_or(Duration::ZERO)
    }

    /// How long since `t` (zero when `t` lies ahead).
    pub fn since(&self, t: Timestamp) -> Duration {
        elapsed(t, self.now())
    }

    /// Resolves once the clock reads `t` or later.
    pub async fn sleep_until(&self, t: Timestamp) {
        match &self.0 {
            Source::System => tokio::time::sleep(self.until(t)).await,
            Source::Paused(now) => {
                let mut rx = now.subscribe();
                // The sender lives as long as any handle of this clock; if every handle is
                // gone nobody can advance it, so waiting forever is the right answer.
                if rx.wait_for(|now| *now >= t).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

fn add(t: Timestamp, by: Duration) -> Timestamp {
    let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
    t.checked_add(by).unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_paused_clock_moves_only_when_advanced() {
        let start = Timestamp::from_second(1_700_000_000).expect("instant");
        let clock = Clock::paused_at(start);
        assert_eq!(clock.now(), start);
        let deadline = add(start, Duration::from_secs(300));
        let waiter = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(deadline).await }
        });
        clock.advance(Duration::from_secs(299));
        assert_eq!(clock.until(deadline), Duration::from_secs(1));
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "woke before its instant");
        clock.advance(Duration::from_secs(1));
        tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woke").expect("task");
        assert_eq!(clock.since(start), Duration::from_secs(300));
        assert_eq!(clock.until(start), Duration::ZERO);
    }

    #[test]
    fn the_system_clock_follows_the_system_time() {
        let clock = Clock::system();
        let before = Timestamp::now();
        clock.advance(Duration::from_secs(3600));
        let read = clock.now();
        assert!(read >= before && read < add(before, Duration::from_secs(60)), "{read} vs {before}");
    }
}
