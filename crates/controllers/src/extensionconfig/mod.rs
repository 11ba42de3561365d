//! ExtensionConfigs: each is discovered (its extension's discovery call), its handlers
//! recorded in `status.handlers`, and `Discovered` set (v1beta2, and the v1beta1 one under
//! `status.deprecated`). The ClusterClass and topology controllers find handlers through
//! the ExtensionConfig informer. A failed discovery keeps the handlers of the last
//! successful one; the condition says it failed.
//!
//! A status write triggers a reconcile of its own, so discovery runs again only when the
//! spec changed (a new generation), when the last one failed (retried with backoff), or
//! once the last success is [`REDISCOVER`] old, as upstream's resync would.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use drydock_api::capi::condition_types::{DISCOVERED, DISCOVERY_FAILED};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use drydock_api::capi::v1beta2_conditions::names::{DISCOVERED_REASON, NOT_DISCOVERED_REASON};
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use kube::ResourceExt;
use kube::api::Api;
use parking_lot::Mutex;

use crate::framework::requeue::Requeue;
use crate::framework::runner;
use crate::framework::write::{Status, Writer};
use crate::framework::{Error, Result, pause};
use crate::runtime_sdk;
use crate::{Context, Running};

mod inject_ca;

const CONTROLLER: &str = "extensionconfig";
/// How long a successful discovery stands.
pub const REDISCOVER: Duration = Duration::from_secs(600);

struct State {
    ctx: Arc<Context>,
    writer: Writer,
    /// Per ExtensionConfig uid: the generation last discovered and when.
    discovered: Mutex<HashMap<String, (i64, Instant)>>,
}

/// The controller, on the ExtensionConfig informer it shares with the hook callers.
pub fn controller(ctx: &Arc<Context>) -> Running {
    let state =
        Arc::new(State { ctx: ctx.clone(), writer: Writer::tracking(CONTROLLER), discovered: Mutex::default() });
    let queue = runner::Queue::new(CONTROLLER);
    let informer = &ctx.informers.extension_configs;
    let c = kube::runtime::Controller::for_shared_stream(queue.track(informer.subscribe()), informer.store.clone());
    Box::pin(runner::run(CONTROLLER, c, queue, 2, ctx.clock().clone(), state, reconcile))
}

async fn reconcile(ext: Arc<ExtensionConfig>, state: Arc<State>) -> Result<Requeue> {
    if state.writer.is_stale(ext.as_ref()) || ext.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let now = state.ctx.clock().condition_time();
    let mut want = (*ext).clone();
    let api: Api<ExtensionConfig> = Api::all(state.ctx.client.clone());
    if pause::set_condition_unowned(&mut want, &ext.metadata, now.clone()) {
        state.writer.write(&api, &ext, &want, Status::observing(false)).await?;
        return Ok(Requeue::await_change());
    }
    match inject_ca::wanted(&state.ctx.client, &ext).await {
        // The new generation is discovered with the new bundle.
        Some(Ok(bundle)) if want.spec.client_config.ca_bundle.as_ref() != Some(&bundle) => {
            want.spec.client_config.ca_bundle = Some(bundle);
            state.writer.write(&api, &ext, &want, Status::observing(false)).await?;
            state
                .ctx
                .events
                .normal(ext.as_ref(), "CAInjected", "spec.clientConfig.caBundle set from the Secret".into())
                .await;
            return Ok(Requeue::await_change());
        }
        Some(Err(message)) => {
            want.mark_false(DISCOVERED, DISCOVERY_FAILED, Severity::Error, &message, now.clone());
            want.set_v1beta2(Observed::false_(DISCOVERED, NOT_DISCOVERED_REASON, message.clone()), &now);
            state.writer.write(&api, &ext, &want, Status::observing(false)).await?;
            state.ctx.events.warning(ext.as_ref(), DISCOVERY_FAILED, message.clone()).await;
            return Err(Error::Inconsistent { object: format!("ExtensionConfig {}", ext.name_any()), reason: message });
        }
        _ => {}
    }
    let (uid, generation) = (ext.uid().unwrap_or_default(), ext.metadata.generation.unwrap_or_default());
    if let Some(left) = state.fresh(&uid, generation) {
        return Ok(Requeue::after(left));
    }
    let result = runtime_sdk::discover(&state.ctx.client, &ext).await;
    let status = want.status.get_or_insert_with(Default::default);
    match &result {
        Ok(handlers) => {
            status.handlers = Some(handlers.clone());
            want.mark_true(DISCOVERED, now.clone());
            let discovered = Observed::true_(DISCOVERED, DISCOVERED_REASON);
            want.set_v1beta2(discovered.with_message(uncalled_message(handlers).unwrap_or_default()), &now);
        }
        Err(e) => {
            let message = e.to_string();
            want.mark_false(DISCOVERED, DISCOVERY_FAILED, Severity::Error, &message, now.clone());
            want.set_v1beta2(Observed::false_(DISCOVERED, NOT_DISCOVERED_REASON, message), &now);
        }
    }
    state.writer.write(&api, &ext, &want, Status::observing(false)).await?;
    match result {
        Ok(handlers) => {
            if !ext.status.as_ref().is_some_and(|s| s.handlers.as_ref() == Some(&handlers)) {
                let names: Vec<&str> = handlers.iter().map(|h| h.name.as_str()).collect();
                state.ctx.events.normal(ext.as_ref(), "Discovered", format!("handlers: {}", names.join(", "))).await;
                if let Some(message) = uncalled_message(&handlers) {
                    state.ctx.events.warning(ext.as_ref(), "HooksNotCalled", message).await;
                }
            }
            state.discovered.lock().insert(uid, (generation, Instant::now()));
            Ok(Requeue::after(REDISCOVER))
        }
        Err(e) => {
            state.ctx.events.warning(ext.as_ref(), DISCOVERY_FAILED, e.to_string()).await;
            state.discovered.lock().remove(&uid);
            Err(e.into())
        }
    }
}

/// What `Discovered` says of registered handlers drydock does not call (lifecycle hooks).
fn uncalled_message(handlers: &[drydock_api::capi::runtime::ExtensionHandler]) -> Option<String> {
    let uncalled = runtime_sdk::uncalled(handlers);
    (!uncalled.is_empty()).then(|| {
        format!("drydock does not call lifecycle hooks yet; these handlers are never called: {}", uncalled.join(", "))
    })
}

impl State {
    /// How long the last discovery of this generation still stands, if it does.
    fn fresh(&self, uid: &str, generation: i64) -> Option<Duration> {
        let seen = self.discovered.lock();
        let (g, at) = seen.get(uid)?;
        (*g == generation).then(|| REDISCOVER.checked_sub(at.elapsed())).flatten().filter(|d| !d.is_zero())
    }
}
