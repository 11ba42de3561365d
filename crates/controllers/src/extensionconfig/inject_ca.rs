//! CA injection, as upstream's ExtensionConfig controller does it: an ExtensionConfig
//! annotated `runtime.cluster.x-k8s.io/inject-ca-from-secret: <namespace>/<name>` gets that
//! Secret's `ca.crt` as its `spec.clientConfig.caBundle`, so the extension's certificate
//! can be issued by something that writes Secrets (cert-manager, say) without the bundle
//! being copied by hand. The Secret is read on each reconcile of the ExtensionConfig, which
//! includes the periodic rediscovery: a rotated CA is picked up then.

use base64::Engine;
use drydock_api::capi::runtime::INJECT_CA_FROM_SECRET_ANNOTATION;
use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

/// The key of the Secret holding the CA, as cert-manager writes it.
const CA_KEY: &str = "ca.crt";

/// The `caBundle` the annotation asks for: `None` without the annotation, an error saying
/// what is wrong with it or its Secret.
pub(super) async fn wanted(client: &kube::Client, ext: &ExtensionConfig) -> Option<Result<String, String>> {
    let source = ext.metadata.annotations.as_ref()?.get(INJECT_CA_FROM_SECRET_ANNOTATION)?;
    Some(read(client, source).await)
}

async fn read(client: &kube::Client, source: &str) -> Result<String, String> {
    let context = |m: String| format!("injecting the CA from Secret {source:?}: {m}");
    let Some((namespace, name)) = source.split_once('/').filter(|(ns, n)| !ns.is_empty() && !n.is_empty()) else {
        return Err(context(format!("{INJECT_CA_FROM_SECRET_ANNOTATION} must be <namespace>/<name>")));
    };
    let secret = Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
        .map_err(|e| context(e.to_string()))?
        .ok_or_else(|| context("the Secret does not exist".into()))?;
    let ca = secret.data.as_ref().and_then(|d| d.get(CA_KEY)).filter(|ca| !ca.0.is_empty());
    let ca = ca.ok_or_else(|| context(format!("the Secret has no {CA_KEY}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&ca.0))
}
