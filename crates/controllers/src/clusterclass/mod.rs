//! ClusterClass status, in v1beta2 and as the v1beta1 conditions: the variables Clusters
//! of the class can set ([`variables`], with those Runtime Extensions declare:
//! [`discovery`]), whether its template references name the versions their providers'
//! contracts list ([`refs`]), `Paused` and `observedGeneration`. Each referenced template
//! gets the class as an owner.

mod discovery;
mod refs;
mod variables;

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::core::v1beta2::ClusterClass;
use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use drydock_api::capi::v1beta2_conditions::HasV1Beta2Conditions;
use drydock_api::capi::v1beta2_conditions::names::{VARIABLE_DISCOVERY_FAILED_REASON, VARIABLES_READY};
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::framework::pause;
use crate::framework::requeue::Requeue;
use crate::framework::runner;
use crate::framework::templates::TemplateOwners;
use crate::framework::write::{Status, Writer};
use crate::framework::{Error, Result};
use crate::{Context, Running};

const CONTROLLER: &str = "clusterclass";
/// CRDs are not watched: a provider upgrade that moves a contract label is seen this often
/// (controller-runtime's default resync period).
const RECHECK: Duration = Duration::from_secs(600);

struct State {
    ctx: Arc<Context>,
    writer: Writer,
    templates: TemplateOwners,
}

/// The controller, on the ClusterClass informer it shares with the topology controller.
pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State {
        ctx: ctx.clone(),
        writer: Writer::tracking(CONTROLLER),
        templates: TemplateOwners::default(),
    });
    let queue = runner::Queue::new(CONTROLLER);
    let informer = &ctx.informers.cluster_classes;
    let classes = informer.store.clone();
    let on_extension = queue.map_to(move |e: &ExtensionConfig| classes_calling(&classes, &e.name_any()));
    let c = kube::runtime::Controller::for_shared_stream(queue.track(informer.subscribe()), informer.store.clone())
        .watches_shared_stream(ctx.informers.extension_configs.subscribe(), on_extension);
    Box::pin(runner::run(CONTROLLER, c, queue, 4, ctx.clock().clone(), state, reconcile))
}

/// The classes with a patch whose DiscoverVariables handler belongs to ExtensionConfig
/// `config`: discovered again when it is.
fn classes_calling(classes: &Store<ClusterClass>, config: &str) -> Vec<ObjectRef<ClusterClass>> {
    let suffix = format!(".{config}");
    classes
        .state()
        .iter()
        .filter(|cc| {
            cc.spec.patches.iter().flatten().any(|p| {
                p.external
                    .as_ref()
                    .and_then(|e| e.discover_variables_extension.as_deref())
                    .is_some_and(|h| h.ends_with(&suffix))
            })
        })
        .map(|cc| ObjectRef::from_obj(&**cc))
        .collect()
}

async fn reconcile(cc: Arc<ClusterClass>, state: Arc<State>) -> Result<Requeue> {
    if state.writer.is_stale(cc.as_ref()) || cc.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let now = state.ctx.clock().condition_time();
    let mut want = (*cc).clone();
    let paused = pause::set_condition_unowned(&mut want, &cc.metadata, now.clone());
    let discovered = if paused { Vec::new() } else { discovery::run(&state.ctx, &cc).await };
    if !paused {
        variables::set_status(&mut want, &discovered, &now);
        let versions = refs::versions(&cc, &state.ctx.contracts).await;
        want.set_v1beta2(refs::condition(&versions), &now);
    }
    let namespace = cc.namespace().unwrap_or_default();
    let api = state.ctx.api::<ClusterClass>(&namespace);
    state.writer.write(&api, &cc, &want, Status::observing(!paused)).await?;
    if paused {
        return Ok(Requeue::await_change());
    }
    // A failed discovery is retried with backoff; the condition says why, and an Event
    // when the message is new.
    if let Some(Err(e)) = discovered.into_iter().map(|d| d.result).find(Result::is_err) {
        let message = |c: &ClusterClass| c.v1beta2_condition(VARIABLES_READY).map(|c| c.message.clone());
        if message(&cc) != message(&want) {
            let note = message(&want).unwrap_or_default();
            state.ctx.events.warning(cc.as_ref(), VARIABLE_DISCOVERY_FAILED_REASON, note).await;
        }
        return Err(e.into());
    }
    let mut missing = Vec::new();
    for r in refs::template_refs(&cc) {
        let found = state
            .templates
            .ensure(&state.ctx, CONTROLLER, &namespace, &refs::object_ref(r, &namespace), cc.as_ref())
            .await?;
        if !found {
            missing.push(format!("{} {namespace}/{}", r.kind, r.name));
        }
    }
    // Templates are not watched: one created later is found on a retry.
    if !missing.is_empty() {
        return Err(Error::Missing(missing.join(", ")));
    }
    Ok(Requeue::after(RECHECK))
}
