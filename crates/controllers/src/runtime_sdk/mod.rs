//! The Runtime SDK client: calls to Runtime Extensions (HTTPS servers an ExtensionConfig
//! registers) for the hooks drydock runs: discovery (the ExtensionConfig controller),
//! DiscoverVariables (the ClusterClass controller), GeneratePatches, ValidateTopology and
//! GenerateUpgradePlan (the topology controller).
//!
//! [`wire`] holds the requests and answers as extensions read and write them, [`client`]
//! the HTTP call, [`registry`] how a handler name (`<handler>.<ExtensionConfig>`) is found
//! among the discovered ExtensionConfigs, and [`call`] one call with the handler's timeout
//! and failure policy. Lifecycle hooks (BeforeClusterCreate and the like) are not called.

pub mod call;
pub mod client;
pub mod registry;
pub mod wire;

pub use call::{call, discover};
pub use registry::{Registry, Resolved};

use drydock_api::capi::runtime::ExtensionHandler;

/// The hooks drydock calls; an extension may register others (lifecycle hooks), which it
/// does not call yet.
const CALLED: [wire::Hook; 4] = [
    wire::Hook::DiscoverVariables,
    wire::Hook::GeneratePatches,
    wire::Hook::ValidateTopology,
    wire::Hook::GenerateUpgradePlan,
];

/// The names of the handlers whose hook drydock never calls.
pub fn uncalled(handlers: &[ExtensionHandler]) -> Vec<&str> {
    handlers
        .iter()
        .filter(|h| !CALLED.iter().any(|c| c.name() == h.request_hook.hook))
        .map(|h| h.name.as_str())
        .collect()
}

/// A hook call that failed. Each message names the handler (or ExtensionConfig), since
/// it ends up in a condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No discovered ExtensionConfig lists the handler.
    #[error("extension handler {handler:?} is not registered: no discovered ExtensionConfig lists it")]
    UnknownHandler { handler: String },
    /// The handler serves another hook.
    #[error("extension handler {handler:?} serves {actual}, not {expected}")]
    WrongHook { handler: String, expected: &'static str, actual: String },
    /// The ExtensionConfig's namespace selector leaves out the object's namespace.
    #[error(
        "extension handler {handler:?} may not be called for namespace {namespace:?}: the namespaceSelector of ExtensionConfig {config} does not select it"
    )]
    NamespaceNotSelected { handler: String, config: String, namespace: String },
    /// The ExtensionConfig's client configuration cannot be used.
    #[error("ExtensionConfig {config}: {message}")]
    Config { config: String, message: String },
    /// The call could not be made, timed out, or its answer could not be read.
    #[error("calling extension handler {handler:?}: {message}")]
    Call { handler: String, message: String },
    /// The extension answered `status: Failure`.
    #[error("extension handler {handler:?} failed: {message}")]
    Failure { handler: String, message: String },
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::runtime::{ExtensionHandler, GroupVersionHook};

    use super::*;

    #[test]
    fn lifecycle_handlers_are_the_uncalled_ones() {
        let h = |name: &str, hook: &str| ExtensionHandler {
            name: name.into(),
            request_hook: GroupVersionHook {
                api_version: "hooks.runtime.cluster.x-k8s.io/v1alpha1".into(),
                hook: hook.into(),
            },
            ..Default::default()
        };
        let handlers =
            [h("gen.x", "GeneratePatches"), h("create.x", "BeforeClusterCreate"), h("plan.x", "GenerateUpgradePlan")];
        assert_eq!(uncalled(&handlers), ["create.x"]);
    }
}
