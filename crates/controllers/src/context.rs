//! What reconcilers share: the management-cluster client, shared informers, workload
//! cluster clients, events and settings.

use std::sync::Arc;

use drydock_api::capi::addons::RESOURCE_SET_SECRET_TYPE;
use drydock_api::capi::addons::v1beta2::ClusterResourceSet;
use drydock_api::capi::core::v1beta2::{
    Cluster, ClusterClass, Machine, MachineDeployment, MachineHealthCheck, MachinePool, MachineSet,
};
use drydock_api::capi::dev::v1beta2::{DevCluster, DevMachine, DevMachinePool};
use drydock_api::capi::docker::v1beta2::{DockerCluster, DockerMachine, DockerMachinePool};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_api::capi::ipam::v1beta2::{IPAddress, IPAddressClaim};
use drydock_api::capi::ipam::{GlobalInClusterIPPool, InClusterIPPool};
use drydock_api::capi::kubeadm::v1beta2::{KubeadmConfig, KubeadmControlPlane};
use drydock_api::capi::runtime::v1beta2::ExtensionConfig;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use kube::runtime::watcher;

use crate::framework::Error;
use crate::framework::clock::Clock;
use crate::framework::contract::ContractVersions;
use crate::framework::events::Events;
use crate::framework::informer::Informer;
use crate::framework::nodes::WorkloadNodes;
use crate::workload::WorkloadClients;

/// Per-controller concurrency, the namespace watched and the clock read.
#[derive(Clone, Debug)]
pub struct Settings {
    pub cluster_concurrency: u16,
    pub machine_concurrency: u16,
    pub machineset_concurrency: u16,
    pub machinedeployment_concurrency: u16,
    pub kcp_concurrency: u16,
    pub kubeadmconfig_concurrency: u16,
    pub mhc_concurrency: u16,
    /// Workers of each IPAM pool controller. The IPAddressClaim controller always runs one
    /// worker: allocation reads the addresses in use from the store, and two allocations at
    /// once could hand out the same address.
    pub ipam_pool_concurrency: u16,
    /// ClusterResourceSets reconciled at once.
    pub clusterresourceset_concurrency: u16,
    /// MachinePools reconciled at once.
    pub machinepool_concurrency: u16,
    /// Clusters with a topology reconciled at once.
    pub topology_concurrency: u16,
    /// Only objects in this namespace (all when `None`).
    pub namespace: Option<String>,
    /// The time every controller and provider reads (tests pause it).
    pub clock: Clock,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            cluster_concurrency: 32,
            machine_concurrency: 64,
            machineset_concurrency: 32,
            machinedeployment_concurrency: 32,
            kcp_concurrency: 32,
            kubeadmconfig_concurrency: 64,
            mhc_concurrency: 16,
            ipam_pool_concurrency: 4,
            clusterresourceset_concurrency: 10,
            machinepool_concurrency: 10,
            topology_concurrency: 10,
            namespace: None,
            clock: Clock::system(),
        }
    }
}

impl Settings {
    /// The same number of workers for every controller.
    #[must_use]
    pub fn with_concurrency(mut self, n: u16) -> Self {
        self.cluster_concurrency = n;
        self.machine_concurrency = n;
        self.machineset_concurrency = n;
        self.machinedeployment_concurrency = n;
        self.kcp_concurrency = n;
        self.kubeadmconfig_concurrency = n;
        self.mhc_concurrency = n;
        self.ipam_pool_concurrency = n;
        self.clusterresourceset_concurrency = n;
        self.machinepool_concurrency = n;
        self
    }
}

/// One shared watch and store per kind the controllers read.
#[derive(Clone)]
pub struct Informers {
    pub clusters: Arc<Informer<Cluster>>,
    pub machines: Arc<Informer<Machine>>,
    pub machine_sets: Arc<Informer<MachineSet>>,
    pub machine_deployments: Arc<Informer<MachineDeployment>>,
    pub machine_health_checks: Arc<Informer<MachineHealthCheck>>,
    pub machine_pools: Arc<Informer<MachinePool>>,
    pub cluster_classes: Arc<Informer<ClusterClass>>,
    pub control_planes: Arc<Informer<KubeadmControlPlane>>,
    pub kubeadm_configs: Arc<Informer<KubeadmConfig>>,
    pub inmemory_clusters: Arc<Informer<InMemoryCluster>>,
    pub inmemory_machines: Arc<Informer<InMemoryMachine>>,
    /// Dev kinds, watched in the version drydock stores them in.
    pub dev_clusters: Arc<Informer<DevCluster>>,
    pub dev_machines: Arc<Informer<DevMachine>>,
    pub dev_machine_pools: Arc<Informer<DevMachinePool>>,
    /// Docker kinds (simulated in memory), in the version drydock stores them in.
    pub docker_clusters: Arc<Informer<DockerCluster>>,
    pub docker_machines: Arc<Informer<DockerMachine>>,
    pub docker_machine_pools: Arc<Informer<DockerMachinePool>>,
    /// IPAM kinds, claims and addresses in the version drydock stores them in.
    pub ip_address_claims: Arc<Informer<IPAddressClaim>>,
    pub ip_addresses: Arc<Informer<IPAddress>>,
    pub ip_pools: Arc<Informer<InClusterIPPool>>,
    /// Cluster-scoped: watched whole even when the controllers watch one namespace.
    pub global_ip_pools: Arc<Informer<GlobalInClusterIPPool>>,
    pub cluster_resource_sets: Arc<Informer<ClusterResourceSet>>,
    /// What ClusterResourceSets apply: every ConfigMap, and the Secrets of the resource-set
    /// type only (a fleet's many other Secrets are never held in memory for them).
    pub addon_config_maps: Arc<Informer<ConfigMap>>,
    pub addon_secrets: Arc<Informer<Secret>>,
    /// Cluster-scoped: the registered Runtime Extensions and their discovered handlers.
    pub extension_configs: Arc<Informer<ExtensionConfig>>,
    /// Nodes of every workload cluster through one cross-cluster watch, when the API server
    /// hosting the workload clusters offers one (otherwise Nodes are read per reconcile).
    pub nodes: Option<Arc<WorkloadNodes>>,
}

impl Informers {
    pub fn new(client: &kube::Client, namespace: Option<&str>) -> Self {
        fn api<K>(c: &kube::Client, ns: Option<&str>) -> Api<K>
        where
            K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
        {
            match ns {
                Some(n) => Api::namespaced(c.clone(), n),
                None => Api::all(c.clone()),
            }
        }
        Self {
            clusters: Informer::new(api(client, namespace)),
            machines: Informer::new(api(client, namespace)),
            machine_sets: Informer::new(api(client, namespace)),
            machine_deployments: Informer::new(api(client, namespace)),
            machine_health_checks: Informer::new(api(client, namespace)),
            machine_pools: Informer::new(api(client, namespace)),
            cluster_classes: Informer::new(api(client, namespace)),
            control_planes: Informer::new(api(client, namespace)),
            kubeadm_configs: Informer::new(api(client, namespace)),
            inmemory_clusters: Informer::new(api(client, namespace)),
            inmemory_machines: Informer::new(api(client, namespace)),
            dev_clusters: Informer::new(api(client, namespace)),
            dev_machines: Informer::new(api(client, namespace)),
            dev_machine_pools: Informer::new(api(client, namespace)),
            docker_clusters: Informer::new(api(client, namespace)),
            docker_machines: Informer::new(api(client, namespace)),
            docker_machine_pools: Informer::new(api(client, namespace)),
            ip_address_claims: Informer::new(api(client, namespace)),
            ip_addresses: Informer::new(api(client, namespace)),
            ip_pools: Informer::new(api(client, namespace)),
            global_ip_pools: Informer::new(Api::all(client.clone())),
            cluster_resource_sets: Informer::new(api(client, namespace)),
            addon_config_maps: Informer::new(api(client, namespace)),
            addon_secrets: Informer::with_config(
                api(client, namespace),
                watcher::Config::default().fields(&format!("type={RESOURCE_SET_SECRET_TYPE}")),
            ),
            extension_configs: Informer::new(Api::all(client.clone())),
            nodes: None,
        }
    }

    /// Starts every watch; call after all controllers subscribed.
    pub fn start(&self) {
        self.clusters.start();
        self.machines.start();
        self.machine_sets.start();
        self.machine_deployments.start();
        self.machine_health_checks.start();
        self.machine_pools.start();
        self.cluster_classes.start();
        self.control_planes.start();
        self.kubeadm_configs.start();
        self.inmemory_clusters.start();
        self.inmemory_machines.start();
        self.dev_clusters.start();
        self.dev_machines.start();
        self.dev_machine_pools.start();
        self.docker_clusters.start();
        self.docker_machines.start();
        self.docker_machine_pools.start();
        self.ip_address_claims.start();
        self.ip_addresses.start();
        self.ip_pools.start();
        self.global_ip_pools.start();
        self.cluster_resource_sets.start();
        self.addon_config_maps.start();
        self.addon_secrets.start();
        self.extension_configs.start();
        if let Some(n) = &self.nodes {
            n.start();
        }
    }
}

/// The context every reconciler receives.
pub struct Context {
    pub client: kube::Client,
    pub informers: Informers,
    pub workload: Arc<WorkloadClients>,
    pub events: Events,
    pub settings: Settings,
    /// The contract versions of provider kinds, from their CRDs' labels.
    pub contracts: Arc<ContractVersions>,
}

impl Context {
    pub fn new(client: kube::Client, workload: WorkloadClients, settings: Settings) -> Arc<Self> {
        Self::with_workload_nodes(client, workload, settings, None)
    }

    /// Like [`Context::new`], with a client whose base path addresses every workload cluster
    /// at once (`/clusters/*` of a drydock API server): Nodes are then watched with one
    /// watch instead of read per reconcile.
    pub fn with_workload_nodes(
        client: kube::Client,
        workload: WorkloadClients,
        settings: Settings,
        all_workload_clusters: Option<kube::Client>,
    ) -> Arc<Self> {
        let mut informers = Informers::new(&client, settings.namespace.as_deref());
        informers.nodes = all_workload_clusters.map(WorkloadNodes::new);
        Arc::new(Self {
            events: Events::new(client.clone()),
            contracts: Arc::new(ContractVersions::new(client.clone(), settings.clock.clone())),
            client,
            informers,
            workload: Arc::new(workload),
            settings,
        })
    }

    /// This context with `client` for the calls a component makes itself (its writes, its
    /// direct reads, its Events), sharing the caches: how each component acts as its own
    /// identity. The caches keep reading as this context's client.
    pub fn acting_as(&self, client: kube::Client) -> Arc<Self> {
        Arc::new(Self {
            events: Events::new(client.clone()),
            client,
            informers: self.informers.clone(),
            workload: self.workload.clone(),
            settings: self.settings.clone(),
            contracts: self.contracts.clone(),
        })
    }

    /// The clock reconcilers read the time from.
    pub fn clock(&self) -> &Clock {
        &self.settings.clock
    }

    /// The cached Cluster `namespace/name`.
    pub fn cluster(&self, namespace: &str, name: &str) -> crate::framework::Result<Arc<Cluster>> {
        let r = kube::runtime::reflector::ObjectRef::new(name).within(namespace);
        self.informers.clusters.store.get(&r).ok_or_else(|| Error::Missing(format!("Cluster {namespace}/{name}")))
    }

    /// A namespaced API handle of the management cluster.
    pub fn api<K>(&self, namespace: &str) -> Api<K>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), namespace)
    }
}
