//! Runs a kube-rs `Controller` the same way for every kind: bounded concurrency, metrics
//! under controller-runtime's names, per-object exponential backoff on errors, a
//! work-queue depth gauge, and requeues measured on the controllers' [`Clock`].

use std::collections::HashSet;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::reflector::ObjectRef;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tracing::Instrument as _;

use super::clock::Clock;
use super::error::{Backoff, Error};
use super::metrics::{self, QueueLabel};
use super::requeue::Requeue;

/// The objects triggered and not yet reconciled (the work queue's depth).
#[derive(Default)]
pub struct Queue {
    name: String,
    pending: Mutex<HashSet<String>>,
}

impl Queue {
    pub fn new(name: &str) -> Arc<Self> {
        Arc::new(Self { name: name.to_string(), pending: Mutex::new(HashSet::new()) })
    }

    fn label(&self) -> QueueLabel {
        QueueLabel { name: self.name.clone() }
    }

    pub fn add(&self, key: String) {
        let mut p = self.pending.lock();
        if p.insert(key) {
            let m = metrics::get();
            m.adds.get_or_create(&self.label()).inc();
            m.depth.get_or_create(&self.label()).set(p.len() as i64);
        }
    }

    fn done(&self, key: &str) {
        let mut p = self.pending.lock();
        if p.remove(key) {
            metrics::get().depth.get_or_create(&self.label()).set(p.len() as i64);
        }
    }

    /// Wraps a main-kind trigger stream so its objects count as queued.
    pub fn track<K>(
        self: &Arc<Self>,
        s: impl Stream<Item = Arc<K>> + Send + 'static,
    ) -> impl Stream<Item = Arc<K>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + Send + Sync + 'static,
    {
        let q = self.clone();
        s.map(move |o| {
            q.add(key_of(o.as_ref()));
            o
        })
    }

    /// Wraps a stream of triggers (for `reconcile_on`) so its objects count as queued.
    pub fn track_refs<K>(
        self: &Arc<Self>,
        s: impl Stream<Item = ObjectRef<K>> + Send + 'static,
    ) -> impl Stream<Item = ObjectRef<K>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + 'static,
    {
        let q = self.clone();
        s.map(move |r| {
            q.add(ref_key(&r));
            r
        })
    }

    /// Maps a related object to the main objects it triggers, counting them as queued.
    pub fn map_to<K, O, F>(self: &Arc<Self>, f: F) -> impl Fn(Arc<O>) -> Vec<ObjectRef<K>> + Send + Sync + 'static
    where
        K: Resource<DynamicType = ()> + 'static,
        K::DynamicType: Eq + Hash + Clone,
        O: 'static,
        F: Fn(&O) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    {
        let q = self.clone();
        move |o| {
            let refs = f(&o);
            for r in &refs {
                q.add(ref_key(r));
            }
            refs
        }
    }
}

/// `namespace/name` of an object.
pub fn key_of<K: Resource>(o: &K) -> String {
    format!("{}/{}", o.meta().namespace.as_deref().unwrap_or_default(), o.meta().name.as_deref().unwrap_or_default())
}

fn ref_key<K: Resource>(r: &ObjectRef<K>) -> String
where
    K::DynamicType: Eq + Hash + Clone,
{
    format!("{}/{}", r.namespace.as_deref().unwrap_or_default(), r.name)
}

/// Wakes objects whose requeue instant a paused clock passed. On the system clock
/// kube-rs' own scheduler does this; a paused clock does not move with real time, so each
/// requeue also waits on the clock and triggers the object when it is advanced far enough.
struct Wakeups<K: Resource<DynamicType = ()>> {
    clock: Clock,
    tx: tokio::sync::mpsc::UnboundedSender<ObjectRef<K>>,
}

impl<K: Resource<DynamicType = ()> + 'static> Wakeups<K> {
    fn new(clock: &Clock) -> (Self, impl Stream<Item = ObjectRef<K>> + Send + 'static) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Self { clock: clock.clone(), tx }, tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
    }

    fn schedule(&self, obj: &K, requeue: Requeue) {
        let Some(after) = requeue.delay().filter(|_| self.clock.is_paused()) else {
            return;
        };
        let at = self.clock.now() + jiff::SignedDuration::try_from(after).unwrap_or(jiff::SignedDuration::MAX);
        let (clock, tx, obj_ref) = (self.clock.clone(), self.tx.clone(), ObjectRef::from_obj(obj));
        tokio::spawn(async move {
            clock.sleep_until(at).await;
            let _ = tx.send(obj_ref);
        });
    }
}

/// What one reconcile needs from its controller's runner.
struct One<K: Resource<DynamicType = ()>, F> {
    name: &'static str,
    reconcile: Arc<F>,
    backoff: Arc<Backoff>,
    queue: Arc<Queue>,
    label: metrics::ControllerLabel,
    wakeups: Arc<Wakeups<K>>,
}

impl<K, F> One<K, F>
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    /// Reconciles `obj` on its own task, with metrics, backoff bookkeeping and debug logs
    /// (start, then end with duration and outcome; failures are logged by the error policy).
    async fn run<C, Fut>(self, obj: Arc<K>, ctx: Arc<C>) -> Result<Action, Error>
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Requeue, Error>> + Send + 'static,
    {
        let (name, key) = (self.name, key_of(obj.as_ref()));
        self.queue.done(&key);
        let active = metrics::get().active.get_or_create(&self.label).clone();
        active.inc();
        let started = Instant::now();
        tracing::debug!(controller = name, object = %key, "reconcile started");
        // Logs from inside the reconcile name the controller and object (only when debug is on).
        let span = tracing::debug_span!("reconcile", controller = name, object = %key);
        // kube-rs polls all of a controller's reconciles on its own task; spawning
        // lets them use every core instead of one per controller.
        let result = match tokio::spawn((self.reconcile)(obj.clone(), ctx).instrument(span)).await {
            Ok(Err(e)) if e.is_gone() => Ok(Requeue::await_change()),
            Ok(r) => r,
            Err(e) => Err(Error::Task(e.to_string())),
        };
        if let Ok(requeue) = &result {
            self.wakeups.schedule(obj.as_ref(), *requeue);
        }
        active.dec();
        let outcome = match &result {
            Ok(r) if r.delay().is_none() => "success",
            Ok(_) => "requeue_after",
            Err(e) if e.is_conflict() => "requeue",
            Err(_) => "error",
        };
        let duration = started.elapsed();
        metrics::observe(name, outcome, duration);
        let requeue_after = result.as_ref().ok().and_then(|r| r.delay());
        tracing::debug!(controller = name, object = %key, outcome, ?duration, ?requeue_after, "reconcile finished");
        if result.is_ok() {
            self.backoff.succeed(&key);
        }
        result.map(Requeue::action)
    }
}

/// Runs `controller` until the process stops.
pub async fn run<K, C, F, Fut>(
    name: &'static str,
    controller: Controller<K>,
    queue: Arc<Queue>,
    concurrency: u16,
    clock: Clock,
    ctx: Arc<C>,
    reconcile: F,
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Requeue, Error>> + Send + 'static,
{
    let (wakeups, woken) = Wakeups::new(&clock);
    let wakeups = Arc::new(wakeups);
    let backoff = Arc::new(Backoff::default());
    let reconcile = Arc::new(reconcile);
    let b = backoff.clone();
    let q = queue.clone();
    let label = metrics::controller(name);
    // Series exist from the start (at zero), as controller-runtime exports them.
    let m = metrics::get();
    let _ = m.errors.get_or_create(&label);
    let _ = m.active.get_or_create(&label);
    let _ = m.depth.get_or_create(&queue.label());
    controller
        .with_config(Config::default().concurrency(concurrency))
        .reconcile_on(woken)
        .run(
            move |obj: Arc<K>, ctx: Arc<C>| {
                let one = One {
                    name,
                    reconcile: reconcile.clone(),
                    backoff: b.clone(),
                    queue: q.clone(),
                    label: label.clone(),
                    wakeups: wakeups.clone(),
                };
                one.run(obj, ctx)
            },
            move |obj: Arc<K>, err: &Error, _ctx: Arc<C>| {
                let key = key_of(obj.as_ref());
                if err.is_conflict() {
                    tracing::debug!(controller = name, object = %key, "conflict; retrying");
                    return Action::requeue(Duration::from_millis(20 + rand::random::<u64>() % 80));
                }
                let wait = backoff.fail(&key);
                tracing::warn!(controller = name, object = %key, error = %err, retry_in = ?wait, "reconcile failed");
                Action::requeue(wait)
            },
            ctx,
        )
        .for_each(|_| futures::future::ready(()))
        .await;
}

/// Runs a controller that alone reads its kind: it owns the kind's informer (over the
/// namespace `settings.namespace` names, or all of them) and starts the watch when it
/// runs, so that a kind nothing else reads costs no shared informer.
pub fn run_alone<K, C, F, Fut>(
    name: &'static str,
    ctx: &crate::Context,
    concurrency: u16,
    state: Arc<C>,
    reconcile: F,
) -> crate::Running
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Requeue, Error>> + Send + 'static,
{
    let api: kube::Api<K> = match ctx.settings.namespace.as_deref() {
        Some(ns) => kube::Api::namespaced(ctx.client.clone(), ns),
        None => kube::Api::all(ctx.client.clone()),
    };
    let informer = super::informer::Informer::new(api);
    let queue = Queue::new(name);
    let controller = Controller::for_shared_stream(queue.track(informer.subscribe()), informer.store.clone());
    let clock = ctx.clock().clone();
    Box::pin(async move {
        informer.start();
        run(name, controller, queue, concurrency, clock, state, reconcile).await;
    })
}
