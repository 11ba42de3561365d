//! Combining the rechecks a reconcile's steps ask for into the action it returns.

use std::time::Duration;

use kube::runtime::controller::Action;

/// The earlier of two optional rechecks.
pub fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

pub fn action(recheck: Option<Duration>) -> Action {
    recheck.map_or_else(Action::await_change, Action::requeue)
}
