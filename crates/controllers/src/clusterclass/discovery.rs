//! The DiscoverVariables calls of a class: one per patch with
//! `external.discoverVariablesExtension`, with the patch's settings.

use std::sync::Arc;

use drydock_api::capi::core::v1beta2::ClusterClass;
use kube::ResourceExt;

use crate::Context;
use crate::runtime_sdk::registry::namespace_labels;
use crate::runtime_sdk::wire::{DiscoverVariablesRequest, DiscoveredVariable, Hook};
use crate::runtime_sdk::{self, Registry};

/// What one patch's extension answered.
pub struct Discovered {
    pub patch: String,
    pub result: Result<Vec<DiscoveredVariable>, runtime_sdk::Error>,
}

/// Calls the DiscoverVariables handler of every external patch of `cc` that names one.
pub async fn run(ctx: &Arc<Context>, cc: &ClusterClass) -> Vec<Discovered> {
    let patches: Vec<_> = cc
        .spec
        .patches
        .iter()
        .flatten()
        .filter_map(|p| {
            let ext = p.external.as_ref()?;
            Some((p.name.clone(), ext.discover_variables_extension.clone()?, ext.settings.clone()))
        })
        .collect();
    if patches.is_empty() {
        return Vec::new();
    }
    let registry = Registry::new(ctx.informers.extension_configs.store.state());
    let namespace = cc.namespace().unwrap_or_default();
    let labels = namespace_labels(&ctx.client, &namespace).await;
    let mut out = Vec::new();
    for (patch, handler, settings) in patches {
        let result = match registry.resolve(&handler, Hook::DiscoverVariables, Some((&namespace, &labels))) {
            Ok(resolved) => runtime_sdk::call(&ctx.client, &resolved, settings.as_ref(), &DiscoverVariablesRequest {})
                .await
                .map(|answer| answer.variables),
            Err(e) => Err(e),
        };
        out.push(Discovered { patch, result });
    }
    out
}
