//! Coalesced triggers, for objects whose status summarises many others.
//!
//! A Cluster's v1beta2 counters and rolled-up conditions change with every step of every
//! Machine, MachineDeployment and control plane it aggregates; reconciling on each change
//! writes the Cluster once per change. A trigger sent through [`Coalesce::later`] opens a
//! short window for its object; the triggers that follow within the window join it, and the
//! object is reconciled once when the window ends. The summary lags by at most the window
//! and is written once per window instead of once per change.
//!
//! A window is short while few are open and longer the more are: a lone Cluster's summary
//! follows its Machines closely, while in a fleet-wide burst (where every write competes with
//! every other for the same cores) each summary is written less often.
//!
//! Only summaries go through here: a change another controller waits on (a Cluster's
//! infrastructure becoming ready, its control plane initialized) triggers at once.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use parking_lot::Mutex;
use tokio::sync::mpsc;

/// How long a window stays open: `quiet` while no other window is, growing in step with
/// the windows open to `busy` once `crowd` of them are.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub quiet: Duration,
    pub busy: Duration,
    pub crowd: usize,
}

impl Window {
    /// The length of a window opened while `open` others are.
    fn opened_among(&self, open: usize) -> Duration {
        let crowd = self.crowd.max(1);
        let share = open.min(crowd) as f64 / crowd as f64;
        self.quiet + self.busy.saturating_sub(self.quiet).mul_f64(share)
    }
}

/// The window of a summary: half a second for an object changing alone, up to two while a
/// hundred or more are changing at once.
pub const SUMMARY: Window = Window { quiet: Duration::from_millis(500), busy: Duration::from_secs(2), crowd: 100 };

/// Triggers held back until their window ends; [`Coalesce::new`] gives the stream they come
/// out of, for the controller's `reconcile_on`.
pub struct Coalesce<K: Resource<DynamicType = ()>> {
    window: Window,
    /// Objects whose window is open.
    open: Arc<Mutex<HashSet<ObjectRef<K>>>>,
    tx: mpsc::UnboundedSender<ObjectRef<K>>,
}

impl<K> Coalesce<K>
where
    K: Resource<DynamicType = ()> + 'static,
    ObjectRef<K>: Hash + Eq + Send + Sync,
{
    pub fn new(window: Window) -> (Arc<Self>, impl Stream<Item = ObjectRef<K>> + Send + 'static) {
        let (tx, rx) = mpsc::unbounded_channel();
        let this = Arc::new(Self { window, open: Arc::default(), tx });
        (this, tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
    }

    /// Triggers each of `refs` when its window ends, opening one where none is open.
    /// Returns nothing to trigger now, so a mapper can end with it.
    pub fn later(&self, refs: Vec<ObjectRef<K>>) -> Vec<ObjectRef<K>> {
        for r in refs {
            let window = {
                let mut open = self.open.lock();
                if !open.insert(r.clone()) {
                    continue;
                }
                self.window.opened_among(open.len() - 1)
            };
            let (open, tx) = (self.open.clone(), self.tx.clone());
            tokio::spawn(async move {
                tokio::time::sleep(window).await;
                // Closed before sending: a trigger arriving now opens the next window
                // rather than joining one already due.
                open.lock().remove(&r);
                let _ = tx.send(r);
            });
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::Cluster;
    use futures::StreamExt;

    fn r(name: &str) -> ObjectRef<Cluster> {
        ObjectRef::new(name).within("ns")
    }

    /// A fixed window of 500 ms.
    const FIXED: Window = Window { quiet: Duration::from_millis(500), busy: Duration::from_millis(500), crowd: 1 };

    #[tokio::test(start_paused = true)]
    async fn triggers_within_a_window_come_out_once_when_it_ends() {
        let (c, out) = Coalesce::<Cluster>::new(FIXED);
        let mut out = Box::pin(out);
        assert!(c.later(vec![r("a")]).is_empty(), "nothing is triggered at once");
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.later(vec![r("a"), r("b")]);
        assert_eq!(out.next().await, Some(r("a")), "a's window ends first");
        assert_eq!(out.next().await, Some(r("b")));
        // The window of `a` closed; a new trigger opens another.
        c.later(vec![r("a")]);
        let started = tokio::time::Instant::now();
        assert_eq!(out.next().await, Some(r("a")));
        assert_eq!(started.elapsed(), Duration::from_millis(500));
        // Nothing else was held back.
        let next = tokio::time::timeout(Duration::from_secs(5), out.next()).await;
        assert!(next.is_err(), "each object came out once per window: {next:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn windows_lengthen_with_the_windows_open() {
        let window = Window { quiet: Duration::from_millis(500), busy: Duration::from_secs(2), crowd: 2 };
        let (c, out) = Coalesce::<Cluster>::new(window);
        let mut out = Box::pin(out);
        let started = tokio::time::Instant::now();
        // Opened among none, one and two others: 500 ms, 1.25 s and 2 s (the crowd is full).
        c.later(vec![r("a"), r("b"), r("c")]);
        for (name, after) in [("a", 500), ("b", 1250), ("c", 2000)] {
            assert_eq!(out.next().await, Some(r(name)));
            assert_eq!(started.elapsed(), Duration::from_millis(after), "{name}'s window");
        }
        // Once they closed, a window opened alone is quiet again.
        c.later(vec![r("a")]);
        let reopened = tokio::time::Instant::now();
        assert_eq!(out.next().await, Some(r("a")));
        assert_eq!(reopened.elapsed(), Duration::from_millis(500));
    }
}
