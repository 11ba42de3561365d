//! `runtime.cluster.x-k8s.io`: ExtensionConfig, which registers a Runtime Extension (an
//! HTTPS server answering Runtime SDK hooks) and records the handlers its discovery call
//! reported. v1beta2 is stored; v1alpha1 is served, deprecated, as upstream v1.14 does.
//! Both versions share the client and handler types below; only where the conditions live
//! differs ([`conversion`]).

mod admission;
pub mod conversion;
pub mod v1alpha1;
pub mod v1beta2;

pub(crate) use admission::ExtensionConfigAdmission;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group.
pub const GROUP: &str = "runtime.cluster.x-k8s.io";
/// The API version of the hooks drydock calls.
pub const HOOKS_API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";
/// Timeout of a handler call when discovery named none (upstream's default).
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 10;
/// The port of a `service` reference that names none.
pub const DEFAULT_SERVICE_PORT: i32 = 443;
/// `<namespace>/<name>` of a Secret whose `ca.crt` becomes the ExtensionConfig's
/// `spec.clientConfig.caBundle`.
pub const INJECT_CA_FROM_SECRET_ANNOTATION: &str = "runtime.cluster.x-k8s.io/inject-ca-from-secret";

/// Where the extension listens: exactly one of `url` and `service`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// `https://host[:port][/path]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub url: Option<String>,
    /// A Service of the management cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM certificates (base64 in JSON) that the extension's serving certificate must chain to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 51200), extend("format" = "byte"))]
    pub ca_bundle: Option<String>,
}

/// A Service the extension is reached through.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReference {
    /// The Service's namespace.
    #[schemars(length(min = 1, max = 63))]
    pub namespace: String,
    /// The Service's name.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// A path prefix of every call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub path: Option<String>,
    /// The Service's port (443 when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// One handler the extension reported at discovery.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHandler {
    /// `<handler>.<ExtensionConfig name>`: what a ClusterClass names.
    #[schemars(length(min = 1, max = 512))]
    pub name: String,
    /// The hook it serves.
    pub request_hook: GroupVersionHook,
    /// Seconds a call may take (10 when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// What a failed call means (Fail when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

/// A hook and the API version of its request and response.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionHook {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[schemars(length(min = 1, max = 512))]
    pub api_version: String,
    /// The hook's name, e.g. `GeneratePatches`.
    #[schemars(length(min = 1, max = 256))]
    pub hook: String,
}

/// How a call that could not be made (unreachable, timed out, unreadable answer) counts.
/// An answer with `status: Failure` always fails.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum FailurePolicy {
    /// The call is skipped as if it had succeeded with an empty answer.
    Ignore,
    /// The caller fails.
    #[default]
    Fail,
}
