//! The condition types and reasons drydock's Cluster API controllers set, each defined once
//! (several kinds share a type, like `MachinesReady` on MachineSets and control planes).
//!
//! Upstream names types `<Something>Condition` and reasons `<Something>Reason`; here a type
//! is the bare name and a reason is a name that only appears as a condition's reason.

// Shared by several kinds.
/// Carried (True) by every paused object.
pub const PAUSED: &str = "Paused";
pub const AVAILABLE: &str = "Available";
pub const MACHINES_CREATED: &str = "MachinesCreated";
pub const MACHINES_READY: &str = "MachinesReady";
pub const RESIZED: &str = "Resized";
pub const DELETING: &str = "Deleting";
pub const SCALING_UP: &str = "ScalingUp";
pub const SCALING_DOWN: &str = "ScalingDown";
pub const WAITING_FOR_CLUSTER_INFRASTRUCTURE: &str = "WaitingForClusterInfrastructure";
/// Set False with [`WAITING_EXTERNAL_HOOK`] by the Machine controller while pre-terminate
/// hooks hold a deletion.
pub const PRE_TERMINATE_HOOK_SUCCEEDED: &str = "PreTerminateDeleteHookSucceeded";
pub const WAITING_EXTERNAL_HOOK: &str = "WaitingExternalHook";

// Pausing (reasons of `Paused`).
pub const CLUSTER_PAUSED_REASON: &str = "ClusterPaused";
pub const ANNOTATION_PAUSED_REASON: &str = "AnnotationPaused";
pub const ROLLOUT_PAUSED_REASON: &str = "RolloutPaused";

// Cluster.
pub const CONTROL_PLANE_READY: &str = "ControlPlaneReady";
pub const CONTROL_PLANE_INITIALIZED: &str = "ControlPlaneInitialized";

// Machine.
pub const BOOTSTRAP_READY: &str = "BootstrapReady";
pub const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
pub const NODE_HEALTHY: &str = "NodeHealthy";
pub const DRAINING_SUCCEEDED: &str = "DrainingSucceeded";
pub const PRE_DRAIN_HOOK_SUCCEEDED: &str = "PreDrainDeleteHookSucceeded";
pub const WAITING_FOR_DATA_SECRET: &str = "WaitingForDataSecret";
pub const WAITING_FOR_INFRASTRUCTURE: &str = "WaitingForInfrastructure";
pub const DRAINING: &str = "Draining";
pub const DRAINING_FAILED: &str = "DrainingFailed";
pub const VOLUME_DETACH_SUCCEEDED: &str = "VolumeDetachSucceeded";
pub const WAITING_FOR_VOLUME_DETACH: &str = "WaitingForVolumeDetach";
pub const DELETED: &str = "Deleted";

// Machine health checks and remediation.
/// Set on Machines by the MachineHealthCheck.
pub const HEALTH_CHECK_SUCCEEDED: &str = "HealthCheckSucceeded";
/// Set by the MachineHealthCheck (False) and by the owner once it acts (True).
pub const OWNER_REMEDIATED: &str = "OwnerRemediated";
pub const WAITING_FOR_REMEDIATION: &str = "WaitingForRemediation";
pub const REMEDIATION_ALLOWED: &str = "RemediationAllowed";
pub const TOO_MANY_UNHEALTHY: &str = "TooManyUnhealthy";
pub const EXTERNAL_REMEDIATION_TEMPLATE_AVAILABLE: &str = "ExternalRemediationTemplateAvailable";
pub const EXTERNAL_REMEDIATION_REQUEST_AVAILABLE: &str = "ExternalRemediationRequestAvailable";
pub const REMEDIATION_IN_PROGRESS: &str = "RemediationInProgress";
pub const REMEDIATION_FAILED: &str = "RemediationFailed";

// MachineSet.
pub const BOOTSTRAP_TEMPLATE_CLONING_FAILED: &str = "BootstrapTemplateCloningFailed";
pub const INFRASTRUCTURE_TEMPLATE_CLONING_FAILED: &str = "InfrastructureTemplateCloningFailed";
pub const MACHINE_CREATION_FAILED: &str = "MachineCreationFailed";
pub const CONTROL_PLANE_VERSION_SKEW: &str = "ControlPlaneVersionSkew";
/// Reason of the MachinesCreated condition when a check holds a scale up.
pub const PREFLIGHT_CHECK_FAILED: &str = "PreflightCheckFailed";

// MachineDeployment.
pub const MACHINE_SET_READY: &str = "MachineSetReady";
pub const WAITING_FOR_AVAILABLE_MACHINES: &str = "WaitingForAvailableMachines";
pub const WAITING_FOR_MACHINE_SET: &str = "WaitingForMachineSet";

// KubeadmConfig.
pub const DATA_SECRET_AVAILABLE: &str = "DataSecretAvailable";
pub const CERTIFICATES_AVAILABLE: &str = "CertificatesAvailable";
pub const WAITING_FOR_CONTROL_PLANE_AVAILABLE: &str = "WaitingForControlPlaneAvailable";
pub const DATA_SECRET_GENERATION_FAILED: &str = "DataSecretGenerationFailed";

// KubeadmControlPlane.
pub const MACHINES_SPEC_UP_TO_DATE: &str = "MachinesSpecUpToDate";
pub const CONTROL_PLANE_COMPONENTS_HEALTHY: &str = "ControlPlaneComponentsHealthy";
pub const ETCD_CLUSTER_HEALTHY: &str = "EtcdClusterHealthy";
pub const WAITING_FOR_KUBEADM_INIT: &str = "WaitingForKubeadmInit";
pub const ROLLING_UPDATE_IN_PROGRESS: &str = "RollingUpdateInProgress";
pub const MACHINE_GENERATION_FAILED: &str = "MachineGenerationFailed";
pub const CONTROL_PLANE_COMPONENTS_UNHEALTHY: &str = "ControlPlaneComponentsUnhealthy";
pub const ETCD_CLUSTER_UNHEALTHY: &str = "EtcdClusterUnhealthy";
pub const WAITING_FOR_CONTROL_PLANE: &str = "WaitingForControlPlane";

// Dev provider (drydock's own).
/// A Dev object asked for a backend drydock does not run and is simulated in memory.
pub const BACKEND_SIMULATED: &str = "BackendSimulated";
pub const NO_CONTAINER_RUNTIME: &str = "NoContainerRuntime";
/// Reason of a condition saying no controller reconciles the object (a DevMachinePool's
/// Ready, a topology Cluster's TopologyReconciled).
pub const NOT_RECONCILED: &str = "NotReconciled";
/// ClusterClass (v1beta1): its variables are known.
pub const VARIABLES_RECONCILED: &str = "VariablesReconciled";

// IPAddressClaim (reasons of its `Ready`, spelled as the IPAM contract and the in-cluster
// provider spell them).
/// An address was allocated and its IPAddress exists.
pub const ADDRESS_ALLOCATED: &str = "AddressAllocated";
/// The pool has no free address; the claim is retried when one is freed.
pub const POOL_EXHAUSTED: &str = "PoolExhausted";
/// The pool does not exist or is being deleted.
pub const POOL_NOT_READY: &str = "PoolNotReady";
/// Any other reason no address could be allocated (a pool spec that cannot be used).
pub const ALLOCATION_FAILED: &str = "AllocationFailed";

/// ClusterResourceSet (v1beta1 condition and reasons).
pub const RESOURCES_APPLIED: &str = "ResourcesApplied";
pub const RETRIEVING_RESOURCE_FAILED: &str = "RetrievingResourceFailed";
pub const WRONG_SECRET_TYPE: &str = "WrongSecretType";
pub const APPLY_FAILED: &str = "ApplyFailed";

/// ExtensionConfig: its extension answered discovery (v1beta1 and v1beta2 share the type).
pub const DISCOVERED: &str = "Discovered";
/// v1beta1 reason of a failed discovery.
pub const DISCOVERY_FAILED: &str = "DiscoveryFailed";
