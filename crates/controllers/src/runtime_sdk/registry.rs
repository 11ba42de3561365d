//! Finding a handler by the name a ClusterClass gives it: `<handler>.<ExtensionConfig>`,
//! as discovery recorded it in the ExtensionConfig's `status.handlers`.

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::admission::FieldPath;
use drydock_api::capi::runtime::ExtensionHandler;
use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use drydock_api::selector::Selector;
use kube::ResourceExt;

use super::Error;
use super::wire::Hook;

/// The ExtensionConfigs known at one moment (the informer's, or a list's).
#[derive(Clone, Default)]
pub struct Registry {
    configs: Vec<Arc<ExtensionConfig>>,
}

/// A handler found, with its ExtensionConfig.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub config: Arc<ExtensionConfig>,
    pub handler: ExtensionHandler,
    /// The name the extension gave it: the path segment it is called at.
    pub short_name: String,
}

impl Registry {
    pub fn new(configs: Vec<Arc<ExtensionConfig>>) -> Self {
        Self { configs }
    }

    /// Every ExtensionConfig the server has, read once (for callers without informers).
    pub async fn list(client: &kube::Client) -> Result<Self, kube::Error> {
        let api: kube::Api<ExtensionConfig> = kube::Api::all(client.clone());
        let list = api.list(&Default::default()).await?;
        Ok(Self::new(list.items.into_iter().map(Arc::new).collect()))
    }

    /// The handler `name` of `hook`, which the ExtensionConfig lets objects of a
    /// namespace labelled `namespace_labels` use (`None`: not checked, for class-level
    /// hooks).
    pub fn resolve(
        &self,
        name: &str,
        hook: Hook,
        namespace: Option<(&str, &BTreeMap<String, String>)>,
    ) -> Result<Resolved, Error> {
        let found = self.configs.iter().find_map(|config| {
            let suffix = format!(".{}", config.name_any());
            let short = name.strip_suffix(&suffix).filter(|s| !s.is_empty())?;
            let handlers = config.status.as_ref().and_then(|s| s.handlers.as_ref())?;
            let handler = handlers.iter().find(|h| h.name == name)?;
            Some(Resolved { config: config.clone(), handler: handler.clone(), short_name: short.to_string() })
        });
        let resolved = found.ok_or_else(|| Error::UnknownHandler { handler: name.to_string() })?;
        if resolved.handler.request_hook.hook != hook.name() {
            return Err(Error::WrongHook {
                handler: name.to_string(),
                expected: hook.name(),
                actual: resolved.handler.request_hook.hook.clone(),
            });
        }
        if let Some((ns, labels)) = namespace
            && !selects(&resolved.config, labels)
        {
            return Err(Error::NamespaceNotSelected {
                handler: name.to_string(),
                config: resolved.config.name_any(),
                namespace: ns.to_string(),
            });
        }
        Ok(resolved)
    }
}

/// The labels of `namespace`, which namespace selectors are matched against (none when
/// it cannot be read: a selector that needs labels then leaves it out).
pub async fn namespace_labels(client: &kube::Client, namespace: &str) -> BTreeMap<String, String> {
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    match api.get_opt(namespace).await {
        Ok(ns) => ns.and_then(|n| n.metadata.labels).unwrap_or_default(),
        Err(e) => {
            tracing::debug!(namespace, error = %e, "could not read the namespace's labels");
            BTreeMap::new()
        }
    }
}

/// An unset or empty selector selects every namespace; one that does not parse, none
/// (admission refuses those).
fn selects(config: &ExtensionConfig, labels: &BTreeMap<String, String>) -> bool {
    let Some(sel) = &config.spec.namespace_selector else { return true };
    Selector::parse(sel, &FieldPath::new("spec").child("namespaceSelector")).is_ok_and(|s| s.matches(labels))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(name: &str, selector: serde_json::Value, handlers: serde_json::Value) -> Arc<ExtensionConfig> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig",
                "metadata": {"name": name},
                "spec": {"clientConfig": {"url": "https://x"}, "namespaceSelector": selector},
                "status": {"handlers": handlers},
            }))
            .expect("config"),
        )
    }

    fn handler(name: &str, hook: &str) -> serde_json::Value {
        json!({"name": name, "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": hook}})
    }

    #[test]
    fn handlers_resolve_by_their_full_name_and_hook() {
        let registry = Registry::new(vec![
            config(
                "ext",
                json!({}),
                json!([handler("gen.ext", "GeneratePatches"), handler("vars.ext", "DiscoverVariables")]),
            ),
            config("my.ext", json!({}), json!([handler("gen.my.ext", "GeneratePatches")])),
        ]);
        let r = registry.resolve("gen.ext", Hook::GeneratePatches, None).expect("found");
        assert_eq!((r.short_name.as_str(), r.config.name_any()), ("gen", "ext".to_string()));
        let r = registry.resolve("gen.my.ext", Hook::GeneratePatches, None).expect("dotted config name");
        assert_eq!((r.short_name.as_str(), r.config.name_any()), ("gen", "my.ext".to_string()));

        let err = registry.resolve("gen.other", Hook::GeneratePatches, None).unwrap_err();
        assert_eq!(err, Error::UnknownHandler { handler: "gen.other".into() });
        assert!(err.to_string().contains("not registered"), "{err}");
        let err = registry.resolve("vars.ext", Hook::GeneratePatches, None).unwrap_err();
        assert_eq!(err.to_string(), "extension handler \"vars.ext\" serves DiscoverVariables, not GeneratePatches");
    }

    #[test]
    fn the_namespace_selector_limits_who_may_call() {
        let registry = Registry::new(vec![config(
            "ext",
            json!({"matchLabels": {"team": "a"}}),
            json!([handler("gen.ext", "GeneratePatches")]),
        )]);
        let a = BTreeMap::from([("team".to_string(), "a".to_string())]);
        assert!(registry.resolve("gen.ext", Hook::GeneratePatches, Some(("ns-a", &a))).is_ok());
        let err = registry.resolve("gen.ext", Hook::GeneratePatches, Some(("ns-b", &BTreeMap::new()))).unwrap_err();
        assert!(matches!(err, Error::NamespaceNotSelected { ref namespace, .. } if namespace == "ns-b"), "{err:?}");
    }
}
