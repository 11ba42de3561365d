//! What a reconcile asks of the runner: when to look at the object again if nothing it
//! watches changes first.

use std::time::Duration;

use jiff::Timestamp;
use kube::runtime::controller::Action;

use super::clock::Clock;

/// When to reconcile an object again without a watch event. Reconcilers return this
/// instead of kube-rs' `Action` so that the runner knows the delay: on a paused
/// [`Clock`] it also wakes the object when the clock is advanced past it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requeue {
    after: Option<Duration>,
}

impl Requeue {
    /// Only a change of something watched brings the next reconcile.
    pub const fn await_change() -> Self {
        Self { after: None }
    }

    /// Again after `after` (or sooner, on a change).
    pub const fn after(after: Duration) -> Self {
        Self { after: Some(after) }
    }

    /// Again after `after` when there is one, else on a change.
    pub const fn after_opt(after: Option<Duration>) -> Self {
        Self { after }
    }

    /// Again once `clock` reads `t`.
    pub fn at(clock: &Clock, t: Timestamp) -> Self {
        Self::after(clock.until(t))
    }

    /// Whichever of the two comes first.
    #[must_use]
    pub fn sooner(self, other: Self) -> Self {
        Self { after: sooner(self.after, other.after) }
    }

    pub const fn delay(self) -> Option<Duration> {
        self.after
    }

    /// The kube-rs action of the same meaning.
    pub fn action(self) -> Action {
        self.after.map_or_else(Action::await_change, Action::requeue)
    }
}

/// The earlier of two optional delays (absent means never).
pub fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sooner_keeps_the_earliest_and_ignores_absent_delays() {
        let five = Requeue::after(Duration::from_secs(5));
        let nine = Requeue::after(Duration::from_secs(9));
        assert_eq!(five.sooner(nine), five);
        assert_eq!(nine.sooner(five), five);
        assert_eq!(Requeue::await_change().sooner(nine), nine);
        assert_eq!(Requeue::await_change().sooner(Requeue::await_change()).delay(), None);
        assert_eq!(Requeue::after_opt(None), Requeue::await_change());
    }

    #[test]
    fn at_is_measured_on_the_given_clock() {
        let start = Timestamp::from_second(1_700_000_000).expect("instant");
        let clock = Clock::paused_at(start);
        let t = start.checked_add(jiff::SignedDuration::from_secs(90)).expect("instant");
        assert_eq!(Requeue::at(&clock, t).delay(), Some(Duration::from_secs(90)));
        clock.advance(Duration::from_secs(120));
        assert_eq!(Requeue::at(&clock, t).delay(), Some(Duration::ZERO));
    }
}
