//! The kinds the provider simulates, behind one interface each: the infrastructure clusters
//! (InMemoryCluster, DevCluster) and machines (InMemoryMachine, DevMachine). One controller
//! per kind runs the same reconcile; what differs between kinds — where the start-up
//! settings are, how readiness is written, the finalizer — is answered here.
//!
//! The Dev kinds are handled in v1beta2, the version drydock stores them in, on the v1beta2
//! infrastructure contract (`status.initialization.provisioned`, v1beta2 conditions beside
//! the v1beta1 ones). A Dev object on the docker backend is simulated in memory like any
//! other (drydock runs no containers); [`Simulated::backend`] lets the controllers say so.

use std::fmt::Debug;
use std::sync::Arc;

use drydock_api::capi::common::APIEndpoint;
use drydock_api::capi::condition_types::{BACKEND_SIMULATED, NO_CONTAINER_RUNTIME};
use drydock_api::capi::conditions::{Condition, HasConditions};
use drydock_api::capi::core::v1beta2::MachineAddress;
use drydock_api::capi::dev::backend::{Backend, DOCKER_SIMULATED_MESSAGE};
use drydock_api::capi::dev::v1beta2::{APIEndpoint as DevAPIEndpoint, DevCluster, DevMachine, InitializationStatus};
use drydock_api::capi::docker::v1beta2::{DockerCluster, DockerMachine};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine, InMemoryMachineBehaviour};
use drydock_api::capi::v1beta2_conditions::{self as v2, HasV1Beta2Conditions};
use drydock_controllers::Informers;
use drydock_controllers::framework::events::Events;
use drydock_controllers::framework::informer::Informer;
use k8s_openapi::api::core::v1::TypedLocalObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;
use kube::core::NamespaceResourceScope;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What every simulated kind is.
pub trait Simulated:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + HasConditions
    + Clone
    + PartialEq
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The controller's name (metrics, logs, field manager).
    const CONTROLLER: &'static str;
    /// Held while the simulated infrastructure exists.
    const FINALIZER: &'static str;

    /// The shared informer of the kind.
    fn informer(i: &Informers) -> &Arc<Informer<Self>>;
    /// The backend the object asked for (the in-memory kinds have no other).
    fn backend(&self) -> Backend;
    /// The infrastructure contract's readiness, as the object reports it.
    fn is_ready(&self) -> bool;
    /// Reports the object ready.
    fn set_ready(&mut self);
    /// Writes the v1beta2 conditions of a kind on the v1beta2 contract, one per v1beta1
    /// condition (the in-memory kinds, on the v1beta1 contract, have none).
    fn mirror_v1beta2_conditions(&mut self, _now: &Time) {}
}

/// `obj`'s v1beta1 conditions as v1beta2 conditions, set as of `now`.
fn mirror_conditions<K: HasConditions + HasV1Beta2Conditions>(obj: &mut K, now: &Time) {
    let observed: Vec<v2::Observed> = obj.conditions().iter().map(v2::Observed::from_v1beta1).collect();
    for o in observed {
        obj.set_v1beta2(o, now);
    }
}

/// The readiness of a kind on the v1beta2 infrastructure contract
/// (`status.initialization.provisioned`), with its v1beta1 conditions mirrored as v1beta2 ones.
macro_rules! v1beta2_contract {
    () => {
        fn is_ready(&self) -> bool {
            dev_provisioned(self.status.as_ref().and_then(|s| s.initialization.as_ref()))
        }

        fn set_ready(&mut self) {
            set_dev_provisioned(&mut self.status.get_or_insert_with(Default::default).initialization);
        }

        fn mirror_v1beta2_conditions(&mut self, now: &Time) {
            mirror_conditions(self, now);
        }
    };
}

fn dev_provisioned(init: Option<&InitializationStatus>) -> bool {
    init.and_then(|i| i.provisioned) == Some(true)
}

fn set_dev_provisioned(init: &mut Option<InitializationStatus>) {
    init.get_or_insert_with(Default::default).provisioned = Some(true);
}

/// Sets a v1beta2 endpoint unless both its host and port are set.
fn set_endpoint_unless_set(e: &mut Option<DevAPIEndpoint>, endpoint: APIEndpoint) {
    let set =
        e.as_ref().is_some_and(|e| e.host.as_deref().is_some_and(|h| !h.is_empty()) && e.port.is_some_and(|p| p > 0));
    if !set {
        *e = Some(DevAPIEndpoint { host: Some(endpoint.host), port: Some(endpoint.port) });
    }
}

/// An infrastructure cluster kind.
pub trait SimulatedCluster: Simulated {
    /// Sets the control plane endpoint unless one is set: an endpoint, once given (by the
    /// user or by the replica that first provisioned the cluster), stays, as the Cluster's
    /// copy of it does.
    fn default_endpoint(&mut self, endpoint: APIEndpoint);
    /// Reports in the status the failure domains the spec offers, if the kind has any
    /// (they are names only: every simulated machine runs in the same place).
    fn report_failure_domains(&mut self);
}

/// An infrastructure machine kind.
pub trait SimulatedMachine: Simulated {
    /// Start-up delays of the simulated components (unset: instant).
    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour>;
    fn provider_id(&self) -> Option<&str>;
    fn set_provider_id(&mut self, id: String);
    /// The IP pools the machine takes an address from each (none unless the kind has them).
    fn addresses_from_pools(&self) -> &[TypedLocalObjectReference] {
        &[]
    }
    /// Reports the addresses taken from the pools.
    fn set_addresses(&mut self, _addresses: Vec<MachineAddress>) {}
}

impl Simulated for InMemoryCluster {
    const CONTROLLER: &'static str = "inmemorycluster";
    const FINALIZER: &'static str = "inmemorycluster.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.inmemory_clusters
    }

    fn backend(&self) -> Backend {
        Backend::InMemory
    }

    fn is_ready(&self) -> bool {
        self.status.as_ref().and_then(|s| s.ready) == Some(true)
    }

    fn set_ready(&mut self) {
        self.status.get_or_insert_with(Default::default).ready = Some(true);
    }
}

impl SimulatedCluster for InMemoryCluster {
    fn default_endpoint(&mut self, endpoint: APIEndpoint) {
        let set = self.spec.control_plane_endpoint.as_ref().is_some_and(|e| !e.host.is_empty() && e.port > 0);
        if !set {
            self.spec.control_plane_endpoint = Some(endpoint);
        }
    }

    fn report_failure_domains(&mut self) {}
}

impl Simulated for DevCluster {
    const CONTROLLER: &'static str = "devcluster";
    const FINALIZER: &'static str = "devcluster.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.dev_clusters
    }

    fn backend(&self) -> Backend {
        self.spec.backend.selected()
    }

    v1beta2_contract!();
}

impl SimulatedCluster for DevCluster {
    fn default_endpoint(&mut self, endpoint: APIEndpoint) {
        set_endpoint_unless_set(&mut self.spec.control_plane_endpoint, endpoint);
    }

    /// The docker backend's `failureDomains`, as upstream's docker backend reports them (so
    /// control planes spread over them); the in-memory backend has none.
    fn report_failure_domains(&mut self) {
        let offered = self.spec.backend.docker.as_ref().and_then(|d| d.failure_domains.clone());
        if self.backend() == Backend::Docker && offered.is_some() {
            self.status.get_or_insert_with(Default::default).failure_domains = offered;
        }
    }
}

impl Simulated for InMemoryMachine {
    const CONTROLLER: &'static str = "inmemorymachine";
    const FINALIZER: &'static str = "inmemorymachine.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.inmemory_machines
    }

    fn backend(&self) -> Backend {
        Backend::InMemory
    }

    fn is_ready(&self) -> bool {
        self.status.as_ref().and_then(|s| s.ready) == Some(true)
    }

    fn set_ready(&mut self) {
        self.status.get_or_insert_with(Default::default).ready = Some(true);
    }
}

impl SimulatedMachine for InMemoryMachine {
    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour> {
        self.spec.behaviour.as_ref()
    }

    fn provider_id(&self) -> Option<&str> {
        self.spec.provider_id.as_deref()
    }

    fn set_provider_id(&mut self, id: String) {
        self.spec.provider_id = Some(id);
    }

    fn addresses_from_pools(&self) -> &[TypedLocalObjectReference] {
        self.spec.addresses_from_pools.as_deref().unwrap_or_default()
    }

    fn set_addresses(&mut self, addresses: Vec<MachineAddress>) {
        self.status.get_or_insert_default().addresses = Some(addresses).filter(|a| !a.is_empty());
    }
}

impl Simulated for DevMachine {
    const CONTROLLER: &'static str = "devmachine";
    const FINALIZER: &'static str = "devmachine.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.dev_machines
    }

    fn backend(&self) -> Backend {
        self.spec.backend.selected()
    }

    v1beta2_contract!();
}

impl SimulatedMachine for DevMachine {
    /// The docker backend has no start-up settings: its machines start at once.
    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour> {
        self.spec.backend.in_memory.as_ref()
    }

    fn provider_id(&self) -> Option<&str> {
        self.spec.provider_id.as_deref()
    }

    fn set_provider_id(&mut self, id: String) {
        self.spec.provider_id = Some(id);
    }
}

/// Docker kinds run on the docker backend only, simulated in memory.
impl Simulated for DockerCluster {
    const CONTROLLER: &'static str = "dockercluster";
    const FINALIZER: &'static str = "dockercluster.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.docker_clusters
    }

    fn backend(&self) -> Backend {
        Backend::Docker
    }

    v1beta2_contract!();
}

impl SimulatedCluster for DockerCluster {
    fn default_endpoint(&mut self, endpoint: APIEndpoint) {
        set_endpoint_unless_set(&mut self.spec.control_plane_endpoint, endpoint);
    }

    /// The offered failure domains, as upstream's docker provider reports them.
    fn report_failure_domains(&mut self) {
        if let Some(offered) = self.spec.docker.failure_domains.clone() {
            self.status.get_or_insert_with(Default::default).failure_domains = Some(offered);
        }
    }
}

impl Simulated for DockerMachine {
    const CONTROLLER: &'static str = "dockermachine";
    const FINALIZER: &'static str = "dockermachine.infrastructure.cluster.x-k8s.io";

    fn informer(i: &Informers) -> &Arc<Informer<Self>> {
        &i.docker_machines
    }

    fn backend(&self) -> Backend {
        Backend::Docker
    }

    v1beta2_contract!();
}

/// No start-up settings: a DockerMachine starts at once, as a docker-backed DevMachine.
impl SimulatedMachine for DockerMachine {
    fn behaviour(&self) -> Option<&InMemoryMachineBehaviour> {
        None
    }

    fn provider_id(&self) -> Option<&str> {
        self.spec.provider_id.as_deref()
    }

    fn set_provider_id(&mut self, id: String) {
        self.spec.provider_id = Some(id);
    }
}

/// Completes the conditions of a status write: says on `want` whether its backend is
/// simulated (a docker-backed object gets `BackendSimulated=True`, reason
/// `NoContainerRuntime`; any other loses it), then mirrors the v1beta2 conditions. Returns
/// true when `BackendSimulated` is new, so that the caller records a Warning Event once it
/// wrote it.
pub(crate) fn finish_conditions<K: Simulated>(want: &mut K, now: Time) -> bool {
    let new = if want.backend() == Backend::Docker {
        let new = want.get_condition(BACKEND_SIMULATED).is_none();
        let mut c = Condition::true_(BACKEND_SIMULATED, now.clone());
        c.reason = Some(NO_CONTAINER_RUNTIME.to_string());
        c.message = Some(DOCKER_SIMULATED_MESSAGE.to_string());
        want.set_condition(c);
        new
    } else {
        want.delete_condition(BACKEND_SIMULATED);
        false
    };
    want.mirror_v1beta2_conditions(&now);
    new
}

/// The Warning Event of a docker-backed object, once [`finish_conditions`] said it is new and the
/// condition was written.
pub(crate) async fn announce_backend<K: Simulated>(events: &Events, obj: &K, new: bool) {
    if new {
        events.warning(obj, NO_CONTAINER_RUNTIME, DOCKER_SIMULATED_MESSAGE.to_string()).await;
    }
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::dev::v1beta2::DevMachineSpec;
    use drydock_api::capi::inmemory::{CommonProvisioningSettings, InMemoryComponentBehaviour};

    use super::*;

    #[test]
    fn dev_machines_take_their_timings_from_the_in_memory_backend() {
        let vm = InMemoryComponentBehaviour {
            provisioning: Some(CommonProvisioningSettings { startup_duration: "10s".into(), startup_jitter: None }),
        };
        let behaviour = InMemoryMachineBehaviour { vm: Some(vm), ..Default::default() };
        let mut spec = DevMachineSpec::default();
        spec.backend.in_memory = Some(behaviour.clone());
        let mut m = DevMachine::new("m", spec);
        assert_eq!(m.behaviour(), Some(&behaviour));
        assert_eq!(m.backend(), Backend::InMemory);
        m.spec.backend.in_memory = None;
        m.spec.backend.docker = Some(Default::default());
        assert_eq!((m.behaviour(), m.backend()), (None, Backend::Docker));
        assert!(!m.is_ready());
        m.set_ready();
        assert!(m.is_ready());
    }

    #[test]
    fn docker_backed_dev_clusters_report_their_failure_domains() {
        use drydock_api::capi::dev::v1beta2::{DockerClusterBackendSpec, FailureDomain};
        let fds = vec![FailureDomain { name: "fd-a".into(), control_plane: Some(true), attributes: None }];
        let mut c = DevCluster::new("c", Default::default());
        c.spec.backend.docker =
            Some(DockerClusterBackendSpec { failure_domains: Some(fds.clone()), load_balancer: None });
        c.report_failure_domains();
        assert_eq!(c.status.as_ref().and_then(|s| s.failure_domains.clone()), Some(fds));
        let mut in_memory = DevCluster::new("c", Default::default());
        in_memory.spec.backend.in_memory = Some(Default::default());
        in_memory.report_failure_domains();
        assert!(in_memory.status.is_none());
    }

    #[test]
    fn docker_backed_objects_say_they_are_simulated_once() {
        let now = drydock_api::capi::conditions::time_at(jiff::Timestamp::from_second(1_000).expect("time"));
        let mut m = DevMachine::new("m", Default::default());
        m.spec.backend.docker = Some(Default::default());
        assert!(finish_conditions(&mut m, now.clone()), "new");
        assert!(!finish_conditions(&mut m, now.clone()), "already said");
        let c = m.get_condition(BACKEND_SIMULATED).expect("condition");
        assert!(c.is_true() && c.message.as_deref() == Some(DOCKER_SIMULATED_MESSAGE));
        let v2 = m.v1beta2_condition(BACKEND_SIMULATED).expect("v1beta2 condition");
        assert_eq!((v2.status.as_str(), v2.reason.as_str()), ("True", NO_CONTAINER_RUNTIME));
        m.spec.backend.in_memory = Some(Default::default());
        assert!(!finish_conditions(&mut m, now.clone()));
        assert!(m.get_condition(BACKEND_SIMULATED).is_none(), "an in-memory backend is not simulated: it is real");
        let mut imm = InMemoryMachine::new("m", Default::default());
        assert!(!finish_conditions(&mut imm, now));
        assert!(imm.conditions().is_empty());
    }
}
