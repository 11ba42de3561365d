//! A call of one handler, with its timeout and failure policy, and the discovery call.
//!
//! A call that could not be made, timed out or got an unreadable answer counts as a
//! success with an empty answer when the handler's failure policy is `Ignore`; an answer
//! with `status: Failure` always fails the caller, as upstream's client does.

use std::collections::BTreeMap;
use std::time::Duration;

use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use drydock_api::capi::runtime::{DEFAULT_TIMEOUT_SECONDS, ExtensionHandler, FailurePolicy};
use kube::ResourceExt;
use serde_json::Value;

use super::client::Endpoint;
use super::wire::{self, DiscoveryRequest, HookRequest, Response, ResponseStatus};
use super::{Error, Resolved};

/// Calls the resolved handler with `request`; `settings` are the ExtensionConfig's with
/// the caller's (a patch's `external.settings`) over them. `client` reads a `service`
/// reference's endpoints.
pub async fn call<R: HookRequest>(
    client: &kube::Client,
    resolved: &Resolved,
    settings: Option<&BTreeMap<String, String>>,
    request: &R,
) -> Result<R::Response, Error> {
    let handler = resolved.handler.name.clone();
    let mut all = resolved.config.spec.settings.clone().unwrap_or_default();
    all.extend(settings.cloned().unwrap_or_default());
    let seconds = resolved.handler.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS).max(1);
    let timeout = Duration::from_secs(u64::try_from(seconds).unwrap_or(10));
    let endpoint = Endpoint::resolve(&resolved.config.spec.client_config, timeout, client)
        .await
        .map_err(|message| Error::Config { config: resolved.config.name_any(), message })?;
    let body = wire::envelope(request, &all).map_err(|message| Error::Call { handler: handler.clone(), message })?;
    let url = endpoint.url(&R::HOOK.path(Some(&resolved.short_name)), timeout);
    let answer = match endpoint.post(url, body).await.and_then(decode::<R::Response>) {
        Ok(answer) => answer,
        Err(message) if resolved.handler.failure_policy == Some(FailurePolicy::Ignore) => {
            tracing::info!(handler, %message, "extension call failed; ignored by its failure policy");
            return Ok(R::Response::default());
        }
        Err(message) => return Err(Error::Call { handler, message }),
    };
    if answer.status == ResponseStatus::Failure {
        return Err(Error::Failure { handler, message: answer.message });
    }
    Ok(answer.body)
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<Response<T>, String> {
    serde_json::from_value(v).map_err(|e| format!("the answer does not fit the hook's response: {e}"))
}

/// Asks the extension of `config` for its handlers, named `<handler>.<config>` with
/// upstream's defaults filled in (10 s, `Fail`).
pub async fn discover(client: &kube::Client, config: &ExtensionConfig) -> Result<Vec<ExtensionHandler>, Error> {
    let name = config.name_any();
    let timeout = Duration::from_secs(10);
    let endpoint = Endpoint::resolve(&config.spec.client_config, timeout, client)
        .await
        .map_err(|message| Error::Config { config: name.clone(), message })?;
    let body = wire::envelope(&DiscoveryRequest {}, &config.spec.settings.clone().unwrap_or_default())
        .map_err(|message| Error::Config { config: name.clone(), message })?;
    let url = endpoint.url(&wire::Hook::Discovery.path(None), timeout);
    let fail = |message: String| Error::Call { handler: format!("discovery of {name}"), message };
    let answer = endpoint.post(url, body).await.and_then(decode::<wire::DiscoveryResponse>).map_err(fail)?;
    if answer.status == ResponseStatus::Failure {
        return Err(Error::Failure { handler: format!("discovery of {name}"), message: answer.message });
    }
    Ok(named(&name, answer.body.handlers))
}

/// Handlers as registered: their full names and defaults.
fn named(config: &str, handlers: Vec<ExtensionHandler>) -> Vec<ExtensionHandler> {
    handlers
        .into_iter()
        .map(|h| ExtensionHandler {
            name: format!("{}.{config}", h.name),
            timeout_seconds: Some(h.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS)),
            failure_policy: Some(h.failure_policy.unwrap_or_default()),
            request_hook: h.request_hook,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::runtime_sdk::wire::GeneratePatchesRequest;

    /// An extension answering one call with `answer` over plain HTTP: its base URL.
    async fn answering(answer: &'static str) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            // The whole request first: headers, then as many bytes as Content-Length says.
            while let Ok(n) = s.read(&mut buf).await {
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).to_lowercase();
                let Some(end) = text.find("\r\n\r\n") else { continue };
                let length = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if n == 0 || seen.len() >= end + 4 + length {
                    break;
                }
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let _ = s.write_all(reply.as_bytes()).await;
        });
        url
    }

    fn resolved(url: &str, policy: &str) -> Resolved {
        let config: ExtensionConfig = serde_json::from_value(json!({
            "apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig",
            "metadata": {"name": "ext"}, "spec": {"clientConfig": {"url": url}},
        }))
        .expect("config");
        let handler: ExtensionHandler = serde_json::from_value(json!({"name": "gen.ext", "timeoutSeconds": 2,
            "failurePolicy": policy,
            "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"}}))
        .expect("handler");
        Resolved { config: Arc::new(config), handler, short_name: "gen".into() }
    }

    #[tokio::test]
    async fn failure_answers_always_fail_and_broken_calls_follow_the_failure_policy() {
        let request = GeneratePatchesRequest::default();
        // URLs only: the client reads nothing.
        let client = crate::framework::fake_api::FakeSecrets::new().client();
        let url = answering(r#"{"status": "Failure", "message": "no such image"}"#).await;
        let err = call(&client, &resolved(&url, "Ignore"), None, &request).await.unwrap_err();
        assert_eq!(err, Error::Failure { handler: "gen.ext".into(), message: "no such image".into() });
        assert_eq!(err.to_string(), "extension handler \"gen.ext\" failed: no such image");

        let url = answering(r#"{"status": "Success", "items": []}"#).await;
        assert!(call(&client, &resolved(&url, "Fail"), None, &request).await.is_ok());

        // Nothing listens there any more.
        let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let closed = format!("http://{}", gone.local_addr().expect("address"));
        drop(gone);
        let err = call(&client, &resolved(&closed, "Fail"), None, &request).await.unwrap_err();
        assert!(matches!(err, Error::Call { ref handler, .. } if handler == "gen.ext"), "{err:?}");
        assert!(call(&client, &resolved(&closed, "Ignore"), None, &request).await.is_ok());

        let url = answering("not json").await;
        let err = call(&client, &resolved(&url, "Fail"), None, &request).await.unwrap_err();
        assert!(err.to_string().contains("the answer is not JSON"), "{err}");
        let url = answering("not json").await;
        assert!(call(&client, &resolved(&url, "Ignore"), None, &request).await.is_ok());
    }

    #[test]
    fn discovered_handlers_get_the_config_name_and_defaults() {
        let handlers: Vec<ExtensionHandler> = serde_json::from_value(json!([
            {"name": "gen", "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"}},
            {"name": "vars", "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "DiscoverVariables"},
             "timeoutSeconds": 3, "failurePolicy": "Ignore"},
        ]))
        .expect("handlers");
        let out = named("ext", handlers);
        assert_eq!(out[0].name, "gen.ext");
        assert_eq!((out[0].timeout_seconds, out[0].failure_policy), (Some(10), Some(FailurePolicy::Fail)));
        assert_eq!((out[1].timeout_seconds, out[1].failure_policy), (Some(3), Some(FailurePolicy::Ignore)));
    }
}
