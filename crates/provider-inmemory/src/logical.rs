//! Reading and writing objects inside a simulated workload cluster.
//!
//! The provider owns the simulation, so it does not go through the workload cluster's
//! kubeconfig (which the control plane writes later): it addresses the logical cluster
//! directly on the hosting API server, by prefixing request paths with `/clusters/<name>`
//! on the host's root client. With drydock's in-process client this never touches a socket,
//! and 10,000 simulated clusters cost no connections.

use std::fmt::Debug;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, GetParams, ListParams, ObjectList, Patch, PatchParams, PostParams};
use kube::core::Request;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::framework::{Error, Result, metrics};

/// API access to one logical cluster of the host.
#[derive(Clone)]
pub struct LogicalCluster {
    client: kube::Client,
    prefix: String,
}

impl LogicalCluster {
    pub fn new(root: &kube::Client, name: &LogicalClusterName) -> Self {
        Self { client: root.clone(), prefix: name.path() }
    }

    fn request<K: Resource<DynamicType = ()>>(&self, namespace: Option<&str>) -> Request {
        Request::new(format!("{}{}", self.prefix, K::url_path(&(), namespace)))
    }

    /// Creates `obj` (status included: the host keeps it for built-in kinds). Returns false
    /// when it already existed. A missing namespace (the logical cluster's default
    /// namespaces are created asynchronously) is created and the create retried.
    pub async fn create<K>(&self, controller: &str, obj: &K) -> Result<bool>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug,
    {
        let ns = obj.namespace();
        let created = match self.try_create(ns.as_deref(), obj).await {
            Err(Error::Kube(kube::Error::Api(s))) if s.code == 404 && ns.is_some() => {
                let ns = ns.unwrap_or_default();
                let mut n = Namespace::default();
                n.metadata.name = Some(ns.clone());
                self.try_create(None, &n).await?;
                self.try_create(Some(&ns), obj).await
            }
            other => other,
        }?;
        if created {
            metrics::write(controller);
        }
        Ok(created)
    }

    async fn try_create<K>(&self, ns: Option<&str>, obj: &K) -> Result<bool>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug,
    {
        let req = self
            .request::<K>(ns)
            .create(&PostParams::default(), serde_json::to_vec(obj)?)
            .map_err(|source| Error::Request { verb: "create", source })?;
        match self.client.request::<K>(req).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes an object; a missing object (or a missing logical cluster) is not an error.
    /// Returns true when a delete was issued.
    pub async fn delete<K>(&self, controller: &str, ns: Option<&str>, name: &str) -> Result<bool>
    where
        K: Resource<DynamicType = ()>,
    {
        let req = self
            .request::<K>(ns)
            .delete(name, &DeleteParams::default())
            .map_err(|source| Error::Request { verb: "delete", source })?;
        match self.client.request::<serde_json::Value>(req).await {
            Ok(_) => {
                metrics::write(controller);
                Ok(true)
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads an object; `None` when it (or the logical cluster) does not exist.
    pub async fn get<K>(&self, ns: Option<&str>, name: &str) -> Result<Option<K>>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let req = self
            .request::<K>(ns)
            .get(name, &GetParams::default())
            .map_err(|source| Error::Request { verb: "get", source })?;
        match self.client.request::<K>(req).await {
            Ok(o) => Ok(Some(o)),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Merge-patches an object's status.
    pub async fn patch_status<K>(
        &self,
        controller: &str,
        ns: Option<&str>,
        name: &str,
        patch: &serde_json::Value,
    ) -> Result<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        self.merge_patch(controller, Some("status"), ns, name, patch).await
    }

    /// Merge-patches an object (its metadata and spec).
    pub async fn patch<K>(&self, controller: &str, ns: Option<&str>, name: &str, patch: &serde_json::Value) -> Result<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        self.merge_patch(controller, None, ns, name, patch).await
    }

    async fn merge_patch<K>(
        &self,
        controller: &str,
        subresource: Option<&str>,
        ns: Option<&str>,
        name: &str,
        patch: &serde_json::Value,
    ) -> Result<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let (pp, patch) = (PatchParams::default(), Patch::Merge(patch));
        let req = match subresource {
            Some(sub) => self.request::<K>(ns).patch_subresource(sub, name, &pp, &patch),
            None => self.request::<K>(ns).patch(name, &pp, &patch),
        }
        .map_err(|source| Error::Request { verb: "patch", source })?;
        let out = self.client.request::<K>(req).await?;
        metrics::write(controller);
        Ok(out)
    }

    pub async fn list<K>(&self, ns: Option<&str>, lp: &ListParams) -> Result<Vec<K>>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let req = self.request::<K>(ns).list(lp).map_err(|source| Error::Request { verb: "list", source })?;
        let list: ObjectList<K> = self.client.request(req).await?;
        Ok(list.items)
    }
}
