//! Which version of a provider kind implements the Cluster API contract, read from the
//! contract labels of its CRD. v1beta2 references name only an API group, and template
//! references may name an older version than the provider now serves: both are resolved
//! here, against whatever API server the controllers run on.

use std::collections::HashMap;
use std::time::Duration;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::contract;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
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
    /// The answer per `(group, kind)`: the `group/version`, or why there is none (also
    /// remembered, so kinds without a labelled CRD do not cost a read per call).
    cache: Mutex<HashMap<(String, String), (Answer, Timestamp)>>,
}

#[derive(Clone)]
enum Answer {
    Version(String),
    Missing(String),
    Unlabelled(String),
}

impl ContractVersions {
    pub fn new(client: kube::Client, clock: Clock) -> Self {
        Self { client, clock, cache: Mutex::default() }
    }

    /// The `group/version` to use for `kind` of `group`: the newest version its CRD's
    /// contract labels list. An error when the CRD does not exist or implements no contract.
    pub async fn api_version(&self, group: &str, kind: &str) -> Result<String> {
        let key = (group.to_string(), kind.to_string());
        let cached = self.cache.lock().get(&key).filter(|(_, at)| self.clock.since(*at) < TTL).cloned();
        let answer = match cached {
            Some((answer, _)) => answer,
            None => {
                let answer = self.read(group, kind).await?;
                self.cache.lock().insert(key, (answer.clone(), self.clock.now()));
                answer
            }
        };
        match answer {
            Answer::Version(v) => Ok(v),
            Answer::Missing(name) => Err(Error::Missing(format!("CustomResourceDefinition {name}"))),
            Answer::Unlabelled(name) => Err(Error::inconsistent(
                format!("CustomResourceDefinition {name}"),
                format!("has none of the contract labels {}", contract::CONTRACT_LABELS.join(", ")),
            )),
        }
    }

    async fn read(&self, group: &str, kind: &str) -> Result<Answer> {
        let name = contract::crd_name(group, kind);
        let Some(crd) = Api::<CustomResourceDefinition>::all(self.client.clone()).get_opt(&name).await? else {
            return Ok(Answer::Missing(name));
        };
        Ok(match crd.metadata.labels.as_ref().and_then(contract::version_from_labels) {
            Some(version) => Answer::Version(format!("{group}/{version}")),
            None => Answer::Unlabelled(name),
        })
    }

    /// `r` naming the version its kind's CRD lists for the contract (upstream's reference
    /// contract update: a template referenced in an older version is read and cloned in
    /// the current one, so the older version can stop being served). `r` as it is when
    /// the CRD cannot tell (not installed, or without contract labels).
    pub async fn current(&self, r: &ObjectReference) -> ObjectReference {
        let group = drydock_api::capi::owner::api_group(r.api_version.as_deref().unwrap_or_default());
        match self.api_version(group, r.kind.as_deref().unwrap_or_default()).await {
            Ok(v) => ObjectReference { api_version: Some(v), ..r.clone() },
            Err(e) => {
                tracing::debug!(kind = ?r.kind, error = %e, "no contract version; the reference is used as written");
                r.clone()
            }
        }
    }

    /// A v1beta2 reference (group only) as a full reference to an object in `namespace`.
    pub async fn object_ref(&self, r: &ContractVersionedObjectReference, namespace: &str) -> Result<ObjectReference> {
        Ok(ObjectReference {
            api_version: Some(self.api_version(&r.api_group, &r.kind).await?),
            kind: Some(r.kind.clone()),
            name: Some(r.name.clone()),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        })
    }
}
