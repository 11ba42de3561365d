//! Which version of a provider kind implements the Cluster API contract, read from the
//! contract labels of its CRD. v1beta2 references name only an API group, and template
//! references may name an older version than the provider now serves: both are resolved
//! here, against whatever API server the controllers run on.

use std::collections::HashMap;
use std::time::Duration;

use drydock_api::capi::contract;
use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use parking_lot::Mutex;

use crate::framework::clock::Clock;
use crate::framework::{Error, Result};

/// How long a CRD's answer is reused: providers are upgraded rarely, reconciles are many.
const TTL: Duration = Duration::from_secs(10);

/// The contract versions of provider kinds, cached per `(group, kind)` on the controllers'
/// clock.
pub struct ContractVersions {
    client: kube::Client,
    clock: Clock,
    cache: Mutex<HashMap<(String, String), (String, Timestamp)>>,
}

impl ContractVersions {
    pub fn new(client: kube::Client, clock: Clock) -> Self {
        Self { client, clock, cache: Mutex::default() }
    }

    /// The `group/version` to use for `kind` of `group`: the newest version its CRD's
    /// contract labels list. An error when the CRD does not exist or implements no contract.
    pub async fn api_version(&self, group: &str, kind: &str) -> Result<String> {
        let key = (group.to_string(), kind.to_string());
        if let Some((v, at)) = self.cache.lock().get(&key)
            && self.clock.since(*at) < TTL
        {
            return Ok(v.clone());
        }
        let name = contract::crd_name(group, kind);
        let crd = Api::<CustomResourceDefinition>::all(self.client.clone())
            .get_opt(&name)
            .await?
            .ok_or_else(|| Error::Missing(format!("CustomResourceDefinition {name}")))?;
        let version = crd.metadata.labels.as_ref().and_then(contract::version_from_labels).ok_or_else(|| {
            Error::inconsistent(
                format!("CustomResourceDefinition {name}"),
                format!("has none of the contract labels {}", contract::CONTRACT_LABELS.join(", ")),
            )
        })?;
        let api_version = format!("{group}/{version}");
        self.cache.lock().insert(key, (api_version.clone(), self.clock.now()));
        Ok(api_version)
    }
}
