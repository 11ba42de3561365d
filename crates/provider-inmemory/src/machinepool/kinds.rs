//! The pool kinds the provider simulates (DevMachinePool, DockerMachinePool) behind one
//! interface: one controller runs the same reconcile for both; where the start-up settings
//! are and how the status is written is answered here.

use std::sync::Arc;

use drydock_api::capi::dev::v1beta2::{DevMachinePool, DevMachinePoolInstanceStatus};
use drydock_api::capi::docker::v1beta2::{DockerMachinePool, DockerMachinePoolInstanceStatus};
use drydock_api::capi::inmemory::InMemoryMachineBehaviour;
use drydock_controllers::Informers;
use drydock_controllers::framework::informer::Informer;
use kube::core::NamespaceResourceScope;

/// What a reconcile found: the pool's instances and whether every wanted one is up.
pub struct PoolState {
    pub instances: Vec<DevMachinePoolInstanceStatus>,
    pub all_up: bool,
    pub observed_generation: Option<i64>,
}

/// A simulated machine pool kind.
pub trait SimulatedPool:
    kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + PartialEq
    + std::fmt::Debug
    + serde::Serialize
    + serde::de::DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The controller's name (metrics, logs, field manager).
    const CONTROLLER: &'static str;
    /// Held while the pool's simulated instances exist.
    const FINALIZER: &'static str;

    fn informer(i: &Informers) -> &Arc<Informer<Self>>;
    /// Start-up delays of the instances (unset: the defaults).
    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour>;
    fn set_provider_id_list(&mut self, ids: Vec<String>);
    /// Says the pool is not ready (it waits for its cluster or bootstrap data).
    fn mark_waiting(&mut self);
    /// Writes the instances and readiness; once ready, a pool stays ready while it scales.
    fn record(&mut self, state: PoolState);
}

impl SimulatedPool for DevMachinePool {
    const CONTROLLER: &'static str = "devmachinepool";
    const FINALIZER: &'static str = "devmachinepool.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.dev_machine_pools
    }

    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour> {
        self.spec.backend.as_ref().and_then(|b| b.in_memory.as_ref())
    }

    fn set_provider_id_list(&mut self, ids: Vec<String>) {
        self.spec.provider_id_list = Some(ids);
    }

    fn mark_waiting(&mut self) {
        self.status.get_or_insert_with(Default::default).ready = Some(false);
    }

    fn record(&mut self, state: PoolState) {
        let status = self.status.get_or_insert_with(Default::default);
        status.replicas = Some(i32::try_from(state.instances.len()).unwrap_or(i32::MAX));
        status.instances = Some(state.instances);
        status.infrastructure_machine_kind = None;
        status.ready = Some(state.all_up || status.ready == Some(true));
        status.observed_generation = state.observed_generation;
    }
}

/// The docker backend has no start-up settings: instances start on the defaults.
impl SimulatedPool for DockerMachinePool {
    const CONTROLLER: &'static str = "dockermachinepool";
    const FINALIZER: &'static str = "dockermachinepool.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.docker_machine_pools
    }

    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour> {
        None
    }

    fn set_provider_id_list(&mut self, ids: Vec<String>) {
        self.spec.provider_id_list = Some(ids);
    }

    fn mark_waiting(&mut self) {
        self.status.get_or_insert_with(Default::default).ready = Some(false);
    }

    fn record(&mut self, state: PoolState) {
        let status = self.status.get_or_insert_with(Default::default);
        status.replicas = Some(i32::try_from(state.instances.len()).unwrap_or(i32::MAX));
        status.instances = Some(
            state
                .instances
                .into_iter()
                .map(|i| DockerMachinePoolInstanceStatus { bootstrapped: i.ready, instance: i })
                .collect(),
        );
        status.infrastructure_machine_kind = None;
        status.ready = Some(state.all_up || status.ready == Some(true));
        status.observed_generation = state.observed_generation;
    }
}
